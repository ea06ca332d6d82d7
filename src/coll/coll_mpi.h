/*
 * coll_mpi.h — internal contract between the MPI-facing datatype, op and
 * collective files (src/mpi/type.c, op.c, coll*.c). Built on mpi_impl.h;
 * nothing here is visible to applications.
 */
#ifndef LOCUS_COLL_MPI_H
#define LOCUS_COLL_MPI_H

#include <stddef.h>

#include "mpi_impl.h"
#include "locus_op.h"

/* ---- operations (src/mpi/op.c) ---- */

/* MPI_SUCCESS when op may reduce dt in a collective (a valid user op, or a
 * predefined op MPI allows on dt's element kind), else MPI_ERR_OP. */
int locus_op_check(MPI_Op op, MPI_Datatype dt);
/* 1 when op is commutative (predefined ops all are). */
int locus_op_commutes(MPI_Op op);
/*
 * inout = in op inout for count elements of dt, both buffers in dt's layout
 * (as a user passes them). Returns MPI_SUCCESS or MPI_ERR_NO_MEM/_OP.
 */
int locus_op_reduce(MPI_Op op, MPI_Datatype dt, int count, const void *in, void *inout);

/* ---- buffers (src/mpi/coll_util.c) ---- */

/* A scratch buffer for count elements of dt; *origin is where element 0
 * starts (the allocation shifted by -true_lb). Free with free(return).
 * NULL on failure (count 0 gives a valid 1-byte allocation). */
void *coll_tmp_alloc(MPI_Datatype dt, int count, char **origin);
/* Copies data between typed buffers through the packed stream (types may
 * differ if their signatures match); copies min(sizes). */
int coll_local_copy(const void *src, int scount, MPI_Datatype sdt, void *dst, int rcount,
                    MPI_Datatype rdt);
/* Bytes of one element's extent, as an offset multiplier. */
static inline MPI_Aint coll_extent(MPI_Datatype dt)
{
    ptrdiff_t lb, ext;
    locus_dtype_extent(dt, &lb, &ext);
    return ext;
}

/* ---- per-communicator collective state (src/mpi/coll_util.c) ---- */

/* Algorithm ids, shared by all collectives (each accepts a subset). */
enum {
    ALG_AUTO = 0, ALG_BINOMIAL, ALG_LINEAR, ALG_SCATTER_ALLGATHER, ALG_RECURSIVE_DOUBLING,
    ALG_RABENSEIFNER, ALG_RING, ALG_REDUCE_BCAST, ALG_GATHER_BCAST, ALG_PAIRWISE,
    ALG_REDUCE_SCATTERV, ALG_DISSEMINATION, ALG_SHM
};

/* Algorithm choices, read once per communicator from the LOCUS_COLL_*
 * variables, and the hierarchy made for it. */
typedef struct coll_shm coll_shm_t;
typedef struct {
    int barrier, bcast, reduce, allreduce, allgather, alltoall, gather, reduce_scatter, scan;
    long bcast_large, allreduce_large, allgather_large, alltoall_small, shm_max;
    long shm_bcast_max;    /* largest bcast streamed through shared memory */
    long shm_allreduce_max;   /* same for allreduce */
    int hier;              /* -1 auto, 0 off, 1 on */
    int shm;               /* shared-memory fast path allowed */
    long node_size;        /* LOCUS_COLL_NODE_SIZE (testing), 0 = real nodes */
    int node_cyclic;       /* LOCUS_COLL_NODE_LAYOUT=cyclic */
    int sub;               /* this comm is a node or leader comm made here */
    /* Hierarchy (made on first hierarchical call). */
    int hier_state;        /* 0 not made, 1 made, -1 failed */
    MPI_Comm node_comm, leader_comm;
    int my_node, nnodes;
    int *node_of;          /* [size] node of every rank */
    int *leader_of;        /* [nnodes] comm rank of each node's leader */
    int *node_rank_of;     /* [size] rank of each comm rank in its node comm */
    /* Shared-memory segment (node-local comms only), lazily made. */
    coll_shm_t *shm_seg;
    int shm_state;         /* 0 not tried, 1 ready, -1 unavailable */
} coll_state_t;

/* The state of comm, made on first use (local). NULL on out-of-memory. */
coll_state_t *coll_state(MPI_Comm comm);

/* 1 when comm spans several (real or LOCUS_COLL_NODE_SIZE) nodes and the
 * hierarchical path should be taken; builds the node and leader comms on
 * the first call (collective over comm, so every rank must reach it). */
int coll_use_hier(MPI_Comm comm, coll_state_t *st);
/* 1 when every member of comm is on this node (shared memory reaches all). */
int coll_is_node_local(MPI_Comm comm, coll_state_t *st);

/* Tags on ctx_coll, one per blocking collective; non-blocking collectives
 * draw theirs from COLL_TAG_NB upward with comm->coll_seq. */
enum {
    COLL_TAG_BARRIER = 1, COLL_TAG_BCAST, COLL_TAG_REDUCE, COLL_TAG_ALLREDUCE,
    COLL_TAG_GATHER, COLL_TAG_SCATTER, COLL_TAG_ALLGATHER, COLL_TAG_ALLTOALL,
    COLL_TAG_REDSCAT, COLL_TAG_SCAN, COLL_TAG_EXSCAN, COLL_TAG_SHM,
    COLL_TAG_NB = 1024, COLL_TAG_NB_SPAN = 1 << 20
};

/* ---- algorithms (internal entry points; arguments already checked) ---- */
/* Argument checks shared by the blocking and nonblocking forms: the MPI_ERR_*
 * class to report, or MPI_SUCCESS. root < 0 means an all-reduce (every rank
 * receives). */
int coll_check_bcast_args(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm);
int coll_check_reduce_args(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                           MPI_Op op, int root, MPI_Comm comm);
int coll_barrier(MPI_Comm comm);
int coll_bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm);
int coll_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                MPI_Comm comm);
int coll_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                   MPI_Comm comm);
int coll_allgather(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                   MPI_Datatype rdt, MPI_Comm comm);
int coll_gatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                 const int *rcounts, const int *displs, MPI_Datatype rdt, int root,
                 MPI_Comm comm);
int coll_scatterv(const void *sbuf, const int *scounts, const int *displs, MPI_Datatype sdt,
                  void *rbuf, int rcount, MPI_Datatype rdt, int root, MPI_Comm comm);

/* ---- folding and recursive halving (src/mpi/coll_halving.c) ---- */

/* A rank's place among the pof2 ranks that remain after folding. */
typedef struct {
    int pof2, rem, newrank;   /* newrank -1: folded away */
} coll_fold_t;

/* Comm rank of remaining rank nr. */
int coll_fold_real(const coll_fold_t *f, int nr);
/* Ranks 2i and 2i+1 (i < rem) combine into 2i+1 (acc = x_2i op x_2i+1, in
 * rank order); fills *f. tmp is scratch for count elements. */
int coll_fold_in(char *acc, char *tmp, int count, MPI_Datatype dt, MPI_Op op, int tag,
                 MPI_Comm comm, coll_fold_t *f);
/* Sends the result back to the folded-away ranks. */
int coll_fold_out(char *acc, int count, MPI_Datatype dt, int tag, MPI_Comm comm,
                  const coll_fold_t *f);
/* Counts and displacements of count elements split in pof2 blocks. */
void coll_blocks_split(int count, int pof2, int *cnts, int *disps);
/* Elements in blocks [lo, hi). */
int coll_blocks_sum(const int *cnts, int lo, int hi);
/* A malloc'd array of 2p ints: p counts all equal to `count`, then the p
 * displacements i*count, as the v-variants take them; NULL when out of
 * memory. The caller frees it. */
int *coll_uniform_counts(int p, int count);
/* Reduce-scatter by recursive halving among the remaining ranks (commutative
 * ops): afterwards this rank owns the fully reduced block range
 * [*idx, *last) of acc, block bitreverse(newrank). */
int coll_rs_halving(char *acc, char *tmp, MPI_Datatype dt, MPI_Op op, int tag, MPI_Comm comm,
                    const coll_fold_t *f, const int *cnts, const int *disps, int *idx,
                    int *last);
/* Allgather by recursive doubling that undoes coll_rs_halving's split. */
int coll_ag_doubling(char *acc, MPI_Datatype dt, int tag, MPI_Comm comm, const coll_fold_t *f,
                     const int *cnts, const int *disps, int idx, int last);

/* ---- shared-memory fast path (src/mpi/coll_shm.c) ---- */
/* Each returns MPI_SUCCESS, or -1 when the fast path does not apply (the
 * caller falls back to messages); only called on a node-local comm. */
int coll_shm_barrier(MPI_Comm comm, coll_state_t *st);
int coll_shm_bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                   coll_state_t *st);
int coll_shm_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                       MPI_Comm comm, coll_state_t *st);
void coll_shm_free(coll_shm_t *seg);

/* Element i of a typed buffer. */
static inline char *coll_at(const void *buf, MPI_Datatype dt, long i)
{
    return (char *)buf + (MPI_Aint)i * coll_extent(dt);
}

/* Jumps to `out` with err set when an internal call fails. */
#define COLL_TRY(x)                                                            \
    do {                                                                       \
        int rc_ = (x);                                                         \
        if (rc_ != MPI_SUCCESS) {                                              \
            err = rc_;                                                         \
            goto out;                                                          \
        }                                                                      \
    } while (0)

/* Largest power of two <= n (n >= 1). */
static inline int coll_pof2(int n)
{
    int p = 1;
    while (p * 2 <= n)
        p *= 2;
    return p;
}

/* Blocking sends/receives of bytes on the collective context. */
static inline int coll_send_bytes(const void *buf, size_t n, int peer, int tag, MPI_Comm comm)
{
    return locus_coll_send(buf, (int)n, MPI_BYTE, peer, tag, comm);
}
static inline int coll_recv_bytes(void *buf, size_t n, int peer, int tag, MPI_Comm comm)
{
    return locus_coll_recv(buf, (int)n, MPI_BYTE, peer, tag, comm, NULL);
}
#endif
