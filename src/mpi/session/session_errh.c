/*
 * session_errh.c — error handlers of sessions (and of the calls that make
 * communicators from groups, which report to the handler they are given).
 *
 * A session error handler is an ordinary locus_errh_t (MPI_Errhandler_free
 * releases it like any other) whose function is the session's; it is
 * called back through its own type.
 */
#include <stdlib.h>

#include "session.h"

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
    LOCUS_ENTRY_CS();
    /* Allowed before MPI_Init and MPI_Session_init (MPI-4 11.4.1). */
    if (!fn || !errhandler)
        return locus_session_err(NULL, MPI_ERR_ARG, "MPI_Session_create_errhandler");
    /* The same handler object as a communicator's, called with the session. */
    int err = locus_comm_create_errhandler_impl(
        (MPI_Comm_errhandler_function *)(void (*)(void))fn, errhandler);
    return err ? locus_session_err(NULL, err, "MPI_Session_create_errhandler") : MPI_SUCCESS;
}

