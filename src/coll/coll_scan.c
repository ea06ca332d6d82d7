/*
 * coll_scan.c — reduce_scatter(_block), scan and exscan.
 *
 * Reduce-scatter: a ring (p-1 steps, each moving one block; commutative
 * ops) or reduce + scatterv (any op). Scans: recursive doubling (log p
 * rounds, order-preserving) or a linear chain.
 */
#include <stdlib.h>

#include "coll_priv.h"

/* ---- reduce_scatter ---- */

/*
 * Step k sends block r-k-1 (reduced so far) and receives block r-k-2;
 * after p-1 steps block r holds everyone's contribution. Nothing is
 * copied: the first step sends my data from src, each received block is
 * combined with mine in the receive buffer and goes on from there, and the
 * last one (my block) arrives straight in rbuf.
 */
static void redscat_ring(locus_coll_sched_t *s, const char *src, char *rbuf, char *tmp,
                         const size_t *cnts, const ptrdiff_t *disps, locus_dtype_t *dt,
                         locus_op_t *op, locus_coll_comm_t *c)
{
    int p = c->size, r = c->rank, tag = coll_tag(c);
    int right = (r + 1) % p, left = (r - 1 + p) % p;
    for (int k = 0; k < p - 1; k++) {
        int sb = (r - k - 1 + 2 * p) % p, rb = (r - k - 2 + 2 * p) % p;
        const char *out = coll_at(k == 0 ? src : tmp, dt, disps[sb]);
        char *in = k == p - 2 ? rbuf : coll_at(tmp, dt, disps[rb]);
        coll_sendrecv(s, c, out, cnts[sb], dt, right, in, cnts[rb], dt, left, tag);
        coll_reduce_step(s, op, dt, cnts[rb], coll_at(src, dt, disps[rb]), in);
    }
}

static int shm_reduce_scatter_call(const coll_step_t *st)
{
    return coll_shm_reduce_scatter(st->src, st->dst, st->count, st->at, st->count2, st->dt,
                                   st->op, st->comm);
}

void coll_build_reduce_scatter(locus_coll_sched_t *s, const void *sbuf, void *rbuf,
                               const size_t *rcounts, locus_dtype_t *dt, locus_op_t *op,
                               locus_coll_comm_t *c)
{
    int p = c->size, r = c->rank;
    size_t total = 0, at = 0;
    for (int i = 0; i < p; i++) {
        at = i == r ? total : at;
        total += rcounts[i];
    }
    if (total == 0 || locus_dtype_size(dt) == 0)
        return;   /* every rank knows all counts: nothing to reduce anywhere */
    coll_state_t *st = coll_state(c);
    if (!st) {
        s->oom = 1;
        return;
    }
    /* Small, on one node: everyone's whole vector through the shared
     * segment (a slot's worth on an oversubscribed node), each rank
     * combining its own block of them; on an oversubscribed node any
     * size, a slot's worth at a time (the ring's rendezvous wait for
     * their receivers to be scheduled there). */
    size_t bytes = total * locus_dtype_size(dt);
    if (st->reduce_scatter == ALG_AUTO && coll_shm_reduces(dt, op) &&
        coll_shm_reduce_usable(s, c, st, ALG_AUTO, bytes, COLL_SHM_SLOT)) {
        coll_call(s, &(coll_step_t){ .comm = c, .src = sbuf, .dst = rbuf, .count = total,
                                     .at = at, .count2 = rcounts[r], .dt = dt, .op = op,
                                     .call = shm_reduce_scatter_call });
        return;
    }
    ptrdiff_t *disps = malloc(sizeof *disps * (size_t)p);
    if (!disps) {
        s->oom = 1;
        return;
    }
    for (int i = 0; i < p; i++)
        disps[i] = i ? disps[i - 1] + (ptrdiff_t)rcounts[i - 1] : 0;
    const void *src = sbuf == LOCUS_COLL_IN_PLACE ? rbuf : sbuf;
    int alg = st->reduce_scatter;
    if (alg == ALG_AUTO || (alg == ALG_RING && !op->commute))
        alg = op->commute ? ALG_RING : ALG_REDUCE_SCATTERV;
    if (alg == ALG_RING && p > 1) {
        /* In place, my block's result overwrites the start of the input:
         * work from a copy of it. */
        char *in = (char *)src, *tmp = p > 2 ? coll_sched_tmp(s, dt, total) : NULL;
        if (sbuf == LOCUS_COLL_IN_PLACE && (in = coll_sched_tmp(s, dt, total)))
            coll_copy(s, src, total, dt, in, total, dt);
        if (in && (tmp || p == 2))
            redscat_ring(s, in, rbuf, tmp, rcounts, disps, dt, op, c);
        free(disps);
        return;
    }
    char *acc = coll_sched_tmp(s, dt, total);
    if (acc) {
        /* The whole reduction at rank 0, then each rank its part. */
        if (r == 0)
            coll_copy(s, src, total, dt, acc, total, dt);
        coll_build_reduce(s, r == 0 ? LOCUS_COLL_IN_PLACE : src, acc, total, dt, op, 0, c);
        coll_fence(s);
        coll_build_scatterv(s, acc, rcounts, disps, dt, rbuf, rcounts[r], dt, 0, c);
    }
    free(disps);
}

/* ---- scan / exscan ---- */

/*
 * Recursive doubling: `partial` is the reduction of my current group of
 * ranks; lower partners' partials are folded into the result. With
 * exclusive, the result never includes my own contribution.
 */
static void scan_recdbl(locus_coll_sched_t *s, const void *src, void *rbuf, size_t count,
                        locus_dtype_t *dt, locus_op_t *op, int exclusive, locus_coll_comm_t *c)
{
    int p = c->size, r = c->rank, have = !exclusive, tag = coll_tag(c);
    char *partial = coll_sched_tmp(s, dt, count), *tmp = coll_sched_tmp(s, dt, count);
    if (!partial || !tmp)
        return;
    coll_copy(s, src, count, dt, partial, count, dt);
    if (!exclusive)
        coll_copy(s, src, count, dt, rbuf, count, dt);
    for (int mask = 1; mask < p; mask <<= 1) {
        int dst = r ^ mask;
        if (dst >= p)
            continue;
        coll_sendrecv(s, c, partial, count, dt, dst, tmp, count, dt, dst, tag);
        if (dst < r) {
            /* Their ranks come before mine. */
            coll_reduce_step(s, op, dt, count, tmp, partial);
            if (have)
                coll_reduce_step(s, op, dt, count, tmp, rbuf);
            else
                coll_copy(s, tmp, count, dt, rbuf, count, dt);
            have = 1;
        } else {
            coll_reduce_step(s, op, dt, count, partial, tmp);
            coll_copy(s, tmp, count, dt, partial, count, dt);
        }
    }
}

/* Chain: rank r waits for the prefix of 0..r-1, passes on 0..r. */
static void scan_linear(locus_coll_sched_t *s, const void *src, void *rbuf, size_t count,
                        locus_dtype_t *dt, locus_op_t *op, int exclusive, locus_coll_comm_t *c)
{
    int p = c->size, r = c->rank, tag = coll_tag(c);
    char *pre = coll_sched_tmp(s, dt, count), *mine = coll_sched_tmp(s, dt, count);
    if (!pre || !mine)
        return;
    coll_copy(s, src, count, dt, mine, count, dt);
    if (r > 0) {
        coll_recv(s, c, pre, count, dt, r - 1, tag);
        coll_fence(s);
        if (exclusive)
            coll_copy(s, pre, count, dt, rbuf, count, dt);
        coll_reduce_step(s, op, dt, count, pre, mine);   /* prefix op mine */
    }
    if (!exclusive)
        coll_copy(s, mine, count, dt, rbuf, count, dt);
    if (r + 1 < p)
        coll_send(s, c, mine, count, dt, r + 1, tag);
    coll_fence(s);
}

void coll_build_scan(locus_coll_sched_t *s, const void *sbuf, void *rbuf, size_t count,
                     locus_dtype_t *dt, locus_op_t *op, int exclusive, locus_coll_comm_t *c)
{
    if (count == 0)
        return;
    const void *src = sbuf == LOCUS_COLL_IN_PLACE ? rbuf : sbuf;
    coll_state_t *st = coll_state(c);
    if (!st)
        s->oom = 1;
    else if (st->scan == ALG_LINEAR)
        scan_linear(s, src, rbuf, count, dt, op, exclusive, c);
    else
        scan_recdbl(s, src, rbuf, count, dt, op, exclusive, c);
}
