/*
 * dynproc.c — dynamic processes, which Locus does not provide: every call
 * that would start processes or connect to another job is refused with
 * MPI_ERR_UNSUPPORTED_OPERATION through the error handler, with a line
 * naming the call (the fatal handlers print it). Two calls are valid
 * without them: MPI_Comm_get_parent (no parent: MPI_COMM_NULL) and
 * MPI_Comm_disconnect on an ordinary communicator (a collective free).
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
    (void)array_of_commands, (void)array_of_argv, (void)array_of_info;
    if (intercomm)
        *intercomm = MPI_COMM_NULL;
    int total = 0;
    for (int i = 0; array_of_maxprocs && i < count; i++)
        total += array_of_maxprocs[i] > 0 ? array_of_maxprocs[i] : 0;
    spawn_errcodes(comm, root, total, array_of_errcodes);
    return refuse(locus_comm_of(comm), "MPI_Comm_spawn_multiple", "dynamic process creation");
}

LOCUS_PMPI_WEAK(Comm_get_parent)
int PMPI_Comm_get_parent(MPI_Comm *parent)
{
    LOCUS_CHECK_INIT("MPI_Comm_get_parent");
    if (!parent)
        return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_Comm_get_parent");
    *parent = MPI_COMM_NULL; /* no process of a Locus job was spawned */
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Comm_connect)
int PMPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                      MPI_Comm *newcomm)
{
    (void)port_name, (void)info, (void)root;
    if (newcomm)
        *newcomm = MPI_COMM_NULL;
    return refuse(locus_comm_of(comm), "MPI_Comm_connect", "connecting to another job");
}

LOCUS_PMPI_WEAK(Comm_accept)
int PMPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                     MPI_Comm *newcomm)
{
    (void)port_name, (void)info, (void)root;
    if (newcomm)
        *newcomm = MPI_COMM_NULL;
    return refuse(locus_comm_of(comm), "MPI_Comm_accept", "accepting another job");
}

LOCUS_PMPI_WEAK(Open_port)
int PMPI_Open_port(MPI_Info info, char *port_name)
{
    (void)info, (void)port_name;
    return refuse(NULL, "MPI_Open_port", "opening a port for other jobs");
}

LOCUS_PMPI_WEAK(Close_port)
int PMPI_Close_port(const char *port_name)
{
    (void)port_name;
    return refuse(NULL, "MPI_Close_port", "a port for other jobs");
}

LOCUS_PMPI_WEAK(Publish_name)
int PMPI_Publish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    (void)service_name, (void)info, (void)port_name;
    return refuse(NULL, "MPI_Publish_name", "the name service");
}

LOCUS_PMPI_WEAK(Lookup_name)
int PMPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name)
{
    (void)service_name, (void)info, (void)port_name;
    return refuse(NULL, "MPI_Lookup_name", "the name service");
}

LOCUS_PMPI_WEAK(Unpublish_name)
int PMPI_Unpublish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    (void)service_name, (void)info, (void)port_name;
    return refuse(NULL, "MPI_Unpublish_name", "the name service");
}

LOCUS_PMPI_WEAK(Comm_join)
int PMPI_Comm_join(int fd, MPI_Comm *intercomm)
{
    (void)fd;
    if (intercomm)
        *intercomm = MPI_COMM_NULL;
    return refuse(NULL, "MPI_Comm_join", "joining another process over a socket");
}

LOCUS_PMPI_WEAK(Comm_disconnect)
int PMPI_Comm_disconnect(MPI_Comm *comm)
{
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
