/*
 * rma_region.c — moving bytes between a packed stream and target memory:
 * a datatype layout in this process, runs in this process, or runs in a
 * node peer through Cross Memory Attach (process_vm_readv/writev); the
 * CMA probe; accumulate arithmetic on packed streams.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "locus_copy.h"
#include "rma.h"

/* iovecs per process_vm_* call (the kernel's UIO_MAXIOV). */
#define CMA_IOV 1024
/* The kernel moves at most this much per call (MAX_RW_COUNT). */
#define CMA_MAX_CALL 0x7ffff000ul

/* Moves t's runs (up to t->len bytes) with process_vm_readv/writev. */
static int cma_move(const rma_target_t *t, char *stream, int write)
{
    struct iovec local, remote[CMA_IOV];
    size_t run = 0, in_run = 0, done = 0;
    while (done < t->len) {
        int nio = 0;
        size_t batch = 0;
        while (nio < CMA_IOV && run < t->nruns && done + batch < t->len &&
               batch < CMA_MAX_CALL) {
            size_t left = (size_t)t->runs[run].len - in_run;
            size_t want = t->len - done - batch;
            size_t room = CMA_MAX_CALL - batch;
            size_t n = left < want ? left : want;
            n = n < room ? n : room;
            remote[nio].iov_base = t->base + t->runs[run].off + (int64_t)in_run;
            remote[nio].iov_len = n;
            nio++;
            batch += n;
            in_run += n;
            if (in_run == t->runs[run].len) {
                run++;
                in_run = 0;
            }
        }
        if (batch == 0)
            return -EFAULT;
        local.iov_base = stream + done;
        local.iov_len = batch;
        ssize_t got = write ? process_vm_writev(t->pid, &local, 1, remote, (unsigned long)nio, 0)
                            : process_vm_readv(t->pid, &local, 1, remote, (unsigned long)nio, 0);
        if (got < 0) {
            if (errno == EINTR)
                continue;   /* nothing moved: the same batch again */
            return -errno;
        }
        /* A short transfer means an unmapped page at the target. */
        if ((size_t)got != batch)
            return -EFAULT;
        done += batch;
    }
    return 0;
}

/* Runs in this process's memory. */
static void runs_move(const rma_target_t *t, char *stream, int write)
{
    size_t done = 0;
    for (size_t i = 0; i < t->nruns && done < t->len; i++) {
        size_t n = t->runs[i].len < t->len - done ? t->runs[i].len : t->len - done;
        char *mem = t->base + t->runs[i].off;
        if (write)
            locus_copy(mem, stream + done, n);
        else
            locus_copy(stream + done, mem, n);
        done += n;
    }
}

int rma_target_read(const rma_target_t *t, void *stream)
{
    if (t->len == 0)
        return 0;
    if (t->dt) {
        locus_dtype_pack(t->base, t->count, t->dt, 0, stream, t->len);
        return 0;
    }
    if (t->pid > 0)
        return cma_move(t, stream, 0);
    runs_move(t, stream, 0);
    return 0;
}

int rma_target_write(const rma_target_t *t, const void *stream)
{
    if (t->len == 0)
        return 0;
    if (t->dt) {
        locus_dtype_unpack(t->base, t->count, t->dt, 0, stream, t->len);
        return 0;
    }
    if (t->pid > 0)
        return cma_move(t, (char *)stream, 1);
    runs_move(t, (char *)stream, 1);
    return 0;
}

int rma_cma_probe(pid_t pid, uint64_t addr, uint64_t cookie)
{
    uint64_t v = 0;
    struct iovec l = { &v, sizeof v }, r = { (void *)(uintptr_t)addr, sizeof v };
    ssize_t got = process_vm_readv(pid, &l, 1, &r, 1, 0);
    if (got < 0)
        return -errno;
    /* Same pid, other process (another pid namespace): the bytes differ. */
    return got == (ssize_t)sizeof v && v == cookie ? 0 : -EIO;
}

/* ---- accumulate arithmetic ---- */

int rma_op_elem(int op, locus_elem_t el)
{
    if (locus_op_valid(op, el))
        return (int)el;
    if (el == LOCUS_EL_BYTE && locus_op_valid(op, LOCUS_EL_UCHAR))
        return LOCUS_EL_UCHAR;
    return -1;
}

int rma_apply(int op, locus_elem_t el, const void *in, void *inout, size_t len)
{
    size_t esz = locus_elem_size(el), ext = locus_elem_extent(el);
    if (op == LOCUS_OP_NO_OP || len == 0 || esz == 0)
        return MPI_SUCCESS;
    size_t n = len / esz;
    if (esz == ext)
        return locus_op_apply(op, el, in, inout, n) == 0 ? MPI_SUCCESS : MPI_ERR_OP;
    /* Padded pairs (e.g. MPI_SHORT_INT): the kernels take C arrays. */
    locus_dtype_t *bt = locus_dtype_basic(el);
    char *a = malloc(n * ext), *b = malloc(n * ext);
    int err = a && b ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (err == MPI_SUCCESS) {
        locus_dtype_unpack(a, n, bt, 0, in, len);
        locus_dtype_unpack(b, n, bt, 0, inout, len);
        if (locus_op_apply(op, el, a, b, n) != 0)
            err = MPI_ERR_OP;
        else
            locus_dtype_pack(b, n, bt, 0, inout, len);
    }
    free(a);
    free(b);
    return err;
}
