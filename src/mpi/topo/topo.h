/*
 * topo.h — process topologies inside the MPI layer: what a Cartesian,
 * graph or distributed-graph communicator carries (locus_ptopo_t, copied
 * by MPI_Comm_dup), the neighbourhood its neighbourhood collectives use,
 * where this process sits in the machine (topo_hw.c), and the mapping of
 * topology vertices onto processes for reorder = true (topo_map.c).
 */
#ifndef LOCUS_MPI_TOPO_H
#define LOCUS_MPI_TOPO_H

#include "mpi_impl.h"

struct locus_ptopo {
    int kind;                   /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    /* Cartesian: the grid (row-major: the last dimension varies fastest) */
    int ndims;
    int *dims, *periods;        /* [ndims] */
    /* graph: the whole graph as MPI_Graph_create took it */
    int nnodes;
    int *index, *edges;         /* [nnodes], [index[nnodes - 1]] */
    /* distributed graph: this rank's edges */
    int indegree, outdegree, weighted;
    int *sources, *sweights, *dests, *dweights;
    /* this rank's neighbourhood (all kinds), for the neighbourhood
     * collectives; its arrays live in nbr_mem */
    locus_coll_nbrs_t nbrs;
    int *nbr_mem;
};

/* ---- topo.c ------------------------------------------------------------------- */

/* A zeroed topology of `kind` (NULL when out of memory). */
locus_ptopo_t *locus_ptopo_new(int kind);
void locus_ptopo_free(locus_ptopo_t *t);
/* A deep copy (MPI_Comm_dup); MPI error class. */
int locus_ptopo_dup(const locus_ptopo_t *t, locus_ptopo_t **out);
/* Fills t->nbrs for rank `rank` of a communicator of `size` ranks. */
int locus_ptopo_nbrs_build(locus_ptopo_t *t, int rank);
/* c's topology if it has one of `kind` (0: any), else NULL. */
locus_ptopo_t *locus_ptopo_of(const locus_comm_t *c, int kind);
/* The same for a query call: *t, or the error class it reports
 * (MPI_ERR_COMM: c is no communicator; MPI_ERR_TOPOLOGY: none of kind). */
int locus_ptopo_get(const locus_comm_t *c, int kind, locus_ptopo_t **t);

/* Cartesian: coordinates of rank (coords[ndims]) and the rank at coords
 * (periodic dimensions wrap; -1 when off a non-periodic edge). */
void locus_cart_coords(const locus_ptopo_t *t, int rank, int *coords);
int locus_cart_rank(const locus_ptopo_t *t, const int *coords);

/*
 * Makes the communicator of a topology: the first n members of old (or,
 * with proc_of, member proc_of[v] as rank v), carrying t (taken over, also
 * on failure). *out is NULL on the members left out. Collective over old.
 */
int locus_topo_comm(locus_comm_t *old, int n, const int *proc_of, locus_ptopo_t *t,
                    locus_comm_t **out);

/*
 * The end of MPI_Cart_create and MPI_Graph_create, err the outcome of the
 * steps before: the communicator of t over n members (reordered by
 * proc_of when reorder) into *newcomm, or the error reported on old as fn.
 * Takes over t and proc_of.
 */
int locus_topo_create_end(locus_comm_t *old, int err, locus_ptopo_t *t, int n, int *proc_of,
                          int reorder, MPI_Comm *newcomm, const char *fn);

/* ---- topo_map.c: reorder = true ------------------------------------------------- */

/* A graph over n vertices in CSR form; w NULL: every edge weighs 1. */
typedef struct {
    int n;
    const int *xadj;            /* [n + 1] */
    const int *adj;             /* [xadj[n]] vertex ids */
    const int *w;               /* [xadj[n]] or NULL */
} locus_topo_graph_t;

/*
 * Chooses which of nprocs processes (0..nprocs-1, nprocs >= g->n) plays
 * each vertex of g: proc_of[v], distinct. Neighbouring vertices go to
 * processes on the same node (node_of[p]) first, then on the same NUMA
 * node (numa_of[p], may be NULL). Keeps the identity unless that puts
 * strictly more edge weight inside nodes (then inside NUMA nodes). A pure
 * function: the same on every process given the same input.
 */
int locus_topo_map(const locus_topo_graph_t *g, int nprocs, const int *node_of,
                   const int *numa_of, int *proc_of);

/* Collective over c: the NUMA node of every member (-1: unknown or several),
 * *numa_of[size] malloc'ed. */
int locus_topo_numa_gather(locus_comm_t *c, int **numa_of);

/* reorder: the vertex of g each member of old plays (locus_topo_map with
 * old's nodes and its members' NUMA nodes); collective over old. */
int locus_topo_reorder(locus_comm_t *old, const locus_topo_graph_t *g, int *proc_of);

/* Where g's vertices go among c's members: locus_topo_reorder when
 * collective (MPI_*_create), else, for MPI_Cart_map and MPI_Graph_map
 * (local), the node layout alone. */
int locus_topo_place(locus_comm_t *c, const locus_topo_graph_t *g, int collective, int *proc_of);

/* The vertex that process `proc` plays in proc_of[n], or MPI_UNDEFINED. */
int locus_topo_vertex_of(const int *proc_of, int n, int proc);

/* ---- topo_hw.c: where this process sits ------------------------------------------- */

/* Hardware levels, coarsest first. */
enum { LOCUS_HW_PACKAGE, LOCUS_HW_NUMA, LOCUS_HW_L3, LOCUS_HW_CORE, LOCUS_HW_PU,
       LOCUS_HW_NLEVELS };

/*
 * For every level, the logical index of the one object of that level that
 * holds this process's whole CPU binding (where[level]), or -1 when the
 * binding spans several, the machine has none, or hwloc cannot tell.
 * Returns 0, or -1 when hwloc could not load the machine (all -1).
 */
int locus_hw_where(int where[LOCUS_HW_NLEVELS]);

/* The level named by an mpi_hw_resource_type value ("numa", "NUMANode",
 * "hwloc://NUMANode", "package", "socket", "l3cache", "core", "hwthread",
 * ...), or -1. */
int locus_hw_level_of(const char *name);
/* The standard's URI for a level ("hwloc://NUMANode", ...). */
const char *locus_hw_level_uri(int level);

#endif
