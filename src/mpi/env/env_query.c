/*
 * env_query.c — the library's state and what a program may ask of its
 * environment at any time: whether MPI runs, the thread levels, the
 * processor's name, the versions, the clock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "env.h"

locus_mpi_state_t locus_mpi;

void locus_mpi_not_active(const char *fn)
{
    fprintf(stderr, "locus: %s called %s MPI_Init\n", fn,
            locus_mpi.state == 0 ? "before" : "after MPI_Finalize, not between it and");
    exit(2);
}

static const char *const thread_names[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                           "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
static const int thread_levels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED,
                                    MPI_THREAD_SERIALIZED, MPI_THREAD_MULTIPLE};

int locus_thread_level_cap(int required)
{
    return required > LOCUS_THREAD_MAX ? LOCUS_THREAD_MAX
           : required < MPI_THREAD_SINGLE ? MPI_THREAD_SINGLE : required;
}

const char *locus_thread_level_name(int level)
{
    for (int i = 0; i < 4; i++)
        if (thread_levels[i] == level)
            return thread_names[i];
    return "MPI_THREAD_SINGLE";
}

int locus_thread_level_parse(const char *name)
{
    for (int i = 0; i < 4; i++)
        if (strcasecmp(name, thread_names[i]) == 0)
            return thread_levels[i];
    return -1;
}

/* The entry points of the three are generated with their checks (somewhere
 * to write; they work before MPI_Init too). */
int locus_get_processor_name_impl(char *name, int *resultlen)
{
    if (!name)
        return MPI_ERR_ARG;
    if (!locus_mpi.hostname[0] && gethostname(locus_mpi.hostname, sizeof locus_mpi.hostname))
        strcpy(locus_mpi.hostname, "localhost");
    locus_mpi.hostname[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
    strcpy(name, locus_mpi.hostname);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

int locus_get_version_impl(int *version, int *subversion)
{
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

int locus_get_library_version_impl(char *version, int *resultlen)
{
    if (!version)
        return MPI_ERR_ARG;
    snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
             "Locus MPI %s (MPI %d.%d; transports: self%s)", LOCUS_VERSION_STRING,
             MPI_VERSION, MPI_SUBVERSION,
#ifdef LOCUS_HAVE_SHM
             ", shm"
#else
             ""
#endif
    );
    *resultlen = (int)strlen(version);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Wtime)
double PMPI_Wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

LOCUS_PMPI_WEAK(Wtick)
double PMPI_Wtick(void)
{
    struct timespec ts;
    if (clock_getres(CLOCK_MONOTONIC, &ts) != 0)
        return 1e-9;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
