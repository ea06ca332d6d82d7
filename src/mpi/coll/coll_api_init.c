/*
 * coll_api_init.c — persistent collectives (MPI-4 MPI_<Coll>_init): the
 * request behind them. The MPI_<Coll>_init forms share each collective's
 * implementation with its other forms; they build the nonblocking schedule
 * once and hand it here.
 *
 * Every MPI_Start runs the schedule again from its first step
 * (locus_coll_sched_restart) as a polled core request, so the progress
 * engine advances it while the program computes or waits on anything
 * else. The schedule's tags were drawn when it was built, in the same
 * order on every rank, so activations of several persistent collectives
 * on one communicator never take each other's messages.
 */
#include <stdlib.h>

#include "coll.h"
#include "pt2pt/pt2pt.h"

typedef struct {
    locus_xreq_t x;
    locus_comm_t *comm;       /* alive: the handle's core request holds it */
    locus_coll_sched_t *s;
    int runs;                 /* activations so far */
    locus_req_t *run;         /* the current activation's polled request */
} coll_persist_t;

static int cp_start(locus_xreq_t *x)
{
    coll_persist_t *p = (coll_persist_t *)x;
    if (p->run) {
        locus_core_req_put(locus_core(), p->run); /* reported complete before */
        p->run = NULL;
    }
    if (p->runs > 0)
        locus_coll_sched_restart(p->s);
    p->run = locus_req_sched_new(p->comm, p->s, 0);
    if (!p->run)
        return MPI_ERR_NO_MEM;
    p->runs++;
    return MPI_SUCCESS;
}

static int cp_test(locus_xreq_t *x)
{
    return ((coll_persist_t *)x)->run->done;
}

static int cp_status(locus_xreq_t *x, MPI_Status *st)
{
    (void)st; /* a collective's status is empty */
    return ((coll_persist_t *)x)->run->st_error;
}

/* Cancelling a collective is erroneous. */
static int cp_cancel(locus_xreq_t *x)
{
    (void)x;
    return MPI_ERR_REQUEST;
}

static int cp_release(locus_xreq_t *x)
{
    coll_persist_t *p = (coll_persist_t *)x;
    /* A running activation is owed to the other ranks: it finishes on its
     * own and takes the schedule with it. */
    if (p->run)
        locus_req_sched_adopt(p->run, p->s);
    else
        locus_coll_sched_free(p->s);
    return locus_xreq_free(x);
}

static const locus_xreq_ops_t cp_ops = {
    .persistent = 1, .start = cp_start, .test = cp_test, .status = cp_status,
    .cancel = cp_cancel, .release = cp_release,
};

int coll_persist_request(locus_comm_t *comm, locus_coll_sched_t *s, MPI_Request *req)
{
    coll_persist_t *p = calloc(1, sizeof *p);
    int err = p ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (p) {
        *p = (coll_persist_t){ .x = { .ops = &cp_ops }, .comm = comm, .s = s };
        err = locus_xreq_bind(&p->x, comm, req);
    }
    if (err != MPI_SUCCESS) {
        free(p);
        locus_coll_sched_free(s);
    }
    return err;
}
