/*
 * Accumulate operations: every predefined operation on the types MPI
 * allows (integers, floating point, logical/bitwise, MINLOC/MAXLOC pairs
 * including a padded one, MPI_REPLACE, MPI_NO_OP), from every rank at once
 * inside lock_all epochs; MPI_Get_accumulate, MPI_Fetch_and_op and
 * MPI_Compare_and_swap with their fetched values checked for atomicity;
 * a target datatype whose pieces run backwards in memory.
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define N 12

static int rank, size;
static MPI_Win win;
static char *mem;   /* 4 KiB window per rank */

/* Rank 0 sets its window to `init` (len bytes); everyone then accumulates
 * count elements of dt with op (contribution by rank); returns after the
 * epoch, rank 0 holding the result in mem. */
static void acc_round(const void *init, size_t len, const void *mine, int count,
                      MPI_Datatype dt, MPI_Op op)
{
    if (rank == 0)
        memcpy(mem, init, len);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    MPI_Accumulate(mine, count, dt, 0, 0, count, dt, op, win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_int_ops(void)
{
    MPI_Op ops[] = { MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_LAND, MPI_LOR, MPI_LXOR,
                     MPI_BAND, MPI_BOR, MPI_BXOR, MPI_NO_OP };
    const char *names[] = { "SUM", "PROD", "MAX", "MIN", "LAND", "LOR", "LXOR",
                            "BAND", "BOR", "BXOR", "NO_OP" };
    int init[N], mine[N];
    for (int k = 0; k < (int)(sizeof ops / sizeof ops[0]); k++) {
        for (int i = 0; i < N; i++) {
            init[i] = (i % 4) + 1;
            mine[i] = ((rank + 1) * (i + 2)) % 7 - (i == 3 ? 2 : 0);
        }
        acc_round(init, sizeof init, mine, N, MPI_INT, ops[k]);
        if (rank != 0)
            continue;
        const int *got = (const int *)mem;
        for (int i = 0; i < N; i++) {
            unsigned want = (unsigned)init[i];
            for (int r = 0; r < size; r++) {
                int v = ((r + 1) * (i + 2)) % 7 - (i == 3 ? 2 : 0), w = (int)want;
                switch (k) {
                case 0: want += (unsigned)v; break;
                case 1: want *= (unsigned)v; break;
                case 2: want = (unsigned)(w > v ? w : v); break;
                case 3: want = (unsigned)(w < v ? w : v); break;
                case 4: want = w && v; break;
                case 5: want = w || v; break;
                case 6: want = !w != !v; break;
                case 7: want &= (unsigned)v; break;
                case 8: want |= (unsigned)v; break;
                case 9: want ^= (unsigned)v; break;
                default: break;
                }
            }
            CHECK(got[i] == (int)want, "MPI_%s on int: [%d]=%d want %d", names[k], i, got[i],
                  (int)want);
        }
    }
}

static void test_double_and_byte(void)
{
    double init[N], mine[N];
    MPI_Op ops[] = { MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN };
    for (int k = 0; k < 4; k++) {
        for (int i = 0; i < N; i++) {
            init[i] = 1.5;
            mine[i] = (rank % 3) - 1 + 0.5 * i;
        }
        acc_round(init, sizeof init, mine, N, MPI_DOUBLE, ops[k]);
        if (rank != 0)
            continue;
        for (int i = 0; i < N; i++) {
            double want = 1.5;
            for (int r = 0; r < size; r++) {
                double v = (r % 3) - 1 + 0.5 * i;
                want = k == 0 ? want + v : k == 1 ? want * v : k == 2 ? (want > v ? want : v)
                                                                     : (want < v ? want : v);
            }
            CHECK(((double *)mem)[i] == want, "double op %d: [%d]=%g want %g", k, i,
                  ((double *)mem)[i], want);
        }
    }
    /* MPI_BYTE: bitwise ops, and MPI_SUM as unsigned bytes */
    unsigned char binit[N], bmine[N];
    for (int i = 0; i < N; i++) {
        binit[i] = 0xf0;
        bmine[i] = (unsigned char)(1u << ((rank + i) % 8));
    }
    acc_round(binit, N, bmine, N, MPI_BYTE, MPI_BOR);
    if (rank == 0)
        for (int i = 0; i < N; i++) {
            unsigned want = 0xf0;
            for (int r = 0; r < size; r++)
                want |= 1u << ((r + i) % 8);
            CHECK(((unsigned char *)mem)[i] == want, "byte BOR [%d]=%#x want %#x", i,
                  ((unsigned char *)mem)[i], want);
        }
    acc_round(binit, N, bmine, N, MPI_BYTE, MPI_SUM);
    if (rank == 0)
        for (int i = 0; i < N; i++) {
            unsigned want = 0xf0;
            for (int r = 0; r < size; r++)
                want += 1u << ((r + i) % 8);
            CHECK(((unsigned char *)mem)[i] == (unsigned char)want, "byte SUM [%d]", i);
        }
}

static void test_pairs_and_replace(void)
{
    /* MINLOC on MPI_2INT: value (r*5) % size + 1, index r */
    int p2[2 * N], p2init[2 * N];
    for (int i = 0; i < N; i++) {
        p2init[2 * i] = 1000;
        p2init[2 * i + 1] = -1;
        p2[2 * i] = (rank * 5 + i) % size + 1;
        p2[2 * i + 1] = rank;
    }
    acc_round(p2init, sizeof p2init, p2, N, MPI_2INT, MPI_MINLOC);
    if (rank == 0)
        for (int i = 0; i < N; i++) {
            int bv = 1000, bi = -1;
            for (int r = 0; r < size; r++) {
                int v = (r * 5 + i) % size + 1;
                if (v < bv || (v == bv && r < bi)) {
                    bv = v;
                    bi = r;
                }
            }
            int *g = (int *)mem + 2 * i;
            CHECK(g[0] == bv && g[1] == bi, "2INT MINLOC [%d]=(%d,%d) want (%d,%d)", i, g[0],
                  g[1], bv, bi);
        }
    /* MAXLOC on MPI_DOUBLE_INT: a padded pair */
    struct di { double v; int i; } dinit[N], dm[N];
    memset(dinit, 0, sizeof dinit);
    memset(dm, 0, sizeof dm);
    for (int i = 0; i < N; i++) {
        dinit[i].v = -1.0;
        dinit[i].i = -1;
        dm[i].v = (double)((rank + i) % 3);
        dm[i].i = rank;
    }
    acc_round(dinit, sizeof dinit, dm, N, MPI_DOUBLE_INT, MPI_MAXLOC);
    if (rank == 0)
        for (int i = 0; i < N; i++) {
            double bv = -1.0;
            int bi = -1;
            for (int r = 0; r < size; r++) {
                double v = (double)((r + i) % 3);
                if (v > bv || (v == bv && r < bi)) {
                    bv = v;
                    bi = r;
                }
            }
            struct di g;
            memcpy(&g, mem + i * sizeof g, sizeof g);
            CHECK(g.v == bv && g.i == bi, "DOUBLE_INT MAXLOC [%d]=(%g,%d) want (%g,%d)", i, g.v,
                  g.i, bv, bi);
        }
    /* REPLACE from everyone: the whole array comes from one rank (each
     * accumulate is atomic as a whole here) */
    long rinit[N], rm[N];
    for (int i = 0; i < N; i++) {
        rinit[i] = -5;
        rm[i] = 100L * rank + i;
    }
    acc_round(rinit, sizeof rinit, rm, N, MPI_LONG, MPI_REPLACE);
    if (rank == 0) {
        long *g = (long *)mem;
        long from = g[0] / 100;
        CHECK(from >= 0 && from < size, "REPLACE: [0]=%ld", g[0]);
        for (int i = 0; i < N; i++)
            CHECK(g[i] == 100 * from + i, "REPLACE mixed ranks: [%d]=%ld", i, g[i]);
    }
}

static void test_fetching(void)
{
    long long *all = malloc((size_t)size * 3 * sizeof *all);
    long long zero = 0, one = 1, got1 = -1, got2 = -1;
    int gacc[4] = { -1, -1, -1, -1 }, four[4] = { 1, 1, 1, 1 };
    if (rank == 0)
        memset(mem, 0, 256);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    /* a counter at byte 0: every rank fetches a distinct old value */
    MPI_Fetch_and_op(&one, &got1, MPI_LONG_LONG, 0, 0, MPI_SUM, win);
    /* four ints at byte 64 (displacement unit 1) */
    MPI_Get_accumulate(four, 4, MPI_INT, gacc, 4, MPI_INT, 0, 64, 4, MPI_INT, MPI_SUM, win);
    MPI_Win_flush(0, win);
    /* compare-and-swap at byte 128: exactly one rank swaps 0 -> rank+1 */
    long long mark = rank + 1;
    MPI_Compare_and_swap(&mark, &zero, &got2, MPI_LONG_LONG, 0, 128, win);
    MPI_Win_unlock_all(win);
    long long mine[3] = { got1, gacc[0], got2 };
    MPI_Allgather(mine, 3, MPI_LONG_LONG, all, 3, MPI_LONG_LONG, MPI_COMM_WORLD);
    CHECK(gacc[0] == gacc[1] && gacc[1] == gacc[2] && gacc[2] == gacc[3],
          "get_accumulate fetched a torn value: %d %d %d %d", gacc[0], gacc[1], gacc[2],
          gacc[3]);
    int swapped = 0;
    for (int v = 0; v < size; v++) {
        int seen_f = 0, seen_g = 0;
        for (int r = 0; r < size; r++) {
            seen_f += all[3 * r] == v;
            seen_g += all[3 * r + 1] == v;
        }
        CHECK(seen_f == 1, "fetch_and_op: old value %d fetched %d times", v, seen_f);
        CHECK(seen_g == 1, "get_accumulate: old value %d fetched %d times", v, seen_g);
    }
    long long winner = -1;
    for (int r = 0; r < size; r++) {
        swapped += all[3 * r + 2] == 0;
        if (all[3 * r + 2] != 0)
            winner = all[3 * r + 2];
    }
    CHECK(swapped == 1, "compare_and_swap: %d ranks saw 0", swapped);
    if (size > 1)
        CHECK(winner >= 1 && winner <= size, "compare_and_swap: others saw %lld", winner);
    if (rank == 0) {
        long long c;
        memcpy(&c, mem, sizeof c);
        CHECK(c == size, "counter %lld want %d", c, size);
        memcpy(&c, mem + 128, sizeof c);
        CHECK(c >= 1 && c <= size, "swapped value %lld", c);
    }
    /* MPI_NO_OP fetches without changing */
    long long nothing = 99, seen = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Fetch_and_op(&nothing, &seen, MPI_LONG_LONG, 0, 0, MPI_NO_OP, win);
    MPI_Win_unlock(0, win);
    CHECK(seen == size, "NO_OP fetched %lld want %d", seen, size);
    MPI_Barrier(MPI_COMM_WORLD);   /* before anyone reuses the memory */
    free(all);
}

/* A target type whose pieces go backwards in memory: packed order is kept. */
static void test_backwards_target(void)
{
    int blen[3] = { 1, 2, 1 }, disp[3] = { 9, 4, 0 };
    MPI_Datatype back;
    MPI_Type_indexed(3, blen, disp, MPI_INT, &back);
    MPI_Type_commit(&back);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int src[4] = { rank * 10 + 1, rank * 10 + 2, rank * 10 + 3, rank * 10 + 4 }, got[4];
    memset(mem, 0, 64);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    MPI_Put(src, 4, MPI_INT, right, 0, 1, back, win);
    MPI_Win_unlock(right, win);
    MPI_Barrier(MPI_COMM_WORLD);
    int *m = (int *)mem;
    CHECK(m[9] == left * 10 + 1 && m[4] == left * 10 + 2 && m[5] == left * 10 + 3 &&
              m[0] == left * 10 + 4 && m[1] == 0 && m[8] == 0,
          "backwards put: %d %d %d %d", m[9], m[4], m[5], m[0]);
    MPI_Win_lock(MPI_LOCK_SHARED, left, 0, win);
    MPI_Get(got, 4, MPI_INT, left, 0, 1, back, win);
    MPI_Win_unlock(left, win);
    int ll = (left + size - 1) % size;
    for (int i = 0; i < 4; i++)
        CHECK(got[i] == ll * 10 + i + 1, "backwards get [%d]=%d", i, got[i]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Type_free(&back);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* user memory (CMA or messages) and Locus memory (shared) alike */
    for (int flavor = 0; flavor < 2; flavor++) {
        char *own = NULL;
        if (flavor == 0) {
            MPI_Alloc_mem(4096, MPI_INFO_NULL, &own);
            mem = own;
            MPI_Win_create(mem, 4096, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        } else {
            MPI_Win_allocate(4096, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
        }
        test_int_ops();
        test_double_and_byte();
        test_pairs_and_replace();
        test_fetching();
        test_backwards_target();
        MPI_Win_free(&win);
        if (own)
            MPI_Free_mem(own);
    }
    return mtest_finish();
}
