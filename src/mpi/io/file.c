/*
 * file.c — opening, closing and deleting files, the list of open files
 * behind the handles, and how errors are raised on them.
 *
 * MPI_File_open is collective, and every rank must learn the same
 * outcome: rank 0 opens first with the creating flags (so that
 * MPI_MODE_EXCL means one creator, not "every rank but the first fails"),
 * the others then open the existing file, and the ranks agree on the worst
 * error after each step. A rank that fails closes what it opened; nobody
 * waits on a rank that gave up.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"

/* The error handler of MPI_FILE_NULL: the standard's default is
 * MPI_ERRORS_RETURN (I/O errors are usually recoverable). A file opened
 * gets the handler this has at that moment. */
static locus_errh_t *null_errh = &locus_errh_return;
/* The open files: a handle is valid when it is on this list. */
static locus_file_t *open_files;

locus_file_t *locus_file_of(MPI_File h)
{
    if (LOCUS_IS_PREDEF(h))
        return NULL;
    for (locus_file_t *f = open_files; f; f = f->next)
        if ((MPI_File)f == h)
            return f->magic == LOCUS_FILE_MAGIC ? f : NULL;
    return NULL;
}

locus_errh_t **io_null_errh_slot(void)
{
    return &null_errh;
}

int io_err(locus_file_t *f, int code, const char *fn, const char *why, ...)
{
    if (code == MPI_SUCCESS)
        return code;
    if (why) {
        va_list ap;
        va_start(ap, why);
        vsnprintf(locus_mpi.detail, sizeof locus_mpi.detail, why, ap);
        va_end(ap);
    }
    MPI_File h = locus_file_handle(f);
    return locus_errh_raise(f ? f->errh : null_errh, ERRH_ON_COMM, &h, code, fn);
}

int io_errno_class(int e)
{
    switch (e) {
    case ENOENT:
    case ENOTDIR:
        return MPI_ERR_NO_SUCH_FILE;
    case EACCES:
    case EPERM:
        return MPI_ERR_ACCESS;
    case EROFS:
    case ETXTBSY:
        return MPI_ERR_READ_ONLY;
    case EEXIST:
        return MPI_ERR_FILE_EXISTS;
    case ENAMETOOLONG:
    case EISDIR:
    case ELOOP:
        return MPI_ERR_BAD_FILE;
    case ENOSPC:
        return MPI_ERR_NO_SPACE;
    case EDQUOT:
        return MPI_ERR_QUOTA;
    case ENOMEM:
        return MPI_ERR_NO_MEM;
    case EBUSY:
        return MPI_ERR_FILE_IN_USE;
    default:
        return MPI_ERR_IO;
    }
}

int io_agree(locus_file_t *f, int err)
{
    int all = err;
    if (locus_coll_allreduce(&err, &all, 1, locus_dtype_basic(LOCUS_EL_INT),
                             locus_op_predefined(LOCUS_OP_MAX), &f->comm->coll) != MPI_SUCCESS)
        return err != MPI_SUCCESS ? err : MPI_ERR_OTHER;
    return all;
}

/* The access mode's own rules (MPI-4.1 14.2.1). */
static int amode_check(int amode)
{
    const int known = MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_WRONLY | MPI_MODE_CREATE |
                      MPI_MODE_EXCL | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN |
                      MPI_MODE_SEQUENTIAL | MPI_MODE_APPEND;
    int rw = !!(amode & MPI_MODE_RDONLY) + !!(amode & MPI_MODE_RDWR) + !!(amode & MPI_MODE_WRONLY);
    if (amode & ~known || rw != 1)
        return MPI_ERR_AMODE;
    if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        return MPI_ERR_AMODE;
    if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL))
        return MPI_ERR_AMODE;
    return MPI_SUCCESS;
}

/* ROMIO's file-system prefixes ("ufs:name") name the same POSIX file. */
static const char *strip_prefix(const char *name)
{
    static const char *const fs[] = { "ufs:", "nfs:", "posix:", "lustre:", "gpfs:", "pvfs2:",
                                      "testfs:" };
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
        if (strncmp(name, fs[i], strlen(fs[i])) == 0)
            return name + strlen(fs[i]);
    return name;
}

/* Opens the file on this rank; creating says whether this rank creates. */
static int open_local(locus_file_t *f, const char *path, int creating)
{
    int amode = f->amode, flags = 0;
    int writes = amode & (MPI_MODE_WRONLY | MPI_MODE_RDWR);
    if (!*path)
        return MPI_ERR_BAD_FILE;
    struct stat sb;
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode))
            return MPI_ERR_BAD_FILE;
        /* A file nobody may write is read-only even for root, whom the
         * kernel would let write it: the error says what the file is. */
        if (writes && !(sb.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)))
            return MPI_ERR_READ_ONLY;
    }
    if (creating && (amode & MPI_MODE_CREATE))
        flags |= O_CREAT;
    if (creating && (amode & MPI_MODE_EXCL))
        flags |= O_EXCL;
    /* A write-only file is opened read-write when allowed, so that sieved
     * writes can read the gaps they must keep (ROMIO does the same). Never
     * O_APPEND: pwrite would ignore its offset. */
    int fd = -1;
    if (amode & MPI_MODE_RDONLY) {
        fd = open(path, flags | O_RDONLY | O_CLOEXEC, 0666);
    } else {
        fd = open(path, flags | O_RDWR | O_CLOEXEC, 0666);
        f->fd_rw = fd >= 0;
        if (fd < 0 && errno == EACCES && (amode & MPI_MODE_WRONLY))
            fd = open(path, flags | O_WRONLY | O_CLOEXEC, 0666);
    }
    if (fd < 0)
        return io_errno_class(errno);
    f->fd = fd;
    return MPI_SUCCESS;
}

/* Undoes a partly made file (any step of open). */
static void file_free(locus_file_t *f)
{
    if (f->fd >= 0)
        close(f->fd);
    io_view_free(f);
    free(f->aggs);
    free(f->nic_of);
    free(f->name);
    if (f->comm)
        locus_comm_release(f->comm);
    locus_errh_drop(f->errh);
    f->magic = 0;
    free(f);
}

/* The collective steps of MPI_File_open once f->comm exists; agreed. */
static int open_steps(locus_file_t *f, const char *path, MPI_Info info)
{
    locus_coll_comm_t *cc = &f->comm->coll;
    /* the same amode everywhere: max of amode and of -amode */
    long long mine[3] = { amode_check(f->amode), f->amode, -f->amode }, all[3];
    int err = locus_coll_allreduce(mine, all, 3, locus_dtype_basic(LOCUS_EL_LLONG),
                                   locus_op_predefined(LOCUS_OP_MAX), cc);
    if (err != MPI_SUCCESS)
        return err;
    if (all[0] != MPI_SUCCESS)
        return (int)all[0];
    if (all[1] != -all[2])
        return MPI_ERR_NOT_SAME;
    if (cc->rank == 0)
        err = open_local(f, path, 1);
    err = io_agree(f, err);
    if (err != MPI_SUCCESS)
        return err;
    if (cc->rank != 0)
        err = open_local(f, path, 0);
    if ((err = io_agree(f, err)) != MPI_SUCCESS)
        return err;
    io_hints_default(&f->hints);
    io_hints_parse(&f->hints, info);
    err = io_nics_learn(f);
    if (err == MPI_SUCCESS)
        err = io_hints_agree(f);
    if (err == MPI_SUCCESS)
        err = io_view_set(f, 0, locus_dt_of(MPI_BYTE), locus_dt_of(MPI_BYTE), "native");
    /* MPI_MODE_APPEND: every pointer starts at the end (in the default
     * view an etype is a byte). */
    MPI_Offset end = 0;
    if (err == MPI_SUCCESS && (f->amode & MPI_MODE_APPEND)) {
        struct stat sb;
        if (fstat(f->fd, &sb) == 0)
            end = sb.st_size;
        else
            err = io_errno_class(errno);
    }
    f->fp = end;
    if ((err = io_agree(f, err)) != MPI_SUCCESS)
        return err;
    return io_shared_open(f, end);
}

LOCUS_PMPI_WEAK(File_open)
int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    LOCUS_ENTRY_CS();
    static const char fn[] = "MPI_File_open";
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *c = locus_comm_of(comm);
    if (fh)
        *fh = MPI_FILE_NULL;
    if (!locus_comm_valid(c))
        return locus_mpi_err(NULL, MPI_ERR_COMM, fn);
    if (c->local)
        return locus_mpi_err(c, MPI_ERR_COMM, fn);
    if (!filename || !fh)
        return io_err(NULL, MPI_ERR_ARG, fn, "no file name or handle");
    locus_file_t *f = calloc(1, sizeof *f);
    char *name = strdup(filename);
    if (!f || !name) {
        free(f);
        free(name);
        return io_err(NULL, MPI_ERR_NO_MEM, fn, NULL);
    }
    f->fd = -1;
    f->amode = amode;
    f->name = name;
    f->shwin = MPI_WIN_NULL;
    f->errh = null_errh;
    locus_errh_hold(f->errh);
    int err = locus_comm_split(c, 0, c->coll.rank, &f->comm);
    if (err == MPI_SUCCESS) {
        /* Our own collectives report to us; we raise on the file. Its
         * few small collectives (and the shared pointer's window, split
         * from it) go without a shared segment: making one took 80 % of
         * an open and close on one node. */
        locus_errh_set(f->comm, &locus_errh_return);
        f->comm->coll.no_shm = 1;
        err = open_steps(f, strip_prefix(filename), info);
    }
    if (err != MPI_SUCCESS) {
        const char *what = strip_prefix(filename);
        file_free(f);
        return io_err(NULL, err, fn, "%s", what);
    }
    f->magic = LOCUS_FILE_MAGIC;
    f->next = open_files;
    open_files = f;
    *fh = locus_file_handle(f);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(File_close)
int PMPI_File_close(MPI_File *fh)
{
    LOCUS_ENTRY_CS();
    static const char fn[] = "MPI_File_close";
    LOCUS_CHECK_INIT(fn);
    locus_file_t *f = fh ? locus_file_of(*fh) : NULL;
    if (!f)
        return io_err(NULL, MPI_ERR_FILE, fn, "not an open file");
    for (locus_file_t **p = &open_files; *p; p = &(*p)->next)
        if (*p == f) {
            *p = f->next;
            break;
        }
    int err = f->split ? MPI_ERR_OTHER : MPI_SUCCESS;
    io_shared_close(f); /* collective: everyone is done with the pointer */
    if (f->fd >= 0 && close(f->fd) != 0 && err == MPI_SUCCESS)
        err = io_errno_class(errno);
    f->fd = -1;
    if (f->amode & MPI_MODE_DELETE_ON_CLOSE) {
        /* Deleted once every rank has closed it. */
        locus_coll_barrier(&f->comm->coll);
        if (f->comm->coll.rank == 0 && unlink(strip_prefix(f->name)) != 0 && errno != ENOENT &&
            err == MPI_SUCCESS)
            err = io_errno_class(errno);
    }
    err = io_agree(f, err);
    /* Raised while the file's handler still exists; the file goes anyway. */
    locus_errh_t *e = f->errh;
    locus_errh_hold(e);
    *fh = MPI_FILE_NULL;
    file_free(f);
    if (err != MPI_SUCCESS) {
        MPI_File h = MPI_FILE_NULL;
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail, "closing the file failed");
        locus_errh_raise(e, ERRH_ON_COMM, &h, err, fn);
    }
    locus_errh_drop(e);
    return err;
}

LOCUS_PMPI_WEAK(File_delete)
int PMPI_File_delete(const char *filename, MPI_Info info)
{
    LOCUS_ENTRY_CS();
    static const char fn[] = "MPI_File_delete";
    LOCUS_CHECK_INIT(fn);
    (void)info;
    if (!filename)
        return io_err(NULL, MPI_ERR_ARG, fn, "no file name");
    const char *path = strip_prefix(filename);
    struct stat sb;
    if (!*path || (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)))
        return io_err(NULL, MPI_ERR_BAD_FILE, fn, "%s: not a file", path);
    if (unlink(path) != 0)
        return io_err(NULL, io_errno_class(errno), fn, "%s: %s", path, strerror(errno));
    return MPI_SUCCESS;
}

/* Drops a user handler left as MPI_FILE_NULL's at MPI_Finalize, and what
 * files the program left open (their communicators go with the runtime). */
void locus_file_finalize(void)
{
    while (open_files) {
        locus_file_t *f = open_files;
        open_files = f->next;
        if (f->fd >= 0)
            close(f->fd);
        f->fd = -1;
        f->magic = 0;
    }
    locus_errh_drop(null_errh);
    null_errh = &locus_errh_return;
    io_datarep_finalize();
    io_coll_finalize();
}
