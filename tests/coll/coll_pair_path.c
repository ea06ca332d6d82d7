/*
 * coll_pair_path.c — on 2 ranks of one node, collective traffic takes the
 * transport's large-message paths like any message: the partner of a
 * pair waits on this very exchange, so the split single copy (it writes
 * one half while I read the other) is open to it. With the rule set to
 * CMA from 512 KiB (LOCUS_SHM_CMA_MIN), the first 1 MiB message each rank
 * receives goes by the split; every large message of an allgather, a
 * reduce and a reduce_scatter is counted (pvars) and the results are
 * checked. A reduce's data in one piece (ctest sets the segment of its
 * stream, LOCUS_COLL_REDUCE_SEGMENT, to 1 MiB), combined on arrival, is
 * read by the root alone (plain CMA, never split). (With more ranks the
 * sender has other transfers of the collective to serve and the receiver
 * reads them by plain CMA: shm_xfer_2_bulk.) Skips (77) where the kernel
 * refuses CMA between the ranks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tools/tpvar.h"

enum { BIG = 1 << 20, ROUNDS = 4 };

int main(int argc, char **argv)
{
    tp_large_t pv;
    int rank = tp_pair_init(&argc, &argv, "coll_pair_path", &pv);
    MPI_T_pvar_handle cma = pv.cma, split = pv.split, pipe = pv.pipe;

    float *a = malloc(2 * BIG), *b = malloc(2 * BIG);
    int n = BIG / (int)sizeof(float), counts[2] = { n / 2, n / 2 };
    for (int i = 0; i < n; i++)
        a[i] = (float)(rank + 1) * (float)(i % 97);
    tp_split_or_skip(rank);
    MPI_T_pvar_start(tp_sess, MPI_T_PVAR_ALL_HANDLES);
    for (int r = 0; r < ROUNDS; r++) {
        MPI_Allgather(a, BIG, MPI_BYTE, b, BIG, MPI_BYTE, MPI_COMM_WORLD);
        CHECK(memcmp((char *)b + (size_t)rank * BIG, a, BIG) == 0, "allgather: my block");
        float *other = (float *)((char *)b + (size_t)(1 - rank) * BIG);
        CHECK(other[5] == (float)(2 - rank) * 5.0f, "allgather: peer block %g", other[5]);
        MPI_Reduce(a, b, n, MPI_FLOAT, MPI_SUM, r % 2, MPI_COMM_WORLD);
        if (rank == r % 2)
            CHECK(b[96] == 3.0f * 96.0f && b[n - 1] == 3.0f * (float)((n - 1) % 97),
                  "reduce: %g", b[96]);
        MPI_Reduce_scatter(a, b, counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        int i0 = rank * (n / 2) + 7;
        CHECK(b[7] == 3.0f * (float)(i0 % 97), "reduce_scatter: %g", b[7]);
    }
    MPI_T_pvar_stop(tp_sess, MPI_T_PVAR_ALL_HANDLES);
    /* Per round each rank receives one large message in each collective:
     * the peer's block, the child's vector at the root, the peer's half;
     * each by one of the paths, the first by the split. */
    unsigned long long want = ROUNDS * 2ull + ROUNDS / 2;
    CHECK(tp_read(cma) + tp_read(pipe) == want, "cma_recv %llu + pipe_recv %llu, want %llu",
          tp_read(cma), tp_read(pipe), want);
    CHECK(tp_read(split) >= 1, "split_recv %llu: collective traffic of a pair was never split",
          tp_read(split));
    /* Data reduced on arrival is read by the receiver alone, never split:
     * each rank is the root of half the reduces here. */
    unsigned long long split0 = tp_read(split), cma0 = tp_read(cma);
    MPI_T_pvar_start(tp_sess, MPI_T_PVAR_ALL_HANDLES);
    for (int r = 0; r < ROUNDS; r++)
        MPI_Reduce(a, b, n, MPI_FLOAT, MPI_SUM, r % 2, MPI_COMM_WORLD);
    MPI_T_pvar_stop(tp_sess, MPI_T_PVAR_ALL_HANDLES);
    CHECK(tp_read(split) == split0, "reduce: %llu split receives", tp_read(split) - split0);
    CHECK(tp_read(cma) - cma0 == ROUNDS / 2, "reduce: %llu CMA receives, want %d",
          tp_read(cma) - cma0, ROUNDS / 2);
    free(a);
    free(b);
    return tp_end();
}
