/*
 * dynproc.c — MPI_Comm_join and MPI_Comm_disconnect. Spawn is spawn.c,
 * ports port.c, the name service names.c.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "dynproc.h"

/* All of n bytes to (writing) or from fd, a socket the program
 * connected. 0, or -1 (an error, or the other side closed it). */
static int fd_all(int fd, void *buf, size_t n, int writing)
{
    char *p = buf;
    while (n > 0) {
        ssize_t k = writing ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* MPI_Comm_join: each side opens a port and sends its name over the
 * socket; the side whose name sorts first accepts on its own, the other
 * connects to it, over MPI_COMM_SELF. The socket stays the program's. */
int locus_comm_join_impl(int fd, MPI_Comm *intercomm)
{
    *intercomm = MPI_COMM_NULL;
    char mine[MPI_MAX_PORT_NAME] = "", theirs[MPI_MAX_PORT_NAME] = "";
    int err = locus_open_port_impl(MPI_INFO_NULL, mine);
    if (err)
        return err;
    uint32_t len = (uint32_t)strlen(mine) + 1, tlen = 0;
    errno = 0;
    if (fd_all(fd, &len, sizeof len, 1) || fd_all(fd, mine, len, 1) ||
        fd_all(fd, &tlen, sizeof tlen, 0) || tlen < 2 || tlen > sizeof theirs ||
        fd_all(fd, theirs, tlen, 0) || theirs[tlen - 1] != '\0') {
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail,
                 "socket %d: no port name from the other side (%s)", fd,
                 errno ? strerror(errno) : "malformed");
        locus_close_port_impl(mine);
        return MPI_ERR_ARG;
    }
    int accepting = strcmp(mine, theirs) < 0;
    locus_comm_t *n = NULL;
    err = strcmp(mine, theirs) == 0 ? MPI_ERR_ARG
                                    : locus_dyn_meet(accepting, accepting ? mine : theirs, 0,
                                                     &locus_comm_self, NULL, NULL, &n);
    locus_close_port_impl(mine);
    if (!err)
        *intercomm = locus_comm_handle(n);
    return err;
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
