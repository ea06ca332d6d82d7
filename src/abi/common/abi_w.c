/*
 * abi_w.c — the alltoallw collectives, blocking, nonblocking and
 * persistent, int and large-count (_c): two arrays of datatype handles whose length the call does
 * not say. For MPI_Alltoallw it is the communicator's size (its remote
 * group's for an intercommunicator), the send one absent with
 * MPI_IN_PLACE; for the neighbourhood forms the topology's out- and
 * in-degree. Locus resolves the types when the operation starts, so the
 * converted arrays are needed only during the call.
 */
#include "abi_layer.h"
#include "abi_locus_values.h"

#include <stdint.h>
#include <stdlib.h>

enum { W_ALL, W_NEIGHBOR };
enum { W_BLOCKING, W_NONBLOCKING, W_PERSISTENT };

/* Counts are ints, or MPI_Count in the _c forms: the pointers go through. */
#define W_ARGS const void *, const void *, const void *, void *const *, void *, const void *, \
               const void *, void *const *, void *
typedef int (*w_blocking)(W_ARGS);
typedef int (*w_nonblocking)(W_ARGS, void **);
typedef int (*w_persistent)(W_ARGS, void *, void **);

/* How many types each side has: 0, or an MPI error class. */
static int w_lengths(int kind, void *lc, int *nsend, int *nrecv)
{
    int rc, n = 0;
    if (kind == W_ALL) {
        int inter = 0;
        rc = abi_locus.comm_test_inter(lc, &inter);
        if (rc == 0)
            rc = inter ? abi_locus.comm_remote_size(lc, &n) : abi_locus.comm_size(lc, &n);
        *nsend = *nrecv = n;
        return rc;
    }
    int topo = LOCUS_MPI_UNDEFINED;
    rc = abi_locus.topo_test(lc, &topo);
    if (rc == 0 && topo == LOCUS_MPI_CART) {
        rc = abi_locus.cartdim_get(lc, &n);
        *nsend = *nrecv = 2 * n;
    } else if (rc == 0 && topo == LOCUS_MPI_GRAPH) {
        int me = 0;
        rc = abi_locus.comm_rank(lc, &me);
        if (rc == 0)
            rc = abi_locus.graph_neighbors_count(lc, me, &n);
        *nsend = *nrecv = n;
    } else if (rc == 0 && topo == LOCUS_MPI_DIST_GRAPH) {
        int weighted = 0;
        rc = abi_locus.dist_graph_neighbors_count(lc, nrecv, nsend, &weighted);
    } else if (rc == 0) {
        return MPI_ERR_TOPOLOGY;
    }
    return rc ? abi_err_out(rc) : 0;
}

static int alltoallw(int large, int kind, int form, const void *sbuf, const void *scounts,
                     const void *sdispls, const MPI_Datatype *stypes, void *rbuf,
                     const void *rcounts, const void *rdispls, const MPI_Datatype *rtypes,
                     MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    void *lc = abi_comm_in(comm);
    int ns = 0, nr = 0, rc = w_lengths(kind, lc, &ns, &nr);
    if (rc != 0)
        return rc;
    int in_place = sbuf == MPI_IN_PLACE;
    void **t = malloc((size_t)(ns + nr + 1) * sizeof *t), **st = t, **rt = t ? t + ns : NULL;
    if (!t)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < ns; i++)
        st[i] = in_place ? NULL : abi_dtype_in(stypes[i]);
    for (int i = 0; i < nr; i++)
        rt[i] = abi_dtype_in(rtypes[i]);
    void *lreq = NULL, *f = abi_locus.alltoallw[large][kind][form];
    const void *lsbuf = abi_buf_in(sbuf);
    if (form == W_BLOCKING)
        rc = ((w_blocking)f)(lsbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, lc);
    else if (form == W_NONBLOCKING)
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

/* One kind's three entry points; C and D are the counts' and the
 * displacements' types (int and int for alltoallw, int and MPI_Aint for
 * the neighbourhood forms, MPI_Count and MPI_Aint for both _c forms). */
#define W_FORMS(Name, IName, kind, C, D, large, sfx)                                           \
    int PMPI_##Name##sfx(const void *sendbuf, const C sendcounts[], const D sdispls[],        \
                         const MPI_Datatype sendtypes[], void *recvbuf, const C recvcounts[], \
                         const D rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)    \
    {                                                                                          \
        return alltoallw(large, kind, W_BLOCKING, sendbuf, sendcounts, sdispls, sendtypes,    \
                         recvbuf, recvcounts, rdispls, recvtypes, comm, MPI_INFO_NULL, NULL); \
    }                                                                                          \
    int PMPI_##IName##sfx(const void *sendbuf, const C sendcounts[], const D sdispls[],       \
                          const MPI_Datatype sendtypes[], void *recvbuf,                       \
                          const C recvcounts[], const D rdispls[],                             \
                          const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request) \
    {                                                                                          \
        return alltoallw(large, kind, W_NONBLOCKING, sendbuf, sendcounts, sdispls, sendtypes, \
                         recvbuf, recvcounts, rdispls, recvtypes, comm, MPI_INFO_NULL,        \
                         request);                                                             \
    }                                                                                          \
    int PMPI_##Name##_init##sfx(const void *sendbuf, const C sendcounts[], const D sdispls[], \
                                const MPI_Datatype sendtypes[], void *recvbuf,                 \
                                const C recvcounts[], const D rdispls[],                       \
                                const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,  \
                                MPI_Request *request)                                          \
    {                                                                                          \
        return alltoallw(large, kind, W_PERSISTENT, sendbuf, sendcounts, sdispls, sendtypes,  \
                         recvbuf, recvcounts, rdispls, recvtypes, comm, info, request);        \
    }
W_FORMS(Alltoallw, Ialltoallw, W_ALL, int, int, 0, )
W_FORMS(Neighbor_alltoallw, Ineighbor_alltoallw, W_NEIGHBOR, int, MPI_Aint, 0, )
W_FORMS(Alltoallw, Ialltoallw, W_ALL, MPI_Count, MPI_Aint, 1, _c)
W_FORMS(Neighbor_alltoallw, Ineighbor_alltoallw, W_NEIGHBOR, MPI_Count, MPI_Aint, 1, _c)
#pragma weak MPI_Alltoallw = PMPI_Alltoallw
#pragma weak MPI_Ialltoallw = PMPI_Ialltoallw
#pragma weak MPI_Alltoallw_init = PMPI_Alltoallw_init
#pragma weak MPI_Neighbor_alltoallw = PMPI_Neighbor_alltoallw
#pragma weak MPI_Ineighbor_alltoallw = PMPI_Ineighbor_alltoallw
#pragma weak MPI_Neighbor_alltoallw_init = PMPI_Neighbor_alltoallw_init
#pragma weak MPI_Alltoallw_c = PMPI_Alltoallw_c
#pragma weak MPI_Ialltoallw_c = PMPI_Ialltoallw_c
#pragma weak MPI_Alltoallw_init_c = PMPI_Alltoallw_init_c
#pragma weak MPI_Neighbor_alltoallw_c = PMPI_Neighbor_alltoallw_c
#pragma weak MPI_Ineighbor_alltoallw_c = PMPI_Ineighbor_alltoallw_c
#pragma weak MPI_Neighbor_alltoallw_init_c = PMPI_Neighbor_alltoallw_init_c
