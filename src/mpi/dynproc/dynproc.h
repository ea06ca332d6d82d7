/*
 * dynproc/dynproc.h — the dynamic processes chapter (dynproc.c):
 * MPI_Comm_spawn and spawn_multiple, MPI_Comm_get_parent, ports
 * (MPI_Open_port, Comm_accept, Comm_connect, Comm_join), names
 * (MPI_Publish_name, Lookup_name) and MPI_Comm_disconnect: spawn.c,
 * port.c, names.c, dynproc.c. Processes of other jobs are peers of the dyn
 * transport (src/transport/dyn), with peer ids past the world's. It lies
 * above comm/; init/ calls it at MPI_Init and MPI_Finalize.
 */
#ifndef LOCUS_MPI_DYNPROC_H
#define LOCUS_MPI_DYNPROC_H

#include "comm/comm.h"
#include "locus_boot.h"

/* The context pair the roots of an accept/connect meet on (port.c), past
 * every id the agreement hands out (LOCUS_CTX_LIMIT). */
#define LOCUS_CTX_DYN 0xfffffff2u

/*
 * port.c: the meeting of two groups. Collective over comm (an
 * intracommunicator); port matters at root only (accepting: one this
 * process opened). give_up(arg), when not NULL, is asked while the
 * accepting root waits: non-zero ends the wait with that error at every
 * member (spawn's children that never came). *out: the intercommunicator.
 */
int locus_dyn_meet(int accepting, const char *port, int root, locus_comm_t *comm,
                   int (*give_up)(void *), void *arg, locus_comm_t **out);
/* Closes every port still open (MPI_Finalize). */
void locus_ports_close_all(void);

/* spawn.c, for MPI_Init and MPI_Finalize: a child connects to its parents
 * (LOCUS_PARENT_PORT) at the end of MPI_Init (an MPI error class, the
 * reason in locus_mpi.detail); a parent waits for the child jobs it
 * started and closes its ports at the end of MPI_Finalize. */
int locus_dynproc_init(void);
void locus_dynproc_finalize(void);

#endif
