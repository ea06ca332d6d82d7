/*
 * MPI_Finalize completes sends whose requests were freed (MPI 4.1, 11.2.2:
 * a nonblocking send may be ended with MPI_Request_free): rank 0 starts a
 * large, a medium and a small synchronous send, frees the requests and
 * finalizes at once; rank 1 posts the receives only later, in another
 * order, while rank 0 is already inside MPI_Finalize. The pipelined copy
 * needs the sender's progress until the last chunk, so a finalize that
 * waits without progress hangs here. Rank 1 checks every byte and prints
 * " No Errors". Ranks above 1 only finalize.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <stdio.h>

#include <mpi.h>

static int errs;
#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "rank 1: check failed: %s: ", #cond);              \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, "\n");                                             \
            errs++;                                                            \
        }                                                                      \
    } while (0)

#define BIG (16u << 20)     /* many times the default 1 MiB pool */
#define MEDIUM (64u << 10)  /* one rendezvous chunk */
#define SMALL 100u          /* eager, synchronous */

static unsigned char byte_at(int tag, size_t i)
{
    return (unsigned char)((i * 131u + (size_t)tag * 7u) >> 3);
}

static void fill(unsigned char *b, size_t n, int tag)
{
    for (size_t i = 0; i < n; i++)
        b[i] = byte_at(tag, i);
}

static size_t bad_at(const unsigned char *b, size_t n, int tag)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != byte_at(tag, i))
            return i;
    return (size_t)-1;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const size_t len[3] = { BIG, MEDIUM, SMALL };
    unsigned char *buf[3];
    for (int k = 0; k < 3; k++)
        if (!(buf[k] = malloc(len[k]))) {
            fprintf(stderr, "out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    if (size < 2) {
        fprintf(stderr, "finalize_drain: needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank == 0) {
        MPI_Request r;
        for (int k = 0; k < 3; k++) {
            fill(buf[k], len[k], k + 1);
            if (k == 2)
                MPI_Issend(buf[k], (int)len[k], MPI_BYTE, 1, k + 1, MPI_COMM_WORLD, &r);
            else
                MPI_Isend(buf[k], (int)len[k], MPI_BYTE, 1, k + 1, MPI_COMM_WORLD, &r);
            MPI_Request_free(&r);
        }
        /* The buffers stay allocated: MPI may use them until Finalize returns. */
        MPI_Finalize();
        for (int k = 0; k < 3; k++)
            free(buf[k]);
        return 0;
    }
    if (rank == 1) {
        /* Let rank 0 reach MPI_Finalize first. */
        struct timespec ts = { 0, 200 * 1000 * 1000 };
        nanosleep(&ts, NULL);
        for (int k = 2; k >= 0; k--) {
            MPI_Status st;
            int n;
            memset(buf[k], 0, len[k]);
            MPI_Recv(buf[k], (int)len[k], MPI_BYTE, 0, k + 1, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_BYTE, &n);
            CHECK((size_t)n == len[k], "tag %d: %d bytes, want %zu", k + 1, n, len[k]);
            size_t b = bad_at(buf[k], len[k], k + 1);
            CHECK(b == (size_t)-1, "tag %d: byte %zu wrong", k + 1, b);
        }
        if (errs)
            printf(" Found %d errors\n", errs);
        else
            printf(" No Errors\n");
        fflush(stdout);
    }
    MPI_Finalize();
    for (int k = 0; k < 3; k++)
        free(buf[k]);
    return errs ? 1 : 0;
}
