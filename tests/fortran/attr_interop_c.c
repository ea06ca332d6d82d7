/*
 * attr_interop_c.c — the C half of the attr_interop test (MPI-4.1 19.3.7):
 * C reads attributes Fortran set (a pointer to the integer), sets ones
 * Fortran reads (the address), and has keyvals whose C callbacks get
 * Fortran's values by address. Each function returns how many checks
 * failed.
 */
#include <stdint.h>
#include <stdio.h>

#include <mpi.h>

#define CHECK(cond)                                                               \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "attr_interop_c.c:%d: %s failed\n", __LINE__, #cond); \
            errs++;                                                               \
        }                                                                         \
    } while (0)

/* A pointer C may read: not a small integer passed off as one (the
 * crash this test is about). */
static int readable(const void *p)
{
    return (uintptr_t)p >= 4096;
}

/* An attribute Fortran set with MPI_COMM_SET_ATTR (expect) or MPI_ATTR_PUT
 * (expect fits an INTEGER; is_int): C gets a pointer to the value. */
int c_comm_reads(MPI_Fint fcomm, int keyval, MPI_Aint expect, int is_int)
{
    int errs = 0, flag = 0;
    void *p = NULL;
    CHECK(MPI_Comm_get_attr(MPI_Comm_f2c(fcomm), keyval, &p, &flag) == MPI_SUCCESS && flag);
    CHECK(readable(p));
    if (readable(p) && is_int)
        CHECK(*(int *)p == (int)expect);
    else if (readable(p))
        CHECK(*(MPI_Aint *)p == expect);
    /* MPI_Attr_get is the same call in C. */
    void *q = NULL;
    CHECK(MPI_Attr_get(MPI_Comm_f2c(fcomm), keyval, &q, &flag) == MPI_SUCCESS && flag && q == p);
    return errs;
}

int c_type_reads(MPI_Fint ftype, int keyval, MPI_Aint expect)
{
    int errs = 0, flag = 0;
    MPI_Aint *p = NULL;
    CHECK(MPI_Type_get_attr(MPI_Type_f2c(ftype), keyval, &p, &flag) == MPI_SUCCESS && flag);
    CHECK(readable(p) && *p == expect);
    return errs;
}

int c_win_reads(MPI_Fint fwin, int keyval, MPI_Aint expect)
{
    int errs = 0, flag = 0;
    MPI_Aint *p = NULL;
    CHECK(MPI_Win_get_attr(MPI_Win_f2c(fwin), keyval, &p, &flag) == MPI_SUCCESS && flag);
    CHECK(readable(p) && *p == expect);
    return errs;
}

/* C's value: the address of this, which Fortran reads as an integer. */
static int c_target = 5;

MPI_Aint c_comm_sets(MPI_Fint fcomm, int keyval)
{
    MPI_Comm_set_attr(MPI_Comm_f2c(fcomm), keyval, &c_target);
    return (MPI_Aint)(intptr_t)&c_target;
}

/* MPI_ATTR_GET gives Fortran the address cut to an INTEGER. */
MPI_Fint c_truncated(MPI_Aint address)
{
    return (MPI_Fint)address;
}

/* A C keyval (MPI_COMM_DUP_FN copies) whose delete callback records the
 * value it gets: a pointer to Fortran's integer. */
static int deletes;
static MPI_Aint deleted;

static int record_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    deletes++;
    deleted = readable(val) ? *(MPI_Aint *)val : -1;
    return MPI_SUCCESS;
}

int c_keyval(void)
{
    int k = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, record_delete, &k, NULL);
    return k;
}

/* How many deletions the callback saw, and the last value. */
int c_deletes(MPI_Aint *value)
{
    *value = deleted;
    return deletes;
}
