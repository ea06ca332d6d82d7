/*
 * mpi_priv.h — state and helpers private to the point-to-point, request,
 * environment and communicator files of the API layer (H6's files use
 * mpi_impl.h only).
 */
#ifndef LOCUS_MPI_PRIV_H
#define LOCUS_MPI_PRIV_H

#include "mpi_impl.h"
#include "locus_boot.h"
#include "locus_core.h"

#define LOCUS_TAG_UB 0x7fffffff
#define LOCUS_CTX_WORDS 64          /* 64*64 context-id pairs */

typedef struct locus_bblk locus_bblk_t;

typedef struct {
    int state;                      /* 0 before Init, 1 running, 2 after Finalize */
    int thread_level;
    locus_core_t core;
    locus_boot_t boot;
    uint64_t ctx_used[LOCUS_CTX_WORDS]; /* bit i: pair (2i, 2i+1) in use */
    char *bbuf;                     /* MPI_Buffer_attach */
    size_t bsize;
    locus_bblk_t *bblks;            /* blocks in use, by offset */
    char hostname[MPI_MAX_PROCESSOR_NAME];
    MPI_Comm comm_pool;             /* freed communicators, linked by coll_data */
    int attr_universe, attr_appnum; /* what MPI_Comm_get_attr points to */
    char detail[160];               /* why the last error happened, for the fatal message */
} locus_mpi_state_t;

extern locus_mpi_state_t locus_mpi;

static inline locus_core_t *locus_core(void)
{
    return &locus_mpi.core;
}

/* Fills status from a completed request (status may be NULL). */
void locus_status_set(MPI_Status *st, const locus_req_t *r);

/*
 * Starts a send of count×dt to comm rank dest on context ctx into r (a
 * zeroed request); flags: LOCUS_HDR_SYNC or 0. dest must be a real rank.
 * Returns MPI_SUCCESS or an error class.
 */
int locus_p2p_isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                    MPI_Comm comm, uint32_t ctx, uint32_t flags, locus_req_t *r);
/* Starts a receive (src may be MPI_ANY_SOURCE, tag MPI_ANY_TAG). */
int locus_p2p_irecv(void *buf, int count, MPI_Datatype dt, int src, int tag,
                    MPI_Comm comm, uint32_t ctx, locus_req_t *r);
/* Waits for r; returns its MPI error class (MPI_ERR_OTHER if a transport failed). */
int locus_p2p_wait(locus_req_t *r);

/* Checks of the point-to-point arguments, in MPI's usual order. */
int locus_check_p2p(const void *buf, int count, MPI_Datatype dt, int peer, int tag,
                    MPI_Comm comm, int is_recv);

/* Communicator set-up (comm.c): fills *c for the given members. */
int locus_comm_init(struct locus_comm *c, int size, int rank, const int *world_of,
                    uint32_t pair);
void locus_comm_release(struct locus_comm *c);
/* Bsend (bsend.c): waits for buffered sends at finalize. */
void locus_bsend_drain(void);

#endif
