/*
 * file_shared.c — the shared file pointer: one MPI_Offset (in etypes of
 * the view) in a window at rank 0 of the file's communicator, made at
 * open. Every access takes and moves it with one MPI_Fetch_and_op under
 * an exclusive lock, so concurrent read_shared / write_shared calls get
 * disjoint parts of the file in some order. On one node the window is
 * shared memory (rma/'s direct path), so no rank needs rank 0's help; an
 * access from another node is served by rank 0's progress, i.e. inside
 * its MPI calls (MPI's usual passive-target caveat).
 */
#include <stdio.h>

#include "io.h"

int io_shared_open(locus_file_t *f, MPI_Offset init)
{
    MPI_Offset *mem = NULL;
    int root = f->comm->coll.rank == 0;
    int err = locus_win_allocate_impl(root ? (MPI_Aint)sizeof(MPI_Offset) : 0,
                                      (MPI_Aint)sizeof(MPI_Offset), MPI_INFO_NULL,
                                      locus_comm_handle(f->comm), &mem, &f->shwin,
                                      "MPI_File_open");
    if (err != MPI_SUCCESS) {
        f->shwin = MPI_WIN_NULL;
        return io_agree(f, err);
    }
    locus_win_t *w = locus_win_of(f->shwin);
    locus_errh_set(w->comm, &locus_errh_return); /* we raise on the file */
    if (root)
        *mem = init;
    /* nobody reads it before it is set */
    return io_agree(f, locus_coll_barrier(&f->comm->coll));
}

void io_shared_close(locus_file_t *f)
{
    if (f->shwin != MPI_WIN_NULL)
        PMPI_Win_free(&f->shwin);
    f->shwin = MPI_WIN_NULL;
}

/* Fetch_and_op at rank 0 under an exclusive lock. */
static int shared_op(locus_file_t *f, const MPI_Offset *in, MPI_Offset *out, MPI_Op op)
{
    locus_win_t *w = locus_win_of(f->shwin);
    if (!w)
        return MPI_ERR_FILE;
    int err = locus_win_lock_impl(MPI_LOCK_EXCLUSIVE, 0, 0, w);
    if (err != MPI_SUCCESS)
        return err;
    err = PMPI_Fetch_and_op(in, out, MPI_OFFSET, 0, 0, op, f->shwin);
    int e = locus_win_unlock_impl(0, w);
    return err != MPI_SUCCESS ? err : e;
}

int io_shared_fetch_add(locus_file_t *f, MPI_Offset add, MPI_Offset *old)
{
    return shared_op(f, &add, old, MPI_SUM);
}

int io_shared_set(locus_file_t *f, MPI_Offset v)
{
    MPI_Offset old;
    return shared_op(f, &v, &old, MPI_REPLACE);
}

LOCUS_PMPI_WEAK(File_seek_shared)
int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    LOCUS_ENTRY_CS();
    static const char fn[] = "MPI_File_seek_shared";
    IO_FILE(f, fh, fn);
    /* Collective: every rank must give the same offset and whence. */
    long long mine[4] = { offset, -offset, whence, -whence }, all[4];
    int err = locus_coll_allreduce(mine, all, 4, locus_dtype_basic(LOCUS_EL_LLONG),
                                   locus_op_predefined(LOCUS_OP_MAX), &f->comm->coll);
    if (err == MPI_SUCCESS && (all[0] != -all[1] || all[2] != -all[3]))
        err = MPI_ERR_NOT_SAME;
    MPI_Offset cur = 0, to = 0;
    if (err == MPI_SUCCESS && f->comm->coll.rank == 0) {
        err = io_shared_fetch_add(f, 0, &cur);
        if (err == MPI_SUCCESS)
            err = io_seek_target(f, cur, offset, whence, &to);
        if (err == MPI_SUCCESS)
            err = io_shared_set(f, to);
    }
    /* after this, every rank sees the new position */
    err = io_agree(f, err);
    return io_err(f, err, fn, "the ranks gave different offsets, or a bad whence or offset");
}

LOCUS_PMPI_WEAK(File_get_position_shared)
int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
    LOCUS_ENTRY_CS();
    IO_FILE(f, fh, "MPI_File_get_position_shared");
    if (!offset)
        return io_err(f, MPI_ERR_ARG, "MPI_File_get_position_shared", "offset is NULL");
    return io_err(f, io_shared_fetch_add(f, 0, offset), "MPI_File_get_position_shared", NULL);
}
