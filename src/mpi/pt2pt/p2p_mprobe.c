/*
 * p2p_mprobe.c — matched probes (MPI_Mprobe/Improbe) and the receives of
 * the messages they return (MPI_Mrecv/Imrecv), each with its _c form.
 *
 * A matched probe takes the message out of matching in the core, so no
 * other receive (another thread's, a wildcard one) can get it; the
 * MPI_Message handle owns it, and its communicator, until the message is
 * received.
 */
#include <stdlib.h>

#include "pt2pt.h"

#define MSG_MAGIC 0x4c4d5347u

typedef struct {
    uint32_t magic;
    locus_umsg_t *u;       /* the core's message, out of its queues */
    locus_comm_t *comm;    /* held until the message is received */
} locus_msg_t;

static locus_msg_t *msg_of(MPI_Message h)
{
    if (LOCUS_IS_PREDEF(h))
        return NULL;
    locus_msg_t *m = (locus_msg_t *)h;
    return locus_handle_is(m, LOCUS_HK_MSG) && m->magic == MSG_MAGIC ? m : NULL;
}

static int mprobe_check(int source, int tag, locus_comm_t *comm, MPI_Message *message)
{
    int err = p2p_probe_check(source, tag, comm);
    return err == MPI_SUCCESS && !message ? MPI_ERR_ARG : err;
}

/* One look: 1 and *message (and status) when a message matched. */
static int mprobe_once(int source, int tag, locus_comm_t *comm, MPI_Message *message,
                       MPI_Status *status, int *err)
{
    int src, t;
    size_t bytes;
    locus_umsg_t *u = locus_core_improbe(locus_core(), comm->ctx_p2p,
                                         source == MPI_ANY_SOURCE ? LOCUS_ANY : source,
                                         tag == MPI_ANY_TAG ? LOCUS_ANY : tag, &src, &t, &bytes);
    if (!u)
        return 0;
    locus_msg_t *m = malloc(sizeof *m);
    if (!m || locus_handle_enter(m, LOCUS_HK_MSG) < 0) {
        free(m);
        *err = MPI_ERR_NO_MEM; /* the job cannot go on: the message is lost */
        return 0;
    }
    m->magic = MSG_MAGIC;
    m->u = u;
    m->comm = comm;
    locus_comm_retain(comm);
    *message = (MPI_Message)m;
    p2p_status_probed(status, src, t, bytes);
    return 1;
}

static int improbe(int source, int tag, MPI_Comm comm_h, int *flag, MPI_Message *message,
                   MPI_Status *status, int blocking, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    int err = mprobe_check(source, tag, comm, message);
    if (err == MPI_SUCCESS && !blocking && !flag)
        err = MPI_ERR_ARG;
    if (err != MPI_SUCCESS)
        return locus_mpi_err(comm, err, fn);
    int found = 0;
    if (source == MPI_PROC_NULL) {
        *message = MPI_MESSAGE_NO_PROC;
        locus_status_clear(status, MPI_PROC_NULL);
        found = 1;
    }
    locus_core_t *c = locus_core();
    for (int round = 0; !found && err == MPI_SUCCESS; round++) {
        found = mprobe_once(source, tag, comm, message, status, &err);
        if (found || err || (!blocking && round == 1))
            break;
        int n = locus_core_progress(c);
        if (n < 0)
            err = MPI_ERR_OTHER;
        else if (n == 0 && blocking)
            locus_core_idle(c);
    }
    if (flag)
        *flag = found;
    if (!found && !blocking)
        *message = MPI_MESSAGE_NULL;
    return err ? locus_mpi_err(comm, err, fn) : MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Improbe)
int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                 MPI_Status *status)
{
    LOCUS_ENTRY_CS();
    return improbe(source, tag, comm, flag, message, status, 0, "MPI_Improbe");
}

LOCUS_PMPI_WEAK(Mprobe)
int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    LOCUS_ENTRY_CS();
    return improbe(source, tag, comm, NULL, message, status, 1, "MPI_Mprobe");
}

/* Starts the receive of *message: *out is the core request, or NULL for
 * MPI_MESSAGE_NO_PROC. *message becomes MPI_MESSAGE_NULL. */
static int mrecv_start(void *buf, MPI_Count count, MPI_Datatype dt, MPI_Message *message,
                       locus_comm_t **commp, locus_req_t **out)
{
    *out = NULL;
    *commp = NULL;
    if (!message)
        return MPI_ERR_ARG;
    if (*message == MPI_MESSAGE_NO_PROC) {
        *message = MPI_MESSAGE_NULL;
        return MPI_SUCCESS;
    }
    locus_msg_t *m = msg_of(*message);
    if (!m)
        return MPI_ERR_REQUEST;
    *commp = m->comm;
    int err = p2p_check(buf, count, dt, MPI_ANY_SOURCE, MPI_ANY_TAG, m->comm, 1);
    if (err != MPI_SUCCESS)
        return err;
    locus_req_t *r = locus_core_req_get(locus_core());
    if (!r)
        return MPI_ERR_NO_MEM;
    locus_p2p_recv_prep(buf, (size_t)count, locus_dt_of(dt), MPI_ANY_SOURCE, MPI_ANY_TAG,
                        m->comm->ctx_p2p, r);
    locus_core_imrecv(locus_core(), r, m->u);
    m->magic = 0;
    locus_handle_leave(m);
    free(m); /* its communicator reference goes on in *commp */
    *message = MPI_MESSAGE_NULL;
    *out = r;
    return MPI_SUCCESS;
}

/* MPI_Mrecv and MPI_Imrecv, with their _c forms (generated). */
int locus_mrecv_impl(locus_how_t how, void *buf, MPI_Count count, MPI_Datatype dt,
                     MPI_Message *message, MPI_Status *status, MPI_Request *request,
                     const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    if (how != LOCUS_HOW_BLOCKING && !request)
        return locus_mpi_err(NULL, MPI_ERR_ARG, fn);
    locus_comm_t *comm;
    locus_req_t *r;
    int err = mrecv_start(buf, count, dt, message, &comm, &r);
    if (err != MPI_SUCCESS)
        return locus_mpi_err(comm, err, fn);
    if (how != LOCUS_HOW_BLOCKING) {
        if (!r) { /* MPI_MESSAGE_NO_PROC: a receive from MPI_PROC_NULL */
            r = locus_core_req_get(locus_core());
            if (!r)
                return locus_mpi_err(NULL, MPI_ERR_NO_MEM, fn);
            r->kind = LOCUS_REQ_RECV;
            r->st_source = MPI_PROC_NULL;
            r->st_tag = MPI_ANY_TAG;
            r->done = 1;
            comm = &locus_comm_self;
            locus_comm_retain(comm);
        }
        r->comm = comm; /* the message's reference passes to the request */
        *request = locus_req_handle(r);
    } else if (r) {
        err = locus_p2p_finish(r, status);
        locus_comm_release(comm);
    } else {
        p2p_status_null(status);
    }
    return err ? locus_mpi_err(comm, err, fn) : MPI_SUCCESS;
}
