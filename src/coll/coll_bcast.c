/*
 * coll_bcast.c — barrier and broadcast: dissemination barrier, binomial,
 * linear and scatter + ring-allgather broadcast, their hierarchical forms
 * (node, then node leaders, then node) and the shared-memory fast path.
 */
#include <stdlib.h>

#include "coll_priv.h"

static locus_dtype_t *bytes_type(void)
{
    return locus_dtype_basic(LOCUS_EL_BYTE);
}

/* ---- barrier ---- */

static int shm_barrier_call(const coll_step_t *st)
{
    return coll_shm_barrier(st->comm);
}

/* Dissemination: ceil(log2 p) rounds of zero-byte messages, any p. */
static void barrier_dissemination(locus_coll_sched_t *s, locus_coll_comm_t *c)
{
    int p = c->size, r = c->rank, tag = coll_tag(c);
    for (int dist = 1; dist < p; dist *= 2)
        coll_sendrecv(s, c, NULL, 0, bytes_type(), (r + dist) % p, NULL, 0, bytes_type(),
                      (r - dist + p) % p, tag);
}

void coll_build_barrier(locus_coll_sched_t *s, locus_coll_comm_t *c)
{
    if (c->size == 1)
        return;
    coll_state_t *st = coll_state_for(s, c);
    if (!st)
        return;
    if (st->barrier != ALG_DISSEMINATION && coll_use_hier(c, st, s->blocking)) {
        /* Everyone on a node arrives, leaders meet, leaders release. */
        coll_build_barrier(s, st->node_comm);
        coll_fence(s);
        if (st->leader_comm)
            coll_build_barrier(s, st->leader_comm);
        coll_fence(s);
        coll_build_barrier(s, st->node_comm);
        return;
    }
    if (coll_shm_usable(s, c, st, st->barrier, 0, 0)) {
        coll_call(s, &(coll_step_t){ .comm = c, .call = shm_barrier_call });
        return;
    }
    barrier_dissemination(s, c);
}

/* ---- bcast ---- */

static int shm_bcast_call(const coll_step_t *st)
{
    return coll_shm_bcast(st->dst, st->count, st->dt, st->root, st->comm);
}

/* Binomial tree over ranks relative to root: receive from the parent, then
 * send to every child in one round. */
static void bcast_binomial(locus_coll_sched_t *s, void *buf, size_t count, locus_dtype_t *dt,
                           int root, locus_coll_comm_t *c)
{
    int p = c->size, vr = (c->rank - root + p) % p, mask = 1, tag = coll_tag(c);
    while (mask < p) {
        if (vr & mask) {
            coll_recv(s, c, buf, count, dt, (vr - mask + root) % p, tag);
            coll_fence(s);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < p)
            coll_send(s, c, buf, count, dt, (vr + mask + root) % p, tag);
    coll_fence(s);
}

/* Root sends to everyone directly (tests and tiny communicators). */
static void bcast_linear(locus_coll_sched_t *s, void *buf, size_t count, locus_dtype_t *dt,
                         int root, locus_coll_comm_t *c)
{
    int tag = coll_tag(c);
    if (c->rank != root)
        coll_recv(s, c, buf, count, dt, root, tag);
    else
        for (int i = 0; i < c->size; i++)
            if (i != root)
                coll_send(s, c, buf, count, dt, i, tag);
    coll_fence(s);
}

/* Bytes of the chunks [first, first + nchunks) of n bytes cut in `chunk`s. */
static size_t chunk_len(size_t n, size_t chunk, long first, long nchunks)
{
    size_t lo = (size_t)first * chunk, hi = (size_t)(first + nchunks) * chunk;
    if (lo >= n)
        return 0;
    return (hi > n ? n : hi) - lo;
}

static char *chunk_at(char *bytes, size_t n, size_t chunk, long first)
{
    return (size_t)first * chunk < n ? bytes + (size_t)first * chunk : bytes;
}

/*
 * Van de Geijn: binomial scatter of p chunks of the packed bytes, then a
 * ring allgather; moves about 2n bytes per rank instead of n log p.
 */
static void bcast_scatter_allgather(locus_coll_sched_t *s, char *bytes, size_t n, int root,
                                    locus_coll_comm_t *c)
{
    int p = c->size, vr = (c->rank - root + p) % p, tag = coll_tag(c);
    locus_dtype_t *b = bytes_type();
    size_t chunk = (n + (size_t)p - 1) / (size_t)p;
    /* Scatter: my subtree is vr .. vr+mask-1 where mask is my lowest bit. */
    int mask = 1;
    while (mask < p) {
        if (vr & mask) {
            coll_recv(s, c, chunk_at(bytes, n, chunk, vr), chunk_len(n, chunk, vr, mask),
                      b, (vr - mask + root) % p, tag);
            coll_fence(s);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < p)
            coll_send(s, c, chunk_at(bytes, n, chunk, vr + mask),
                      chunk_len(n, chunk, vr + mask, mask), b, (vr + mask + root) % p, tag);
    coll_fence(s);
    /* Ring allgather of the chunks (in relative ranks). */
    int right = (c->rank + 1) % p, left = (c->rank - 1 + p) % p;
    for (int k = 0; k < p - 1; k++) {
        int sc = (vr - k + p) % p, rc = (vr - k - 1 + p) % p;
        coll_sendrecv(s, c, chunk_at(bytes, n, chunk, sc), chunk_len(n, chunk, sc, 1), b, right,
                      chunk_at(bytes, n, chunk, rc), chunk_len(n, chunk, rc, 1), b, left, tag);
    }
}

static void bcast_flat(locus_coll_sched_t *s, void *buf, size_t count, locus_dtype_t *dt,
                       int root, locus_coll_comm_t *c, coll_state_t *st)
{
    size_t n = count * locus_dtype_size(dt);
    int alg = st->bcast;
    if (alg == ALG_AUTO || alg == ALG_SHM)
        alg = (n >= st->bcast_large && c->size > 2) ? ALG_SCATTER_ALLGATHER : ALG_BINOMIAL;
    if (alg == ALG_LINEAR) {
        bcast_linear(s, buf, count, dt, root, c);
    } else if (alg == ALG_BINOMIAL) {
        bcast_binomial(s, buf, count, dt, root, c);
    } else if (locus_dtype_is_contig(dt)) {
        ptrdiff_t tlb, text;
        locus_dtype_true_extent(dt, &tlb, &text);
        bcast_scatter_allgather(s, (char *)buf + tlb, n, root, c);
    } else {
        /* Scatter + allgather works on bytes: pack non-contiguous data. */
        char *tmp = coll_sched_bytes(s, n);
        if (!tmp)
            return;
        if (c->rank == root)
            coll_copy(s, buf, count, dt, tmp, n, bytes_type());
        bcast_scatter_allgather(s, tmp, n, root, c);
        if (c->rank != root)
            coll_copy(s, tmp, n, bytes_type(), buf, count, dt);
    }
}

void coll_build_bcast(locus_coll_sched_t *s, void *buf, size_t count, locus_dtype_t *dt,
                      int root, locus_coll_comm_t *c)
{
    size_t n = count * locus_dtype_size(dt);
    /* Signatures match on every rank, so no data means nothing to do. */
    if (c->size == 1 || n == 0)
        return;
    coll_state_t *st = coll_state_for(s, c);
    if (!st)
        return;
    if (st->bcast == ALG_AUTO && coll_use_hier(c, st, s->blocking)) {
        /* Root's node first (so its leader has the data), then the leaders,
         * then every other node from its leader. */
        int root_node = st->node_of[root];
        if (st->my_node == root_node)
            coll_build_bcast(s, buf, count, dt, st->node_rank_of[root], st->node_comm);
        coll_fence(s);
        if (st->leader_comm)
            coll_build_bcast(s, buf, count, dt, root_node, st->leader_comm);
        coll_fence(s);
        if (st->my_node != root_node)
            coll_build_bcast(s, buf, count, dt, 0, st->node_comm);
        return;
    }
    /* Streaming through the segment copies every byte twice: on two ranks
     * one message (single copy or pipelined) does better past a slot. */
    size_t stream_max = c->size == 2 && st->bcast == ALG_AUTO ? 0 : st->shm_bcast_max;
    if (coll_shm_usable(s, c, st, st->bcast, n, stream_max)) {
        coll_call(s, &(coll_step_t){ .comm = c, .dst = buf, .count = count, .dt = dt,
                                     .root = root, .call = shm_bcast_call });
        return;
    }
    bcast_flat(s, buf, count, dt, root, c, st);
}
