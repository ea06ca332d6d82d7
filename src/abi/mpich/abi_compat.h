/*
 * abi_compat.h — values newer MPICH 4 releases add to the mpi.h the layer
 * compiles against (Debian's 4.0), under the same soname, which binaries
 * built against them (PyPI's mpi4py wheel among them) pass: read by
 * gen_abi.py beside the header, so they map like the header's own.
 */
#ifndef LOCUS_ABI_COMPAT_H
#define LOCUS_ABI_COMPAT_H

#ifndef MPI_ERR_ERRHANDLER
#define MPI_ERR_ERRHANDLER 80
#endif
#ifndef MPI_COMBINER_VALUE_INDEX
#define MPI_COMBINER_VALUE_INDEX 20
#endif
#ifndef MPI_COMM_TYPE_RESOURCE_GUIDED
#define MPI_COMM_TYPE_RESOURCE_GUIDED 4
#endif

#endif
