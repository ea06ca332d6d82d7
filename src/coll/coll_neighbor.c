/*
 * coll_neighbor.c — neighbourhood collectives on process topologies
 * (locus_coll.h): one round in which every receive from a source and every
 * send to a destination is posted at once, then one fence. Every form
 * (allgather, alltoall, their v and w variants) arrives here as the w form
 * with byte displacements.
 *
 * Tags: the topology says how many a call draws (all members draw the
 * same number) and which one each edge uses, so that two messages between
 * the same pair of ranks on different edges (a periodic Cartesian
 * dimension of size 1 or 2) meet the receive the topology means; edges of
 * one tag between a pair pair up in the order they are listed.
 */
#include <stdint.h>
#include <stdlib.h>

#include "coll_priv.h"

static void build_neighbor(locus_coll_sched_t *s, const void *sbuf, const size_t *scounts,
                           const ptrdiff_t *sdispls, locus_dtype_t *const *sdts, void *rbuf,
                           const size_t *rcounts, const ptrdiff_t *rdispls,
                           locus_dtype_t *const *rdts, const locus_coll_nbrs_t *nb,
                           locus_coll_comm_t *c)
{
    int ntags = nb->ntags > 0 ? nb->ntags : 1;
    int *tags = malloc(sizeof *tags * (size_t)ntags);
    if (!tags) {
        s->oom = 1;
        return;
    }
    for (int k = 0; k < ntags; k++)
        tags[k] = coll_tag(c);
    /* Buffers may be MPI_BOTTOM (NULL) with absolute displacements. */
    for (int i = 0; i < nb->nsrc; i++)
        coll_recv(s, c, (void *)((uintptr_t)rbuf + (uintptr_t)rdispls[i]), rcounts[i], rdts[i],
                  nb->srcs[i], tags[nb->rtag ? nb->rtag[i] : 0]);
    for (int j = 0; j < nb->ndst; j++)
        coll_send(s, c, (const void *)((uintptr_t)sbuf + (uintptr_t)sdispls[j]), scounts[j],
                  sdts[j], nb->dsts[j], tags[nb->stag ? nb->stag[j] : 0]);
    coll_fence(s);
    free(tags);
}

static void hold_types(locus_coll_sched_t *s, locus_dtype_t *const *sdts,
                       locus_dtype_t *const *rdts, const locus_coll_nbrs_t *nb)
{
    for (int j = 0; j < nb->ndst; j++)
        coll_sched_hold(s, sdts[j], NULL);
    for (int i = 0; i < nb->nsrc; i++)
        coll_sched_hold(s, rdts[i], NULL);
}

int locus_coll_neighbor_alltoallw(const void *sbuf, const size_t *scounts,
                                  const ptrdiff_t *sdispls, locus_dtype_t *const *sdts,
                                  void *rbuf, const size_t *rcounts, const ptrdiff_t *rdispls,
                                  locus_dtype_t *const *rdts, const locus_coll_nbrs_t *nb,
                                  locus_coll_comm_t *c)
{
    locus_coll_sched_t *s = coll_sched_new(1);
    if (!s)
        return LOCUS_ERR_NO_MEM;
    build_neighbor(s, sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts, nb, c);
    int rc = s->oom ? LOCUS_ERR_NO_MEM : coll_sched_run(s);
    locus_coll_sched_free(s);
    return rc;
}

int locus_coll_ineighbor_alltoallw(const void *sbuf, const size_t *scounts,
                                   const ptrdiff_t *sdispls, locus_dtype_t *const *sdts,
                                   void *rbuf, const size_t *rcounts, const ptrdiff_t *rdispls,
                                   locus_dtype_t *const *rdts, const locus_coll_nbrs_t *nb,
                                   locus_coll_comm_t *c, locus_coll_sched_t **out)
{
    locus_coll_sched_t *s = coll_sched_new(0);
    if (!s)
        return LOCUS_ERR_NO_MEM;
    hold_types(s, sdts, rdts, nb);
    build_neighbor(s, sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts, nb, c);
    if (s->oom) {
        locus_coll_sched_free(s);
        return LOCUS_ERR_NO_MEM;
    }
    *out = s;
    return LOCUS_SUCCESS;
}
