/*
 * fort_attr.c — attribute caching from Fortran: keyvals whose copy and
 * delete callbacks are Fortran procedures, attribute values that are
 * INTEGER(KIND=MPI_ADDRESS_KIND) values (INTEGER for the MPI-1 calls)
 * rather than pointers, the predefined attributes' values (C gives a
 * pointer to them), and the predefined callbacks MPI_COMM_DUP_FN & co as
 * procedures a Fortran program passes by name.
 *
 * A Fortran keyval's C extra_state is a small record of the Fortran
 * procedures and extra_state; C calls a trampoline of the object's kind
 * that turns handles into integers and calls the Fortran procedure. The
 * records live until MPI_Finalize (MPI may still call the callbacks of a
 * freed keyval while attributes of it exist).
 *
 * Each keyval creation and attribute call tells the C library it comes
 * from Fortran (mpi_fortran.h): the library keeps a Fortran value as an
 * integer that C reads through a pointer, hands Fortran callbacks and
 * MPI_*_GET_ATTR integers, and C's own values as their addresses
 * (MPI-4.1 19.3.7).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "fort_impl.h"

/* The Fortran callbacks (MPI-2 forms; the MPI-1 ones take INTEGERs). */
typedef void(fort_copy_fn)(const MPI_Fint *obj, const MPI_Fint *keyval, const MPI_Aint *extra,
                           const MPI_Aint *in, MPI_Aint *out, MPI_Fint *flag, MPI_Fint *ierror);
typedef void(fort_delete_fn)(const MPI_Fint *obj, const MPI_Fint *keyval, const MPI_Aint *val,
                             const MPI_Aint *extra, MPI_Fint *ierror);
typedef void(fort_copy1_fn)(const MPI_Fint *comm, const MPI_Fint *keyval, const MPI_Fint *extra,
                            const MPI_Fint *in, MPI_Fint *out, MPI_Fint *flag, MPI_Fint *ierror);
typedef void(fort_delete1_fn)(const MPI_Fint *comm, const MPI_Fint *keyval, const MPI_Fint *val,
                              const MPI_Fint *extra, MPI_Fint *ierror);
typedef void (*fort_proc)(void);

typedef struct fort_keyval fort_keyval_t;
struct fort_keyval {
    fort_proc copy, del;         /* the Fortran procedures */
    MPI_Aint extra;              /* the Fortran extra_state */
    MPI_Fint extra1;             /* MPI_KEYVAL_CREATE's INTEGER extra_state */
    fort_keyval_t *next;
};

static struct {
    pthread_mutex_t lock;
    fort_keyval_t *all;
} keyvals = { PTHREAD_MUTEX_INITIALIZER, NULL };

/* ---- the predefined callbacks, as Fortran procedures ---- */

#define NULL_COPY(name)                                                                   \
    FORT_API void name(const MPI_Fint *obj, const MPI_Fint *keyval, const MPI_Aint *extra, \
                       const MPI_Aint *in, MPI_Aint *out, MPI_Fint *flag, MPI_Fint *ierror) \
    {                                                                                     \
        (void)obj, (void)keyval, (void)extra, (void)in, (void)out;                        \
        *flag = 0;                                                                        \
        *ierror = MPI_SUCCESS;                                                            \
    }
#define DUP(name)                                                                         \
    FORT_API void name(const MPI_Fint *obj, const MPI_Fint *keyval, const MPI_Aint *extra, \
                       const MPI_Aint *in, MPI_Aint *out, MPI_Fint *flag, MPI_Fint *ierror) \
    {                                                                                     \
        (void)obj, (void)keyval, (void)extra;                                             \
        *out = *in;                                                                       \
        *flag = 1;                                                                        \
        *ierror = MPI_SUCCESS;                                                            \
    }
#define NULL_DELETE(name)                                                                  \
    FORT_API void name(const MPI_Fint *obj, const MPI_Fint *keyval, const MPI_Aint *val,    \
                       const MPI_Aint *extra, MPI_Fint *ierror)                            \
    {                                                                                      \
        (void)obj, (void)keyval, (void)val, (void)extra;                                   \
        *ierror = MPI_SUCCESS;                                                             \
    }
NULL_COPY(mpi_comm_null_copy_fn_)
NULL_COPY(mpi_type_null_copy_fn_)
NULL_COPY(mpi_win_null_copy_fn_)
DUP(mpi_comm_dup_fn_)
DUP(mpi_type_dup_fn_)
DUP(mpi_win_dup_fn_)
NULL_DELETE(mpi_comm_null_delete_fn_)
NULL_DELETE(mpi_type_null_delete_fn_)
NULL_DELETE(mpi_win_null_delete_fn_)

/* MPI-1 forms: INTEGER attribute values. */
FORT_API void mpi_null_copy_fn_(const MPI_Fint *comm, const MPI_Fint *keyval, const MPI_Fint *extra,
                                const MPI_Fint *in, MPI_Fint *out, MPI_Fint *flag,
                                MPI_Fint *ierror)
{
    (void)comm, (void)keyval, (void)extra, (void)in, (void)out;
    *flag = 0;
    *ierror = MPI_SUCCESS;
}

FORT_API void mpi_dup_fn_(const MPI_Fint *comm, const MPI_Fint *keyval, const MPI_Fint *extra,
                          const MPI_Fint *in, MPI_Fint *out, MPI_Fint *flag, MPI_Fint *ierror)
{
    (void)comm, (void)keyval, (void)extra;
    *out = *in;
    *flag = 1;
    *ierror = MPI_SUCCESS;
}

FORT_API void mpi_null_delete_fn_(const MPI_Fint *comm, const MPI_Fint *keyval,
                                  const MPI_Fint *val, const MPI_Fint *extra, MPI_Fint *ierror)
{
    (void)comm, (void)keyval, (void)val, (void)extra;
    *ierror = MPI_SUCCESS;
}

/* Old programs pass the MPI-1 or another kind's predefined callback: all
 * null copies mean "do not copy", all dups "copy the value". */
static int is_null_copy(fort_proc f)
{
    return f == (fort_proc)mpi_comm_null_copy_fn_ || f == (fort_proc)mpi_type_null_copy_fn_ ||
           f == (fort_proc)mpi_win_null_copy_fn_ || f == (fort_proc)mpi_null_copy_fn_;
}

static int is_dup(fort_proc f)
{
    return f == (fort_proc)mpi_comm_dup_fn_ || f == (fort_proc)mpi_type_dup_fn_ ||
           f == (fort_proc)mpi_win_dup_fn_ || f == (fort_proc)mpi_dup_fn_;
}

static int is_null_delete(fort_proc f)
{
    return f == (fort_proc)mpi_comm_null_delete_fn_ || f == (fort_proc)mpi_type_null_delete_fn_ ||
           f == (fort_proc)mpi_win_null_delete_fn_ || f == (fort_proc)mpi_null_delete_fn_;
}

/* ---- trampolines: C calls these with the keyval's record ---- */

#define TRAMPOLINES(Kind, type)                                                          \
    static int Kind##_copy_tramp(type obj, int keyval, void *extra, void *in, void *out, \
                                 int *flag)                                              \
    {                                                                                    \
        fort_keyval_t *k = extra;                                                        \
        MPI_Fint o = PMPI_##Kind##_toint(obj), key = keyval, f = 0, ierr = MPI_SUCCESS;  \
        MPI_Aint vin = (MPI_Aint)in, vout = 0;                                           \
        ((fort_copy_fn *)k->copy)(&o, &key, &k->extra, &vin, &vout, &f, &ierr);          \
        *flag = f != 0;                                                                  \
        if (*flag)                                                                       \
            *(void **)out = (void *)vout;                                                \
        return ierr;                                                                     \
    }                                                                                    \
    static int Kind##_delete_tramp(type obj, int keyval, void *val, void *extra)         \
    {                                                                                    \
        fort_keyval_t *k = extra;                                                        \
        MPI_Fint o = PMPI_##Kind##_toint(obj), key = keyval, ierr = MPI_SUCCESS;         \
        MPI_Aint v = (MPI_Aint)val;                                                      \
        ((fort_delete_fn *)k->del)(&o, &key, &v, &k->extra, &ierr);                      \
        return ierr;                                                                     \
    }
TRAMPOLINES(Comm, MPI_Comm)
TRAMPOLINES(Type, MPI_Datatype)
TRAMPOLINES(Win, MPI_Win)

static int comm1_copy_tramp(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    fort_keyval_t *k = extra;
    MPI_Fint c = PMPI_Comm_toint(comm), key = keyval, f = 0, ierr = MPI_SUCCESS;
    MPI_Fint vin = (MPI_Fint)(intptr_t)in, vout = 0;
    ((fort_copy1_fn *)k->copy)(&c, &key, &k->extra1, &vin, &vout, &f, &ierr);
    *flag = f != 0;
    if (*flag)
        *(void **)out = (void *)(intptr_t)vout;
    return ierr;
}

static int comm1_delete_tramp(MPI_Comm comm, int keyval, void *val, void *extra)
{
    fort_keyval_t *k = extra;
    MPI_Fint c = PMPI_Comm_toint(comm), key = keyval, v = (MPI_Fint)(intptr_t)val;
    MPI_Fint ierr = MPI_SUCCESS;
    ((fort_delete1_fn *)k->del)(&c, &key, &v, &k->extra1, &ierr);
    return ierr;
}

/* The record of a new keyval, kept until MPI_Finalize; NULL when memory
 * runs out. */
static fort_keyval_t *keyval_record(fort_proc copy, fort_proc del, MPI_Aint extra)
{
    fort_keyval_t *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    k->copy = copy;
    k->del = del;
    k->extra = extra;
    k->extra1 = (MPI_Fint)extra;
    pthread_mutex_lock(&keyvals.lock);
    k->next = keyvals.all;
    keyvals.all = k;
    pthread_mutex_unlock(&keyvals.lock);
    return k;
}

void fort_attr_release(void)
{
    pthread_mutex_lock(&keyvals.lock);
    while (keyvals.all) {
        fort_keyval_t *k = keyvals.all;
        keyvals.all = k->next;
        free(k);
    }
    pthread_mutex_unlock(&keyvals.lock);
}

#define CREATE_KEYVAL(Kind, kind, NULLCOPY, DUPFN, NULLDEL)                                  \
    FORT_API void pmpi_##kind##_create_keyval_(fort_copy_fn *copy_fn, fort_delete_fn *delete_fn, \
                                               MPI_Fint *keyval, const MPI_Aint *extra_state, \
                                               MPI_Fint *ierror)                             \
    {                                                                                        \
        fort_proc cf = (fort_proc)copy_fn, df = (fort_proc)delete_fn;                        \
        fort_keyval_t *k = keyval_record(cf, df, *extra_state);                              \
        if (!k) {                                                                            \
            *ierror = fort_err(MPI_ERR_NO_MEM, "MPI_" #Kind "_create_keyval",               \
                               "no memory for the keyval's callbacks");                      \
            return;                                                                          \
        }                                                                                    \
        locus_attr_from_fortran(LOCUS_ATTR_FORM_AINT);                                       \
        *ierror = PMPI_##Kind##_create_keyval(is_null_copy(cf) ? NULLCOPY                    \
                                              : is_dup(cf)     ? DUPFN                       \
                                                               : Kind##_copy_tramp,          \
                                              is_null_delete(df) ? NULLDEL                   \
                                                                 : Kind##_delete_tramp,      \
                                              keyval, k);                                    \
        locus_attr_from_fortran(LOCUS_ATTR_FORM_C);                                          \
    }                                                                                        \
    FORT_WEAK(pmpi_##kind##_create_keyval_, mpi_##kind##_create_keyval_)
CREATE_KEYVAL(Comm, comm, MPI_COMM_NULL_COPY_FN, MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN)
CREATE_KEYVAL(Type, type, MPI_TYPE_NULL_COPY_FN, MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN)
CREATE_KEYVAL(Win, win, MPI_WIN_NULL_COPY_FN, MPI_WIN_DUP_FN, MPI_WIN_NULL_DELETE_FN)

FORT_API void pmpi_keyval_create_(fort_copy1_fn *copy_fn, fort_delete1_fn *delete_fn,
                                  MPI_Fint *keyval, const MPI_Fint *extra_state, MPI_Fint *ierror)
{
    fort_proc cf = (fort_proc)copy_fn, df = (fort_proc)delete_fn;
    fort_keyval_t *k = keyval_record(cf, df, *extra_state);
    if (!k) {
        *ierror = fort_err(MPI_ERR_NO_MEM, "MPI_Keyval_create",
                           "no memory for the keyval's callbacks");
        return;
    }
    locus_attr_from_fortran(LOCUS_ATTR_FORM_FINT);
    *ierror = PMPI_Keyval_create(is_null_copy(cf) ? MPI_NULL_COPY_FN
                                 : is_dup(cf)     ? MPI_DUP_FN
                                                  : comm1_copy_tramp,
                                 is_null_delete(df) ? MPI_NULL_DELETE_FN : comm1_delete_tramp,
                                 keyval, k);
    locus_attr_from_fortran(LOCUS_ATTR_FORM_C);
}
FORT_WEAK(pmpi_keyval_create_, mpi_keyval_create_)

/* ---- attribute values ---- */

/* The predefined attributes whose C value points to an int. */
static int comm_attr_is_int(int keyval)
{
    return keyval == MPI_TAG_UB || keyval == MPI_HOST || keyval == MPI_IO ||
           keyval == MPI_WTIME_IS_GLOBAL || keyval == MPI_APPNUM ||
           keyval == MPI_UNIVERSE_SIZE || keyval == MPI_LASTUSEDCODE;
}

/* A window attribute's value as Fortran sees it: MPI_WIN_BASE is the
 * address itself, MPI_WIN_SIZE points to an MPI_Aint, the others to an int. */
static MPI_Aint win_attr_value(int keyval, void *v)
{
    if (keyval == MPI_WIN_SIZE)
        return *(MPI_Aint *)v;
    if (keyval == MPI_WIN_DISP_UNIT || keyval == MPI_WIN_CREATE_FLAVOR ||
        keyval == MPI_WIN_MODEL)
        return *(int *)v;
    return (MPI_Aint)v;
}

static MPI_Aint comm_attr_value(int keyval, void *v)
{
    return comm_attr_is_int(keyval) ? *(int *)v : (MPI_Aint)v;
}

static MPI_Aint type_attr_value(int keyval, void *v)
{
    (void)keyval;
    return (MPI_Aint)v;
}

#define ATTR_CALLS(Kind, kind)                                                                \
    FORT_API void pmpi_##kind##_set_attr_(const MPI_Fint *obj, const MPI_Fint *keyval,        \
                                          const MPI_Aint *attribute_val, MPI_Fint *ierror)    \
    {                                                                                         \
        locus_attr_from_fortran(LOCUS_ATTR_FORM_AINT);                                        \
        *ierror = PMPI_##Kind##_set_attr(PMPI_##Kind##_fromint(*obj), *keyval,                \
                                         (void *)*attribute_val);                             \
        locus_attr_from_fortran(LOCUS_ATTR_FORM_C);                                           \
    }                                                                                         \
    FORT_WEAK(pmpi_##kind##_set_attr_, mpi_##kind##_set_attr_)                                \
    FORT_API void pmpi_##kind##_get_attr_(const MPI_Fint *obj, const MPI_Fint *keyval,        \
                                          MPI_Aint *attribute_val, MPI_Fint *flag,            \
                                          MPI_Fint *ierror)                                   \
    {                                                                                         \
        void *v = NULL;                                                                       \
        locus_attr_from_fortran(LOCUS_ATTR_FORM_AINT);                                        \
        int rc = PMPI_##Kind##_get_attr(PMPI_##Kind##_fromint(*obj), *keyval, &v, flag);      \
        locus_attr_from_fortran(LOCUS_ATTR_FORM_C);                                           \
        if (rc == MPI_SUCCESS) {                                                              \
            fort_logical_out(flag, 1);                                                        \
            if (*flag)                                                                        \
                *attribute_val = kind##_attr_value(*keyval, v);                               \
        }                                                                                     \
        *ierror = rc;                                                                         \
    }                                                                                         \
    FORT_WEAK(pmpi_##kind##_get_attr_, mpi_##kind##_get_attr_)
ATTR_CALLS(Comm, comm)
ATTR_CALLS(Type, type)
ATTR_CALLS(Win, win)

FORT_API void pmpi_attr_put_(const MPI_Fint *comm, const MPI_Fint *keyval,
                             const MPI_Fint *attribute_val, MPI_Fint *ierror)
{
    locus_attr_from_fortran(LOCUS_ATTR_FORM_FINT);
    *ierror = PMPI_Attr_put(PMPI_Comm_fromint(*comm), *keyval,
                            (void *)(intptr_t)*attribute_val);
    locus_attr_from_fortran(LOCUS_ATTR_FORM_C);
}
FORT_WEAK(pmpi_attr_put_, mpi_attr_put_)

FORT_API void pmpi_attr_get_(const MPI_Fint *comm, const MPI_Fint *keyval,
                             MPI_Fint *attribute_val, MPI_Fint *flag, MPI_Fint *ierror)
{
    void *v = NULL;
    locus_attr_from_fortran(LOCUS_ATTR_FORM_FINT);
    int rc = PMPI_Attr_get(PMPI_Comm_fromint(*comm), *keyval, &v, flag);
    locus_attr_from_fortran(LOCUS_ATTR_FORM_C);
    if (rc == MPI_SUCCESS) {
        fort_logical_out(flag, 1);
        if (*flag)
            *attribute_val = (MPI_Fint)comm_attr_value(*keyval, v);
    }
    *ierror = rc;
}
FORT_WEAK(pmpi_attr_get_, mpi_attr_get_)
