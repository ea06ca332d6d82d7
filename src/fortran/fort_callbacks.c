/*
 * fort_callbacks.c — Fortran procedures the library calls back: user
 * reduction operations (MPI_Op_create), error handlers, generalized
 * requests; and the pending results of MPI_Comm_idup.
 *
 * The C signatures of reduction functions and error handlers carry no
 * user data, yet the Fortran procedure needs its datatype or object as an
 * integer handle: each gets a trampoline from a fixed table (a slot), and
 * the slot holds the Fortran procedure. Operations give their slot back at
 * MPI_Op_free; error handlers keep theirs (a freed handler may still be
 * attached to objects) until MPI_Finalize. Generalized requests carry
 * extra_state, so they need no slot.
 */
#include <pthread.h>
#include <stdlib.h>

#include "fort_impl.h"

typedef void(fort_user_fn)(void *invec, void *inoutvec, MPI_Fint *len, MPI_Fint *datatype);
typedef void(fort_errh_fn)(MPI_Fint *obj, MPI_Fint *error_code);
typedef void(fort_query_fn)(const MPI_Aint *extra, MPI_Fint *status, MPI_Fint *ierror);
typedef void(fort_free_fn)(const MPI_Aint *extra, MPI_Fint *ierror);
typedef void(fort_cancel_fn)(const MPI_Aint *extra, const MPI_Fint *complete, MPI_Fint *ierror);

#define OP_SLOTS 64
#define ERRH_SLOTS 16
enum { ERRH_COMM, ERRH_WIN, ERRH_FILE, ERRH_SESSION, ERRH_KINDS };

typedef struct fort_greq fort_greq_t;
struct fort_greq {
    fort_query_fn *query;
    fort_free_fn *free;
    fort_cancel_fn *cancel;
    MPI_Aint extra;
    fort_greq_t *next;
};

typedef struct fort_idup fort_idup_t;
struct fort_idup {
    MPI_Comm newcomm;     /* the library writes it when the request completes */
    MPI_Fint request;     /* the request's Fortran integer */
    MPI_Fint *dest;       /* the Fortran variable for the new communicator */
    int forgotten;        /* MPI_Request_free'd: nobody will see it complete */
    fort_idup_t *next;
};

static struct {
    pthread_mutex_t lock;
    struct {
        fort_user_fn *fn;
        MPI_Op op;
    } op[OP_SLOTS];
    fort_errh_fn *errh[ERRH_KINDS][ERRH_SLOTS];
    fort_greq_t *greqs;
    fort_idup_t *idups;
    int idups_pending;    /* not forgotten */
} cb = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* ---- trampolines ---- */

#define SLOTS8(M, h) M(h, 0) M(h, 1) M(h, 2) M(h, 3) M(h, 4) M(h, 5) M(h, 6) M(h, 7)
#define SLOTS16(M) SLOTS8(M, 0) SLOTS8(M, 1)
#define SLOTS64(M) SLOTS8(M, 0) SLOTS8(M, 1) SLOTS8(M, 2) SLOTS8(M, 3) \
    SLOTS8(M, 4) SLOTS8(M, 5) SLOTS8(M, 6) SLOTS8(M, 7)

static void op_call(int slot, void *in, void *inout, int *len, MPI_Datatype *datatype)
{
    MPI_Fint t = PMPI_Type_toint(*datatype);
    cb.op[slot].fn(in, inout, len, &t);
}
#define OP_TRAMP(h, l)                                                                     \
    static void op_tramp_##h##l(void *in, void *inout, int *len, MPI_Datatype *datatype) \
    {                                                                                      \
        op_call(8 * h + l, in, inout, len, datatype);                                      \
    }
#define OP_ENTRY(h, l) op_tramp_##h##l,
SLOTS64(OP_TRAMP)
static MPI_User_function *const op_tramps[OP_SLOTS] = { SLOTS64(OP_ENTRY) };

#define ERRH_TRAMPS(Kind, type, KIND)                                                   \
    static void Kind##_errh_call(int slot, type *obj, int *code)                       \
    {                                                                                   \
        MPI_Fint o = PMPI_##Kind##_toint(*obj);                                         \
        cb.errh[KIND][slot](&o, code);                                                  \
    }                                                                                   \
    SLOTS16(Kind##_ERRH_TRAMP)                                                          \
    static MPI_##Kind##_errhandler_function *const Kind##_errh_tramps[ERRH_SLOTS] = {    \
        SLOTS16(Kind##_ERRH_ENTRY)                                                      \
    };
#define ERRH_TRAMP(Kind, type, h, l)                                         \
    static void Kind##_errh_##h##l(type *obj, int *code, ...)                \
    {                                                                        \
        Kind##_errh_call(8 * h + l, obj, code);                              \
    }
#define Comm_ERRH_TRAMP(h, l) ERRH_TRAMP(Comm, MPI_Comm, h, l)
#define Win_ERRH_TRAMP(h, l) ERRH_TRAMP(Win, MPI_Win, h, l)
#define File_ERRH_TRAMP(h, l) ERRH_TRAMP(File, MPI_File, h, l)
#define Session_ERRH_TRAMP(h, l) ERRH_TRAMP(Session, MPI_Session, h, l)
#define Comm_ERRH_ENTRY(h, l) Comm_errh_##h##l,
#define Win_ERRH_ENTRY(h, l) Win_errh_##h##l,
#define File_ERRH_ENTRY(h, l) File_errh_##h##l,
#define Session_ERRH_ENTRY(h, l) Session_errh_##h##l,
ERRH_TRAMPS(Comm, MPI_Comm, ERRH_COMM)
ERRH_TRAMPS(Win, MPI_Win, ERRH_WIN)
ERRH_TRAMPS(File, MPI_File, ERRH_FILE)
ERRH_TRAMPS(Session, MPI_Session, ERRH_SESSION)

/* ---- user operations ---- */

FORT_API void pmpi_op_create_(fort_user_fn *user_fn, const MPI_Fint *commute, MPI_Fint *op,
                              MPI_Fint *ierror)
{
    int slot = -1;
    pthread_mutex_lock(&cb.lock);
    for (int i = 0; i < OP_SLOTS && slot < 0; i++)
        if (!cb.op[i].fn)
            slot = i;
    if (slot >= 0)
        cb.op[slot].fn = user_fn;
    pthread_mutex_unlock(&cb.lock);
    if (slot < 0) {
        *ierror = fort_err(MPI_ERR_OTHER, "MPI_Op_create",
                           "at most 64 user-defined operations may exist at once");
        return;
    }
    MPI_Op o = MPI_OP_NULL;
    int rc = PMPI_Op_create(op_tramps[slot], *commute != 0, &o);
    pthread_mutex_lock(&cb.lock);
    if (rc == MPI_SUCCESS)
        cb.op[slot].op = o;
    else
        cb.op[slot].fn = NULL;
    pthread_mutex_unlock(&cb.lock);
    if (rc == MPI_SUCCESS)
        *op = PMPI_Op_toint(o);
    *ierror = rc;
}
FORT_WEAK(pmpi_op_create_, mpi_op_create_)

FORT_API void pmpi_op_free_(MPI_Fint *op, MPI_Fint *ierror)
{
    MPI_Op o = PMPI_Op_fromint(*op), freed = o;
    int rc = PMPI_Op_free(&o);
    if (rc == MPI_SUCCESS) {
        pthread_mutex_lock(&cb.lock);
        for (int i = 0; i < OP_SLOTS; i++)
            if (cb.op[i].fn && cb.op[i].op == freed)
                cb.op[i].fn = NULL;
        pthread_mutex_unlock(&cb.lock);
        *op = PMPI_Op_toint(o);
    }
    *ierror = rc;
}
FORT_WEAK(pmpi_op_free_, mpi_op_free_)

/* ---- error handlers ---- */

static int errh_slot(int kind, fort_errh_fn *fn)
{
    int slot = -1;
    pthread_mutex_lock(&cb.lock);
    for (int i = 0; i < ERRH_SLOTS && slot < 0; i++)
        if (!cb.errh[kind][i])
            slot = i;
    if (slot >= 0)
        cb.errh[kind][slot] = fn;
    pthread_mutex_unlock(&cb.lock);
    return slot;
}

#define CREATE_ERRH(Kind, kind, KIND)                                                        \
    FORT_API void pmpi_##kind##_create_errhandler_(fort_errh_fn *fn, MPI_Fint *errhandler,   \
                                                   MPI_Fint *ierror)                         \
    {                                                                                        \
        int slot = errh_slot(KIND, fn);                                                      \
        if (slot < 0) {                                                                      \
            *ierror = fort_err(MPI_ERR_OTHER, "MPI_" #Kind "_create_errhandler",            \
                               "at most 16 error handlers of each kind from Fortran");       \
            return;                                                                          \
        }                                                                                    \
        MPI_Errhandler e = MPI_ERRHANDLER_NULL;                                              \
        int rc = PMPI_##Kind##_create_errhandler(Kind##_errh_tramps[slot], &e);             \
        if (rc == MPI_SUCCESS) {                                                             \
            *errhandler = PMPI_Errhandler_toint(e);                                          \
        } else {                                                                             \
            pthread_mutex_lock(&cb.lock);                                                    \
            cb.errh[KIND][slot] = NULL;                                                      \
            pthread_mutex_unlock(&cb.lock);                                                  \
        }                                                                                    \
        *ierror = rc;                                                                        \
    }                                                                                        \
    FORT_WEAK(pmpi_##kind##_create_errhandler_, mpi_##kind##_create_errhandler_)
CREATE_ERRH(Comm, comm, ERRH_COMM)
CREATE_ERRH(Win, win, ERRH_WIN)
CREATE_ERRH(File, file, ERRH_FILE)
CREATE_ERRH(Session, session, ERRH_SESSION)

/* ---- generalized requests ---- */

static int greq_query(void *extra, MPI_Status *status)
{
    fort_greq_t *g = extra;
    MPI_Fint ierr = MPI_SUCCESS;
    g->query(&g->extra, (MPI_Fint *)(void *)status, &ierr);
    return ierr;
}

static int greq_cancel(void *extra, int complete)
{
    fort_greq_t *g = extra;
    MPI_Fint c = complete != 0, ierr = MPI_SUCCESS;
    g->cancel(&g->extra, &c, &ierr);
    return ierr;
}

/* Takes g off the list of records and frees it. */
static void greq_forget(fort_greq_t *g)
{
    pthread_mutex_lock(&cb.lock);
    for (fort_greq_t **p = &cb.greqs; *p; p = &(*p)->next)
        if (*p == g) {
            *p = g->next;
            break;
        }
    pthread_mutex_unlock(&cb.lock);
    free(g);
}

/* The last call for a generalized request: its record goes too. */
static int greq_free(void *extra)
{
    fort_greq_t *g = extra;
    MPI_Fint ierr = MPI_SUCCESS;
    g->free(&g->extra, &ierr);
    greq_forget(g);
    return ierr;
}

FORT_API void pmpi_grequest_start_(fort_query_fn *query_fn, fort_free_fn *free_fn,
                                   fort_cancel_fn *cancel_fn, const MPI_Aint *extra_state,
                                   MPI_Fint *request, MPI_Fint *ierror)
{
    fort_greq_t *g = calloc(1, sizeof *g);
    if (!g) {
        *ierror = fort_err(MPI_ERR_NO_MEM, "MPI_Grequest_start",
                           "no memory for the request's callbacks");
        return;
    }
    *g = (fort_greq_t){ query_fn, free_fn, cancel_fn, *extra_state, NULL };
    pthread_mutex_lock(&cb.lock);
    g->next = cb.greqs;
    cb.greqs = g;
    pthread_mutex_unlock(&cb.lock);
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = PMPI_Grequest_start(greq_query, greq_free, greq_cancel, g, &r);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_toint(r);
    else
        greq_forget(g);
    *ierror = rc;
}
FORT_WEAK(pmpi_grequest_start_, mpi_grequest_start_)

/* ---- MPI_Comm_idup ---- */

static void idup_start(MPI_Comm comm, MPI_Info info, int with_info, MPI_Fint *newcomm,
                       MPI_Fint *request, MPI_Fint *ierror, const char *fn)
{
    fort_idup_t *d = calloc(1, sizeof *d);
    if (!d) {
        *ierror = fort_err(MPI_ERR_NO_MEM, fn, "no memory for the pending communicator");
        return;
    }
    d->newcomm = MPI_COMM_NULL;
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = with_info ? PMPI_Comm_idup_with_info(comm, info, &d->newcomm, &r)
                       : PMPI_Comm_idup(comm, &d->newcomm, &r);
    if (rc != MPI_SUCCESS) {
        free(d);
        *ierror = rc;
        return;
    }
    *request = PMPI_Request_toint(r);
    d->request = *request;
    d->dest = newcomm;
    pthread_mutex_lock(&cb.lock);
    d->next = cb.idups;
    cb.idups = d;
    __atomic_store_n(&cb.idups_pending, cb.idups_pending + 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&cb.lock);
    *ierror = MPI_SUCCESS;
}

FORT_API void pmpi_comm_idup_(const MPI_Fint *comm, MPI_Fint *newcomm, MPI_Fint *request,
                              MPI_Fint *ierror)
{
    idup_start(PMPI_Comm_fromint(*comm), MPI_INFO_NULL, 0, newcomm, request, ierror,
               "MPI_Comm_idup");
}
FORT_WEAK(pmpi_comm_idup_, mpi_comm_idup_)

FORT_API void pmpi_comm_idup_with_info_(const MPI_Fint *comm, const MPI_Fint *info,
                                        MPI_Fint *newcomm, MPI_Fint *request, MPI_Fint *ierror)
{
    idup_start(PMPI_Comm_fromint(*comm), PMPI_Info_fromint(*info), 1, newcomm, request, ierror,
               "MPI_Comm_idup_with_info");
}
FORT_WEAK(pmpi_comm_idup_with_info_, mpi_comm_idup_with_info_)

int fort_idup_any(void)
{
    return __atomic_load_n(&cb.idups_pending, __ATOMIC_RELAXED) > 0;
}

/* The pending duplication of request (a Fortran integer), unlinked when
 * take is set; NULL when there is none. Called with the lock held. */
static fort_idup_t *idup_find(MPI_Fint request, int take)
{
    for (fort_idup_t **p = &cb.idups; *p; p = &(*p)->next) {
        fort_idup_t *d = *p;
        if (d->forgotten || d->request != request)
            continue;
        if (take) {
            *p = d->next;
            __atomic_store_n(&cb.idups_pending, cb.idups_pending - 1, __ATOMIC_RELAXED);
        }
        return d;
    }
    return NULL;
}

void fort_idup_settle(const MPI_Fint *old, const MPI_Request *now, int n)
{
    for (int i = 0; i < n; i++) {
        pthread_mutex_lock(&cb.lock);
        fort_idup_t *d = idup_find(old[i], 0);
        pthread_mutex_unlock(&cb.lock);
        if (!d)
            continue;
        /* Freed by the call (completed), or complete and not freed
         * (MPI_Request_get_status and its kin). Asked without the lock:
         * progress may call back into this file. */
        int done = now[i] == MPI_REQUEST_NULL;
        if (!done)
            PMPI_Request_get_status(now[i], &done, MPI_STATUS_IGNORE);
        if (!done)
            continue;
        pthread_mutex_lock(&cb.lock);
        d = idup_find(old[i], 1);
        pthread_mutex_unlock(&cb.lock);
        if (d) {
            *d->dest = PMPI_Comm_toint(d->newcomm);
            free(d);
        }
    }
}

void fort_idup_forget(MPI_Fint request)
{
    pthread_mutex_lock(&cb.lock);
    fort_idup_t *d = idup_find(request, 0);
    if (d) {
        d->forgotten = 1;
        __atomic_store_n(&cb.idups_pending, cb.idups_pending - 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&cb.lock);
}

void fort_callbacks_release(void)
{
    pthread_mutex_lock(&cb.lock);
    for (int i = 0; i < OP_SLOTS; i++)
        cb.op[i].fn = NULL;
    for (int k = 0; k < ERRH_KINDS; k++)
        for (int i = 0; i < ERRH_SLOTS; i++)
            cb.errh[k][i] = NULL;
    while (cb.greqs) {
        fort_greq_t *g = cb.greqs;
        cb.greqs = g->next;
        free(g);
    }
    while (cb.idups) {
        fort_idup_t *d = cb.idups;
        cb.idups = d->next;
        free(d);
    }
    __atomic_store_n(&cb.idups_pending, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&cb.lock);
    fort_attr_release();
}
