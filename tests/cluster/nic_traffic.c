/*
 * nic_traffic [SMALL_MB BIG_MB] — traffic whose volume says which rank sent
 * it: ranks are placed node by node (the first half on one node, the rest
 * on the other), and rank r of the first half sends to its partner
 * r + size/2 on the other node, the same local rank there: SMALL_MB MiB
 * from rank 0, BIG_MB MiB from the others. Every message is checked by the
 * receiver. The interface byte counters then tell whether each rank's bytes
 * left through the NIC its plan named (cluster_tests.py, case nics).
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define CHUNK (1 << 20)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int small = argc > 2 ? atoi(argv[1]) : 4, big = argc > 2 ? atoi(argv[2]) : 32;
    int half = size / 2, mine = rank < half;
    int partner = mine ? rank + half : rank - half;
    int mb = (mine ? rank : partner) == 0 ? small : big;
    unsigned char *buf = malloc(CHUNK);
    for (int i = 0; i < mb; i++) {
        if (mine) {
            memset(buf, (i + rank) & 0xff, CHUNK);
            MPI_Send(buf, CHUNK, MPI_BYTE, partner, i, MPI_COMM_WORLD);
        } else {
            MPI_Recv(buf, CHUNK, MPI_BYTE, partner, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int bad = 0;
            for (int k = 0; k < CHUNK; k += 4093)
                bad += buf[k] != ((i + partner) & 0xff);
            CHECK(bad == 0, "chunk %d from %d corrupted", i, partner);
        }
    }
    free(buf);
    return mtest_finish();
}
