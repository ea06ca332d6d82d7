/*
 * abi_mpich_w.c — MPI_Alltoallw and its nonblocking and persistent forms:
 * two arrays of datatype handles as long as the communicator (its remote
 * group for an intercommunicator), the send one absent with MPI_IN_PLACE.
 * Locus resolves the types when the operation starts, so the converted
 * arrays are needed only during the call.
 */
#include "abi_layer.h"

#include <stdlib.h>

#define W_ARGS const void *, const int *, const int *, void *const *, void *, const int *, \
               const int *, void *const *, void *
typedef int (*w_blocking)(W_ARGS);
typedef int (*w_nonblocking)(W_ARGS, void **);
typedef int (*w_persistent)(W_ARGS, void *, void **);

/* Runs Locus's form `fn` with info and req (NULL for the blocking form). */
static int alltoallw(int which, const void *sbuf, const int *scounts, const int *sdispls,
                     const MPI_Datatype *stypes, void *rbuf, const int *rcounts,
                     const int *rdispls, const MPI_Datatype *rtypes, MPI_Comm comm,
                     MPI_Info info, MPI_Request *req)
{
    void *lc = abi_comm_in(comm);
    int n = 0, inter = 0;
    if (abi_locus.comm_test_inter(lc, &inter) != 0)
        return MPI_ERR_COMM;
    int rc = inter ? abi_locus.comm_remote_size(lc, &n) : abi_locus.comm_size(lc, &n);
    if (rc != 0)
        return abi_err_out(rc);
    int in_place = sbuf == MPI_IN_PLACE;
    void **t = malloc(2 * (size_t)(n > 0 ? n : 1) * sizeof *t), **st = t, **rt = t ? t + n : NULL;
    if (!t)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < n; i++) {
        st[i] = in_place ? NULL : abi_dtype_in(stypes[i]);
        rt[i] = abi_dtype_in(rtypes[i]);
    }
    void *lreq = NULL;
    void *f = abi_locus.alltoallw[which];
    const void *lsbuf = abi_buf_in(sbuf);
    if (which == 0)
        rc = ((w_blocking)f)(lsbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, lc);
    else if (which == 1)
        rc = ((w_nonblocking)f)(lsbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, lc,
                                &lreq);
    else
        rc = ((w_persistent)f)(lsbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, lc,
                               abi_info_in(info), &lreq);
    free(t);
    if (rc == 0 && req)
        *req = abi_req_out(lreq);
    return abi_err_out(rc);
}

int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return alltoallw(0, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                     recvtypes, comm, MPI_INFO_NULL, NULL);
}
#pragma weak MPI_Alltoallw = PMPI_Alltoallw

int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                    MPI_Request *request)
{
    return alltoallw(1, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                     recvtypes, comm, MPI_INFO_NULL, request);
}
#pragma weak MPI_Ialltoallw = PMPI_Ialltoallw

int PMPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                        const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                        MPI_Info info, MPI_Request *request)
{
    return alltoallw(2, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                     recvtypes, comm, info, request);
}
#pragma weak MPI_Alltoallw_init = PMPI_Alltoallw_init
