/*
 * slow_reader: a rank that computes for a while without MPI calls while a
 * peer's messages pile up for it. Rank 0 starts MSGS eager sends of 8 KiB
 * to rank 1 at once; rank 1 sleeps SECONDS outside MPI (the kernel's
 * buffers fill, the window to it closes), then receives them all and
 * checks every byte. A peer that only stops reading is alive: the job must
 * not fail (over tcp, a closed window outlasting LOCUS_TCP_USER_TIMEOUT
 * once did, on Linux 5.11 and later). Prints " No Errors" on rank 1.
 *
 *   slow_reader SECONDS [MSGS]   (MSGS 1024 unless given)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#define LEN 8192

static unsigned char byte_at(int msg, int i)
{
    return (unsigned char)(msg * 31 + i * 7 + (i >> 8));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double secs = argc > 1 ? atof(argv[1]) : 5.0;
    int msgs = argc > 2 ? atoi(argv[2]) : 1024;
    if (size < 2 || msgs < 1) {
        if (rank == 0)
            fprintf(stderr, "slow_reader: needs 2 ranks and MSGS >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    unsigned char *buf = malloc((size_t)msgs * LEN);
    MPI_Request *req = malloc((size_t)msgs * sizeof *req);
    int errs = 0;
    MPI_Barrier(MPI_COMM_WORLD); /* connected before rank 1 stops listening */
    if (rank == 0) {
        double t0 = MPI_Wtime();
        for (int m = 0; m < msgs; m++) {
            for (int i = 0; i < LEN; i++)
                buf[(size_t)m * LEN + i] = byte_at(m, i);
            MPI_Isend(buf + (size_t)m * LEN, LEN, MPI_BYTE, 1, m, MPI_COMM_WORLD, &req[m]);
        }
        MPI_Waitall(msgs, req, MPI_STATUSES_IGNORE);
        /* Held until rank 1 read: else no window closed, and the test
         * proves nothing (more messages, or smaller socket buffers). */
        double took = MPI_Wtime() - t0;
        if (took < 0.8 * secs && errs++ < 5)
            fprintf(stderr, "rank 0: the sends completed in %.2f s, before rank 1 read\n", took);
    } else if (rank == 1) {
        usleep((useconds_t)(secs * 1e6));
        for (int m = 0; m < msgs; m++)
            MPI_Irecv(buf + (size_t)m * LEN, LEN, MPI_BYTE, 0, m, MPI_COMM_WORLD, &req[m]);
        MPI_Waitall(msgs, req, MPI_STATUSES_IGNORE);
        for (int m = 0; m < msgs; m++)
            for (int i = 0; i < LEN; i++)
                if (buf[(size_t)m * LEN + i] != byte_at(m, i) && errs++ < 5)
                    fprintf(stderr, "rank 1: message %d differs at byte %d\n", m, i);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1 && errs == 0)
        printf(" No Errors\n");
    free(req);
    free(buf);
    MPI_Finalize();
    return errs != 0;
}
