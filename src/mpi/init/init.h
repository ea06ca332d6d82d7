/*
 * init/init.h — the chapter that starts and ends the library (init.c:
 * MPI_Init, MPI_Init_thread, MPI_Finalize, MPI_Abort and their queries;
 * startup_report.c: what start-up cost, for LOCUS_STARTUP_REPORT). It
 * lies above every chapter but sessions: MPI_Init sets up and
 * MPI_Finalize tears down what they all keep.
 */
#ifndef LOCUS_MPI_INIT_H
#define LOCUS_MPI_INIT_H

#include "env/env.h"

/* MPI_Init's end (the run phase begins), and the LOCUS_STARTUP_REPORT
 * summary, collective over MPI_COMM_WORLD, at the start of MPI_Finalize. */
void locus_startup_init_done(void);
void locus_startup_report(void);
/* Where this rank's traffic between nodes goes: the network transport
 * serving a peer and its where() ("ofi tcp;ofi_rxm eth0"), or "-". */
void locus_network_where(char *buf, size_t len);

#endif
