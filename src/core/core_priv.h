/*
 * core_priv.h — what the core's files share and nothing outside the core
 * sees: the matching bins, unexpected messages and the internal helpers.
 *
 * Matching bins. Every context id has a bin (an open hash table in
 * locus_core_t keyed by ctx); inside it, every source that has posted
 * receives or unexpected messages has a source queue (an open hash table
 * in the bin keyed by source). Receives posted for one source wait in that
 * source's queue, MPI_ANY_SOURCE receives in the bin's wildcard queue; both
 * in post order, numbered by a core-wide post sequence so an arriving
 * message can take the older of the two first candidates. Unexpected
 * messages are linked twice, into their source's queue and into the bin's
 * arrival-order list: a receive for one source scans only that source's
 * messages, an MPI_ANY_SOURCE receive the whole context in arrival order.
 * Either way the first match is the oldest, which is MPI's rule.
 */
#ifndef LOCUS_CORE_PRIV_H
#define LOCUS_CORE_PRIV_H

#include "locus_core.h"

typedef struct locus_srcq locus_srcq_t;

struct locus_umsg {
    locus_umsg_t *next, *prev;      /* the bin's arrival order */
    locus_umsg_t *snext, *sprev;    /* its source queue's arrival order */
    locus_srcq_t *q;                /* its source queue */
    locus_hdr_t hdr;
    int world;                      /* sender's world rank */
    size_t len;
    locus_tp_rndv_t *rndv;          /* large message still at the sender, or NULL */
    size_t cap;                     /* capacity of inl */
    char inl[];                     /* eager payload */
};

/* Posted receives in post order, linked through locus_req_t next/prev. */
typedef struct {
    locus_req_t *head, *tail;
} locus_rqueue_t;

struct locus_srcq {
    int32_t src;
    locus_rqueue_t posted;
    locus_umsg_t *uhead, *utail;
};

struct locus_bin {
    uint32_t ctx;
    long nposted, nunexp;           /* 0 and 0: the bin may be dropped */
    locus_rqueue_t any;             /* receives posted for LOCUS_ANY source */
    locus_umsg_t *uhead, *utail;    /* unexpected messages, arrival order */
    locus_srcq_t **srcs;            /* [src_mask + 1], NULL: free slot */
    uint32_t src_mask;
    int nsrcs;
    locus_srcq_t *src_last;         /* the source matched last */
};

/* ---- bins.c: the tables --------------------------------------------------- */

locus_bin_t *locus_bin_lookup(locus_core_t *c, uint32_t ctx);
locus_srcq_t *locus_srcq_lookup(locus_bin_t *b, int32_t src);

/* The bin of ctx, or NULL when the context has nothing waiting. */
static inline locus_bin_t *locus_bin_find(locus_core_t *c, uint32_t ctx)
{
    locus_bin_t *b = c->bin_last;
    if (__builtin_expect(b && b->ctx == ctx, 1))
        return b;
    return locus_bin_lookup(c, ctx);
}

/* The bin of ctx, created when missing (may drop empty bins first: the
 * caller holds no other bin). NULL when out of memory. */
locus_bin_t *locus_bin_get(locus_core_t *c, uint32_t ctx);

/* The source queue of src in b, or NULL. */
static inline locus_srcq_t *locus_srcq_find(locus_bin_t *b, int32_t src)
{
    locus_srcq_t *q = b->src_last;
    if (__builtin_expect(q && q->src == src, 1))
        return q;
    return locus_srcq_lookup(b, src);
}

/* Adds the source queue of src (not in b yet); NULL when out of memory. */
locus_srcq_t *locus_srcq_add(locus_bin_t *b, int32_t src);

/* Frees every bin and unexpected message (finalize). */
void locus_bins_free(locus_core_t *c);

/* ---- the queues (inline: the matching fast path) ------------------------ */

static inline int locus_tag_ok(int want, int32_t tag)
{
    return want == LOCUS_ANY || want == tag;
}

static inline void locus_rq_append(locus_rqueue_t *q, locus_req_t *r)
{
    r->next = NULL;
    r->prev = q->tail;
    if (q->tail)
        q->tail->next = r;
    else
        q->head = r;
    q->tail = r;
}

static inline void locus_rq_unlink(locus_rqueue_t *q, locus_req_t *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        q->head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        q->tail = r->prev;
    r->next = r->prev = NULL;
}

/* Appends a receive (r->ctx/rank/tag set) to its queue in b, r->ctx's bin
 * or NULL when the caller has none; -1 when out of memory. */
static inline int locus_posted_add(locus_core_t *c, locus_bin_t *b, locus_req_t *r)
{
    if (!b && !(b = locus_bin_get(c, r->ctx)))
        return -1;
    locus_rqueue_t *q = &b->any;
    if (r->rank != LOCUS_ANY) {
        locus_srcq_t *s = locus_srcq_find(b, r->rank);
        if (!s && !(s = locus_srcq_add(b, r->rank)))
            return -1;
        q = &s->posted;
    }
    r->seq = ++c->post_seq;
    locus_rq_append(q, r);
    r->posted = 1;
    b->nposted++;
    c->nposted++;
    return 0;
}

/* Takes a posted receive out of its queue (cancel, abandon). */
static inline void locus_posted_unlink(locus_core_t *c, locus_req_t *r)
{
    locus_bin_t *b = locus_bin_find(c, r->ctx);
    locus_rq_unlink(r->rank == LOCUS_ANY ? &b->any : &locus_srcq_find(b, r->rank)->posted, r);
    r->posted = 0;
    b->nposted--;
    c->nposted--;
}

/* The oldest receive posted in b that matches h, unlinked; or NULL. */
static inline locus_req_t *locus_posted_take(locus_core_t *c, locus_bin_t *b,
                                             const locus_hdr_t *h)
{
    locus_req_t *best = NULL, *r;
    locus_rqueue_t *from = NULL;
    locus_srcq_t *s = locus_srcq_find(b, h->src);
    for (r = s ? s->posted.head : NULL; r; r = r->next) {
        if (locus_tag_ok(r->tag, h->tag)) {
            best = r;
            from = &s->posted;
            break;
        }
    }
    /* A wildcard receive wins only when posted before the source's own
     * first candidate: the scan stops at the first younger one. */
    for (r = b->any.head; r && (!best || r->seq < best->seq); r = r->next) {
        if (locus_tag_ok(r->tag, h->tag)) {
            best = r;
            from = &b->any;
            break;
        }
    }
    if (best) {
        locus_rq_unlink(from, best);
        best->posted = 0;
        b->nposted--;
        c->nposted--;
    }
    return best;
}

/* Appends an arrived message to b, its context's bin or NULL when the
 * caller has none (then created); -1 when out of memory. */
static inline int locus_unexp_add(locus_core_t *c, locus_bin_t *b, locus_umsg_t *u)
{
    if (!b && !(b = locus_bin_get(c, u->hdr.ctx)))
        return -1;
    locus_srcq_t *s = locus_srcq_find(b, u->hdr.src);
    if (!s && !(s = locus_srcq_add(b, u->hdr.src)))
        return -1;
    u->q = s;
    u->next = NULL;
    u->prev = b->utail;
    if (b->utail)
        b->utail->next = u;
    else
        b->uhead = u;
    b->utail = u;
    u->snext = NULL;
    u->sprev = s->utail;
    if (s->utail)
        s->utail->snext = u;
    else
        s->uhead = u;
    s->utail = u;
    b->nunexp++;
    c->nunexp++;
    return 0;
}

/* The oldest unexpected message of b matching (rank, tag), or NULL. */
static inline locus_umsg_t *locus_unexp_find(locus_bin_t *b, int rank, int tag)
{
    locus_umsg_t *u;
    if (rank == LOCUS_ANY) {
        for (u = b->uhead; u; u = u->next)
            if (locus_tag_ok(tag, u->hdr.tag))
                return u;
        return NULL;
    }
    locus_srcq_t *s = locus_srcq_find(b, rank);
    for (u = s ? s->uhead : NULL; u; u = u->snext)
        if (locus_tag_ok(tag, u->hdr.tag))
            return u;
    return NULL;
}

static inline void locus_unexp_unlink(locus_core_t *c, locus_bin_t *b, locus_umsg_t *u)
{
    if (u->prev)
        u->prev->next = u->next;
    else
        b->uhead = u->next;
    if (u->next)
        u->next->prev = u->prev;
    else
        b->utail = u->prev;
    locus_srcq_t *s = u->q;
    if (u->sprev)
        u->sprev->snext = u->snext;
    else
        s->uhead = u->snext;
    if (u->snext)
        u->snext->sprev = u->sprev;
    else
        s->utail = u->sprev;
    b->nunexp--;
    c->nunexp--;
}

/* ---- core.c ------------------------------------------------------------ */

/* Marks the core failed with a one-line reason (the first one sticks);
 * locus_core_progress returns -1 from then on. */
void locus_core_fatal(locus_core_t *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The request with pool id `id`, or NULL when there is none. */
locus_req_t *locus_core_req_by_id(locus_core_t *c, uint32_t id);

/* Takes a generalized request out of the active list. */
void locus_core_gen_unlink(locus_core_t *c, locus_req_t *r);

/* ---- send.c ------------------------------------------------------------ */

int locus_core_flush(locus_core_t *c);
/* Takes a queued send out of its peer's queue. */
void locus_core_pend_unlink(locus_core_t *c, locus_req_t *r);
/* Sends the acknowledgement of a matched synchronous send. */
void locus_core_send_ack(locus_core_t *c, int world, uint64_t sreq);
/* An acknowledgement arrived from world rank `world`. */
void locus_core_ack_arrived(locus_core_t *c, int world, uint64_t sreq);
/* Sends a control message (an ack, a cancel or its answer) to `world`. */
void locus_core_send_control(locus_core_t *c, int world, const locus_hdr_t *h);
/* Cancels a send (locus_core_cancel); the answer from the receiver. */
int locus_core_cancel_send(locus_core_t *c, locus_req_t *r);
void locus_core_cancel_answered(locus_core_t *c, int world, const locus_hdr_t *h);

/* Completes a send nothing holds any more. Its callers have just cleared
 * one of these bytes: the flags are read one byte each (relaxed atomic
 * loads are never merged), because a wider load the compiler would make
 * of them overlaps that store and must wait for every older store to
 * drain, ring cells the peer core holds included (a third of the time of
 * an 8-byte osu_bw). */
static inline void locus_core_send_check(locus_core_t *c, locus_req_t *r)
{
    if (!__atomic_load_n(&r->tp_busy, __ATOMIC_RELAXED) &&
        !__atomic_load_n(&r->ack_wait, __ATOMIC_RELAXED) &&
        !__atomic_load_n(&r->queued, __ATOMIC_RELAXED) && !r->cancel_wait)
        locus_core_complete(c, r);
}

#endif
