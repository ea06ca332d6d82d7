/*
 * file_rw.c — moving an access's pieces between the file and its stream,
 * by one process: pread/pwrite per piece, or data sieving when the pieces
 * are many and small (ROMIO's idea): one covering block read and the
 * pieces copied out of it; for a write the block is read, patched and
 * written back, under a write lock on the block so that another process
 * writing into the gaps meanwhile does not lose its data.
 *
 * Locks are open-file-description locks where the kernel has them
 * (F_OFD_SETLKW, Linux 3.15): classic POSIX locks belong to the process,
 * so two handles on one file in one process would not exclude each other,
 * and closing any descriptor of the file would drop them all.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io.h"

int io_lock(locus_file_t *f, int type, int64_t off, int64_t len)
{
    if (len <= 0)
        return MPI_SUCCESS;
    struct flock fl = { .l_type = (short)type, .l_whence = SEEK_SET, .l_start = off,
                        .l_len = len, .l_pid = 0 };
    /* A read lock needs a readable descriptor, a write lock a writable
     * one: take what the descriptor allows (a write-only handle locks
     * for writing, a read-only one for reading). */
    if (type == F_WRLCK && (f->amode & MPI_MODE_RDONLY))
        fl.l_type = F_RDLCK;
    if (type == F_RDLCK && !f->fd_rw && !(f->amode & MPI_MODE_RDONLY))
        fl.l_type = F_WRLCK;
#ifdef F_OFD_SETLKW
    for (;;) {
        if (fcntl(f->fd, F_OFD_SETLKW, &fl) == 0)
            return MPI_SUCCESS;
        if (errno != EINTR)
            break;
    }
    if (errno != EINVAL)
        return io_errno_class(errno);
    fl.l_pid = 0;
#endif
    for (;;) {
        if (fcntl(f->fd, F_SETLKW, &fl) == 0)
            return MPI_SUCCESS;
        if (errno != EINTR)
            return io_errno_class(errno);
    }
}

/* Whole-length pread / pwrite; *done gets what was moved (a short read is
 * the end of file). */
static int pread_all(int fd, char *buf, uint64_t len, int64_t off, uint64_t *done)
{
    *done = 0;
    while (*done < len) {
        ssize_t r = pread(fd, buf + *done, len - *done, off + (int64_t)*done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return io_errno_class(errno);
        if (r == 0)
            break;
        *done += (uint64_t)r;
    }
    return MPI_SUCCESS;
}

static int pwrite_all(int fd, const char *buf, uint64_t len, int64_t off)
{
    uint64_t done = 0;
    while (done < len) {
        ssize_t r = pwrite(fd, buf + done, len - done, off + (int64_t)done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return io_errno_class(r < 0 ? errno : ENOSPC);
        done += (uint64_t)r;
    }
    return MPI_SUCCESS;
}

uint64_t io_pieces_before(const rma_run_t *p, size_t n, int64_t size)
{
    uint64_t got = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i].off + (int64_t)p[i].len <= size) {
            got += p[i].len;
            continue;
        }
        if (p[i].off < size)
            got += (uint64_t)(size - p[i].off);
        break;
    }
    return got;
}

/* The pieces [i, *j) that one sieving block covers: several pieces
 * within buffer bytes of the first. 1 when sieving applies. */
static int sieve_group(const rma_run_t *p, size_t n, size_t i, size_t buffer, int mode,
                       size_t *j)
{
    size_t k = i + 1;
    if (mode != IO_CB_DISABLE)
        while (k < n && (uint64_t)(p[k].off + (int64_t)p[k].len - p[i].off) <= buffer)
            k++;
    *j = k;
    return k - i > 1;
}

int io_pieces_read(locus_file_t *f, const rma_run_t *p, size_t n, char *stream, uint64_t *got)
{
    uint64_t at = 0, done;
    int err = MPI_SUCCESS, eof = 0;
    char *block = NULL;
    *got = 0;
    for (size_t i = 0, j; i < n && err == MPI_SUCCESS && !eof; i = j) {
        if (!sieve_group(p, n, i, f->hints.ind_rd_buffer_size, f->hints.ds_read, &j)) {
            err = pread_all(f->fd, stream + at, p[i].len, p[i].off, &done);
            *got += done;
            at += p[i].len;
            eof = done < p[i].len;
            continue;
        }
        uint64_t span = (uint64_t)(p[j - 1].off + (int64_t)p[j - 1].len - p[i].off);
        if (!block && !(block = malloc(f->hints.ind_rd_buffer_size))) {
            err = MPI_ERR_NO_MEM;
            break;
        }
        err = pread_all(f->fd, block, span, p[i].off, &done);
        for (size_t k = i; k < j && err == MPI_SUCCESS; k++) {
            uint64_t rel = (uint64_t)(p[k].off - p[i].off);
            uint64_t have = done > rel ? done - rel : 0;
            if (have > p[k].len)
                have = p[k].len;
            memcpy(stream + at, block + rel, have);
            *got += have;
            at += p[k].len;
            if (have < p[k].len) {
                eof = 1;
                break;
            }
        }
    }
    free(block);
    return err;
}

int io_pieces_write(locus_file_t *f, const rma_run_t *p, size_t n, const char *stream)
{
    uint64_t at = 0, done;
    int err = MPI_SUCCESS;
    char *block = NULL;
    /* read-modify-write needs to read: not on a descriptor opened write-only */
    int mode = f->fd_rw ? f->hints.ds_write : IO_CB_DISABLE;
    for (size_t i = 0, j; i < n && err == MPI_SUCCESS; i = j) {
        if (!sieve_group(p, n, i, f->hints.ind_wr_buffer_size, mode, &j)) {
            /* Locked too when other ranks may sieve over these bytes: their
             * read-modify-write must not write back what this one replaced. */
            int lock = !f->atomic && f->comm->coll.size > 1 && f->hints.ds_write != IO_CB_DISABLE;
            if (lock && (err = io_lock(f, F_WRLCK, p[i].off, (int64_t)p[i].len)) != MPI_SUCCESS)
                break;
            err = pwrite_all(f->fd, stream + at, p[i].len, p[i].off);
            if (lock)
                io_lock(f, F_UNLCK, p[i].off, (int64_t)p[i].len);
            at += p[i].len;
            continue;
        }
        int64_t lo = p[i].off;
        uint64_t span = (uint64_t)(p[j - 1].off + (int64_t)p[j - 1].len - lo);
        if (!block && !(block = malloc(f->hints.ind_wr_buffer_size))) {
            err = MPI_ERR_NO_MEM;
            break;
        }
        /* In atomic mode the whole access is locked already (and a second
         * lock and unlock of the same bytes would release that one). */
        if (!f->atomic && (err = io_lock(f, F_WRLCK, lo, (int64_t)span)) != MPI_SUCCESS)
            break;
        err = pread_all(f->fd, block, span, lo, &done);
        if (err == MPI_SUCCESS) {
            memset(block + done, 0, span - done);
            for (size_t k = i; k < j; k++) {
                memcpy(block + (p[k].off - lo), stream + at, p[k].len);
                at += p[k].len;
            }
            err = pwrite_all(f->fd, block, span, lo);
        }
        if (!f->atomic)
            io_lock(f, F_UNLCK, lo, (int64_t)span);
    }
    free(block);
    return err;
}
