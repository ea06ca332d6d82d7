/*
 * Messages that wait unmatched must not stop a matched one (MPI's progress
 * rule). Rank 0 sends many 16 KiB messages (their data waits in its shm
 * pool with their announcements) and then a 4 MiB one, which rank 1
 * receives first: it is pipelined through the same pool, which the
 * unmatched messages may not fill. Then rank 1 receives the small ones in
 * order. Every byte is checked. Run with the pipelined copy forced
 * (LOCUS_SINGLE_COPY=none) and a small pool, so that the small messages
 * alone would fill it.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define NSMALL 300
#define SMALL (16 << 10)
#define BIG (4 << 20)

static unsigned char byte_at(int msg, size_t i)
{
    return (unsigned char)(i * 7u + (size_t)msg * 13u + 1u);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, errs = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "p2p_pool_held: needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    unsigned char *small = malloc((size_t)NSMALL * SMALL), *big = malloc(BIG);
    if (!small || !big)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (rank == 0) {
        MPI_Request req[NSMALL + 1];
        for (int m = 0; m < NSMALL; m++) {
            for (size_t i = 0; i < SMALL; i++)
                small[(size_t)m * SMALL + i] = byte_at(m, i);
            MPI_Isend(small + (size_t)m * SMALL, SMALL, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &req[m]);
        }
        for (size_t i = 0; i < BIG; i++)
            big[i] = byte_at(NSMALL, i);
        MPI_Isend(big, BIG, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &req[NSMALL]);
        MPI_Waitall(NSMALL + 1, req, MPI_STATUSES_IGNORE);
    } else {
        MPI_Recv(big, BIG, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (size_t i = 0; i < BIG && errs < 5; i++)
            if (big[i] != byte_at(NSMALL, i)) {
                fprintf(stderr, "big message: byte %zu is %u, want %u\n", i, big[i],
                        byte_at(NSMALL, i));
                errs++;
            }
        for (int m = 0; m < NSMALL; m++) {
            MPI_Recv(small, SMALL, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (size_t i = 0; i < SMALL && errs < 5; i++)
                if (small[i] != byte_at(m, i)) {
                    fprintf(stderr, "message %d: byte %zu is %u, want %u\n", m, i, small[i],
                            byte_at(m, i));
                    errs++;
                }
        }
    }
    int all = 0;
    MPI_Reduce(&errs, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf(" No Errors\n");
    free(small);
    free(big);
    MPI_Finalize();
    return all != 0;
}
