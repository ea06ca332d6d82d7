/*
 * session_buffer.c — MPI-4.1's buffers attached to a session, for the
 * buffered sends of communicators made from it. Locus does not route a
 * communicator's buffered sends to its session's buffer yet: the calls
 * refuse with MPI_ERR_UNSUPPORTED_OPERATION through the session's error
 * handler (a program uses MPI_Comm_attach_buffer or MPI_Buffer_attach
 * instead, which work on every communicator, session-derived ones too).
 */
#include <stdio.h>

#include "session.h"

static int refuse(MPI_Session session, const char *fn)
{
    locus_session_t *s = locus_session_of(session);
    if (!s)
        return locus_session_err(NULL, MPI_ERR_SESSION, fn);
    snprintf(locus_mpi.detail, sizeof locus_mpi.detail,
             "session buffers are not supported by Locus: use MPI_Comm_attach_buffer");
    return locus_session_err(s, MPI_ERR_UNSUPPORTED_OPERATION, fn);
}

/* Attach and detach in both count forms (generated). */
int locus_session_attach_buffer_impl(MPI_Session session, void *buffer, MPI_Count size,
                                     const char *fn)
{
    (void)buffer, (void)size;
    return refuse(session, fn);
}

int locus_session_detach_buffer_impl(MPI_Session session, void *buffer_addr, MPI_Count *size,
                                     const char *fn)
{
    (void)buffer_addr, (void)size;
    return refuse(session, fn);
}

LOCUS_PMPI_WEAK(Session_flush_buffer)
int PMPI_Session_flush_buffer(MPI_Session session)
{
    LOCUS_ENTRY_CS();
    return refuse(session, "MPI_Session_flush_buffer");
}

LOCUS_PMPI_WEAK(Session_iflush_buffer)
int PMPI_Session_iflush_buffer(MPI_Session session, MPI_Request *request)
{
    LOCUS_ENTRY_CS();
    (void)request;
    return refuse(session, "MPI_Session_iflush_buffer");
}
