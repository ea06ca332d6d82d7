/*
 * coll_rooted.c — rooted collectives back to back: bcast, scatter, gather
 * and reduce with the root moving every call, and an allgather among
 * them, sizes from one int to 8 KiB, no MPI_Barrier in between, and one
 * rank pausing now and then so the others run ahead of it as far as they
 * can. On one node these go through the shared segment's rooted records,
 * which are reused a few operations later, and its two sets of slots,
 * which a scatter past a record leaves without a barrier; every result is
 * checked, so a record or slot overwritten before its readers were done
 * shows as wrong data, or as a hang (a reader waiting for an operation
 * number already overwritten) that the test's timeout fails. Non-roots of a gather sometimes pass receive
 * arguments that MPI ignores there (a count far past the segment's).
 * Argument: rounds (default 3000).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../tools/tcheck.h"

/* ints: 8 KiB, the default slot. 300 and 600 are past a slot for the
 * whole scatter on 7 and 4 ranks but within one for the others' blocks
 * (the root's own stays out of its record). */
enum { MAXN = 2048 };

static int val(int round, int from, int i)
{
    return round * 7919 + from * 104729 + i;
}

int main(int argc, char **argv)
{
    int rank, p;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    tc_rank = rank;
    int rounds = argc > 1 ? atoi(argv[1]) : 3000;
    static const int sizes[] = { 1, 2, 12, 64, 300, 600, MAXN };
    int *a = malloc(sizeof(int) * MAXN * (size_t)p), *b = malloc(sizeof(int) * MAXN * (size_t)p);
    for (int r = 0; r < rounds && tc_errs < 10; r++) {
        /* The root moves with the operation too: where p divides 5, r % p
         * alone would give each operation one root. */
        int root = (r + r / 5) % p, n = sizes[(r / p) % (int)(sizeof sizes / sizeof sizes[0])];
        if (rank == p - 1 && r % 97 == 0)
            nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
        switch (r % 5) {
        case 0:   /* bcast */
            for (int i = 0; i < n; i++)
                a[i] = rank == root ? val(r, root, i) : -1;
            MPI_Bcast(a, n, MPI_INT, root, MPI_COMM_WORLD);
            for (int i = 0; i < n; i++)
                CHECK(a[i] == val(r, root, i), "bcast round %d n %d [%d] = %d", r, n, i, a[i]);
            break;
        case 1:   /* scatter: p blocks of n, in place at the root every other time */
            if (rank == root)
                for (int q = 0; q < p; q++)
                    for (int i = 0; i < n; i++)
                        a[q * n + i] = val(r, q, i);
            for (int i = 0; i < n; i++)
                b[i] = -1;
            if (rank == root && r % 8 == 1) {
                MPI_Scatter(a, n, MPI_INT, MPI_IN_PLACE, n, MPI_INT, root, MPI_COMM_WORLD);
                memcpy(b, a + root * n, sizeof(int) * (size_t)n);
            } else {
                MPI_Scatter(a, n, MPI_INT, b, n, MPI_INT, root, MPI_COMM_WORLD);
            }
            for (int i = 0; i < n; i++)
                CHECK(b[i] == val(r, rank, i), "scatter round %d n %d [%d] = %d", r, n, i, b[i]);
            break;
        case 2:   /* gather, in place at the root every other time */
            for (int i = 0; i < n; i++)
                a[i] = val(r, rank, i);
            for (int i = 0; i < n * p; i++)
                b[i] = -1;
            if (rank == root && r % 8 == 2) {
                memcpy(b + root * n, a, sizeof(int) * (size_t)n);
                MPI_Gather(MPI_IN_PLACE, n, MPI_INT, b, n, MPI_INT, root, MPI_COMM_WORLD);
            } else if (rank != root && r % 8 == 6) {
                MPI_Gather(a, n, MPI_INT, NULL, 1 << 20, MPI_INT, root, MPI_COMM_WORLD);
            } else {
                MPI_Gather(a, n, MPI_INT, b, n, MPI_INT, root, MPI_COMM_WORLD);
            }
            if (rank == root)
                for (int q = 0; q < p; q++)
                    for (int i = 0; i < n; i++)
                        CHECK(b[q * n + i] == val(r, q, i), "gather round %d n %d from %d [%d] = %d",
                              r, n, q, i, b[q * n + i]);
            break;
        case 4:   /* allgather: every rank waits at the slots' barrier, after
                   * scatters through the slots that had none */
            for (int i = 0; i < n; i++)
                a[i] = val(r, rank, i);
            MPI_Allgather(a, n, MPI_INT, b, n, MPI_INT, MPI_COMM_WORLD);
            for (int q = 0; q < p; q++)
                for (int i = 0; i < n; i++)
                    CHECK(b[q * n + i] == val(r, q, i), "allgather round %d n %d from %d [%d] = %d",
                          r, n, q, i, b[q * n + i]);
            break;
        default:  /* reduce (sum), in place at the root every other time */
            for (int i = 0; i < n; i++)
                a[i] = b[i] = val(r, rank, i);
            if (rank == root && r % 8 == 3)
                MPI_Reduce(MPI_IN_PLACE, b, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
            else
                MPI_Reduce(a, b, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
            if (rank == root)
                for (int i = 0; i < n; i++) {
                    long want = 0;
                    for (int q = 0; q < p; q++)
                        want += val(r, q, i);
                    CHECK(b[i] == (int)want, "reduce round %d n %d [%d] = %d, want %d", r, n, i,
                          b[i], (int)want);
                }
            break;
        }
    }
    free(a);
    free(b);
    int bad = tc_report(MPI_COMM_WORLD);
    MPI_Finalize();
    return bad;
}
