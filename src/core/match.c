/*
 * match.c — receives, the transport upcalls, completion and giving up.
 *
 * Matching order: a receive takes the oldest matching unexpected message;
 * an arriving message takes the oldest matching posted receive (bins.c).
 * Together with the transports' per-pair ordering this gives MPI's
 * non-overtaking rule per (sender, context).
 */
#include "core_priv.h"
#include "locus_copy.h"

#include <stdlib.h>
#include <string.h>

#define UMSG_INLINE 256

_Static_assert(sizeof(locus_hdr_t) <= LOCUS_TP_HDR_MAX, "core header too large");

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
        locus_copy(r->rbuf, data, r->st_bytes);
    if (h->flags & LOCUS_HDR_SYNC)
        locus_core_send_ack(c, world, h->sreq);
    locus_core_complete(c, r);
}

/* A matched large message: the transport moves it into r and owns r until
 * rndv_done() (so abandoning r then cannot recycle it twice). */
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
        locus_core_send_ack(c, world, h->sreq);
    locus_tp_t *tp = c->peers[world].tp;
    r->tp_busy = 1;
    int hints = (r->bulk ? LOCUS_TP_RECV_BULK : 0) | (r->fanin ? LOCUS_TP_RECV_FANIN : 0);
    if (tp->ops->rndv_recv(tp, rndv, dst, r->st_bytes, r, hints) < 0) {
        locus_core_fatal(c, "transport %s: receiving a large message from rank %d failed",
                         tp->ops->name, world);
        r->tp_busy = 0;
        r->st_error = LOCUS_ERR_OTHER;
        locus_core_complete(c, r);
    }
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
    if (u)
        u->rndv = NULL;
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

/* Reads a wire header; -1 (and the core failed) when it is malformed. */
static inline int hdr_read(locus_core_t *c, locus_hdr_t *h, int src, const void *hdr,
                           size_t hdrlen)
{
    if (hdrlen >= sizeof *h) {
        memcpy(h, hdr, sizeof *h);
        return 0;
    }
    if (__builtin_expect(hdrlen >= LOCUS_HDR_SHORT, 1)) {
        memcpy(h, hdr, LOCUS_HDR_SHORT);
        h->sreq = 0;
        if (__builtin_expect(!(h->flags & (LOCUS_HDR_SYNC | LOCUS_HDR_CONTROL)), 1))
            return 0;
    }
    locus_core_fatal(c, "rank %d sent a malformed message header (%zu bytes)", src, hdrlen);
    return -1;
}

/* Keeps an arrived message until a receive matches it (b: its context's
 * bin, or NULL): its slot (for the caller to fill with an eager payload),
 * or NULL when the core failed. */
static locus_umsg_t *unexp_keep(locus_core_t *c, locus_bin_t *b, const locus_hdr_t *h, int src,
                                size_t len, locus_tp_rndv_t *rndv)
{
    locus_umsg_t *u = umsg_new(c, rndv ? 0 : len);
    if (u) {
        u->hdr = *h;
        u->world = src;
        u->len = len;
        u->rndv = rndv;
        if (locus_unexp_add(c, b, u) == 0)
            return u;
        umsg_free(c, u);
    }
    locus_core_fatal(c, "out of memory for an unexpected message from rank %d", src);
    return NULL;
}

/* A cancel of synchronous send h->sreq from `world`: withdrawn when it
 * still waits here unmatched with its payload (a large one's data is
 * still at the sender: it is left to be received), and answered. */
static void cancel_arrived(locus_core_t *c, int world, const locus_hdr_t *h)
{
    locus_bin_t *b = locus_bin_find(c, h->ctx);
    locus_srcq_t *s = b ? locus_srcq_find(b, h->src) : NULL;
    locus_umsg_t *u = s ? s->uhead : NULL;
    while (u && !(u->world == world && (u->hdr.flags & LOCUS_HDR_SYNC) && u->hdr.sreq == h->sreq))
        u = u->snext;
    int withdrawn = u && !u->rndv;
    if (withdrawn) {
        locus_unexp_unlink(c, b, u);
        umsg_free(c, u);
    }
    locus_hdr_t a = *h;
    a.flags = LOCUS_HDR_CANCEL_REPLY;
    a.tag = withdrawn;
    locus_core_send_control(c, world, &a);
}

static void control_arrived(locus_core_t *c, int world, const locus_hdr_t *h)
{
    if (h->flags == LOCUS_HDR_ACK)
        locus_core_ack_arrived(c, world, h->sreq);
    else if (h->flags == LOCUS_HDR_CANCEL)
        cancel_arrived(c, world, h);
    else if (h->flags == LOCUS_HDR_CANCEL_REPLY && (h->tag == 0 || h->tag == 1))
        locus_core_cancel_answered(c, world, h);
    else
        locus_core_fatal(c, "rank %d sent a malformed control message (flags %#x)", world,
                         (unsigned)h->flags);
}

static void up_deliver(void *core, int src, const void *hdr, size_t hdrlen,
                       const void *data, size_t len)
{
    locus_core_t *c = core;
    locus_hdr_t h;
    if (__builtin_expect(hdr_read(c, &h, src, hdr, hdrlen), 0))
        return;
    if (__builtin_expect(h.flags & LOCUS_HDR_CONTROL, 0)) {
        control_arrived(c, src, &h);
        return;
    }
    locus_bin_t *b = locus_bin_find(c, h.ctx);
    locus_req_t *r = b && b->nposted ? locus_posted_take(c, b, &h) : NULL;
    if (r) {
        recv_eager(c, r, &h, src, data, len);
        return;
    }
    locus_umsg_t *u = unexp_keep(c, b, &h, src, len, NULL);
    if (u && len)
        locus_copy(u->inl, data, len);
}

static void up_rndv_arrived(void *core, int src, const void *hdr, size_t hdrlen,
                            size_t len, locus_tp_rndv_t *rndv)
{
    locus_core_t *c = core;
    locus_hdr_t h;
    if (hdr_read(c, &h, src, hdr, hdrlen))
        return;
    if (h.flags & LOCUS_HDR_CONTROL) {
        locus_core_fatal(c, "rank %d sent a control message as a large message", src);
        return;
    }
    locus_bin_t *b = locus_bin_find(c, h.ctx);
    locus_req_t *r = b && b->nposted ? locus_posted_take(c, b, &h) : NULL;
    if (r)
        rndv_start(c, r, &h, src, len, rndv);
    else
        unexp_keep(c, b, &h, src, len, rndv);
}

static void up_rndv_done(void *core, void *recv_ctx)
{
    locus_core_t *c = core;
    locus_req_t *r = recv_ctx;
    r->tp_busy = 0;
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
    locus_core_send_check(core, r);
}

static int up_add_peer(void *core, locus_tp_t *tp)
{
    return locus_core_add_peer(core, tp);
}

const locus_tp_upcalls_t locus_core_upcalls = {
    .deliver = up_deliver,
    .rndv_arrived = up_rndv_arrived,
    .rndv_done = up_rndv_done,
    .send_done = up_send_done,
    .add_peer = up_add_peer,
};

/* An unexpected message, out of the queue, into its receive r. */
static void umsg_receive(locus_core_t *c, locus_req_t *r, locus_umsg_t *u)
{
    if (u->rndv)
        rndv_start(c, r, &u->hdr, u->world, u->len, u->rndv);
    else
        recv_eager(c, r, &u->hdr, u->world, u->inl, u->len);
    umsg_free(c, u);
}

void locus_core_irecv(locus_core_t *c, locus_req_t *r)
{
    r->kind = LOCUS_REQ_RECV;
    if (r->udt)
        locus_dtype_retain(r->udt);
    locus_bin_t *b = locus_bin_find(c, r->ctx);
    if (b && b->nunexp) {
        locus_umsg_t *u = locus_unexp_find(b, r->rank, r->tag);
        if (u) {
            locus_unexp_unlink(c, b, u);
            umsg_receive(c, r, u);
            return;
        }
    }
    if (__builtin_expect(locus_posted_add(c, b, r) != 0, 0)) {
        locus_core_fatal(c, "out of memory for a posted receive");
        r->st_error = LOCUS_ERR_NO_MEM;
        locus_core_complete(c, r);
    }
}

int locus_core_iprobe(locus_core_t *c, uint32_t ctx, int rank, int tag,
                      int *src, int *tagout, size_t *bytes)
{
    locus_bin_t *b = locus_bin_find(c, ctx);
    locus_umsg_t *u = b && b->nunexp ? locus_unexp_find(b, rank, tag) : NULL;
    if (!u)
        return 0;
    *src = u->hdr.src;
    *tagout = u->hdr.tag;
    *bytes = u->len;
    return 1;
}

locus_umsg_t *locus_core_improbe(locus_core_t *c, uint32_t ctx, int rank, int tag,
                                 int *src, int *tagout, size_t *bytes)
{
    locus_bin_t *b = locus_bin_find(c, ctx);
    locus_umsg_t *u = b && b->nunexp ? locus_unexp_find(b, rank, tag) : NULL;
    if (!u)
        return NULL;
    locus_unexp_unlink(c, b, u);
    *src = u->hdr.src;
    *tagout = u->hdr.tag;
    *bytes = u->len;
    return u;
}

void locus_core_imrecv(locus_core_t *c, locus_req_t *r, locus_umsg_t *u)
{
    r->kind = LOCUS_REQ_RECV;
    if (r->udt)
        locus_dtype_retain(r->udt);
    umsg_receive(c, r, u);
}

int locus_core_cancel(locus_core_t *c, locus_req_t *r)
{
    if (r->kind == LOCUS_REQ_SEND)
        return locus_core_cancel_send(c, r);
    if (!r->posted)
        return 0;
    locus_posted_unlink(c, r);
    r->st_cancelled = 1;
    locus_core_complete(c, r);
    return 1;
}

void locus_core_abandon(locus_core_t *c, locus_req_t *r)
{
    r->freed = 1;
    if (r->done) {
        locus_core_req_put(c, r);
        return;
    }
    if (r->kind == LOCUS_REQ_GEN) {
        locus_core_gen_unlink(c, r);
        if (r->state_free)
            r->state_free(r->state);
        r->state = NULL;
    } else if (r->posted) {
        locus_posted_unlink(c, r);
    } else if (r->queued) {
        locus_core_pend_unlink(c, r);
        r->ack_wait = 0; /* never sent: no acknowledgement will come */
    }
    /* A transport still holding the buffer calls send_done()/rndv_done()
     * later; an acknowledgement still names the request: both find it
     * then (and recycle it, freed). */
    if (r->tp_busy || r->ack_wait || r->cancel_wait)
        return;
    if (!r->st_error)
        r->st_error = LOCUS_ERR_OTHER;
    locus_core_complete(c, r);
}
