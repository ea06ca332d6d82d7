/*
 * req_kind.h — requests the API layer implements itself on top of the
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
#ifndef LOCUS_REQ_KIND_H
#define LOCUS_REQ_KIND_H

#include "mpi_impl.h"

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
