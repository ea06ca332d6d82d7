/*
 * comm/comm.h — the communicators chapter: communicators and their life
 * (comm.c), their creation (comm_create.c, comm_dup.c, comm_split_type.c),
 * queries (comm_query.c), groups (group.c, group_ops.c),
 * intercommunicators (intercomm.c), the point-to-point interface the
 * collective layer runs on (coll_p2p.c), and what a communicator carries:
 * its process topology (comm_topo.c) and where its process sits in the
 * machine (comm_hw.c). It lies above pt2pt/ (communicators are made with
 * messages) and below the collective, topology, RMA and session chapters,
 * which make communicators through it: structs from the pool, context-id
 * agreement, the shape of an intercommunicator, and the tags the MPI layer
 * keeps for itself on a communicator's collective context.
 *
 * Context ids come in pairs (even: point-to-point, odd: collectives) and
 * are never reused within a process: each process keeps the lowest id it
 * may still use (locus_mpi.next_ctx), every id it ever used lies below it,
 * and a new communicator takes ids at or above that on all its members
 * (locus_ctx_rounds), which all then move past them. An intercommunicator takes
 * four ids: its own pair and, two above, the pair of its local group's
 * intracommunicator (the two groups' local communicators share that pair:
 * they are disjoint and never exchange messages on it).
 */
#ifndef LOCUS_MPI_COMM_H
#define LOCUS_MPI_COMM_H

#include "pt2pt/pt2pt.h"

/* Ids from here on are never handed out (the agreement fails instead). */
#define LOCUS_CTX_LIMIT 0xfffffff0u
/* Ids a new intracommunicator / intercommunicator takes. */
#define LOCUS_CTX_INTRA 2u
#define LOCUS_CTX_INTER 4u

/*
 * The collective layer draws its tags from 1..2^30 (locus_coll.h), so the
 * tags above are free on a collective context: the MPI layer's own
 * exchanges use them (leaders making an intercommunicator, the members of
 * MPI_Comm_create_group), keyed by the user's tag.
 */
#define LOCUS_TAG_RESERVED 0x40000001
static inline int locus_tag_reserved(int user_tag)
{
    return LOCUS_TAG_RESERVED + (int)((unsigned)user_tag % 0x3ffffffeu);
}

/* The size, my rank and the members (world ranks) of c's local group:
 * c itself for an intracommunicator. */
static inline locus_comm_t *locus_comm_local(locus_comm_t *c)
{
    return c->local ? c->local : c;
}

/* ---- life ------------------------------------------------------------------------ */

/* Sets up *c (zeroed here) for the members world_of[size], my rank among
 * them, context pair ctx/ctx+1. */
int locus_comm_init(locus_comm_t *c, int size, int rank, const int *world_of, uint32_t ctx);
/* Frees c at its last reference (locus_comm_release, mpi_impl.h): what it
 * carries, then the struct back to the pool (a predefined one stays). */
void locus_comm_free(locus_comm_t *c);
/* Collective over c: a duplicate with its own context and c's attributes
 * copied (MPI_Comm_dup without the handles). */
int locus_comm_dup(locus_comm_t *c, locus_comm_t **out);
/* Collective over parent: the communicator of the members with the same
 * color (MPI_UNDEFINED: none, *out NULL), ordered by key then parent rank.
 * Inherits the parent's error handler. */
int locus_comm_split(locus_comm_t *parent, int color, int key, locus_comm_t **out);
/* MPI_IDENT / MPI_SIMILAR / MPI_UNEQUAL of two member lists. */
int locus_members_compare(int n1, const int *w1, int n2, const int *w2);

/* The point-to-point interface the collective layer runs on (coll_p2p.c). */
extern const locus_coll_p2p_t locus_coll_p2p;

/* ---- structs ---------------------------------------------------------------- */

/* A communicator struct from the pool (or new), not set up: *out. */
int locus_comm_alloc(locus_comm_t **out);
/* Gives back a struct that was never set up (or whose setup failed). */
void locus_comm_unalloc(locus_comm_t *c);
/*
 * Sets up c (from locus_comm_alloc) as the intracommunicator of the
 * members world_of[size], my rank among them, context pair ctx/ctx+1, with
 * parent's error handler (parent may be NULL: errors are fatal). On
 * failure c goes back to the pool.
 */
int locus_comm_setup(locus_comm_t *c, int size, int rank, const int *world_of, uint32_t ctx,
                     const locus_comm_t *parent);
/* locus_comm_alloc + locus_comm_setup. */
int locus_comm_new(int size, int rank, const int *world_of, uint32_t ctx,
                   const locus_comm_t *parent, locus_comm_t **out);
/*
 * Sets up c (from locus_comm_alloc) as an intercommunicator: local group
 * lworld[lsize] with my rank lrank, remote group rworld[rsize], context
 * ids ctx..ctx+3 (see above). On failure c goes back to the pool.
 */
int locus_intercomm_setup(locus_comm_t *c, const int *lworld, int lsize, int lrank,
                          const int *rworld, int rsize, uint32_t ctx,
                          const locus_comm_t *parent);
/* The end of making an intercommunicator, once every member of local
 * knows the remote group (rworld[rsize]): the context ids agreed with the
 * remote group through the leaders (local's rank `leader`, whose messages
 * to the remote leader go over peer with the reserved tag) and the
 * communicator built in *out. Collective over local. MPI_Intercomm_create
 * and the dynamic processes' connect/accept. */
int locus_intercomm_finish(locus_comm_t *local, int leader, locus_comm_t *peer,
                           int remote_leader, int tag, const int *rworld, int rsize,
                           locus_comm_t **out);
/* Makes a struct that failed after setup invalid and releases it. */
void locus_comm_discard(locus_comm_t *c);
/* A communicator of c's groups on the context ids from ctx (nothing
 * inherited yet). */
int locus_comm_dup_on(locus_comm_t *c, uint32_t ctx, locus_comm_t **out);
/* Gives c (and an intercommunicator's local group) the context ids from
 * ctx: MPI_Comm_idup's communicator exists from the call on, under
 * LOCUS_CTX_LIMIT (matching nothing), and gets its ids when agreed. */
void locus_comm_set_ctx(locus_comm_t *c, uint32_t ctx);

/* The node of world rank w: the boot layer's, or the emulated layout of
 * LOCUS_MPI_NODES (block:N or cyclic:N: one machine standing in for
 * several nodes wherever the MPI layer reasons about locality). */
int locus_world_node(int w);
/* Whether peer id a comes before peer id b in an order every process
 * agrees on (job id, then rank in that job): peer ids of other jobs'
 * processes differ from process to process, so they cannot be compared. */
int locus_peer_before(int a, int b);

/* ---- context ids --------------------------------------------------------------- */

/*
 * Agreement on the first of n new context ids, in rounds: each round is
 * the maximum, over everyone concerned, of [refuses, next id]. The first
 * round proposes the highest next id; every member then checks the
 * candidate lies at or above every id it ever used (meanwhile, a nested or
 * nonblocking agreement may have taken ids) and if so reserves it; the
 * first round in which nobody refused settles it, else the next candidate
 * is tried. Usually two rounds.
 *
 * locus_ctx_rounds runs the rounds with round() doing the maximum (the
 * same calls, in the same order, on every member). locus_ctx_vote is one
 * member's step after a round proposed cand (MPI_Comm_idup runs the rounds
 * itself, without blocking).
 */
int locus_ctx_rounds(int (*round)(void *arg, const uint32_t in[2], uint32_t out[2]), void *arg,
                     uint32_t n, uint32_t *ctx);
int locus_ctx_vote(uint32_t cand, uint32_t n, uint32_t vote[2]);
/* The rounds over c (an intracommunicator, or both groups of an
 * intercommunicator); collective over c. */
int locus_ctx_agree(locus_comm_t *c, uint32_t n, uint32_t *ctx);
/* Moves this process past ids ctx..ctx+n-1. */
void locus_ctx_take(uint32_t ctx, uint32_t n);
/* MPI_SUCCESS, or MPI_ERR_INTERN (with the reason in locus_mpi.detail)
 * when ids from `first` on would pass the limit. */
int locus_ctx_check(uint32_t first, uint32_t n);

/* ---- what a duplicate inherits ---------------------------------------------------- */

/* Copies c's attributes (copy callbacks), topology and, with hints != NULL,
 * those hints (else c's) onto n (a new communicator of the same groups). */
int locus_comm_inherit(locus_comm_t *c, locus_comm_t *n, MPI_Info hints);
/* Replaces c's hints by a private copy of info (MPI_INFO_NULL: none). */
int locus_comm_hints_set(locus_comm_t *c, MPI_Info info);

/* ---- groups (group.c) ------------------------------------------------------------- */

/* A new group of the members world_of[size] (world ranks) as a handle:
 * MPI_GROUP_EMPTY when size is 0. */
int locus_group_make(int size, const int *world_of, MPI_Group *out);
/* The set operations of one implementation (MPI_Group_union & co). */
enum { LOCUS_GROUP_UNION, LOCUS_GROUP_INTERSECTION, LOCUS_GROUP_DIFFERENCE };

/* ---- intercommunicators (intercomm.c) ------------------------------------------------ */

/* MPI_Comm_split / MPI_Comm_create on an intercommunicator (collective over
 * both groups): the intercommunicator of the members with my color on
 * either side, ordered by key then rank; NULL when my color is
 * MPI_UNDEFINED or no remote member has it. */
int locus_intercomm_split(locus_comm_t *c, int color, int key, locus_comm_t **out);

/* ---- the process topology a communicator carries (comm_topo.c) -------------------- */
/* Made by the topologies chapter (topo/), copied by MPI_Comm_dup and freed
 * with the communicator. */
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

/* ---- its operations (comm_topo.c) ---------------------------------------------- */

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

/* ---- comm_hw.c: where this process sits ------------------------------------------- */

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
