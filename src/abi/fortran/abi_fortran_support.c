/*
 * abi_fortran_support.c — what every generated entry point may need
 * beyond fort_text.h (strings, scratch arrays): the binding's own
 * errors and the peer counts of the alltoallw collectives, over the
 * legacy ABI's C interface (the C layer).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi_fortran.h"

/* The class goes to MPI_COMM_WORLD's handler like any error of the call;
 * the line is the only place the reason shows, since the legacy error
 * string of a class cannot carry it. */
int fort_err(int errclass, const char *fn, const char *why)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    fprintf(stderr, "locus (%s Fortran): %s: %s\n", ABI_F_NAME, fn, why);
    if (init && !fin)
        MPI_Comm_call_errhandler(MPI_COMM_WORLD, errclass);
    return errclass;
}

int fort_missing(const char *fn)
{
    return fort_err(MPI_ERR_OTHER, fn, "not provided by the C layer this program runs on");
}

int fort_peers(MPI_Comm comm, int neighbor, int side)
{
    if (comm == MPI_COMM_NULL)
        return 0;
    int n = 0;
    if (!neighbor) {
        int inter = 0;
        MPI_Comm_test_inter(comm, &inter);
        if (inter)
            MPI_Comm_remote_size(comm, &n);
        else
            MPI_Comm_size(comm, &n);
        return n;
    }
    int topo = MPI_UNDEFINED;
    MPI_Topo_test(comm, &topo);
    if (topo == MPI_CART) {
        MPI_Cartdim_get(comm, &n);
        return 2 * n;
    }
    if (topo == MPI_GRAPH) {
        int rank = 0;
        MPI_Comm_rank(comm, &rank);
        MPI_Graph_neighbors_count(comm, rank, &n);
        return n;
    }
    if (topo == MPI_DIST_GRAPH) {
        int in = 0, out = 0, weighted = 0;
        MPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted);
        return side == FORT_PEERS_SEND ? out : in;
    }
    return 0;
}
