/*
 * file_access.c — one data access, whatever call made it (io_access):
 * checks, the memory side to a stream, the position (explicit offset,
 * individual pointer, shared pointer, or ordered by rank), the pieces of
 * the view, then independent or collective movement, the status, and the
 * pointer advanced. Also the individual pointer's own calls (seek,
 * get_position).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "io.h"

/* Rules of the access mode for one access, before anything moves. */
static int access_check(const locus_file_t *f, int write, int kind, MPI_Offset off)
{
    if (write && (f->amode & MPI_MODE_RDONLY)) {
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail, "the file was opened read-only");
        return MPI_ERR_READ_ONLY;
    }
    if (!write && (f->amode & MPI_MODE_WRONLY)) {
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail, "the file was opened write-only");
        return MPI_ERR_ACCESS;
    }
    if ((f->amode & MPI_MODE_SEQUENTIAL) && (kind == IO_AT || kind == IO_INDIV)) {
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail,
                 "explicit offsets and individual pointers on a MPI_MODE_SEQUENTIAL file");
        return MPI_ERR_UNSUPPORTED_OPERATION;
    }
    if (kind == IO_AT && off < 0) {
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail, "negative offset");
        return MPI_ERR_ARG;
    }
    return MPI_SUCCESS;
}

/* Ordered access: my position is the shared pointer plus what the ranks
 * before me access; the pointer moves past all of it. Collective. */
static int ordered_pos(locus_file_t *f, int err, MPI_Offset mine, MPI_Offset *pos)
{
    locus_coll_comm_t *cc = &f->comm->coll;
    long long v[2] = { mine, err }, before[2] = { 0, 0 }, total[2];
    locus_dtype_t *ll = locus_dtype_basic(LOCUS_EL_LLONG);
    int e = locus_coll_exscan(v, before, 1, ll, locus_op_predefined(LOCUS_OP_SUM), cc);
    if (e == MPI_SUCCESS)
        e = locus_coll_allreduce(v, total, 2, ll, locus_op_predefined(LOCUS_OP_MAX), cc);
    if (e != MPI_SUCCESS)
        return e;
    if (total[1] != MPI_SUCCESS)
        return (int)total[1];
    if (cc->rank == 0)
        before[0] = 0; /* exscan leaves rank 0's undefined */
    long long sum = before[0] + mine, base = 0;
    /* the last rank knows the total; rank 0 moves the pointer by it */
    long long tot = 0;
    if (cc->rank == cc->size - 1)
        tot = sum;
    e = locus_coll_bcast(&tot, 1, ll, cc->size - 1, cc);
    MPI_Offset old = 0;
    if (e == MPI_SUCCESS && cc->rank == 0)
        e = io_shared_fetch_add(f, (MPI_Offset)tot, &old);
    base = old;
    if ((e = io_agree(f, e)) != MPI_SUCCESS)
        return e;
    e = locus_coll_bcast(&base, 1, ll, 0, cc);
    *pos = (MPI_Offset)(base + before[0]);
    return e;
}

int io_access(locus_file_t *f, int write, int kind, int coll, MPI_Offset off, void *buf,
              size_t count, locus_dtype_t *dt, MPI_Status *st, int err)
{
    locus_status_empty(st, MPI_ANY_SOURCE);
    char *stream = NULL;
    uint64_t len = 0, got = 0;
    int owned = 0;
    if (err == MPI_SUCCESS)
        err = access_check(f, write, kind, off);
    if (err == MPI_SUCCESS)
        err = write ? io_pack(f, buf, count, dt, &stream, &len, &owned)
                    : io_stream_alloc(f, buf, count, dt, &stream, &len, &owned);
    MPI_Offset etypes = (MPI_Offset)((len + f->esize - 1) / f->esize), pos = off;
    if (kind == IO_INDIV)
        pos = f->fp;
    else if (kind == IO_SHARED && err == MPI_SUCCESS)
        err = io_shared_fetch_add(f, etypes, &pos);
    else if (kind == IO_ORDERED)
        err = ordered_pos(f, err, err == MPI_SUCCESS ? etypes : 0, &pos);
    rma_run_t *p = NULL;
    size_t n = 0;
    if (err == MPI_SUCCESS)
        err = io_view_map(f, (uint64_t)pos * f->esize, len, &p, &n);
    if (coll) {
        err = io_coll(f, write, err, p, n, stream, &got);
    } else if (err == MPI_SUCCESS && n > 0) {
        int64_t lo = p[0].off, hi = p[n - 1].off + (int64_t)p[n - 1].len;
        if (f->atomic)
            err = io_lock(f, write ? F_WRLCK : F_RDLCK, lo, hi - lo);
        if (err == MPI_SUCCESS) {
            err = write ? io_pieces_write(f, p, n, stream) : io_pieces_read(f, p, n, stream, &got);
            if (f->atomic)
                io_lock(f, F_UNLCK, lo, hi - lo);
        }
    }
    free(p);
    if (write) {
        got = err == MPI_SUCCESS ? len : 0;
        if (owned)
            free(stream);
    }
    size_t mem = write && err == MPI_SUCCESS ? count * locus_dtype_size(dt) : 0;
    if (!write) {
        int e = io_unpack(f, buf, count, dt, stream, owned, err == MPI_SUCCESS ? got : 0, &mem);
        err = err != MPI_SUCCESS ? err : e;
    }
    if (err != MPI_SUCCESS)
        return err;
    if (kind == IO_INDIV)
        f->fp = pos + (MPI_Offset)(got / f->esize);
    if (st)
        locus_status_set_bytes(st, mem);
    return MPI_SUCCESS;
}

/* ---- the individual pointer ------------------------------------------------------ */

/* The view position of the end of the file, in etypes. */
static int end_position(locus_file_t *f, MPI_Offset *end)
{
    struct stat sb;
    if (fstat(f->fd, &sb) != 0)
        return io_errno_class(errno);
    *end = io_view_etypes_before(f, sb.st_size);
    return MPI_SUCCESS;
}

int io_seek_target(locus_file_t *f, MPI_Offset cur, MPI_Offset offset, int whence,
                   MPI_Offset *out)
{
    MPI_Offset base = 0;
    int err = MPI_SUCCESS;
    if (whence == MPI_SEEK_SET)
        base = 0;
    else if (whence == MPI_SEEK_CUR)
        base = cur;
    else if (whence == MPI_SEEK_END)
        err = end_position(f, &base);
    else
        err = MPI_ERR_ARG;
    if (err == MPI_SUCCESS && base + offset < 0) {
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail, "seek before the start of the view");
        err = MPI_ERR_ARG;
    }
    *out = base + offset;
    return err;
}

LOCUS_PMPI_WEAK(File_seek)
int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    LOCUS_ENTRY_CS();
    IO_FILE(f, fh, "MPI_File_seek");
    MPI_Offset to;
    int err = (f->amode & MPI_MODE_SEQUENTIAL) ? MPI_ERR_UNSUPPORTED_OPERATION
                                               : io_seek_target(f, f->fp, offset, whence, &to);
    if (err == MPI_SUCCESS)
        f->fp = to;
    return io_err(f, err, "MPI_File_seek", NULL);
}

LOCUS_PMPI_WEAK(File_get_position)
int PMPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    LOCUS_ENTRY_CS();
    IO_FILE(f, fh, "MPI_File_get_position");
    if (!offset)
        return io_err(f, MPI_ERR_ARG, "MPI_File_get_position", "offset is NULL");
    *offset = f->fp;
    return MPI_SUCCESS;
}
