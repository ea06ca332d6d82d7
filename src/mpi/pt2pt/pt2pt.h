/*
 * pt2pt/pt2pt.h — the point-to-point chapter: sends and receives in every
 * mode (p2p.c, p2p_sendrecv.c, p2p_mprobe.c, p2p_persist.c), buffered
 * sends (bsend.c), and the requests every chapter hands its users: their
 * completion calls (req.c, req_status.c), generalized requests and the
 * request kinds built on core requests (req_gen.c). It lies above env/ and
 * datatype/ and below comm/: a request holds a reference on its
 * communicator and drops it through locus_comm_release (mpi_impl.h).
 *
 * What the other chapters use: the checks of a large count, starting one
 * send or receive as a core request, statuses, request kinds, buffered
 * sends.
 *
 * Every call exists with an int count and as its MPI-4 `_c` form with an
 * MPI_Count; both forms call one internal function that takes the
 * MPI_Count, so there is one implementation per behaviour.
 */
#ifndef LOCUS_MPI_PT2PT_H
#define LOCUS_MPI_PT2PT_H

#include <limits.h>

#include "env/env.h"


/* ---- statuses (p2p.c) ------------------------------------------------------------ */
/* Fills status from a completed request (status may be NULL), MPI_ERROR
 * left alone (see req_status_error). */
void locus_status_set(MPI_Status *st, const locus_req_t *r);
/* No message from source: MPI_ANY_TAG, count 0, not cancelled, MPI_ERROR
 * left alone (a receive or probe from MPI_PROC_NULL; MPICH's
 * test/mpi/pt2pt/mprobe.c checks the field stays); st may be NULL. */
void locus_status_clear(MPI_Status *st, int source);
/* The empty status of a null or inactive request: the same with
 * MPI_SUCCESS in MPI_ERROR, as MPI defines it; st may be NULL. */
void locus_status_empty(MPI_Status *st, int source);

/* ---- messages as core requests (p2p.c) ------------------------------------------ */
/*
 * Starts a send of count x dt to comm rank dest on context ctx into r (a
 * zeroed request); flags: LOCUS_HDR_SYNC or 0. dest must be a real rank.
 * Returns MPI_SUCCESS or an error class (then r is untouched by the core).
 */
int locus_p2p_isend(const void *buf, size_t count, locus_dtype_t *dt, int dest, int tag,
                    locus_comm_t *comm, uint32_t ctx, uint32_t flags, locus_req_t *r);
/* Fills r for a receive without starting it (locus_p2p_irecv does both). */
void locus_p2p_recv_prep(void *buf, size_t count, locus_dtype_t *dt, int src, int tag,
                         uint32_t ctx, locus_req_t *r);
/* Starts a receive (src may be MPI_ANY_SOURCE, tag MPI_ANY_TAG). */
void locus_p2p_irecv(void *buf, size_t count, locus_dtype_t *dt, int src, int tag,
                     locus_comm_t *comm, uint32_t ctx, locus_req_t *r);
/* Waits for r and releases it; fills status; returns its error class
 * (MPI_ERR_OTHER when the job can no longer communicate: r is then
 * abandoned, see locus_core_abandon). */
int locus_p2p_finish(locus_req_t *r, MPI_Status *status);

/* ---- requests the chapters build (req_gen.c) ------------------------------------ */
/*
 * A generalized request: the progress engine calls poll(state) on every
 * round until it returns non-zero (done: 1 = success, or a negative value
 * -MPI_ERR_xxx for a failure); then the request completes and
 * state_free(state) runs (may be NULL). The request holds a reference on
 * comm. NULL when out of memory.
 */
locus_req_t *locus_req_gen_new(locus_comm_t *comm, int (*poll)(void *state), void *state,
                               void (*state_free)(void *));
/* Hands a built nonblocking collective to the user as a request. */
int locus_req_of_sched(locus_comm_t *comm, locus_coll_sched_t *s, MPI_Request *request);

/* Send modes, and a receive where a mode may stand. */
enum { P2P_STANDARD, P2P_SYNC, P2P_READY, P2P_BUFFERED, P2P_RECV = -1 };

/* A count of the large-count interface as the int-count checks see it
 * (they only look at its sign and whether it is zero). */
static inline int p2p_count_arg(MPI_Count n)
{
    return n < 0 ? -1 : n > INT_MAX ? INT_MAX : (int)n;
}

/* MPI_ERR_COUNT when count elements of dt (a valid type) hold more bytes
 * than a buffer can (PTRDIFF_MAX); MPI_SUCCESS otherwise. */
int p2p_check_size(MPI_Count count, MPI_Datatype dt);

/* locus_check_p2p for a count of any size (then p2p_check_size). */
int p2p_check(const void *buf, MPI_Count count, MPI_Datatype dt, int peer, int tag,
              const locus_comm_t *c, int is_recv);

/*
 * Starts a send of count x dt to dest in mode (P2P_*) on comm's user
 * context: *out is the running core request, or NULL when nothing is left
 * to wait for (dest is MPI_PROC_NULL, or the message was buffered).
 * Arguments are checked. MPI error class.
 */
int p2p_send_start(const void *buf, size_t count, locus_dtype_t *dt, int dest, int tag,
                   locus_comm_t *comm, int mode, locus_req_t **out);
/* Starts a receive likewise (*out NULL for source MPI_PROC_NULL). */
int p2p_recv_start(void *buf, size_t count, locus_dtype_t *dt, int source, int tag,
                   locus_comm_t *comm, locus_req_t **out);

/* A persistent send in mode (P2P_*) or receive (P2P_RECV): the request of
 * MPI_Send_init & co (p2p_persist.c). */
int p2p_persist_init(const void *buf, MPI_Count count, MPI_Datatype dt, int peer, int tag,
                     MPI_Comm comm_h, int mode, MPI_Request *request, const char *fn);

/* The arguments of a probe: MPI_SUCCESS or MPI_ERR_COMM/TAG/RANK. */
int p2p_probe_check(int source, int tag, const locus_comm_t *comm);
/* The status of a probed message (st may be NULL). */
void p2p_status_probed(MPI_Status *st, int src, int tag, size_t bytes);

/* The status of a receive from MPI_PROC_NULL (st may be NULL). */
static inline void p2p_status_null(MPI_Status *st)
{
    locus_status_clear(st, MPI_PROC_NULL);
}

/*
 * Buffered send (bsend.c): packs the message into the buffer attached to
 * comm (MPI_Comm_attach_buffer) or else to the process
 * (MPI_Buffer_attach) and starts its send from there. MPI_ERR_BUFFER when
 * none is attached or it has no room. dest is a real rank.
 */
int locus_bsend_start(const void *buf, size_t count, locus_dtype_t *dt, int dest, int tag,
                      locus_comm_t *comm);

/* Waits for the buffered sends still in flight, at MPI_Finalize. */
void locus_bsend_drain(void);
/* A session's buffer, kept in *slot (NULL before the first attach): the
 * communicators made from the session use it after their own
 * (MPI_Session_attach_buffer and friends; the session chapter raises the
 * errors returned). release flushes and frees it (MPI_Session_finalize). */
int locus_bsend_session_attach(void **slot, void *buffer, MPI_Count size);
int locus_bsend_session_detach(void **slot, void *addr, MPI_Count *size);
int locus_bsend_session_flush(void **slot, MPI_Request *request);
void locus_bsend_session_release(void **slot);

/* ---- request kinds (req_gen.c) ----------------------------------------------------- */
/*
 * Requests the API layer implements itself on top of the
 * core's: persistent operations (point-to-point, collective, partitioned),
 * MPI_Isendrecv and generalized requests (MPI_Grequest_start).
 *
 * The user's handle always points at a core request (locus_req_t), so the
 * completion calls (req.c) take any mix of handles. For these kinds it is
 * a core request of kind LOCUS_REQ_GEN that the core never polls (poll is
 * NULL, it is never on the core's list) and whose state is the kind's
 * object, which begins with a locus_xreq_t. The object runs its operation
 * as ordinary core requests of its own (sends, receives, a collective
 * schedule's polled request) and answers req.c through its ops.
 *
 * A persistent request is inactive until MPI_Start, active until a
 * completion call reports it, then inactive again; it lives until
 * MPI_Request_free.
 */
typedef struct locus_xreq locus_xreq_t;

typedef struct {
    int persistent;             /* MPI_Start applies; inactive after completion */
    /* Starts an inactive persistent request. MPI error code. */
    int (*start)(locus_xreq_t *x);
    /* 1 when the active operation is complete. Never blocks; the caller
     * makes progress. */
    int (*test)(locus_xreq_t *x);
    /* The completed operation's status into st (never NULL, pre-set to an
     * empty status) and its error code; may be asked more than once
     * (MPI_Request_get_status). */
    int (*status)(locus_xreq_t *x, MPI_Status *st);
    /* MPI_Cancel of the active operation. MPI error code. */
    int (*cancel)(locus_xreq_t *x);
    /* MPI_Request_free, or a completed non-persistent request being
     * reported: frees the object and its handle's core request (an active
     * operation is left to finish on its own). Returns an error code and
     * frees nothing when the kind forbids freeing it now. */
    int (*release)(locus_xreq_t *x);
} locus_xreq_ops_t;

struct locus_xreq {
    const locus_xreq_ops_t *ops;
    locus_req_t *req;           /* the core request the user's handle names */
    int active;                 /* started and not yet reported complete */
};

/* The object of a handle's core request, NULL for a plain core request. */
static inline locus_xreq_t *locus_xreq_of(const locus_req_t *r)
{
    return r->kind == LOCUS_REQ_GEN && !r->poll ? (locus_xreq_t *)r->state : NULL;
}

/*
 * Gives x (ops set by the caller, active as the kind starts out) a handle:
 * a core request naming comm (its error handler; a reference is held
 * until the request is recycled). MPI_ERR_NO_MEM when out of memory.
 */
int locus_xreq_bind(locus_xreq_t *x, locus_comm_t *comm, MPI_Request *handle);
/* Recycles x's core request (the end of a release). */
void locus_xreq_unbind(locus_xreq_t *x);
/* The end of a release of an object that begins with its locus_xreq_t and
 * was malloc'ed whole: its core request recycled, the object freed.
 * MPI_SUCCESS. */
int locus_xreq_free(locus_xreq_t *x);

/* Recycles a core request of an operation: now when done, else when it
 * completes (NULL is ignored). */
void locus_req_drop(locus_req_t *r);

/*
 * A core request (kind LOCUS_REQ_GEN, polled by the progress engine) that
 * runs schedule s on comm; done when s completes, with its error in
 * st_error. With owns, s is freed with the request; without, the caller
 * keeps s (a persistent collective) and may hand it over later with
 * locus_req_sched_adopt. NULL when out of memory.
 */
locus_req_t *locus_req_sched_new(locus_comm_t *comm, locus_coll_sched_t *s, int owns);
/* Gives up r (from locus_req_sched_new without owns) and its schedule s:
 * both are freed once s completes (at once when it has). */
void locus_req_sched_adopt(locus_req_t *r, locus_coll_sched_t *s);

#endif
