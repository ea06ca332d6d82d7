/*
 * file_ops.c — what one asks of an open file besides its data: size,
 * preallocation, sync, access mode, group, hints, atomicity, and the file
 * error handlers (MPI_FILE_NULL's included, the default for files opened
 * later).
 *
 * The collective ones change the file on rank 0 only (one truncate, not
 * one per rank racing with the others' writes) and agree on the outcome.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"

/* The same value on every rank: MPI_ERR_NOT_SAME otherwise (agreed). */
static int same_everywhere(locus_file_t *f, long long v)
{
    long long mine[2] = { v, -v }, all[2];
    if (locus_coll_allreduce(mine, all, 2, locus_dtype_basic(LOCUS_EL_LLONG),
                             locus_op_predefined(LOCUS_OP_MAX), &f->comm->coll) != MPI_SUCCESS)
        return MPI_ERR_OTHER;
    return all[0] == -all[1] ? MPI_SUCCESS : MPI_ERR_NOT_SAME;
}

/* set_size (grow 0) and preallocate (grow 1), collective. */
static int resize(MPI_File fh, MPI_Offset size, int grow, const char *fn)
{
    IO_FILE(f, fh, fn);
    int err = size < 0 ? MPI_ERR_ARG
              : (f->amode & MPI_MODE_RDONLY) ? MPI_ERR_READ_ONLY
              : MPI_SUCCESS;
    err = io_agree(f, err);
    if (err == MPI_SUCCESS)
        err = same_everywhere(f, size);
    if (err == MPI_SUCCESS && f->comm->coll.rank == 0) {
        struct stat sb;
        if (fstat(f->fd, &sb) != 0) {
            err = io_errno_class(errno);
        } else if (!grow) {
            if (ftruncate(f->fd, size) != 0)
                err = io_errno_class(errno);
        } else if (sb.st_size < size) {
            /* Blocks allocated where the file system can; else at least
             * the size (MPI allows either). */
            int e = posix_fallocate(f->fd, 0, size);
            if (e == EOPNOTSUPP || e == EINVAL)
                e = ftruncate(f->fd, size) == 0 ? 0 : errno;
            if (e)
                err = io_errno_class(e);
        }
    }
    err = io_agree(f, err);
    return io_err(f, err, fn, "%s of %lld bytes", grow ? "preallocation" : "resize",
                  (long long)size);
}

LOCUS_PMPI_WEAK(File_set_size)
int PMPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    LOCUS_ENTRY_CS();
    return resize(fh, size, 0, "MPI_File_set_size");
}

LOCUS_PMPI_WEAK(File_preallocate)
int PMPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
    LOCUS_ENTRY_CS();
    return resize(fh, size, 1, "MPI_File_preallocate");
}

LOCUS_PMPI_WEAK(File_get_size)
int PMPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    LOCUS_ENTRY_CS();
    IO_FILE(f, fh, "MPI_File_get_size");
    if (!size)
        return io_err(f, MPI_ERR_ARG, "MPI_File_get_size", "size is NULL");
    struct stat sb;
    if (fstat(f->fd, &sb) != 0)
        return io_err(f, io_errno_class(errno), "MPI_File_get_size", "fstat failed");
    *size = sb.st_size;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(File_sync)
int PMPI_File_sync(MPI_File fh)
{
    LOCUS_ENTRY_CS();
    IO_FILE(f, fh, "MPI_File_sync");
    int err = f->split ? MPI_ERR_OTHER : MPI_SUCCESS;
    if (err == MPI_SUCCESS && !(f->amode & MPI_MODE_RDONLY) && fsync(f->fd) != 0)
        err = io_errno_class(errno);
    /* Collective: after it, what any rank wrote before is visible to all. */
    err = io_agree(f, err);
    return io_err(f, err, "MPI_File_sync", "fsync failed or a split collective is active");
}

LOCUS_PMPI_WEAK(File_get_amode)
int PMPI_File_get_amode(MPI_File fh, int *amode)
{
    LOCUS_ENTRY_CS();
    IO_FILE(f, fh, "MPI_File_get_amode");
    if (!amode)
        return io_err(f, MPI_ERR_ARG, "MPI_File_get_amode", "amode is NULL");
    *amode = f->amode;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(File_get_group)
int PMPI_File_get_group(MPI_File fh, MPI_Group *group)
{
    LOCUS_ENTRY_CS();
    IO_FILE(f, fh, "MPI_File_get_group");
    if (!group)
        return io_err(f, MPI_ERR_ARG, "MPI_File_get_group", "group is NULL");
    return io_err(f, locus_group_make(f->comm->coll.size, f->comm->world_of, group),
                  "MPI_File_get_group", NULL);
}

LOCUS_PMPI_WEAK(File_get_info)
int PMPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
    LOCUS_ENTRY_CS();
    IO_FILE(f, fh, "MPI_File_get_info");
    if (!info_used)
        return io_err(f, MPI_ERR_ARG, "MPI_File_get_info", "info_used is NULL");
    return io_err(f, io_hints_info(f, info_used), "MPI_File_get_info", NULL);
}

LOCUS_PMPI_WEAK(File_set_info)
int PMPI_File_set_info(MPI_File fh, MPI_Info info)
{
    LOCUS_ENTRY_CS();
    IO_FILE(f, fh, "MPI_File_set_info");
    io_hints_parse(&f->hints, info);
    int err = io_hints_agree(f);
    return io_err(f, io_agree(f, err), "MPI_File_set_info", NULL);
}

LOCUS_PMPI_WEAK(File_set_atomicity)
int PMPI_File_set_atomicity(MPI_File fh, int flag)
{
    LOCUS_ENTRY_CS();
    IO_FILE(f, fh, "MPI_File_set_atomicity");
    int err = same_everywhere(f, flag != 0);
    if (err == MPI_SUCCESS)
        f->atomic = flag != 0;
    return io_err(f, err, "MPI_File_set_atomicity", "the ranks gave different flags");
}

LOCUS_PMPI_WEAK(File_get_atomicity)
int PMPI_File_get_atomicity(MPI_File fh, int *flag)
{
    LOCUS_ENTRY_CS();
    IO_FILE(f, fh, "MPI_File_get_atomicity");
    if (!flag)
        return io_err(f, MPI_ERR_ARG, "MPI_File_get_atomicity", "flag is NULL");
    *flag = f->atomic;
    return MPI_SUCCESS;
}

/* ---- error handlers ----------------------------------------------------------- */

LOCUS_PMPI_WEAK(File_create_errhandler)
int PMPI_File_create_errhandler(MPI_File_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_File_create_errhandler");
    if (!fn || !errhandler)
        return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_File_create_errhandler");
    /* Called back through locus_errh_raise with an MPI_File *: the ABI
     * passes every handle pointer alike. */
    int err = locus_comm_create_errhandler_impl(
        (MPI_Comm_errhandler_function *)(void (*)(void))fn, errhandler);
    return err == MPI_SUCCESS ? err : locus_mpi_err(NULL, err, "MPI_File_create_errhandler");
}

/* The handler slot of a handle: an open file's, or MPI_FILE_NULL's. */
static locus_errh_t **errh_slot(MPI_File fh)
{
    if (fh == MPI_FILE_NULL)
        return io_null_errh_slot();
    locus_file_t *f = locus_file_of(fh);
    return f ? &f->errh : NULL;
}

LOCUS_PMPI_WEAK(File_set_errhandler)
int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_File_set_errhandler");
    locus_errh_t **slot = errh_slot(file);
    if (!slot)
        return io_err(NULL, MPI_ERR_FILE, "MPI_File_set_errhandler", "not an open file");
    if (locus_errh_set_handle(slot, errhandler))
        return io_err(locus_file_of(file), MPI_ERR_ARG, "MPI_File_set_errhandler",
                      "not an error handler");
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(File_get_errhandler)
int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_File_get_errhandler");
    locus_errh_t **slot = errh_slot(file);
    if (!slot)
        return io_err(NULL, MPI_ERR_FILE, "MPI_File_get_errhandler", "not an open file");
    if (!errhandler)
        return io_err(locus_file_of(file), MPI_ERR_ARG, "MPI_File_get_errhandler",
                      "no handle to return");
    return locus_errh_get_handle(*slot, errhandler);
}

LOCUS_PMPI_WEAK(File_call_errhandler)
int PMPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_File_call_errhandler");
    locus_errh_t **slot = errh_slot(fh);
    if (!slot)
        return io_err(NULL, MPI_ERR_FILE, "MPI_File_call_errhandler", "not an open file");
    locus_mpi.detail[0] = '\0';
    MPI_File h = fh;
    locus_errh_raise(*slot, ERRH_ON_COMM, &h, errorcode, "MPI_File_call_errhandler");
    return MPI_SUCCESS;
}
