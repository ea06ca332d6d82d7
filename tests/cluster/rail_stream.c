/*
 * rail_stream ROUNDS — two ranks (one per node) stream messages of known
 * content both ways, for cluster_tests.py's case failover: each round
 * every rank sends its partner five messages (8 B, 4 KiB and 60 KiB
 * eager; 256 KiB and 2 MiB by rendezvous, striped over the rails) with
 * Isend while receiving the partner's five with Irecv, and checks every
 * byte and the order (each message carries its round and index). Rank 0
 * prints "streaming" after round 10 (the test then takes a rail down) and
 * at the end the seconds the rounds took and its slowest round.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define NMSG 5
static const int sizes[NMSG] = { 8, 4096, 60 << 10, 256 << 10, 2 << 20 };

static void fill(unsigned char *b, int len, int src, int round, int i)
{
    uint64_t s = ((uint64_t)src << 40 | (uint64_t)round << 8 | (uint64_t)i) * 0x9e3779b97f4a7c15ull;
    for (int k = 0; k < len; k++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        b[k] = (unsigned char)s;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 200;
    CHECK(size == 2, "rail_stream wants 2 ranks, has %d", size);
    int peer = 1 - rank;
    unsigned char *out[NMSG], *in[NMSG], *want = malloc(2 << 20);
    for (int i = 0; i < NMSG; i++) {
        out[i] = malloc((size_t)sizes[i]);
        in[i] = malloc((size_t)sizes[i]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), slowest = 0;
    for (int r = 0; r < rounds && size == 2; r++) {
        double tr = MPI_Wtime();
        MPI_Request req[2 * NMSG];
        for (int i = 0; i < NMSG; i++)
            MPI_Irecv(in[i], sizes[i], MPI_BYTE, peer, i, MPI_COMM_WORLD, &req[i]);
        for (int i = 0; i < NMSG; i++) {
            fill(out[i], sizes[i], rank, r, i);
            MPI_Isend(out[i], sizes[i], MPI_BYTE, peer, i, MPI_COMM_WORLD, &req[NMSG + i]);
        }
        MPI_Waitall(2 * NMSG, req, MPI_STATUSES_IGNORE);
        for (int i = 0; i < NMSG; i++) {
            fill(want, sizes[i], peer, r, i);
            CHECK(memcmp(in[i], want, (size_t)sizes[i]) == 0,
                  "round %d: message %d (%d bytes) from %d differs", r, i, sizes[i], peer);
        }
        double took = MPI_Wtime() - tr;
        slowest = took > slowest ? took : slowest;
        if (rank == 0 && r == 10) {
            printf("streaming\n");
            fflush(stdout);
        }
    }
    double secs = MPI_Wtime() - t0;
    if (rank == 0)
        printf("rounds %d took %.3f s, slowest round %.3f s\n", rounds, secs, slowest);
    for (int i = 0; i < NMSG; i++) {
        free(out[i]);
        free(in[i]);
    }
    free(want);
    return mtest_finish();
}
