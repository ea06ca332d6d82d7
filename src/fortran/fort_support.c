/*
 * fort_support.c — what every Fortran entry point may need beyond
 * fort_text.h (strings, scratch arrays): the storage of the sentinels'
 * common blocks, the binding's own errors and the peer counts of the
 * alltoallw collectives.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fort_impl.h"

/* Storage for the common blocks of mpif.h and the mpi module. A program
 * that includes either defines the blocks itself, and the dynamic linker
 * binds the library's references to the program's copy. */
FORT_API struct fort_sentinels locus_mpif_sentinels_;
FORT_API struct fort_char_sentinels locus_mpif_char_sentinels_;
FORT_API MPI_Fint *MPI_F_STATUS_IGNORE = locus_mpif_sentinels_.status_ignore;
FORT_API MPI_Fint *MPI_F_STATUSES_IGNORE = locus_mpif_sentinels_.statuses_ignore;

/* The error codes fort_err added, one per message: a program that keeps
 * making the same mistake does not keep adding codes. */
#define ERR_CODES 32
static struct {
    pthread_mutex_t lock;
    int n;
    struct {
        int code;
        char text[MPI_MAX_ERROR_STRING];
    } added[ERR_CODES];
} errs = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The code whose string is text, of class errclass (added on first use);
 * errclass itself when no code can be added. */
static int err_code(int errclass, const char *text)
{
    int code = errclass;
    pthread_mutex_lock(&errs.lock);
    for (int i = 0; i < errs.n; i++)
        if (strcmp(errs.added[i].text, text) == 0) {
            code = errs.added[i].code;
            goto out;
        }
    if (errs.n < ERR_CODES && PMPI_Add_error_code(errclass, &code) == MPI_SUCCESS &&
        PMPI_Add_error_string(code, text) == MPI_SUCCESS) {
        errs.added[errs.n].code = code;
        snprintf(errs.added[errs.n].text, sizeof errs.added[errs.n].text, "%s", text);
        errs.n++;
    } else {
        code = errclass;
    }
out:
    pthread_mutex_unlock(&errs.lock);
    return code;
}

int fort_err(int errclass, const char *fn, const char *why)
{
    int init = 0, fin = 0;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fin);
    if (!init || fin)
        return errclass;
    /* An added code carries the line; its class is errclass. */
    char text[MPI_MAX_ERROR_STRING];
    snprintf(text, sizeof text, "%s (Fortran binding): %s", fn, why);
    int code = err_code(errclass, text);
    PMPI_Comm_call_errhandler(MPI_COMM_WORLD, code);
    return code;
}

int fort_missing(const char *fn)
{
    return fort_err(MPI_ERR_UNSUPPORTED_OPERATION, fn,
                    "not provided by the MPI library this program runs on");
}

int fort_peers(MPI_Comm comm, int neighbor, int side)
{
    if (comm == MPI_COMM_NULL)
        return 0;
    int n = 0;
    if (!neighbor) {
        int inter = 0;
        PMPI_Comm_test_inter(comm, &inter);
        if (inter)
            PMPI_Comm_remote_size(comm, &n);
        else
            PMPI_Comm_size(comm, &n);
        return n;
    }
    int topo = MPI_UNDEFINED;
    PMPI_Topo_test(comm, &topo);
    if (topo == MPI_CART) {
        PMPI_Cartdim_get(comm, &n);
        return 2 * n;
    }
    if (topo == MPI_GRAPH) {
        int rank = 0;
        PMPI_Comm_rank(comm, &rank);
        PMPI_Graph_neighbors_count(comm, rank, &n);
        return n;
    }
    if (topo == MPI_DIST_GRAPH) {
        int in = 0, out = 0, weighted = 0;
        PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted);
        return side == FORT_PEERS_SEND ? out : in;
    }
    return 0;
}
