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

#include "abi.h"

#endif
