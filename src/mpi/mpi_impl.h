/*
 * mpi_impl.h — the internal contract of the MPI API layer: what the
 * datatype/op/collective files (src/mpi/type.c, op.c, coll*.c) build on.
 * Nothing here is visible to applications.
 *
 * ---- Conventions for an API file -------------------------------------
 *  - Define PMPI_X and make MPI_X its weak alias with LOCUS_PMPI_WEAK(X),
 *    written once at file scope (before or after the definition):
 *        LOCUS_PMPI_WEAK(Bcast)
 *        int PMPI_Bcast(void *buf, ...) { ... }
 *  - Inside the library call PMPI_X, never MPI_X (a profiling tool must
 *    see only the user's calls).
 *  - Start with LOCUS_CHECK_INIT(fn) and check arguments with the
 *    locus_check_* helpers below; report every failure through
 *    `return locus_mpi_err(comm, MPI_ERR_xxx, "MPI_Bcast");` which applies
 *    the communicator's error handler (fatal: message + abort; return:
 *    gives back the class).
 *  - Internal helpers below return MPI_SUCCESS or an MPI_ERR_* class and
 *    never call the error handler themselves.
 *
 * ---- Collective traffic ----------------------------------------------
 * Every communicator has two context ids: ctx_p2p (user point-to-point)
 * and ctx_coll. locus_coll_* send and receive on ctx_coll, so collective
 * messages never match user receives, whatever the tag. Tags on ctx_coll
 * are the collective's own business; keep them below LOCUS_TAG_RESERVED
 * (tags from there up are used by communicator management). Messages
 * between one pair on one context are non-overtaking, and every member
 * calls collectives on a communicator in the same order, so a blocking
 * collective may reuse the same tag each time. Non-blocking collectives
 * that may be outstanding together should draw a tag from
 * comm->coll_seq (increment it on every rank in the same order).
 */
#ifndef LOCUS_MPI_IMPL_H
#define LOCUS_MPI_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "mpi.h"
#include "locus_dtype.h"

#define LOCUS_PRAGMA_(x) _Pragma(#x)
/* Makes MPI_<name> a weak alias of PMPI_<name> (defined in this file). */
#define LOCUS_PMPI_WEAK(name) LOCUS_PRAGMA_(weak MPI_##name = PMPI_##name)

#define LOCUS_TAG_RESERVED 0x7fff0000
#define LOCUS_COMM_MAGIC 0x4c434f4du

/* ---- communicators ---------------------------------------------------- */
struct locus_comm {
    uint32_t magic;          /* LOCUS_COMM_MAGIC while valid */
    int rank;                /* this process's rank in the communicator */
    int size;
    int *world_of;           /* [size]: comm rank -> MPI_COMM_WORLD rank */
    uint32_t ctx_p2p;        /* context id of user point-to-point traffic */
    uint32_t ctx_coll;       /* context id of collective traffic (ctx_p2p+1) */
    MPI_Errhandler errh;     /* MPI_ERRORS_ARE_FATAL or MPI_ERRORS_RETURN */
    int predefined;          /* WORLD/SELF: never freed */
    char name[MPI_MAX_OBJECT_NAME];

    /* Node locality, all in ranks of THIS communicator. A node's leader is
     * its lowest comm rank; nodes are numbered in the order of their
     * leaders' ranks. */
    int local_rank;          /* my index among local_ranks */
    int local_size;          /* members on my node (>= 1) */
    int *local_ranks;        /* [local_size] comm ranks on my node, ascending */
    int num_nodes;
    int node_index;          /* my node's number, 0..num_nodes-1 */
    int *node_of;            /* [size] node number of every comm rank */
    int *leaders;            /* [num_nodes] leader comm rank of every node */
    int is_leader;           /* rank == leaders[node_index] */

    /* Lazily made by locus_comm_hier(); freed with the communicator. */
    MPI_Comm node_comm;      /* the members on my node */
    MPI_Comm leader_comm;    /* the leaders (MPI_COMM_NULL on non-leaders) */

    unsigned coll_seq;       /* free for the collectives (see above) */
    void *coll_data;         /* collectives' per-comm cache; freed with
                                coll_data_free(coll_data) if set */
    void (*coll_data_free)(void *);
};

struct locus_group {
    int refcount;            /* the predefined empty group ignores it */
    int size;
    int rank;                /* my rank in the group or MPI_UNDEFINED */
    int *world_of;           /* [size] group rank -> world rank */
};

/* 1 when comm is a valid communicator handle (not NULL, not freed). */
int locus_comm_valid(MPI_Comm comm);

/*
 * The node-local communicator and the leaders' communicator of comm, made
 * on the first call (collective over comm then; later calls are local).
 * *leader_comm is MPI_COMM_NULL on non-leaders. Either pointer may be NULL.
 */
int locus_comm_hier(MPI_Comm comm, MPI_Comm *node_comm, MPI_Comm *leader_comm);

/* ---- errors ------------------------------------------------------------ */
/*
 * Applies comm's error handler to errclass raised in function fn (e.g.
 * "MPI_Bcast") and returns errclass (MPI_ERRORS_RETURN). With
 * MPI_ERRORS_ARE_FATAL it prints one line and aborts the job. An invalid
 * or null comm uses MPI_COMM_WORLD's handler.
 */
int locus_mpi_err(MPI_Comm comm, int errclass, const char *fn);

/* 1 between MPI_Init and MPI_Finalize. */
int locus_mpi_active(void);
/* Outside MPI_Init..MPI_Finalize there is no error handler to apply: the
 * call is reported in one line on stderr and the process exits with 2. */
#define LOCUS_CHECK_INIT(fn) \
    do { if (!locus_mpi_active()) locus_mpi_not_active(fn); } while (0)
void locus_mpi_not_active(const char *fn);

/* Argument checks: MPI_SUCCESS or the MPI_ERR_* class to report. */
int locus_check_comm(MPI_Comm comm);                  /* MPI_ERR_COMM */
int locus_check_dtype(MPI_Datatype dt);               /* NULL/uncommitted: MPI_ERR_TYPE */
int locus_check_count(int count);                     /* < 0: MPI_ERR_COUNT */
int locus_check_buf(const void *buf, int count, MPI_Datatype dt); /* NULL with data: MPI_ERR_BUFFER */
int locus_check_root(MPI_Comm comm, int root);        /* MPI_ERR_ROOT */

/* ---- collective point-to-point on comm->ctx_coll ---------------------- */
/*
 * Non-blocking send/receive of `count` elements of dt to/from comm rank
 * `peer` (MPI_PROC_NULL allowed: completes at once) with `tag`. Any
 * datatype works (non-contiguous data is packed). *req is an ordinary
 * MPI_Request: complete it with locus_req_wait/waitall (or PMPI_Wait*).
 * No argument checking beyond what cannot be avoided.
 */
int locus_coll_isend(const void *buf, int count, MPI_Datatype dt, int peer, int tag,
                     MPI_Comm comm, MPI_Request *req);
int locus_coll_irecv(void *buf, int count, MPI_Datatype dt, int peer, int tag,
                     MPI_Comm comm, MPI_Request *req);
/* Blocking forms; recv's status may be NULL. */
int locus_coll_send(const void *buf, int count, MPI_Datatype dt, int peer, int tag,
                    MPI_Comm comm);
int locus_coll_recv(void *buf, int count, MPI_Datatype dt, int peer, int tag,
                    MPI_Comm comm, MPI_Status *status);
int locus_coll_sendrecv(const void *sbuf, int scount, MPI_Datatype sdt, int dst,
                        void *rbuf, int rcount, MPI_Datatype rdt, int src, int tag,
                        MPI_Comm comm);

/* ---- requests and progress -------------------------------------------- */
/* Waits for *req (frees it, sets MPI_REQUEST_NULL); returns the request's
 * error class (e.g. MPI_ERR_TRUNCATE). status may be NULL. */
int locus_req_wait(MPI_Request *req, MPI_Status *status);
/* Waits for all n (MPI_REQUEST_NULL entries are skipped); first error. */
int locus_req_waitall(int n, MPI_Request *reqs);
/* 1 when req is complete (does not progress, does not free); 1 for NULL. */
int locus_req_is_done(MPI_Request req);
/* One round of progress over every transport and active generalized
 * request; returns the number of events (0: nothing happened). */
int locus_mpi_progress(void);

/*
 * A generalized request for non-blocking collectives. The progress engine
 * calls poll(state) on every round until it returns non-zero (done: 1 =
 * success, or a negative value -MPI_ERR_xxx for a failure); then the
 * request completes and state_free(state) runs (may be NULL). poll must
 * not block and must not call locus_mpi_progress/locus_req_wait; it may
 * post locus_coll_isend/irecv and check them with locus_req_is_done, and
 * must release them with locus_req_free. The returned request is what
 * MPI_Ibarrier & co hand to the user.
 */
MPI_Request locus_req_gen_new(MPI_Comm comm, int (*poll)(void *state), void *state,
                              void (*state_free)(void *));
/* Releases a completed internal request (from locus_coll_isend/irecv). */
void locus_req_free(MPI_Request req);

#endif
