/*
 * Requests made by the API layer: the core's polled requests (the
 * layer's own nonblocking operations, e.g. a collective's schedule), the
 * handles of the kinds of pt2pt.h, and the user's generalized requests
 * (MPI_Grequest_start / MPI_Grequest_complete).
 */
#include <stdlib.h>

#include "pt2pt.h"


locus_req_t *locus_req_gen_new(locus_comm_t *comm, int (*poll)(void *state), void *state,
                               void (*state_free)(void *))
{
    locus_req_t *r = locus_core_req_get(locus_core());
    if (!r)
        return NULL;
    r->kind = LOCUS_REQ_GEN;
    r->comm = comm;
    locus_comm_retain(comm);
    r->poll = poll;
    r->state = state;
    r->state_free = state_free;
    locus_core_gen_add(locus_core(), r);
    return r;
}

void locus_req_drop(locus_req_t *r)
{
    if (!r)
        return;
    if (r->done)
        locus_core_req_put(locus_core(), r);
    else
        r->freed = 1; /* the core recycles it when it completes */
}

/* ---- collective schedules as requests ------------------------------------- */

static int sched_poll(void *state)
{
    int err;
    if (!locus_coll_sched_poll(state, &err))
        return 0;
    return err == MPI_SUCCESS ? 1 : -err;
}

static void sched_free(void *state)
{
    locus_coll_sched_free(state);
}

locus_req_t *locus_req_sched_new(locus_comm_t *comm, locus_coll_sched_t *s, int owns)
{
    return locus_req_gen_new(comm, sched_poll, s, owns ? sched_free : NULL);
}

void locus_req_sched_adopt(locus_req_t *r, locus_coll_sched_t *s)
{
    if (r->done) {
        locus_core_req_put(locus_core(), r);
        locus_coll_sched_free(s);
        return;
    }
    r->state_free = sched_free;
    r->freed = 1;
}

int locus_req_of_sched(locus_comm_t *comm, locus_coll_sched_t *s, MPI_Request *request)
{
    locus_req_t *r = locus_req_sched_new(comm, s, 1);
    *request = locus_req_handle(r);
    if (r)
        return MPI_SUCCESS;
    locus_coll_sched_free(s);
    return MPI_ERR_NO_MEM;
}

/* ---- handles of the API layer's kinds ------------------------------------------- */

int locus_xreq_bind(locus_xreq_t *x, locus_comm_t *comm, MPI_Request *handle)
{
    locus_req_t *r = locus_core_req_get(locus_core());
    if (!r)
        return MPI_ERR_NO_MEM;
    r->kind = LOCUS_REQ_GEN; /* poll stays NULL: the core never looks at it */
    r->state = x;
    r->comm = comm;
    locus_comm_retain(comm);
    x->req = r;
    *handle = locus_req_handle(r);
    return MPI_SUCCESS;
}

void locus_xreq_unbind(locus_xreq_t *x)
{
    locus_core_req_put(locus_core(), x->req);
    x->req = NULL;
}

int locus_xreq_free(locus_xreq_t *x)
{
    locus_xreq_unbind(x);
    free(x);
    return MPI_SUCCESS;
}

/* ---- generalized requests --------------------------------------------------------- */

typedef struct {
    locus_xreq_t x;
    MPI_Grequest_query_function *query;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel;
    void *extra;
    int complete;          /* MPI_Grequest_complete was called */
    int released;          /* the user freed it before it completed */
} greq_t;

static int greq_test(locus_xreq_t *x)
{
    return ((greq_t *)x)->complete;
}

static int greq_status(locus_xreq_t *x, MPI_Status *st)
{
    greq_t *g = (greq_t *)x;
    return g->query ? g->query(g->extra, st) : MPI_SUCCESS;
}

static int greq_cancel(locus_xreq_t *x)
{
    greq_t *g = (greq_t *)x;
    return g->cancel ? g->cancel(g->extra, g->complete) : MPI_SUCCESS;
}

/* The end of a generalized request: its free function, then the memory. */
static int greq_end(greq_t *g)
{
    int err = g->free_fn ? g->free_fn(g->extra) : MPI_SUCCESS;
    locus_xreq_unbind(&g->x);
    free(g);
    return err;
}

static int greq_release(locus_xreq_t *x)
{
    greq_t *g = (greq_t *)x;
    if (g->complete)
        return greq_end(g);
    /* The free function runs when the request completes; the handle is
     * already gone for everything but MPI_Grequest_complete. */
    g->released = 1;
    x->req->freed = 1;
    return MPI_SUCCESS;
}

static const locus_xreq_ops_t greq_ops = {
    .persistent = 0, .test = greq_test, .status = greq_status, .cancel = greq_cancel,
    .release = greq_release,
};

LOCUS_PMPI_WEAK(Grequest_start)
int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn,
                        MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                        MPI_Request *request)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Grequest_start");
    if (!request)
        return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_Grequest_start");
    greq_t *g = calloc(1, sizeof *g);
    if (!g)
        return locus_mpi_err(NULL, MPI_ERR_NO_MEM, "MPI_Grequest_start");
    *g = (greq_t){ .x = { .ops = &greq_ops, .active = 1 }, .query = query_fn,
                   .free_fn = free_fn, .cancel = cancel_fn, .extra = extra_state };
    /* Errors of a request that belongs to no communicator go to
     * MPI_COMM_SELF's handler (MPI-4). */
    int err = locus_xreq_bind(&g->x, &locus_comm_self, request);
    if (err != MPI_SUCCESS) {
        free(g);
        return locus_mpi_err(NULL, err, "MPI_Grequest_start");
    }
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Grequest_complete)
int PMPI_Grequest_complete(MPI_Request request)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Grequest_complete");
    locus_req_t *r = locus_req_of(request);
    /* A freed generalized request still takes its completion. */
    locus_xreq_t *x = r ? locus_xreq_of(r) : NULL;
    if (!x || x->ops != &greq_ops || ((greq_t *)x)->complete)
        return locus_mpi_err(NULL, MPI_ERR_REQUEST, "MPI_Grequest_complete");
    greq_t *g = (greq_t *)x;
    g->complete = 1;
    if (!g->released)
        return MPI_SUCCESS;
    int err = greq_end(g);
    return err ? locus_mpi_err(&locus_comm_self, err, "MPI_Grequest_complete") : MPI_SUCCESS;
}
