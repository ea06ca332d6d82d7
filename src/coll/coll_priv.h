/*
 * coll_priv.h — inside the collective layer: schedules and how algorithms
 * build them, the per-communicator state, the shared-memory fast path.
 * Nothing outside src/coll includes this; the contract is locus_coll.h.
 */
#ifndef COLL_PRIV_H
#define COLL_PRIV_H

#include <stddef.h>

#include "locus_coll.h"

/* ---- schedules ----------------------------------------------------------- */

/* Scratch buffers a reused blocking schedule keeps between calls. */
#define COLL_SPARE_BUFS 4

/* A scratch buffer and its size. */
typedef struct {
    void *p;
    size_t len;
} coll_buf_t;

enum {
    STEP_SEND, STEP_RECV,   /* post; completed by the next fence */
    STEP_FENCE,             /* wait for every request posted since the last fence */
    STEP_REDUCE,            /* dst = src op dst */
    STEP_COPY,              /* typed copy src -> dst */
    STEP_CALL               /* a blocking call (shared-memory fast path) */
};

typedef struct coll_step coll_step_t;
typedef int (*coll_call_fn)(const coll_step_t *st);

struct coll_step {
    int kind;
    int peer, tag;
    locus_coll_comm_t *comm;      /* SEND/RECV/CALL: on which communicator */
    const void *src;              /* SEND, REDUCE, COPY */
    void *dst;                    /* RECV, REDUCE, COPY */
    size_t count, count2;         /* COPY: source count, destination count2 */
    locus_dtype_t *dt, *dt2;      /* COPY: source type dt, destination dt2 */
    locus_op_t *op;               /* REDUCE, CALL */
    coll_call_fn call;            /* CALL */
    int root;                     /* CALL */
    size_t at;                    /* CALL: an element offset */
    int hints;                    /* RECV: LOCUS_COLL_RECV_* */
};

struct locus_coll_sched {
    int blocking;                 /* built to be run to completion: may CALL */
    const locus_coll_p2p_t *p2p;  /* of its communicators (they share one) */
    coll_step_t *steps;
    int nsteps, cap, cur;
    locus_coll_req_t **reqs;      /* requests of the current round */
    int nreq, capreq;
    int err;                      /* first failure */
    int done;
    coll_buf_t *bufs;             /* scratch owned by the schedule */
    int nbufs, capbufs;
    /* A communicator's reused blocking schedule keeps its largest scratch
     * buffers for the next call: a fresh megabyte per call costs a page
     * fault per page (glibc hands it back to the kernel on free). */
    int keep_scratch;
    coll_buf_t spare[COLL_SPARE_BUFS];
    int nspare;
    locus_dtype_t **dts;          /* references held (nonblocking) */
    int ndts, capdts;
    locus_op_t *op;               /* reference held (nonblocking) */
    int oom;                      /* building ran out of memory */
};

/* A new empty schedule (NULL when out of memory). */
locus_coll_sched_t *coll_sched_new(int blocking);
/* Empties s for the next blocking call, freeing its scratch. */
void coll_sched_reset(locus_coll_sched_t *s);
/* Runs s to completion (blocking); returns its error. */
int coll_sched_run(locus_coll_sched_t *s);
/* Holds a reference on dt / op for the schedule's life (nonblocking). */
void coll_sched_hold(locus_coll_sched_t *s, locus_dtype_t *dt, locus_op_t *op);

/* Scratch for count elements of dt owned by s; returns where element 0
 * goes (the allocation shifted by -true_lb). NULL (and s->oom) on failure;
 * count 0 gives a valid address. */
char *coll_sched_tmp(locus_coll_sched_t *s, locus_dtype_t *dt, size_t count);
/* Scratch of n bytes owned by s. */
char *coll_sched_bytes(locus_coll_sched_t *s, size_t n);

/* Appending steps (out of memory: recorded in s->oom, reported by the
 * entry point). peer < 0 (no peer) makes SEND/RECV no-ops. */
void coll_send(locus_coll_sched_t *s, locus_coll_comm_t *c, const void *buf, size_t count,
               locus_dtype_t *dt, int peer, int tag);
void coll_recv(locus_coll_sched_t *s, locus_coll_comm_t *c, void *buf, size_t count,
               locus_dtype_t *dt, int peer, int tag);
/* A receive the receiver alone should copy (LOCUS_COLL_RECV_BULK). */
void coll_recv_bulk(locus_coll_sched_t *s, locus_coll_comm_t *c, void *buf, size_t count,
                    locus_dtype_t *dt, int peer, int tag);
/* One of many receives at once into this rank (LOCUS_COLL_RECV_FANIN). */
void coll_recv_fanin(locus_coll_sched_t *s, locus_coll_comm_t *c, void *buf, size_t count,
                     locus_dtype_t *dt, int peer, int tag);
void coll_fence(locus_coll_sched_t *s);
void coll_reduce_step(locus_coll_sched_t *s, locus_op_t *op, locus_dtype_t *dt, size_t count,
                      const void *in, void *inout);
void coll_copy(locus_coll_sched_t *s, const void *src, size_t scount, locus_dtype_t *sdt,
               void *dst, size_t rcount, locus_dtype_t *rdt);
void coll_call(locus_coll_sched_t *s, const coll_step_t *templ);
/* A send and a receive in one round (the fence follows). */
void coll_sendrecv(locus_coll_sched_t *s, locus_coll_comm_t *c, const void *sbuf,
                   size_t scount, locus_dtype_t *sdt, int dst, void *rbuf, size_t rcount,
                   locus_dtype_t *rdt, int src, int tag);

/* The tag of the next collective on c (every member draws in the same
 * order, so they agree). */
int coll_tag(locus_coll_comm_t *c);

/* ---- per-communicator state (coll_state.c) -------------------------------- */

enum {
    ALG_AUTO = 0, ALG_BINOMIAL, ALG_LINEAR, ALG_SCATTER_ALLGATHER, ALG_RECURSIVE_DOUBLING,
    ALG_RABENSEIFNER, ALG_RING, ALG_REDUCE_BCAST, ALG_GATHER_BCAST, ALG_PAIRWISE,
    ALG_REDUCE_SCATTERV, ALG_DISSEMINATION, ALG_SHM
};

typedef struct coll_shm coll_shm_t;

struct coll_state {
    /* Algorithm choices and thresholds, from the LOCUS_COLL_* variables. */
    int barrier, bcast, reduce, allreduce, allgather, alltoall, gather, reduce_scatter, scan;
    size_t bcast_large, allreduce_large, allgather_large, alltoall_small, reduce_segment;
    size_t shm_max, shm_bcast_max, shm_allreduce_max, shm_oversub_max;
    int shm_allreduce_set;        /* LOCUS_COLL_SHM_ALLREDUCE_MAX set, not the default */
    size_t alltoall_slot_max;     /* largest alltoall (bytes a rank) through grown slots */
    size_t pair_msg_min;          /* LOCUS_COLL_PAIR_MSG_MIN */
    int hier;                  /* -1 auto, 0 off, 1 on */
    int shm;                   /* shared-memory fast path allowed */
    long node_size;            /* LOCUS_COLL_NODE_SIZE (testing), 0: real nodes */
    int node_cyclic;           /* LOCUS_COLL_NODE_LAYOUT=cyclic */
    int sub;                   /* a node or leader comm made here: never hierarchical */
    /* Hierarchy, made on the first blocking hierarchical collective. */
    int hier_state;            /* 0 not decided, 1 made, -1 not used, 2 being made */
    locus_coll_comm_t *node_comm, *leader_comm;
    int my_node, nnodes;
    int *node_of;              /* [size] node of every rank */
    int *leader_of;            /* [nnodes] rank of each node's leader */
    int *node_rank_of;         /* [size] each rank's rank in its node comm */
    /* Shared-memory segment (node-local comms), made on first use. */
    coll_shm_t *shm_seg;
    int shm_state;             /* 0 not tried, 1 ready, -1 unavailable, 2 being made */
    /* The schedule blocking calls reuse (no allocation per call); busy
     * while one runs (a nested blocking call makes its own). */
    locus_coll_sched_t *blocking;
    int blocking_busy;
};

/* c's state, made on first use (local; NULL when out of memory). */
coll_state_t *coll_state(locus_coll_comm_t *c);
/* The same for a builder: out of memory is recorded in the schedule. */
coll_state_t *coll_state_for(locus_coll_sched_t *s, locus_coll_comm_t *c);

/* Whether the hierarchical (node, then leaders) path applies to c. A
 * blocking schedule may make the node and leader communicators (collective
 * over c); a nonblocking one uses them only if they exist already. */
int coll_use_hier(locus_coll_comm_t *c, coll_state_t *st, int blocking);
/* 1 when every member of c is on this node. */
int coll_is_node_local(const locus_coll_comm_t *c);
/* 1 when c is a pair of ranks with a core each whose automatic algorithm
 * (alg) moves `bytes` (an allreduce vector, a gather block) as messages
 * rather than through the shared segment (LOCUS_COLL_PAIR_MSG_MIN). */
int coll_pair_msgs(const locus_coll_comm_t *c, const coll_state_t *st, int alg, size_t bytes);

/* ---- the algorithms' builders (appending to s; arguments checked) ---------- */

void coll_build_barrier(locus_coll_sched_t *s, locus_coll_comm_t *c);
void coll_build_bcast(locus_coll_sched_t *s, void *buf, size_t count, locus_dtype_t *dt,
                      int root, locus_coll_comm_t *c);
void coll_build_reduce(locus_coll_sched_t *s, const void *sbuf, void *rbuf, size_t count,
                       locus_dtype_t *dt, locus_op_t *op, int root, locus_coll_comm_t *c);
void coll_build_allreduce(locus_coll_sched_t *s, const void *sbuf, void *rbuf, size_t count,
                          locus_dtype_t *dt, locus_op_t *op, locus_coll_comm_t *c);
void coll_build_gatherv(locus_coll_sched_t *s, const void *sbuf, size_t scount,
                        locus_dtype_t *sdt, void *rbuf, const size_t *rcounts,
                        const ptrdiff_t *displs, locus_dtype_t *rdt, int root,
                        locus_coll_comm_t *c);
void coll_build_gather(locus_coll_sched_t *s, const void *sbuf, size_t scount,
                       locus_dtype_t *sdt, void *rbuf, size_t rcount, locus_dtype_t *rdt,
                       int root, locus_coll_comm_t *c);
void coll_build_scatterv(locus_coll_sched_t *s, const void *sbuf, const size_t *scounts,
                         const ptrdiff_t *displs, locus_dtype_t *sdt, void *rbuf,
                         size_t rcount, locus_dtype_t *rdt, int root, locus_coll_comm_t *c);
void coll_build_scatter(locus_coll_sched_t *s, const void *sbuf, size_t scount,
                        locus_dtype_t *sdt, void *rbuf, size_t rcount, locus_dtype_t *rdt,
                        int root, locus_coll_comm_t *c);
void coll_build_allgatherv(locus_coll_sched_t *s, const void *sbuf, size_t scount,
                           locus_dtype_t *sdt, void *rbuf, const size_t *rcounts,
                           const ptrdiff_t *displs, locus_dtype_t *rdt, locus_coll_comm_t *c);
void coll_build_allgather(locus_coll_sched_t *s, const void *sbuf, size_t scount,
                          locus_dtype_t *sdt, void *rbuf, size_t rcount, locus_dtype_t *rdt,
                          locus_coll_comm_t *c);
void coll_build_alltoallw(locus_coll_sched_t *s, const void *sbuf, const size_t *scounts,
                          const ptrdiff_t *sdispls, locus_dtype_t *const *sdts, void *rbuf,
                          const size_t *rcounts, const ptrdiff_t *rdispls,
                          locus_dtype_t *const *rdts, size_t bytes_per_peer,
                          locus_coll_comm_t *c);
void coll_build_reduce_scatter(locus_coll_sched_t *s, const void *sbuf, void *rbuf,
                               const size_t *rcounts, locus_dtype_t *dt, locus_op_t *op,
                               locus_coll_comm_t *c);
void coll_build_scan(locus_coll_sched_t *s, const void *sbuf, void *rbuf, size_t count,
                     locus_dtype_t *dt, locus_op_t *op, int exclusive, locus_coll_comm_t *c);

/* ---- folding and recursive halving (coll_halving.c) ------------------------ */

/* A rank's place among the pof2 ranks that remain after folding. */
typedef struct {
    int pof2, rem, newrank;       /* newrank -1: folded away */
} coll_fold_t;

/* Comm rank of remaining rank nr. */
int coll_fold_real(const coll_fold_t *f, int nr);
/* Ranks 2i and 2i+1 (i < rem) combine into 2i+1 (acc = x_2i op x_2i+1, in
 * rank order); fills *f. tmp is scratch for count elements. */
void coll_fold_in(locus_coll_sched_t *s, char *acc, char *tmp, size_t count, locus_dtype_t *dt,
                  locus_op_t *op, int tag, locus_coll_comm_t *c, coll_fold_t *f);
/* Sends the result back to the folded-away ranks. */
void coll_fold_out(locus_coll_sched_t *s, char *acc, size_t count, locus_dtype_t *dt, int tag,
                   locus_coll_comm_t *c, const coll_fold_t *f);
/* Counts and displacements of count elements split in n blocks. */
void coll_blocks_split(size_t count, int n, size_t *cnts, ptrdiff_t *disps);
/* Elements in blocks [lo, hi). */
size_t coll_blocks_sum(const size_t *cnts, int lo, int hi);
/* Reduce-scatter by recursive halving among the remaining ranks
 * (commutative ops): afterwards this rank owns the fully reduced block
 * range [*idx, *last) of acc. */
void coll_rs_halving(locus_coll_sched_t *s, char *acc, char *tmp, locus_dtype_t *dt,
                     locus_op_t *op, int tag, locus_coll_comm_t *c, const coll_fold_t *f,
                     const size_t *cnts, const ptrdiff_t *disps, int *idx, int *last);
/* Allgather by recursive doubling that undoes coll_rs_halving's split. */
void coll_ag_doubling(locus_coll_sched_t *s, char *acc, locus_dtype_t *dt, int tag,
                      locus_coll_comm_t *c, const coll_fold_t *f, const size_t *cnts,
                      const ptrdiff_t *disps, int idx, int last);

/* ---- shared-memory fast path (coll_shm.c) ---------------------------------- */

/* Whether the fast path can take this operation on c: s blocking (the
 * path blocks), alg shm or auto with the path on, node-local, within its
 * size limits (bytes up to LOCUS_COLL_SHM_MAX or op_max), segment
 * available — made on first use, collectively. */
int coll_shm_usable(const locus_coll_sched_t *s, locus_coll_comm_t *c, coll_state_t *st, int alg,
                    size_t bytes, size_t op_max);
/* op_max of the operations held in the slots (allgather, alltoall): as
 * large as the slots, which grow to LOCUS_COLL_SHM_OVERSUB_MAX when every
 * member finds the node oversubscribed. */
#define COLL_SHM_SLOT ((size_t)-1)
/* op_max of reduce and allreduce beyond their own limits: any size where
 * the slots grew (an oversubscribed node: reduced a slot at a time), else
 * nothing. */
#define COLL_SHM_GROWN ((size_t)-2)
/* Slots never exceed this (a larger LOCUS_COLL_SHM_MAX must not ask tmpfs
 * for gigabytes): up to min(LOCUS_COLL_SHM_MAX, this) an operation fits. */
#define COLL_SHM_SLOT_CAP ((size_t)1 << 20)
/* Whether a reduction (reduce, allreduce, reduce_scatter) of `bytes` goes
 * through the shared segment: up to max, or at any size where the slots
 * grew (an oversubscribed node), unless LOCUS_COLL_SHM_ALLREDUCE_MAX=0
 * turned the path off. */
int coll_shm_reduce_usable(const locus_coll_sched_t *s, locus_coll_comm_t *c, coll_state_t *st,
                           int alg, size_t bytes, size_t max);
int coll_shm_barrier(locus_coll_comm_t *c);
int coll_shm_bcast(void *buf, size_t count, locus_dtype_t *dt, int root, locus_coll_comm_t *c);
/* 1 when coll_shm_reduce can reduce dt with op: a predefined op on
 * data that is a plain array of its element kind. */
int coll_shm_reduces(locus_dtype_t *dt, const locus_op_t *op);
/* Reduce to root, or to every rank with root < 0 (allreduce). */
int coll_shm_reduce(const void *sbuf, void *rbuf, size_t count, locus_dtype_t *dt,
                    locus_op_t *op, int root, locus_coll_comm_t *c);
/* Reduce_scatter of a vector of total elements, with an op
 * coll_shm_reduces takes: my block is count elements from at. Past a slot
 * only where the slots grew (COLL_SHM_GROWN). */
int coll_shm_reduce_scatter(const void *sbuf, void *rbuf, size_t total, size_t at, size_t count,
                            locus_dtype_t *dt, locus_op_t *op, locus_coll_comm_t *c);
/* Gather to root, or to every rank with root < 0 (allgather), and
 * scatter, of blocks that fit one slot (LOCUS_COLL_SHM_MAX bytes). */
int coll_shm_gather(const void *sbuf, size_t scount, locus_dtype_t *sdt, void *rbuf,
                    size_t rcount, locus_dtype_t *rdt, int root, locus_coll_comm_t *c);
int coll_shm_scatter(const void *sbuf, size_t scount, locus_dtype_t *sdt, void *rbuf,
                     size_t rcount, locus_dtype_t *rdt, int root, locus_coll_comm_t *c);
/* Alltoall whose p blocks of one rank fit a slot. */
int coll_shm_alltoall(const void *sbuf, size_t scount, locus_dtype_t *sdt, void *rbuf,
                      size_t rcount, locus_dtype_t *rdt, locus_coll_comm_t *c);
void coll_shm_free(coll_shm_t *seg);
int coll_shm_ranks_apart(const coll_shm_t *seg);

/* ---- small helpers ------------------------------------------------------------ */

static inline ptrdiff_t coll_extent(const locus_dtype_t *dt)
{
    ptrdiff_t lb, ext;
    locus_dtype_extent(dt, &lb, &ext);
    return ext;
}

/* Element i of a typed buffer. */
static inline char *coll_at(const void *buf, const locus_dtype_t *dt, ptrdiff_t i)
{
    return (char *)buf + i * coll_extent(dt);
}

/* Largest power of two <= n (n >= 1). */
static inline int coll_pof2(int n)
{
    int p = 1;
    while (p * 2 <= n)
        p *= 2;
    return p;
}

#endif
