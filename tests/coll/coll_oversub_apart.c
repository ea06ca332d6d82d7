/*
 * coll_oversub_apart.c — on a node whose ranks wait by yielding (ctest
 * sets LOCUS_YIELD=always; pvar locus_core_yield), a rank's waits on the shared segment poll for
 * longer for the ranks bound to CPUs none of which are its own (pvar
 * locus_coll_shm_ranks_apart, bound to the communicator): the count
 * equals what the ranks' affinity masks say, under --bind-to core (two
 * CPUs or more: some are apart) and unbound (none are). Small collectives
 * where each rank waits for others, some on its CPUs and some not, keep
 * their results exact over many rounds: reduce_scatter with blocks on
 * some ranks only, allreduce, bcast, scatter, gather, barrier.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "../tools/tcheck.h"

#define ROUNDS 3000

static int masks_apart(const cpu_set_t *a, const cpu_set_t *b)
{
    cpu_set_t both;
    CPU_AND(&both, a, b);
    return CPU_COUNT(&both) == 0;
}

static void rounds(int rank, int p)
{
    int *counts = malloc(sizeof *counts * (size_t)p);
    float *in = malloc(sizeof *in * (size_t)p * 2), out[2];
    int *all = malloc(sizeof *all * (size_t)p), mine[1], sum;
    CHECK(counts && in && all, "out of memory");
    if (!counts || !in || !all)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int r = 0; r < ROUNDS; r++) {
        /* Blocks on the first (r % p) + 1 ranks only: the others go on. */
        int owners = r % p + 1;
        for (int i = 0; i < p; i++)
            counts[i] = i < owners;
        for (int i = 0; i < owners; i++)
            in[i] = (float)(rank + i + r % 7);
        MPI_Reduce_scatter(in, out, counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        if (rank < owners) {
            float want = (float)(p * (p - 1) / 2 + p * (rank + r % 7));
            CHECK(out[0] == want, "round %d: reduce_scatter gave %g, expected %g", r,
                  (double)out[0], (double)want);
        }
        int x = rank * 3 + r;
        MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(sum == 3 * p * (p - 1) / 2 + p * r, "round %d: allreduce gave %d", r, sum);
        int root = r % p, b = rank == root ? r * 11 : -1;
        MPI_Bcast(&b, 1, MPI_INT, root, MPI_COMM_WORLD);
        CHECK(b == r * 11, "round %d: bcast from %d gave %d", r, root, b);
        for (int i = 0; i < p; i++)
            all[i] = rank == root ? r + i : -1;
        MPI_Scatter(all, 1, MPI_INT, mine, 1, MPI_INT, root, MPI_COMM_WORLD);
        CHECK(mine[0] == r + rank, "round %d: scatter from %d gave %d", r, root, mine[0]);
        mine[0] = rank * 5 + r;
        MPI_Gather(mine, 1, MPI_INT, all, 1, MPI_INT, root, MPI_COMM_WORLD);
        for (int i = 0; rank == root && i < p; i++)
            CHECK(all[i] == i * 5 + r, "round %d: gather at %d: block %d is %d", r, root, i,
                  all[i]);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(counts);
    free(in);
    free(all);
}

int main(int argc, char **argv)
{
    int provided, rank, p;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    tc_rank = rank;

    cpu_set_t me, *masks = malloc(sizeof *masks * (size_t)p);
    CHECK(masks && sched_getaffinity(0, sizeof me, &me) == 0, "no affinity mask");
    if (!masks)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Allgather(&me, (int)sizeof me, MPI_BYTE, masks, (int)sizeof me, MPI_BYTE,
                  MPI_COMM_WORLD);
    int by_masks = 0;
    cpu_set_t used;
    CPU_ZERO(&used);
    for (int i = 0; i < p; i++) {
        by_masks += masks_apart(&me, &masks[i]);
        CPU_OR(&used, &used, &masks[i]);
    }
    free(masks);

    rounds(rank, p);

    MPI_T_pvar_session sess;
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    MPI_Comm world = MPI_COMM_WORLD;
    int idx = -1, count = 0;
    unsigned long long got = ~0ull;
    MPI_T_pvar_session_create(&sess);
    /* Without yielding, no wait differs: none are counted. */
    int yields = 1;
    if (MPI_T_pvar_get_index("locus_core_yield", MPI_T_PVAR_CLASS_STATE, &idx) == MPI_SUCCESS &&
        MPI_T_pvar_handle_alloc(sess, idx, NULL, &h, &count) == MPI_SUCCESS) {
        MPI_T_pvar_read(sess, h, &yields);
        MPI_T_pvar_handle_free(sess, &h);
    }
    int want = yields ? by_masks : 0;
    CHECK(MPI_T_pvar_get_index("locus_coll_shm_ranks_apart", MPI_T_PVAR_CLASS_SIZE, &idx) ==
              MPI_SUCCESS, "no pvar locus_coll_shm_ranks_apart");
    if (idx >= 0 && MPI_T_pvar_handle_alloc(sess, idx, &world, &h, &count) == MPI_SUCCESS)
        MPI_T_pvar_read(sess, h, &got);
    CHECK(got == (unsigned long long)want, "%llu ranks apart, the masks say %d", got, want);
    if (h != MPI_T_PVAR_HANDLE_NULL)
        MPI_T_pvar_handle_free(sess, &h);
    MPI_T_pvar_session_free(&sess);

    /* Bound to cores over two CPUs or more, some rank must be apart, or
     * the run tests nothing new. */
    int any = 0;
    MPI_Allreduce(&by_masks, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (argc > 1 && !strcmp(argv[1], "bound"))
        CHECK(any > 0 || CPU_COUNT(&used) < 2, "bound over %d CPUs, yet no rank is apart",
              CPU_COUNT(&used));
    int bad = tc_report(MPI_COMM_WORLD);
    MPI_Finalize();
    MPI_T_finalize();
    return bad ? 1 : 0;
}
