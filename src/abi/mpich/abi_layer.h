/*
 * abi_layer.h — the MPICH-ABI layer: MPICH's mpi.h, then the layers'
 * contract (../abi.h). libmpich.so.12 (and libmpi.so.12) for binaries
 * built against MPICH, Intel MPI, MVAPICH or Cray MPICH.
 */
#ifndef LOCUS_ABI_LAYER_H
#define LOCUS_ABI_LAYER_H

#include <mpi.h> /* MPICH's */

#define ABI_NAME "MPICH"

#include "abi_compat.h"

/* The version MPI_Get_version says: MPICH 4.2's: the 4.1 constants (MPI_COMM_TYPE_RESOURCE_GUIDED) are in
 * abi_compat.h. */
#define ABI_MPI_VERSION 4
#define ABI_MPI_SUBVERSION 1

#include "abi.h"

#endif
