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

#include "../tools/tcheck.h"

enum { BIG = 1 << 20, ROUNDS = 4 };

static MPI_T_pvar_session sess;

static MPI_T_pvar_handle pv(const char *name, int cls)
{
    int idx = -1, count = 0;
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    CHECK(MPI_T_pvar_get_index(name, cls, &idx) == MPI_SUCCESS, "no pvar %s", name);
    CHECK(MPI_T_pvar_handle_alloc(sess, idx, NULL, &h, &count) == MPI_SUCCESS, "%s", name);
    return h;
}

static unsigned long long rd(MPI_T_pvar_handle h)
{
    unsigned long long v = 0;
    MPI_T_pvar_read(sess, h, &v);
    return v;
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tc_rank = rank;
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "coll_pair_path: needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_T_pvar_session_create(&sess);
    MPI_T_pvar_handle cma = pv("locus_shm_cma_recv", MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle split = pv("locus_shm_split_recv", MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle pipe = pv("locus_shm_pipe_recv", MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle on = pv("locus_shm_single_copy", MPI_T_PVAR_CLASS_STATE);
    MPI_T_pvar_handle yield = pv("locus_core_yield", MPI_T_PVAR_CLASS_STATE);

    float *a = malloc(2 * BIG), *b = malloc(2 * BIG);
    int n = BIG / (int)sizeof(float), counts[2] = { n / 2, n / 2 };
    for (int i = 0; i < n; i++)
        a[i] = (float)(rank + 1) * (float)(i % 97);
    int single = 0;
    MPI_T_pvar_read(sess, on, &single);
    int both = 0, idle = 0, any_idle = 0;
    MPI_Allreduce(&single, &both, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    /* Ranks that share a CPU yield while idle, and never split (the
     * partner would have to run at once): nothing to check there. */
    MPI_T_pvar_read(sess, yield, &idle);
    MPI_Allreduce(&idle, &any_idle, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!both || any_idle) {
        if (rank == 0)
            printf("SKIPPED: %s\n", !both ? "no single copy (CMA) between the ranks here"
                                          : "the ranks share a CPU (no split single copy)");
        MPI_Finalize();
        return 77;
    }
    MPI_T_pvar_start(sess, MPI_T_PVAR_ALL_HANDLES);
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
    MPI_T_pvar_stop(sess, MPI_T_PVAR_ALL_HANDLES);
    /* Per round each rank receives one large message in each collective:
     * the peer's block, the child's vector at the root, the peer's half;
     * each by one of the paths, the first by the split. */
    unsigned long long want = ROUNDS * 2ull + ROUNDS / 2;
    CHECK(rd(cma) + rd(pipe) == want, "cma_recv %llu + pipe_recv %llu, want %llu", rd(cma),
          rd(pipe), want);
    CHECK(rd(split) >= 1, "split_recv %llu: collective traffic of a pair was never split",
          rd(split));
    /* Data reduced on arrival is read by the receiver alone, never split:
     * each rank is the root of half the reduces here. */
    unsigned long long split0 = rd(split), cma0 = rd(cma);
    MPI_T_pvar_start(sess, MPI_T_PVAR_ALL_HANDLES);
    for (int r = 0; r < ROUNDS; r++)
        MPI_Reduce(a, b, n, MPI_FLOAT, MPI_SUM, r % 2, MPI_COMM_WORLD);
    MPI_T_pvar_stop(sess, MPI_T_PVAR_ALL_HANDLES);
    CHECK(rd(split) == split0, "reduce: %llu split receives", rd(split) - split0);
    CHECK(rd(cma) - cma0 == ROUNDS / 2, "reduce: %llu CMA receives, want %d", rd(cma) - cma0,
          ROUNDS / 2);
    free(a);
    free(b);
    MPI_T_pvar_session_free(&sess);
    int bad = tc_report(MPI_COMM_WORLD);
    MPI_Finalize();
    MPI_T_finalize();
    return bad ? 1 : 0;
}
