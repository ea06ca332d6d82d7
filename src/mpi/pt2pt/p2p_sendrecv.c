/*
 * Send-receive: MPI_Sendrecv, MPI_Sendrecv_replace and their MPI-4
 * nonblocking forms MPI_Isendrecv, MPI_Isendrecv_replace, each with its
 * `_c` form. Blocking and nonblocking share one start (the receive is
 * posted first, then the send goes); the nonblocking request is a kind of
 * pt2pt.h's that completes when both halves have.
 */
#include <stdlib.h>

#include "pt2pt.h"

/* The two halves (NULL: MPI_PROC_NULL, nothing to wait for). */
typedef struct {
    locus_req_t *send, *recv;
} halves_t;

/* The arguments of one send-receive, checked, counts of any size. A
 * replace sends `copy` (count bytes, owned: freed with the send). */
typedef struct {
    const void *sbuf;
    size_t scount;
    locus_dtype_t *sdt;
    int dest, stag;
    void *rbuf;
    size_t rcount;
    locus_dtype_t *rdt;
    int source, rtag;
    void *copy;
} sendrecv_t;

static int halves_start(const sendrecv_t *a, locus_comm_t *comm, halves_t *h)
{
    int err = p2p_recv_start(a->rbuf, a->rcount, a->rdt, a->source, a->rtag, comm, &h->recv);
    if (err != MPI_SUCCESS) {
        free(a->copy);
        return err;
    }
    h->send = NULL;
    if (a->dest != MPI_PROC_NULL && !(h->send = locus_core_req_get(locus_core())))
        err = MPI_ERR_NO_MEM;
    if (h->send) {
        /* The core frees tmp when the send completes (or fails to start). */
        h->send->tmp = a->copy;
        err = locus_p2p_isend(a->sbuf, a->scount, a->sdt, a->dest, a->stag, comm,
                              comm->ctx_p2p, 0, h->send);
        if (err != MPI_SUCCESS) {
            locus_core_req_put(locus_core(), h->send);
            h->send = NULL;
        }
    } else {
        free(a->copy);
    }
    if (err != MPI_SUCCESS && h->recv) {
        locus_core_cancel(locus_core(), h->recv);
        locus_req_drop(h->recv);
        h->recv = NULL;
    }
    return err;
}

/* Checks both halves' arguments (the send's buffer for a replace is the
 * receive's) and packs a replace's outgoing data. */
static int sendrecv_prepare(const void *sbuf, MPI_Count scount, MPI_Datatype sdt, int dest,
                            int stag, void *rbuf, MPI_Count rcount, MPI_Datatype rdt, int source,
                            int rtag, locus_comm_t *comm, int replace, sendrecv_t *a)
{
    int err = p2p_check(sbuf, scount, sdt, dest, stag, comm, 0);
    if (err == MPI_SUCCESS)
        err = p2p_check(rbuf, rcount, rdt, source, rtag, comm, 1);
    if (err != MPI_SUCCESS)
        return err;
    *a = (sendrecv_t){ sbuf, (size_t)scount, locus_dt_of(sdt), dest, stag, rbuf,
                       (size_t)rcount, locus_dt_of(rdt), source, rtag, NULL };
    if (!replace || dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    /* The receive overwrites the buffer: the outgoing data goes first. */
    size_t len = a->scount * locus_dtype_size(a->sdt);
    if (len && !(a->copy = malloc(len)))
        return MPI_ERR_NO_MEM;
    if (len)
        locus_dtype_pack(sbuf, a->scount, a->sdt, 0, a->copy, len);
    a->sbuf = a->copy;
    a->scount = len;
    a->sdt = locus_dtype_basic(LOCUS_EL_BYTE);
    return MPI_SUCCESS;
}

static int sendrecv_blocking(const void *sbuf, MPI_Count scount, MPI_Datatype sdt, int dest,
                             int stag, void *rbuf, MPI_Count rcount, MPI_Datatype rdt,
                             int source, int rtag, MPI_Comm comm_h, MPI_Status *status,
                             int replace, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    sendrecv_t a;
    halves_t h;
    int err = sendrecv_prepare(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, source, rtag,
                               comm, replace, &a);
    if (err == MPI_SUCCESS)
        err = halves_start(&a, comm, &h);
    if (err != MPI_SUCCESS)
        return locus_mpi_err(comm, err, fn);
    int serr = h.send ? locus_p2p_finish(h.send, NULL) : MPI_SUCCESS;
    if (h.recv && serr != MPI_SUCCESS && !h.recv->done)
        locus_core_cancel(locus_core(), h.recv);
    if (h.recv)
        err = locus_p2p_finish(h.recv, status);
    else
        p2p_status_null(status);
    err = serr != MPI_SUCCESS ? serr : err;
    return err ? locus_mpi_err(comm, err, fn) : MPI_SUCCESS;
}

/* ---- the nonblocking forms' request ----------------------------------------- */

typedef struct {
    locus_xreq_t x;
    halves_t h;
} isendrecv_t;

static int isr_test(locus_xreq_t *x)
{
    const halves_t *h = &((isendrecv_t *)x)->h;
    return (!h->send || h->send->done) && (!h->recv || h->recv->done);
}

static int isr_status(locus_xreq_t *x, MPI_Status *st)
{
    const halves_t *h = &((isendrecv_t *)x)->h;
    if (h->recv)
        locus_status_set(st, h->recv);
    else
        p2p_status_null(st);
    if (h->send && h->send->st_error)
        return h->send->st_error;
    return h->recv ? h->recv->st_error : MPI_SUCCESS;
}

/* Cancelling is allowed for the receive half only while nothing matched;
 * the request then completes with the receive cancelled. */
static int isr_cancel(locus_xreq_t *x)
{
    halves_t *h = &((isendrecv_t *)x)->h;
    if (h->recv && !h->recv->done)
        locus_core_cancel(locus_core(), h->recv);
    return MPI_SUCCESS;
}

static int isr_release(locus_xreq_t *x)
{
    isendrecv_t *s = (isendrecv_t *)x;
    locus_req_drop(s->h.send);
    locus_req_drop(s->h.recv);
    return locus_xreq_free(x);
}

static const locus_xreq_ops_t isr_ops = {
    .persistent = 0, .test = isr_test, .status = isr_status, .cancel = isr_cancel,
    .release = isr_release,
};

static int sendrecv_nb(const void *sbuf, MPI_Count scount, MPI_Datatype sdt, int dest,
                       int stag, void *rbuf, MPI_Count rcount, MPI_Datatype rdt, int source,
                       int rtag, MPI_Comm comm_h, MPI_Request *request, int replace,
                       const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    sendrecv_t a;
    int err = request ? MPI_SUCCESS : MPI_ERR_ARG;
    if (err == MPI_SUCCESS)
        err = sendrecv_prepare(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, source, rtag,
                               comm, replace, &a);
    isendrecv_t *s = err == MPI_SUCCESS ? calloc(1, sizeof *s) : NULL;
    if (err == MPI_SUCCESS && !s) {
        free(a.copy);
        err = MPI_ERR_NO_MEM;
    }
    if (err == MPI_SUCCESS) {
        s->x = (locus_xreq_t){ .ops = &isr_ops, .active = 1 };
        err = locus_xreq_bind(&s->x, comm, request);
        if (err != MPI_SUCCESS)
            free(a.copy);
    }
    if (err == MPI_SUCCESS && (err = halves_start(&a, comm, &s->h)) != MPI_SUCCESS) {
        locus_xreq_unbind(&s->x);
        *request = MPI_REQUEST_NULL;
    }
    if (err != MPI_SUCCESS) {
        free(s);
        return locus_mpi_err(comm, err, fn);
    }
    return MPI_SUCCESS;
}

/* ---- every form (generated entry points: int counts and `_c`) ------------------ */

int locus_sendrecv_impl(locus_how_t how, const void *sbuf, MPI_Count scount, MPI_Datatype sdt,
                        int dest, int stag, void *rbuf, MPI_Count rcount, MPI_Datatype rdt,
                        int source, int rtag, MPI_Comm comm, MPI_Status *status,
                        MPI_Request *request, const char *fn)
{
    if (how == LOCUS_HOW_BLOCKING)
        return sendrecv_blocking(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, source, rtag,
                                 comm, status, 0, fn);
    return sendrecv_nb(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, source, rtag, comm,
                       request, 0, fn);
}

/* The outgoing data is the buffer the reply lands in. */
int locus_sendrecv_replace_impl(locus_how_t how, void *buf, MPI_Count count, MPI_Datatype dt,
                                int dest, int stag, int source, int rtag, MPI_Comm comm,
                                MPI_Status *status, MPI_Request *request, const char *fn)
{
    if (how == LOCUS_HOW_BLOCKING)
        return sendrecv_blocking(buf, count, dt, dest, stag, buf, count, dt, source, rtag, comm,
                                 status, 1, fn);
    return sendrecv_nb(buf, count, dt, dest, stag, buf, count, dt, source, rtag, comm, request,
                       1, fn);
}
