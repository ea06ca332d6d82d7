/*
 * coll_gather.c — gather(v), scatter(v), allgather(v).
 *
 * Gather and scatter: one binomial tree over packed blocks serves both
 * (scatter is gather run backwards) for small equal-count messages (log p
 * steps at the root instead of p), direct (linear) otherwise and for the v
 * forms. Allgather: recursive doubling (power-of-two sizes, small data),
 * ring (large or any size), gather + bcast, or hierarchical across nodes.
 */
#include <stdlib.h>

#include "coll_priv.h"

/* Binomial trees stop paying once the root's log p copies of the data
 * outweigh p direct messages; past this many bytes per rank go direct. */
#define GATHER_BINOMIAL_MAX 2048

static locus_dtype_t *bytes_type(void)
{
    return locus_dtype_basic(LOCUS_EL_BYTE);
}

/* p uniform counts and their displacements (build time only). */
static size_t *uniform_new(int p, size_t count, ptrdiff_t **displs)
{
    size_t *cnts = malloc((sizeof(size_t) + sizeof(ptrdiff_t)) * (size_t)p);
    if (!cnts)
        return NULL;
    *displs = (ptrdiff_t *)(cnts + p);
    for (int i = 0; i < p; i++) {
        cnts[i] = count;
        (*displs)[i] = (ptrdiff_t)i * (ptrdiff_t)count;
    }
    return cnts;
}

/* ---- linear (and every v form) ---- */

void coll_build_gatherv(locus_coll_sched_t *s, const void *sbuf, size_t scount,
                        locus_dtype_t *sdt, void *rbuf, const size_t *rcounts,
                        const ptrdiff_t *displs, locus_dtype_t *rdt, int root,
                        locus_coll_comm_t *c)
{
    int tag = coll_tag(c);
    if (c->rank != root) {
        coll_send(s, c, sbuf, scount, sdt, root, tag);
    } else {
        /* The root's own block last: the others' transfers run while it
         * copies. */
        for (int i = 0; i < c->size; i++)
            if (i != root)
                coll_recv_fanin(s, c, coll_at(rbuf, rdt, displs[i]), rcounts[i], rdt, i, tag);
        if (sbuf != LOCUS_COLL_IN_PLACE)
            coll_copy(s, sbuf, scount, sdt, coll_at(rbuf, rdt, displs[root]), rcounts[root], rdt);
    }
    coll_fence(s);
}

void coll_build_scatterv(locus_coll_sched_t *s, const void *sbuf, const size_t *scounts,
                         const ptrdiff_t *displs, locus_dtype_t *sdt, void *rbuf,
                         size_t rcount, locus_dtype_t *rdt, int root, locus_coll_comm_t *c)
{
    int tag = coll_tag(c);
    if (c->rank != root) {
        coll_recv_bulk(s, c, rbuf, rcount, rdt, root, tag);
    } else {
        /* The root's own block last: the others read theirs (by CMA) while
         * it copies. IMB's Scatter of 64 KiB on 2 ranks, whose root
         * alternates, took 8.7 us with the copy first, 4.0 by Open MPI. */
        for (int i = 0; i < c->size; i++)
            if (i != root)
                coll_send(s, c, coll_at(sbuf, sdt, displs[i]), scounts[i], sdt, i, tag);
        if (rbuf != LOCUS_COLL_IN_PLACE)
            coll_copy(s, coll_at(sbuf, sdt, displs[root]), scounts[root], sdt, rbuf, rcount, rdt);
    }
    coll_fence(s);
}

/* ---- binomial trees over packed blocks ---- */

/* Ranks in relative rank vr's subtree: vr .. vr+n-1, n its lowest set bit. */
static int subtree_size(int vr, int p)
{
    int mask = 1;
    while (mask < p && !(vr & mask))
        mask <<= 1;
    return vr + mask > p ? p - vr : mask;
}

/*
 * tmp holds the nb-byte blocks of my subtree in relative-rank order, mine
 * first. Gathering, the children's subtrees come in (one round), then mine
 * goes up; scattering, mine comes down, then the children's go out.
 */
static void tree_blocks(locus_coll_sched_t *s, locus_coll_comm_t *c, int root, char *tmp,
                        size_t nb, int gathering, int tag)
{
    int p = c->size, vr = (c->rank - root + p) % p, mask = 1;
    while (mask < p && !(vr & mask))
        mask <<= 1;
    int parent = vr ? (vr - mask + root) % p : -1;
    size_t mine = (size_t)subtree_size(vr, p) * nb;
    if (!gathering) {
        coll_recv(s, c, tmp, mine, bytes_type(), parent, tag);
        coll_fence(s);
    }
    for (int m = 1; m < mask && vr + m < p; m <<= 1) {
        char *at = tmp + (size_t)m * nb;
        size_t len = (size_t)subtree_size(vr + m, p) * nb;
        if (gathering)
            coll_recv(s, c, at, len, bytes_type(), (vr + m + root) % p, tag);
        else
            coll_send(s, c, at, len, bytes_type(), (vr + m + root) % p, tag);
    }
    coll_fence(s);
    if (gathering) {
        coll_send(s, c, tmp, mine, bytes_type(), parent, tag);
        coll_fence(s);
    }
}

static void gather_binomial(locus_coll_sched_t *s, const void *sbuf, size_t scount,
                            locus_dtype_t *sdt, void *rbuf, size_t rcount, locus_dtype_t *rdt,
                            int root, locus_coll_comm_t *c)
{
    int p = c->size, vr = (c->rank - root + p) % p, me_root = c->rank == root;
    size_t nb = me_root ? rcount * locus_dtype_size(rdt) : scount * locus_dtype_size(sdt);
    char *tmp = coll_sched_bytes(s, (size_t)subtree_size(vr, p) * nb);
    if (!tmp)
        return;
    if (me_root && sbuf == LOCUS_COLL_IN_PLACE)
        coll_copy(s, coll_at(rbuf, rdt, (ptrdiff_t)root * (ptrdiff_t)rcount), rcount, rdt, tmp,
                  nb, bytes_type());
    else
        coll_copy(s, sbuf, scount, sdt, tmp, nb, bytes_type());
    tree_blocks(s, c, root, tmp, nb, 1, coll_tag(c));
    if (me_root)
        for (int v = 0; v < p; v++)
            coll_copy(s, tmp + (size_t)v * nb, nb, bytes_type(),
                      coll_at(rbuf, rdt, (ptrdiff_t)((v + root) % p) * (ptrdiff_t)rcount),
                      rcount, rdt);
}

static void scatter_binomial(locus_coll_sched_t *s, const void *sbuf, size_t scount,
                             locus_dtype_t *sdt, void *rbuf, size_t rcount, locus_dtype_t *rdt,
                             int root, locus_coll_comm_t *c)
{
    int p = c->size, vr = (c->rank - root + p) % p, me_root = c->rank == root;
    size_t nb = me_root ? scount * locus_dtype_size(sdt) : rcount * locus_dtype_size(rdt);
    char *tmp = coll_sched_bytes(s, (size_t)subtree_size(vr, p) * nb);
    if (!tmp)
        return;
    if (me_root)
        for (int v = 0; v < p; v++)
            coll_copy(s, coll_at(sbuf, sdt, (ptrdiff_t)((v + root) % p) * (ptrdiff_t)scount),
                      scount, sdt, tmp + (size_t)v * nb, nb, bytes_type());
    tree_blocks(s, c, root, tmp, nb, 0, coll_tag(c));
    if (!(me_root && rbuf == LOCUS_COLL_IN_PLACE))
        coll_copy(s, tmp, nb, bytes_type(), rbuf, rcount, rdt);
}

/* Every rank must choose alike: decide from sizes all ranks know. */
static int tree_wanted(locus_coll_comm_t *c, size_t nb)
{
    coll_state_t *st = coll_state(c);
    int alg = st ? st->gather : ALG_LINEAR;
    if (alg == ALG_AUTO)
        alg = (nb <= GATHER_BINOMIAL_MAX && c->size > 2) ? ALG_BINOMIAL : ALG_LINEAR;
    return alg == ALG_BINOMIAL;
}

static int shm_gather_call(const coll_step_t *st)
{
    return coll_shm_gather(st->src, st->count, st->dt, st->dst, st->count2, st->dt2, st->root,
                           st->comm);
}

static int shm_scatter_call(const coll_step_t *st)
{
    return coll_shm_scatter(st->src, st->count, st->dt, st->dst, st->count2, st->dt2, st->root,
                            st->comm);
}

/* The shared-segment path for blocks of nb bytes (alg: the variable's
 * choice). On an oversubscribed node the segment's larger slots take an
 * allgather's (root < 0) blocks, and a gather's or scatter's up to
 * ROOTED_SLOT_MAX: one barrier and every rank copying out beat the
 * rendezvous of messages there (4 ranks on 2 cores: allgather of 8-64 KiB
 * blocks 13.5-79 us against 40-194, Open MPI 42-186; gather / scatter of
 * 32 KiB 12-15 / 11-14 us against 25-29 / 24-26, Open MPI 22-23 / 13-15;
 * of 256 KiB 58-67 / 62-68 against 113-116 / 76-107), but not whole
 * 1 MiB blocks (gather 672-813 us against 611-749, scatter 535-641
 * against 442-525). */
#define ROOTED_SLOT_MAX ((size_t)512 << 10)

static int shm_blocks(locus_coll_sched_t *s, locus_coll_comm_t *c, coll_state_t *st, int alg,
                      size_t nb, coll_call_fn call, const void *sbuf, size_t scount,
                      locus_dtype_t *sdt, void *rbuf, size_t rcount, locus_dtype_t *rdt,
                      int root)
{
    /* A pair with a core each may move its blocks as messages: where the
     * transport's eager payloads (pooled) beat the segment's copies and
     * flags (a Xeon VM from 2 KiB: scatter / gather of 2 KiB blocks 0.78 /
     * 0.69 us against 0.91 / 0.78 through the segment, MPICH 0.89 / 0.83). */
    if (coll_pair_msgs(c, st, alg, nb))
        return 0;
    if (!coll_shm_usable(s, c, st, alg, nb,
                         root < 0 || nb <= ROOTED_SLOT_MAX ? COLL_SHM_SLOT : 0))
        return 0;
    coll_call(s, &(coll_step_t){ .comm = c, .src = sbuf, .count = scount, .dt = sdt,
                                 .dst = rbuf, .count2 = rcount, .dt2 = rdt, .root = root,
                                 .call = call });
    return 1;
}

/* Gather (gathering) or scatter of equal blocks: through the shared
 * segment on a node, the binomial tree for small blocks, else the v form
 * with uniform counts. */
static void rooted_uniform(locus_coll_sched_t *s, int gathering, const void *sbuf,
                           size_t scount, locus_dtype_t *sdt, void *rbuf, size_t rcount,
                           locus_dtype_t *rdt, int root, locus_coll_comm_t *c)
{
    /* The root's side of a gather is the receive side, of a scatter the send side. */
    int recv_side = (c->rank == root) == gathering;
    size_t nb = recv_side ? rcount * locus_dtype_size(rdt) : scount * locus_dtype_size(sdt);
    if (nb == 0)
        return;   /* blocks are alike on every rank: no data anywhere */
    coll_state_t *st = coll_state(c);
    if (st && shm_blocks(s, c, st, st->gather, nb,
                         gathering ? shm_gather_call : shm_scatter_call, sbuf, scount, sdt, rbuf,
                         rcount, rdt, root))
        return;
    if (tree_wanted(c, nb)) {
        if (gathering)
            gather_binomial(s, sbuf, scount, sdt, rbuf, rcount, rdt, root, c);
        else
            scatter_binomial(s, sbuf, scount, sdt, rbuf, rcount, rdt, root, c);
        return;
    }
    ptrdiff_t *displs;
    size_t *cnts = uniform_new(c->size, gathering ? rcount : scount, &displs);
    if (!cnts) {
        s->oom = 1;
        return;
    }
    if (gathering)
        coll_build_gatherv(s, sbuf, scount, sdt, rbuf, cnts, displs, rdt, root, c);
    else
        coll_build_scatterv(s, sbuf, cnts, displs, sdt, rbuf, rcount, rdt, root, c);
    free(cnts);
}

void coll_build_gather(locus_coll_sched_t *s, const void *sbuf, size_t scount,
                       locus_dtype_t *sdt, void *rbuf, size_t rcount, locus_dtype_t *rdt,
                       int root, locus_coll_comm_t *c)
{
    rooted_uniform(s, 1, sbuf, scount, sdt, rbuf, rcount, rdt, root, c);
}

void coll_build_scatter(locus_coll_sched_t *s, const void *sbuf, size_t scount,
                        locus_dtype_t *sdt, void *rbuf, size_t rcount, locus_dtype_t *rdt,
                        int root, locus_coll_comm_t *c)
{
    rooted_uniform(s, 0, sbuf, scount, sdt, rbuf, rcount, rdt, root, c);
}

/* ---- allgather ---- */

/* My own block where the caller has it: the user's send buffer, or NULL
 * when it is in rbuf already (in place). */
typedef struct {
    const void *buf;
    size_t count;
    locus_dtype_t *dt;
} own_block_t;

/*
 * A round whose outgoing data is my own block only. With the block still
 * in the user's send buffer, it goes from there and its copy into rbuf
 * runs while the peers move data, instead of before everything.
 */
static void round_own(locus_coll_sched_t *s, locus_coll_comm_t *c, const own_block_t *own,
                      void *mine, size_t mcount, locus_dtype_t *rdt, int dst, void *in,
                      size_t icount, int src, int tag)
{
    if (!own->buf) {
        coll_sendrecv(s, c, mine, mcount, rdt, dst, in, icount, rdt, src, tag);
        return;
    }
    coll_recv(s, c, in, icount, rdt, src, tag);
    coll_send(s, c, own->buf, own->count, own->dt, dst, tag);
    coll_copy(s, own->buf, own->count, own->dt, mine, mcount, rdt);
    coll_fence(s);
}

/* Ring over arbitrary counts/displacements (allgatherv and large data). */
static void allgather_ring(locus_coll_sched_t *s, const own_block_t *own, void *rbuf,
                           const size_t *rcounts, const ptrdiff_t *displs, locus_dtype_t *rdt,
                           locus_coll_comm_t *c)
{
    int p = c->size, r = c->rank, tag = coll_tag(c);
    int right = (r + 1) % p, left = (r - 1 + p) % p;
    for (int k = 0; k < p - 1; k++) {
        int sb = (r - k + p) % p, rb = (r - k - 1 + p) % p;
        if (k == 0)
            round_own(s, c, own, coll_at(rbuf, rdt, displs[sb]), rcounts[sb], rdt, right,
                      coll_at(rbuf, rdt, displs[rb]), rcounts[rb], left, tag);
        else
            coll_sendrecv(s, c, coll_at(rbuf, rdt, displs[sb]), rcounts[sb], rdt, right,
                          coll_at(rbuf, rdt, displs[rb]), rcounts[rb], rdt, left, tag);
    }
}

/* A ring and linear move different messages: every rank must choose
 * alike, so linear only where all are on one node, whose ranks agree on
 * yielding (across nodes, one node may be oversubscribed and another
 * not). */
static int oversub_node(const locus_coll_comm_t *c)
{
    return c->yield && coll_is_node_local(c);
}

/* Every block posted at once, each rank taking what has come: where
 * ranks outnumber cores a ring's step waits for its neighbour to be
 * scheduled, as alltoall's pairwise steps do (coll_alltoall.c). */
static void allgather_linear(locus_coll_sched_t *s, const own_block_t *own, void *rbuf,
                             const size_t *rcounts, const ptrdiff_t *displs, locus_dtype_t *rdt,
                             locus_coll_comm_t *c)
{
    int p = c->size, r = c->rank, tag = coll_tag(c);
    void *mine = coll_at(rbuf, rdt, displs[r]);
    /* My block goes from the user's buffer where it still is. */
    const own_block_t out = own->buf ? *own : (own_block_t){ mine, rcounts[r], rdt };
    for (int i = 1; i < p; i++) {
        int dst = (r + i) % p, src = (r - i + p) % p;
        coll_recv(s, c, coll_at(rbuf, rdt, displs[src]), rcounts[src], rdt, src, tag);
        coll_send(s, c, out.buf, out.count, out.dt, dst, tag);
        if (own->buf && i == 1)
            coll_copy(s, own->buf, own->count, own->dt, mine, rcounts[r], rdt);
    }
    coll_fence(s);
}

/* Recursive doubling on a power-of-two size: blocks of my group double. */
static void allgather_recdbl(locus_coll_sched_t *s, const own_block_t *own, void *rbuf,
                             size_t rcount, locus_dtype_t *rdt, locus_coll_comm_t *c)
{
    int r = c->rank, tag = coll_tag(c);
    for (int mask = 1; mask < c->size; mask <<= 1) {
        int peer = r ^ mask, mine = r & ~(mask - 1), theirs = peer & ~(mask - 1);
        size_t n = (size_t)mask * rcount;
        char *at = coll_at(rbuf, rdt, (ptrdiff_t)mine * (ptrdiff_t)rcount);
        char *in = coll_at(rbuf, rdt, (ptrdiff_t)theirs * (ptrdiff_t)rcount);
        if (mask == 1)
            round_own(s, c, own, at, n, rdt, peer, in, n, peer, tag);
        else
            coll_sendrecv(s, c, at, n, rdt, peer, in, n, rdt, peer, tag);
    }
}

/*
 * Across nodes: every node gathers its blocks at its leader, the leaders
 * exchange whole nodes' blocks (ring allgatherv, so one message per node
 * pair crosses the network instead of one per rank pair), each leader
 * scatters them into place and broadcasts the result inside its node.
 * Works on packed bytes, so node members need not be consecutive ranks.
 */
static void allgather_hier(locus_coll_sched_t *s, void *rbuf, size_t rcount, locus_dtype_t *rdt,
                           locus_coll_comm_t *c, coll_state_t *st)
{
    int p = c->size, nn = st->nnodes, leader = st->leader_comm != NULL;
    size_t nb = rcount * locus_dtype_size(rdt);
    size_t *cnt = calloc((size_t)nn, sizeof *cnt + sizeof(ptrdiff_t));
    char *mine = coll_sched_bytes(s, nb), *all = leader ? coll_sched_bytes(s, (size_t)p * nb) : NULL;
    if (!cnt || !mine || (leader && !all)) {
        free(cnt);
        s->oom = 1;
        return;
    }
    ptrdiff_t *displs = (ptrdiff_t *)(cnt + nn);
    for (int r = 0; r < p; r++)
        cnt[st->node_of[r]] += nb;
    for (int k = 1; k < nn; k++)
        displs[k] = displs[k - 1] + (ptrdiff_t)cnt[k - 1];
    coll_copy(s, coll_at(rbuf, rdt, (ptrdiff_t)c->rank * (ptrdiff_t)rcount), rcount, rdt, mine,
              nb, bytes_type());
    coll_build_gather(s, mine, nb, bytes_type(), leader ? all + displs[st->my_node] : NULL, nb,
                      bytes_type(), 0, st->node_comm);
    coll_fence(s);
    if (leader) {
        allgather_ring(s, &(own_block_t){ 0 }, all, cnt, displs, bytes_type(), st->leader_comm);
        for (int r = 0; r < p; r++)
            coll_copy(s, all + displs[st->node_of[r]] + (size_t)st->node_rank_of[r] * nb, nb,
                      bytes_type(), coll_at(rbuf, rdt, (ptrdiff_t)r * (ptrdiff_t)rcount), rcount,
                      rdt);
    }
    coll_fence(s);
    coll_build_bcast(s, rbuf, (size_t)p * rcount, rdt, 0, st->node_comm);
    free(cnt);
}

void coll_build_allgatherv(locus_coll_sched_t *s, const void *sbuf, size_t scount,
                           locus_dtype_t *sdt, void *rbuf, const size_t *rcounts,
                           const ptrdiff_t *displs, locus_dtype_t *rdt, locus_coll_comm_t *c)
{
    own_block_t own = { sbuf == LOCUS_COLL_IN_PLACE ? NULL : sbuf, scount, sdt };
    if (c->size > 1)
        (oversub_node(c) ? allgather_linear : allgather_ring)(s, &own, rbuf, rcounts, displs,
                                                              rdt, c);
    else if (own.buf)
        coll_copy(s, sbuf, scount, sdt, coll_at(rbuf, rdt, displs[c->rank]), rcounts[c->rank],
                  rdt);
}

void coll_build_allgather(locus_coll_sched_t *s, const void *sbuf, size_t scount,
                          locus_dtype_t *sdt, void *rbuf, size_t rcount, locus_dtype_t *rdt,
                          locus_coll_comm_t *c)
{
    int p = c->size;
    char *mine = coll_at(rbuf, rdt, (ptrdiff_t)c->rank * (ptrdiff_t)rcount);
    own_block_t own = { sbuf == LOCUS_COLL_IN_PLACE ? NULL : sbuf, scount, sdt };
    coll_state_t *st = p == 1 || rcount == 0 ? NULL : coll_state_for(s, c);
    if (!st) {
        if (own.buf)
            coll_copy(s, sbuf, scount, sdt, mine, rcount, rdt);
        return;
    }
    size_t total = (size_t)p * rcount * locus_dtype_size(rdt);
    int pow2 = coll_pof2(p) == p, alg = st->allgather;
    int hier = alg == ALG_AUTO && coll_use_hier(c, st, s->blocking);
    /* Every rank waits for every other: small blocks go by flag records,
     * one cache line each way on 2 ranks (coll_shm.c). */
    if (!hier && shm_blocks(s, c, st, alg, rcount * locus_dtype_size(rdt), shm_gather_call,
                            sbuf, scount, sdt, rbuf, rcount, rdt, -1))
        return;
    /* Past a slot where ranks outnumber cores, linear: 4 ranks on 2 cores,
     * 2 / 4 MiB blocks 2117-2419 / 4980-6337 us against 2377-2963 /
     * 6583-6872 by the ring (Open MPI 2117-2399 / 5696-6338). */
    if (alg == ALG_AUTO || alg == ALG_SHM)
        alg = (pow2 && total < st->allgather_large) ? ALG_RECURSIVE_DOUBLING
              : oversub_node(c)                     ? ALG_LINEAR
                                                    : ALG_RING;
    if (alg == ALG_RECURSIVE_DOUBLING && !pow2)
        alg = ALG_RING;
    if (hier || alg == ALG_GATHER_BCAST) {
        if (own.buf)
            coll_copy(s, sbuf, scount, sdt, mine, rcount, rdt);
        if (hier) {
            allgather_hier(s, rbuf, rcount, rdt, c, st);
        } else {
            /* My block is in rbuf already: send it from there. */
            coll_build_gather(s, c->rank == 0 ? LOCUS_COLL_IN_PLACE : mine, rcount, rdt, rbuf,
                              rcount, rdt, 0, c);
            coll_fence(s);
            coll_build_bcast(s, rbuf, (size_t)p * rcount, rdt, 0, c);
        }
    } else if (alg == ALG_RECURSIVE_DOUBLING) {
        allgather_recdbl(s, &own, rbuf, rcount, rdt, c);
    } else {
        ptrdiff_t *displs;
        size_t *cnts = uniform_new(p, rcount, &displs);
        if (!cnts) {
            s->oom = 1;
            return;
        }
        (alg == ALG_LINEAR ? allgather_linear : allgather_ring)(s, &own, rbuf, cnts, displs, rdt,
                                                                c);
        free(cnts);
    }
}
