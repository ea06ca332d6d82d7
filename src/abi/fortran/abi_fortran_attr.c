/*
 * abi_fortran_attr.c — attributes from Fortran: the value of an attribute
 * set from Fortran is an INTEGER(KIND=MPI_ADDRESS_KIND) (INTEGER for the
 * MPI-1 calls) kept as C's void * itself, while the predefined attributes
 * are C pointers to the value, which Fortran reads as the value; the
 * keyvals' copy and delete functions are Fortran subroutines, called
 * through C functions of the C layer's signature that find the Fortran
 * one in their extra state (struct fort_keyval); and the predefined
 * Fortran callbacks (MPI_COMM_DUP_FN ...), which a program passes by
 * address.
 */
#include <stdlib.h>

#include "abi_fortran.h"

/* ---- getting and setting ---- */

/* Of the predefined attributes, those whose C value points to an int
 * (MPI_WIN_BASE is the address itself; MPI_WIN_SIZE points to an
 * MPI_Aint). */
static int points_to_int(int keyval)
{
    return keyval == MPI_TAG_UB || keyval == MPI_HOST || keyval == MPI_IO ||
           keyval == MPI_WTIME_IS_GLOBAL || keyval == MPI_UNIVERSE_SIZE ||
           keyval == MPI_LASTUSEDCODE || keyval == MPI_APPNUM || keyval == MPI_WIN_DISP_UNIT ||
           keyval == MPI_WIN_CREATE_FLAVOR || keyval == MPI_WIN_MODEL;
}

/* The C keyval of a Fortran one: MPICH's mpif.h gives each predefined
 * attribute its C value plus one (MPI_TAG_UB 0x64400002, C's 0x64400001);
 * Open MPI's are C's. */
static int keyval_in(int keyval)
{
#ifndef OPEN_MPI
    if ((keyval & 1) == 0 && points_to_int(keyval - 1))
        return keyval - 1;
    if (keyval - 1 == MPI_WIN_SIZE || keyval - 1 == MPI_WIN_BASE)
        return keyval - 1;
#endif
    return keyval;
}

/* The C value as Fortran sees it. */
static MPI_Aint attr_value(int keyval, void *v)
{
    if (points_to_int(keyval))
        return *(int *)v;
    if (keyval == MPI_WIN_SIZE)
        return *(MPI_Aint *)v;
    return (MPI_Aint)v;
}

#define ATTR_PAIR(low, UP, Kind, handle_t)                                                     \
    FORT_API void pmpi_##low##_set_attr_(const MPI_Fint *h, const MPI_Fint *keyval,            \
                                         const MPI_Aint *value, MPI_Fint *ierror)              \
    {                                                                                          \
        *ierror = MPI_##Kind##_set_attr(MPI_##Kind##_f2c(*h), keyval_in(*keyval),              \
                                        (void *)*value);                                       \
    }                                                                                          \
    FORT_ALIASES(low##_set_attr, UP##_SET_ATTR)                                                \
    FORT_API void pmpi_##low##_get_attr_(const MPI_Fint *h, const MPI_Fint *keyval,            \
                                         MPI_Aint *value, MPI_Fint *flag, MPI_Fint *ierror)    \
    {                                                                                          \
        void *v = NULL;                                                                        \
        int k = keyval_in(*keyval);                                                            \
        *ierror = MPI_##Kind##_get_attr(MPI_##Kind##_f2c(*h), k, &v, flag);                    \
        if (*ierror == MPI_SUCCESS) {                                                          \
            *flag = *flag ? FORT_TRUE : FORT_FALSE;                                            \
            if (*flag)                                                                         \
                *value = attr_value(k, v);                                                     \
        }                                                                                      \
    }                                                                                          \
    FORT_ALIASES(low##_get_attr, UP##_GET_ATTR)
ATTR_PAIR(comm, COMM, Comm, MPI_Comm)
ATTR_PAIR(type, TYPE, Type, MPI_Datatype)
ATTR_PAIR(win, WIN, Win, MPI_Win)

/* MPI-1's: an INTEGER value. */
FORT_API void pmpi_attr_put_(const MPI_Fint *comm, const MPI_Fint *keyval, const MPI_Fint *value,
                             MPI_Fint *ierror)
{
    *ierror = MPI_Comm_set_attr(MPI_Comm_f2c(*comm), keyval_in(*keyval),
                                (void *)(MPI_Aint)*value);
}
FORT_ALIASES(attr_put, ATTR_PUT)

FORT_API void pmpi_attr_get_(const MPI_Fint *comm, const MPI_Fint *keyval, MPI_Fint *value,
                             MPI_Fint *flag, MPI_Fint *ierror)
{
    void *v = NULL;
    int k = keyval_in(*keyval);
    *ierror = MPI_Comm_get_attr(MPI_Comm_f2c(*comm), k, &v, flag);
    if (*ierror == MPI_SUCCESS) {
        *flag = *flag ? FORT_TRUE : FORT_FALSE;
        if (*flag)
            *value = (MPI_Fint)attr_value(k, v);
    }
}
FORT_ALIASES(attr_get, ATTR_GET)

/* ---- keyvals with Fortran callbacks ---- */

/* The Fortran subroutines: new style (MPI_ADDRESS_KIND values and extra
 * state) or MPI-1's (INTEGER ones). */
typedef void fort_copy_fn(const MPI_Fint *, const MPI_Fint *, const void *, const void *,
                          void *, MPI_Fint *, MPI_Fint *);
typedef void fort_delete_fn(const MPI_Fint *, const MPI_Fint *, const void *, const void *,
                            MPI_Fint *);

/* A keyval's Fortran side, its C extra state. Kept for the program's
 * life: attributes may outlive the keyval's freeing. */
struct fort_keyval {
    fort_copy_fn *copy;
    fort_delete_fn *del;
    MPI_Aint extra;
    int mpi1; /* INTEGER values and extra state */
};

static int call_copy(MPI_Fint h, int keyval, struct fort_keyval *k, void *in, void *out,
                     int *flag)
{
    MPI_Fint kv = keyval, fflag = FORT_FALSE, ierr = MPI_SUCCESS;
    if (k->mpi1) {
        MPI_Fint extra = (MPI_Fint)k->extra, vin = (MPI_Fint)(MPI_Aint)in, vout = 0;
        k->copy(&h, &kv, &extra, &vin, &vout, &fflag, &ierr);
        *(void **)out = (void *)(MPI_Aint)vout;
    } else {
        MPI_Aint vin = (MPI_Aint)in, vout = 0;
        k->copy(&h, &kv, &k->extra, &vin, &vout, &fflag, &ierr);
        *(void **)out = (void *)vout;
    }
    *flag = fflag != FORT_FALSE;
    return ierr;
}

static int call_delete(MPI_Fint h, int keyval, struct fort_keyval *k, void *value)
{
    MPI_Fint kv = keyval, ierr = MPI_SUCCESS;
    if (k->mpi1) {
        MPI_Fint extra = (MPI_Fint)k->extra, v = (MPI_Fint)(MPI_Aint)value;
        k->del(&h, &kv, &v, &extra, &ierr);
    } else {
        MPI_Aint v = (MPI_Aint)value;
        k->del(&h, &kv, &v, &k->extra, &ierr);
    }
    return ierr;
}

#define KEYVAL_CALLS(low, Kind, handle_t)                                                      \
    static int low##_copy(handle_t o, int keyval, void *extra, void *in, void *out,           \
                          int *flag)                                                           \
    {                                                                                          \
        return call_copy(MPI_##Kind##_c2f(o), keyval, extra, in, out, flag);                   \
    }                                                                                          \
    static int low##_delete(handle_t o, int keyval, void *value, void *extra)                  \
    {                                                                                          \
        return call_delete(MPI_##Kind##_c2f(o), keyval, extra, value);                         \
    }
KEYVAL_CALLS(comm, Comm, MPI_Comm)
KEYVAL_CALLS(type, Type, MPI_Datatype)
KEYVAL_CALLS(win, Win, MPI_Win)

static struct fort_keyval *keyval_new(void *copy, void *del, MPI_Aint extra, int mpi1)
{
    struct fort_keyval *k = malloc(sizeof *k);
    if (k)
        *k = (struct fort_keyval){ (fort_copy_fn *)copy, (fort_delete_fn *)del, extra, mpi1 };
    return k;
}

#define KEYVAL_CREATE(low, UP, Kind)                                                           \
    FORT_API void pmpi_##low##_create_keyval_(void *copy, void *del, MPI_Fint *keyval,         \
                                              const MPI_Aint *extra, MPI_Fint *ierror)         \
    {                                                                                          \
        struct fort_keyval *k = keyval_new(copy, del, *extra, 0);                              \
        if (!k) {                                                                              \
            *ierror = fort_err(MPI_ERR_NO_MEM, "MPI_" #Kind "_create_keyval", "no memory");    \
            return;                                                                            \
        }                                                                                      \
        *ierror = MPI_##Kind##_create_keyval(low##_copy, low##_delete, keyval, k);            \
        if (*ierror != MPI_SUCCESS)                                                            \
            free(k);                                                                           \
    }                                                                                          \
    FORT_ALIASES(low##_create_keyval, UP##_CREATE_KEYVAL)
KEYVAL_CREATE(comm, COMM, Comm)
KEYVAL_CREATE(type, TYPE, Type)
KEYVAL_CREATE(win, WIN, Win)

FORT_API void pmpi_keyval_create_(void *copy, void *del, MPI_Fint *keyval, const MPI_Fint *extra,
                                  MPI_Fint *ierror)
{
    struct fort_keyval *k = keyval_new(copy, del, *extra, 1);
    if (!k) {
        *ierror = fort_err(MPI_ERR_NO_MEM, "MPI_Keyval_create", "no memory");
        return;
    }
    *ierror = MPI_Comm_create_keyval(comm_copy, comm_delete, keyval, k);
    if (*ierror != MPI_SUCCESS)
        free(k);
}
FORT_ALIASES(keyval_create, KEYVAL_CREATE)

/* ---- the predefined Fortran callbacks ----
 * The C header #defines the C names of the same spelling (MPI_DUP_FN ...),
 * which FORT_ALIASES pastes. */
#undef MPI_NULL_COPY_FN
#undef MPI_DUP_FN
#undef MPI_NULL_DELETE_FN
#undef MPI_COMM_NULL_COPY_FN
#undef MPI_COMM_DUP_FN
#undef MPI_COMM_NULL_DELETE_FN
#undef MPI_TYPE_NULL_COPY_FN
#undef MPI_TYPE_DUP_FN
#undef MPI_TYPE_NULL_DELETE_FN
#undef MPI_WIN_NULL_COPY_FN
#undef MPI_WIN_DUP_FN
#undef MPI_WIN_NULL_DELETE_FN
#undef MPI_CONVERSION_FN_NULL
#undef PMPI_NULL_COPY_FN
#undef PMPI_DUP_FN
#undef PMPI_NULL_DELETE_FN

#define FORT_CALLBACKS(low, UP, value_t)                                                       \
    FORT_API void pmpi_##low##null_copy_fn_(const MPI_Fint *o, const MPI_Fint *k,              \
                                            const value_t *extra, const value_t *in,           \
                                            value_t *out, MPI_Fint *flag, MPI_Fint *ierror)    \
    {                                                                                          \
        (void)o, (void)k, (void)extra, (void)in, (void)out;                                    \
        *flag = FORT_FALSE;                                                                    \
        *ierror = MPI_SUCCESS;                                                                 \
    }                                                                                          \
    FORT_ALIASES(low##null_copy_fn, UP##NULL_COPY_FN)                                          \
    FORT_API void pmpi_##low##dup_fn_(const MPI_Fint *o, const MPI_Fint *k,                    \
                                      const value_t *extra, const value_t *in, value_t *out,   \
                                      MPI_Fint *flag, MPI_Fint *ierror)                        \
    {                                                                                          \
        (void)o, (void)k, (void)extra;                                                         \
        *out = *in;                                                                            \
        *flag = FORT_TRUE;                                                                     \
        *ierror = MPI_SUCCESS;                                                                 \
    }                                                                                          \
    FORT_ALIASES(low##dup_fn, UP##DUP_FN)                                                      \
    FORT_API void pmpi_##low##null_delete_fn_(const MPI_Fint *o, const MPI_Fint *k,            \
                                              const value_t *v, const value_t *extra,          \
                                              MPI_Fint *ierror)                                \
    {                                                                                          \
        (void)o, (void)k, (void)v, (void)extra;                                                \
        *ierror = MPI_SUCCESS;                                                                 \
    }                                                                                          \
    FORT_ALIASES(low##null_delete_fn, UP##NULL_DELETE_FN)
FORT_CALLBACKS(, , MPI_Fint)
FORT_CALLBACKS(comm_, COMM_, MPI_Aint)
FORT_CALLBACKS(type_, TYPE_, MPI_Aint)
FORT_CALLBACKS(win_, WIN_, MPI_Aint)

/* Only ever compared by address (MPI_REGISTER_DATAREP is not bound). */
FORT_API void pmpi_conversion_fn_null_(void)
{
}
FORT_ALIASES(conversion_fn_null, CONVERSION_FN_NULL)
