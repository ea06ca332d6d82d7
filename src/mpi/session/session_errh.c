/*
 * session_errh.c — error handlers of sessions (and of the calls that make
 * communicators from groups, which report to the handler they are given),
 * and MPI_Remove_error_class/code/string (MPI-4.1).
 *
 * A session error handler is an ordinary locus_errh_t (MPI_Errhandler_free
 * releases it like any other) whose function is the session's; it is
 * called back through its own type.
 */
#include <stdio.h>
#include <stdlib.h>

#include "session.h"

void locus_session_errh_hold(locus_errh_t *e)
{
    if (e && e->kind == ERRH_USER)
        e->refs++;
}

void locus_session_errh_drop(locus_errh_t *e)
{
    if (e && e->kind == ERRH_USER && --e->refs == 0)
        free(e);
}

/* MPI_ERRORS_ARE_FATAL / MPI_ERRORS_ABORT: one line, then the job ends. */
static void raise_fatal(int code, const char *fn)
{
    char text[MPI_MAX_ERROR_STRING] = "unknown error code";
    int len;
    PMPI_Error_string(code, text, &len);
    if (locus_mpi.detail[0])
        fprintf(stderr, "locus: rank %d: %s: %s (%s)\n", locus_mpi.boot.rank, fn, text,
                locus_mpi.detail);
    else
        fprintf(stderr, "locus: rank %d: %s: %s\n", locus_mpi.boot.rank, fn, text);
    fflush(stderr);
    if (locus_mpi.state == 1)
        locus_boot_abort(&locus_mpi.boot, 1, text);
    exit(1); /* no runtime (left by MPI_Finalize): this process alone */
}

int locus_errh_raise(locus_errh_t *e, int on, void *handle, int code, const char *fn)
{
    if (code == MPI_SUCCESS)
        return MPI_SUCCESS;
    if (!e && locus_mpi_active())
        return locus_mpi_err(NULL, code, fn);
    if (!e)
        e = &locus_errh_fatal;
    switch (e->kind) {
    case ERRH_RETURN:
        break;
    case ERRH_USER: {
        int c = code;
        if (on == ERRH_ON_SESSION)
            ((MPI_Session_errhandler_function *)(void (*)(void))e->comm_fn)(handle, &c, fn);
        else
            e->comm_fn(handle, &c, fn);
        break;
    }
    default:
        raise_fatal(code, fn);
    }
    locus_mpi.detail[0] = '\0';
    return code;
}

int locus_session_err(locus_session_t *s, int code, const char *fn)
{
    if (!s)
        return locus_errh_raise(NULL, ERRH_ON_SESSION, NULL, code, fn);
    MPI_Session h = (MPI_Session)s;
    return locus_errh_raise(s->errh, ERRH_ON_SESSION, &h, code, fn);
}

LOCUS_PMPI_WEAK(Session_create_errhandler)
int PMPI_Session_create_errhandler(MPI_Session_errhandler_function *fn,
                                   MPI_Errhandler *errhandler)
{
    /* Allowed before MPI_Init and MPI_Session_init (MPI-4 11.4.1). */
    if (!fn || !errhandler)
        return locus_session_err(NULL, MPI_ERR_ARG, "MPI_Session_create_errhandler");
    locus_errh_t *e = calloc(1, sizeof *e);
    if (!e)
        return locus_session_err(NULL, MPI_ERR_NO_MEM, "MPI_Session_create_errhandler");
    e->kind = ERRH_USER;
    e->refs = 1;
    e->comm_fn = (MPI_Comm_errhandler_function *)(void (*)(void))fn;
    e->handle = (MPI_Errhandler)e;
    *errhandler = e->handle;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Session_set_errhandler)
int PMPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler)
{
    locus_session_t *s = locus_session_of(session);
    if (!s)
        return locus_session_err(NULL, MPI_ERR_SESSION, "MPI_Session_set_errhandler");
    locus_errh_t *e = locus_errh_of(errhandler);
    if (!e)
        return locus_session_err(s, MPI_ERR_ARG, "MPI_Session_set_errhandler");
    locus_session_errh_hold(e);
    locus_session_errh_drop(s->errh);
    s->errh = e;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Session_get_errhandler)
int PMPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler *errhandler)
{
    locus_session_t *s = locus_session_of(session);
    if (!s)
        return locus_session_err(NULL, MPI_ERR_SESSION, "MPI_Session_get_errhandler");
    if (!errhandler)
        return locus_session_err(s, MPI_ERR_ARG, "MPI_Session_get_errhandler");
    /* A new reference, for MPI_Errhandler_free. */
    locus_session_errh_hold(s->errh);
    *errhandler = s->errh->handle;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Session_call_errhandler)
int PMPI_Session_call_errhandler(MPI_Session session, int errorcode)
{
    locus_session_t *s = locus_session_of(session);
    if (!s)
        return locus_session_err(NULL, MPI_ERR_SESSION, "MPI_Session_call_errhandler");
    int cls;
    if (PMPI_Error_class(errorcode, &cls) != MPI_SUCCESS)
        return locus_session_err(s, MPI_ERR_ARG, "MPI_Session_call_errhandler");
    locus_session_err(s, errorcode, "MPI_Session_call_errhandler");
    return MPI_SUCCESS;
}

/* ---- removing added error classes, codes and strings ---- */

/* errh.c owns the classes and codes MPI_Add_error_* made (locus_err_remove). */
static int remove_error(int code, int what, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    int rc = locus_err_remove(code, what);
    return rc ? locus_mpi_err(NULL, rc, fn) : MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Remove_error_string)
int PMPI_Remove_error_string(int errorcode)
{
    return remove_error(errorcode, 0, "MPI_Remove_error_string");
}

LOCUS_PMPI_WEAK(Remove_error_code)
int PMPI_Remove_error_code(int errorcode)
{
    return remove_error(errorcode, 1, "MPI_Remove_error_code");
}

LOCUS_PMPI_WEAK(Remove_error_class)
int PMPI_Remove_error_class(int errorclass)
{
    return remove_error(errorclass, 2, "MPI_Remove_error_class");
}
