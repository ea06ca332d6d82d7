/*
 * Partitioned communication (MPI-4): MPI_Psend_init, MPI_Precv_init,
 * MPI_Pready(_range, _list) and MPI_Parrived. Persistent requests of
 * pt2pt/pt2pt.h.
 *
 * One message per activation: the send goes once every partition is
 * ready, and the receive, posted at MPI_Start, completes every partition
 * at once. Send and receive sides may partition the buffer differently;
 * only the total must agree (a longer send is MPI_ERR_TRUNCATE).
 *
 * Partitioned operations match only each other: their messages travel on
 * the communicator's collective context with tags nobody else uses there
 * (the collectives draw 1..2^30, the layer's own exchanges 2^30+1 ..
 * INT_MAX-1, comm.h): user tag t becomes -3 - t, clear of the wildcards
 * (-1 in the core, MPI_ANY_TAG -2); the two largest tags, which do not fit
 * there, become 0 and INT_MAX. Nothing posts wildcard receives on that
 * context, so nothing else can take them.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"

typedef struct {
    locus_xreq_t x;
    int send;                 /* 1: MPI_Psend_init, 0: MPI_Precv_init */
    void *buf;
    size_t count;             /* elements of dt in all partitions */
    locus_dtype_t *dt;        /* a reference held */
    int peer, tag;            /* tag: the wire's (part_tag) */
    locus_comm_t *comm;
    int partitions;
    int nready;               /* send: partitions marked ready since the start */
    unsigned char *ready;     /* send: [partitions] */
    locus_req_t *op;          /* the activation's message, NULL before it goes */
} part_t;

/* A user tag on the wire, and back. */
static int part_tag(int tag)
{
    return tag == INT_MAX ? INT_MAX : tag == INT_MAX - 1 ? 0 : -3 - tag;
}

static int part_user_tag(int wire)
{
    return wire == INT_MAX ? INT_MAX : wire == 0 ? INT_MAX - 1 : -3 - wire;
}

/* The whole buffer as one message, to or from peer. */
static int part_go(part_t *p)
{
    if (p->peer == MPI_PROC_NULL)
        return MPI_SUCCESS;
    locus_req_t *r = locus_core_req_get(locus_core());
    if (!r)
        return MPI_ERR_NO_MEM;
    int err = MPI_SUCCESS;
    if (p->send)
        err = locus_p2p_isend(p->buf, p->count, p->dt, p->peer, p->tag, p->comm,
                              p->comm->ctx_coll, 0, r);
    else
        locus_p2p_irecv(p->buf, p->count, p->dt, p->peer, p->tag, p->comm, p->comm->ctx_coll, r);
    if (err != MPI_SUCCESS)
        locus_core_req_put(locus_core(), r);
    else
        p->op = r;
    return err;
}

static int part_start(locus_xreq_t *x)
{
    part_t *p = (part_t *)x;
    if (p->op) {
        locus_core_req_put(locus_core(), p->op); /* reported complete before */
        p->op = NULL;
    }
    if (!p->send)
        return part_go(p);
    memset(p->ready, 0, (size_t)p->partitions);
    p->nready = 0;
    return p->partitions == 0 ? part_go(p) : MPI_SUCCESS;
}

/* All partitions sent or received. */
static int part_test(locus_xreq_t *x)
{
    const part_t *p = (const part_t *)x;
    if (p->peer == MPI_PROC_NULL)
        return !p->send || p->nready == p->partitions;
    return p->op && p->op->done;
}

static int part_status(locus_xreq_t *x, MPI_Status *st)
{
    const part_t *p = (const part_t *)x;
    if (!p->op) {
        if (!p->send)
            p2p_status_null(st);
        return MPI_SUCCESS;
    }
    locus_status_set(st, p->op);
    if (!p->send)
        st->MPI_TAG = part_user_tag(st->MPI_TAG);
    return p->op->st_error;
}

/* Freeing or cancelling an active partitioned request is erroneous. */
static int part_cancel(locus_xreq_t *x)
{
    (void)x;
    return MPI_ERR_REQUEST;
}

static int part_release(locus_xreq_t *x)
{
    part_t *p = (part_t *)x;
    if (x->active && !part_test(x))
        return MPI_ERR_REQUEST;
    locus_req_drop(p->op);
    locus_dtype_release(p->dt);
    free(p->ready);
    return locus_xreq_free(x);
}

static const locus_xreq_ops_t part_ops = {
    .persistent = 1, .start = part_start, .test = part_test, .status = part_status,
    .cancel = part_cancel, .release = part_release,
};

static int part_init(void *buf, int partitions, MPI_Count count, MPI_Datatype dt, int peer,
                     int tag, MPI_Comm comm_h, MPI_Request *request, int send, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    MPI_Count total = 0;
    /* Checked as a send's arguments on both sides: a partitioned receive
     * names its sender and tag (no wildcards). */
    int err = partitions < 0 || __builtin_mul_overflow(count, (MPI_Count)partitions, &total)
                  ? MPI_ERR_COUNT
                  : p2p_check(buf, count < 0 ? count : total, dt, peer, tag, comm, 0);
    if (err == MPI_SUCCESS && !request)
        err = MPI_ERR_ARG;
    part_t *p = err == MPI_SUCCESS ? calloc(1, sizeof *p) : NULL;
    unsigned char *ready = p && send ? calloc((size_t)partitions + 1, 1) : NULL;
    if (err == MPI_SUCCESS && (!p || (send && !ready)))
        err = MPI_ERR_NO_MEM;
    if (err == MPI_SUCCESS) {
        *p = (part_t){ .x = { .ops = &part_ops }, .send = send, .buf = buf,
                       .count = (size_t)total, .dt = locus_dt_of(dt), .peer = peer,
                       .tag = part_tag(tag), .comm = comm, .partitions = partitions,
                       .ready = ready };
        err = locus_xreq_bind(&p->x, comm, request);
    }
    if (err != MPI_SUCCESS) {
        free(ready);
        free(p);
        return locus_mpi_err(comm, err, fn);
    }
    locus_dtype_retain(p->dt);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Psend_init)
int PMPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                    int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    LOCUS_ENTRY_CS();
    (void)info;
    return part_init((void *)buf, partitions, count, datatype, dest, tag, comm, request, 1,
                     "MPI_Psend_init");
}

LOCUS_PMPI_WEAK(Precv_init)
int PMPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                    int source, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    LOCUS_ENTRY_CS();
    (void)info;
    return part_init(buf, partitions, count, datatype, source, tag, comm, request, 0,
                     "MPI_Precv_init");
}

/* ---- marking partitions ready, seeing them arrive ---------------------------- */

/* The partitioned request behind a handle (NULL: not one); send: the side
 * wanted. */
static part_t *part_of(MPI_Request h, int send)
{
    locus_req_t *r = locus_req_of(h);
    locus_xreq_t *x = r && !r->freed ? locus_xreq_of(r) : NULL;
    if (!x || x->ops != &part_ops || ((part_t *)x)->send != send)
        return NULL;
    return (part_t *)x;
}

/* Marks partitions lo..lo+n-1 or list[0..n) ready: MPI_ERR_REQUEST on an
 * inactive request, MPI_ERR_ARG for a partition out of range or already
 * ready (none is marked then). */
static int ready_mark(MPI_Request h, int lo, const int *list, int n, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    part_t *p = part_of(h, 1);
    if (!p || !p->x.active)
        return locus_mpi_err(p ? p->comm : NULL, MPI_ERR_REQUEST, fn);
    int err = n < 0 ? MPI_ERR_ARG : MPI_SUCCESS;
    for (int i = 0; err == MPI_SUCCESS && i < n; i++) {
        int k = list ? list[i] : lo + i;
        if (k < 0 || k >= p->partitions || p->ready[k])
            err = MPI_ERR_ARG;
        else
            p->ready[k] = 2; /* provisional, so a repeat in the list is caught */
    }
    for (int i = 0; i < n; i++) {
        int k = list ? list[i] : lo + i;
        if (k >= 0 && k < p->partitions && p->ready[k] == 2)
            p->ready[k] = err == MPI_SUCCESS;
    }
    if (err != MPI_SUCCESS)
        return locus_mpi_err(p->comm, err, fn);
    p->nready += n;
    if (p->nready == p->partitions && (err = part_go(p)) != MPI_SUCCESS)
        return locus_mpi_err(p->comm, err, fn);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Pready)
int PMPI_Pready(int partition, MPI_Request request)
{
    LOCUS_ENTRY_CS();
    return ready_mark(request, partition, NULL, 1, "MPI_Pready");
}

LOCUS_PMPI_WEAK(Pready_range)
int PMPI_Pready_range(int partition_low, int partition_high, MPI_Request request)
{
    LOCUS_ENTRY_CS();
    int n = partition_high >= partition_low ? partition_high - partition_low + 1 : -1;
    return ready_mark(request, partition_low, NULL, n, "MPI_Pready_range");
}

LOCUS_PMPI_WEAK(Pready_list)
int PMPI_Pready_list(int length, const int array_of_partitions[], MPI_Request request)
{
    LOCUS_ENTRY_CS();
    if (!array_of_partitions && length > 0) {
        LOCUS_CHECK_INIT("MPI_Pready_list");
        return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_Pready_list");
    }
    return ready_mark(request, 0, array_of_partitions, length, "MPI_Pready_list");
}

LOCUS_PMPI_WEAK(Parrived)
int PMPI_Parrived(MPI_Request request, int partition, int *flag)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Parrived");
    if (!flag)
        return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_Parrived");
    /* A null or inactive request has nothing outstanding. */
    if (request == MPI_REQUEST_NULL) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    part_t *p = part_of(request, 0);
    if (!p)
        return locus_mpi_err(NULL, MPI_ERR_REQUEST, "MPI_Parrived");
    if (partition < 0 || partition >= p->partitions)
        return locus_mpi_err(p->comm, MPI_ERR_ARG, "MPI_Parrived");
    if (!p->x.active) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    if (!part_test(&p->x) && locus_core_progress(locus_core()) < 0)
        return locus_mpi_err(p->comm, MPI_ERR_OTHER, "MPI_Parrived");
    *flag = part_test(&p->x);
    return MPI_SUCCESS;
}
