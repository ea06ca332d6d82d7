/*
 * Passive target progress without the target: rank 0 computes and makes no
 * MPI call at all while every other rank locks its window (exclusive and
 * shared), accumulates, fetches and reads it. Rank 0 watches its own
 * memory (plain loads) until all the increments have landed (and for at
 * least 2 s), bounded at 60 s, and only then calls MPI again; the origins
 * check they were done before it came back. Meant to run with more ranks than
 * cores. Argument: "create" (user memory: CMA) or "allocate" (Locus
 * memory: shared). With "create" the test is skipped (77) when the kernel
 * does not allow CMA between the ranks (ptrace restrictions).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "mtest.h"

#define K 40

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* Whether this rank can read rank 0's memory with process_vm_readv. */
static int cma_works(int rank)
{
    struct { uint64_t addr, cookie; int pid; } me = { (uintptr_t)&me.cookie, 0x5eed1234abcdULL,
                                                     getpid() }, r0 = me;
    MPI_Bcast(&r0, sizeof r0, MPI_BYTE, 0, MPI_COMM_WORLD);
    int ok = 1;
    if (rank != 0) {
        uint64_t v = 0;
        struct iovec l = { &v, sizeof v }, r = { (void *)(uintptr_t)r0.addr, sizeof v };
        ok = process_vm_readv(r0.pid, &l, 1, &r, 1, 0) == (ssize_t)sizeof v && v == r0.cookie;
    }
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int create = argc > 1 && strcmp(argv[1], "create") == 0;
    if (create && !cma_works(rank)) {
        if (rank == 0)
            printf("SKIPPED: process_vm_readv between ranks is not permitted here\n");
        MPI_Finalize();
        return 77;
    }
    long *mem, *own = NULL;
    MPI_Win win;
    if (create) {
        own = mem = calloc(4 + size, sizeof(long));
        MPI_Win_create(mem, (4 + size) * sizeof(long), sizeof(long), MPI_INFO_NULL,
                       MPI_COMM_WORLD, &win);
    } else {
        MPI_Win_allocate((4 + size) * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                         &mem, &win);
        memset(mem, 0, (4 + size) * sizeof(long));
    }
    long expect = 2L * K * (size - 1);
    double t_mark = 0;   /* rank 0: when it came back to MPI; others: when done */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        /* No MPI call in here: only computation and loads of my memory,
         * for at least 2 s and until everything landed (at most 60 s). */
        double t0 = now(), x = 1.0;
        long seen = 0;
        while (((seen = __atomic_load_n(&mem[0], __ATOMIC_ACQUIRE)) < expect || now() - t0 < 2) &&
               now() - t0 < 60)
            for (int i = 0; i < 100000; i++)
                x = x * 1.0000001 + 1e-9;
        double busy = now() - t0;
        t_mark = now();
        CHECK(seen == expect, "origins completed %ld of %ld increments in %.1f s without "
              "the target's help", seen, expect, busy);
        if (x < 0)
            printf("%g\n", x);   /* keeps the loop from being optimized out */
    } else {
        long one = 1, got = -1;
        for (int i = 0; i < K; i++) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
            MPI_Accumulate(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win);
            long mark = rank * 1000 + i;
            MPI_Put(&mark, 1, MPI_LONG, 0, 4 + rank, 1, MPI_LONG, win);
            MPI_Win_flush(0, win);
            MPI_Get(&got, 1, MPI_LONG, 0, 4 + rank, 1, MPI_LONG, win);
            MPI_Win_unlock(0, win);
            CHECK(got == mark, "read back %ld want %ld", got, mark);
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
            MPI_Fetch_and_op(&one, &got, MPI_LONG, 0, 0, MPI_SUM, win);
            MPI_Win_unlock(0, win);
            CHECK(got >= 0 && got < expect, "fetched %ld", got);
        }
        t_mark = now();
    }
    /* one node, one monotonic clock: the origins finished while rank 0 was
     * still away from MPI */
    double back = t_mark;
    MPI_Bcast(&back, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank != 0)
        CHECK(t_mark < back, "origin finished %.3f s after the target called MPI again",
              t_mark - back);
    MPI_Win_free(&win);
    free(own);
    return mtest_finish();
}
