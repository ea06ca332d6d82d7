/*
 * locus_coll.h — the collective layer: every collective algorithm of
 * Locus, over a narrow point-to-point interface that the layer above (the
 * MPI layer) provides, as MPICH's coll or Open MPI's coll framework sit on
 * their point-to-point layer.
 *
 * Every collective is a schedule: rounds of sends and receives, each round
 * ended by a fence, with local reductions and copies between them, built
 * once from the arguments and then run. A nonblocking collective returns
 * its schedule for the caller's progress engine to poll; a blocking one
 * runs it to completion (and may use steps that block, such as the
 * shared-memory fast path inside a node). So the blocking and nonblocking
 * forms of an algorithm are one piece of code, and a schedule can be run
 * again (persistent collectives).
 *
 * Arguments are checked by the caller. Counts are element counts of the
 * given datatype; vector counts and displacements (the v-variants) are in
 * elements too. LOCUS_COLL_IN_PLACE stands for MPI_IN_PLACE. Functions
 * return LOCUS_SUCCESS or a LOCUS_ERR_* code (locus_err.h); a collective
 * whose step failed on one rank still runs its remaining steps there, so
 * the other ranks are not left waiting, and reports the first error.
 */
#ifndef LOCUS_COLL_H
#define LOCUS_COLL_H

#include <stddef.h>
#include <stdint.h>

#include "locus_dtype.h"
#include "locus_err.h"
#include "locus_op.h"

#define LOCUS_COLL_IN_PLACE ((void *)1)

typedef struct locus_coll_comm locus_coll_comm_t;
typedef struct locus_coll_req locus_coll_req_t;     /* the p2p layer's request */
typedef struct locus_coll_sched locus_coll_sched_t; /* a built collective */
typedef struct coll_state coll_state_t;             /* private to the layer */

/* ---- what the layer above provides --------------------------------------- */

/* Hints of irecv. BULK: the receiver alone should copy the data, in one
 * piece, since the sender is busy meanwhile (a root with its own block to
 * copy) or the data is combined into the receiver's own as it arrives. */
enum { LOCUS_COLL_RECV_BULK = 1, LOCUS_COLL_RECV_FANIN = 2 };
/* FANIN: one of many receives converging on this rank at once (a gather's
 * root): better copied by each sender (LOCUS_TP_RECV_FANIN). */

typedef struct {
    /* Nonblocking send / receive of count elements of dt to / from comm rank
     * peer, on c's collective context (never matched by user messages),
     * with tag. Return a LOCUS_ERR_* code; *req is set on success. */
    int (*isend)(locus_coll_comm_t *c, const void *buf, size_t count, locus_dtype_t *dt,
                 int peer, int tag, locus_coll_req_t **req);
    int (*irecv)(locus_coll_comm_t *c, void *buf, size_t count, locus_dtype_t *dt, int peer,
                 int tag, int hints, locus_coll_req_t **req);
    /* 0 while req is pending; 1 when complete, with *err its code. Makes
     * no progress itself. */
    int (*test)(locus_coll_req_t *req, int *err);
    /* Releases a request, complete or not (an incomplete one is given up:
     * a posted receive is withdrawn). */
    void (*release)(locus_coll_req_t *req);
    /* One round of progress over every transport: the number of events, or
     * a negative value once communication failed (a peer died). */
    int (*progress)(void);
    /* Called after a round without events: spins or yields the CPU, as the
     * node-resource decision says. */
    void (*idle)(void);
    /* Collective over c: the communicator of the members that give the same
     * color >= 0, ordered by key then rank (*out NULL for color < 0). */
    int (*split)(locus_coll_comm_t *c, int color, int key, locus_coll_comm_t **out);
    /* Frees a communicator made by split. */
    void (*free)(locus_coll_comm_t *c);
} locus_coll_p2p_t;

/* Every collective of the layer, in one list: the kinds counted per
 * communicator (locus_coll_comm_t.started) and named in MPI_T. */
#define LOCUS_COLL_KINDS(X)                                                     \
    X(barrier) X(bcast) X(reduce) X(allreduce) X(gather) X(gatherv) X(scatter)  \
    X(scatterv) X(allgather) X(allgatherv) X(alltoall) X(alltoallv)             \
    X(alltoallw) X(reduce_scatter) X(reduce_scatter_block) X(scan) X(exscan)
#define LOCUS_COLL_KIND_ENUM_(name) LOCUS_COLL_KIND_##name,
enum { LOCUS_COLL_KINDS(LOCUS_COLL_KIND_ENUM_) LOCUS_COLL_NKINDS };

/*
 * What the layer knows of a communicator. The MPI layer embeds one in each
 * of its communicators and fills everything but `state`, `seq` and
 * `started` (zeroed).
 * Node locality is in ranks of this communicator: a node's leader is its
 * lowest rank, nodes are numbered in the order of their leaders.
 */
struct locus_coll_comm {
    const locus_coll_p2p_t *p2p;
    int rank, size;
    int num_nodes, node_index;
    int *node_of;             /* [size] node of every rank */
    int *leaders;             /* [num_nodes] leader of every node */
    int local_rank, local_size;
    int *local_ranks;         /* [local_size] ranks on my node, ascending */
    uint32_t id;              /* unique among the job's live communicators on
                                 this node (names its shared segment) */
    int yield;                /* the node is oversubscribed: waiters yield */
    int no_shm;               /* never a shared segment: the MPI layer's own
                                 communicators with a few small collectives
                                 (a file's), for which making one (two
                                 fallocated pages' worth per rank and more)
                                 costs more than it saves */
    unsigned seq;             /* collectives built on it so far (their tags) */
    uint64_t started[LOCUS_COLL_NKINDS]; /* collectives started on it per kind,
                                 blocking and nonblocking, the library's own
                                 included (MPI_T counters) */
    coll_state_t *state;      /* the layer's, made on first use */
};

/* Ranks of c that my waits on its shared segment poll for longer before
 * yielding: on an oversubscribed node, those bound to CPUs none of which
 * are mine. 0 before the segment is made or where there is none (MPI_T). */
int locus_coll_shm_ranks_apart(const locus_coll_comm_t *c);

/* Frees what the layer made for c (state, hierarchy, shared segment).
 * Call before c's own memory goes; c must have no collective in flight. */
void locus_coll_comm_release(locus_coll_comm_t *c);

/* ---- running schedules (nonblocking and persistent collectives) ---------- */

/* Advances s without blocking: 0 while it runs; 1 when complete, with *err
 * the first failure (LOCUS_SUCCESS if none). */
int locus_coll_sched_poll(locus_coll_sched_t *s, int *err);
/* Runs a completed schedule again from the start (persistent collectives). */
void locus_coll_sched_restart(locus_coll_sched_t *s);
/* Frees s (its buffers and references); an unfinished one's requests are
 * given up. */
void locus_coll_sched_free(locus_coll_sched_t *s);

/*
 * ---- the collectives -------------------------------------------------------
 * Each is declared through LOCUS_COLL(name, args): the blocking
 * `int locus_coll_<name>(args)` and the nonblocking
 * `int locus_coll_i<name>(args, locus_coll_sched_t **s)` that builds the
 * schedule (started: the first poll posts its first round). A nonblocking
 * schedule holds references on its datatypes and operation; the caller
 * keeps the communicator alive until it completes.
 */
#define LOCUS_COLL(name, ...)                                                   \
    int locus_coll_##name(__VA_ARGS__);                                         \
    int locus_coll_i##name(__VA_ARGS__, locus_coll_sched_t **s)

LOCUS_COLL(barrier, locus_coll_comm_t *c);
LOCUS_COLL(bcast, void *buf, size_t count, locus_dtype_t *dt, int root, locus_coll_comm_t *c);
LOCUS_COLL(reduce, const void *sbuf, void *rbuf, size_t count, locus_dtype_t *dt,
           locus_op_t *op, int root, locus_coll_comm_t *c);
LOCUS_COLL(allreduce, const void *sbuf, void *rbuf, size_t count, locus_dtype_t *dt,
           locus_op_t *op, locus_coll_comm_t *c);
LOCUS_COLL(gather, const void *sbuf, size_t scount, locus_dtype_t *sdt, void *rbuf,
           size_t rcount, locus_dtype_t *rdt, int root, locus_coll_comm_t *c);
LOCUS_COLL(gatherv, const void *sbuf, size_t scount, locus_dtype_t *sdt, void *rbuf,
           const size_t *rcounts, const ptrdiff_t *displs, locus_dtype_t *rdt, int root,
           locus_coll_comm_t *c);
LOCUS_COLL(scatter, const void *sbuf, size_t scount, locus_dtype_t *sdt, void *rbuf,
           size_t rcount, locus_dtype_t *rdt, int root, locus_coll_comm_t *c);
LOCUS_COLL(scatterv, const void *sbuf, const size_t *scounts, const ptrdiff_t *displs,
           locus_dtype_t *sdt, void *rbuf, size_t rcount, locus_dtype_t *rdt, int root,
           locus_coll_comm_t *c);
LOCUS_COLL(allgather, const void *sbuf, size_t scount, locus_dtype_t *sdt, void *rbuf,
           size_t rcount, locus_dtype_t *rdt, locus_coll_comm_t *c);
LOCUS_COLL(allgatherv, const void *sbuf, size_t scount, locus_dtype_t *sdt, void *rbuf,
           const size_t *rcounts, const ptrdiff_t *displs, locus_dtype_t *rdt,
           locus_coll_comm_t *c);
LOCUS_COLL(alltoall, const void *sbuf, size_t scount, locus_dtype_t *sdt, void *rbuf,
           size_t rcount, locus_dtype_t *rdt, locus_coll_comm_t *c);
LOCUS_COLL(alltoallv, const void *sbuf, const size_t *scounts, const ptrdiff_t *sdispls,
           locus_dtype_t *sdt, void *rbuf, const size_t *rcounts, const ptrdiff_t *rdispls,
           locus_dtype_t *rdt, locus_coll_comm_t *c);
/* Per-peer datatypes, displacements in bytes (MPI_Alltoallw). */
LOCUS_COLL(alltoallw, const void *sbuf, const size_t *scounts, const ptrdiff_t *sdispls,
           locus_dtype_t *const *sdts, void *rbuf, const size_t *rcounts,
           const ptrdiff_t *rdispls, locus_dtype_t *const *rdts, locus_coll_comm_t *c);
LOCUS_COLL(reduce_scatter, const void *sbuf, void *rbuf, const size_t *rcounts,
           locus_dtype_t *dt, locus_op_t *op, locus_coll_comm_t *c);
LOCUS_COLL(reduce_scatter_block, const void *sbuf, void *rbuf, size_t rcount,
           locus_dtype_t *dt, locus_op_t *op, locus_coll_comm_t *c);
LOCUS_COLL(scan, const void *sbuf, void *rbuf, size_t count, locus_dtype_t *dt, locus_op_t *op,
           locus_coll_comm_t *c);
LOCUS_COLL(exscan, const void *sbuf, void *rbuf, size_t count, locus_dtype_t *dt,
           locus_op_t *op, locus_coll_comm_t *c);

/*
 * ---- intercommunicators (coll_inter.c) ---------------------------------------
 * An intercommunicator comes as two views: `inter`, whose ranks are the
 * remote group's (size: the remote group's size; rank: my rank in the
 * local group; a message to rank r goes to remote rank r), and `local`,
 * the local group as an intracommunicator. Roots as in MPI: in the root's
 * group LOCUS_COLL_ROOT at the root and LOCUS_COLL_NO_ROOT elsewhere, in
 * the other group the root's rank there. A group receives the reduction
 * of the other group's data. Vector counts and displacements describe the
 * remote group's blocks, except reduce_scatter's rcounts (my group's; the
 * two groups' totals are equal). No MPI_IN_PLACE.
 */
#define LOCUS_COLL_ROOT (-4)
#define LOCUS_COLL_NO_ROOT (-3)
LOCUS_COLL(inter_barrier, locus_coll_comm_t *inter, locus_coll_comm_t *local);
LOCUS_COLL(inter_bcast, void *buf, size_t count, locus_dtype_t *dt, int root,
           locus_coll_comm_t *inter, locus_coll_comm_t *local);
LOCUS_COLL(inter_reduce, const void *sbuf, void *rbuf, size_t count, locus_dtype_t *dt,
           locus_op_t *op, int root, locus_coll_comm_t *inter, locus_coll_comm_t *local);
LOCUS_COLL(inter_allreduce, const void *sbuf, void *rbuf, size_t count, locus_dtype_t *dt,
           locus_op_t *op, locus_coll_comm_t *inter, locus_coll_comm_t *local);
LOCUS_COLL(inter_reduce_scatter, const void *sbuf, void *rbuf, const size_t *rcounts,
           locus_dtype_t *dt, locus_op_t *op, locus_coll_comm_t *inter,
           locus_coll_comm_t *local);
LOCUS_COLL(inter_gatherv, const void *sbuf, size_t scount, locus_dtype_t *sdt, void *rbuf,
           const size_t *rcounts, const ptrdiff_t *displs, locus_dtype_t *rdt, int root,
           locus_coll_comm_t *inter, locus_coll_comm_t *local);
LOCUS_COLL(inter_scatterv, const void *sbuf, const size_t *scounts, const ptrdiff_t *displs,
           locus_dtype_t *sdt, void *rbuf, size_t rcount, locus_dtype_t *rdt, int root,
           locus_coll_comm_t *inter, locus_coll_comm_t *local);
LOCUS_COLL(inter_allgatherv, const void *sbuf, size_t scount, locus_dtype_t *sdt, void *rbuf,
           const size_t *rcounts, const ptrdiff_t *displs, locus_dtype_t *rdt,
           locus_coll_comm_t *inter, locus_coll_comm_t *local);
/* Byte displacements and per-peer types, like alltoallw. */
LOCUS_COLL(inter_alltoallw, const void *sbuf, const size_t *scounts, const ptrdiff_t *sdispls,
           locus_dtype_t *const *sdts, void *rbuf, const size_t *rcounts,
           const ptrdiff_t *rdispls, locus_dtype_t *const *rdts, locus_coll_comm_t *inter,
           locus_coll_comm_t *local);

/*
 * ---- neighbourhood collectives (coll_neighbor.c) -------------------------------
 * On a process topology, this rank receives block i from srcs[i] and sends
 * block j to dsts[j] (ranks of c; negative: no neighbour, nothing moves).
 * A call draws ntags tags (the same number on every member); the message
 * on edge j carries tag index stag[j], the one expected from srcs[i]
 * rtag[i] (NULL: index 0 for all). So repeated neighbours pair up as the
 * topology means; edges with the same tag between two ranks pair up in
 * order. Every form is the w form: per-neighbour counts, byte
 * displacements and types. The arrays are read while building only.
 */
typedef struct {
    int nsrc, ndst, ntags;
    const int *srcs, *dsts;
    const int *rtag, *stag;
} locus_coll_nbrs_t;
LOCUS_COLL(neighbor_alltoallw, const void *sbuf, const size_t *scounts,
           const ptrdiff_t *sdispls, locus_dtype_t *const *sdts, void *rbuf,
           const size_t *rcounts, const ptrdiff_t *rdispls, locus_dtype_t *const *rdts,
           const locus_coll_nbrs_t *nb, locus_coll_comm_t *c);

/* Copies count elements between typed buffers through the packed stream
 * (types may differ if their signatures match; min of the two sizes is
 * copied; LOCUS_ERR_TRUNCATE when the source holds more). */
int locus_coll_local_copy(const void *src, size_t scount, locus_dtype_t *sdt, void *dst,
                          size_t rcount, locus_dtype_t *rdt);

#endif
