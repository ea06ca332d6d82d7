/*
 * file.c — MPI-IO, which Locus does not provide (a later piece of work):
 * MPI_File_open and MPI_File_delete refuse with
 * MPI_ERR_UNSUPPORTED_OPERATION, so no file handle ever exists and every
 * call on one reports MPI_ERR_FILE. Both go through the default file error
 * handler (MPI_FILE_NULL's, MPI_ERRORS_RETURN unless the program sets
 * another), as the standard routes I/O errors. The calls exist so that a
 * program or library that merely links them (mpi4py, HDF5-aware codes)
 * loads, and one that opens a file gets a clear error instead of a missing
 * symbol.
 */
#include <stdio.h>

#include "io.h"

/* The error handler of MPI_FILE_NULL: the standard's default is
 * MPI_ERRORS_RETURN (I/O errors are usually recoverable). */
static locus_errh_t *file_errh = &locus_errh_return;

static int file_err(int code, const char *fn, const char *why)
{
    snprintf(locus_mpi.detail, sizeof locus_mpi.detail, "%s", why);
    MPI_File h = MPI_FILE_NULL;
    return locus_errh_raise(file_errh, ERRH_ON_COMM, &h, code, fn);
}

static int refuse_io(const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    return file_err(MPI_ERR_UNSUPPORTED_OPERATION, fn, "MPI-IO is not supported by Locus");
}

/* Every call on a file handle: none can be valid. */
static int no_file(const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    return file_err(MPI_ERR_FILE, fn, "not an open file (Locus does not support MPI-IO)");
}

LOCUS_PMPI_WEAK(File_open)
int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    LOCUS_CHECK_INIT("MPI_File_open");
    (void)amode, (void)info;
    locus_comm_t *c = locus_comm_of(comm);
    if (fh)
        *fh = MPI_FILE_NULL;
    if (!locus_comm_valid(c))
        return locus_mpi_err(NULL, MPI_ERR_COMM, "MPI_File_open");
    if (!filename || !fh)
        return file_err(MPI_ERR_ARG, "MPI_File_open", "no file name or handle");
    return refuse_io("MPI_File_open");
}

LOCUS_PMPI_WEAK(File_delete)
int PMPI_File_delete(const char *filename, MPI_Info info)
{
    (void)filename, (void)info;
    return refuse_io("MPI_File_delete");
}

LOCUS_PMPI_WEAK(Register_datarep)
int PMPI_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_fn,
                          MPI_Datarep_conversion_function *write_fn,
                          MPI_Datarep_extent_function *extent_fn, void *extra_state)
{
    (void)datarep, (void)read_fn, (void)write_fn, (void)extent_fn, (void)extra_state;
    return refuse_io("MPI_Register_datarep");
}

LOCUS_PMPI_WEAK(Register_datarep_c)
int PMPI_Register_datarep_c(const char *datarep, MPI_Datarep_conversion_function_c *read_fn,
                            MPI_Datarep_conversion_function_c *write_fn,
                            MPI_Datarep_extent_function *extent_fn, void *extra_state)
{
    (void)datarep, (void)read_fn, (void)write_fn, (void)extent_fn, (void)extra_state;
    return refuse_io("MPI_Register_datarep_c");
}

/* ---- error handlers: valid on MPI_FILE_NULL (the default handler) ---- */

LOCUS_PMPI_WEAK(File_create_errhandler)
int PMPI_File_create_errhandler(MPI_File_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    LOCUS_CHECK_INIT("MPI_File_create_errhandler");
    if (!fn || !errhandler)
        return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_File_create_errhandler");
    /* Called back through locus_errh_raise with an MPI_File *: the ABI
     * passes every handle pointer alike. */
    return locus_comm_create_errhandler_impl(
        (MPI_Comm_errhandler_function *)(void (*)(void))fn, errhandler);
}

LOCUS_PMPI_WEAK(File_set_errhandler)
int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
    LOCUS_CHECK_INIT("MPI_File_set_errhandler");
    if (file != MPI_FILE_NULL)
        return no_file("MPI_File_set_errhandler");
    if (locus_errh_set_handle(&file_errh, errhandler))
        return file_err(MPI_ERR_ARG, "MPI_File_set_errhandler", "not an error handler");
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(File_get_errhandler)
int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
    LOCUS_CHECK_INIT("MPI_File_get_errhandler");
    if (file != MPI_FILE_NULL)
        return no_file("MPI_File_get_errhandler");
    if (!errhandler)
        return file_err(MPI_ERR_ARG, "MPI_File_get_errhandler", "no handle to return");
    return locus_errh_get_handle(file_errh, errhandler);
}

LOCUS_PMPI_WEAK(File_call_errhandler)
int PMPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    LOCUS_CHECK_INIT("MPI_File_call_errhandler");
    if (fh != MPI_FILE_NULL)
        return no_file("MPI_File_call_errhandler");
    locus_mpi.detail[0] = '\0';
    MPI_File h = MPI_FILE_NULL;
    locus_errh_raise(file_errh, ERRH_ON_COMM, &h, errorcode, "MPI_File_call_errhandler");
    return MPI_SUCCESS;
}

/* Drops a user handler left as the default at MPI_Finalize. */
void locus_file_finalize(void)
{
    locus_errh_drop(file_errh);
    file_errh = &locus_errh_return;
}

/* ---- every call on a file handle ---- */

/* The parameters are the interface's; none is looked at. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define NO_FILE(name, params)                                                   \
    LOCUS_PMPI_WEAK(name)                                                       \
    int PMPI_##name params { return no_file("MPI_" #name); }

NO_FILE(File_close, (MPI_File *fh))
NO_FILE(File_get_amode, (MPI_File fh, int *amode))
NO_FILE(File_get_atomicity, (MPI_File fh, int *flag))
NO_FILE(File_get_byte_offset, (MPI_File fh, MPI_Offset offset, MPI_Offset *disp))
NO_FILE(File_get_group, (MPI_File fh, MPI_Group *group))
NO_FILE(File_get_info, (MPI_File fh, MPI_Info *info_used))
NO_FILE(File_get_position, (MPI_File fh, MPI_Offset *offset))
NO_FILE(File_get_position_shared, (MPI_File fh, MPI_Offset *offset))
NO_FILE(File_get_size, (MPI_File fh, MPI_Offset *size))
NO_FILE(File_get_type_extent, (MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent))
NO_FILE(File_get_type_extent_c, (MPI_File fh, MPI_Datatype datatype, MPI_Count *extent))
NO_FILE(File_get_view, (MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype, char *datarep))
NO_FILE(File_iread, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
NO_FILE(File_iread_all, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
NO_FILE(File_iread_all_c, (MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
NO_FILE(File_iread_at, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
NO_FILE(File_iread_at_all, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
NO_FILE(File_iread_at_all_c, (MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
NO_FILE(File_iread_at_c, (MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
NO_FILE(File_iread_c, (MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
NO_FILE(File_iread_shared, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
NO_FILE(File_iread_shared_c, (MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
NO_FILE(File_iwrite, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
NO_FILE(File_iwrite_all, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
NO_FILE(File_iwrite_all_c, (MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
NO_FILE(File_iwrite_at, (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
NO_FILE(File_iwrite_at_all, (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
NO_FILE(File_iwrite_at_all_c, (MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
NO_FILE(File_iwrite_at_c, (MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
NO_FILE(File_iwrite_c, (MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
NO_FILE(File_iwrite_shared, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
NO_FILE(File_iwrite_shared_c, (MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
NO_FILE(File_preallocate, (MPI_File fh, MPI_Offset size))
NO_FILE(File_read, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
NO_FILE(File_read_all, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
NO_FILE(File_read_all_begin, (MPI_File fh, void *buf, int count, MPI_Datatype datatype))
NO_FILE(File_read_all_begin_c, (MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype))
NO_FILE(File_read_all_c, (MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
NO_FILE(File_read_all_end, (MPI_File fh, void *buf, MPI_Status *status))
NO_FILE(File_read_at, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
NO_FILE(File_read_at_all, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
NO_FILE(File_read_at_all_begin, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype))
NO_FILE(File_read_at_all_begin_c, (MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype))
NO_FILE(File_read_at_all_c, (MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
NO_FILE(File_read_at_all_end, (MPI_File fh, void *buf, MPI_Status *status))
NO_FILE(File_read_at_c, (MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
NO_FILE(File_read_c, (MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
NO_FILE(File_read_ordered, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
NO_FILE(File_read_ordered_begin, (MPI_File fh, void *buf, int count, MPI_Datatype datatype))
NO_FILE(File_read_ordered_begin_c, (MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype))
NO_FILE(File_read_ordered_c, (MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
NO_FILE(File_read_ordered_end, (MPI_File fh, void *buf, MPI_Status *status))
NO_FILE(File_read_shared, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
NO_FILE(File_read_shared_c, (MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
NO_FILE(File_seek, (MPI_File fh, MPI_Offset offset, int whence))
NO_FILE(File_seek_shared, (MPI_File fh, MPI_Offset offset, int whence))
NO_FILE(File_set_atomicity, (MPI_File fh, int flag))
NO_FILE(File_set_info, (MPI_File fh, MPI_Info info))
NO_FILE(File_set_size, (MPI_File fh, MPI_Offset size))
NO_FILE(File_set_view, (MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char *datarep, MPI_Info info))
NO_FILE(File_sync, (MPI_File fh))
NO_FILE(File_write, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
NO_FILE(File_write_all, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
NO_FILE(File_write_all_begin, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype))
NO_FILE(File_write_all_begin_c, (MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype))
NO_FILE(File_write_all_c, (MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
NO_FILE(File_write_all_end, (MPI_File fh, const void *buf, MPI_Status *status))
NO_FILE(File_write_at, (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
NO_FILE(File_write_at_all, (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
NO_FILE(File_write_at_all_begin, (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype))
NO_FILE(File_write_at_all_begin_c, (MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype datatype))
NO_FILE(File_write_at_all_c, (MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
NO_FILE(File_write_at_all_end, (MPI_File fh, const void *buf, MPI_Status *status))
NO_FILE(File_write_at_c, (MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
NO_FILE(File_write_c, (MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
NO_FILE(File_write_ordered, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
NO_FILE(File_write_ordered_begin, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype))
NO_FILE(File_write_ordered_begin_c, (MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype))
NO_FILE(File_write_ordered_c, (MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
NO_FILE(File_write_ordered_end, (MPI_File fh, const void *buf, MPI_Status *status))
NO_FILE(File_write_shared, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
NO_FILE(File_write_shared_c, (MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
