/*
 * coll_pair_way.c — on 2 ranks with a core each, LOCUS_COLL_PAIR_MSG_MIN
 * decides whether an allreduce vector and allgather, gather and scatter
 * blocks go as messages or through the shared segment: `coll_pair_way
 * messages` expects every one of them (2 KiB and 4 KiB, at or above the
 * threshold ctest sets) to send one eager message with its payload in the
 * pool (pvar locus_shm_eager_pooled), `coll_pair_way segment` expects
 * none; the results are checked either way, the receive buffers 16 bytes
 * (mod 4 KiB) past the send buffers, where glibc's copy is slow on some
 * CPUs (locus_copy.h). Skips (77) where the ranks share a CPU (no pair
 * path there).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tools/tpvar.h"

enum { ROUNDS = 10, MAXB = 4096 };

/* One round of the four collectives with blocks of n bytes (floats). */
static void round_of(int rank, const float *a, float *b, int n)
{
    int cnt = n / (int)sizeof(float);
    MPI_Allreduce(a, b, cnt, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(b[1] == 3.0f && b[cnt - 1] == 3.0f * (float)(cnt - 1), "allreduce %d B: %g %g", n,
          b[1], b[cnt - 1]);
    MPI_Allgather(a, cnt, MPI_FLOAT, b, cnt, MPI_FLOAT, MPI_COMM_WORLD);
    CHECK(b[1] == 1.0f && b[cnt + 1] == 2.0f, "allgather %d B: %g %g", n, b[1], b[cnt + 1]);
    MPI_Gather(a, cnt, MPI_FLOAT, b, cnt, MPI_FLOAT, 1, MPI_COMM_WORLD);
    if (rank == 1)
        CHECK(b[cnt - 1] == (float)(cnt - 1) && b[2 * cnt - 1] == 2.0f * (float)(cnt - 1),
              "gather %d B: %g %g", n, b[cnt - 1], b[2 * cnt - 1]);
    MPI_Scatter(a, cnt, MPI_FLOAT, b, cnt, MPI_FLOAT, 0, MPI_COMM_WORLD);
    /* Rank 0's vector is i, so its second block starts at cnt. */
    CHECK(b[0] == (float)(rank * cnt), "scatter %d B: %g", n, b[0]);
}

int main(int argc, char **argv)
{
    tp_large_t pv;
    int rank = tp_pair_init(&argc, &argv, "coll_pair_way", &pv);
    int messages = argc > 1 && !strcmp(argv[1], "messages");
    if (argc < 2 || (!messages && strcmp(argv[1], "segment"))) {
        if (rank == 0)
            fprintf(stderr, "usage: coll_pair_way messages|segment\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    tp_skip_if(rank, tp_any_yield(MPI_COMM_WORLD) ? "the ranks share a CPU (no pair path)"
                                                    : NULL);
    MPI_T_pvar_handle pooled = tp_pvar("locus_shm_eager_pooled", MPI_T_PVAR_CLASS_COUNTER);
    char *base = aligned_alloc(4096, 4 * 4 * MAXB);
    float *a = (float *)base, *b = (float *)(base + 2 * MAXB + 16);
    for (int i = 0; i < 2 * MAXB / (int)sizeof(float); i++)
        a[i] = (float)(rank + 1) * (float)i;
    MPI_T_pvar_start(tp_sess, MPI_T_PVAR_ALL_HANDLES);
    for (int r = 0; r < ROUNDS; r++) {
        round_of(rank, a, b, 2048);
        round_of(rank, a, b, MAXB);
    }
    MPI_T_pvar_stop(tp_sess, MPI_T_PVAR_ALL_HANDLES);
    /* Per round and size: one message from each rank in the allreduce and
     * the allgather, from rank 0 in the gather (to root 1) and the scatter
     * (from root 0). */
    unsigned long long want = messages ? ROUNDS * 2ull * (rank == 0 ? 4 : 2) : 0;
    CHECK(tp_read(pooled) == want, "%s: %llu pooled eager messages sent, want %llu", argv[1],
          tp_read(pooled), want);
    free(base);
    return tp_end();
}
