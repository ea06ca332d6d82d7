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

#include "../tools/tpvar.h"

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
    int p, rank = tp_init(&argc, &argv, &p);

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

    /* Without yielding, no wait differs: none are counted. */
    int want = tp_any_yield(MPI_COMM_WORLD) ? by_masks : 0;
    MPI_Comm world = MPI_COMM_WORLD;
    unsigned long long got =
        tp_read(tp_pvar_on("locus_coll_shm_ranks_apart", MPI_T_PVAR_CLASS_SIZE, &world));
    CHECK(got == (unsigned long long)want, "%llu ranks apart, the masks say %d", got, want);

    /* Bound to cores over two CPUs or more, some rank must be apart, or
     * the run tests nothing new. */
    int any = 0;
    MPI_Allreduce(&by_masks, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (argc > 1 && !strcmp(argv[1], "bound"))
        CHECK(any > 0 || CPU_COUNT(&used) < 2, "bound over %d CPUs, yet no rank is apart",
              CPU_COUNT(&used));
    return tp_end();
}
