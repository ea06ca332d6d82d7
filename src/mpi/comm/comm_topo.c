/*
 * comm_topo.c — the process topology a communicator carries (comm.h): the
 * object (made by topo/, copied and freed with its communicator), each
 * rank's neighbourhood for the neighbourhood collectives, Cartesian
 * coordinates.
 */
#include <stdlib.h>
#include <string.h>

#include "comm.h"

locus_ptopo_t *locus_ptopo_new(int kind)
{
    locus_ptopo_t *t = calloc(1, sizeof *t);
    if (t)
        t->kind = kind;
    return t;
}

void locus_ptopo_free(locus_ptopo_t *t)
{
    if (!t)
        return;
    free(t->dims);
    free(t->periods);
    free(t->index);
    free(t->edges);
    free(t->sources);
    free(t->sweights);
    free(t->dests);
    free(t->dweights);
    free(t->nbr_mem);
    free(t);
}

/* A copy of n ints (NULL for none); 0, or -1 when out of memory. */
static int ints_dup(const int *src, int n, int **dst)
{
    *dst = NULL;
    if (!src || n <= 0)
        return 0;
    *dst = malloc(sizeof **dst * (size_t)n);
    if (!*dst)
        return -1;
    memcpy(*dst, src, sizeof **dst * (size_t)n);
    return 0;
}

/* Points nbrs at its storage: srcs, dsts, rtag, stag, each of n ints. */
static int nbrs_alloc(locus_ptopo_t *t, int nsrc, int ndst)
{
    free(t->nbr_mem);
    t->nbr_mem = malloc(sizeof *t->nbr_mem * 2 * ((size_t)nsrc + (size_t)ndst + 1));
    if (!t->nbr_mem)
        return -1;
    t->nbrs.nsrc = nsrc;
    t->nbrs.ndst = ndst;
    int *m = t->nbr_mem;
    t->nbrs.srcs = m;
    t->nbrs.rtag = m + nsrc;
    t->nbrs.dsts = m + 2 * nsrc;
    t->nbrs.stag = m + 2 * nsrc + ndst;
    return 0;
}

int locus_ptopo_dup(const locus_ptopo_t *t, locus_ptopo_t **out)
{
    locus_ptopo_t *n = locus_ptopo_new(t->kind);
    if (!n)
        return MPI_ERR_NO_MEM;
    int nedges = t->nnodes > 0 ? t->index[t->nnodes - 1] : 0;
    n->ndims = t->ndims;
    n->nnodes = t->nnodes;
    n->indegree = t->indegree;
    n->outdegree = t->outdegree;
    n->weighted = t->weighted;
    int bad = ints_dup(t->dims, t->ndims, &n->dims) | ints_dup(t->periods, t->ndims, &n->periods) |
              ints_dup(t->index, t->nnodes, &n->index) | ints_dup(t->edges, nedges, &n->edges) |
              ints_dup(t->sources, t->indegree, &n->sources) |
              ints_dup(t->sweights, t->indegree, &n->sweights) |
              ints_dup(t->dests, t->outdegree, &n->dests) |
              ints_dup(t->dweights, t->outdegree, &n->dweights);
    const locus_coll_nbrs_t *b = &t->nbrs;
    if (!bad && t->nbr_mem && (bad = nbrs_alloc(n, b->nsrc, b->ndst)) == 0) {
        int *m = n->nbr_mem;
        memcpy(m, b->srcs, sizeof *m * (size_t)b->nsrc);
        memcpy(m + b->nsrc, b->rtag, sizeof *m * (size_t)b->nsrc);
        memcpy(m + 2 * b->nsrc, b->dsts, sizeof *m * (size_t)b->ndst);
        memcpy(m + 2 * b->nsrc + b->ndst, b->stag, sizeof *m * (size_t)b->ndst);
        n->nbrs.ntags = b->ntags;
    }
    if (bad) {
        locus_ptopo_free(n);
        return MPI_ERR_NO_MEM;
    }
    *out = n;
    return MPI_SUCCESS;
}

locus_ptopo_t *locus_ptopo_of(const locus_comm_t *c, int kind)
{
    if (!c->topo || (kind && c->topo->kind != kind))
        return NULL;
    return c->topo;
}

int locus_ptopo_get(const locus_comm_t *c, int kind, locus_ptopo_t **t)
{
    if (!locus_comm_valid(c))
        return MPI_ERR_COMM;
    *t = locus_ptopo_of(c, kind);
    return *t ? MPI_SUCCESS : MPI_ERR_TOPOLOGY;
}

/* ---- Cartesian coordinates ---------------------------------------------------------- */

void locus_cart_coords(const locus_ptopo_t *t, int rank, int *coords)
{
    for (int d = t->ndims - 1; d >= 0; d--) {
        coords[d] = rank % t->dims[d];
        rank /= t->dims[d];
    }
}

int locus_cart_rank(const locus_ptopo_t *t, const int *coords)
{
    int rank = 0;
    for (int d = 0; d < t->ndims; d++) {
        int x = coords[d];
        if (x < 0 || x >= t->dims[d]) {
            if (!t->periods[d])
                return -1;
            x %= t->dims[d];
            if (x < 0)
                x += t->dims[d];
        }
        rank = rank * t->dims[d] + x;
    }
    return rank;
}

/* ---- neighbourhoods ---------------------------------------------------------------- */

/* Cartesian: for each dimension the neighbour at -1 then at +1, as both
 * sources and destinations. The message sent towards +1 arrives from -1
 * at its receiver, hence the crossed tag indices. */
static int nbrs_cart(locus_ptopo_t *t, int rank)
{
    int n = 2 * t->ndims;
    if (nbrs_alloc(t, n, n))
        return MPI_ERR_NO_MEM;
    int *c = malloc(sizeof *c * ((size_t)t->ndims + 1));
    if (!c)
        return MPI_ERR_NO_MEM;
    int *srcs = (int *)t->nbrs.srcs, *dsts = (int *)t->nbrs.dsts;
    int *rtag = (int *)t->nbrs.rtag, *stag = (int *)t->nbrs.stag;
    for (int d = 0; d < t->ndims; d++) {
        for (int side = 0; side < 2; side++) {
            locus_cart_coords(t, rank, c);
            c[d] += side ? 1 : -1;
            int j = 2 * d + side;
            srcs[j] = dsts[j] = locus_cart_rank(t, c);
            stag[j] = j;
            rtag[j] = j ^ 1;
        }
    }
    free(c);
    t->nbrs.ntags = n;
    return MPI_SUCCESS;
}

static int nbrs_list(locus_ptopo_t *t, const int *in, int nin, const int *out, int nout)
{
    if (nbrs_alloc(t, nin, nout))
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < nin; i++) {
        ((int *)t->nbrs.srcs)[i] = in[i] < 0 ? -1 : in[i];
        ((int *)t->nbrs.rtag)[i] = 0;
    }
    for (int j = 0; j < nout; j++) {
        ((int *)t->nbrs.dsts)[j] = out[j] < 0 ? -1 : out[j];
        ((int *)t->nbrs.stag)[j] = 0;
    }
    t->nbrs.ntags = 1;
    return MPI_SUCCESS;
}

int locus_ptopo_nbrs_build(locus_ptopo_t *t, int rank)
{
    if (t->kind == MPI_CART)
        return nbrs_cart(t, rank);
    if (t->kind == MPI_GRAPH) {
        int lo = rank > 0 ? t->index[rank - 1] : 0, hi = t->index[rank];
        return nbrs_list(t, t->edges + lo, hi - lo, t->edges + lo, hi - lo);
    }
    return nbrs_list(t, t->sources, t->indegree, t->dests, t->outdegree);
}
