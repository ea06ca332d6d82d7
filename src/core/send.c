/*
 * send.c — sends: the fast path straight into the transport, the per-peer
 * queues of sends the transport had no room for, synchronous-send
 * acknowledgements and cancellation, and what MPI_Finalize does with sends
 * still in flight.
 */
#include <time.h>

#include "core_priv.h"

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

static void send_failed(locus_core_t *c, locus_req_t *r)
{
    locus_core_fatal(c, "transport %s: send to rank %d failed", c->peers[r->world].tp->ops->name,
                     r->world);
    r->tp_busy = 0;
    r->ack_wait = 0;
    r->st_error = LOCUS_ERR_OTHER;
    locus_core_complete(c, r);
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
        /* The acknowledgement names the request by its pool id (checked
         * on arrival) and this send's number (a stale one does not match). */
        r->hdr.sreq = ((uint64_t)++c->sync_seq << 32) | ((uint64_t)r->id + 1);
        r->ack_wait = 1;
    }
    if (__builtin_expect(!p->pq_head, 1)) {
        r->tp_busy = 1;
        int rc = p->tp->ops->send(p->tp, r->world, &r->hdr, r->hdrlen, r->sbuf, r->len, r);
        if (__builtin_expect(rc == LOCUS_TP_DONE, 1)) {
            r->tp_busy = 0;
            locus_core_send_check(c, r);
            return 0;
        }
        if (rc == LOCUS_TP_PENDING)
            return 0; /* send_done() may even have run already */
        r->tp_busy = 0;
        if (rc < 0) {
            send_failed(c, r);
            return 0;
        }
    }
    pend_push(c, r);
    return 0;
}

int locus_core_send_now(locus_core_t *c, int world, const locus_hdr_t *h, size_t hdrlen,
                        const void *buf, size_t len)
{
    locus_peer_t *p = &c->peers[world];
    /* Behind queued sends it would overtake them. */
    if (__builtin_expect(!p->tp || p->pq_head != NULL || !p->tp->ops->send_now, 0) ||
        p->tp->ops->send_now(p->tp, world, h, hdrlen, buf, len) != LOCUS_TP_DONE)
        return 0;
    p->sent_msgs++;
    p->sent_bytes += len;
    return 1;
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
                locus_core_send_check(c, r);
            } else if (rc < 0) {
                send_failed(c, r);
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

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

long locus_core_settle(locus_core_t *c)
{
    /* Bounded in time, not by the first quiet round: a quiet round says
     * nothing about an ack still in a peer's socket. */
    uint64_t end = now_ms() + (uint64_t)(c->settle_ms > 0 ? c->settle_ms : 0);
    while ((c->nsend || c->npend) && !c->fatal) {
        int n = locus_core_progress(c);
        if (n < 0 || (n == 0 && now_ms() >= end))
            break;
        if (n == 0)
            locus_core_idle(c);
    }
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

void locus_core_pend_unlink(locus_core_t *c, locus_req_t *r)
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
    /* An empty queue stays in c->pend until the next flush drops it. */
}

void locus_core_send_control(locus_core_t *c, int world, const locus_hdr_t *h)
{
    locus_req_t *a = locus_core_req_get(c);
    if (!a) {
        locus_core_fatal(c, "out of memory for a control message to rank %d", world);
        return;
    }
    a->kind = LOCUS_REQ_CTRL;
    a->freed = 1;
    a->world = world;
    a->hdr = *h;
    a->hdrlen = sizeof a->hdr;
    locus_core_isend(c, a);
}

void locus_core_send_ack(locus_core_t *c, int world, uint64_t sreq)
{
    locus_core_send_control(c, world, &(locus_hdr_t){.flags = LOCUS_HDR_ACK, .sreq = sreq});
}

/* The synchronous send to `world` that wire value sreq names, if it waits
 * for what `what` says (ack_wait or cancel_wait); else the core fails. */
static locus_req_t *sync_send_named(locus_core_t *c, int world, uint64_t sreq, int cancel)
{
    locus_req_t *r = locus_core_req_by_id(c, (uint32_t)sreq - 1);
    if (!r || r->kind != LOCUS_REQ_SEND || !(cancel ? r->cancel_wait : r->ack_wait) ||
        r->hdr.sreq != sreq || r->world != world) {
        locus_core_fatal(c, "rank %d %s a synchronous send this rank is not waiting for (%#llx)",
                         world, cancel ? "answered a cancel of" : "acknowledged",
                         (unsigned long long)sreq);
        return NULL;
    }
    return r;
}

void locus_core_ack_arrived(locus_core_t *c, int world, uint64_t sreq)
{
    locus_req_t *r = sync_send_named(c, world, sreq, 0);
    if (r) {
        r->ack_wait = 0;
        locus_core_send_check(c, r);
    }
}

int locus_core_cancel_send(locus_core_t *c, locus_req_t *r)
{
    if (r->done || r->cancel_wait)
        return 0;
    if (r->queued) {
        /* Nothing has left: withdrawn here. */
        locus_core_pend_unlink(c, r);
        r->ack_wait = 0;
        r->st_cancelled = 1;
        locus_core_complete(c, r);
        return 1;
    }
    if (!r->ack_wait)
        return 0;   /* not synchronous, or matched already */
    /* The receiver decides: the cancel follows the message on the same
     * ordered channel, so the message is there (matched or not) when the
     * cancel arrives, and an ack sent before it arrives before the answer. */
    r->cancel_wait = 1;
    locus_hdr_t h = r->hdr;
    h.flags = LOCUS_HDR_CANCEL;
    locus_core_send_control(c, r->world, &h);
    return 0;
}

void locus_core_cancel_answered(locus_core_t *c, int world, const locus_hdr_t *h)
{
    locus_req_t *r = sync_send_named(c, world, h->sreq, 1);
    if (!r)
        return;
    r->cancel_wait = 0;
    if (h->tag == 1) {
        r->ack_wait = 0;    /* withdrawn: no ack will come */
        r->st_cancelled = 1;
    }
    locus_core_send_check(c, r);
}
