/*
 * abi_layer.h — the Open MPI-ABI layer: Open MPI's mpi.h, then the layers'
 * contract (../abi.h). libmpi.so.40 for binaries built against Open MPI
 * 4 (its handles are the addresses of objects the library exports:
 * abi_objects.c, generated, defines them with Open MPI's names and sizes).
 */
#ifndef LOCUS_ABI_LAYER_H
#define LOCUS_ABI_LAYER_H

#include <mpi.h> /* Open MPI's */

#define ABI_NAME "Open MPI"

#include "abi_compat.h"

/* The version MPI_Get_version says: Open MPI 5's header has MPI-4.0's calls but no
 * MPI_COMM_TYPE_RESOURCE_GUIDED (4.1). */
#define ABI_MPI_VERSION 4
#define ABI_MPI_SUBVERSION 0

#include "abi.h"

#endif
