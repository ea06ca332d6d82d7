/* Error classes, strings, error handlers and argument checks. */
#include <stdio.h>
#include <string.h>

#include "mpi_impl.h"

/* The layers below return LOCUS_ERR_* codes that travel up unchanged. */
_Static_assert(LOCUS_ERR_BUFFER == MPI_ERR_BUFFER && LOCUS_ERR_COUNT == MPI_ERR_COUNT &&
               LOCUS_ERR_TYPE == MPI_ERR_TYPE && LOCUS_ERR_TAG == MPI_ERR_TAG &&
               LOCUS_ERR_COMM == MPI_ERR_COMM && LOCUS_ERR_RANK == MPI_ERR_RANK &&
               LOCUS_ERR_ROOT == MPI_ERR_ROOT && LOCUS_ERR_OP == MPI_ERR_OP &&
               LOCUS_ERR_ARG == MPI_ERR_ARG && LOCUS_ERR_TRUNCATE == MPI_ERR_TRUNCATE &&
               LOCUS_ERR_OTHER == MPI_ERR_OTHER && LOCUS_ERR_INTERN == MPI_ERR_INTERN &&
               LOCUS_ERR_NO_MEM == MPI_ERR_NO_MEM && LOCUS_SUCCESS == MPI_SUCCESS,
               "layer error codes are MPI error classes");

static const char *const err_text[MPI_ERR_LASTCODE + 1] = {
    [MPI_SUCCESS] = "MPI_SUCCESS: no error",
    [MPI_ERR_BUFFER] = "MPI_ERR_BUFFER: invalid buffer pointer",
    [MPI_ERR_COUNT] = "MPI_ERR_COUNT: invalid count argument",
    [MPI_ERR_TYPE] = "MPI_ERR_TYPE: invalid datatype (null or not committed)",
    [MPI_ERR_TAG] = "MPI_ERR_TAG: invalid tag",
    [MPI_ERR_COMM] = "MPI_ERR_COMM: invalid communicator",
    [MPI_ERR_RANK] = "MPI_ERR_RANK: invalid rank",
    [MPI_ERR_ROOT] = "MPI_ERR_ROOT: invalid root",
    [MPI_ERR_GROUP] = "MPI_ERR_GROUP: invalid group",
    [MPI_ERR_OP] = "MPI_ERR_OP: invalid reduction operation",
    [MPI_ERR_TOPOLOGY] = "MPI_ERR_TOPOLOGY: invalid topology",
    [MPI_ERR_DIMS] = "MPI_ERR_DIMS: invalid dimension argument",
    [MPI_ERR_ARG] = "MPI_ERR_ARG: invalid argument",
    [MPI_ERR_UNKNOWN] = "MPI_ERR_UNKNOWN: unknown error",
    [MPI_ERR_TRUNCATE] = "MPI_ERR_TRUNCATE: message truncated on receive",
    [MPI_ERR_OTHER] = "MPI_ERR_OTHER: known error not in this list",
    [MPI_ERR_INTERN] = "MPI_ERR_INTERN: internal error",
    [MPI_ERR_IN_STATUS] = "MPI_ERR_IN_STATUS: error code is in status",
    [MPI_ERR_PENDING] = "MPI_ERR_PENDING: pending request",
    [MPI_ERR_REQUEST] = "MPI_ERR_REQUEST: invalid request",
    [MPI_ERR_KEYVAL] = "MPI_ERR_KEYVAL: invalid attribute key",
    [MPI_ERR_NO_MEM] = "MPI_ERR_NO_MEM: out of memory",
    [MPI_ERR_INFO] = "MPI_ERR_INFO: invalid info object",
};

LOCUS_PMPI_WEAK(Error_string)
int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    const char *t = (errorcode >= 0 && errorcode <= MPI_ERR_LASTCODE) ? err_text[errorcode]
                                                                      : NULL;
    if (!string || !resultlen)
        return locus_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Error_string");
    if (!t)
        return locus_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Error_string");
    snprintf(string, MPI_MAX_ERROR_STRING, "%s", t);
    *resultlen = (int)strlen(string);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Error_class)
int PMPI_Error_class(int errorcode, int *errorclass)
{
    if (!errorclass || errorcode < 0 || errorcode > MPI_ERR_LASTCODE)
        return locus_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Error_class");
    *errorclass = errorcode; /* every code is its own class */
    return MPI_SUCCESS;
}

int locus_mpi_err(MPI_Comm comm, int errclass, const char *fn)
{
    if (errclass == MPI_SUCCESS)
        return MPI_SUCCESS;
    /* A communicator the user freed still has its handler while a pending
     * operation holds it (the request's error goes there). */
    if (!locus_comm_valid(comm) && !(comm && comm->refs > 0 && !comm->magic))
        comm = MPI_COMM_WORLD;
    MPI_Errhandler h = comm->refs > 0 ? comm->errh : MPI_ERRORS_ARE_FATAL;
    if (h == MPI_ERRORS_RETURN) {
        locus_mpi.detail[0] = '\0';
        return errclass;
    }
    const char *t = (errclass > 0 && errclass <= MPI_ERR_LASTCODE) ? err_text[errclass]
                                                                  : "unknown error class";
    if (locus_mpi.core.fatal)
        fprintf(stderr, "locus: rank %d: %s: %s (%s)\n", locus_mpi.boot.rank, fn, t,
                locus_mpi.core.fatal_msg);
    else if (locus_mpi.detail[0])
        fprintf(stderr, "locus: rank %d: %s: %s (%s)\n", locus_mpi.boot.rank, fn, t,
                locus_mpi.detail);
    else
        fprintf(stderr, "locus: rank %d: %s: %s\n", locus_mpi.boot.rank, fn, t);
    fflush(stderr);
    locus_boot_abort(&locus_mpi.boot, 1, t);
    return errclass;
}

LOCUS_PMPI_WEAK(Comm_set_errhandler)
int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    LOCUS_CHECK_INIT("MPI_Comm_set_errhandler");
    if (!locus_comm_valid(comm))
        return locus_mpi_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_set_errhandler");
    if (errhandler != MPI_ERRORS_ARE_FATAL && errhandler != MPI_ERRORS_RETURN)
        return locus_mpi_err(comm, MPI_ERR_ARG, "MPI_Comm_set_errhandler");
    comm->errh = errhandler;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Comm_get_errhandler)
int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    LOCUS_CHECK_INIT("MPI_Comm_get_errhandler");
    if (!locus_comm_valid(comm))
        return locus_mpi_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_get_errhandler");
    if (!errhandler)
        return locus_mpi_err(comm, MPI_ERR_ARG, "MPI_Comm_get_errhandler");
    *errhandler = comm->errh;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Errhandler_free)
int PMPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    LOCUS_CHECK_INIT("MPI_Errhandler_free");
    (void)errhandler;
    /* Only predefined handlers exist, and those (like MPI_ERRHANDLER_NULL)
     * cannot be freed. */
    return locus_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Errhandler_free");
}

int locus_check_comm(MPI_Comm comm)
{
    return locus_comm_valid(comm) ? MPI_SUCCESS : MPI_ERR_COMM;
}

int locus_check_dtype(MPI_Datatype dt)
{
    return (dt && locus_dtype_is_committed(dt)) ? MPI_SUCCESS : MPI_ERR_TYPE;
}

int locus_check_count(int count)
{
    return count < 0 ? MPI_ERR_COUNT : MPI_SUCCESS;
}

int locus_check_buf(const void *buf, int count, MPI_Datatype dt)
{
    return (!buf && count > 0 && locus_dtype_size(dt) > 0) ? MPI_ERR_BUFFER : MPI_SUCCESS;
}

int locus_check_root(MPI_Comm comm, int root)
{
    return (root < 0 || root >= comm->coll.size) ? MPI_ERR_ROOT : MPI_SUCCESS;
}

int locus_check_p2p(const void *buf, int count, MPI_Datatype dt, int peer, int tag,
                    MPI_Comm comm, int is_recv)
{
    if (!locus_comm_valid(comm))
        return MPI_ERR_COMM;
    if (count < 0)
        return MPI_ERR_COUNT;
    if (!dt || !locus_dtype_is_committed(dt))
        return MPI_ERR_TYPE;
    if (is_recv ? (tag < 0 && tag != MPI_ANY_TAG) : tag < 0)
        return MPI_ERR_TAG;
    if (peer != MPI_PROC_NULL && (peer < 0 || peer >= comm->coll.size) &&
        !(is_recv && peer == MPI_ANY_SOURCE))
        return MPI_ERR_RANK;
    if (!buf && count > 0 && locus_dtype_size(dt) > 0)
        return MPI_ERR_BUFFER;
    return MPI_SUCCESS;
}
