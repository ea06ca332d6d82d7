/*
 * coll_api_gather.c — the MPI collective calls that move blocks: gather(v),
 * scatter(v), allgather(v), alltoall(v,w), blocking and nonblocking. The
 * v forms' int counts and displacements are converted to the collective
 * layer's sizes for the call (the layer keeps nothing of them).
 */
#include <stdlib.h>
#include <string.h>

#include "coll_api.h"

/* Forms of a call: nonblocking, v (per-rank counts). */
enum { COLL_NB = 1, COLL_V = 2 };

#define API_END(rc, comm, fn) return (rc) == MPI_SUCCESS ? MPI_SUCCESS : locus_mpi_err(comm, rc, fn)

/* ---- gather, gatherv ---- */

static int gather_check(const void *sbuf, int scount, MPI_Datatype sdt, int root,
                        locus_comm_t *comm)
{
    int rc = locus_check_comm(comm);
    if (rc == MPI_SUCCESS)
        rc = locus_check_root(comm, root);
    if (rc == MPI_SUCCESS && !(comm->coll.rank == root && sbuf == MPI_IN_PLACE))
        rc = sbuf == MPI_IN_PLACE ? MPI_ERR_BUFFER : coll_check_part(sbuf, scount, sdt);
    return rc;
}

static int gather_run(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                      const int *rcounts, const int *displs, MPI_Datatype rdt, int root,
                      MPI_Comm comm_h, MPI_Request *req, int flags, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    int rc = gather_check(sbuf, scount, sdt, root, comm);
    int vform = flags & COLL_V, nb = flags & COLL_NB;
    if (rc == MPI_SUCCESS && comm->coll.rank == root)
        rc = vform ? coll_check_counts(rcounts, displs, comm->coll.size, rdt, rbuf)
                   : coll_check_part(rbuf, rcount, rdt);
    COLL_CHECK_REQ(rc, nb, req);
    if (rc != MPI_SUCCESS)
        API_END(rc, comm, fn);
    if (!vform) {
        COLL_RUN(rc, req, comm, gather, sbuf, (size_t)scount, locus_dt_of(sdt), rbuf, (size_t)rcount,
                 locus_dt_of(rdt),
                 root, &comm->coll);
        API_END(rc, comm, fn);
    }
    ptrdiff_t *d = NULL;
    size_t *c = comm->coll.rank == root ? coll_counts_convert(rcounts, displs, comm->coll.size, &d)
                                        : NULL;
    if (comm->coll.rank == root && !c)
        rc = MPI_ERR_NO_MEM;
    else
        COLL_RUN(rc, req, comm, gatherv, sbuf, (size_t)scount, locus_dt_of(sdt), rbuf, c, d,
                 locus_dt_of(rdt), root,
                 &comm->coll);
    free(c);
    API_END(rc, comm, fn);
}

LOCUS_PMPI_WEAK(Gather)
int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return gather_run(sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL, NULL, recvtype,
                      root, comm, NULL, 0, "MPI_Gather");
}

LOCUS_PMPI_WEAK(Igather)
int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    return gather_run(sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL, NULL, recvtype,
                      root, comm, request, COLL_NB, "MPI_Igather");
}

LOCUS_PMPI_WEAK(Gatherv)
int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm)
{
    return gather_run(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype,
                      root, comm, NULL, COLL_V, "MPI_Gatherv");
}

LOCUS_PMPI_WEAK(Igatherv)
int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                  MPI_Comm comm, MPI_Request *request)
{
    return gather_run(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype,
                      root, comm, request, COLL_NB | COLL_V, "MPI_Igatherv");
}

/* ---- scatter, scatterv ---- */

static int scatter_run(const void *sbuf, int scount, const int *scounts, const int *displs,
                       MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt, int root,
                       MPI_Comm comm_h, MPI_Request *req, int flags, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    int rc = locus_check_comm(comm), vform = flags & COLL_V, nb = flags & COLL_NB;
    if (rc == MPI_SUCCESS)
        rc = locus_check_root(comm, root);
    int me_root = rc == MPI_SUCCESS && comm->coll.rank == root;
    if (rc == MPI_SUCCESS && me_root)
        rc = vform ? coll_check_counts(scounts, displs, comm->coll.size, sdt, sbuf)
                   : coll_check_part(sbuf, scount, sdt);
    if (rc == MPI_SUCCESS && !(me_root && rbuf == MPI_IN_PLACE))
        rc = rbuf == MPI_IN_PLACE ? MPI_ERR_BUFFER : coll_check_part(rbuf, rcount, rdt);
    COLL_CHECK_REQ(rc, nb, req);
    if (rc != MPI_SUCCESS)
        API_END(rc, comm, fn);
    if (!vform) {
        COLL_RUN(rc, req, comm, scatter, sbuf, (size_t)scount, locus_dt_of(sdt), rbuf,
                 (size_t)rcount, locus_dt_of(rdt),
                 root, &comm->coll);
        API_END(rc, comm, fn);
    }
    ptrdiff_t *d = NULL;
    size_t *c = me_root ? coll_counts_convert(scounts, displs, comm->coll.size, &d) : NULL;
    if (me_root && !c)
        rc = MPI_ERR_NO_MEM;
    else
        COLL_RUN(rc, req, comm, scatterv, sbuf, c, d, locus_dt_of(sdt), rbuf, (size_t)rcount,
                 locus_dt_of(rdt), root,
                 &comm->coll);
    free(c);
    API_END(rc, comm, fn);
}

LOCUS_PMPI_WEAK(Scatter)
int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return scatter_run(sendbuf, sendcount, NULL, NULL, sendtype, recvbuf, recvcount, recvtype,
                       root, comm, NULL, 0, "MPI_Scatter");
}

LOCUS_PMPI_WEAK(Iscatter)
int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request *request)
{
    return scatter_run(sendbuf, sendcount, NULL, NULL, sendtype, recvbuf, recvcount, recvtype,
                       root, comm, request, COLL_NB, "MPI_Iscatter");
}

LOCUS_PMPI_WEAK(Scatterv)
int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm)
{
    return scatter_run(sendbuf, 0, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                       root, comm, NULL, COLL_V, "MPI_Scatterv");
}

LOCUS_PMPI_WEAK(Iscatterv)
int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                   MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm comm, MPI_Request *request)
{
    return scatter_run(sendbuf, 0, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                       root, comm, request, COLL_NB | COLL_V, "MPI_Iscatterv");
}

/* ---- allgather, allgatherv ---- */

static int allgather_run(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                         int rcount, const int *rcounts, const int *displs, MPI_Datatype rdt,
                         MPI_Comm comm_h, MPI_Request *req, int flags, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    int rc = locus_check_comm(comm), vform = flags & COLL_V, nb = flags & COLL_NB;
    if (rc == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        rc = coll_check_part(sbuf, scount, sdt);
    if (rc == MPI_SUCCESS)
        rc = vform ? coll_check_counts(rcounts, displs, comm->coll.size, rdt, rbuf)
                   : coll_check_part(rbuf, rcount, rdt);
    COLL_CHECK_REQ(rc, nb, req);
    if (rc != MPI_SUCCESS)
        API_END(rc, comm, fn);
    if (!vform) {
        COLL_RUN(rc, req, comm, allgather, sbuf, (size_t)scount, locus_dt_of(sdt), rbuf,
                 (size_t)rcount, locus_dt_of(rdt),
                 &comm->coll);
        API_END(rc, comm, fn);
    }
    ptrdiff_t *d;
    size_t *c = coll_counts_convert(rcounts, displs, comm->coll.size, &d);
    if (!c)
        rc = MPI_ERR_NO_MEM;
    else
        COLL_RUN(rc, req, comm, allgatherv, sbuf, (size_t)scount, locus_dt_of(sdt), rbuf, c, d,
                 locus_dt_of(rdt),
                 &comm->coll);
    free(c);
    API_END(rc, comm, fn);
}

LOCUS_PMPI_WEAK(Allgather)
int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return allgather_run(sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL, NULL, recvtype,
                         comm, NULL, 0, "MPI_Allgather");
}

LOCUS_PMPI_WEAK(Iallgather)
int PMPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return allgather_run(sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL, NULL, recvtype,
                         comm, request, COLL_NB, "MPI_Iallgather");
}

LOCUS_PMPI_WEAK(Allgatherv)
int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm)
{
    return allgather_run(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype,
                         comm, NULL, COLL_V, "MPI_Allgatherv");
}

LOCUS_PMPI_WEAK(Iallgatherv)
int PMPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     MPI_Comm comm, MPI_Request *request)
{
    return allgather_run(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype,
                         comm, request, COLL_NB | COLL_V, "MPI_Iallgatherv");
}

/* ---- alltoall, alltoallv, alltoallw ---- */

/* Per-peer blocks of the w form: counts, byte displacements, types. */
typedef struct {
    const void *sbuf;          /* the send side's buffer */
    void *rbuf;                /* the receive side's buffer */
    const int *counts, *displs;
    const MPI_Datatype *types;
} a2a_side_t;

static int a2a_side_check(const a2a_side_t *s, int p)
{
    if (!s->counts || !s->displs || !s->types)
        return MPI_ERR_ARG;
    int rc = MPI_SUCCESS;
    for (int i = 0; i < p && rc == MPI_SUCCESS; i++)
        rc = coll_check_part(s->sbuf ? s->sbuf : s->rbuf, s->counts[i], s->types[i]);
    return rc;
}

static int alltoallw_run(const a2a_side_t *snd, const a2a_side_t *rcv, MPI_Comm comm_h,
                         MPI_Request *req, int flags, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    int rc = locus_check_comm(comm), p = rc == MPI_SUCCESS ? comm->coll.size : 0, nb = flags;
    int in_place = snd->sbuf == MPI_IN_PLACE;
    if (rc == MPI_SUCCESS && !in_place)
        rc = a2a_side_check(snd, p);
    if (rc == MPI_SUCCESS)
        rc = a2a_side_check(rcv, p);
    COLL_CHECK_REQ(rc, nb, req);
    if (rc != MPI_SUCCESS)
        API_END(rc, comm, fn);
    ptrdiff_t *sd, *rd;
    size_t *sc = coll_counts_convert(in_place ? rcv->counts : snd->counts,
                                     in_place ? rcv->displs : snd->displs, p, &sd);
    size_t *rc_ = coll_counts_convert(rcv->counts, rcv->displs, p, &rd);
    /* The engine types of both sides' handles. */
    locus_dtype_t **st = malloc(2 * sizeof *st * (size_t)(p > 0 ? p : 1)), **rt = st + p;
    if (!sc || !rc_ || !st) {
        rc = MPI_ERR_NO_MEM;
    } else {
        for (int i = 0; i < p; i++) {
            st[i] = locus_dt_of(in_place ? rcv->types[i] : snd->types[i]);
            rt[i] = locus_dt_of(rcv->types[i]);
        }
        COLL_RUN(rc, req, comm, alltoallw, snd->sbuf, sc, sd, st, rcv->rbuf, rc_, rd, rt,
                 &comm->coll);
    }
    free(st);
    free(sc);
    free(rc_);
    API_END(rc, comm, fn);
}

LOCUS_PMPI_WEAK(Alltoallw)
int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    a2a_side_t s = { sendbuf, NULL, sendcounts, sdispls, sendtypes };
    a2a_side_t r = { NULL, recvbuf, recvcounts, rdispls, recvtypes };
    return alltoallw_run(&s, &r, comm, NULL, 0, "MPI_Alltoallw");
}

LOCUS_PMPI_WEAK(Ialltoallw)
int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                    MPI_Request *request)
{
    a2a_side_t s = { sendbuf, NULL, sendcounts, sdispls, sendtypes };
    a2a_side_t r = { NULL, recvbuf, recvcounts, rdispls, recvtypes };
    return alltoallw_run(&s, &r, comm, request, COLL_NB, "MPI_Ialltoallw");
}

static int alltoallv_run(const void *sbuf, int scount, const int *scounts, const int *sdispls,
                         MPI_Datatype sdt, void *rbuf, int rcount, const int *rcounts,
                         const int *rdispls, MPI_Datatype rdt, MPI_Comm comm_h, MPI_Request *req,
                         int flags, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    int rc = locus_check_comm(comm), vform = flags & COLL_V, nb = flags & COLL_NB;
    int p = rc == MPI_SUCCESS ? comm->coll.size : 0;
    if (rc == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        rc = vform ? coll_check_counts(scounts, sdispls, p, sdt, sbuf)
                   : coll_check_part(sbuf, scount, sdt);
    if (rc == MPI_SUCCESS)
        rc = vform ? coll_check_counts(rcounts, rdispls, p, rdt, rbuf)
                   : coll_check_part(rbuf, rcount, rdt);
    COLL_CHECK_REQ(rc, nb, req);
    if (rc != MPI_SUCCESS)
        API_END(rc, comm, fn);
    if (!vform) {
        COLL_RUN(rc, req, comm, alltoall, sbuf, (size_t)scount, locus_dt_of(sdt), rbuf,
                 (size_t)rcount, locus_dt_of(rdt),
                 &comm->coll);
        API_END(rc, comm, fn);
    }
    ptrdiff_t *sd = NULL, *rd;
    size_t *sc = sbuf != MPI_IN_PLACE ? coll_counts_convert(scounts, sdispls, p, &sd) : NULL;
    size_t *rc_ = coll_counts_convert(rcounts, rdispls, p, &rd);
    if ((sbuf != MPI_IN_PLACE && !sc) || !rc_)
        rc = MPI_ERR_NO_MEM;
    else
        COLL_RUN(rc, req, comm, alltoallv, sbuf, sc, sd, locus_dt_of(sdt), rbuf, rc_, rd,
                 locus_dt_of(rdt), &comm->coll);
    free(sc);
    free(rc_);
    API_END(rc, comm, fn);
}

LOCUS_PMPI_WEAK(Alltoall)
int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return alltoallv_run(sendbuf, sendcount, NULL, NULL, sendtype, recvbuf, recvcount, NULL,
                         NULL, recvtype, comm, NULL, 0, "MPI_Alltoall");
}

LOCUS_PMPI_WEAK(Ialltoall)
int PMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return alltoallv_run(sendbuf, sendcount, NULL, NULL, sendtype, recvbuf, recvcount, NULL,
                         NULL, recvtype, comm, request, COLL_NB, "MPI_Ialltoall");
}

LOCUS_PMPI_WEAK(Alltoallv)
int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return alltoallv_run(sendbuf, 0, sendcounts, sdispls, sendtype, recvbuf, 0, recvcounts,
                         rdispls, recvtype, comm, NULL, COLL_V, "MPI_Alltoallv");
}

LOCUS_PMPI_WEAK(Ialltoallv)
int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request *request)
{
    return alltoallv_run(sendbuf, 0, sendcounts, sdispls, sendtype, recvbuf, 0, recvcounts,
                         rdispls, recvtype, comm, request, COLL_NB | COLL_V, "MPI_Ialltoallv");
}
