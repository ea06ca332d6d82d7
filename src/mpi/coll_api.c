/*
 * coll_api.c — the MPI collective calls with one root or a reduction:
 * barrier, bcast, reduce, allreduce, reduce_scatter(_block), scan, exscan,
 * blocking and nonblocking. Each checks its arguments and hands the work to
 * the collective layer (src/coll); the blocking and nonblocking forms share
 * one function, the request pointer telling them apart.
 */
#include <limits.h>
#include <stdlib.h>

#include "coll_api.h"

int coll_check_part(const void *buf, int count, MPI_Datatype dt)
{
    int rc = locus_check_count(count);
    if (rc == MPI_SUCCESS)
        rc = locus_check_dtype(dt);
    if (rc == MPI_SUCCESS)
        rc = locus_check_buf(buf, count, dt);
    return rc;
}

int coll_check_counts(const int *counts, const int *displs, int p, MPI_Datatype dt,
                      const void *buf)
{
    if (!counts || !displs)
        return MPI_ERR_ARG;
    int rc = locus_check_dtype(dt);
    for (int i = 0; i < p && rc == MPI_SUCCESS; i++)
        rc = coll_check_part(buf, counts[i], dt);
    return rc;
}

int coll_check_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                      int root, const locus_comm_t *comm)
{
    int rc = locus_check_count(count);
    if (rc == MPI_SUCCESS)
        rc = locus_check_dtype(dt);
    if (rc == MPI_SUCCESS) {
        locus_op_t *o = locus_op_of(op);
        rc = o ? locus_op_check(o, locus_dt_of(dt)) : MPI_ERR_OP;
    }
    int receives = root < 0 || comm->coll.rank == root;
    if (rc == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        rc = locus_check_buf(sbuf, count, dt);
    if (rc == MPI_SUCCESS && receives)
        rc = locus_check_buf(rbuf, count, dt);
    /* Sending from the receive buffer is only legal as MPI_IN_PLACE. */
    if (rc == MPI_SUCCESS && count > 0 && sbuf == rbuf && receives)
        rc = MPI_ERR_BUFFER;
    return rc;
}

size_t *coll_counts_convert(const int *counts, const int *displs, int p, ptrdiff_t **out_displs)
{
    size_t *c = malloc((sizeof(size_t) + sizeof(ptrdiff_t)) * (size_t)(p > 0 ? p : 1));
    if (!c)
        return NULL;
    ptrdiff_t *d = (ptrdiff_t *)(c + p);
    for (int i = 0; i < p; i++) {
        c[i] = (size_t)counts[i];
        d[i] = displs ? displs[i] : 0;
    }
    if (out_displs)
        *out_displs = d;
    return c;
}

/* ---- barrier, bcast ---- */

static int barrier_run(MPI_Comm comm_h, MPI_Request *req, int nb, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    int rc = locus_check_comm(comm);
    COLL_CHECK_REQ(rc, nb, req);
    if (rc == MPI_SUCCESS)
        COLL_RUN(rc, req, comm, barrier, &comm->coll);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : locus_mpi_err(comm, rc, fn);
}

LOCUS_PMPI_WEAK(Barrier)
int PMPI_Barrier(MPI_Comm comm)
{
    return barrier_run(comm, NULL, 0, "MPI_Barrier");
}

LOCUS_PMPI_WEAK(Ibarrier)
int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    return barrier_run(comm, request, 1, "MPI_Ibarrier");
}

static int bcast_run(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm_h,
                     MPI_Request *req, int nb, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    int rc = locus_check_comm(comm);
    if (rc == MPI_SUCCESS)
        rc = locus_check_root(comm, root);
    if (rc == MPI_SUCCESS)
        rc = coll_check_part(buf, count, dt);
    COLL_CHECK_REQ(rc, nb, req);
    if (rc == MPI_SUCCESS)
        COLL_RUN(rc, req, comm, bcast, buf, (size_t)count, locus_dt_of(dt), root, &comm->coll);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : locus_mpi_err(comm, rc, fn);
}

LOCUS_PMPI_WEAK(Bcast)
int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return bcast_run(buffer, count, datatype, root, comm, NULL, 0, "MPI_Bcast");
}

LOCUS_PMPI_WEAK(Ibcast)
int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                MPI_Request *request)
{
    return bcast_run(buffer, count, datatype, root, comm, request, 1, "MPI_Ibcast");
}

/* ---- reduce, allreduce ---- */

/* root < 0: an allreduce. */
static int reduce_run(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                      int root, MPI_Comm comm_h, MPI_Request *req, int nb, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    int all = root < 0, rc = locus_check_comm(comm);
    if (rc == MPI_SUCCESS && !all)
        rc = locus_check_root(comm, root);
    if (rc == MPI_SUCCESS)
        rc = coll_check_reduce(sbuf, rbuf, count, dt, op, root, comm);
    if (rc == MPI_SUCCESS && !all && sbuf == MPI_IN_PLACE && comm->coll.rank != root)
        rc = MPI_ERR_BUFFER;
    COLL_CHECK_REQ(rc, nb, req);
    if (rc == MPI_SUCCESS && !all)
        COLL_RUN(rc, req, comm, reduce, sbuf, rbuf, (size_t)count, locus_dt_of(dt), locus_op_of(op), root,
                 &comm->coll);
    else if (rc == MPI_SUCCESS)
        COLL_RUN(rc, req, comm, allreduce, sbuf, rbuf, (size_t)count, locus_dt_of(dt), locus_op_of(op),
                 &comm->coll);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : locus_mpi_err(comm, rc, fn);
}

/* A negative root of MPI_Reduce is MPI_ERR_ROOT, not "every rank". */
static int reduce_root(int root)
{
    return root < 0 ? INT_MAX : root;
}

LOCUS_PMPI_WEAK(Reduce)
int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm)
{
    return reduce_run(sendbuf, recvbuf, count, datatype, op, reduce_root(root), comm, NULL, 0,
                      "MPI_Reduce");
}

LOCUS_PMPI_WEAK(Ireduce)
int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                 MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
    return reduce_run(sendbuf, recvbuf, count, datatype, op, reduce_root(root), comm, request,
                      1, "MPI_Ireduce");
}

LOCUS_PMPI_WEAK(Allreduce)
int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm)
{
    return reduce_run(sendbuf, recvbuf, count, datatype, op, -1, comm, NULL, 0,
                      "MPI_Allreduce");
}

LOCUS_PMPI_WEAK(Iallreduce)
int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return reduce_run(sendbuf, recvbuf, count, datatype, op, -1, comm, request, 1,
                      "MPI_Iallreduce");
}

/* ---- reduce_scatter, reduce_scatter_block ---- */

static int redscat_run(const void *sbuf, void *rbuf, const int *rcounts, int rcount,
                       MPI_Datatype dt, MPI_Op op, MPI_Comm comm_h, MPI_Request *req, int nb,
                       const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    int rc = locus_check_comm(comm);
    if (rc == MPI_SUCCESS && rcounts) {
        for (int i = 0; rc == MPI_SUCCESS && i < comm->coll.size; i++)
            rc = locus_check_count(rcounts[i]);
        rcount = rc == MPI_SUCCESS ? rcounts[comm->coll.rank] : 0;
    } else if (rc == MPI_SUCCESS && !rcounts && rcount < 0) {
        rc = MPI_ERR_COUNT;
    }
    if (rc == MPI_SUCCESS)
        rc = coll_check_reduce(sbuf, rbuf, rcount, dt, op, -1, comm);
    COLL_CHECK_REQ(rc, nb, req);
    if (rc == MPI_SUCCESS && rcounts) {
        size_t *cnt = coll_counts_convert(rcounts, NULL, comm->coll.size, NULL);
        if (!cnt)
            rc = MPI_ERR_NO_MEM;
        else
            COLL_RUN(rc, req, comm, reduce_scatter, sbuf, rbuf, cnt, locus_dt_of(dt), locus_op_of(op),
                     &comm->coll);
        free(cnt);
    } else if (rc == MPI_SUCCESS) {
        COLL_RUN(rc, req, comm, reduce_scatter_block, sbuf, rbuf, (size_t)rcount, locus_dt_of(dt),
                 locus_op_of(op), &comm->coll);
    }
    return rc == MPI_SUCCESS ? MPI_SUCCESS : locus_mpi_err(comm, rc, fn);
}

LOCUS_PMPI_WEAK(Reduce_scatter)
int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if (!recvcounts)
        return locus_mpi_err(locus_comm_of(comm), MPI_ERR_ARG, "MPI_Reduce_scatter");
    return redscat_run(sendbuf, recvbuf, recvcounts, 0, datatype, op, comm, NULL, 0,
                       "MPI_Reduce_scatter");
}

LOCUS_PMPI_WEAK(Ireduce_scatter)
int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    if (!recvcounts)
        return locus_mpi_err(locus_comm_of(comm), MPI_ERR_ARG, "MPI_Ireduce_scatter");
    return redscat_run(sendbuf, recvbuf, recvcounts, 0, datatype, op, comm, request, 1,
                       "MPI_Ireduce_scatter");
}

LOCUS_PMPI_WEAK(Reduce_scatter_block)
int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return redscat_run(sendbuf, recvbuf, NULL, recvcount, datatype, op, comm, NULL, 0,
                       "MPI_Reduce_scatter_block");
}

LOCUS_PMPI_WEAK(Ireduce_scatter_block)
int PMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                               MPI_Request *request)
{
    return redscat_run(sendbuf, recvbuf, NULL, recvcount, datatype, op, comm, request, 1,
                       "MPI_Ireduce_scatter_block");
}

/* ---- scan, exscan ---- */

static int scan_run(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                    int exclusive, MPI_Comm comm_h, MPI_Request *req, int nb, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    int rc = locus_check_comm(comm);
    if (rc == MPI_SUCCESS)
        rc = coll_check_reduce(sbuf, rbuf, count, dt, op, -1, comm);
    COLL_CHECK_REQ(rc, nb, req);
    if (rc == MPI_SUCCESS && exclusive)
        COLL_RUN(rc, req, comm, exscan, sbuf, rbuf, (size_t)count, locus_dt_of(dt), locus_op_of(op),
                 &comm->coll);
    else if (rc == MPI_SUCCESS)
        COLL_RUN(rc, req, comm, scan, sbuf, rbuf, (size_t)count, locus_dt_of(dt), locus_op_of(op),
                 &comm->coll);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : locus_mpi_err(comm, rc, fn);
}

LOCUS_PMPI_WEAK(Scan)
int PMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm)
{
    return scan_run(sendbuf, recvbuf, count, datatype, op, 0, comm, NULL, 0, "MPI_Scan");
}

LOCUS_PMPI_WEAK(Iscan)
int PMPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm, MPI_Request *request)
{
    return scan_run(sendbuf, recvbuf, count, datatype, op, 0, comm, request, 1, "MPI_Iscan");
}

LOCUS_PMPI_WEAK(Exscan)
int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm)
{
    return scan_run(sendbuf, recvbuf, count, datatype, op, 1, comm, NULL, 0, "MPI_Exscan");
}

LOCUS_PMPI_WEAK(Iexscan)
int PMPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                 MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return scan_run(sendbuf, recvbuf, count, datatype, op, 1, comm, request, 1, "MPI_Iexscan");
}
