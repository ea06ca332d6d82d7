/*
 * abi_cb.c — the user's functions that Locus calls back with its own
 * handles: reduction operations (int and _c), error handlers of every kind
 * of object, attribute copy and delete functions, generalized requests. Each is called through a function of the
 * layer's that turns Locus's handles and codes into MPICH's first.
 *
 * Attribute callbacks carry an extra-state pointer, which carries the
 * user's functions and extra state along. Reduction operations and error
 * handlers carry none, so each registration takes one of a fixed set of
 * trampolines (ABI_TRAMPOLINES of each), freed with its op (ops only: an
 * error handler's last reference is Locus's business, so its trampoline
 * stays taken, and serves every later handler of the same function). The ABI's own DUP_FN function (MPICH's MPIR_Dup_fn, Open
 * MPI's OMPI_C_MPI_COMM_DUP_FN) is its folder's.
 */
#include "abi_layer.h"
#include "abi_locus_values.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define ABI_TRAMPOLINES 128

typedef void (*locus_user_fn)(void *, void *, int *, void **);
typedef void (*locus_user_fn_c)(void *, void *, MPI_Count *, void **);
typedef void (*locus_errh_fn)(void **, int *, ...);
typedef int (*locus_copy_fn)(void *, int, void *, void *, void *, int *);
typedef int (*locus_delete_fn)(void *, int, void *, void *);

/* Trampoline 8i+j of each kind: T8(i) makes eight, T128 all. */
#define T8(i) T(i, 0) T(i, 1) T(i, 2) T(i, 3) T(i, 4) T(i, 5) T(i, 6) T(i, 7)
#define T128 T8(0) T8(1) T8(2) T8(3) T8(4) T8(5) T8(6) T8(7) T8(8) T8(9) T8(10) T8(11) \
    T8(12) T8(13) T8(14) T8(15)

/* ---- reduction operations ---- */

/* A slot's user function: MPI_User_function, or MPI_User_function_c when
 * large; NULL when free. */
static struct {
    void (*fn)(void);
    int large;
    void *locus; /* the Locus op holding the slot */
} op_slot[ABI_TRAMPOLINES];

static void op_call(int slot, void *in, void *inout, int *len, void **dt)
{
    MPI_Datatype t = abi_dtype_out(*dt);
    ((MPI_User_function *)op_slot[slot].fn)(in, inout, len, &t);
}

static void op_call_c(int slot, void *in, void *inout, MPI_Count *len, void **dt)
{
    MPI_Datatype t = abi_dtype_out(*dt);
    ((MPI_User_function_c *)op_slot[slot].fn)(in, inout, len, &t);
}

#define T(i, j)                                                                                \
    static void op_t##i##j(void *a, void *b, int *n, void **d) { op_call(8 * i + j, a, b, n, d); } \
    static void op_c##i##j(void *a, void *b, MPI_Count *n, void **d)                           \
    {                                                                                          \
        op_call_c(8 * i + j, a, b, n, d);                                                      \
    }
T128
#undef T
#define T(i, j) op_t##i##j,
static const locus_user_fn op_tramp[ABI_TRAMPOLINES] = { T128 };
#undef T
#define T(i, j) op_c##i##j,
static const locus_user_fn_c op_tramp_c[ABI_TRAMPOLINES] = { T128 };
#undef T

/* One op over a free slot's trampoline (the int or the _c one). */
static int op_create(void (*user_fn)(void), int large, int commute, MPI_Op *op)
{
    if (!user_fn || !op)
        return MPI_ERR_ARG;
    int slot = 0;
    while (slot < ABI_TRAMPOLINES && op_slot[slot].fn)
        slot++;
    if (slot == ABI_TRAMPOLINES)
        return MPI_ERR_INTERN; /* more live user ops than trampolines */
    void *l = NULL;
    int rc = large ? abi_locus.op_create_c((void *)op_tramp_c[slot], commute, &l)
                   : abi_locus.op_create((void *)op_tramp[slot], commute, &l);
    if (rc != 0)
        return abi_err_out(rc);
    op_slot[slot].fn = user_fn;
    op_slot[slot].large = large;
    op_slot[slot].locus = l;
    *op = abi_op_out(l);
    return MPI_SUCCESS;
}

int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    return op_create((void (*)(void))user_fn, 0, commute, op);
}
#pragma weak MPI_Op_create = PMPI_Op_create

int PMPI_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
    return op_create((void (*)(void))user_fn, 1, commute, op);
}
#pragma weak MPI_Op_create_c = PMPI_Op_create_c

int PMPI_Op_free(MPI_Op *op)
{
    if (!op)
        return MPI_ERR_ARG;
    void *l = abi_op_in(*op), *freed = l;
    int rc = abi_locus.op_free(&l);
    if (rc != 0)
        return abi_err_out(rc);
    /* Operations still under way keep Locus's op, not the slot's user
     * function: a slot is given again only to a later MPI_Op_create. */
    for (int i = 0; i < ABI_TRAMPOLINES; i++)
        if (op_slot[i].fn && op_slot[i].locus == freed)
            op_slot[i].fn = NULL;
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}
#pragma weak MPI_Op_free = PMPI_Op_free

/* ---- error handlers: communicators, windows, files, sessions ---- */

/* A slot: one user function of one kind of object (every handler made of
 * that function shares it). */
static struct {
    void (*fn)(void);
    int kind; /* abi_errh_kind */
} errh_slot[ABI_TRAMPOLINES];

static void errh_call(int slot, void **obj, int *code)
{
    int e = abi_err_out(*code);
    switch (errh_slot[slot].kind) {
    case ABI_ERRH_COMM: {
        MPI_Comm c = abi_comm_out(*obj);
        ((MPI_Comm_errhandler_function *)errh_slot[slot].fn)(&c, &e);
        break;
    }
    case ABI_ERRH_WIN: {
        MPI_Win w = abi_win_out(*obj);
        ((MPI_Win_errhandler_function *)errh_slot[slot].fn)(&w, &e);
        break;
    }
    case ABI_ERRH_FILE: {
        MPI_File f = abi_file_out(*obj);
        ((MPI_File_errhandler_function *)errh_slot[slot].fn)(&f, &e);
        break;
    }
    default: {
        MPI_Session s = abi_session_out(*obj);
        ((MPI_Session_errhandler_function *)errh_slot[slot].fn)(&s, &e);
    }
    }
}

#define T(i, j) static void errh_t##i##j(void **c, int *e, ...) { errh_call(8 * i + j, c, e); }
T128
#undef T
#define T(i, j) errh_t##i##j,
static const locus_errh_fn errh_tramp[ABI_TRAMPOLINES] = { T128 };
#undef T

static int errh_create(int kind, void (*fn)(void), MPI_Errhandler *errhandler)
{
    if (!fn || !errhandler)
        return MPI_ERR_ARG;
    int slot = 0;
    while (slot < ABI_TRAMPOLINES && errh_slot[slot].fn &&
           !(errh_slot[slot].fn == fn && errh_slot[slot].kind == kind))
        slot++;
    if (slot == ABI_TRAMPOLINES)
        return MPI_ERR_INTERN; /* more distinct handler functions than trampolines */
    errh_slot[slot].fn = fn;
    errh_slot[slot].kind = kind;
    void *l = NULL;
    int rc = abi_locus.create_errhandler[kind]((void *)errh_tramp[slot], &l);
    if (rc != 0)
        return abi_err_out(rc);
    *errhandler = abi_errh_out(l);
    return MPI_SUCCESS;
}

#define ERRH_CREATE(Kind, KIND)                                                                \
    int PMPI_##Kind##_create_errhandler(MPI_##Kind##_errhandler_function *fn,                  \
                                        MPI_Errhandler *errhandler)                            \
    {                                                                                          \
        return errh_create(ABI_ERRH_##KIND, (void (*)(void))fn, errhandler);                   \
    }
ERRH_CREATE(Comm, COMM)
ERRH_CREATE(Win, WIN)
ERRH_CREATE(File, FILE)
ERRH_CREATE(Session, SESSION)
#pragma weak MPI_Comm_create_errhandler = PMPI_Comm_create_errhandler
#pragma weak MPI_Errhandler_create = PMPI_Comm_create_errhandler
#pragma weak MPI_Win_create_errhandler = PMPI_Win_create_errhandler
#pragma weak MPI_File_create_errhandler = PMPI_File_create_errhandler
#pragma weak MPI_Session_create_errhandler = PMPI_Session_create_errhandler

/* ---- attribute callbacks ---- */

/* The user's functions and extra state, kept for the keyval's life
 * (Locus's attributes may outlive its free); one struct for every kind,
 * the functions called through the kind's own type. */
typedef struct {
    void (*copy)(void);
    void (*del)(void);
    void *extra;
} keyval_fns_t;

/* The keyval calls of one kind of object: Comm, Type or Win. */
#define KEYVALS(Kind, kind, type, conv)                                                        \
    static int kind##_copy_call(void *o, int keyval, void *extra, void *in, void *out,         \
                                int *flag)                                                     \
    {                                                                                          \
        keyval_fns_t *k = extra;                                                               \
        if (!k->copy) {                                                                        \
            *flag = 0;                                                                         \
            return 0;                                                                          \
        }                                                                                      \
        int rc = ((MPI_##Kind##_copy_attr_function *)k->copy)(                                 \
            abi_##conv##_out(o), abi_keyval_out(keyval), k->extra, in, out, flag);             \
        return rc ? abi_class_in(rc) : 0;                                                      \
    }                                                                                          \
    static int kind##_delete_call(void *o, int keyval, void *val, void *extra)                 \
    {                                                                                          \
        keyval_fns_t *k = extra;                                                               \
        if (!k->del)                                                                           \
            return 0;                                                                          \
        int rc = ((MPI_##Kind##_delete_attr_function *)k->del)(abi_##conv##_out(o),            \
                                                               abi_keyval_out(keyval), val,    \
                                                               k->extra);                      \
        return rc ? abi_class_in(rc) : 0;                                                      \
    }                                                                                          \
    int PMPI_##Kind##_create_keyval(MPI_##Kind##_copy_attr_function *copy_fn,                  \
                                    MPI_##Kind##_delete_attr_function *delete_fn, int *keyval, \
                                    void *extra)                                               \
    {                                                                                          \
        if (!keyval)                                                                           \
            return MPI_ERR_ARG;                                                                \
        keyval_fns_t *k = malloc(sizeof *k);                                                   \
        if (!k)                                                                                \
            return MPI_ERR_NO_MEM;                                                             \
        k->copy = (void (*)(void))copy_fn;                                                     \
        k->del = (void (*)(void))delete_fn;                                                    \
        k->extra = extra;                                                                      \
        int l = 0;                                                                             \
        int rc = abi_locus.kind##_create_keyval((void *)kind##_copy_call,                      \
                                                (void *)kind##_delete_call, &l, k);            \
        if (rc != 0) {                                                                         \
            free(k);                                                                           \
            return abi_err_out(rc);                                                            \
        }                                                                                      \
        *keyval = abi_keyval_out(l);                                                           \
        return MPI_SUCCESS;                                                                    \
    }                                                                                          \
    int PMPI_##Kind##_free_keyval(int *keyval)                                                 \
    {                                                                                          \
        if (!keyval)                                                                           \
            return MPI_ERR_ARG;                                                                \
        int l = abi_keyval_in(*keyval);                                                        \
        int rc = abi_locus.kind##_free_keyval(&l);                                             \
        if (rc == 0)                                                                           \
            *keyval = MPI_KEYVAL_INVALID;                                                      \
        return abi_err_out(rc);                                                                \
    }
KEYVALS(Comm, comm, MPI_Comm, comm)
KEYVALS(Type, type, MPI_Datatype, dtype)
KEYVALS(Win, win, MPI_Win, win)
#pragma weak MPI_Comm_create_keyval = PMPI_Comm_create_keyval
#pragma weak MPI_Comm_free_keyval = PMPI_Comm_free_keyval
#pragma weak MPI_Type_create_keyval = PMPI_Type_create_keyval
#pragma weak MPI_Type_free_keyval = PMPI_Type_free_keyval
#pragma weak MPI_Win_create_keyval = PMPI_Win_create_keyval
#pragma weak MPI_Win_free_keyval = PMPI_Win_free_keyval

/* ---- generalized requests ---- */

/* The user's three functions and extra state; freed after the free one. */
typedef struct {
    MPI_Grequest_query_function *query;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel;
    void *extra;
} greq_fns_t;

/* Locus asks for the status: the user fills the ABI's, Locus gets its own. */
static int greq_query(void *extra, void *lstatus)
{
    greq_fns_t *g = extra;
    MPI_Status s;
    memset(&s, 0, sizeof s);
    int rc = g->query(g->extra, &s);
    abi_status_in(&s, lstatus);
    return rc ? abi_class_in(rc) : 0;
}

static int greq_free(void *extra)
{
    greq_fns_t *g = extra;
    int rc = g->free_fn(g->extra);
    free(g);
    return rc ? abi_class_in(rc) : 0;
}

static int greq_cancel(void *extra, int complete)
{
    greq_fns_t *g = extra;
    int rc = g->cancel(g->extra, complete);
    return rc ? abi_class_in(rc) : 0;
}

int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn,
                        MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                        MPI_Request *request)
{
    if (!query_fn || !free_fn || !cancel_fn || !request)
        return MPI_ERR_ARG;
    greq_fns_t *g = malloc(sizeof *g);
    if (!g)
        return MPI_ERR_NO_MEM;
    *g = (greq_fns_t){ query_fn, free_fn, cancel_fn, extra_state };
    void *l = NULL;
    int rc = abi_locus.grequest_start((void *)greq_query, (void *)greq_free,
                                      (void *)greq_cancel, g, &l);
    if (rc != 0) {
        free(g);
        return abi_err_out(rc);
    }
    *request = abi_req_out(l);
    return MPI_SUCCESS;
}
#pragma weak MPI_Grequest_start = PMPI_Grequest_start

/* ---- data representations ---- */

/* The user's functions of one representation: Locus calls them with its
 * own datatype handles, the user's see the ABI's. A representation lasts
 * as long as the program (no call removes one): the records stay here. */
typedef struct datarep_fns {
    void (*read)(void), (*write)(void); /* int or _c conversion functions */
    MPI_Datarep_extent_function *extent;
    int large;
    void *extra;
    struct datarep_fns *next;
} datarep_fns_t;

static datarep_fns_t *datareps;

static int datarep_conv(void (*fn)(void), const datarep_fns_t *d, void *userbuf, void *ldt,
                        MPI_Count count, void *filebuf, MPI_Offset position)
{
    MPI_Datatype t = abi_dtype_out(ldt);
    int rc = d->large ? ((MPI_Datarep_conversion_function_c *)fn)(userbuf, t, count, filebuf,
                                                                  position, d->extra)
                      : ((MPI_Datarep_conversion_function *)fn)(userbuf, t, (int)count,
                                                                filebuf, position, d->extra);
    return rc ? abi_class_in(rc) : 0;
}

static int datarep_read(void *u, void *ldt, int count, void *f, MPI_Offset pos, void *extra)
{
    datarep_fns_t *d = extra;
    return datarep_conv(d->read, d, u, ldt, count, f, pos);
}

static int datarep_write(void *u, void *ldt, int count, void *f, MPI_Offset pos, void *extra)
{
    datarep_fns_t *d = extra;
    return datarep_conv(d->write, d, u, ldt, count, f, pos);
}

static int datarep_read_c(void *u, void *ldt, MPI_Count count, void *f, MPI_Offset pos,
                          void *extra)
{
    datarep_fns_t *d = extra;
    return datarep_conv(d->read, d, u, ldt, count, f, pos);
}

static int datarep_write_c(void *u, void *ldt, MPI_Count count, void *f, MPI_Offset pos,
                           void *extra)
{
    datarep_fns_t *d = extra;
    return datarep_conv(d->write, d, u, ldt, count, f, pos);
}

static int datarep_extent(void *ldt, MPI_Aint *extent, void *extra)
{
    datarep_fns_t *d = extra;
    int rc = d->extent(abi_dtype_out(ldt), extent, d->extra);
    return rc ? abi_class_in(rc) : 0;
}

static int datarep_register(const char *datarep, void (*read_fn)(void),
                            void (*write_fn)(void), MPI_Datarep_extent_function *extent_fn,
                            void *extra_state, int large)
{
    if (!extent_fn)
        return abi_err_out(abi_locus.register_datarep(datarep, NULL, NULL, NULL, extra_state));
    datarep_fns_t *d = malloc(sizeof *d);
    if (!d)
        return MPI_ERR_NO_MEM;
    *d = (datarep_fns_t){ read_fn, write_fn, extent_fn, large, extra_state, NULL };
    void *r = read_fn ? (large ? (void *)datarep_read_c : (void *)datarep_read) : NULL;
    void *w = write_fn ? (large ? (void *)datarep_write_c : (void *)datarep_write) : NULL;
    int rc = large ? abi_locus.register_datarep_c(datarep, r, w, (void *)datarep_extent, d)
                   : abi_locus.register_datarep(datarep, r, w, (void *)datarep_extent, d);
    if (rc != 0) {
        free(d);
        return abi_err_out(rc);
    }
    d->next = datareps;
    datareps = d;
    return MPI_SUCCESS;
}

int PMPI_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_fn,
                          MPI_Datarep_conversion_function *write_fn,
                          MPI_Datarep_extent_function *extent_fn, void *extra_state)
{
    return datarep_register(datarep, (void (*)(void))read_fn, (void (*)(void))write_fn,
                            extent_fn, extra_state, 0);
}
#pragma weak MPI_Register_datarep = PMPI_Register_datarep

int PMPI_Register_datarep_c(const char *datarep, MPI_Datarep_conversion_function_c *read_fn,
                            MPI_Datarep_conversion_function_c *write_fn,
                            MPI_Datarep_extent_function *extent_fn, void *extra_state)
{
    return datarep_register(datarep, (void (*)(void))read_fn, (void (*)(void))write_fn,
                            extent_fn, extra_state, 1);
}
#pragma weak MPI_Register_datarep_c = PMPI_Register_datarep_c
