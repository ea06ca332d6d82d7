/*
 * Graph topologies (MPI_Graph_create and its queries, MPI_Graph_map). The
 * whole graph is known to every member; reorder = true maps neighbouring
 * vertices onto the same node / NUMA node (topo_map.c).
 */
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "topo.h"

static void ints_copy(int *dst, const int *src, int n)
{
    if (n > 0)
        memcpy(dst, src, sizeof *dst * (size_t)n);
}

/* The checks of MPI_Graph_create and MPI_Graph_map: c an intracommunicator,
 * a graph of nnodes vertices that fits in it. */
static int graph_check(const locus_comm_t *c, int nnodes, const int *index, const int *edges)
{
    if (c->local)
        return MPI_ERR_COMM;
    if (nnodes < 0 || nnodes > c->coll.size)
        return MPI_ERR_ARG;
    if (nnodes > 0 && !index)
        return MPI_ERR_ARG;
    for (int v = 0; v < nnodes; v++)
        if (index[v] < (v ? index[v - 1] : 0))
            return MPI_ERR_ARG;
    int nedges = nnodes > 0 ? index[nnodes - 1] : 0;
    return locus_topo_ids_check(edges, nedges, nnodes, MPI_ERR_ARG);
}

/* The graph in CSR form (xadj from MPI's cumulative index). */
static int *graph_xadj(int nnodes, const int *index)
{
    int *xadj = malloc(sizeof *xadj * ((size_t)nnodes + 1));
    if (xadj) {
        xadj[0] = 0;
        for (int v = 0; v < nnodes; v++)
            xadj[v + 1] = index[v];
    }
    return xadj;
}

static int graph_place(locus_comm_t *c, int nnodes, const int *index, const int *edges,
                       int collective, int *proc_of)
{
    int *xadj = graph_xadj(nnodes, index);
    if (!xadj)
        return MPI_ERR_NO_MEM;
    locus_topo_graph_t g = { nnodes, xadj, edges, NULL };
    int err = locus_topo_place(c, &g, collective, proc_of);
    free(xadj);
    return err;
}

/* The entry points of MPI_Graph_create and MPI_Graph_map are generated
 * with their checks (MPI initialized, a live communicator, somewhere to
 * write); they raise what these return on it. */

int locus_graph_create_impl(locus_comm_t *old, int nnodes, const int indx[], const int edges[],
                            int reorder, MPI_Comm *comm_graph)
{
    int err = graph_check(old, nnodes, indx, edges);
    if (err)
        return err;
    int nedges = nnodes > 0 ? indx[nnodes - 1] : 0;
    locus_ptopo_t *t = locus_ptopo_new(MPI_GRAPH);
    int *proc_of = malloc(sizeof *proc_of * ((size_t)nnodes + 1));
    if (t) {
        t->nnodes = nnodes;
        t->index = malloc(sizeof *t->index * ((size_t)nnodes + 1));
        t->edges = malloc(sizeof *t->edges * ((size_t)nedges + 1));
    }
    err = t && t->index && t->edges && proc_of ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (!err) {
        ints_copy(t->index, indx, nnodes);
        ints_copy(t->edges, edges, nedges);
        if (reorder)
            err = graph_place(old, nnodes, indx, edges, 1, proc_of);
    }
    return locus_topo_create_end(old, err, t, nnodes, proc_of, reorder, comm_graph);
}

int locus_graph_map_impl(locus_comm_t *c, int nnodes, const int indx[], const int edges[],
                         int *newrank)
{
    int *proc_of = NULL;
    int err = graph_check(c, nnodes, indx, edges);
    if (!err)
        err = (proc_of = malloc(sizeof *proc_of * ((size_t)nnodes + 1))) != NULL
                  ? graph_place(c, nnodes, indx, edges, 0, proc_of) : MPI_ERR_NO_MEM;
    *newrank = err ? MPI_UNDEFINED : locus_topo_vertex_of(proc_of, nnodes, c->coll.rank);
    free(proc_of);
    return err;
}

/* ---- queries ---------------------------------------------------------------------- */

LOCUS_PMPI_WEAK(Graphdims_get)
int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Graphdims_get");
    locus_comm_t *c = locus_comm_of(comm);
    locus_ptopo_t *t = NULL;
    int err = locus_ptopo_get(c, MPI_GRAPH, &t);
    if (!err && (!nnodes || !nedges))
        err = MPI_ERR_ARG;
    if (err)
        return locus_mpi_err(c, err, "MPI_Graphdims_get");
    *nnodes = t->nnodes;
    *nedges = t->nnodes > 0 ? t->index[t->nnodes - 1] : 0;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Graph_get)
int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int indx[], int edges[])
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Graph_get");
    locus_comm_t *c = locus_comm_of(comm);
    locus_ptopo_t *t = NULL;
    int err = locus_ptopo_get(c, MPI_GRAPH, &t);
    if (!err && (maxindex < 0 || maxedges < 0 || (maxindex > 0 && !indx) ||
                 (maxedges > 0 && !edges)))
        err = MPI_ERR_ARG;
    if (err)
        return locus_mpi_err(c, err, "MPI_Graph_get");
    int nedges = t->nnodes > 0 ? t->index[t->nnodes - 1] : 0;
    int ni = maxindex < t->nnodes ? maxindex : t->nnodes;
    int ne = maxedges < nedges ? maxedges : nedges;
    ints_copy(indx, t->index, ni);
    ints_copy(edges, t->edges, ne);
    return MPI_SUCCESS;
}

/* Vertex rank's neighbours: edges[*lo .. *hi). */
static int graph_nbrs(locus_comm_t *c, int rank, locus_ptopo_t **t, int *lo, int *hi)
{
    int err = locus_ptopo_get(c, MPI_GRAPH, t);
    if (!err && (rank < 0 || rank >= (*t)->nnodes))
        err = MPI_ERR_RANK;
    if (!err) {
        *lo = rank > 0 ? (*t)->index[rank - 1] : 0;
        *hi = (*t)->index[rank];
    }
    return err;
}

LOCUS_PMPI_WEAK(Graph_neighbors_count)
int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Graph_neighbors_count");
    locus_comm_t *c = locus_comm_of(comm);
    locus_ptopo_t *t = NULL;
    int lo = 0, hi = 0, err = graph_nbrs(c, rank, &t, &lo, &hi);
    if (!err && !nneighbors)
        err = MPI_ERR_ARG;
    if (err)
        return locus_mpi_err(c, err, "MPI_Graph_neighbors_count");
    *nneighbors = hi - lo;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Graph_neighbors)
int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Graph_neighbors");
    locus_comm_t *c = locus_comm_of(comm);
    locus_ptopo_t *t = NULL;
    int lo = 0, hi = 0, err = graph_nbrs(c, rank, &t, &lo, &hi);
    if (!err && (maxneighbors < 0 || (maxneighbors > 0 && !neighbors)))
        err = MPI_ERR_ARG;
    if (err)
        return locus_mpi_err(c, err, "MPI_Graph_neighbors");
    int n = hi - lo < maxneighbors ? hi - lo : maxneighbors;
    ints_copy(neighbors, t->edges + lo, n);
    return MPI_SUCCESS;
}
