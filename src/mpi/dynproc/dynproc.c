/*
 * dynproc.c — dynamic processes, which Locus does not provide: every call
 * that would start processes or connect to another job is refused with
 * MPI_ERR_UNSUPPORTED_OPERATION through the error handler, with a line
 * naming the call (the fatal handlers print it). Two calls are valid
 * without them: MPI_Comm_get_parent (no parent: MPI_COMM_NULL) and
 * MPI_Comm_disconnect on an ordinary communicator (a collective free).
 * MPI_Comm_spawn, spawn_multiple and disconnect are written here whole;
 * the others' entry points are generated (src/api/gen_c.py).
 */
#include <stdio.h>

#include "dynproc.h"

/* Raises the refusal of fn on c (NULL: the default handler). */
static int refuse(locus_comm_t *c, const char *fn, const char *what)
{
    LOCUS_CHECK_INIT(fn);
    snprintf(locus_mpi.detail, sizeof locus_mpi.detail, "%s is not supported by Locus", what);
    return locus_mpi_err(locus_comm_valid(c) ? c : NULL, MPI_ERR_UNSUPPORTED_OPERATION, fn);
}

/* No process was started: every error code slot says why (at the root,
 * the only rank whose array is significant). */
static void spawn_errcodes(MPI_Comm comm, int root, int n, int errcodes[])
{
    locus_comm_t *c = locus_comm_of(comm);
    if (errcodes != MPI_ERRCODES_IGNORE && locus_comm_valid(c) && c->coll.rank == root)
        for (int i = 0; i < n; i++)
            errcodes[i] = MPI_ERR_UNSUPPORTED_OPERATION;
}

LOCUS_PMPI_WEAK(Comm_spawn)
int PMPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
                    MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    LOCUS_ENTRY_CS();
    (void)command, (void)argv, (void)info;
    if (intercomm)
        *intercomm = MPI_COMM_NULL;
    spawn_errcodes(comm, root, maxprocs, array_of_errcodes);
    return refuse(locus_comm_of(comm), "MPI_Comm_spawn", "dynamic process creation");
}

LOCUS_PMPI_WEAK(Comm_spawn_multiple)
int PMPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                             const int array_of_maxprocs[], const MPI_Info array_of_info[],
                             int root, MPI_Comm comm, MPI_Comm *intercomm,
                             int array_of_errcodes[])
{
    LOCUS_ENTRY_CS();
    (void)array_of_commands, (void)array_of_argv, (void)array_of_info;
    if (intercomm)
        *intercomm = MPI_COMM_NULL;
    int total = 0;
    for (int i = 0; array_of_maxprocs && i < count; i++)
        total += array_of_maxprocs[i] > 0 ? array_of_maxprocs[i] : 0;
    spawn_errcodes(comm, root, total, array_of_errcodes);
    return refuse(locus_comm_of(comm), "MPI_Comm_spawn_multiple", "dynamic process creation");
}

/* ---- the calls whose entry points are generated with their checks (MPI
 * initialized, a live communicator, somewhere to write) ---- */

/* The refusal an implementation returns. */
static int unsupported(const char *what)
{
    snprintf(locus_mpi.detail, sizeof locus_mpi.detail, "%s is not supported by Locus", what);
    return MPI_ERR_UNSUPPORTED_OPERATION;
}

int locus_comm_get_parent_impl(MPI_Comm *parent)
{
    *parent = MPI_COMM_NULL; /* no process of a Locus job was spawned */
    return MPI_SUCCESS;
}

/* MPI_Comm_connect, and MPI_Comm_accept with accept set. */
int locus_comm_connect_impl(int accept, const char *port_name, MPI_Info info, int root,
                            locus_comm_t *comm, MPI_Comm *newcomm)
{
    (void)port_name, (void)info, (void)root, (void)comm;
    *newcomm = MPI_COMM_NULL;
    return unsupported(accept ? "accepting another job" : "connecting to another job");
}

int locus_open_port_impl(MPI_Info info, char *port_name)
{
    (void)info, (void)port_name;
    return unsupported("opening a port for other jobs");
}

int locus_close_port_impl(const char *port_name)
{
    (void)port_name;
    return unsupported("a port for other jobs");
}

/* MPI_Publish_name, MPI_Lookup_name and MPI_Unpublish_name (which). */
int locus_publish_name_impl(int which, const char *service_name, MPI_Info info,
                            const char *port_name)
{
    (void)which, (void)service_name, (void)info, (void)port_name;
    return unsupported("the name service");
}

int locus_comm_join_impl(int fd, MPI_Comm *intercomm)
{
    (void)fd;
    *intercomm = MPI_COMM_NULL;
    return unsupported("joining another process over a socket");
}

LOCUS_PMPI_WEAK(Comm_disconnect)
int PMPI_Comm_disconnect(MPI_Comm *comm)
{
    LOCUS_ENTRY_CS();
    static const char fn[] = "MPI_Comm_disconnect";
    LOCUS_CHECK_INIT(fn);
    if (!comm)
        return locus_mpi_err(NULL, MPI_ERR_ARG, fn);
    locus_comm_t *c = locus_comm_of(*comm);
    /* The predefined communicators are not the program's to release. */
    if (!locus_comm_valid(c) || c->predefined)
        return locus_mpi_err(c, MPI_ERR_COMM, fn);
    /* Collective: the program completed its communication on comm (the
     * standard's condition), so once every member is here nothing is in
     * flight on it and the free is final everywhere. */
    int err = locus_coll_barrier(&c->coll);
    if (err != MPI_SUCCESS)
        return locus_mpi_err(c, err, fn);
    return PMPI_Comm_free(comm);
}
