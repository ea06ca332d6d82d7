/*
 * dynproc.c — MPI_Comm_disconnect, and what dynamic processes Locus does
 * not provide yet: the name service and MPI_Comm_join refuse with
 * MPI_ERR_UNSUPPORTED_OPERATION. Spawn is spawn.c, ports port.c.
 */
#include <stdio.h>

#include "dynproc.h"

/* ---- the calls whose entry points are generated with their checks (MPI
 * initialized, a live communicator, somewhere to write) ---- */

/* The refusal an implementation returns. */
static int unsupported(const char *what)
{
    snprintf(locus_mpi.detail, sizeof locus_mpi.detail, "%s is not supported by Locus", what);
    return MPI_ERR_UNSUPPORTED_OPERATION;
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
    int err = c->local ? locus_coll_inter_barrier(&c->coll, &c->local->coll)
                       : locus_coll_barrier(&c->coll);
    if (err != MPI_SUCCESS)
        return locus_mpi_err(c, err, fn);
    return PMPI_Comm_free(comm);
}
