/*
 * topo/topo.h — the process topologies chapter: Cartesian (topo_cart.c),
 * graph (topo_graph.c) and distributed-graph (topo_dist.c) communicators,
 * the neighbourhood collectives on them (topo_neighbor.c), and the mapping
 * of topology vertices onto processes for reorder = true (topo_map.c). It
 * lies above comm/ and coll/. What such a communicator carries
 * (locus_ptopo_t, copied by MPI_Comm_dup) is the communicator's own: see
 * comm/comm.h.
 */
#ifndef LOCUS_MPI_TOPO_H
#define LOCUS_MPI_TOPO_H

#include "comm/comm.h"

/*
 * Makes the communicator of a topology: the first n members of old (or,
 * with proc_of, member proc_of[v] as rank v), carrying t (taken over, also
 * on failure). *out is NULL on the members left out. Collective over old.
 */
int locus_topo_comm(locus_comm_t *old, int n, const int *proc_of, locus_ptopo_t *t,
                    locus_comm_t **out);

/* n ids (ranks, vertices) each in [0, bound): MPI_ERR_ARG when ids is
 * NULL and n > 0, bad when one is out of range. */
int locus_topo_ids_check(const int *ids, int n, int bound, int bad);

/*
 * The end of MPI_Cart_create and MPI_Graph_create, err the outcome of the
 * steps before: the communicator of t over n members (reordered by
 * proc_of when reorder) into *newcomm, or the error. Takes over t and
 * proc_of.
 */
int locus_topo_create_end(locus_comm_t *old, int err, locus_ptopo_t *t, int n, int *proc_of,
                          int reorder, MPI_Comm *newcomm);

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

#endif
