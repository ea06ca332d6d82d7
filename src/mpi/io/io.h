/*
 * io/io.h — the MPI-IO chapter (file.c): MPI_File_* and the default file
 * error handler. Locus does not provide MPI-IO yet: every call is there so
 * that programs link and load, opening a file refuses with
 * MPI_ERR_UNSUPPORTED_OPERATION (see file.c).
 */
#ifndef LOCUS_MPI_IO_H
#define LOCUS_MPI_IO_H

#include "env/env.h"

/* Releases the default file error handler, at MPI_Finalize. */
void locus_file_finalize(void);

#endif
