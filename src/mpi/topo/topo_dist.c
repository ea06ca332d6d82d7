/*
 * Distributed graph topologies: MPI_Dist_graph_create_adjacent (each
 * process gives its own edges), MPI_Dist_graph_create (any process gives
 * any edges: every process learns the whole graph), and their queries.
 *
 * With reorder = true vertex v is a rank of the new communicator: the
 * process that gets new rank v takes the edges given for v (in
 * comm_old's numbering, which the vertices keep), so neighbours can be put
 * on the same node (topo_map.c). That needs the whole graph everywhere.
 */
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "topo.h"

/* The whole graph: for each vertex its sources then its destinations,
 * each with a weight. */
typedef struct {
    int n, weighted;
    int *in_at, *out_at;            /* [n + 1] offsets */
    int *ins, *inw, *outs, *outw;   /* edges and weights */
} dist_all_t;

static void dist_all_free(dist_all_t *a)
{
    free(a->in_at);
    free(a->out_at);
    free(a->ins);
    free(a->inw);
    free(a->outs);
    free(a->outw);
}

static int dist_all_alloc(dist_all_t *a, int n, int nin, int nout)
{
    memset(a, 0, sizeof *a);
    a->n = n;
    a->in_at = calloc((size_t)n + 1, sizeof *a->in_at);
    a->out_at = calloc((size_t)n + 1, sizeof *a->out_at);
    a->ins = malloc(sizeof *a->ins * ((size_t)nin + 1));
    a->inw = malloc(sizeof *a->inw * ((size_t)nin + 1));
    a->outs = malloc(sizeof *a->outs * ((size_t)nout + 1));
    a->outw = malloc(sizeof *a->outw * ((size_t)nout + 1));
    return a->in_at && a->out_at && a->ins && a->inw && a->outs && a->outw ? 0 : -1;
}

static void ints_copy(int *dst, const int *src, int n)
{
    if (n > 0)
        memcpy(dst, src, sizeof *dst * (size_t)n);
}

/* The distributed-graph topology of vertex v of a. */
static locus_ptopo_t *dist_topo(const dist_all_t *a, int v)
{
    locus_ptopo_t *t = locus_ptopo_new(MPI_DIST_GRAPH);
    if (!t)
        return NULL;
    int i0 = a->in_at[v], ni = a->in_at[v + 1] - i0;
    int o0 = a->out_at[v], no = a->out_at[v + 1] - o0;
    t->indegree = ni;
    t->outdegree = no;
    t->weighted = a->weighted;
    t->sources = malloc(sizeof *t->sources * ((size_t)ni + 1));
    t->sweights = malloc(sizeof *t->sweights * ((size_t)ni + 1));
    t->dests = malloc(sizeof *t->dests * ((size_t)no + 1));
    t->dweights = malloc(sizeof *t->dweights * ((size_t)no + 1));
    if (!t->sources || !t->sweights || !t->dests || !t->dweights) {
        locus_ptopo_free(t);
        return NULL;
    }
    ints_copy(t->sources, a->ins + i0, ni);
    ints_copy(t->sweights, a->inw + i0, ni);
    ints_copy(t->dests, a->outs + o0, no);
    ints_copy(t->dweights, a->outw + o0, no);
    return t;
}

/* Makes the communicator: the identity, or with reorder the placement of
 * the graph's vertices (its out-edges, weighted, as locality goals). */
static int dist_finish(locus_comm_t *old, dist_all_t *a, int mine, int reorder,
                       locus_comm_t **out)
{
    int n = old->coll.size, err = MPI_SUCCESS;
    int *proc_of = NULL;
    if (reorder) {
        proc_of = malloc(sizeof *proc_of * (size_t)n);
        if (!proc_of)
            return MPI_ERR_NO_MEM;
        locus_topo_graph_t g = { n, a->out_at, a->outs, a->weighted ? a->outw : NULL };
        err = locus_topo_reorder(old, &g, proc_of);
        if (!err)   /* proc_of is a permutation of old's members */
            mine = locus_topo_vertex_of(proc_of, n, old->coll.rank);
    }
    locus_ptopo_t *t = err ? NULL : dist_topo(a, mine);
    if (!err && !t)
        err = MPI_ERR_NO_MEM;
    if (!err)
        err = locus_topo_comm(old, n, proc_of, t, out);
    free(proc_of);
    return err;
}

/* Weights as given: MPI_UNWEIGHTED (none), MPI_WEIGHTS_EMPTY (weighted,
 * no edges) or an array of non-negative weights. */
static int weights_check(const int *w, int n)
{
    if (w == MPI_UNWEIGHTED || w == MPI_WEIGHTS_EMPTY)
        return n > 0 && w == MPI_WEIGHTS_EMPTY ? MPI_ERR_ARG : MPI_SUCCESS;
    if (n > 0 && !w)
        return MPI_ERR_ARG;
    for (int i = 0; i < n; i++)
        if (w[i] < 0)
            return MPI_ERR_ARG;
    return MPI_SUCCESS;
}

static int weight_at(const int *w, int i)
{
    return w == MPI_UNWEIGHTED || w == MPI_WEIGHTS_EMPTY ? 1 : w[i];
}

static int old_check(locus_comm_t *old, MPI_Comm *newcomm)
{
    if (!locus_comm_valid(old) || old->local)
        return MPI_ERR_COMM;
    return newcomm ? MPI_SUCCESS : MPI_ERR_ARG;
}

/* Every member's len ints at blk, one after the other in *all, member i's
 * at (*disp)[i]; *total ints in all (free *all and *disp). Collective. */
static int blocks_allgather(locus_comm_t *old, const int *blk, int len, int **all,
                            ptrdiff_t **disp, size_t *total)
{
    int p = old->coll.size;
    locus_dtype_t *ints = locus_dtype_basic(LOCUS_EL_INT);
    int *lens = malloc(sizeof *lens * (size_t)p);
    size_t *cnt = malloc(sizeof *cnt * (size_t)p);
    *all = NULL;
    *disp = malloc(sizeof **disp * (size_t)p);
    *total = 0;
    int err = lens && cnt && *disp ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (!err)
        err = locus_coll_allgather(&len, 1, ints, lens, 1, ints, &old->coll);
    for (int i = 0; !err && i < p; i++) {
        cnt[i] = (size_t)lens[i];
        (*disp)[i] = (ptrdiff_t)*total;
        *total += cnt[i];
    }
    if (!err && !(*all = malloc(sizeof **all * (*total + 1))))
        err = MPI_ERR_NO_MEM;
    if (!err)
        err = locus_coll_allgatherv(blk, (size_t)len, ints, *all, cnt, *disp, ints, &old->coll);
    free(lens);
    free(cnt);
    return err;
}

/* ---- MPI_Dist_graph_create_adjacent --------------------------------------------------- */

/* Every member's block: [indegree, outdegree, weighted, sources, source
 * weights, destinations, destination weights], gathered into a. */
static int adjacent_gather(locus_comm_t *old, const int *blk, int len, dist_all_t *a)
{
    int p = old->coll.size, *all;
    ptrdiff_t *disp;
    size_t total;
    int err = blocks_allgather(old, blk, len, &all, &disp, &total);
    int nin = 0, nout = 0;
    for (int i = 0; !err && i < p; i++) {
        nin += all[disp[i]];
        nout += all[disp[i] + 1];
    }
    if (!err && dist_all_alloc(a, p, nin, nout))
        err = MPI_ERR_NO_MEM;
    for (int i = 0; !err && i < p; i++) {
        const int *b = all + disp[i];
        int ni = b[0], no = b[1];
        a->weighted |= b[2];
        a->in_at[i + 1] = a->in_at[i] + ni;
        a->out_at[i + 1] = a->out_at[i] + no;
        ints_copy(a->ins + a->in_at[i], b + 3, ni);
        ints_copy(a->inw + a->in_at[i], b + 3 + ni, ni);
        ints_copy(a->outs + a->out_at[i], b + 3 + 2 * ni, no);
        ints_copy(a->outw + a->out_at[i], b + 3 + 2 * ni + no, no);
    }
    free(disp);
    free(all);
    return err;
}

LOCUS_PMPI_WEAK(Dist_graph_create_adjacent)
int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                    const int *sourceweights, int outdegree,
                                    const int destinations[], const int *destweights,
                                    MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    LOCUS_ENTRY_CS();
    const char *fn = "MPI_Dist_graph_create_adjacent";
    LOCUS_CHECK_INIT(fn);
    (void)info;
    locus_comm_t *old = locus_comm_of(comm_old), *n = NULL;
    int err = old_check(old, comm_dist_graph);
    if (!err && (indegree < 0 || outdegree < 0))
        err = MPI_ERR_ARG;
    if (!err)
        err = locus_topo_ids_check(sources, indegree, old->coll.size, MPI_ERR_RANK);
    if (!err)
        err = locus_topo_ids_check(destinations, outdegree, old->coll.size, MPI_ERR_RANK);
    if (!err)
        err = weights_check(sourceweights, indegree);
    if (!err)
        err = weights_check(destweights, outdegree);
    if (err)
        return locus_mpi_err(old, err, fn);
    int len = 3 + 2 * indegree + 2 * outdegree;
    int *blk = malloc(sizeof *blk * (size_t)len);
    if (!blk)
        return locus_mpi_err(old, MPI_ERR_NO_MEM, fn);
    blk[0] = indegree;
    blk[1] = outdegree;
    /* Weighted unless both sides say MPI_UNWEIGHTED: with no in-edges a
     * program may well pass MPI_UNWEIGHTED for the sources and still weigh
     * its out-edges (MPI_WEIGHTS_EMPTY or an array: weights given). */
    blk[2] = sourceweights != MPI_UNWEIGHTED || destweights != MPI_UNWEIGHTED;
    for (int i = 0; i < indegree; i++) {
        blk[3 + i] = sources[i];
        blk[3 + indegree + i] = weight_at(sourceweights, i);
    }
    for (int j = 0; j < outdegree; j++) {
        blk[3 + 2 * indegree + j] = destinations[j];
        blk[3 + 2 * indegree + outdegree + j] = weight_at(destweights, j);
    }
    dist_all_t a = { 0 };
    if (reorder) {
        err = adjacent_gather(old, blk, len, &a);
    } else {
        /* Only my own vertex: a one-vertex "whole graph" at index 0. */
        err = dist_all_alloc(&a, 1, indegree, outdegree) ? MPI_ERR_NO_MEM : MPI_SUCCESS;
        if (!err) {
            a.weighted = blk[2];
            a.in_at[1] = indegree;
            a.out_at[1] = outdegree;
            ints_copy(a.ins, blk + 3, indegree);
            ints_copy(a.inw, blk + 3 + indegree, indegree);
            ints_copy(a.outs, blk + 3 + 2 * indegree, outdegree);
            ints_copy(a.outw, blk + 3 + 2 * indegree + outdegree, outdegree);
        }
    }
    free(blk);
    if (!err)
        err = dist_finish(old, &a, reorder ? old->coll.rank : 0, reorder, &n);
    dist_all_free(&a);
    if (err)
        return locus_mpi_err(old, err, fn);
    *comm_dist_graph = locus_comm_handle(n);
    return MPI_SUCCESS;
}

/* ---- MPI_Dist_graph_create ------------------------------------------------------------- */

/* Every member's block -- whether it gave weights (MPI_WEIGHTS_EMPTY and
 * an array with no edges in it count: the graph is weighted even where no
 * process has an edge), then its edges as (source, destination, weight)
 * triples -- sorted into each vertex's sources and destinations in the
 * order of the members then of their lists (the neighbour order the
 * collectives use). */
static int edges_gather(locus_comm_t *old, const int *blk, int len, dist_all_t *a)
{
    int p = old->coll.size, *all;
    ptrdiff_t *disp;
    size_t total;
    int err = blocks_allgather(old, blk, len, &all, &disp, &total);
    int ne = err ? 0 : (int)((total - (size_t)p) / 3);
    int *edge = err ? NULL : malloc(sizeof *edge * (3 * (size_t)ne + 1));
    if (!err && (!edge || dist_all_alloc(a, p, ne, ne)))
        err = MPI_ERR_NO_MEM;
    /* The members' triples, one after the other, without their flags. */
    for (int i = 0, e = 0; !err && i < p; i++) {
        size_t end = i + 1 < p ? (size_t)disp[i + 1] : total;
        a->weighted |= all[disp[i]];
        for (size_t j = (size_t)disp[i] + 1; j < end; j++)
            edge[e++] = all[j];
    }
    for (int e = 0; !err && e < ne; e++) {
        a->out_at[edge[3 * e] + 1]++;
        a->in_at[edge[3 * e + 1] + 1]++;
    }
    for (int v = 0; !err && v < p; v++) {
        a->out_at[v + 1] += a->out_at[v];
        a->in_at[v + 1] += a->in_at[v];
    }
    int *ofill = err ? NULL : calloc((size_t)p, sizeof *ofill);
    int *ifill = err ? NULL : calloc((size_t)p, sizeof *ifill);
    if (!err && (!ofill || !ifill))
        err = MPI_ERR_NO_MEM;
    for (int e = 0; !err && e < ne; e++) {
        int s = edge[3 * e], d = edge[3 * e + 1], w = edge[3 * e + 2];
        int oi = a->out_at[s] + ofill[s]++, ii = a->in_at[d] + ifill[d]++;
        a->outs[oi] = d;
        a->outw[oi] = w;
        a->ins[ii] = s;
        a->inw[ii] = w;
    }
    free(ofill);
    free(ifill);
    free(edge);
    free(disp);
    free(all);
    return err;
}

LOCUS_PMPI_WEAK(Dist_graph_create)
int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                           const int destinations[], const int *weights, MPI_Info info,
                           int reorder, MPI_Comm *comm_dist_graph)
{
    LOCUS_ENTRY_CS();
    const char *fn = "MPI_Dist_graph_create";
    LOCUS_CHECK_INIT(fn);
    (void)info;
    locus_comm_t *old = locus_comm_of(comm_old), *nc = NULL;
    int err = old_check(old, comm_dist_graph);
    if (!err && (n < 0 || (n > 0 && (!sources || !degrees))))
        err = MPI_ERR_ARG;
    long ne = 0;
    for (int i = 0; !err && i < n; i++) {
        if (degrees[i] < 0)
            err = MPI_ERR_ARG;
        ne += degrees[i];
    }
    if (!err && ne > 0x1fffffff)
        err = MPI_ERR_ARG;
    if (!err)
        err = locus_topo_ids_check(sources, n, old->coll.size, MPI_ERR_RANK);
    if (!err)
        err = locus_topo_ids_check(destinations, (int)ne, old->coll.size, MPI_ERR_RANK);
    if (!err)
        err = weights_check(weights, (int)ne);
    int *blk = err ? NULL : malloc(sizeof *blk * (3 * (size_t)ne + 1));
    if (!err && !blk)
        err = MPI_ERR_NO_MEM;
    if (err)
        return locus_mpi_err(old, err, fn);
    blk[0] = weights != MPI_UNWEIGHTED;
    for (int i = 0, k = 0; i < n; i++) {
        for (int j = 0; j < degrees[i]; j++, k++) {
            blk[1 + 3 * k] = sources[i];
            blk[1 + 3 * k + 1] = destinations[k];
            blk[1 + 3 * k + 2] = weight_at(weights, k);
        }
    }
    dist_all_t a = { 0 };
    err = edges_gather(old, blk, 1 + 3 * (int)ne, &a);
    free(blk);
    if (!err)
        err = dist_finish(old, &a, old->coll.rank, reorder, &nc);
    dist_all_free(&a);
    if (err)
        return locus_mpi_err(old, err, fn);
    *comm_dist_graph = locus_comm_handle(nc);
    return MPI_SUCCESS;
}

/* ---- queries ------------------------------------------------------------------------- */

LOCUS_PMPI_WEAK(Dist_graph_neighbors_count)
int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Dist_graph_neighbors_count");
    locus_comm_t *c = locus_comm_of(comm);
    locus_ptopo_t *t = NULL;
    int err = locus_ptopo_get(c, MPI_DIST_GRAPH, &t);
    if (!err && (!indegree || !outdegree || !weighted))
        err = MPI_ERR_ARG;
    if (err)
        return locus_mpi_err(c, err, "MPI_Dist_graph_neighbors_count");
    *indegree = t->indegree;
    *outdegree = t->outdegree;
    *weighted = t->weighted;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Dist_graph_neighbors)
int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int *sourceweights,
                              int maxoutdegree, int destinations[], int *destweights)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Dist_graph_neighbors");
    locus_comm_t *c = locus_comm_of(comm);
    locus_ptopo_t *t = NULL;
    int err = locus_ptopo_get(c, MPI_DIST_GRAPH, &t);
    if (!err && (maxindegree < 0 || maxoutdegree < 0 ||
                 (maxindegree > 0 && !sources) || (maxoutdegree > 0 && !destinations)))
        err = MPI_ERR_ARG;
    if (err)
        return locus_mpi_err(c, err, "MPI_Dist_graph_neighbors");
    int ni = maxindegree < t->indegree ? maxindegree : t->indegree;
    int no = maxoutdegree < t->outdegree ? maxoutdegree : t->outdegree;
    ints_copy(sources, t->sources, ni);
    ints_copy(destinations, t->dests, no);
    if (t->weighted && sourceweights && sourceweights != MPI_UNWEIGHTED &&
        sourceweights != MPI_WEIGHTS_EMPTY)
        ints_copy(sourceweights, t->sweights, ni);
    if (t->weighted && destweights && destweights != MPI_UNWEIGHTED &&
        destweights != MPI_WEIGHTS_EMPTY)
        ints_copy(destweights, t->dweights, no);
    return MPI_SUCCESS;
}
