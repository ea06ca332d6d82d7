/*
 * tcheck.h — checks for the tools tests, usable before MPI_Init and after
 * MPI_Finalize (MPI_T and sessions live there): CHECK counts and prints
 * failures with the rank set in tc_rank (-1 until known); tc_report sums
 * the failures over a communicator and rank 0 prints " No Errors" or
 * " Found N errors" (MPICH's convention); tc_report_local prints this
 * process's verdict alone.
 */
#ifndef TCHECK_H
#define TCHECK_H

#include <stdio.h>

#include <mpi.h>

static int tc_errs, tc_rank = -1;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", tc_rank,    \
                    __FILE__, __LINE__, #cond);                                \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, "\n");                                             \
            tc_errs++;                                                         \
        }                                                                      \
    } while (0)

static inline void tc_verdict(int total)
{
    if (total == 0)
        printf(" No Errors\n");
    else
        printf(" Found %d errors\n", total);
    fflush(stdout);
}

/* Collective over comm: 0 when no rank found an error. */
static inline int tc_report(MPI_Comm comm)
{
    int total = 0, rank;
    MPI_Comm_rank(comm, &rank);
    MPI_Allreduce(&tc_errs, &total, 1, MPI_INT, MPI_SUM, comm);
    if (rank == 0)
        tc_verdict(total);
    return total ? 1 : 0;
}

static inline int tc_report_local(void)
{
    tc_verdict(tc_errs);
    return tc_errs ? 1 : 0;
}

#endif
