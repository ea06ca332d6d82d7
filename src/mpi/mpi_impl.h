/*
 * mpi_impl.h — inside the MPI API layer: its objects (communicators,
 * groups), its state, and the helpers its files share. Nothing here is
 * visible to applications; below this layer nothing sees MPI handles.
 *
 * ---- Conventions for an API file -------------------------------------
 *  - Define PMPI_X and make MPI_X its weak alias with LOCUS_PMPI_WEAK(X),
 *    written once at file scope (before or after the definition).
 *  - Inside the library call PMPI_X, never MPI_X (a profiling tool must
 *    see only the user's calls).
 *  - Start with LOCUS_CHECK_INIT(fn) and check arguments with the
 *    locus_check_* helpers below; report every failure through
 *    `return locus_mpi_err(comm, MPI_ERR_xxx, "MPI_Bcast");` which applies
 *    the communicator's error handler (fatal: message + abort; return:
 *    gives back the class).
 *  - Internal helpers return MPI_SUCCESS or an MPI_ERR_* class (the
 *    layers' LOCUS_ERR_* codes have the same values) and never call the
 *    error handler themselves.
 *
 * ---- Object lifetimes --------------------------------------------------
 * A communicator is reference counted: the user's handle is one reference,
 * every nonblocking request and schedule on it another, so MPI_Comm_free
 * invalidates the handle at once while pending operations finish on the
 * object. Context ids are never reused within a process: a message still
 * in flight on a freed communicator can never match a later one.
 * Datatypes and operations are reference counted by their layers; pending
 * operations hold references.
 */
#ifndef LOCUS_MPI_IMPL_H
#define LOCUS_MPI_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "mpi.h"
#include "locus_boot.h"
#include "locus_coll.h"
#include "locus_core.h"
#include "locus_dtype.h"
#include "locus_op.h"

#define LOCUS_PRAGMA_(x) _Pragma(#x)
/* Makes MPI_<name> a weak alias of PMPI_<name> (defined in this file). */
#define LOCUS_PMPI_WEAK(name) LOCUS_PRAGMA_(weak MPI_##name = PMPI_##name)

#define LOCUS_TAG_UB 0x7fffffff
#define LOCUS_COMM_MAGIC 0x4c434f4du

/* ---- communicators ---------------------------------------------------- */
typedef struct locus_comm locus_comm_t;
struct locus_comm {
    uint32_t magic;          /* LOCUS_COMM_MAGIC while the user's handle is valid */
    int refs;                /* the handle + pending requests and schedules */
    locus_coll_comm_t coll;  /* rank, size and node layout: what the
                                collectives see (coll.rank is my rank) */
    int *world_of;           /* [size]: comm rank -> MPI_COMM_WORLD rank */
    uint32_t ctx_p2p;        /* context id of user point-to-point traffic */
    uint32_t ctx_coll;       /* context id of collective traffic (ctx_p2p+1) */
    MPI_Errhandler errh;     /* MPI_ERRORS_ARE_FATAL or MPI_ERRORS_RETURN */
    int predefined;          /* WORLD/SELF: never freed by the user */
    char name[MPI_MAX_OBJECT_NAME];
    locus_comm_t *pool_next; /* in the pool of released structs */
};

struct locus_group {
    int refcount;            /* the predefined empty group ignores it */
    int size;
    int rank;                /* my rank in the group or MPI_UNDEFINED */
    int *world_of;           /* [size] group rank -> world rank */
};

/* 1 when comm is a valid communicator handle (not NULL, not freed). */
int locus_comm_valid(MPI_Comm comm);
/* Adds / drops a reference; the last one releases the communicator. */
void locus_comm_retain(locus_comm_t *c);
void locus_comm_release(locus_comm_t *c);
/* Sets up *c (zeroed here) for the members world_of[size], my rank among
 * them, context pair ctx/ctx+1. */
int locus_comm_init(locus_comm_t *c, int size, int rank, const int *world_of, uint32_t ctx);
/* Collective over parent: the communicator of the members with the same
 * color (MPI_UNDEFINED: none, *out MPI_COMM_NULL), ordered by key then
 * parent rank. Inherits the parent's error handler. */
int locus_comm_split(MPI_Comm parent, int color, int key, MPI_Comm *out);
/* MPI_IDENT / MPI_SIMILAR / MPI_UNEQUAL of two member lists. */
int locus_members_compare(int n1, const int *w1, int n2, const int *w2);

/* The point-to-point interface the collective layer runs on. */
extern const locus_coll_p2p_t locus_coll_p2p;

/* ---- state ---------------------------------------------------------------- */
typedef struct locus_bblk locus_bblk_t;

typedef struct {
    int state;                      /* 0 before Init, 1 running, 2 after Finalize */
    int thread_level;
    locus_core_t core;
    locus_boot_t boot;
    uint32_t next_ctx;              /* lowest context id this process may still use */
    char *bbuf;                     /* MPI_Buffer_attach */
    size_t bsize;
    locus_bblk_t *bblks;            /* blocks in use, by offset */
    char hostname[MPI_MAX_PROCESSOR_NAME];
    locus_comm_t *comm_pool;        /* released communicator structs */
    int attr_universe, attr_appnum; /* what MPI_Comm_get_attr points to */
    char detail[160];               /* why the last error happened, for the fatal message */
} locus_mpi_state_t;

extern locus_mpi_state_t locus_mpi;

static inline locus_core_t *locus_core(void)
{
    return &locus_mpi.core;
}

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
/* Checks of the point-to-point arguments, in MPI's usual order. */
int locus_check_p2p(const void *buf, int count, MPI_Datatype dt, int peer, int tag,
                    MPI_Comm comm, int is_recv);

/* ---- operations (op.c) ------------------------------------------------------ */
/* The object of an MPI_Op handle, or NULL when the handle is not valid. */
locus_op_t *locus_op_get(MPI_Op op);

/* ---- point-to-point and requests (p2p.c, req.c) ------------------------------ */

/* Fills status from a completed request (status may be NULL). */
void locus_status_set(MPI_Status *st, const locus_req_t *r);
/* An empty status (MPI_REQUEST_NULL / MPI_PROC_NULL); st may be NULL. */
void locus_status_empty(MPI_Status *st, int source);
/*
 * Starts a send of count x dt to comm rank dest on context ctx into r (a
 * zeroed request); flags: LOCUS_HDR_SYNC or 0. dest must be a real rank.
 * Returns MPI_SUCCESS or an error class (then r is untouched by the core).
 */
int locus_p2p_isend(const void *buf, size_t count, locus_dtype_t *dt, int dest, int tag,
                    locus_comm_t *comm, uint32_t ctx, uint32_t flags, locus_req_t *r);
/* Starts a receive (src may be MPI_ANY_SOURCE, tag MPI_ANY_TAG). */
void locus_p2p_irecv(void *buf, size_t count, locus_dtype_t *dt, int src, int tag,
                     locus_comm_t *comm, uint32_t ctx, locus_req_t *r);
/* Waits for r and releases it; fills status; returns its error class
 * (MPI_ERR_OTHER when the job can no longer communicate: r is then
 * abandoned, see locus_core_abandon). */
int locus_p2p_finish(locus_req_t *r, MPI_Status *status);

/*
 * A generalized request: the progress engine calls poll(state) on every
 * round until it returns non-zero (done: 1 = success, or a negative value
 * -MPI_ERR_xxx for a failure); then the request completes and
 * state_free(state) runs (may be NULL). The request holds a reference on
 * comm. NULL when out of memory.
 */
MPI_Request locus_req_gen_new(MPI_Comm comm, int (*poll)(void *state), void *state,
                              void (*state_free)(void *));
/* Hands a built nonblocking collective to the user as a request. */
int locus_req_of_sched(MPI_Comm comm, locus_coll_sched_t *s, MPI_Request *request);

/* Bsend (bsend.c): waits for buffered sends at finalize. */
void locus_bsend_drain(void);

#endif
