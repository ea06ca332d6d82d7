/*
 * mpit_pvar_handle.c — MPI_T performance sessions and handles: what the
 * tool reads of the variables mpit_pvar.c defines.
 *
 * Class semantics: a COUNTER handle counts only while started (handles
 * start stopped; reset and write set its value; readreset is atomic since
 * only the MPI thread moves the sources). LEVEL, SIZE and STATE variables
 * are continuous and read-only: a read gives the value now. Before MPI_Init
 * the sources read zero; after MPI_Finalize a handle keeps the value of its
 * last read. A handle bound to a communicator is invalid once the
 * communicator is freed (MPI_T_ERR_INVALID_HANDLE).
 */
#include <stdlib.h>

#include "mpit.h"

/* Counters are the only class that is not continuous and not read-only. */
static int counter(const mpit_pvar_handle_t *h)
{
    return mpit_pvar_class(h->index) == MPI_T_PVAR_CLASS_COUNTER;
}

/* The current source value into h->last; MPI_T_ERR_INVALID_HANDLE when
 * h's object is gone. */
static int source_update(mpit_pvar_handle_t *h)
{
    uint64_t s;
    int rc = mpit_pvar_source(h, &s);
    if (rc < 0)
        return MPI_T_ERR_INVALID_HANDLE;
    if (rc == 0)
        h->last = s;
    return MPI_SUCCESS;
}

/* ---- sessions and handles ---- */

static mpit_session_t *session_find(MPI_T_pvar_session s)
{
    for (mpit_session_t *p = locus_mpit.sessions; p; p = p->next)
        if ((MPI_T_pvar_session)p == s)
            return p;
    return NULL;
}

static mpit_pvar_handle_t *handle_find(mpit_session_t *s, MPI_T_pvar_handle h)
{
    for (mpit_pvar_handle_t *p = s->handles; p; p = p->next)
        if ((MPI_T_pvar_handle)p == h)
            return p;
    return NULL;
}

static void session_free(mpit_session_t *s)
{
    while (s->handles) {
        mpit_pvar_handle_t *h = s->handles;
        s->handles = h->next;
        free(h);
    }
    free(s);
}

void mpit_pvar_sessions_free(void)
{
    while (locus_mpit.sessions) {
        mpit_session_t *s = locus_mpit.sessions;
        locus_mpit.sessions = s->next;
        session_free(s);
    }
}

/* Looks up session and handle (ALL_HANDLES allowed when all_ok): *s, *h
 * (NULL for ALL_HANDLES), or the MPI_T error. */
static int lookup(MPI_T_pvar_session session, MPI_T_pvar_handle handle, int all_ok,
                  mpit_session_t **s, mpit_pvar_handle_t **h)
{
    *s = session_find(session);
    if (!*s)
        return MPI_T_ERR_INVALID_SESSION;
    *h = NULL;
    if (handle == MPI_T_PVAR_ALL_HANDLES)
        return all_ok ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
    *h = handle_find(*s, handle);
    return *h ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
}

/* The value of h now: a counter's count while started, else the source. */
static int handle_value(mpit_pvar_handle_t *h, uint64_t *out)
{
    int rc = source_update(h);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!counter(h))
        *out = h->last;
    else
        *out = h->accum + (h->started ? h->last - h->base : 0);
    return MPI_SUCCESS;
}

static int handle_start(mpit_pvar_handle_t *h)
{
    int rc = source_update(h);
    if (rc == MPI_SUCCESS && !h->started) {
        h->base = h->last;
        h->started = 1;
    }
    return rc;
}

static int handle_stop(mpit_pvar_handle_t *h)
{
    int rc = source_update(h);
    if (rc == MPI_SUCCESS && h->started) {
        h->accum += h->last - h->base;
        h->started = 0;
    }
    return rc;
}

static int handle_set(mpit_pvar_handle_t *h, uint64_t value)
{
    int rc = source_update(h);
    if (rc == MPI_SUCCESS) {
        h->accum = value;
        h->base = h->last;
    }
    return rc;
}

int locus_t_pvar_session_create_impl(MPI_T_pvar_session *session)
{
    mpit_session_t *s = calloc(1, sizeof *s);
    if (!s)
        return MPI_T_ERR_MEMORY;
    s->next = locus_mpit.sessions;
    locus_mpit.sessions = s;
    *session = (MPI_T_pvar_session)s;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(T_pvar_session_free)
int PMPI_T_pvar_session_free(MPI_T_pvar_session *session)
{
    LOCUS_ENTRY_CS();
    MPIT_CHECK_INIT();
    mpit_session_t *s = session ? session_find(*session) : NULL;
    if (!s)
        return MPI_T_ERR_INVALID_SESSION;
    for (mpit_session_t **pp = &locus_mpit.sessions; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    session_free(s);
    *session = MPI_T_PVAR_SESSION_NULL;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(T_pvar_handle_alloc)
int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
                             MPI_T_pvar_handle *handle, int *count)
{
    LOCUS_ENTRY_CS();
    MPIT_CHECK_INIT();
    mpit_session_t *s = session_find(session);
    if (!s)
        return MPI_T_ERR_INVALID_SESSION;
    if (pvar_index < 0 || pvar_index >= mpit_pvar_count())
        return MPI_T_ERR_INVALID_INDEX;
    if (!handle || !count)
        return MPI_T_ERR_INVALID;
    locus_comm_t *comm = NULL;
    if (mpit_pvar_binding(pvar_index) == MPI_T_BIND_MPI_COMM) {
        comm = obj_handle && locus_mpi.state == 1 ? locus_comm_of(*(MPI_Comm *)obj_handle)
                                                  : NULL;
        if (!locus_comm_valid(comm))
            return MPI_T_ERR_INVALID_HANDLE;
    }
    mpit_pvar_handle_t *h = calloc(1, sizeof *h);
    if (!h)
        return MPI_T_ERR_MEMORY;
    h->index = pvar_index;
    h->comm = comm;
    h->ctx = comm ? comm->ctx_p2p : 0;
    h->started = mpit_pvar_class(pvar_index) != MPI_T_PVAR_CLASS_COUNTER;
    source_update(h);
    h->next = s->handles;
    s->handles = h;
    *handle = (MPI_T_pvar_handle)h;
    *count = 1;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(T_pvar_handle_free)
int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
    LOCUS_ENTRY_CS();
    MPIT_CHECK_INIT();
    mpit_session_t *s;
    mpit_pvar_handle_t *h;
    int rc = lookup(session, handle ? *handle : MPI_T_PVAR_HANDLE_NULL, 0, &s, &h);
    if (rc != MPI_SUCCESS)
        return rc;
    for (mpit_pvar_handle_t **pp = &s->handles; *pp; pp = &(*pp)->next)
        if (*pp == h) {
            *pp = h->next;
            break;
        }
    free(h);
    *handle = MPI_T_PVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}

static int handle_reset(mpit_pvar_handle_t *h)
{
    return handle_set(h, 0);
}

/* op on one handle (not_counter when it is a continuous one), or on all
 * the session's counters: start, stop and reset. */
static int counter_op(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                      int (*op)(mpit_pvar_handle_t *), int not_counter)
{
    MPIT_CHECK_INIT();
    mpit_session_t *s;
    mpit_pvar_handle_t *h;
    int rc = lookup(session, handle, 1, &s, &h);
    if (rc != MPI_SUCCESS)
        return rc;
    if (h)
        return counter(h) ? op(h) : not_counter;
    for (h = s->handles; h; h = h->next) {
        if (!counter(h))
            continue;
        int r = op(h);
        if (r != MPI_SUCCESS)
            rc = r;
    }
    return rc;
}

LOCUS_PMPI_WEAK(T_pvar_start)
int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    LOCUS_ENTRY_CS();
    return counter_op(session, handle, handle_start, MPI_T_ERR_PVAR_NO_STARTSTOP);
}

LOCUS_PMPI_WEAK(T_pvar_stop)
int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    LOCUS_ENTRY_CS();
    return counter_op(session, handle, handle_stop, MPI_T_ERR_PVAR_NO_STARTSTOP);
}

LOCUS_PMPI_WEAK(T_pvar_reset)
int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    LOCUS_ENTRY_CS();
    return counter_op(session, handle, handle_reset, MPI_T_ERR_PVAR_NO_WRITE);
}

/* The handle that read, write and readreset act on through buf; writing
 * (for_write) is only for counters. */
static int buf_handle(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf,
                      int for_write, mpit_pvar_handle_t **h)
{
    MPIT_CHECK_INIT();
    mpit_session_t *s;
    int rc = lookup(session, handle, 0, &s, h);
    if (rc != MPI_SUCCESS)
        return rc;
    if (for_write && !counter(*h))
        return MPI_T_ERR_PVAR_NO_WRITE;
    if (!buf)
        return MPI_T_ERR_INVALID;
    return MPI_SUCCESS;
}

/* h's value now into buf, as the variable's datatype says. */
static int handle_read(mpit_pvar_handle_t *h, void *buf)
{
    uint64_t v;
    int rc = handle_value(h, &v);
    if (rc != MPI_SUCCESS)
        return rc;
    if (mpit_pvar_class(h->index) == MPI_T_PVAR_CLASS_STATE)
        *(int *)buf = (int)v;
    else
        *(unsigned long long *)buf = v;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(T_pvar_read)
int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    LOCUS_ENTRY_CS();
    mpit_pvar_handle_t *h;
    int rc = buf_handle(session, handle, buf, 0, &h);
    return rc == MPI_SUCCESS ? handle_read(h, buf) : rc;
}

LOCUS_PMPI_WEAK(T_pvar_write)
int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf)
{
    LOCUS_ENTRY_CS();
    mpit_pvar_handle_t *h;
    int rc = buf_handle(session, handle, buf, 1, &h);
    return rc == MPI_SUCCESS ? handle_set(h, *(const unsigned long long *)buf) : rc;
}

LOCUS_PMPI_WEAK(T_pvar_readreset)
int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    LOCUS_ENTRY_CS();
    mpit_pvar_handle_t *h;
    int rc = buf_handle(session, handle, buf, 1, &h);
    if (rc == MPI_SUCCESS)
        rc = handle_read(h, buf);
    if (rc == MPI_SUCCESS)
        rc = handle_reset(h);
    return rc;
}
