/*
 * session_buffer.c — MPI-4.1's buffers attached to a session, for the
 * buffered sends of communicators made from its groups (and from those
 * communicators): after a communicator's own buffer, before the
 * process's. The pool is pt2pt/bsend.c's; the session keeps it.
 */
#include "session.h"

/* Attach and detach in both count forms (generated). */
int locus_session_attach_buffer_impl(MPI_Session session, void *buffer, MPI_Count size,
                                     const char *fn)
{
    locus_session_t *s = locus_session_of(session);
    if (!s)
        return locus_session_err(NULL, MPI_ERR_SESSION, fn);
    int err = locus_bsend_session_attach(&s->bsend, buffer, size);
    return err ? locus_session_err(s, err, fn) : MPI_SUCCESS;
}

int locus_session_detach_buffer_impl(MPI_Session session, void *buffer_addr, MPI_Count *size,
                                     const char *fn)
{
    locus_session_t *s = locus_session_of(session);
    if (!s)
        return locus_session_err(NULL, MPI_ERR_SESSION, fn);
    if (!buffer_addr || !size)
        return locus_session_err(s, MPI_ERR_ARG, fn);
    int err = locus_bsend_session_detach(&s->bsend, buffer_addr, size);
    return err ? locus_session_err(s, err, fn) : MPI_SUCCESS;
}

static int flush(MPI_Session session, MPI_Request *request, const char *fn)
{
    locus_session_t *s = locus_session_of(session);
    if (!s)
        return locus_session_err(NULL, MPI_ERR_SESSION, fn);
    int err = locus_bsend_session_flush(&s->bsend, request);
    return err ? locus_session_err(s, err, fn) : MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Session_flush_buffer)
int PMPI_Session_flush_buffer(MPI_Session session)
{
    LOCUS_ENTRY_CS();
    return flush(session, NULL, "MPI_Session_flush_buffer");
}

LOCUS_PMPI_WEAK(Session_iflush_buffer)
int PMPI_Session_iflush_buffer(MPI_Session session, MPI_Request *request)
{
    LOCUS_ENTRY_CS();
    if (!request)
        return locus_session_err(locus_session_of(session), MPI_ERR_ARG,
                                 "MPI_Session_iflush_buffer");
    return flush(session, request, "MPI_Session_iflush_buffer");
}
