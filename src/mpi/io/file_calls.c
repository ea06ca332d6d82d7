/*
 * file_calls.c — the data access calls, every one a form of io_access:
 * explicit offsets (_at), the individual pointer, the shared pointer
 * (_shared) and ordered access (_ordered); independent or collective
 * (_all); blocking, nonblocking (MPI_File_i*: complete at once, see
 * file_req.c) or split (_begin runs the access, _end hands over its
 * status and error); each in its int and large-count (_c) form.
 */
#include <stdio.h>

#include "io.h"

enum { FORM_BLOCKING, FORM_NB, FORM_SPLIT };

/* The argument checks every form makes, then the access. A collective
 * form takes part even after a local error, to agree on it. */
static int rw(MPI_File fh, int write, int kind, int coll, MPI_Offset off, const void *buf,
              MPI_Count count, MPI_Datatype dt, MPI_Status *st, MPI_Request *req, int form,
              const char *fn)
{
    IO_FILE(f, fh, fn);
    int err = MPI_SUCCESS;
    const char *why = NULL;
    if (count < 0)
        err = MPI_ERR_COUNT, why = "negative count";
    else if (locus_check_dtype(dt))
        err = MPI_ERR_TYPE, why = "not a committed datatype";
    else if (form == FORM_NB && !req)
        err = MPI_ERR_ARG, why = "request is NULL";
    if (coll && f->split)
        err = MPI_ERR_OTHER, why = "a split collective is active on this file";
    if (err != MPI_SUCCESS && !coll)
        return io_err(f, err, fn, "%s", why);
    MPI_Status tmp;
    MPI_Status *sp = st && st != MPI_STATUS_IGNORE ? st : &tmp;
    if (err != MPI_SUCCESS)
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail, "%s", why);
    locus_dtype_t *d = err == MPI_SUCCESS ? locus_dt_of(dt) : locus_dtype_basic(LOCUS_EL_BYTE);
    err = io_access(f, write, kind, coll, off, (void *)buf, err == MPI_SUCCESS ? (size_t)count : 0,
                    d, sp, err);
    if (form == FORM_SPLIT && !(coll && f->split)) {
        /* reported by the _end call */
        f->split = 1;
        f->split_err = err;
        f->split_st = *sp;
        return MPI_SUCCESS;
    }
    if (req) {
        if (err == MPI_SUCCESS)
            err = io_req_done(sp, err, req);
        else
            *req = MPI_REQUEST_NULL;
    }
    return io_err(f, err, fn, NULL);
}

static int split_end(MPI_File fh, MPI_Status *st, const char *fn)
{
    IO_FILE(f, fh, fn);
    if (!f->split)
        return io_err(f, MPI_ERR_OTHER, fn, "no split collective is active on this file");
    f->split = 0;
    if (st && st != MPI_STATUS_IGNORE)
        *st = f->split_st;
    return io_err(f, f->split_err, fn, NULL);
}

/* NAME(fh, [offset,] buf, count, datatype, last) and its _c twin: last is
 * the status of a blocking access (ST = last, RQ = NULL) or the request of
 * a nonblocking one (ST = NULL, RQ = last). */
#define ACCESS_AT(Name, W, KIND, COLL, Q, LAST, ST, RQ, FORM)                             \
    LOCUS_PMPI_WEAK(Name)                                                                 \
    int PMPI_##Name(MPI_File fh, MPI_Offset offset, Q void *buf, int count, MPI_Datatype dt, \
                    LAST last)                                                            \
    {                                                                                     \
        LOCUS_ENTRY_CS();                                                                 \
        return rw(fh, W, KIND, COLL, offset, buf, count, dt, ST, RQ, FORM, "MPI_" #Name);  \
    }                                                                                     \
    LOCUS_PMPI_WEAK(Name##_c)                                                             \
    int PMPI_##Name##_c(MPI_File fh, MPI_Offset offset, Q void *buf, MPI_Count count,     \
                        MPI_Datatype dt, LAST last)                                       \
    {                                                                                     \
        LOCUS_ENTRY_CS();                                                                 \
        return rw(fh, W, KIND, COLL, offset, buf, count, dt, ST, RQ, FORM,                \
                  "MPI_" #Name "_c");                                                     \
    }
#define ACCESS_PT(Name, W, KIND, COLL, Q, LAST, ST, RQ, FORM)                             \
    LOCUS_PMPI_WEAK(Name)                                                                 \
    int PMPI_##Name(MPI_File fh, Q void *buf, int count, MPI_Datatype dt, LAST last)      \
    {                                                                                     \
        LOCUS_ENTRY_CS();                                                                 \
        return rw(fh, W, KIND, COLL, 0, buf, count, dt, ST, RQ, FORM, "MPI_" #Name);       \
    }                                                                                     \
    LOCUS_PMPI_WEAK(Name##_c)                                                             \
    int PMPI_##Name##_c(MPI_File fh, Q void *buf, MPI_Count count, MPI_Datatype dt,       \
                        LAST last)                                                        \
    {                                                                                     \
        LOCUS_ENTRY_CS();                                                                 \
        return rw(fh, W, KIND, COLL, 0, buf, count, dt, ST, RQ, FORM, "MPI_" #Name "_c");  \
    }
#define RW_AT(Name, W, KIND, COLL, Q) \
    ACCESS_AT(Name, W, KIND, COLL, Q, MPI_Status *, last, NULL, FORM_BLOCKING)
#define RW_PT(Name, W, KIND, COLL, Q) \
    ACCESS_PT(Name, W, KIND, COLL, Q, MPI_Status *, last, NULL, FORM_BLOCKING)
#define I_AT(Name, W, KIND, COLL, Q) \
    ACCESS_AT(Name, W, KIND, COLL, Q, MPI_Request *, NULL, last, FORM_NB)
#define I_PT(Name, W, KIND, COLL, Q) \
    ACCESS_PT(Name, W, KIND, COLL, Q, MPI_Request *, NULL, last, FORM_NB)

/* Split collectives: NAME_begin(fh, [offset,] buf, count, datatype) and
 * NAME_end(fh, buf, status). */
#define SPLIT_AT(Name, W, KIND, Q)                                                        \
    LOCUS_PMPI_WEAK(Name##_begin)                                                         \
    int PMPI_##Name##_begin(MPI_File fh, MPI_Offset offset, Q void *buf, int count,       \
                            MPI_Datatype dt)                                              \
    { LOCUS_ENTRY_CS(); return rw(fh, W, KIND, 1, offset, buf, count, dt, NULL, NULL, FORM_SPLIT, "MPI_" #Name "_begin"); } \
    LOCUS_PMPI_WEAK(Name##_begin_c)                                                       \
    int PMPI_##Name##_begin_c(MPI_File fh, MPI_Offset offset, Q void *buf, MPI_Count count, \
                              MPI_Datatype dt)                                            \
    { LOCUS_ENTRY_CS(); return rw(fh, W, KIND, 1, offset, buf, count, dt, NULL, NULL, FORM_SPLIT, "MPI_" #Name "_begin_c"); } \
    LOCUS_PMPI_WEAK(Name##_end)                                                           \
    int PMPI_##Name##_end(MPI_File fh, Q void *buf, MPI_Status *st)                       \
    { LOCUS_ENTRY_CS(); (void)buf; return split_end(fh, st, "MPI_" #Name "_end"); }
#define SPLIT_PT(Name, W, KIND, Q)                                                        \
    LOCUS_PMPI_WEAK(Name##_begin)                                                         \
    int PMPI_##Name##_begin(MPI_File fh, Q void *buf, int count, MPI_Datatype dt)         \
    { LOCUS_ENTRY_CS(); return rw(fh, W, KIND, 1, 0, buf, count, dt, NULL, NULL, FORM_SPLIT, "MPI_" #Name "_begin"); } \
    LOCUS_PMPI_WEAK(Name##_begin_c)                                                       \
    int PMPI_##Name##_begin_c(MPI_File fh, Q void *buf, MPI_Count count, MPI_Datatype dt) \
    { LOCUS_ENTRY_CS(); return rw(fh, W, KIND, 1, 0, buf, count, dt, NULL, NULL, FORM_SPLIT, "MPI_" #Name "_begin_c"); } \
    LOCUS_PMPI_WEAK(Name##_end)                                                           \
    int PMPI_##Name##_end(MPI_File fh, Q void *buf, MPI_Status *st)                       \
    { LOCUS_ENTRY_CS(); (void)buf; return split_end(fh, st, "MPI_" #Name "_end"); }

#define RD /* a read's buffer */
#define WR const

RW_AT(File_read_at, 0, IO_AT, 0, RD)
RW_AT(File_write_at, 1, IO_AT, 0, WR)
RW_AT(File_read_at_all, 0, IO_AT, 1, RD)
RW_AT(File_write_at_all, 1, IO_AT, 1, WR)
RW_PT(File_read, 0, IO_INDIV, 0, RD)
RW_PT(File_write, 1, IO_INDIV, 0, WR)
RW_PT(File_read_all, 0, IO_INDIV, 1, RD)
RW_PT(File_write_all, 1, IO_INDIV, 1, WR)
RW_PT(File_read_shared, 0, IO_SHARED, 0, RD)
RW_PT(File_write_shared, 1, IO_SHARED, 0, WR)
RW_PT(File_read_ordered, 0, IO_ORDERED, 1, RD)
RW_PT(File_write_ordered, 1, IO_ORDERED, 1, WR)

I_AT(File_iread_at, 0, IO_AT, 0, RD)
I_AT(File_iwrite_at, 1, IO_AT, 0, WR)
I_AT(File_iread_at_all, 0, IO_AT, 1, RD)
I_AT(File_iwrite_at_all, 1, IO_AT, 1, WR)
I_PT(File_iread, 0, IO_INDIV, 0, RD)
I_PT(File_iwrite, 1, IO_INDIV, 0, WR)
I_PT(File_iread_all, 0, IO_INDIV, 1, RD)
I_PT(File_iwrite_all, 1, IO_INDIV, 1, WR)
I_PT(File_iread_shared, 0, IO_SHARED, 0, RD)
I_PT(File_iwrite_shared, 1, IO_SHARED, 0, WR)

SPLIT_AT(File_read_at_all, 0, IO_AT, RD)
SPLIT_AT(File_write_at_all, 1, IO_AT, WR)
SPLIT_PT(File_read_all, 0, IO_INDIV, RD)
SPLIT_PT(File_write_all, 1, IO_INDIV, WR)
SPLIT_PT(File_read_ordered, 0, IO_ORDERED, RD)
SPLIT_PT(File_write_ordered, 1, IO_ORDERED, WR)
