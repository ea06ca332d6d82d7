/*
 * Point-to-point: sends in every mode, receives and probes, blocking and
 * nonblocking, each with an int count and as its `_c` form (generated).
 * Send-receive is in p2p_sendrecv.c, persistent requests in
 * p2p_persist.c, statuses and counts in req_status.c.
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

#include "pt2pt.h"

/*
 * The status fillers below do not write MPI_ERROR for a message: a call
 * that returns one status returns its error code as well, and MPI-4.1
 * (3.2.5) leaves the field as the caller set it. Only the multiple-
 * completion calls write it, through req_status_error() and only when they
 * return MPI_ERR_IN_STATUS. The one exception is the empty status (of a
 * null or inactive request), which MPI defines with MPI_SUCCESS in it.
 */
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
    LOCUS_STATUS_CANCELLED(st) = r->st_cancelled;
}

void locus_status_clear(MPI_Status *st, int source)
{
    if (!st)
        return;
    st->MPI_SOURCE = source;
    st->MPI_TAG = MPI_ANY_TAG;
    locus_status_set_bytes(st, 0);
    LOCUS_STATUS_CANCELLED(st) = 0;
}

void locus_status_empty(MPI_Status *st, int source)
{
    locus_status_clear(st, source);
    if (st)
        st->MPI_ERROR = MPI_SUCCESS;
}

/* Where the data of a contiguous type starts in buf (its true lower bound). */
static inline char *contig_start(const void *buf, const locus_dtype_t *dt)
{
    ptrdiff_t lb, ext;
    locus_dtype_true_extent(dt, &lb, &ext);
    return (char *)buf + lb;
}

/* The wire header of a message from me on comm. */
static inline locus_hdr_t p2p_hdr(const locus_comm_t *comm, uint32_t ctx, int tag,
                                  uint32_t flags)
{
    return (locus_hdr_t){ .ctx = ctx, .src = comm->coll.rank, .tag = tag, .flags = flags };
}

int locus_p2p_isend(const void *buf, size_t count, locus_dtype_t *dt, int dest, int tag,
                    locus_comm_t *comm, uint32_t ctx, uint32_t flags, locus_req_t *r)
{
    size_t len = count * locus_dtype_size(dt);
    r->kind = LOCUS_REQ_SEND;
    r->world = comm->world_of[dest];
    /* Field by field: a whole-struct copy was built on the stack and
     * reloaded as one 16-byte word, which waits for its 4-byte stores to
     * retire (a stalled store forward, a third of an 8-message window's
     * sending time in perf). */
    r->hdr.ctx = ctx;
    r->hdr.src = comm->coll.rank;
    r->hdr.tag = tag;
    r->hdr.flags = flags;
    r->hdr.sreq = 0;
    r->hdrlen = flags ? sizeof r->hdr : LOCUS_HDR_SHORT;
    r->len = len;
    if (__builtin_expect(locus_dtype_is_contig(dt), 1)) {
        r->sbuf = contig_start(buf, dt);
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

void locus_p2p_recv_prep(void *buf, size_t count, locus_dtype_t *dt, int src, int tag,
                         uint32_t ctx, locus_req_t *r)
{
    r->kind = LOCUS_REQ_RECV;
    r->ctx = ctx;
    r->rank = src == MPI_ANY_SOURCE ? LOCUS_ANY : src;
    r->tag = tag == MPI_ANY_TAG ? LOCUS_ANY : tag;
    r->len = count * locus_dtype_size(dt);
    if (__builtin_expect(locus_dtype_is_contig(dt), 1)) {
        r->rbuf = contig_start(buf, dt);
    } else {
        r->ubuf = buf;
        r->ucount = count;
        r->udt = dt;
    }
}

void locus_p2p_irecv(void *buf, size_t count, locus_dtype_t *dt, int src, int tag,
                     locus_comm_t *comm, uint32_t ctx, locus_req_t *r)
{
    (void)comm;
    locus_p2p_recv_prep(buf, count, dt, src, tag, ctx, r);
    locus_core_irecv(locus_core(), r);
}

int locus_p2p_finish(locus_req_t *r, MPI_Status *status)
{
    locus_core_t *c = locus_core();
    if (!r->done && locus_core_wait(c, r) != 0) {
        locus_core_abandon(c, r);
        locus_status_clear(status, MPI_ANY_SOURCE);   /* the return code says what failed */
        return MPI_ERR_OTHER;
    }
    locus_status_set(status, r);
    int err = r->st_error;
    locus_core_req_put(c, r);
    return err;
}

/* ---- checks and starts (pt2pt.h) -------------------------------------------- */

int p2p_check_size(MPI_Count count, MPI_Datatype dt)
{
    size_t bytes;
    if (count < 0)
        return MPI_ERR_COUNT;
    if (__builtin_mul_overflow((size_t)count, locus_dtype_size(locus_dt_of(dt)), &bytes) ||
        bytes > PTRDIFF_MAX)
        return MPI_ERR_COUNT;
    return MPI_SUCCESS;
}

int p2p_check(const void *buf, MPI_Count count, MPI_Datatype dt, int peer, int tag,
              const locus_comm_t *c, int is_recv)
{
    int err = locus_check_p2p(buf, p2p_count_arg(count), dt, peer, tag, c, is_recv);
    if (__builtin_expect(err == MPI_SUCCESS && count > 0, 1))
        err = p2p_check_size(count, dt);
    return err;
}

int p2p_send_start(const void *buf, size_t count, locus_dtype_t *dt, int dest, int tag,
                   locus_comm_t *comm, int mode, locus_req_t **out)
{
    *out = NULL;
    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (mode == P2P_BUFFERED)
        return locus_bsend_start(buf, count, dt, dest, tag, comm);
    locus_req_t *r = locus_core_req_get(locus_core());
    if (!r)
        return MPI_ERR_NO_MEM;
    /* Ready mode: the receive is posted already, so a standard send is exact. */
    int err = locus_p2p_isend(buf, count, dt, dest, tag, comm, comm->ctx_p2p,
                              mode == P2P_SYNC ? LOCUS_HDR_SYNC : 0, r);
    if (err != MPI_SUCCESS) {
        locus_core_req_put(locus_core(), r);
        return err;
    }
    *out = r;
    return MPI_SUCCESS;
}

int p2p_recv_start(void *buf, size_t count, locus_dtype_t *dt, int source, int tag,
                   locus_comm_t *comm, locus_req_t **out)
{
    *out = NULL;
    if (source == MPI_PROC_NULL)
        return MPI_SUCCESS;
    locus_req_t *r = locus_core_req_get(locus_core());
    if (!r)
        return MPI_ERR_NO_MEM;
    locus_p2p_irecv(buf, count, dt, source, tag, comm, comm->ctx_p2p, r);
    *out = r;
    return MPI_SUCCESS;
}

/* ---- sends --------------------------------------------------------------------- */

static int send_blocking(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag,
                         MPI_Comm comm_h, int mode, const char *fn)
{
    if (__builtin_expect(locus_mpi.state != 1, 0))
        locus_mpi_not_active(fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    int err = p2p_check(buf, count, dt, dest, tag, comm, 0);
    if (__builtin_expect(err != MPI_SUCCESS, 0))
        return locus_mpi_err(comm, err, fn);
    locus_dtype_t *d = locus_dt_of(dt);
    /* A small contiguous message the transport takes at once needs no
     * request: on 2 ranks of the EPYC VM an 8-byte ping-pong took 0.108-
     * 0.111 us one way so, 0.130-0.132 with one (Open MPI 0.156-0.168). */
    if ((mode == P2P_STANDARD || mode == P2P_READY) && dest != MPI_PROC_NULL &&
        locus_dtype_is_contig(d)) {
        locus_hdr_t h = p2p_hdr(comm, comm->ctx_p2p, tag, 0);
        if (locus_core_send_now(locus_core(), comm->world_of[dest], &h, LOCUS_HDR_SHORT,
                                contig_start(buf, d), (size_t)count * locus_dtype_size(d)))
            return MPI_SUCCESS;
    }
    locus_req_t *r;
    err = p2p_send_start(buf, (size_t)count, d, dest, tag, comm, mode, &r);
    if (err == MPI_SUCCESS && r)
        err = locus_p2p_finish(r, NULL);
    return err ? locus_mpi_err(comm, err, fn) : MPI_SUCCESS;
}

/* A request for the user that is complete already (MPI_PROC_NULL, a
 * buffered send); a receive's status names MPI_PROC_NULL. */
static locus_req_t *req_done_new(int kind)
{
    locus_req_t *r = locus_core_req_get(locus_core());
    if (r) {
        r->kind = (uint8_t)kind;
        r->st_source = MPI_PROC_NULL;
        r->st_tag = MPI_ANY_TAG;
        r->done = 1;
    }
    return r;
}

/* Makes r the user's: it names comm (its error handler) and holds a
 * reference on it until the core recycles it. */
static void req_own(locus_req_t *r, locus_comm_t *comm, MPI_Request *request)
{
    r->comm = comm;
    locus_comm_retain(comm);
    *request = locus_req_handle(r);
}

static int send_nb(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag,
                   MPI_Comm comm_h, int mode, MPI_Request *request, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    int err = p2p_check(buf, count, dt, dest, tag, comm, 0);
    if (err == MPI_SUCCESS && !request)
        err = MPI_ERR_ARG;
    locus_req_t *r = NULL;
    if (err == MPI_SUCCESS)
        err = p2p_send_start(buf, (size_t)count, locus_dt_of(dt), dest, tag, comm, mode, &r);
    if (err == MPI_SUCCESS && !r && !(r = req_done_new(LOCUS_REQ_SEND)))
        err = MPI_ERR_NO_MEM;
    if (err != MPI_SUCCESS)
        return locus_mpi_err(comm, err, fn);
    req_own(r, comm, request);
    return MPI_SUCCESS;
}

/* MPI_Send, MPI_Isend, MPI_Send_init and the other modes' (generated, with
 * their _c forms): one implementation. */
int locus_send_impl(int mode, locus_how_t how, const void *buf, MPI_Count count, MPI_Datatype dt,
                    int dest, int tag, MPI_Comm comm, MPI_Request *request, const char *fn)
{
    if (how == LOCUS_HOW_BLOCKING)
        return send_blocking(buf, count, dt, dest, tag, comm, mode, fn);
    if (how == LOCUS_HOW_NONBLOCKING)
        return send_nb(buf, count, dt, dest, tag, comm, mode, request, fn);
    return p2p_persist_init(buf, count, dt, dest, tag, comm, mode, request, fn);
}

/* ---- receives ------------------------------------------------------------ */

static int recv_blocking(void *buf, MPI_Count count, MPI_Datatype dt, int source, int tag,
                         MPI_Comm comm_h, MPI_Status *status, const char *fn)
{
    if (__builtin_expect(locus_mpi.state != 1, 0))
        locus_mpi_not_active(fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    int err = p2p_check(buf, count, dt, source, tag, comm, 1);
    if (__builtin_expect(err != MPI_SUCCESS, 0))
        return locus_mpi_err(comm, err, fn);
    locus_req_t *r;
    err = p2p_recv_start(buf, (size_t)count, locus_dt_of(dt), source, tag, comm, &r);
    if (err == MPI_SUCCESS && r)
        err = locus_p2p_finish(r, status);
    else if (err == MPI_SUCCESS)
        p2p_status_null(status);
    return err ? locus_mpi_err(comm, err, fn) : MPI_SUCCESS;
}

static int recv_nb(void *buf, MPI_Count count, MPI_Datatype dt, int source, int tag,
                   MPI_Comm comm_h, MPI_Request *request, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    int err = p2p_check(buf, count, dt, source, tag, comm, 1);
    if (err == MPI_SUCCESS && !request)
        err = MPI_ERR_ARG;
    locus_req_t *r = NULL;
    if (err == MPI_SUCCESS)
        err = p2p_recv_start(buf, (size_t)count, locus_dt_of(dt), source, tag, comm, &r);
    if (err == MPI_SUCCESS && !r && !(r = req_done_new(LOCUS_REQ_RECV)))
        err = MPI_ERR_NO_MEM;
    if (err != MPI_SUCCESS)
        return locus_mpi_err(comm, err, fn);
    req_own(r, comm, request);
    return MPI_SUCCESS;
}

int locus_recv_impl(locus_how_t how, void *buf, MPI_Count count, MPI_Datatype dt, int source,
                    int tag, MPI_Comm comm, MPI_Status *status, MPI_Request *request,
                    const char *fn)
{
    if (how == LOCUS_HOW_BLOCKING)
        return recv_blocking(buf, count, dt, source, tag, comm, status, fn);
    if (how == LOCUS_HOW_NONBLOCKING)
        return recv_nb(buf, count, dt, source, tag, comm, request, fn);
    return p2p_persist_init(buf, count, dt, source, tag, comm, P2P_RECV, request, fn);
}

/* ---- probes ----------------------------------------------------------- */

void p2p_status_probed(MPI_Status *status, int src, int tag, size_t bytes)
{
    if (status) {
        status->MPI_SOURCE = src;
        status->MPI_TAG = tag;
        locus_status_set_bytes(status, bytes);
        LOCUS_STATUS_CANCELLED(status) = 0;
    }
}

int p2p_probe_check(int source, int tag, const locus_comm_t *comm)
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
    p2p_status_probed(status, src, t, bytes);
    return 1;
}

LOCUS_PMPI_WEAK(Iprobe)
int PMPI_Iprobe(int source, int tag, MPI_Comm comm_h, int *flag, MPI_Status *status)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Iprobe");
    locus_comm_t *comm = locus_comm_of(comm_h);
    int err = p2p_probe_check(source, tag, comm);
    if (err == MPI_SUCCESS && !flag)
        err = MPI_ERR_ARG;
    if (err != MPI_SUCCESS)
        return locus_mpi_err(comm, err, "MPI_Iprobe");
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        locus_status_clear(status, MPI_PROC_NULL);
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
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Probe");
    locus_comm_t *comm = locus_comm_of(comm_h);
    int err = p2p_probe_check(source, tag, comm);
    if (err != MPI_SUCCESS)
        return locus_mpi_err(comm, err, "MPI_Probe");
    if (source == MPI_PROC_NULL) {
        locus_status_clear(status, MPI_PROC_NULL);
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

/* ---- profiling control ------------------------------------------------------ */

/* Locus has no profiling levels of its own: a tool that interposes
 * MPI_Pcontrol sees the call; the library accepts any level (MPI allows a
 * no-op). */
LOCUS_PMPI_WEAK(Pcontrol)
int PMPI_Pcontrol(const int level, ...)
{
    LOCUS_ENTRY_CS();
    (void)level;
    LOCUS_CHECK_INIT("MPI_Pcontrol");
    return MPI_SUCCESS;
}
