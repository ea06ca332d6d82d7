/*
 * MPI_Dims_create: the most balanced grid (smallest largest-minus-smallest
 * factor, then smallest sum of squares, factors non-increasing, ties to the
 * grid with the larger factors first), and fast for any nnodes.
 *  - against an exhaustive search for every nnodes up to 1200 and 1..5
 *    free dimensions, and with some dimensions fixed;
 *  - against a search over divisors for large nnodes (2 and 3 dimensions);
 *  - 75,000 calls with large, varied nnodes in well under 10 s (each used
 *    to take up to milliseconds: a scan of every integer below nnodes);
 *  - the errors: nnodes not a multiple of the fixed dimensions (also when
 *    their product overflows an int), negative entries, ndims < 0.
 */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "mtest.h"

#define MAXD 8

/* The exhaustive reference: every non-increasing split of n into k factors,
 * larger first; the first strictly better one wins. */
typedef struct {
    int k, cur[MAXD], best[MAXD];
    long long spread, sq;
} ref_t;

static void ref_try(ref_t *s, int i, int n, int cap)
{
    if (i == s->k - 1) {
        if (n > cap)
            return;
        s->cur[i] = n;
        long long spread = s->cur[0] - n, sq = 0;
        for (int j = 0; j < s->k; j++)
            sq += (long long)s->cur[j] * s->cur[j];
        if (spread < s->spread || (spread == s->spread && sq < s->sq)) {
            s->spread = spread;
            s->sq = sq;
            memcpy(s->best, s->cur, sizeof s->cur);
        }
        return;
    }
    for (int f = n < cap ? n : cap; f >= 1; f--)
        if (n % f == 0) {
            s->cur[i] = f;
            ref_try(s, i + 1, n / f, f);
        }
}

static void ref_dims(int n, int k, int *out)
{
    ref_t s = { .k = k, .spread = LLONG_MAX, .sq = LLONG_MAX };
    ref_try(&s, 0, n, n);
    memcpy(out, s.best, sizeof *out * (size_t)k);
}

static int err_class(int rc)
{
    int c = MPI_SUCCESS;
    MPI_Error_class(rc, &c);
    return c;
}

static void small_cases(void)
{
    int got[MAXD], want[MAXD], bad = 0;
    for (int k = 1; k <= 5; k++)
        for (int n = 1; n <= 1200 && bad < 5; n++) {
            memset(got, 0, sizeof got);
            int rc = MPI_Dims_create(n, k, got);
            ref_dims(n, k, want);
            if (rc != MPI_SUCCESS || memcmp(got, want, sizeof *got * (size_t)k)) {
                bad++;
                CHECK(0, "Dims_create(%d, %d): rc %d, got %d %d %d %d %d, want %d %d %d %d %d",
                      n, k, rc, got[0], got[1], got[2], got[3], got[4], want[0], want[1],
                      want[2], want[3], want[4]);
            }
        }
    /* Fixed dimensions stay; the free ones get the split of the rest. */
    for (int n = 1; n <= 600; n++) {
        int fixed[4][4] = { { 0, 2, 0, 0 }, { 3, 0, 0, 1 }, { 0, 0, 0, 4 }, { 2, 0, 2, 0 } };
        for (int c = 0; c < 4; c++) {
            int d[4], prod = 1, nfree = 0;
            memcpy(d, fixed[c], sizeof d);
            for (int j = 0; j < 4; j++)
                if (d[j])
                    prod *= d[j];
                else
                    nfree++;
            int rc = MPI_Dims_create(n, 4, d);
            if (n % prod) {
                CHECK(err_class(rc) == MPI_ERR_DIMS, "n %d case %d: rc %d", n, c, rc);
                continue;
            }
            ref_dims(n / prod, nfree, want);
            for (int j = 0, f = 0; j < 4; j++) {
                int w = fixed[c][j] ? fixed[c][j] : want[f++];
                CHECK(rc == MPI_SUCCESS && d[j] == w, "n %d case %d dim %d: %d want %d", n, c,
                      j, d[j], w);
            }
        }
    }
    int d2[2] = { 0, 0 }, d3[3] = { 0, 3, 0 };
    MPI_Dims_create(24, 2, d2);
    CHECK(d2[0] == 6 && d2[1] == 4, "24 -> %d x %d", d2[0], d2[1]);
    MPI_Dims_create(6, 3, d3);
    CHECK(d3[0] == 2 && d3[1] == 3 && d3[2] == 1, "6 with (0,3,0) -> %d %d %d", d3[0], d3[1],
          d3[2]);
}

/* A small deterministic generator (xorshift), so failures repeat. */
static uint32_t rnd(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* Divisors of n, descending, by trial division: the large ones n/f as f
 * goes up from 1 to the square root, then the small ones f going down. */
static int divisors(int n, int *d)
{
    int small[1600], ns = 0, m = 0;
    for (int f = 1; (long long)f * f <= n; f++)
        if (n % f == 0) {
            small[ns++] = f;
            if (f != n / f)
                d[m++] = n / f;
        }
    while (ns > 0)
        d[m++] = small[--ns];
    return m;
}

static void large_cases(void)
{
    static int div[3200];
    uint32_t seed = 12345;
    for (int t = 0; t < 60; t++) {
        int n = (int)(rnd(&seed) % (INT_MAX - 1000000u)) + 1000000;
        if (t == 0)
            n = INT_MAX;                 /* a prime */
        if (t == 1)
            n = 1 << 30;
        if (t == 2)
            n = 2095133040;              /* 1600 divisors */
        if (t == 3)
            n = 46337 * 46337;           /* the square of a prime */
        int nd = divisors(n, div);
        /* Two dimensions: the largest divisor up to the square root. */
        int two[2] = { 0, 0 }, want2 = 1;
        for (int i = 0; i < nd; i++)
            if ((long long)div[i] * div[i] <= n) {
                want2 = div[i];
                break;
            }
        MPI_Dims_create(n, 2, two);
        CHECK(two[1] == want2 && two[0] == n / want2, "%d in 2: %d x %d, want %d x %d", n,
              two[0], two[1], n / want2, want2);
        /* Three: every a >= b >= c over the divisors, the same rule. */
        long long bs = LLONG_MAX, bq = LLONG_MAX;
        int w[3] = { 0, 0, 0 };
        for (int i = 0; i < nd; i++)
            for (int j = i; j < nd; j++) {
                long long a = div[i], b = div[j];
                if (a * b > n || n % (a * b) || n / (a * b) > b)
                    continue;
                long long c = n / (a * b), s = a - c, q = a * a + b * b + c * c;
                if (s < bs || (s == bs && q < bq)) {
                    bs = s;
                    bq = q;
                    w[0] = (int)a, w[1] = (int)b, w[2] = (int)c;
                }
            }
        int three[3] = { 0, 0, 0 };
        MPI_Dims_create(n, 3, three);
        CHECK(!memcmp(three, w, sizeof w), "%d in 3: %d %d %d, want %d %d %d", n, three[0],
              three[1], three[2], w[0], w[1], w[2]);
    }
}

/* 75,000 calls with large nnodes: each must be quick. Gives up (and fails)
 * after 10 s rather than running for minutes; 1 when all went through. */
static int speed(void)
{
    uint32_t seed = 987654321;
    double t0 = MPI_Wtime(), el = 0;
    int calls = 0, bad = 0;
    for (; calls < 75000 && (el = MPI_Wtime() - t0) < 10.0; calls++) {
        int n = (int)(rnd(&seed) % (INT_MAX - 100000u)) + 100000, k = 2 + calls % 4;
        int d[5] = { 0, 0, 0, 0, 0 };
        if (MPI_Dims_create(n, k, d) != MPI_SUCCESS) {
            bad++;
            continue;
        }
        long long p = 1;
        for (int j = 0; j < k; j++) {
            p *= d[j];
            if (j > 0 && d[j] > d[j - 1])
                bad++;
        }
        if (p != n)
            bad++;
    }
    CHECK(calls == 75000, "only %d calls in %.1f s", calls, el);
    CHECK(bad == 0, "%d wrong grids", bad);
    return calls == 75000;
}

static void errors(void)
{
    int d[3] = { 65536, 65536, 0 };
    CHECK(err_class(MPI_Dims_create(12, 3, d)) == MPI_ERR_DIMS, "fixed product overflows");
    int e[3] = { 65536, 65536, 2 };
    CHECK(err_class(MPI_Dims_create(8, 3, e)) == MPI_ERR_DIMS, "fixed, overflowing, no free");
    int f[2] = { 5, 0 };
    CHECK(err_class(MPI_Dims_create(12, 2, f)) == MPI_ERR_DIMS, "12 over 5");
    int g[2] = { -1, 0 };
    CHECK(err_class(MPI_Dims_create(12, 2, g)) == MPI_ERR_DIMS, "negative dim");
    CHECK(err_class(MPI_Dims_create(12, -1, g)) == MPI_ERR_DIMS, "ndims < 0");
    int h[2] = { 0, 0 };
    CHECK(err_class(MPI_Dims_create(0, 2, h)) != MPI_SUCCESS, "nnodes 0");
    int one[40];
    memset(one, 0, sizeof one);
    CHECK(MPI_Dims_create(1 << 20, 40, one) == MPI_SUCCESS && one[0] == 2 && one[19] == 2 &&
              one[20] == 1 && one[39] == 1,
          "2^20 in 40 dims: %d %d %d %d", one[0], one[19], one[20], one[39]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    small_cases();
    /* The divisor checks take seconds per call where the speed check
     * fails: skipped then, so a slow MPI_Dims_create fails rather than hangs. */
    if (speed())
        large_cases();
    errors();
    return mtest_finish();
}
