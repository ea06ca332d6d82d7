/*
 * Persistent point-to-point requests: MPI_Send_init, MPI_Bsend_init,
 * MPI_Ssend_init, MPI_Rsend_init, MPI_Recv_init and their `_c` forms
 * (their entry points are generated and reach p2p_persist_init). The
 * arguments are bound once; every MPI_Start runs the operation as a fresh
 * core request (a send in its mode, a receive), which the next start or
 * the free gives back. A request of pt2pt.h's kinds.
 */
#include <stdlib.h>

#include "pt2pt.h"

typedef struct {
    locus_xreq_t x;
    int mode;                 /* P2P_* send mode or P2P_RECV */
    void *buf;
    size_t count;
    locus_dtype_t *dt;        /* a reference held */
    int peer, tag;
    locus_comm_t *comm;       /* alive: the handle's core request holds it */
    locus_req_t *op;          /* the last start's operation, NULL when none
                                 runs (MPI_PROC_NULL, buffered) */
} persist_t;

static int persist_start(locus_xreq_t *x)
{
    persist_t *p = (persist_t *)x;
    if (p->op) {
        locus_core_req_put(locus_core(), p->op); /* reported complete before */
        p->op = NULL;
    }
    if (p->mode == P2P_RECV)
        return p2p_recv_start(p->buf, p->count, p->dt, p->peer, p->tag, p->comm, &p->op);
    return p2p_send_start(p->buf, p->count, p->dt, p->peer, p->tag, p->comm, p->mode, &p->op);
}

static int persist_test(locus_xreq_t *x)
{
    const persist_t *p = (const persist_t *)x;
    return !p->op || p->op->done;
}

static int persist_status(locus_xreq_t *x, MPI_Status *st)
{
    const persist_t *p = (const persist_t *)x;
    if (p->op) {
        locus_status_set(st, p->op);
        return p->op->st_error;
    }
    if (p->mode == P2P_RECV)
        p2p_status_null(st);
    return MPI_SUCCESS;
}

static int persist_cancel(locus_xreq_t *x)
{
    persist_t *p = (persist_t *)x;
    if (p->op && !p->op->done)
        locus_core_cancel(locus_core(), p->op);
    return MPI_SUCCESS;
}

static int persist_release(locus_xreq_t *x)
{
    persist_t *p = (persist_t *)x;
    locus_req_drop(p->op); /* an active one finishes on its own */
    locus_dtype_release(p->dt);
    return locus_xreq_free(x);
}

static const locus_xreq_ops_t persist_ops = {
    .persistent = 1, .start = persist_start, .test = persist_test, .status = persist_status,
    .cancel = persist_cancel, .release = persist_release,
};

int p2p_persist_init(const void *buf, MPI_Count count, MPI_Datatype dt, int peer, int tag,
                     MPI_Comm comm_h, int mode, MPI_Request *request, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    int err = p2p_check(buf, count, dt, peer, tag, comm, mode == P2P_RECV);
    if (err == MPI_SUCCESS && !request)
        err = MPI_ERR_ARG;
    persist_t *p = err == MPI_SUCCESS ? calloc(1, sizeof *p) : NULL;
    if (err == MPI_SUCCESS && !p)
        err = MPI_ERR_NO_MEM;
    if (err == MPI_SUCCESS) {
        *p = (persist_t){ .x = { .ops = &persist_ops }, .mode = mode, .buf = (void *)buf,
                          .count = (size_t)count, .dt = locus_dt_of(dt), .peer = peer,
                          .tag = tag, .comm = comm };
        err = locus_xreq_bind(&p->x, comm, request);
    }
    if (err != MPI_SUCCESS) {
        free(p);
        return locus_mpi_err(comm, err, fn);
    }
    /* The user may free the datatype while the request lives. */
    locus_dtype_retain(p->dt);
    return MPI_SUCCESS;
}
