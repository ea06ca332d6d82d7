/*
 * Passive target with many origins on one counter:
 *  - exclusive locks around a non-atomic get / increment / put (a lost
 *    update shows up if two origins ever held the lock together);
 *  - shared locks with MPI_Fetch_and_op;
 *  - a spin lock made of MPI_Compare_and_swap inside a lock_all epoch,
 *    guarding the same non-atomic increment (flush after every step);
 *  - lock_all with flush_all, flush_local and the request-free forms.
 * Every rank also hammers its own window, so self-access takes part.
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define ITER 100

static int rank, size;

static void test_exclusive(MPI_Win win, long *mem, int target)
{
    if (rank == target)
        mem[0] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < ITER; i++) {
        long v = -1;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
        MPI_Get(&v, 1, MPI_LONG, target, 0, 1, MPI_LONG, win);
        MPI_Win_flush(target, win);
        v++;
        MPI_Put(&v, 1, MPI_LONG, target, 0, 1, MPI_LONG, win);
        MPI_Win_unlock(target, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == target) {
        MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
        long v = mem[0];
        MPI_Win_unlock(target, win);
        CHECK(v == (long)ITER * size, "exclusive lock counter at %d: %ld want %ld", target, v,
              (long)ITER * size);
    }
}

static void test_fetch_and_op(MPI_Win win, long *mem, int target)
{
    if (rank == target)
        mem[1] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    long one = 1, prev = -1, last = -1;
    int increasing = 1;
    for (int i = 0; i < ITER; i++) {
        MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
        MPI_Fetch_and_op(&one, &prev, MPI_LONG, target, 1, MPI_SUM, win);
        MPI_Win_unlock(target, win);
        increasing &= prev > last;
        last = prev;
    }
    CHECK(increasing, "fetch_and_op: old values went backwards at one origin");
    MPI_Barrier(MPI_COMM_WORLD);
    long total = -1;
    MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
    MPI_Get(&total, 1, MPI_LONG, target, 1, 1, MPI_LONG, win);
    MPI_Win_unlock(target, win);
    CHECK(total == (long)ITER * size, "fetch_and_op counter %ld want %ld", total,
          (long)ITER * size);
}

/* mem[2]: the spin lock word, mem[3]: the counter it guards. */
static void test_cas_spinlock(MPI_Win win, long *mem, int target)
{
    if (rank == target)
        mem[2] = mem[3] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    long me = rank + 1, zero = 0, seen;
    double t0 = MPI_Wtime();
    int ok = 1;
    for (int i = 0; i < ITER / 2 && ok; i++) {
        for (;;) {
            MPI_Compare_and_swap(&me, &zero, &seen, MPI_LONG, target, 2, win);
            MPI_Win_flush(target, win);
            if (seen == 0)
                break;
            if (MPI_Wtime() - t0 > 100) {
                ok = 0;
                break;
            }
        }
        if (!ok)
            break;
        long v = -1;
        MPI_Get(&v, 1, MPI_LONG, target, 3, 1, MPI_LONG, win);
        MPI_Win_flush(target, win);
        v++;
        MPI_Put(&v, 1, MPI_LONG, target, 3, 1, MPI_LONG, win);
        MPI_Win_flush(target, win);
        /* release: an atomic replace, so it cannot overtake the put */
        MPI_Fetch_and_op(&zero, &seen, MPI_LONG, target, 2, MPI_REPLACE, win);
        MPI_Win_flush(target, win);
        CHECK(seen == me, "spin lock held by %ld while I (%ld) owned it", seen, me);
    }
    CHECK(ok, "spin lock: no progress in 100 s");
    MPI_Win_flush_all(win);
    MPI_Win_flush_local_all(win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == target) {
        MPI_Win_sync(win);
        CHECK(mem[3] == (long)(ITER / 2) * size, "spin-locked counter %ld want %ld", mem[3],
              (long)(ITER / 2) * size);
        CHECK(mem[2] == 0, "spin lock left held: %ld", mem[2]);
    }
}

/* Shared locks held by everyone at once on everyone. */
static void test_shared_overlap(MPI_Win win, long *mem)
{
    mem[4] = rank;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int t = 0; t < size; t++)
        MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
    MPI_Barrier(MPI_COMM_WORLD);   /* all hold all shared locks together */
    for (int t = 0; t < size; t++) {
        long v = -1;
        MPI_Get(&v, 1, MPI_LONG, t, 4, 1, MPI_LONG, win);
        MPI_Win_flush_local(t, win);
        CHECK(v == t, "shared get from %d: %ld", t, v);
    }
    for (int t = 0; t < size; t++)
        MPI_Win_unlock(t, win);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int flavor = 0; flavor < 2; flavor++) {
        long *mem, *own = NULL;
        MPI_Win win;
        if (flavor == 0) {
            own = mem = calloc(8, sizeof(long));
            MPI_Win_create(mem, 8 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                           &win);
        } else {
            MPI_Win_allocate(8 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                             &win);
        }
        int last = size - 1;
        test_exclusive(win, mem, 0);
        test_exclusive(win, mem, last);
        test_fetch_and_op(win, mem, last);
        test_cas_spinlock(win, mem, 0);
        test_shared_overlap(win, mem);
        MPI_Win_free(&win);
        free(own);
    }
    return mtest_finish();
}
