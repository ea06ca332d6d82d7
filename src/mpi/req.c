/* Completion: MPI_Wait*, MPI_Test*, MPI_Request_free, MPI_Cancel. */
#include <stdlib.h>

#include "mpi_impl.h"

static int req_valid(const locus_req_t *r)
{
    return r && r->kind >= LOCUS_REQ_SEND && r->kind <= LOCUS_REQ_GEN && !r->freed;
}

/* The communicator whose error handler applies: the request's own (alive
 * while the request holds its reference, even if the user freed it). */
static locus_comm_t *req_comm(const locus_req_t *r)
{
    return r->comm ? r->comm : &locus_comm_world;
}

/* Takes a completed request: status, error, recycling. */
static int req_finish(MPI_Request *req, MPI_Status *st)
{
    locus_req_t *r = locus_req_of(*req);
    locus_status_set(st, r);
    int err = r->st_error;
    locus_core_req_put(locus_core(), r);
    *req = MPI_REQUEST_NULL;
    return err;
}

static void status_empty(MPI_Status *st)
{
    locus_status_empty(st, MPI_ANY_SOURCE);
}

/* One progress round; -1 when a transport failed. Idles when nothing moved. */
static int progress_round(void)
{
    locus_core_t *c = locus_core();
    int n = locus_core_progress(c);
    if (n == 0)
        locus_core_idle(c);
    else if (n > 0)
        c->idle = 0;
    return n < 0 ? -1 : 0;
}

/* Checks an array of request handles: MPI_SUCCESS or MPI_ERR_REQUEST/ARG. */
static int check_array(int count, MPI_Request reqs[])
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

LOCUS_PMPI_WEAK(Wait)
int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
    LOCUS_CHECK_INIT("MPI_Wait");
    if (!request)
        return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_Wait");
    locus_req_t *r = locus_req_of(*request);
    if (!r) {
        status_empty(status);
        return MPI_SUCCESS;
    }
    if (!req_valid(r))
        return locus_mpi_err(NULL, MPI_ERR_REQUEST, "MPI_Wait");
    locus_comm_t *comm = req_comm(r);
    if (!r->done && locus_core_wait(locus_core(), r) != 0)
        return locus_mpi_err(comm, MPI_ERR_OTHER, "MPI_Wait");
    int err = req_finish(request, status);
    return err ? locus_mpi_err(comm, err, "MPI_Wait") : MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Test)
int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    LOCUS_CHECK_INIT("MPI_Test");
    if (!request || !flag)
        return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_Test");
    locus_req_t *r = locus_req_of(*request);
    if (!r) {
        *flag = 1;
        status_empty(status);
        return MPI_SUCCESS;
    }
    if (!req_valid(r))
        return locus_mpi_err(NULL, MPI_ERR_REQUEST, "MPI_Test");
    locus_comm_t *comm = req_comm(r);
    if (!r->done && locus_core_progress(locus_core()) < 0)
        return locus_mpi_err(comm, MPI_ERR_OTHER, "MPI_Test");
    *flag = r->done;
    if (!r->done)
        return MPI_SUCCESS;
    int err = req_finish(request, status);
    return err ? locus_mpi_err(comm, err, "MPI_Test") : MPI_SUCCESS;
}

/* Completes every done request of the array into statuses; returns the
 * number still active. *err_any set when one completed with an error. */
static int sweep_all(int count, MPI_Request reqs[], MPI_Status st[], int *err_any)
{
    int active = 0;
    for (int i = 0; i < count; i++) {
        if (reqs[i] == MPI_REQUEST_NULL)
            continue;
        if (!locus_req_of(reqs[i])->done) {
            active++;
            continue;
        }
        if (req_finish(&reqs[i], st ? &st[i] : NULL) != MPI_SUCCESS)
            *err_any = 1;
    }
    return active;
}

LOCUS_PMPI_WEAK(Waitall)
int PMPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    LOCUS_CHECK_INIT("MPI_Waitall");
    int err = check_array(count, reqs);
    if (err != MPI_SUCCESS)
        return locus_mpi_err(NULL, err, "MPI_Waitall");
    locus_comm_t *comm = &locus_comm_world;
    for (int i = 0; i < count; i++) {
        if (reqs[i] != MPI_REQUEST_NULL) {
            comm = req_comm(locus_req_of(reqs[i]));
            break;
        }
    }
    /* Statuses of null handles are empty; the others are set on completion. */
    for (int i = 0; i < count; i++)
        if (reqs[i] == MPI_REQUEST_NULL)
            status_empty(statuses ? &statuses[i] : NULL);
    int err_any = 0;
    while (sweep_all(count, reqs, statuses, &err_any) > 0)
        if (progress_round() != 0)
            return locus_mpi_err(comm, MPI_ERR_OTHER, "MPI_Waitall");
    return err_any ? locus_mpi_err(comm, MPI_ERR_IN_STATUS, "MPI_Waitall") : MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Testall)
int PMPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    LOCUS_CHECK_INIT("MPI_Testall");
    int err = check_array(count, reqs);
    if (err == MPI_SUCCESS && !flag)
        err = MPI_ERR_ARG;
    if (err != MPI_SUCCESS)
        return locus_mpi_err(NULL, err, "MPI_Testall");
    if (locus_core_progress(locus_core()) < 0)
        return locus_mpi_err(NULL, MPI_ERR_OTHER, "MPI_Testall");
    /* All or nothing: complete none unless every one is done. */
    locus_comm_t *comm = &locus_comm_world;
    for (int i = 0; i < count; i++) {
        if (reqs[i] == MPI_REQUEST_NULL)
            continue;
        comm = req_comm(locus_req_of(reqs[i]));
        if (!locus_req_of(reqs[i])->done) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    int err_any = 0;
    for (int i = 0; i < count; i++)
        if (reqs[i] == MPI_REQUEST_NULL)
            status_empty(statuses ? &statuses[i] : NULL);
    sweep_all(count, reqs, statuses, &err_any);
    return err_any ? locus_mpi_err(comm, MPI_ERR_IN_STATUS, "MPI_Testall") : MPI_SUCCESS;
}

/* The first done request's index, -1 when none is, -2 when all are null. */
static int find_done(int count, MPI_Request reqs[])
{
    int any = 0;
    for (int i = 0; i < count; i++) {
        if (reqs[i] == MPI_REQUEST_NULL)
            continue;
        any = 1;
        if (locus_req_of(reqs[i])->done)
            return i;
    }
    return any ? -1 : -2;
}

LOCUS_PMPI_WEAK(Waitany)
int PMPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
    LOCUS_CHECK_INIT("MPI_Waitany");
    int err = check_array(count, reqs);
    if (err == MPI_SUCCESS && !index)
        err = MPI_ERR_ARG;
    if (err != MPI_SUCCESS)
        return locus_mpi_err(NULL, err, "MPI_Waitany");
    int i;
    while ((i = find_done(count, reqs)) == -1)
        if (progress_round() != 0)
            return locus_mpi_err(NULL, MPI_ERR_OTHER, "MPI_Waitany");
    if (i == -2) {
        *index = MPI_UNDEFINED;
        status_empty(status);
        return MPI_SUCCESS;
    }
    locus_comm_t *comm = req_comm(locus_req_of(reqs[i]));
    *index = i;
    err = req_finish(&reqs[i], status);
    return err ? locus_mpi_err(comm, err, "MPI_Waitany") : MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Testany)
int PMPI_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    LOCUS_CHECK_INIT("MPI_Testany");
    int err = check_array(count, reqs);
    if (err == MPI_SUCCESS && (!index || !flag))
        err = MPI_ERR_ARG;
    if (err != MPI_SUCCESS)
        return locus_mpi_err(NULL, err, "MPI_Testany");
    if (locus_core_progress(locus_core()) < 0)
        return locus_mpi_err(NULL, MPI_ERR_OTHER, "MPI_Testany");
    int i = find_done(count, reqs);
    if (i == -2) {
        *flag = 1;
        *index = MPI_UNDEFINED;
        status_empty(status);
        return MPI_SUCCESS;
    }
    if (i == -1) {
        *flag = 0;
        *index = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    locus_comm_t *comm = req_comm(locus_req_of(reqs[i]));
    *flag = 1;
    *index = i;
    err = req_finish(&reqs[i], status);
    return err ? locus_mpi_err(comm, err, "MPI_Testany") : MPI_SUCCESS;
}

/* Completes all done requests into indices/statuses. */
static int some_collect(int count, MPI_Request reqs[], int *outcount, int indices[],
                        MPI_Status statuses[], locus_comm_t **comm)
{
    int n = 0, err_any = 0, any = 0;
    for (int i = 0; i < count; i++) {
        if (reqs[i] == MPI_REQUEST_NULL)
            continue;
        any = 1;
        if (!locus_req_of(reqs[i])->done)
            continue;
        *comm = req_comm(locus_req_of(reqs[i]));
        indices[n] = i;
        if (req_finish(&reqs[i], statuses ? &statuses[n] : NULL) != MPI_SUCCESS)
            err_any = 1;
        n++;
    }
    *outcount = any ? n : MPI_UNDEFINED;
    return err_any;
}

LOCUS_PMPI_WEAK(Waitsome)
int PMPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
                  MPI_Status statuses[])
{
    LOCUS_CHECK_INIT("MPI_Waitsome");
    int err = check_array(incount, reqs);
    if (err == MPI_SUCCESS && (!outcount || (incount > 0 && !indices)))
        err = MPI_ERR_ARG;
    if (err != MPI_SUCCESS)
        return locus_mpi_err(NULL, err, "MPI_Waitsome");
    while (find_done(incount, reqs) == -1)
        if (progress_round() != 0)
            return locus_mpi_err(NULL, MPI_ERR_OTHER, "MPI_Waitsome");
    locus_comm_t *comm = &locus_comm_world;
    if (some_collect(incount, reqs, outcount, indices, statuses, &comm))
        return locus_mpi_err(comm, MPI_ERR_IN_STATUS, "MPI_Waitsome");
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Testsome)
int PMPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
                  MPI_Status statuses[])
{
    LOCUS_CHECK_INIT("MPI_Testsome");
    int err = check_array(incount, reqs);
    if (err == MPI_SUCCESS && (!outcount || (incount > 0 && !indices)))
        err = MPI_ERR_ARG;
    if (err != MPI_SUCCESS)
        return locus_mpi_err(NULL, err, "MPI_Testsome");
    if (locus_core_progress(locus_core()) < 0)
        return locus_mpi_err(NULL, MPI_ERR_OTHER, "MPI_Testsome");
    locus_comm_t *comm = &locus_comm_world;
    if (some_collect(incount, reqs, outcount, indices, statuses, &comm))
        return locus_mpi_err(comm, MPI_ERR_IN_STATUS, "MPI_Testsome");
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Request_free)
int PMPI_Request_free(MPI_Request *request)
{
    LOCUS_CHECK_INIT("MPI_Request_free");
    locus_req_t *r = request ? locus_req_of(*request) : NULL;
    if (!req_valid(r))
        return locus_mpi_err(NULL, MPI_ERR_REQUEST, "MPI_Request_free");
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
    LOCUS_CHECK_INIT("MPI_Cancel");
    locus_req_t *r = request ? locus_req_of(*request) : NULL;
    if (!req_valid(r))
        return locus_mpi_err(NULL, MPI_ERR_REQUEST, "MPI_Cancel");
    /* Only unmatched receives can be cancelled; a send completes normally
     * and MPI_Test_cancelled then reports false (allowed by the standard). */
    if (r->kind == LOCUS_REQ_RECV)
        locus_core_cancel(locus_core(), r);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Test_cancelled)
int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    if (!status || !flag)
        return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_Test_cancelled");
    *flag = LOCUS_STATUS_CANCELLED(status);
    return MPI_SUCCESS;
}

/* ---- mpi_impl.h helpers ------------------------------------------------- */

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

/* A nonblocking collective's schedule as a generalized request's state. */
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

int locus_req_of_sched(locus_comm_t *comm, locus_coll_sched_t *s, MPI_Request *request)
{
    locus_req_t *r = locus_req_gen_new(comm, sched_poll, s, sched_free);
    *request = locus_req_handle(r);
    if (r)
        return MPI_SUCCESS;
    locus_coll_sched_free(s);
    return MPI_ERR_NO_MEM;
}
