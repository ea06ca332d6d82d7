/*
 * Completion: MPI_Wait*, MPI_Test*, MPI_Start(all), MPI_Request_free and
 * MPI_Cancel over any mix of requests: plain core requests (sends,
 * receives, nonblocking collectives) and the kinds of pt2pt.h
 * (persistent, partitioned, generalized, MPI_Isendrecv). The MPI-4.1
 * MPI_Request_get_status family is in req_status.c on the same helpers.
 */
#include <stdlib.h>

#include "req_impl.h"

int req_valid(const locus_req_t *r)
{
    return r && r->kind >= LOCUS_REQ_SEND && r->kind <= LOCUS_REQ_GEN && !r->freed;
}

locus_comm_t *req_comm(const locus_req_t *r)
{
    return r->comm ? r->comm : &locus_comm_world;
}

int req_active(const locus_req_t *r)
{
    const locus_xreq_t *x = locus_xreq_of(r);
    return !x || x->active;
}

int req_done(locus_req_t *r)
{
    locus_xreq_t *x = locus_xreq_of(r);
    if (!x)
        return r->done;
    return !x->active || x->ops->test(x);
}

int req_peek(locus_req_t *r, MPI_Status *st)
{
    locus_xreq_t *x = locus_xreq_of(r);
    if (!x) {
        locus_status_set(st, r);
        return r->st_error;
    }
    if (!x->active) {
        locus_status_empty(st, MPI_ANY_SOURCE);
        return MPI_SUCCESS;
    }
    MPI_Status tmp;
    if (!st)
        st = &tmp;
    locus_status_clear(st, MPI_ANY_SOURCE);
    return x->ops->status(x, st);
}

void req_status_error(MPI_Status st[], int k, int err, int *failed)
{
    if (err != MPI_SUCCESS && !*failed) {
        *failed = 1;
        for (int j = 0; st && j < k; j++)
            st[j].MPI_ERROR = MPI_SUCCESS;
    }
    if (*failed && st)
        st[k].MPI_ERROR = err;
}

int req_report(MPI_Request *h, MPI_Status *st)
{
    locus_req_t *r = locus_req_of(*h);
    locus_xreq_t *x = locus_xreq_of(r);
    int err = req_peek(r, st);
    if (!x) {
        locus_core_req_put(locus_core(), r);
        *h = MPI_REQUEST_NULL;
    } else if (x->ops->persistent) {
        x->active = 0;
    } else {
        int rerr = x->ops->release(x);
        *h = MPI_REQUEST_NULL;
        if (err == MPI_SUCCESS)
            err = rerr;
    }
    return err;
}

int req_progress_round(void)
{
    locus_core_t *c = locus_core();
    int n = locus_core_progress(c);
    if (n == 0)
        locus_core_idle(c);
    else if (n > 0)
        c->idle = 0;
    return n < 0 ? -1 : 0;
}

int req_check_array(int count, const MPI_Request reqs[])
{
    if (count < 0)
        return MPI_ERR_COUNT;
    if (count > 0 && !reqs)
        return MPI_ERR_ARG;
    for (int i = 0; i < count; i++)
        if (reqs[i] != MPI_REQUEST_NULL && !req_valid(locus_req_of(reqs[i])))
            return MPI_ERR_REQUEST;
    return MPI_SUCCESS;
}

locus_comm_t *req_array_comm(int count, const MPI_Request reqs[])
{
    for (int i = 0; i < count; i++)
        if (reqs[i] != MPI_REQUEST_NULL)
            return req_comm(locus_req_of(reqs[i]));
    return &locus_comm_world;
}

int req_find_done(int count, const MPI_Request reqs[])
{
    int any = 0;
    for (int i = 0; i < count; i++) {
        if (reqs[i] == MPI_REQUEST_NULL || !req_active(locus_req_of(reqs[i])))
            continue;
        any = 1;
        if (req_done(locus_req_of(reqs[i])))
            return i;
    }
    return any ? -1 : -2;
}

int req_find_some(int count, const MPI_Request reqs[], int indices[])
{
    int n = 0, any = 0;
    for (int i = 0; i < count; i++) {
        if (reqs[i] == MPI_REQUEST_NULL || !req_active(locus_req_of(reqs[i])))
            continue;
        any = 1;
        if (req_done(locus_req_of(reqs[i])))
            indices[n++] = i;
    }
    return any ? n : -1;
}

/* ---- single requests ------------------------------------------------------- */

int req_test_begin(MPI_Request request, int *flag, MPI_Status *status, locus_req_t **r,
                   const char *fn)
{
    *r = locus_req_of(request);
    if (!*r && request != MPI_REQUEST_NULL)
        return locus_mpi_err(NULL, MPI_ERR_REQUEST, fn);
    if (!*r) {
        *flag = 1;
        locus_status_empty(status, MPI_ANY_SOURCE);
        return MPI_SUCCESS;
    }
    if (!req_valid(*r))
        return locus_mpi_err(NULL, MPI_ERR_REQUEST, fn);
    if (!req_done(*r) && locus_core_progress(locus_core()) < 0)
        return locus_mpi_err(req_comm(*r), MPI_ERR_OTHER, fn);
    *flag = req_done(*r);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Wait)
int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Wait");
    if (!request)
        return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_Wait");
    locus_req_t *r = locus_req_of(*request);
    if (!r && *request == MPI_REQUEST_NULL) {
        locus_status_empty(status, MPI_ANY_SOURCE);
        return MPI_SUCCESS;
    }
    if (!req_valid(r))
        return locus_mpi_err(NULL, MPI_ERR_REQUEST, "MPI_Wait");
    locus_comm_t *comm = req_comm(r);
    while (!req_done(r))
        if (req_progress_round() != 0)
            return locus_mpi_err(comm, MPI_ERR_OTHER, "MPI_Wait");
    int err = req_report(request, status);
    return err ? locus_mpi_err(comm, err, "MPI_Wait") : MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Test)
int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Test");
    if (!request || !flag)
        return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_Test");
    locus_req_t *r;
    int err = req_test_begin(*request, flag, status, &r, "MPI_Test");
    if (err != MPI_SUCCESS || !r || !*flag)
        return err;
    locus_comm_t *comm = req_comm(r);   /* the report may free r */
    err = req_report(request, status);
    return err ? locus_mpi_err(comm, err, "MPI_Test") : MPI_SUCCESS;
}

/* ---- arrays ------------------------------------------------------------------ */

/* Reports every request of the array (all complete or inactive); null
 * handles get empty statuses. 1 when one of them failed. */
static int report_all(int count, MPI_Request reqs[], MPI_Status st[])
{
    int err_any = 0;
    for (int i = 0; i < count; i++) {
        MPI_Status *s = st ? &st[i] : NULL;
        int err = MPI_SUCCESS;
        if (reqs[i] == MPI_REQUEST_NULL)
            locus_status_empty(s, MPI_ANY_SOURCE);
        else
            err = req_report(&reqs[i], s);
        req_status_error(st, i, err, &err_any);
    }
    return err_any;
}

LOCUS_PMPI_WEAK(Waitall)
int PMPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Waitall");
    int err = req_check_array(count, reqs);
    if (err != MPI_SUCCESS)
        return locus_mpi_err(NULL, err, "MPI_Waitall");
    locus_comm_t *comm = req_array_comm(count, reqs);
    /* A request once done stays done: resume the scan where it stopped. */
    for (int i = 0; i < count;) {
        if (reqs[i] == MPI_REQUEST_NULL || req_done(locus_req_of(reqs[i])))
            i++;
        else if (req_progress_round() != 0)
            return locus_mpi_err(comm, MPI_ERR_OTHER, "MPI_Waitall");
    }
    if (report_all(count, reqs, statuses))
        return locus_mpi_err(comm, MPI_ERR_IN_STATUS, "MPI_Waitall");
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Testall)
int PMPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Testall");
    int err = req_check_array(count, reqs);
    if (err == MPI_SUCCESS && !flag)
        err = MPI_ERR_ARG;
    if (err != MPI_SUCCESS)
        return locus_mpi_err(NULL, err, "MPI_Testall");
    locus_comm_t *comm = req_array_comm(count, reqs);
    if (locus_core_progress(locus_core()) < 0)
        return locus_mpi_err(comm, MPI_ERR_OTHER, "MPI_Testall");
    /* All or nothing: report none unless every one is done. */
    for (int i = 0; i < count; i++) {
        if (reqs[i] != MPI_REQUEST_NULL && !req_done(locus_req_of(reqs[i]))) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    if (report_all(count, reqs, statuses))
        return locus_mpi_err(comm, MPI_ERR_IN_STATUS, "MPI_Testall");
    return MPI_SUCCESS;
}

/* The end of Waitany/Testany once i is known (-2: no active request). */
static int any_report(MPI_Request reqs[], int i, int *index, MPI_Status *status,
                      const char *fn)
{
    if (i == -2) {
        *index = MPI_UNDEFINED;
        locus_status_empty(status, MPI_ANY_SOURCE);
        return MPI_SUCCESS;
    }
    locus_comm_t *comm = req_comm(locus_req_of(reqs[i]));
    *index = i;
    int err = req_report(&reqs[i], status);
    return err ? locus_mpi_err(comm, err, fn) : MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Waitany)
int PMPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Waitany");
    int err = req_check_array(count, reqs);
    if (err == MPI_SUCCESS && !index)
        err = MPI_ERR_ARG;
    if (err != MPI_SUCCESS)
        return locus_mpi_err(NULL, err, "MPI_Waitany");
    int i;
    while ((i = req_find_done(count, reqs)) == -1)
        if (req_progress_round() != 0)
            return locus_mpi_err(req_array_comm(count, reqs), MPI_ERR_OTHER, "MPI_Waitany");
    return any_report(reqs, i, index, status, "MPI_Waitany");
}

LOCUS_PMPI_WEAK(Testany)
int PMPI_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Testany");
    int err = req_check_array(count, reqs);
    if (err == MPI_SUCCESS && (!index || !flag))
        err = MPI_ERR_ARG;
    if (err != MPI_SUCCESS)
        return locus_mpi_err(NULL, err, "MPI_Testany");
    if (locus_core_progress(locus_core()) < 0)
        return locus_mpi_err(req_array_comm(count, reqs), MPI_ERR_OTHER, "MPI_Testany");
    int i = req_find_done(count, reqs);
    *flag = i != -1;
    if (i == -1) {
        *index = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    return any_report(reqs, i, index, status, "MPI_Testany");
}

/* Reports every done active request into indices/statuses; *outcount is
 * MPI_UNDEFINED when none is active. 1 when one of them failed. */
static int some_report(int count, MPI_Request reqs[], int *outcount, int indices[],
                       MPI_Status statuses[], locus_comm_t **comm)
{
    int n = req_find_some(count, reqs, indices), err_any = 0;
    for (int k = 0; k < n; k++) {
        *comm = req_comm(locus_req_of(reqs[indices[k]]));
        int err = req_report(&reqs[indices[k]], statuses ? &statuses[k] : NULL);
        req_status_error(statuses, k, err, &err_any);
    }
    *outcount = n < 0 ? MPI_UNDEFINED : n;
    return err_any;
}

static int some_run(int incount, MPI_Request reqs[], int *outcount, int indices[],
                    MPI_Status statuses[], int wait, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    int err = req_check_array(incount, reqs);
    if (err == MPI_SUCCESS && (!outcount || (incount > 0 && !indices)))
        err = MPI_ERR_ARG;
    if (err != MPI_SUCCESS)
        return locus_mpi_err(NULL, err, fn);
    locus_comm_t *comm = req_array_comm(incount, reqs);
    if (wait) {
        while (req_find_done(incount, reqs) == -1)
            if (req_progress_round() != 0)
                return locus_mpi_err(comm, MPI_ERR_OTHER, fn);
    } else if (locus_core_progress(locus_core()) < 0) {
        return locus_mpi_err(comm, MPI_ERR_OTHER, fn);
    }
    if (some_report(incount, reqs, outcount, indices, statuses, &comm))
        return locus_mpi_err(comm, MPI_ERR_IN_STATUS, fn);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Waitsome)
int PMPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
                  MPI_Status statuses[])
{
    LOCUS_ENTRY_CS();
    return some_run(incount, reqs, outcount, indices, statuses, 1, "MPI_Waitsome");
}

LOCUS_PMPI_WEAK(Testsome)
int PMPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
                  MPI_Status statuses[])
{
    LOCUS_ENTRY_CS();
    return some_run(incount, reqs, outcount, indices, statuses, 0, "MPI_Testsome");
}

/* ---- persistent requests: start ------------------------------------------ */

/* Starts one request: MPI_ERR_REQUEST unless it is an inactive persistent
 * one. */
static int start_one(MPI_Request h)
{
    locus_req_t *r = locus_req_of(h);
    if (!req_valid(r))
        return MPI_ERR_REQUEST;
    locus_xreq_t *x = locus_xreq_of(r);
    if (!x || !x->ops->persistent || x->active)
        return MPI_ERR_REQUEST;
    int err = x->ops->start(x);
    if (err == MPI_SUCCESS)
        x->active = 1;
    return err;
}

LOCUS_PMPI_WEAK(Start)
int PMPI_Start(MPI_Request *request)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Start");
    if (!request)
        return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_Start");
    int err = start_one(*request);
    if (err == MPI_ERR_REQUEST || err == MPI_SUCCESS)
        return err ? locus_mpi_err(NULL, err, "MPI_Start") : MPI_SUCCESS;
    return locus_mpi_err(req_comm(locus_req_of(*request)), err, "MPI_Start");
}

LOCUS_PMPI_WEAK(Startall)
int PMPI_Startall(int count, MPI_Request reqs[])
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Startall");
    if (count < 0)
        return locus_mpi_err(NULL, MPI_ERR_COUNT, "MPI_Startall");
    if (count > 0 && !reqs)
        return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_Startall");
    /* Every handle is checked before any operation starts. */
    for (int i = 0; i < count; i++) {
        locus_req_t *r = locus_req_of(reqs[i]);
        locus_xreq_t *x = req_valid(r) ? locus_xreq_of(r) : NULL;
        if (!x || !x->ops->persistent || x->active)
            return locus_mpi_err(NULL, MPI_ERR_REQUEST, "MPI_Startall");
    }
    for (int i = 0; i < count; i++) {
        int err = start_one(reqs[i]);
        if (err != MPI_SUCCESS)
            return locus_mpi_err(req_comm(locus_req_of(reqs[i])), err, "MPI_Startall");
    }
    return MPI_SUCCESS;
}

/* ---- free, cancel -------------------------------------------------------------- */

LOCUS_PMPI_WEAK(Request_free)
int PMPI_Request_free(MPI_Request *request)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Request_free");
    locus_req_t *r = request ? locus_req_of(*request) : NULL;
    if (!req_valid(r))
        return locus_mpi_err(NULL, MPI_ERR_REQUEST, "MPI_Request_free");
    locus_xreq_t *x = locus_xreq_of(r);
    if (x) {
        locus_comm_t *comm = req_comm(r);
        locus_comm_retain(comm); /* for the error report: release may drop r's */
        int err = x->ops->release(x);
        if (err == MPI_SUCCESS)
            *request = MPI_REQUEST_NULL;
        err = err ? locus_mpi_err(comm, err, "MPI_Request_free") : MPI_SUCCESS;
        locus_comm_release(comm);
        return err;
    }
    if (r->done)
        locus_core_req_put(locus_core(), r);
    else
        r->freed = 1; /* recycled when it completes */
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Cancel)
int PMPI_Cancel(MPI_Request *request)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Cancel");
    locus_req_t *r = request ? locus_req_of(*request) : NULL;
    if (!req_valid(r))
        return locus_mpi_err(NULL, MPI_ERR_REQUEST, "MPI_Cancel");
    locus_xreq_t *x = locus_xreq_of(r);
    if (x) {
        int err = x->active ? x->ops->cancel(x) : MPI_SUCCESS;
        return err ? locus_mpi_err(req_comm(r), err, "MPI_Cancel") : MPI_SUCCESS;
    }
    /* What the core can still withdraw (locus_core_cancel); the rest
     * completes normally and MPI_Test_cancelled says false. */
    if (r->kind == LOCUS_REQ_RECV || r->kind == LOCUS_REQ_SEND)
        locus_core_cancel(locus_core(), r);
    return MPI_SUCCESS;
}
