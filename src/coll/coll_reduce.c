/*
 * coll_reduce.c — reduce and allreduce.
 *
 * Small messages: binomial tree (reduce) and recursive doubling
 * (allreduce), both keeping the rank order so non-commutative user ops are
 * right. Large messages with commutative ops: Rabenseifner (reduce-scatter
 * by recursive halving, then gather or allgather by recursive doubling) or
 * a ring. Non-power-of-two sizes fold the first 2*rem ranks in pairs first.
 * Hierarchical form: reduce inside each node, across leaders, then bcast.
 */
#include <stdlib.h>

#include "coll_priv.h"

/* ---- allreduce ---- */

/* Recursive doubling among the pof2 remaining ranks; order-preserving. */
static void allreduce_recdbl(locus_coll_sched_t *s, char *acc, char *tmp, size_t count,
                             locus_dtype_t *dt, locus_op_t *op, int tag, locus_coll_comm_t *c)
{
    coll_fold_t f;
    coll_fold_in(s, acc, tmp, count, dt, op, tag, c, &f);
    for (int mask = 1; f.newrank >= 0 && mask < f.pof2; mask <<= 1) {
        int dst = coll_fold_real(&f, f.newrank ^ mask);
        coll_sendrecv(s, c, acc, count, dt, dst, tmp, count, dt, dst, tag);
        if (dst < c->rank) {
            coll_reduce_step(s, op, dt, count, tmp, acc);      /* theirs op mine */
        } else {
            coll_reduce_step(s, op, dt, count, acc, tmp);      /* mine op theirs */
            coll_copy(s, tmp, count, dt, acc, count, dt);
        }
    }
    coll_fold_out(s, acc, count, dt, tag, c, &f);
}

/* Split of count elements over n blocks, as two arrays in one allocation
 * (only needed while building). */
static size_t *blocks_new(size_t count, int n, ptrdiff_t **disps)
{
    size_t *cnts = malloc((sizeof(size_t) + sizeof(ptrdiff_t)) * (size_t)n);
    if (!cnts)
        return NULL;
    *disps = (ptrdiff_t *)(cnts + n);
    coll_blocks_split(count, n, cnts, *disps);
    return cnts;
}

static void allreduce_rabenseifner(locus_coll_sched_t *s, char *acc, char *tmp, size_t count,
                                   locus_dtype_t *dt, locus_op_t *op, int tag,
                                   locus_coll_comm_t *c)
{
    coll_fold_t f;
    coll_fold_in(s, acc, tmp, count, dt, op, tag, c, &f);
    if (f.newrank >= 0) {
        ptrdiff_t *disps;
        size_t *cnts = blocks_new(count, f.pof2, &disps);
        if (!cnts) {
            s->oom = 1;
            return;
        }
        int idx, last;
        coll_rs_halving(s, acc, tmp, dt, op, tag, c, &f, cnts, disps, &idx, &last);
        coll_ag_doubling(s, acc, dt, tag, c, &f, cnts, disps, idx, last);
        free(cnts);
    }
    coll_fold_out(s, acc, count, dt, tag, c, &f);
}

/* Elements of dt in a segment of seg_bytes, at least one. */
static size_t seg_elems(const locus_dtype_t *dt, size_t seg_bytes)
{
    size_t es = locus_dtype_size(dt);
    return es && seg_bytes / es ? seg_bytes / es : 1;
}

/* Elements of the segment starting at lo of n cut in pieces of per. */
static size_t seg_len(size_t n, size_t lo, size_t per)
{
    return n - lo < per ? n - lo : per;
}

/*
 * Two ranks, a commutative op: each combines the half it keeps and sends
 * the other, then they swap results. The other's half arrives in segments
 * of seg_bytes, each folded in while the next arrives, so it is in cache
 * when combined; without a copy of sbuf into rbuf first (it lands in rbuf
 * and my data folds into it; in place, through scratch).
 */
static void allreduce_pair(locus_coll_sched_t *s, const void *sbuf, char *rbuf, size_t count,
                           locus_dtype_t *dt, locus_op_t *op, int tag, locus_coll_comm_t *c,
                           size_t seg_bytes)
{
    int peer = !c->rank, in_place = sbuf == LOCUS_COLL_IN_PLACE;
    const char *src = in_place ? rbuf : sbuf;
    size_t h = count / 2, klo = c->rank ? h : 0, kn = c->rank ? count - h : h;
    size_t slo = c->rank ? 0 : h, sn = count - kn;
    /* Both ranks cut the halves alike: segments of per elements. */
    size_t per = seg_len(count - h, 0, seg_elems(dt, seg_bytes));
    char *tmp = in_place ? coll_sched_tmp(s, dt, 2 * per) : NULL;
    if (in_place && !tmp)
        return;
    size_t nseg = kn ? (kn + per - 1) / per : 0, sseg = sn ? (sn + per - 1) / per : 0;
    for (size_t k = 0; k <= nseg || k < sseg; k++) {
        if (k < sseg) {
            size_t lo = k * per;
            coll_send(s, c, coll_at(src, dt, (ptrdiff_t)(slo + lo)),
                      seg_len(sn, lo, per), dt, peer, tag);
        }
        if (k < nseg) {
            size_t lo = k * per, n = seg_len(kn, lo, per);
            char *into = in_place ? coll_at(tmp, dt, (ptrdiff_t)((k & 1) * per))
                                  : coll_at(rbuf, dt, (ptrdiff_t)(klo + lo));
            coll_recv(s, c, into, n, dt, peer, tag);
        }
        if (k > 0 && k <= nseg) {
            size_t lo = (k - 1) * per, n = seg_len(kn, lo, per);
            char *out = coll_at(rbuf, dt, (ptrdiff_t)(klo + lo));
            if (in_place)
                coll_reduce_step(s, op, dt, n, coll_at(tmp, dt, (ptrdiff_t)(((k - 1) & 1) * per)),
                                 out);
            else
                coll_reduce_step(s, op, dt, n, coll_at(src, dt, (ptrdiff_t)(klo + lo)), out);
        }
        coll_fence(s);
    }
    coll_sendrecv(s, c, coll_at(rbuf, dt, (ptrdiff_t)klo), kn, dt, peer,
                  coll_at(rbuf, dt, (ptrdiff_t)slo), sn, dt, peer, tag);
}

/* Ring: reduce-scatter then allgather around the ring, p-1 steps each;
 * bandwidth-optimal for any p. Commutative ops only. */
static void allreduce_ring(locus_coll_sched_t *s, char *acc, char *tmp, size_t count,
                           locus_dtype_t *dt, locus_op_t *op, int tag, locus_coll_comm_t *c)
{
    int p = c->size, r = c->rank;
    ptrdiff_t *d;
    size_t *n = blocks_new(count, p, &d);
    if (!n) {
        s->oom = 1;
        return;
    }
    int right = (r + 1) % p, left = (r - 1 + p) % p;
    for (int k = 0; k < p - 1; k++) {
        int sb = (r - k + p) % p, rb = (r - k - 1 + p) % p;
        coll_sendrecv(s, c, coll_at(acc, dt, d[sb]), n[sb], dt, right, coll_at(tmp, dt, d[rb]),
                      n[rb], dt, left, tag);
        coll_reduce_step(s, op, dt, n[rb], coll_at(tmp, dt, d[rb]), coll_at(acc, dt, d[rb]));
    }
    for (int k = 0; k < p - 1; k++) {
        int sb = (r + 1 - k + p) % p, rb = (r - k + p) % p;
        coll_sendrecv(s, c, coll_at(acc, dt, d[sb]), n[sb], dt, right, coll_at(acc, dt, d[rb]),
                      n[rb], dt, left, tag);
    }
    free(n);
}

static int shm_reduce_call(const coll_step_t *st)
{
    return coll_shm_reduce(st->src, st->dst, st->count, st->dt, st->op, st->root, st->comm);
}

/* Allreduce through the segment up to LOCUS_COLL_SHM_ALLREDUCE_MAX; while
 * it is not set, up to 16 KiB between two ranks, and their swap of halves
 * (allreduce_pair) from 32 KiB (or LOCUS_COLL_ALLREDUCE_LARGE if less):
 * it copies less than the segment does (every vector in, every share out).
 * Xeon VM, 16 / 32 / 64 / 128 KiB: 4.3-4.6 / 7.7-8.1 / 15.4-15.6 / 30.5 us
 * by the segment, 4.7 / 6.1-6.9 / 10.7 / 18.5-19 by the swap (Open MPI
 * 4.3-7 / 10.4 / 16.6 / 21.7). */
#define PAIR_SHM_ALLREDUCE_MAX ((size_t)16 << 10)
#define PAIR_ALLREDUCE_MIN ((size_t)32 << 10)
/* ...but a pair with a core each may exchange its vectors as messages
 * (one round of recursive doubling) from LOCUS_COLL_PAIR_MSG_MIN, where
 * the transport's pooled eager payloads beat the segment (coll_pair_msgs). */

static size_t allreduce_shm_max(const locus_coll_comm_t *c, const coll_state_t *st)
{
    size_t max = st->shm_allreduce_max;
    if (c->size == 2 && max > PAIR_SHM_ALLREDUCE_MAX && !st->shm_allreduce_set)
        return PAIR_SHM_ALLREDUCE_MAX;
    return max;
}

/* Whether an allreduce of `bytes` on c skips the segment for messages. */
static int allreduce_pair_msgs(const locus_coll_comm_t *c, const coll_state_t *st, int alg,
                               size_t bytes)
{
    return !st->shm_allreduce_set && coll_pair_msgs(c, st, alg, bytes);
}

void coll_build_allreduce(locus_coll_sched_t *s, const void *sbuf, void *rbuf, size_t count,
                          locus_dtype_t *dt, locus_op_t *op, locus_coll_comm_t *c)
{
    if (count == 0)
        return;
    coll_state_t *st = c->size > 1 ? coll_state_for(s, c) : NULL;
    size_t bytes = count * locus_dtype_size(dt);
    int commute = op->commute, alg = st ? st->allreduce : ALG_AUTO;
    int hier = st && alg == ALG_AUTO && commute && coll_use_hier(c, st, s->blocking);
    /* The segment takes my data straight from sbuf: no copy first. */
    if (st && !hier && coll_shm_reduces(dt, op) && !allreduce_pair_msgs(c, st, alg, bytes) &&
        coll_shm_reduce_usable(s, c, st, alg, bytes, allreduce_shm_max(c, st))) {
        coll_call(s, &(coll_step_t){ .comm = c, .src = sbuf, .dst = rbuf, .count = count,
                                     .dt = dt, .op = op, .root = -1,
                                     .call = shm_reduce_call });
        return;
    }
    if (st && !hier && (alg == ALG_AUTO || alg == ALG_SHM || alg == ALG_RABENSEIFNER) &&
        commute && c->size == 2 &&
        bytes >= (st->allreduce_large < PAIR_ALLREDUCE_MIN ? st->allreduce_large
                                                            : PAIR_ALLREDUCE_MIN)) {
        allreduce_pair(s, sbuf, rbuf, count, dt, op, coll_tag(c), c, st->reduce_segment);
        return;
    }
    if (sbuf != LOCUS_COLL_IN_PLACE)
        coll_copy(s, sbuf, count, dt, rbuf, count, dt);
    if (!st)
        return;
    if (hier) {
        coll_build_reduce(s, st->node_comm->rank == 0 ? LOCUS_COLL_IN_PLACE : rbuf, rbuf,
                          count, dt, op, 0, st->node_comm);
        coll_fence(s);
        if (st->leader_comm)
            coll_build_allreduce(s, LOCUS_COLL_IN_PLACE, rbuf, count, dt, op, st->leader_comm);
        coll_fence(s);
        coll_build_bcast(s, rbuf, count, dt, 0, st->node_comm);
        return;
    }
    if (alg == ALG_AUTO || alg == ALG_SHM)
        alg = (commute && bytes >= st->allreduce_large && count >= (size_t)c->size)
                  ? ALG_RABENSEIFNER : ALG_RECURSIVE_DOUBLING;
    if ((alg == ALG_RABENSEIFNER || alg == ALG_RING) && !commute)
        alg = ALG_RECURSIVE_DOUBLING;
    if (alg == ALG_REDUCE_BCAST) {
        coll_build_reduce(s, c->rank == 0 ? LOCUS_COLL_IN_PLACE : rbuf, rbuf, count, dt, op, 0,
                          c);
        coll_fence(s);
        coll_build_bcast(s, rbuf, count, dt, 0, c);
        return;
    }
    char *tmp = coll_sched_tmp(s, dt, count);
    if (!tmp)
        return;
    int tag = coll_tag(c);
    if (alg == ALG_RING)
        allreduce_ring(s, rbuf, tmp, count, dt, op, tag, c);
    else if (alg == ALG_RABENSEIFNER)
        allreduce_rabenseifner(s, rbuf, tmp, count, dt, op, tag, c);
    else
        allreduce_recdbl(s, rbuf, tmp, count, dt, op, tag, c);
}

/* ---- reduce ---- */

/*
 * Binomial tree. With a commutative op the tree is rooted at root; with a
 * non-commutative one it is rooted at rank 0 (where subtree k holds ranks
 * k..k+mask-1 in order) and the result moves to root at the end. Returns
 * the buffer holding the result (at root).
 */
static char *reduce_binomial(locus_coll_sched_t *s, char *acc, char *tmp, size_t count,
                             locus_dtype_t *dt, locus_op_t *op, int root, int tag,
                             locus_coll_comm_t *c)
{
    int p = c->size, base = op->commute ? root : 0, vr = (c->rank - base + p) % p;
    char *a = acc, *b = tmp;
    for (int mask = 1; mask < p; mask <<= 1) {
        if (vr & mask) {
            coll_send(s, c, a, count, dt, (vr - mask + base) % p, tag);
            coll_fence(s);
            break;
        }
        if (vr + mask < p) {
            coll_recv(s, c, b, count, dt, (vr + mask + base) % p, tag);
            coll_fence(s);
            /* a holds lower ranks than b: a op b, result in b, then swap. */
            coll_reduce_step(s, op, dt, count, a, b);
            char *t = a;
            a = b;
            b = t;
        }
    }
    if (base != root) {
        if (c->rank == 0)
            coll_send(s, c, a, count, dt, root, tag);
        else if (c->rank == root)
            coll_recv(s, c, a, count, dt, 0, tag);
        coll_fence(s);
    }
    return a;
}

/*
 * Binomial tree for a commutative op without working copies, streamed in
 * segments of LOCUS_COLL_REDUCE_SEGMENT bytes: a leaf sends straight from
 * its buffer; a parent posts every child's receive of a segment, copies
 * its own data of it into the accumulator (root: the receive buffer
 * itself) meanwhile, and folds in the segment before. A segment stays in
 * cache from its arrival to its sending on (2 ranks of the VM, 4 MiB of
 * floats: one piece took 970-1350 us, Open MPI 490-780; segments of 256
 * KiB 330-370). A root with one child and its own input has the child's
 * data land in the receive buffer and folds its input into it: no copy.
 * One segment is read by plain single copy (its sender has nothing else
 * to do); the segments of a longer stream take the measured paths, where
 * the sender copies the next while its parent folds in the last.
 */
static void reduce_binomial_direct(locus_coll_sched_t *s, const void *src, void *rbuf,
                                   size_t count, locus_dtype_t *dt, locus_op_t *op, int root,
                                   int tag, locus_coll_comm_t *c, size_t seg_bytes)
{
    int p = c->size, vr = (c->rank - root + p) % p, mask = 1, nchild = 0;
    while (mask < p && !(vr & mask)) {
        nchild += vr + mask < p;
        mask <<= 1;
    }
    int parent = vr ? (vr - mask + root) % p : -1;
    size_t per = seg_elems(dt, seg_bytes);
    /* Two segments are one piece: the pair would take the measured paths
     * one after the other, one piece plain CMA (Xeon VM, 512 KiB: 38-39 us
     * in two, 30-33 in one). */
    per = per < count && count > 2 * per ? per : count;
    size_t nseg = (count + per - 1) / per;
    if (nchild == 0) {
        for (size_t lo = 0; lo < count; lo += per)
            coll_send(s, c, coll_at(src, dt, (ptrdiff_t)lo), seg_len(count, lo, per),
                      dt, parent, tag);
        coll_fence(s);
        return;
    }
    int direct = parent < 0 && nchild == 1 && src != rbuf;
    char *acc = parent < 0 ? rbuf : coll_sched_tmp(s, dt, count);
    char *in = direct ? acc : coll_sched_tmp(s, dt, per * (size_t)nchild * 2);
    if (!acc || !in)
        return;
    for (size_t k = 0; k <= nseg; k++) {
        size_t lo = k * per, n = k < nseg ? seg_len(count, lo, per) : per;
        for (int m = 1, j = 0; k < nseg && m < mask; m <<= 1) {
            if (vr + m >= p)
                continue;
            size_t at = direct ? lo : ((k & 1) * (size_t)nchild + (size_t)j++) * per;
            (nseg > 1 ? coll_recv : coll_recv_bulk)(s, c, coll_at(in, dt, (ptrdiff_t)at), n,
                                                    dt, (vr + m + root) % p, tag);
        }
        if (k < nseg && !direct && src != acc)
            coll_copy(s, coll_at(src, dt, (ptrdiff_t)lo), n, dt, coll_at(acc, dt, (ptrdiff_t)lo),
                      n, dt);
        if (k > 0) {
            size_t plo = lo - per, pn = seg_len(count, plo, per);
            char *out = coll_at(acc, dt, (ptrdiff_t)plo);
            if (direct)
                coll_reduce_step(s, op, dt, pn, coll_at(src, dt, (ptrdiff_t)plo), out);
            for (int j = 0; !direct && j < nchild; j++)
                coll_reduce_step(s, op, dt, pn,
                                 coll_at(in, dt, (ptrdiff_t)((((k - 1) & 1) * (size_t)nchild +
                                                              (size_t)j) * per)), out);
            if (parent >= 0)
                coll_send(s, c, out, pn, dt, parent, tag);
        }
        coll_fence(s);
    }
}

/* Root combines everyone's data in rank order (small comms, testing):
 * res = x_{p-1}; res = x_i op res for i from p-2 down to 0. */
static void reduce_linear(locus_coll_sched_t *s, char *acc, char *tmp, size_t count,
                          locus_dtype_t *dt, locus_op_t *op, int root, int tag,
                          locus_coll_comm_t *c, char *res)
{
    int p = c->size;
    if (c->rank != root) {
        coll_send(s, c, acc, count, dt, root, tag);
        coll_fence(s);
        return;
    }
    if (root != p - 1)
        coll_recv(s, c, res, count, dt, p - 1, tag);
    else
        coll_copy(s, acc, count, dt, res, count, dt);
    coll_fence(s);
    for (int i = p - 2; i >= 0; i--) {
        const char *x = acc;
        if (i != root) {
            coll_recv(s, c, tmp, count, dt, i, tag);
            coll_fence(s);
            x = tmp;
        }
        coll_reduce_step(s, op, dt, count, x, res);
    }
}

/* Reduce-scatter by halving, then each remaining rank sends its block to
 * root, which finds each block's owner by replaying the halving choices. */
static void reduce_rabenseifner(locus_coll_sched_t *s, char *acc, char *tmp, size_t count,
                                locus_dtype_t *dt, locus_op_t *op, int root, int tag,
                                locus_coll_comm_t *c, char *res)
{
    coll_fold_t f;
    coll_fold_in(s, acc, tmp, count, dt, op, tag, c, &f);
    ptrdiff_t *disps;
    size_t *cnts = blocks_new(count, f.pof2, &disps);
    if (!cnts) {
        s->oom = 1;
        return;
    }
    int idx = 0, last = 0;
    if (f.newrank >= 0)
        coll_rs_halving(s, acc, tmp, dt, op, tag, c, &f, cnts, disps, &idx, &last);
    if (c->rank != root && f.newrank >= 0)
        coll_send(s, c, coll_at(acc, dt, disps[idx]), coll_blocks_sum(cnts, idx, last), dt,
                  root, tag);
    if (c->rank == root) {
        for (int nr = 0; nr < f.pof2; nr++) {
            int b = 0;
            for (int mask = 1; mask < f.pof2; mask <<= 1)
                if (nr & mask)
                    b += f.pof2 / (mask * 2);
            int src = coll_fold_real(&f, nr);
            if (src == root)
                coll_copy(s, coll_at(acc, dt, disps[b]), cnts[b], dt, coll_at(res, dt, disps[b]),
                          cnts[b], dt);
            else
                coll_recv(s, c, coll_at(res, dt, disps[b]), cnts[b], dt, src, tag);
        }
    }
    coll_fence(s);
    free(cnts);
}

void coll_build_reduce(locus_coll_sched_t *s, const void *sbuf, void *rbuf, size_t count,
                       locus_dtype_t *dt, locus_op_t *op, int root, locus_coll_comm_t *c)
{
    int me_root = c->rank == root;
    const void *src = (me_root && sbuf == LOCUS_COLL_IN_PLACE) ? rbuf : sbuf;
    if (count == 0)
        return;
    if (c->size == 1) {
        coll_copy(s, src, count, dt, rbuf, count, dt);
        return;
    }
    coll_state_t *st = coll_state_for(s, c);
    if (!st)
        return;
    size_t bytes = count * locus_dtype_size(dt);
    int commute = op->commute;
    if (st->reduce == ALG_AUTO && commute && coll_use_hier(c, st, s->blocking)) {
        /* Reduce to each node's leader, then among leaders to root's node
         * leader, then hand it to root. */
        int root_node = st->node_of[root], root_leader = st->leader_of[root_node];
        char *t1 = coll_sched_tmp(s, dt, count);
        if (!t1)
            return;
        coll_build_reduce(s, src, t1, count, dt, op, 0, st->node_comm);
        coll_fence(s);
        if (st->leader_comm)
            coll_build_reduce(s, st->leader_comm->rank == root_node ? LOCUS_COLL_IN_PLACE : t1,
                              t1, count, dt, op, root_node, st->leader_comm);
        coll_fence(s);
        int tag = coll_tag(c);
        if (root != root_leader) {
            if (c->rank == root_leader)
                coll_send(s, c, t1, count, dt, root, tag);
            else if (me_root)
                coll_recv(s, c, rbuf, count, dt, root_leader, tag);
            coll_fence(s);
        } else if (me_root) {
            coll_copy(s, t1, count, dt, rbuf, count, dt);
        }
        return;
    }
    int alg = st->reduce;
    if (coll_shm_reduces(dt, op) &&
        coll_shm_reduce_usable(s, c, st, alg, bytes,
                               alg == ALG_SHM ? st->shm_allreduce_max : 0)) {
        /* Past a slot the tree's single-copy receives beat three passes
         * through the segment (2 ranks, 64 KiB: 11 us against 39). */
        coll_call(s, &(coll_step_t){ .comm = c, .src = sbuf, .dst = rbuf, .count = count,
                                     .dt = dt, .op = op, .root = root,
                                     .call = shm_reduce_call });
        return;
    }
    /* Up to 4 ranks the tree's extra copies of the data (log p of them
     * at the root) cost less than the halving's rounds and copies: one
     * single-copy receive and one fast reduction per child (2 ranks,
     * 1 MiB: 110 us against 240-300 for Rabenseifner). */
    if (alg == ALG_AUTO || alg == ALG_SHM)
        alg = (commute && bytes >= st->allreduce_large && count >= (size_t)coll_pof2(c->size) &&
               c->size > 4)
                  ? ALG_RABENSEIFNER : ALG_BINOMIAL;
    if (alg == ALG_RABENSEIFNER && !commute)
        alg = ALG_BINOMIAL;
    if (alg == ALG_BINOMIAL && commute) {
        reduce_binomial_direct(s, src, rbuf, count, dt, op, root, coll_tag(c), c,
                               st->reduce_segment);
        return;
    }
    /* Working copies: acc (my contribution, overwritten), tmp (incoming). */
    char *acc = coll_sched_tmp(s, dt, count), *tmp = coll_sched_tmp(s, dt, count);
    if (!acc || !tmp)
        return;
    coll_copy(s, src, count, dt, acc, count, dt);
    int tag = coll_tag(c);
    if (alg == ALG_LINEAR) {
        reduce_linear(s, acc, tmp, count, dt, op, root, tag, c, rbuf);
    } else if (alg == ALG_RABENSEIFNER) {
        reduce_rabenseifner(s, acc, tmp, count, dt, op, root, tag, c, rbuf);
    } else {
        char *res = reduce_binomial(s, acc, tmp, count, dt, op, root, tag, c);
        if (me_root)
            coll_copy(s, res, count, dt, rbuf, count, dt);
    }
}
