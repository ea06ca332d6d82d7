/*
 * coll_sched.c — the schedule engine every collective runs on: steps are
 * appended by the algorithms' builders, then posted round by round (a
 * round ends at a fence), local reductions and copies run between rounds.
 *
 * A failed step records the first error and the schedule goes on: the
 * remaining sends are still owed to the other ranks, which would otherwise
 * wait forever (the failure comes back from the collective on every rank
 * where it happened).
 */
#include <stdlib.h>
#include <string.h>

#include "coll_priv.h"
#include "locus_copy.h"

/* Tags on the collective context: one per collective, drawn in order. */
#define COLL_TAG_SPAN (1 << 30)

int coll_tag(locus_coll_comm_t *c)
{
    return 1 + (int)(c->seq++ % COLL_TAG_SPAN);
}

locus_coll_sched_t *coll_sched_new(int blocking)
{
    locus_coll_sched_t *s = calloc(1, sizeof *s);
    if (s)
        s->blocking = blocking;
    return s;
}

static int grow(void **arr, int *cap, int need, size_t elsize)
{
    if (need <= *cap)
        return 0;
    int ncap = *cap ? *cap : 8;
    while (ncap < need)
        ncap *= 2;
    void *n = realloc(*arr, (size_t)ncap * elsize);
    if (!n)
        return -1;
    *arr = n;
    *cap = ncap;
    return 0;
}

static void fail(locus_coll_sched_t *s, int err);

static coll_step_t *step_add(locus_coll_sched_t *s, int kind)
{
    if (grow((void **)&s->steps, &s->cap, s->nsteps + 1, sizeof *s->steps)) {
        s->oom = 1;
        return NULL;
    }
    coll_step_t *st = &s->steps[s->nsteps++];
    memset(st, 0, sizeof *st);
    st->kind = kind;
    return st;
}

static void xfer_add(locus_coll_sched_t *s, int kind, locus_coll_comm_t *c, const void *sbuf,
                     void *rbuf, size_t count, locus_dtype_t *dt, int peer, int tag, int hints)
{
    if (peer < 0)
        return;
    coll_step_t *st = step_add(s, kind);
    if (!st)
        return;
    s->p2p = c->p2p;
    st->comm = c;
    st->src = sbuf;
    st->dst = rbuf;
    st->count = count;
    st->dt = dt;
    st->peer = peer;
    st->tag = tag;
    st->hints = hints;
}

void coll_send(locus_coll_sched_t *s, locus_coll_comm_t *c, const void *buf, size_t count,
               locus_dtype_t *dt, int peer, int tag)
{
    xfer_add(s, STEP_SEND, c, buf, NULL, count, dt, peer, tag, 0);
}

void coll_recv(locus_coll_sched_t *s, locus_coll_comm_t *c, void *buf, size_t count,
               locus_dtype_t *dt, int peer, int tag)
{
    xfer_add(s, STEP_RECV, c, NULL, buf, count, dt, peer, tag, 0);
}

void coll_recv_bulk(locus_coll_sched_t *s, locus_coll_comm_t *c, void *buf, size_t count,
                    locus_dtype_t *dt, int peer, int tag)
{
    xfer_add(s, STEP_RECV, c, NULL, buf, count, dt, peer, tag, LOCUS_COLL_RECV_BULK);
}

void coll_recv_fanin(locus_coll_sched_t *s, locus_coll_comm_t *c, void *buf, size_t count,
                     locus_dtype_t *dt, int peer, int tag)
{
    xfer_add(s, STEP_RECV, c, NULL, buf, count, dt, peer, tag, LOCUS_COLL_RECV_FANIN);
}

void coll_fence(locus_coll_sched_t *s)
{
    if (s->nsteps > 0 && s->steps[s->nsteps - 1].kind != STEP_FENCE)
        step_add(s, STEP_FENCE);
}

void coll_sendrecv(locus_coll_sched_t *s, locus_coll_comm_t *c, const void *sbuf,
                   size_t scount, locus_dtype_t *sdt, int dst, void *rbuf, size_t rcount,
                   locus_dtype_t *rdt, int src, int tag)
{
    coll_recv(s, c, rbuf, rcount, rdt, src, tag);
    coll_send(s, c, sbuf, scount, sdt, dst, tag);
    coll_fence(s);
}

void coll_reduce_step(locus_coll_sched_t *s, locus_op_t *op, locus_dtype_t *dt, size_t count,
                      const void *in, void *inout)
{
    if (count == 0)
        return;
    coll_step_t *st = step_add(s, STEP_REDUCE);
    if (!st)
        return;
    st->op = op;
    st->dt = dt;
    st->count = count;
    st->src = in;
    st->dst = inout;
}

void coll_copy(locus_coll_sched_t *s, const void *src, size_t scount, locus_dtype_t *sdt,
               void *dst, size_t rcount, locus_dtype_t *rdt)
{
    if (src == dst && sdt == rdt)
        return;
    coll_step_t *st = step_add(s, STEP_COPY);
    if (!st)
        return;
    st->src = src;
    st->count = scount;
    st->dt = sdt;
    st->dst = dst;
    st->count2 = rcount;
    st->dt2 = rdt;
}

void coll_call(locus_coll_sched_t *s, const coll_step_t *templ)
{
    /* A blocking schedule runs right after it is built, in order: a call
     * with nothing before it may as well run now. That spares the small
     * collectives on the shared segment the step's copy and the run loop
     * (2 ranks, 8 B allreduce: ~10% of the call). */
    if (s->blocking && s->nsteps == 0) {
        fail(s, templ->call(templ));
        return;
    }
    coll_step_t *st = step_add(s, STEP_CALL);
    if (st) {
        *st = *templ;
        st->kind = STEP_CALL;
        s->p2p = templ->comm->p2p;
    }
}

/* Index of the smallest spare with at least n bytes (fit) or, with fit 0,
 * of the smallest spare with fewer than n bytes; -1 if none. */
static int spare_smallest(const locus_coll_sched_t *s, size_t n, int fit)
{
    int best = -1;
    for (int i = 0; i < s->nspare; i++)
        if ((s->spare[i].len >= n) == fit && (best < 0 || s->spare[i].len < s->spare[best].len))
            best = i;
    return best;
}

/* n bytes of scratch owned by s: the smallest spare that fits, or new. */
static void *buf_get(locus_coll_sched_t *s, size_t n)
{
    if (grow((void **)&s->bufs, &s->capbufs, s->nbufs + 1, sizeof *s->bufs)) {
        s->oom = 1;
        return NULL;
    }
    int k = spare_smallest(s, n, 1);
    coll_buf_t b = { NULL, n };
    if (k >= 0) {
        b = s->spare[k];
        s->spare[k] = s->spare[--s->nspare];
    } else if (!(b.p = malloc(n ? n : 1))) {
        s->oom = 1;
        return NULL;
    }
    s->bufs[s->nbufs++] = b;
    return b.p;
}

/* Back to the spares (kept schedules: the largest few) or freed. */
static void buf_put(locus_coll_sched_t *s, coll_buf_t b)
{
    if (s->keep_scratch && s->nspare < COLL_SPARE_BUFS) {
        s->spare[s->nspare++] = b;
        return;
    }
    int k = s->keep_scratch ? spare_smallest(s, b.len, 0) : -1;
    if (k >= 0) {
        coll_buf_t old = s->spare[k];
        s->spare[k] = b;
        b = old;
    }
    free(b.p);
}

char *coll_sched_bytes(locus_coll_sched_t *s, size_t n)
{
    return buf_get(s, n);
}

char *coll_sched_tmp(locus_coll_sched_t *s, locus_dtype_t *dt, size_t count)
{
    ptrdiff_t tlb, text, ext = coll_extent(dt);
    locus_dtype_true_extent(dt, &tlb, &text);
    size_t aext = (size_t)(ext < 0 ? -ext : ext);
    size_t span = count > 0 ? (size_t)text + (count - 1) * aext : 0;
    char *p = buf_get(s, span);
    if (!p)
        return NULL;
    /* With a negative extent the last element sits lowest in memory. */
    ptrdiff_t shift = ext < 0 && count > 1 ? (ptrdiff_t)(count - 1) * -ext : 0;
    return p - tlb + shift;
}

void coll_sched_hold(locus_coll_sched_t *s, locus_dtype_t *dt, locus_op_t *op)
{
    if (dt && !locus_dtype_is_basic(dt)) {
        if (grow((void **)&s->dts, &s->capdts, s->ndts + 1, sizeof *s->dts)) {
            s->oom = 1;
            return;
        }
        locus_dtype_retain(dt);
        s->dts[s->ndts++] = dt;
    }
    if (op && !s->op) {
        locus_op_retain(op);
        s->op = op;
    }
}

/* ---- running ---------------------------------------------------------------- */

static void fail(locus_coll_sched_t *s, int err)
{
    if (err != LOCUS_SUCCESS && s->err == LOCUS_SUCCESS)
        s->err = err;
}

static void post(locus_coll_sched_t *s, const coll_step_t *st)
{
    locus_coll_req_t *r = NULL;
    const locus_coll_p2p_t *p = st->comm->p2p;
    if (grow((void **)&s->reqs, &s->capreq, s->nreq + 1, sizeof *s->reqs)) {
        fail(s, LOCUS_ERR_NO_MEM);
        return;
    }
    int rc = st->kind == STEP_SEND
                 ? p->isend(st->comm, st->src, st->count, st->dt, st->peer, st->tag, &r)
                 : p->irecv(st->comm, st->dst, st->count, st->dt, st->peer, st->tag, st->hints,
                            &r);
    if (rc != LOCUS_SUCCESS)
        fail(s, rc);
    else
        s->reqs[s->nreq++] = r;
}

/* Takes the completed requests of the round; 1 when none is left. */
static int round_done(locus_coll_sched_t *s, const locus_coll_p2p_t *p)
{
    for (int i = 0; i < s->nreq;) {
        int err;
        if (!p->test(s->reqs[i], &err)) {
            i++;
            continue;
        }
        fail(s, err);
        p->release(s->reqs[i]);
        s->reqs[i] = s->reqs[--s->nreq];
    }
    return s->nreq == 0;
}

int locus_coll_sched_poll(locus_coll_sched_t *s, int *err)
{
    const locus_coll_p2p_t *p = s->p2p;
    while (!s->done && s->cur < s->nsteps) {
        const coll_step_t *st = &s->steps[s->cur];
        switch (st->kind) {
        case STEP_SEND:
        case STEP_RECV:
            post(s, st);
            break;
        case STEP_FENCE:
            if (!round_done(s, p))
                return 0;
            break;
        case STEP_REDUCE:
            fail(s, locus_op_reduce(st->op, st->dt, st->count, st->src, st->dst));
            break;
        case STEP_COPY:
            fail(s, locus_coll_local_copy(st->src, st->count, st->dt, st->dst, st->count2,
                                          st->dt2));
            break;
        case STEP_CALL:
            fail(s, st->call(st));
            break;
        }
        s->cur++;
    }
    if (!s->done && p && !round_done(s, p))
        return 0;
    s->done = 1;
    *err = s->err;
    return 1;
}

int coll_sched_run(locus_coll_sched_t *s)
{
    const locus_coll_p2p_t *p = s->p2p;
    int err;
    while (!locus_coll_sched_poll(s, &err)) {
        int n = p->progress();
        if (n < 0) {
            /* The job can no longer communicate (a peer died): nothing
             * pending will ever complete. */
            for (int i = 0; i < s->nreq; i++)
                p->release(s->reqs[i]);
            s->nreq = 0;
            s->done = 1;
            fail(s, LOCUS_ERR_OTHER);
            return s->err;
        }
        if (n == 0)
            p->idle();
    }
    return err;
}

void locus_coll_sched_restart(locus_coll_sched_t *s)
{
    s->cur = 0;
    s->done = 0;
    s->err = LOCUS_SUCCESS;
}

static void sched_clear(locus_coll_sched_t *s)
{
    const locus_coll_p2p_t *p = s->p2p;
    for (int i = 0; i < s->nreq; i++)
        p->release(s->reqs[i]);
    for (int i = 0; i < s->nbufs; i++)
        buf_put(s, s->bufs[i]);
    for (int i = 0; i < s->ndts; i++)
        locus_dtype_release(s->dts[i]);
    locus_op_release(s->op);
    s->op = NULL;
    s->nreq = s->nbufs = s->ndts = s->nsteps = 0;
    s->p2p = NULL;
    s->cur = s->done = s->oom = 0;
    s->err = LOCUS_SUCCESS;
}

void coll_sched_reset(locus_coll_sched_t *s)
{
    sched_clear(s);
}

void locus_coll_sched_free(locus_coll_sched_t *s)
{
    if (!s)
        return;
    sched_clear(s);
    for (int i = 0; i < s->nspare; i++)
        free(s->spare[i].p);
    free(s->steps);
    free(s->reqs);
    free(s->bufs);
    free(s->dts);
    free(s);
}

int locus_coll_local_copy(const void *src, size_t scount, locus_dtype_t *sdt, void *dst,
                          size_t rcount, locus_dtype_t *rdt)
{
    size_t sbytes = scount * locus_dtype_size(sdt), rbytes = rcount * locus_dtype_size(rdt);
    size_t n = sbytes < rbytes ? sbytes : rbytes;
    /* Same base, different types: MPI_BOTTOM with absolute addresses. */
    if (n == 0 || (src == dst && sdt == rdt))
        return sbytes > rbytes ? LOCUS_ERR_TRUNCATE : LOCUS_SUCCESS;
    if (locus_dtype_is_contig(sdt) && locus_dtype_is_contig(rdt)) {
        ptrdiff_t slb, rlb, e;
        locus_dtype_true_extent(sdt, &slb, &e);
        locus_dtype_true_extent(rdt, &rlb, &e);
        locus_move((char *)dst + rlb, (const char *)src + slb, n);
    } else {
        /* Through the packed stream, a bounded chunk at a time. */
        char chunk[8192];
        for (size_t off = 0; off < n;) {
            size_t len = n - off < sizeof chunk ? n - off : sizeof chunk;
            size_t got = locus_dtype_pack(src, scount, sdt, off, chunk, len);
            locus_dtype_unpack(dst, rcount, rdt, off, chunk, got);
            off += got;
        }
    }
    return sbytes > rbytes ? LOCUS_ERR_TRUNCATE : LOCUS_SUCCESS;
}
