/*
 * errh_any.c — what error handlers do on any object, not only on a
 * communicator (errh.c): their references, raising an error on a session
 * or on no object at all, and MPI_Remove_error_class/code/string
 * (MPI-4.1).
 */
#include <stdio.h>
#include <stdlib.h>

#include "env.h"

void locus_errh_hold(locus_errh_t *e)
{
    if (e && e->kind == ERRH_USER)
        e->refs++;
}

/* Out of line: inlined where a communicator's handler was just set to a
 * predefined one, GCC's LTO warns of a free() the kind check rules out. */
__attribute__((noinline)) void locus_errh_drop(locus_errh_t *e)
{
    if (e && e->kind == ERRH_USER && --e->refs == 0) {
        locus_handle_leave(e);
        free(e);
    }
}

int locus_errh_set_handle(locus_errh_t **slot, MPI_Errhandler h)
{
    locus_errh_t *e = locus_errh_of(h);
    if (!e)
        return MPI_ERR_ARG;
    locus_errh_hold(e);
    locus_errh_drop(*slot);
    *slot = e;
    return MPI_SUCCESS;
}

int locus_errh_get_handle(locus_errh_t *e, MPI_Errhandler *h)
{
    /* A new reference: the program frees it with MPI_Errhandler_free. */
    locus_errh_hold(e);
    *h = e->handle;
    return MPI_SUCCESS;
}

/* MPI_ERRORS_ARE_FATAL / MPI_ERRORS_ABORT: one line, then the job ends. */
static void raise_fatal(int code, const char *fn)
{
    char text[MPI_MAX_ERROR_STRING] = "unknown error code";
    int len;
    locus_error_string_impl(code, text, &len);
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
    LOCUS_ENTRY_CS();
    return remove_error(errorcode, 0, "MPI_Remove_error_string");
}

LOCUS_PMPI_WEAK(Remove_error_code)
int PMPI_Remove_error_code(int errorcode)
{
    LOCUS_ENTRY_CS();
    return remove_error(errorcode, 1, "MPI_Remove_error_code");
}

LOCUS_PMPI_WEAK(Remove_error_class)
int PMPI_Remove_error_class(int errorclass)
{
    LOCUS_ENTRY_CS();
    return remove_error(errorclass, 2, "MPI_Remove_error_class");
}
