/*
 * dynproc/dynproc.h — the dynamic processes chapter (dynproc.c):
 * MPI_Comm_spawn and spawn_multiple, MPI_Comm_get_parent, ports
 * (MPI_Open_port, Comm_accept, Comm_connect, Comm_join), names
 * (MPI_Publish_name, Lookup_name) and MPI_Comm_disconnect. Locus does not
 * start processes after MPI_Init yet: the calls refuse with
 * MPI_ERR_UNSUPPORTED_OPERATION, except those that have an answer without
 * it (MPI_Comm_get_parent: MPI_COMM_NULL; MPI_Comm_disconnect of an
 * ordinary communicator). It lies above comm/ and
 * exports nothing to other chapters.
 */
#ifndef LOCUS_MPI_DYNPROC_H
#define LOCUS_MPI_DYNPROC_H

#include "comm/comm.h"

#endif
