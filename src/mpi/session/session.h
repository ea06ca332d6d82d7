/*
 * session/session.h — the sessions chapter: MPI-4 sessions (session.c:
 * life cycle, process sets, groups; session_errh.c: error handlers;
 * session_comm.c: communicators from groups; session_buffer.c: their
 * buffered-send buffers) and partitioned communication (part.c). It lies
 * above init/: a session starts the runtime the way MPI_Init does.
 *
 * A session needs the library's runtime (boot, core, transports): the
 * first MPI_Session_init of a process that has not called MPI_Init starts
 * it, the last MPI_Session_finalize of such a process stops it. See
 * docs/mpit.md for what differs from a library that separates the two
 * fully.
 */
#ifndef LOCUS_SESSION_H
#define LOCUS_SESSION_H

#include "comm/comm.h"

#define LOCUS_SESSION_MAGIC 0x4c534553u

typedef struct locus_session locus_session_t;
struct locus_session {
    uint32_t magic;           /* LOCUS_SESSION_MAGIC while the handle is valid */
    locus_errh_t *errh;       /* holds a reference */
    MPI_Info info;            /* a copy of what MPI_Session_init got, or MPI_INFO_NULL */
    int thread_level;         /* provided */
    locus_session_t *next;    /* the live sessions */
    void *bsend;              /* its buffered-send pool (pt2pt/bsend.c), NULL: none yet */
};

/* The session of a handle, or NULL when it is not a live session. */
locus_session_t *locus_session_of(MPI_Session h);

/* Raises error class or code `code` in fn on session s (NULL: no valid
 * session, the process's default handler) and returns it. */
int locus_session_err(locus_session_t *s, int code, const char *fn);

#endif
