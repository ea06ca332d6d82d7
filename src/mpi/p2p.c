/*
 * Point-to-point: sends, receives, probes and counts.
 *
 * Blocking calls take a request from the core's free list (no allocation:
 * the common MPI_Send of a small contiguous buffer to a node-local peer is
 * argument checks, a header and one transport send) and give it back, or
 * abandon it to the core when the wait fails, so nothing a transport or
 * the posted queue still points to ever lives on a stack.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

void locus_status_set(MPI_Status *st, const locus_req_t *r)
{
    if (!st)
        return;
    if (r->kind == LOCUS_REQ_RECV) {
        st->MPI_SOURCE = r->st_source;
        st->MPI_TAG = r->st_tag;
        locus_status_set_bytes(st, r->st_bytes);
    } else {
        st->MPI_SOURCE = MPI_ANY_SOURCE;
        st->MPI_TAG = MPI_ANY_TAG;
        locus_status_set_bytes(st, 0);
    }
    st->MPI_ERROR = r->st_error;
    LOCUS_STATUS_CANCELLED(st) = r->st_cancelled;
}

void locus_status_empty(MPI_Status *st, int source)
{
    if (!st)
        return;
    st->MPI_SOURCE = source;
    st->MPI_TAG = MPI_ANY_TAG;
    st->MPI_ERROR = MPI_SUCCESS;
    locus_status_set_bytes(st, 0);
    LOCUS_STATUS_CANCELLED(st) = 0;
}

int locus_p2p_isend(const void *buf, size_t count, locus_dtype_t *dt, int dest, int tag,
                    locus_comm_t *comm, uint32_t ctx, uint32_t flags, locus_req_t *r)
{
    size_t len = count * locus_dtype_size(dt);
    r->kind = LOCUS_REQ_SEND;
    r->world = comm->world_of[dest];
    r->hdr.ctx = ctx;
    r->hdr.src = comm->coll.rank;
    r->hdr.tag = tag;
    r->hdr.flags = flags;
    r->hdrlen = flags ? sizeof r->hdr : LOCUS_HDR_SHORT;
    r->len = len;
    if (__builtin_expect(locus_dtype_is_contig(dt), 1)) {
        ptrdiff_t lb, ext;
        locus_dtype_true_extent(dt, &lb, &ext);
        r->sbuf = (const char *)buf + lb;
    } else if (len) {
        r->tmp = malloc(len);
        if (!r->tmp)
            return MPI_ERR_NO_MEM;
        locus_dtype_pack(buf, count, dt, 0, r->tmp, len);
        r->sbuf = r->tmp;
    }
    if (locus_core_isend(locus_core(), r) != 0) {
        free(r->tmp);
        r->tmp = NULL;
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail,
                 "no transport reaches world rank %d (no inter-node transport)", r->world);
        return MPI_ERR_OTHER;
    }
    return MPI_SUCCESS;
}

void locus_p2p_irecv(void *buf, size_t count, locus_dtype_t *dt, int src, int tag,
                     locus_comm_t *comm, uint32_t ctx, locus_req_t *r)
{
    (void)comm;
    r->kind = LOCUS_REQ_RECV;
    r->ctx = ctx;
    r->rank = src == MPI_ANY_SOURCE ? LOCUS_ANY : src;
    r->tag = tag == MPI_ANY_TAG ? LOCUS_ANY : tag;
    r->len = count * locus_dtype_size(dt);
    if (__builtin_expect(locus_dtype_is_contig(dt), 1)) {
        ptrdiff_t lb, ext;
        locus_dtype_true_extent(dt, &lb, &ext);
        r->rbuf = (char *)buf + lb;
    } else {
        r->ubuf = buf;
        r->ucount = count;
        r->udt = dt;
    }
    locus_core_irecv(locus_core(), r);
}

int locus_p2p_finish(locus_req_t *r, MPI_Status *status)
{
    locus_core_t *c = locus_core();
    if (!r->done && locus_core_wait(c, r) != 0) {
        locus_core_abandon(c, r);
        locus_status_empty(status, MPI_ANY_SOURCE);
        if (status)
            status->MPI_ERROR = MPI_ERR_OTHER;
        return MPI_ERR_OTHER;
    }
    locus_status_set(status, r);
    int err = r->st_error;
    locus_core_req_put(c, r);
    return err;
}

/* A request for a blocking call or a nonblocking one's handle. */
static locus_req_t *req_new(void)
{
    return locus_core_req_get(locus_core());
}

/* Makes r the user's: it names comm (its error handler) and holds a
 * reference on it until the core recycles it. */
static void req_own(locus_req_t *r, locus_comm_t *comm)
{
    r->comm = comm;
    locus_comm_retain(comm);
}

/* ---- blocking sends ---------------------------------------------------- */

static int send_blocking(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                         MPI_Comm comm_h, uint32_t flags, const char *fn)
{
    if (__builtin_expect(locus_mpi.state != 1, 0))
        locus_mpi_not_active(fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    int err = locus_check_p2p(buf, count, dt, dest, tag, comm, 0);
    if (__builtin_expect(err != MPI_SUCCESS, 0))
        return locus_mpi_err(comm, err, fn);
    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    locus_req_t *r = req_new();
    if (!r)
        return locus_mpi_err(comm, MPI_ERR_NO_MEM, fn);
    err = locus_p2p_isend(buf, (size_t)count, locus_dt_of(dt), dest, tag, comm, comm->ctx_p2p,
                          flags, r);
    if (err == MPI_SUCCESS)
        err = locus_p2p_finish(r, NULL);
    else
        locus_core_req_put(locus_core(), r);
    return err ? locus_mpi_err(comm, err, fn) : MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Send)
int PMPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return send_blocking(buf, count, dt, dest, tag, comm, 0, "MPI_Send");
}

LOCUS_PMPI_WEAK(Ssend)
int PMPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return send_blocking(buf, count, dt, dest, tag, comm, LOCUS_HDR_SYNC, "MPI_Ssend");
}

/* Ready mode: the receive is posted already, so a standard send is exact. */
LOCUS_PMPI_WEAK(Rsend)
int PMPI_Rsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return send_blocking(buf, count, dt, dest, tag, comm, 0, "MPI_Rsend");
}

/* ---- non-blocking sends -------------------------------------------------- */

static int send_nb(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                   MPI_Comm comm_h, uint32_t flags, MPI_Request *request, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    int err = locus_check_p2p(buf, count, dt, dest, tag, comm, 0);
    if (err == MPI_SUCCESS && !request)
        err = MPI_ERR_ARG;
    if (err != MPI_SUCCESS)
        return locus_mpi_err(comm, err, fn);
    locus_req_t *r = req_new();
    if (!r)
        return locus_mpi_err(comm, MPI_ERR_NO_MEM, fn);
    if (dest == MPI_PROC_NULL) {
        r->kind = LOCUS_REQ_SEND;
        r->done = 1;
    } else {
        err = locus_p2p_isend(buf, (size_t)count, locus_dt_of(dt), dest, tag, comm, comm->ctx_p2p,
                              flags, r);
        if (err != MPI_SUCCESS) {
            locus_core_req_put(locus_core(), r);
            return locus_mpi_err(comm, err, fn);
        }
    }
    req_own(r, comm);
    *request = locus_req_handle(r);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Isend)
int PMPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    return send_nb(buf, count, dt, dest, tag, comm, 0, request, "MPI_Isend");
}

LOCUS_PMPI_WEAK(Issend)
int PMPI_Issend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                MPI_Request *request)
{
    return send_nb(buf, count, dt, dest, tag, comm, LOCUS_HDR_SYNC, request, "MPI_Issend");
}

LOCUS_PMPI_WEAK(Irsend)
int PMPI_Irsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                MPI_Request *request)
{
    return send_nb(buf, count, dt, dest, tag, comm, 0, request, "MPI_Irsend");
}

/* ---- receives ------------------------------------------------------------ */

LOCUS_PMPI_WEAK(Recv)
int PMPI_Recv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm_h,
              MPI_Status *status)
{
    if (__builtin_expect(locus_mpi.state != 1, 0))
        locus_mpi_not_active("MPI_Recv");
    locus_comm_t *comm = locus_comm_of(comm_h);
    int err = locus_check_p2p(buf, count, dt, source, tag, comm, 1);
    if (__builtin_expect(err != MPI_SUCCESS, 0))
        return locus_mpi_err(comm, err, "MPI_Recv");
    if (source == MPI_PROC_NULL) {
        locus_status_empty(status, MPI_PROC_NULL);
        return MPI_SUCCESS;
    }
    locus_req_t *r = req_new();
    if (!r)
        return locus_mpi_err(comm, MPI_ERR_NO_MEM, "MPI_Recv");
    locus_p2p_irecv(buf, (size_t)count, locus_dt_of(dt), source, tag, comm, comm->ctx_p2p, r);
    err = locus_p2p_finish(r, status);
    return err ? locus_mpi_err(comm, err, "MPI_Recv") : MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Irecv)
int PMPI_Irecv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm_h,
               MPI_Request *request)
{
    LOCUS_CHECK_INIT("MPI_Irecv");
    locus_comm_t *comm = locus_comm_of(comm_h);
    int err = locus_check_p2p(buf, count, dt, source, tag, comm, 1);
    if (err == MPI_SUCCESS && !request)
        err = MPI_ERR_ARG;
    if (err != MPI_SUCCESS)
        return locus_mpi_err(comm, err, "MPI_Irecv");
    locus_req_t *r = req_new();
    if (!r)
        return locus_mpi_err(comm, MPI_ERR_NO_MEM, "MPI_Irecv");
    if (source == MPI_PROC_NULL) {
        r->kind = LOCUS_REQ_RECV;
        r->st_source = MPI_PROC_NULL;
        r->st_tag = MPI_ANY_TAG;
        r->done = 1;
    } else {
        locus_p2p_irecv(buf, (size_t)count, locus_dt_of(dt), source, tag, comm, comm->ctx_p2p,
                        r);
    }
    req_own(r, comm);
    *request = locus_req_handle(r);
    return MPI_SUCCESS;
}

/* The exchange of MPI_Sendrecv with arguments checked and counts of any
 * size (MPI_Sendrecv_replace sends more than INT_MAX bytes through it). */
static int sendrecv(const void *sbuf, size_t scount, locus_dtype_t *sdt, int dest, int stag,
                    void *rbuf, size_t rcount, locus_dtype_t *rdt, int source, int rtag,
                    locus_comm_t *comm, MPI_Status *status)
{
    locus_req_t *rr = NULL, *sr = NULL;
    if (source != MPI_PROC_NULL) {
        if (!(rr = req_new()))
            return MPI_ERR_NO_MEM;
        locus_p2p_irecv(rbuf, rcount, rdt, source, rtag, comm, comm->ctx_p2p, rr);
    } else {
        locus_status_empty(status, MPI_PROC_NULL);
    }
    int serr = MPI_SUCCESS, err = MPI_SUCCESS;
    if (dest != MPI_PROC_NULL) {
        serr = (sr = req_new()) ? MPI_SUCCESS : MPI_ERR_NO_MEM;
        if (serr == MPI_SUCCESS)
            serr = locus_p2p_isend(sbuf, scount, sdt, dest, stag, comm, comm->ctx_p2p, 0, sr);
        if (serr == MPI_SUCCESS)
            serr = locus_p2p_finish(sr, NULL);
        else if (sr)
            locus_core_req_put(locus_core(), sr);
    }
    if (rr) {
        if (serr != MPI_SUCCESS && !rr->done)
            locus_core_cancel(locus_core(), rr);
        err = locus_p2p_finish(rr, status);
    }
    return serr != MPI_SUCCESS ? serr : err;
}

LOCUS_PMPI_WEAK(Sendrecv)
int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                  int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                  int recvtag, MPI_Comm comm_h, MPI_Status *status)
{
    LOCUS_CHECK_INIT("MPI_Sendrecv");
    locus_comm_t *comm = locus_comm_of(comm_h);
    int err = locus_check_p2p(sendbuf, sendcount, sendtype, dest, sendtag, comm, 0);
    if (err == MPI_SUCCESS)
        err = locus_check_p2p(recvbuf, recvcount, recvtype, source, recvtag, comm, 1);
    if (err == MPI_SUCCESS)
        err = sendrecv(sendbuf, (size_t)sendcount, locus_dt_of(sendtype), dest, sendtag, recvbuf,
                       (size_t)recvcount, locus_dt_of(recvtype), source, recvtag, comm, status);
    return err ? locus_mpi_err(comm, err, "MPI_Sendrecv") : MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Sendrecv_replace)
int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dtype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm_h, MPI_Status *status)
{
    LOCUS_CHECK_INIT("MPI_Sendrecv_replace");
    locus_comm_t *comm = locus_comm_of(comm_h);
    locus_dtype_t *dt = locus_dt_of(dtype);
    int err = locus_check_p2p(buf, count, dtype, dest, sendtag, comm, 0);
    if (err == MPI_SUCCESS)
        err = locus_check_p2p(buf, count, dtype, source, recvtag, comm, 1);
    if (err != MPI_SUCCESS)
        return locus_mpi_err(comm, err, "MPI_Sendrecv_replace");
    /* Pack the outgoing data first: the receive overwrites buf. */
    size_t len = (size_t)count * locus_dtype_size(dt);
    void *copy = len ? malloc(len) : NULL;
    if (len && !copy)
        return locus_mpi_err(comm, MPI_ERR_NO_MEM, "MPI_Sendrecv_replace");
    if (len)
        locus_dtype_pack(buf, (size_t)count, dt, 0, copy, len);
    err = sendrecv(copy, len, locus_dtype_basic(LOCUS_EL_BYTE), dest, sendtag, buf,
                   (size_t)count, dt, source, recvtag, comm, status);
    free(copy);
    return err ? locus_mpi_err(comm, err, "MPI_Sendrecv_replace") : MPI_SUCCESS;
}

/* ---- probes and counts --------------------------------------------------- */

static int probe_check(int source, int tag, locus_comm_t *comm)
{
    if (!locus_comm_valid(comm))
        return MPI_ERR_COMM;
    if (tag < 0 && tag != MPI_ANY_TAG)
        return MPI_ERR_TAG;
    if (source != MPI_PROC_NULL && source != MPI_ANY_SOURCE &&
        (source < 0 || source >= comm->coll.size))
        return MPI_ERR_RANK;
    return MPI_SUCCESS;
}

static int probe_once(int source, int tag, locus_comm_t *comm, MPI_Status *status)
{
    int src, t;
    size_t bytes;
    if (!locus_core_iprobe(locus_core(), comm->ctx_p2p,
                           source == MPI_ANY_SOURCE ? LOCUS_ANY : source,
                           tag == MPI_ANY_TAG ? LOCUS_ANY : tag, &src, &t, &bytes))
        return 0;
    if (status) {
        status->MPI_SOURCE = src;
        status->MPI_TAG = t;
        status->MPI_ERROR = MPI_SUCCESS;
        locus_status_set_bytes(status, bytes);
        LOCUS_STATUS_CANCELLED(status) = 0;
    }
    return 1;
}

LOCUS_PMPI_WEAK(Iprobe)
int PMPI_Iprobe(int source, int tag, MPI_Comm comm_h, int *flag, MPI_Status *status)
{
    LOCUS_CHECK_INIT("MPI_Iprobe");
    locus_comm_t *comm = locus_comm_of(comm_h);
    int err = probe_check(source, tag, comm);
    if (err == MPI_SUCCESS && !flag)
        err = MPI_ERR_ARG;
    if (err != MPI_SUCCESS)
        return locus_mpi_err(comm, err, "MPI_Iprobe");
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        locus_status_empty(status, MPI_PROC_NULL);
        return MPI_SUCCESS;
    }
    *flag = probe_once(source, tag, comm, status);
    if (!*flag) {
        if (locus_core_progress(locus_core()) < 0)
            return locus_mpi_err(comm, MPI_ERR_OTHER, "MPI_Iprobe");
        *flag = probe_once(source, tag, comm, status);
    }
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Probe)
int PMPI_Probe(int source, int tag, MPI_Comm comm_h, MPI_Status *status)
{
    LOCUS_CHECK_INIT("MPI_Probe");
    locus_comm_t *comm = locus_comm_of(comm_h);
    int err = probe_check(source, tag, comm);
    if (err != MPI_SUCCESS)
        return locus_mpi_err(comm, err, "MPI_Probe");
    if (source == MPI_PROC_NULL) {
        locus_status_empty(status, MPI_PROC_NULL);
        return MPI_SUCCESS;
    }
    locus_core_t *c = locus_core();
    while (!probe_once(source, tag, comm, status)) {
        int n = locus_core_progress(c);
        if (n < 0)
            return locus_mpi_err(comm, MPI_ERR_OTHER, "MPI_Probe");
        if (n == 0)
            locus_core_idle(c);
    }
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Get_count)
int PMPI_Get_count(const MPI_Status *status, MPI_Datatype dt, int *count)
{
    if (!status || !count)
        return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_Get_count");
    if (locus_check_dtype(dt) != MPI_SUCCESS)
        return locus_mpi_err(NULL, MPI_ERR_TYPE, "MPI_Get_count");
    size_t sz = locus_dtype_size(locus_dt_of(dt)), bytes = locus_status_bytes(status);
    if (sz == 0)
        *count = bytes == 0 ? 0 : MPI_UNDEFINED;
    else if (bytes % sz != 0 || bytes / sz > 0x7fffffff)
        *count = MPI_UNDEFINED;
    else
        *count = (int)(bytes / sz);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Get_elements)
int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype dt, int *count)
{
    if (!status || !count)
        return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_Get_elements");
    if (locus_check_dtype(dt) != MPI_SUCCESS)
        return locus_mpi_err(NULL, MPI_ERR_TYPE, "MPI_Get_elements");
    long n = locus_dtype_count_elements(locus_dt_of(dt), locus_status_bytes(status));
    *count = (n < 0 || n > 0x7fffffff) ? MPI_UNDEFINED : (int)n;
    return MPI_SUCCESS;
}
