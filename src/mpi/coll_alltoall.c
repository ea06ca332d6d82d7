/*
 * coll_alltoall.c — MPI_Alltoall(v): everything posted at once for small
 * blocks (linear), pairwise exchange in p-1 rounds for large ones (one peer
 * at a time keeps the network and memory traffic orderly).
 */
#include <stdlib.h>
#include <string.h>

#include "coll_mpi.h"

typedef struct {
    const void *sbuf;
    const int *scounts, *sdispls;
    MPI_Datatype sdt;
    void *rbuf;
    const int *rcounts, *rdispls;
    MPI_Datatype rdt;
} a2a_t;

static int a2a_linear(const a2a_t *a, MPI_Comm comm)
{
    int p = comm->size, r = comm->rank, err = MPI_SUCCESS;
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * 2 * (size_t)p);
    if (!reqs)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < 2 * p; i++)
        reqs[i] = MPI_REQUEST_NULL;
    /* Start with the neighbours so not everyone hits rank 0 first. */
    for (int i = 1; i < p && err == MPI_SUCCESS; i++) {
        int src = (r - i + p) % p;
        err = locus_coll_irecv(coll_at(a->rbuf, a->rdt, a->rdispls[src]), a->rcounts[src], a->rdt,
                               src, COLL_TAG_ALLTOALL, comm, &reqs[i]);
    }
    for (int i = 1; i < p && err == MPI_SUCCESS; i++) {
        int dst = (r + i) % p;
        err = locus_coll_isend(coll_at(a->sbuf, a->sdt, a->sdispls[dst]), a->scounts[dst], a->sdt,
                               dst, COLL_TAG_ALLTOALL, comm, &reqs[p + i]);
    }
    int err2 = locus_req_waitall(2 * p, reqs);
    free(reqs);
    return err != MPI_SUCCESS ? err : err2;
}

static int a2a_pairwise(const a2a_t *a, MPI_Comm comm)
{
    int p = comm->size, r = comm->rank, pow2 = coll_pof2(p) == p;
    for (int i = 1; i < p; i++) {
        int dst = pow2 ? r ^ i : (r + i) % p, src = pow2 ? r ^ i : (r - i + p) % p;
        int rc = locus_coll_sendrecv(coll_at(a->sbuf, a->sdt, a->sdispls[dst]), a->scounts[dst],
                                     a->sdt, dst, coll_at(a->rbuf, a->rdt, a->rdispls[src]),
                                     a->rcounts[src], a->rdt, src, COLL_TAG_ALLTOALL, comm);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* Runs an alltoallv; MPI_IN_PLACE first copies the receive buffer aside. */
static int a2a_run(a2a_t *a, int bytes_per_peer, MPI_Comm comm)
{
    int p = comm->size, r = comm->rank, err = MPI_SUCCESS;
    void *saved = NULL;
    if (a->sbuf == MPI_IN_PLACE) {
        long span = 0;
        for (int i = 0; i < p; i++)
            if (a->rcounts[i] > 0 && a->rdispls[i] + a->rcounts[i] > span)
                span = a->rdispls[i] + a->rcounts[i];
        char *origin;
        saved = coll_tmp_alloc(a->rdt, (int)span, &origin);
        if (!saved)
            return MPI_ERR_NO_MEM;
        COLL_TRY(coll_local_copy(a->rbuf, (int)span, a->rdt, origin, (int)span, a->rdt));
        a->sbuf = origin;
        a->sdt = a->rdt;
        a->scounts = a->rcounts;
        a->sdispls = a->rdispls;
    }
    COLL_TRY(coll_local_copy(coll_at(a->sbuf, a->sdt, a->sdispls[r]), a->scounts[r], a->sdt,
                             coll_at(a->rbuf, a->rdt, a->rdispls[r]), a->rcounts[r], a->rdt));
    if (p > 1) {
        coll_state_t *st = coll_state(comm);
        if (!st) {
            err = MPI_ERR_NO_MEM;
            goto out;
        }
        int alg = st->alltoall;
        if (alg == ALG_AUTO)
            alg = bytes_per_peer >= 0 && bytes_per_peer < st->alltoall_small ? ALG_LINEAR
                                                                              : ALG_PAIRWISE;
        COLL_TRY(alg == ALG_LINEAR ? a2a_linear(a, comm) : a2a_pairwise(a, comm));
    }
out:
    free(saved);
    return err;
}

static int check_vec(const int *counts, const int *displs, int p, MPI_Datatype dt, const void *buf)
{
    if (!counts || !displs)
        return MPI_ERR_ARG;
    int rc = locus_check_dtype(dt);
    for (int i = 0; i < p && rc == MPI_SUCCESS; i++) {
        rc = locus_check_count(counts[i]);
        if (rc == MPI_SUCCESS)
            rc = locus_check_buf(buf, counts[i], dt);
    }
    return rc;
}

LOCUS_PMPI_WEAK(Alltoall)
int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    static const char fn[] = "MPI_Alltoall";
    LOCUS_CHECK_INIT(fn);
    int rc = locus_check_comm(comm);
    if (rc == MPI_SUCCESS && sendbuf != MPI_IN_PLACE) {
        rc = locus_check_count(sendcount);
        if (rc == MPI_SUCCESS)
            rc = locus_check_dtype(sendtype);
        if (rc == MPI_SUCCESS)
            rc = locus_check_buf(sendbuf, sendcount, sendtype);
    }
    if (rc == MPI_SUCCESS)
        rc = locus_check_count(recvcount);
    if (rc == MPI_SUCCESS)
        rc = locus_check_dtype(recvtype);
    if (rc == MPI_SUCCESS)
        rc = locus_check_buf(recvbuf, recvcount, recvtype);
    if (rc != MPI_SUCCESS)
        return locus_mpi_err(comm, rc, fn);
    /* Matching signatures: no data on this rank means none anywhere. */
    if ((size_t)recvcount * locus_dtype_size(recvtype) == 0)
        return MPI_SUCCESS;
    int p = comm->size;
    int *v = malloc(sizeof(int) * 4 * (size_t)p);
    if (!v)
        return locus_mpi_err(comm, MPI_ERR_NO_MEM, fn);
    for (int i = 0; i < p; i++) {
        v[i] = sendcount;
        v[p + i] = i * sendcount;
        v[2 * p + i] = recvcount;
        v[3 * p + i] = i * recvcount;
    }
    a2a_t a = {sendbuf, v, v + p, sendtype, recvbuf, v + 2 * p, v + 3 * p, recvtype};
    rc = a2a_run(&a, (int)((size_t)recvcount * locus_dtype_size(recvtype)), comm);
    free(v);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : locus_mpi_err(comm, rc, fn);
}

LOCUS_PMPI_WEAK(Alltoallv)
int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    static const char fn[] = "MPI_Alltoallv";
    LOCUS_CHECK_INIT(fn);
    int rc = locus_check_comm(comm);
    if (rc == MPI_SUCCESS && sendbuf != MPI_IN_PLACE)
        rc = check_vec(sendcounts, sdispls, comm->size, sendtype, sendbuf);
    if (rc == MPI_SUCCESS)
        rc = check_vec(recvcounts, rdispls, comm->size, recvtype, recvbuf);
    if (rc != MPI_SUCCESS)
        return locus_mpi_err(comm, rc, fn);
    a2a_t a = {sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype};
    /* Per-peer sizes differ by rank, so the automatic choice must not
     * depend on them: every rank takes the pairwise exchange unless told. */
    rc = a2a_run(&a, -1, comm);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : locus_mpi_err(comm, rc, fn);
}
