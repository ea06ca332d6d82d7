/*
 * session.c — MPI-4 sessions: MPI_Session_init/finalize, the process sets
 * ("mpi://WORLD" and "mpi://SELF"), their info, groups from them, and the
 * session's info.
 *
 * The runtime under a session is the library's one runtime. A process
 * that called MPI_Init already has it; otherwise the first session starts
 * it (as MPI_Init would, in this process and collectively over the job's
 * start-up) and the last session's finalize stops it (as MPI_Finalize).
 * Limitations that follow (docs/mpit.md): MPI_Initialized reports true
 * while a session keeps the runtime up, MPI_Init cannot follow
 * MPI_Session_init, and nothing can be started again once it stopped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "session.h"

/* The live sessions of this process, and whether they started the
 * runtime (the program did not call MPI_Init). */
static struct {
    locus_session_t *live;
    int started_runtime;
} sessions;

static const char *const psets[] = {"mpi://WORLD", "mpi://SELF"};
#define NPSETS 2

locus_session_t *locus_session_of(MPI_Session h)
{
    if (LOCUS_IS_PREDEF(h))
        return NULL;
    for (locus_session_t *s = sessions.live; s; s = s->next)
        if (s == (locus_session_t *)h)
            return s->magic == LOCUS_SESSION_MAGIC ? s : NULL;
    return NULL;
}

/* The level asked for in info's "thread_level" (MPI-4 11.3.1), capped at
 * what the library provides. */
static int thread_level_wanted(MPI_Info info)
{
    char v[64];
    int len = sizeof v, flag = 0;
    if (info == MPI_INFO_NULL || locus_info_get_string_impl(info, "thread_level", &len, v, &flag) ||
        !flag)
        return LOCUS_THREAD_MAX;
    int level = locus_thread_level_parse(v);
    return locus_thread_level_cap(level < 0 ? LOCUS_THREAD_MAX : level);
}

LOCUS_PMPI_WEAK(Session_init)
int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    LOCUS_ENTRY_CS();
    static const char fn[] = "MPI_Session_init";
    locus_errh_t *e = errhandler == MPI_ERRHANDLER_NULL ? &locus_errh_fatal
                                                         : locus_errh_of(errhandler);
    if (!session || !e)
        return locus_session_err(NULL, MPI_ERR_ARG, fn);
    if (locus_mpi.state == 2) {
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail,
                 "the library cannot start again after MPI_Finalize");
        return locus_errh_raise(e, ERRH_ON_SESSION, NULL, MPI_ERR_OTHER, fn);
    }
    if (locus_mpi.state == 0) {
        int provided;
        /* Starts the runtime (a failure ends the process, as MPI_Init's does). */
        int rc = PMPI_Init_thread(NULL, NULL, LOCUS_THREAD_MAX, &provided);
        if (rc != MPI_SUCCESS)
            return locus_errh_raise(e, ERRH_ON_SESSION, NULL, rc, fn);
        sessions.started_runtime = 1;
    }
    locus_session_t *s = calloc(1, sizeof *s);
    int rc = s ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS && info != MPI_INFO_NULL)
        rc = locus_info_dup_impl(info, &s->info);
    if (rc != MPI_SUCCESS) {
        free(s);
        return locus_errh_raise(e, ERRH_ON_SESSION, NULL, rc, fn);
    }
    if (info == MPI_INFO_NULL)
        s->info = MPI_INFO_NULL;
    s->magic = LOCUS_SESSION_MAGIC;
    s->thread_level = thread_level_wanted(info);
    s->errh = e;
    locus_errh_hold(e);
    s->next = sessions.live;
    sessions.live = s;
    *session = (MPI_Session)s;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Session_finalize)
int PMPI_Session_finalize(MPI_Session *session)
{
    LOCUS_ENTRY_CS();
    static const char fn[] = "MPI_Session_finalize";
    locus_session_t *s = session ? locus_session_of(*session) : NULL;
    if (!s)
        return locus_session_err(NULL, MPI_ERR_SESSION, fn);
    for (locus_session_t **pp = &sessions.live; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    /* After an (erroneous) MPI_Finalize the info calls are gone with the
     * runtime: the copy is left, as MPI_Finalize leaves the user's. */
    if (s->info != MPI_INFO_NULL && locus_mpi.state == 1)
        PMPI_Info_free(&s->info);
    locus_errh_drop(s->errh);
    locus_bsend_session_release(&s->bsend);
    s->magic = 0;
    free(s);
    *session = MPI_SESSION_NULL;
    int rc = MPI_SUCCESS;
    if (!sessions.live && sessions.started_runtime && locus_mpi.state == 1) {
        sessions.started_runtime = 0;
        rc = PMPI_Finalize();
    }
    return rc;
}

/* The entry points of the calls written as locus_<x>_impl below are
 * generated with their checks (a live session, somewhere to write each
 * result); errors return to them, which raise them on the session. */

int locus_session_get_num_psets_impl(locus_session_t *s, MPI_Info info, int *npset_names)
{
    (void)s, (void)info; /* the process sets do not depend on them */
    *npset_names = NPSETS;
    return MPI_SUCCESS;
}

int locus_session_get_nth_pset_impl(locus_session_t *s, MPI_Info info, int n, int *pset_len,
                                    char *pset_name)
{
    (void)s, (void)info;
    if (n < 0 || n >= NPSETS || *pset_len < 0 || (*pset_len > 0 && !pset_name))
        return MPI_ERR_ARG;
    /* pset_len 0 asks for the length needed (terminator included). */
    if (*pset_len == 0)
        *pset_len = (int)strlen(psets[n]) + 1;
    else
        snprintf(pset_name, (size_t)*pset_len, "%s", psets[n]);
    return MPI_SUCCESS;
}

/* The members of a process set as world ranks (*n of them), or -1. */
static int pset_members(const char *name, int *n, int *first)
{
    if (!name)
        return -1;
    if (strcasecmp(name, psets[0]) == 0) {
        *n = locus_mpi.boot.size;
        *first = 0;
        return 0;
    }
    if (strcasecmp(name, psets[1]) == 0) {
        *n = 1;
        *first = locus_mpi.boot.rank;
        return 0;
    }
    return -1;
}

int locus_session_get_pset_info_impl(locus_session_t *s, const char *pset_name, MPI_Info *info)
{
    (void)s;
    int n, first;
    if (pset_members(pset_name, &n, &first) != 0)
        return MPI_ERR_ARG;
    char size[24];
    snprintf(size, sizeof size, "%d", n);
    int rc = locus_info_create_impl(info);
    if (rc == MPI_SUCCESS && (rc = locus_info_set_impl(*info, "mpi_size", size)) != MPI_SUCCESS)
        PMPI_Info_free(info);
    return rc;
}

int locus_session_get_info_impl(locus_session_t *s, MPI_Info *info_used)
{
    int rc = s->info != MPI_INFO_NULL ? locus_info_dup_impl(s->info, info_used)
                                      : locus_info_create_impl(info_used);
    if (rc == MPI_SUCCESS &&
        (rc = locus_info_set_impl(*info_used, "thread_level",
                                  locus_thread_level_name(s->thread_level))))
        PMPI_Info_free(info_used);
    return rc;
}

int locus_group_from_session_pset_impl(locus_session_t *s, const char *pset_name,
                                       MPI_Group *newgroup)
{
    int n, first;
    if (pset_members(pset_name, &n, &first) != 0)
        return MPI_ERR_ARG;
    int *w = malloc((size_t)n * sizeof *w);
    if (!w)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < n; i++)
        w[i] = first + i;
    int err = locus_group_make(n, w, newgroup);
    free(w);
    if (err == MPI_SUCCESS && *newgroup != MPI_GROUP_EMPTY && locus_group_of(*newgroup))
        locus_group_of(*newgroup)->bsend_slot = &s->bsend;
    return err;
}
