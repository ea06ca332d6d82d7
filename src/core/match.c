/*
 * Sends, receives, matching and the transport upcalls.
 *
 * Matching order: a receive takes the oldest matching unexpected message;
 * an arriving message takes the oldest matching posted receive. Together
 * with the transports' per-pair ordering this gives MPI's non-overtaking
 * rule per (sender, context).
 */
#include "locus_core.h"

#include <stdlib.h>
#include <string.h>

#define UMSG_INLINE 256

_Static_assert(sizeof(locus_hdr_t) <= LOCUS_TP_HDR_MAX, "core header too large");

static void fatal(locus_core_t *c, const char *why)
{
    if (!c->fatal) {
        strncpy(c->fatal_msg, why, sizeof c->fatal_msg - 1);
        c->fatal = 1;
    }
}

void locus_core_complete(locus_core_t *c, locus_req_t *r)
{
    if (r->sending) {
        r->sending = 0;
        c->nsend--;
    }
    if (r->tmp) {
        free(r->tmp);
        r->tmp = NULL;
    }
    if (r->udt) {
        locus_dtype_release(r->udt);
        r->udt = NULL;
    }
    r->done = 1;
    if (r->freed)
        locus_core_req_put(c, r);
}

static inline void send_check(locus_core_t *c, locus_req_t *r)
{
    if (!r->tp_busy && !r->ack_wait && !r->queued)
        locus_core_complete(c, r);
}

static void pend_push(locus_core_t *c, locus_req_t *r)
{
    locus_peer_t *p = &c->peers[r->world];
    r->queued = 1;
    r->next = NULL;
    if (p->pq_tail)
        p->pq_tail->next = r;
    else
        p->pq_head = r;
    p->pq_tail = r;
    if (!c->pend_mark[r->world]) {
        c->pend_mark[r->world] = 1;
        c->pend[c->npend++] = r->world;
    }
}

int locus_core_isend(locus_core_t *c, locus_req_t *r)
{
    locus_peer_t *p = &c->peers[r->world];
    if (__builtin_expect(!p->tp, 0))
        return -1;
    p->sent_msgs++;
    p->sent_bytes += r->len;
    /* Counted until complete, freed or not: MPI_Finalize must still move it. */
    r->sending = 1;
    c->nsend++;
    if (r->hdr.flags & LOCUS_HDR_SYNC) {
        r->hdr.sreq = (uint64_t)(uintptr_t)r;
        r->ack_wait = 1;
    }
    if (__builtin_expect(!p->pq_head, 1)) {
        r->tp_busy = 1;
        int rc = p->tp->ops->send(p->tp, r->world, &r->hdr, r->hdrlen, r->sbuf, r->len, r);
        if (__builtin_expect(rc == LOCUS_TP_DONE, 1)) {
            r->tp_busy = 0;
            send_check(c, r);
            return 0;
        }
        if (rc == LOCUS_TP_PENDING)
            return 0; /* send_done() may even have run already */
        r->tp_busy = 0;
        if (rc < 0) {
            fatal(c, "transport send failed");
            r->st_error = LOCUS_ERR_OTHER;
            r->ack_wait = 0;
            locus_core_complete(c, r);
            return 0;
        }
    }
    pend_push(c, r);
    return 0;
}

/* Retries queued sends, in order per peer. */
int locus_core_flush(locus_core_t *c)
{
    int n = 0;
    for (int i = 0; i < c->npend;) {
        int w = c->pend[i];
        locus_peer_t *p = &c->peers[w];
        locus_req_t *r;
        while ((r = p->pq_head)) {
            /* Unqueue first: send_done() may run inside send(). */
            p->pq_head = r->next;
            if (!p->pq_head)
                p->pq_tail = NULL;
            r->queued = 0;
            r->tp_busy = 1;
            int rc = p->tp->ops->send(p->tp, w, &r->hdr, r->hdrlen, r->sbuf, r->len, r);
            if (rc == LOCUS_TP_AGAIN) {
                r->tp_busy = 0;
                r->queued = 1;
                r->next = p->pq_head;
                p->pq_head = r;
                if (!p->pq_tail)
                    p->pq_tail = r;
                break;
            }
            n++;
            if (rc == LOCUS_TP_DONE) {
                r->tp_busy = 0;
                send_check(c, r);
            } else if (rc < 0) {
                fatal(c, "transport send failed");
                r->tp_busy = 0;
                r->ack_wait = 0;
                r->st_error = LOCUS_ERR_OTHER;
                locus_core_complete(c, r);
            }
        }
        if (!p->pq_head) {
            c->pend_mark[w] = 0;
            c->pend[i] = c->pend[--c->npend];
        } else {
            i++;
        }
    }
    return n;
}

long locus_core_settle(locus_core_t *c)
{
    while ((c->nsend || c->npend) && !c->fatal && locus_core_progress(c) > 0)
        ;
    long lost = c->nsend;
    /* Queued sends can never leave now: complete them with an error so
     * nothing waits on them (locus_core_finalize would). */
    for (int i = 0; i < c->npend; i++) {
        locus_peer_t *p = &c->peers[c->pend[i]];
        locus_req_t *r;
        while ((r = p->pq_head)) {
            p->pq_head = r->next;
            r->queued = 0;
            r->ack_wait = 0;
            r->st_error = LOCUS_ERR_OTHER;
            locus_core_complete(c, r);
        }
        p->pq_tail = NULL;
        c->pend_mark[c->pend[i]] = 0;
    }
    c->npend = 0;
    return lost;
}

static void send_ack(locus_core_t *c, int world, uint64_t sreq)
{
    locus_req_t *a = locus_core_req_get(c);
    if (!a) {
        fatal(c, "out of memory for a synchronous-send ack");
        return;
    }
    a->kind = LOCUS_REQ_CTRL;
    a->freed = 1;
    a->world = world;
    a->hdr.flags = LOCUS_HDR_ACK;
    a->hdr.sreq = sreq;
    a->hdrlen = sizeof a->hdr;
    locus_core_isend(c, a);
}

static inline int hdr_matches(const locus_req_t *r, const locus_hdr_t *h)
{
    return r->ctx == h->ctx && (r->rank == LOCUS_ANY || r->rank == h->src) &&
           (r->tag == LOCUS_ANY || r->tag == h->tag);
}

/* Takes r out of the posted-receive queue (matching and cancel share it). */
static void posted_unlink(locus_core_t *c, locus_req_t *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        c->posted_head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        c->posted_tail = r->prev;
    r->next = r->prev = NULL;
    r->posted = 0;
}

static locus_req_t *posted_take(locus_core_t *c, const locus_hdr_t *h)
{
    for (locus_req_t *r = c->posted_head; r; r = r->next) {
        if (!hdr_matches(r, h))
            continue;
        posted_unlink(c, r);
        return r;
    }
    return NULL;
}

static void recv_status(locus_req_t *r, const locus_hdr_t *h, size_t len)
{
    r->st_source = h->src;
    r->st_tag = h->tag;
    r->st_bytes = len <= r->len ? len : r->len;
    r->st_error = len > r->len ? LOCUS_ERR_TRUNCATE : 0;
}

/* Eager data into a matched receive; completes it. */
static void recv_eager(locus_core_t *c, locus_req_t *r, const locus_hdr_t *h, int world,
                       const void *data, size_t len)
{
    recv_status(r, h, len);
    if (r->udt)
        locus_dtype_unpack(r->ubuf, r->ucount, r->udt, 0, data, r->st_bytes);
    else if (r->st_bytes)
        memcpy(r->rbuf, data, r->st_bytes);
    if (h->flags & LOCUS_HDR_SYNC)
        send_ack(c, world, h->sreq);
    locus_core_complete(c, r);
}

static void rndv_start(locus_core_t *c, locus_req_t *r, const locus_hdr_t *h, int world,
                       size_t len, locus_tp_rndv_t *rndv)
{
    recv_status(r, h, len);
    void *dst = r->rbuf;
    if (r->udt && r->st_bytes) {
        r->tmp = malloc(r->st_bytes);
        if (!r->tmp) {
            /* Still drain the message (truncated to nothing) to keep the
             * transport's state consistent. */
            r->st_error = LOCUS_ERR_NO_MEM;
            r->st_bytes = 0;
        }
        dst = r->tmp;
    }
    if (h->flags & LOCUS_HDR_SYNC)
        send_ack(c, world, h->sreq);
    locus_tp_t *tp = c->peers[world].tp;
    if (tp->ops->rndv_recv(tp, rndv, dst, r->st_bytes, r) < 0)
        fatal(c, "transport rendezvous receive failed");
}

static locus_umsg_t *umsg_new(locus_core_t *c, size_t len)
{
    locus_umsg_t *u;
    if (len <= UMSG_INLINE) {
        u = c->umsg_free;
        if (u)
            c->umsg_free = u->next;
        else if ((u = malloc(sizeof *u + UMSG_INLINE)))
            u->cap = UMSG_INLINE;
    } else if ((u = malloc(sizeof *u + len))) {
        u->cap = len;
    }
    if (u) {
        u->data = u->inl;
        u->rndv = NULL;
    }
    return u;
}

static void umsg_free(locus_core_t *c, locus_umsg_t *u)
{
    if (u->cap == UMSG_INLINE) {
        u->next = c->umsg_free;
        c->umsg_free = u;
    } else {
        free(u);
    }
}

static void unexp_append(locus_core_t *c, locus_umsg_t *u)
{
    u->next = NULL;
    u->prev = c->unexp_tail;
    if (c->unexp_tail)
        c->unexp_tail->next = u;
    else
        c->unexp_head = u;
    c->unexp_tail = u;
}

static void unexp_unlink(locus_core_t *c, locus_umsg_t *u)
{
    if (u->prev)
        u->prev->next = u->next;
    else
        c->unexp_head = u->next;
    if (u->next)
        u->next->prev = u->prev;
    else
        c->unexp_tail = u->prev;
}

static inline void hdr_read(locus_hdr_t *h, const void *hdr, size_t hdrlen)
{
    if (hdrlen >= sizeof *h) {
        memcpy(h, hdr, sizeof *h);
    } else {
        memcpy(h, hdr, LOCUS_HDR_SHORT);
        h->sreq = 0;
    }
}

static void ack_arrived(locus_core_t *c, uint64_t sreq)
{
    locus_req_t *r = (locus_req_t *)(uintptr_t)sreq;
    r->ack_wait = 0;
    send_check(c, r);
}

static void up_deliver(void *core, int src, const void *hdr, size_t hdrlen,
                       const void *data, size_t len)
{
    locus_core_t *c = core;
    locus_hdr_t h;
    hdr_read(&h, hdr, hdrlen);
    if (__builtin_expect(h.flags & LOCUS_HDR_ACK, 0)) {
        ack_arrived(c, h.sreq);
        return;
    }
    locus_req_t *r = posted_take(c, &h);
    if (r) {
        recv_eager(c, r, &h, src, data, len);
        return;
    }
    locus_umsg_t *u = umsg_new(c, len);
    if (!u) {
        fatal(c, "out of memory for an unexpected message");
        return;
    }
    u->hdr = h;
    u->world = src;
    u->len = len;
    if (len)
        memcpy(u->data, data, len);
    unexp_append(c, u);
}

static void up_rndv_arrived(void *core, int src, const void *hdr, size_t hdrlen,
                            size_t len, locus_tp_rndv_t *rndv)
{
    locus_core_t *c = core;
    locus_hdr_t h;
    hdr_read(&h, hdr, hdrlen);
    locus_req_t *r = posted_take(c, &h);
    if (r) {
        rndv_start(c, r, &h, src, len, rndv);
        return;
    }
    locus_umsg_t *u = umsg_new(c, 0);
    if (!u) {
        fatal(c, "out of memory for an unexpected message");
        return;
    }
    u->hdr = h;
    u->world = src;
    u->len = len;
    u->rndv = rndv;
    unexp_append(c, u);
}

static void up_rndv_done(void *core, void *recv_ctx)
{
    locus_core_t *c = core;
    locus_req_t *r = recv_ctx;
    if (r->udt && r->tmp)
        locus_dtype_unpack(r->ubuf, r->ucount, r->udt, 0, r->tmp, r->st_bytes);
    locus_core_complete(c, r);
}

static void up_send_done(void *core, void *send_ctx)
{
    locus_req_t *r = send_ctx;
    if (!r)
        return;
    r->tp_busy = 0;
    send_check(core, r);
}

const locus_tp_upcalls_t locus_core_upcalls = {
    .deliver = up_deliver,
    .rndv_arrived = up_rndv_arrived,
    .rndv_done = up_rndv_done,
    .send_done = up_send_done,
};

void locus_core_irecv(locus_core_t *c, locus_req_t *r)
{
    r->kind = LOCUS_REQ_RECV;
    if (r->udt)
        locus_dtype_retain(r->udt);
    for (locus_umsg_t *u = c->unexp_head; u; u = u->next) {
        if (!hdr_matches(r, &u->hdr))
            continue;
        unexp_unlink(c, u);
        if (u->rndv)
            rndv_start(c, r, &u->hdr, u->world, u->len, u->rndv);
        else
            recv_eager(c, r, &u->hdr, u->world, u->data, u->len);
        umsg_free(c, u);
        return;
    }
    r->posted = 1;
    r->next = NULL;
    r->prev = c->posted_tail;
    if (c->posted_tail)
        c->posted_tail->next = r;
    else
        c->posted_head = r;
    c->posted_tail = r;
}

int locus_core_iprobe(locus_core_t *c, uint32_t ctx, int rank, int tag,
                      int *src, int *tagout, size_t *bytes)
{
    locus_req_t probe = { .ctx = ctx, .rank = rank, .tag = tag };
    for (locus_umsg_t *u = c->unexp_head; u; u = u->next) {
        if (hdr_matches(&probe, &u->hdr)) {
            *src = u->hdr.src;
            *tagout = u->hdr.tag;
            *bytes = u->len;
            return 1;
        }
    }
    return 0;
}

int locus_core_cancel(locus_core_t *c, locus_req_t *r)
{
    if (!r->posted)
        return 0;
    posted_unlink(c, r);
    r->st_cancelled = 1;
    locus_core_complete(c, r);
    return 1;
}

/* Takes a queued send out of its peer's queue (singly linked, in order). */
static void pend_unlink(locus_core_t *c, locus_req_t *r)
{
    locus_peer_t *p = &c->peers[r->world];
    locus_req_t *prev = NULL;
    for (locus_req_t *q = p->pq_head; q; prev = q, q = q->next) {
        if (q != r)
            continue;
        if (prev)
            prev->next = q->next;
        else
            p->pq_head = q->next;
        if (p->pq_tail == q)
            p->pq_tail = prev;
        break;
    }
    r->next = NULL;
    r->queued = 0;
}

void locus_core_abandon(locus_core_t *c, locus_req_t *r)
{
    r->freed = 1;
    if (r->done) {
        locus_core_req_put(c, r);
        return;
    }
    if (r->posted)
        posted_unlink(c, r);
    else if (r->queued)
        pend_unlink(c, r);
    /* A transport still holding the buffer calls send_done() later; an
     * acknowledgement still names the request: both find it then. */
    if (r->tp_busy || r->ack_wait)
        return;
    if (!r->st_error)
        r->st_error = LOCUS_ERR_OTHER;
    locus_core_complete(c, r);
}
