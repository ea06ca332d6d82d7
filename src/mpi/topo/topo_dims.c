/*
 * MPI_Dims_create: the most balanced grid of nnodes processes over the
 * free dimensions -- the smallest spread (largest minus smallest factor),
 * then the smallest sum of squares, factors non-increasing; among equal
 * answers the one that comes first with the larger factors first.
 *
 * The search runs over the divisors of n = nnodes / (fixed dims), built
 * from its prime factorisation, within a window of spreads that widens
 * until a grid is found, and prunes every branch that cannot beat the best
 * grid so far. That keeps a call to microseconds where scanning every
 * integer below n (and every split of it) took milliseconds for large n.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "topo.h"

/* n < 2^31 has at most 30 prime factors and 1600 divisors. */
#define DIMS_MAXPF 31
#define DIMS_MAXDIV 1600

/* ---- integer roots ---------------------------------------------------------------- */

/* b^e, or limit + 1 when that is larger than limit. */
static uint64_t pow_sat(uint64_t b, int e, uint64_t limit)
{
    if (b <= 1)
        return b;
    uint64_t r = 1;
    for (int i = 0; i < e; i++) {   /* b >= 2: at most 33 rounds */
        if (r > limit / b)
            return limit + 1;
        r *= b;
    }
    return r;
}

/* The largest f with f^r <= m (m >= 1, r >= 1), by bisection. */
static uint32_t root_floor(uint32_t m, int r)
{
    if (r == 1)
        return m;
    if (r >= 31)
        return 1;   /* 2^31 > m */
    uint64_t lo = 1, hi = (uint64_t)1 << (31 / r + 1);   /* lo^r <= m < hi^r */
    while (hi - lo > 1) {
        uint64_t mid = (lo + hi) / 2;
        if (pow_sat(mid, r, m) <= m)
            lo = mid;
        else
            hi = mid;
    }
    return (uint32_t)lo;
}

/* The smallest f with f^r >= m: what the largest of r factors of m is at least. */
static uint32_t root_ceil(uint32_t m, int r)
{
    uint32_t f = root_floor(m, r);
    return pow_sat(f, r, m) == m ? f : f + 1;
}

/* ---- factorisation -------------------------------------------------------------- */

static uint64_t mulmod(uint64_t a, uint64_t b, uint64_t m)
{
    return a * b % m;   /* m < 2^32: the product fits */
}

static uint64_t powmod(uint64_t a, uint64_t e, uint64_t m)
{
    uint64_t r = 1;
    for (a %= m; e; e >>= 1, a = mulmod(a, a, m))
        if (e & 1)
            r = mulmod(r, a, m);
    return r;
}

/* Miller-Rabin with the bases 2, 7 and 61: exact for every n < 4.7e9. */
static int is_prime(uint32_t n)
{
    if (n < 2)
        return 0;
    static const uint32_t bases[] = { 2, 7, 61 };
    uint32_t d = n - 1;
    int s = 0;
    while (!(d & 1)) {
        d >>= 1;
        s++;
    }
    for (int i = 0; i < 3; i++) {
        if (bases[i] % n == 0)
            continue;
        uint64_t x = powmod(bases[i], d, n);
        if (x == 1 || x == n - 1)
            continue;
        int r = 1;
        for (; r < s && x != n - 1; r++)
            x = mulmod(x, x, n);
        if (x != n - 1)
            return 0;
    }
    return 1;
}

static uint32_t gcd32(uint32_t a, uint32_t b)
{
    while (b) {
        uint32_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* A proper factor of the composite odd n (Pollard's rho, Brent's cycle
 * search). Only ever called for n = p*q with p, q > 1290 (see below), where
 * it takes a few hundred steps. */
static uint32_t rho_split(uint32_t n)
{
    uint32_t sq = root_floor(n, 2);
    if (sq * sq == n)
        return sq;   /* p^2: rho's cycles mod p and mod n can coincide */
    for (uint64_t c = 1;; c++) {
        uint64_t y = 2, x = 2, g = 1;
        for (uint64_t len = 1; g == 1; len <<= 1) {
            x = y;
            for (uint64_t i = 0; i < len && g == 1; i++) {
                y = (mulmod(y, y, n) + c) % n;
                g = gcd32((uint32_t)(x > y ? x - y : y - x), n);
            }
        }
        if (g != n)
            return (uint32_t)g;
    }
}

/* The prime factors of n (ascending, repeated); their count. Trial division
 * up to 1290 (the cube root of 2^31) leaves 1, a prime, or a product of two
 * primes above 1290, which rho splits. */
static int factorize(uint32_t n, uint32_t pf[DIMS_MAXPF])
{
    int k = 0;
    for (uint32_t p = 2; p <= 1290 && p * p <= n; p += p == 2 ? 1 : 2)
        while (n % p == 0) {
            pf[k++] = p;
            n /= p;
        }
    if (n > 1 && !is_prime(n)) {
        uint32_t a = rho_split(n), b = n / a;
        pf[k++] = a < b ? a : b;
        n = a < b ? b : a;
    }
    if (n > 1)
        pf[k++] = n;
    return k;
}

/* ---- the search ------------------------------------------------------------------ */

/* A divisor of n and its number of prime factors (with repetition). */
typedef struct {
    uint32_t d;
    uint32_t om;
} dims_div_t;

typedef struct {
    int k;                        /* free dimensions */
    const dims_div_t *div;        /* divisors of n, descending */
    int ndiv;
    uint32_t primes[DIMS_MAXPF];  /* the distinct primes of n, descending */
    int nprimes;
    uint32_t cur[DIMS_MAXPF + 1], best[DIMS_MAXPF + 1];
    int nbest;                    /* factors > 1 in best (the rest are 1); -1: none yet */
    uint64_t best_spread, best_sq;
} dims_search_t;

/* What the r factors of m (om prime factors) can do at best, each at most
 * cap: the largest the smallest of them can be (*last; 1 when there are
 * fewer primes than factors), and a floor for their sum of squares (the
 * factors above 1 are at most min(om, r), and j factors of product m have
 * squares summing to at least j * m^(2/j)). */
static void dims_bounds(uint32_t m, uint32_t om, int r, uint64_t *last, uint64_t *sq)
{
    if (m == 1) {
        *last = 1;
        *sq = (uint64_t)r;
        return;
    }
    int j = om < (uint32_t)r ? (int)om : r;
    uint64_t q = root_floor(m, j);
    *last = j < r ? 1 : q;
    *sq = (uint64_t)(r - j) + (uint64_t)j * q * q;
}

/* Level i: r = k - i factors left, product m with om prime factors, each
 * <= cap, sum of squares so far sq. Factors above 1 are at most 31 deep;
 * once m is 1 the rest are. Candidates go largest first, the order of the
 * exhaustive search this replaces, and a grid replaces the best only when
 * strictly better, so ties resolve as they did. */
static void dims_try(dims_search_t *s, int i, uint32_t m, uint32_t om, uint32_t cap, uint64_t sq)
{
    int r = s->k - i;
    if (m == 1 || r == 1) {
        if (m > cap)
            return;
        uint64_t last = r == 1 ? m : 1, f0 = i > 0 ? s->cur[0] : m;
        uint64_t spread = f0 - last, tot = sq + (uint64_t)(r - 1) + last * last;
        if (spread < s->best_spread || (spread == s->best_spread && tot < s->best_sq)) {
            s->best_spread = spread;
            s->best_sq = tot;
            memcpy(s->best, s->cur, sizeof *s->cur * (size_t)i);
            s->nbest = i;
            if (m > 1)
                s->best[s->nbest++] = m;
        }
        return;
    }
    /* Every factor must stay within the best spread of the first one, f0:
     * all are at least low = f0 - spread, so f0 itself is at most the k-th
     * root of n plus the spread, and a later f at most m / low^(r-1). The
     * largest of the r is at least the r-th root of m. */
    uint64_t hi = cap < m ? cap : m, lo = root_ceil(m, r);
    if (i == 0) {
        uint64_t top = (uint64_t)root_floor(m, r) + s->best_spread;
        hi = top < hi ? top : hi;
    } else if (s->cur[0] > s->best_spread + 1) {
        uint64_t low = s->cur[0] - s->best_spread, p = pow_sat(low, r - 1, m);
        if (p > m)
            return;
        hi = m / p < hi ? m / p : hi;
        lo = low > lo ? low : lo;
    }
    /* The first divisor <= hi (div is descending). */
    int a = 0, b = s->ndiv;
    while (a < b) {
        int mid = (a + b) / 2;
        if (s->div[mid].d > hi)
            a = mid + 1;
        else
            b = mid;
    }
    for (int j = a; j < s->ndiv && s->div[j].d >= lo; j++) {
        uint32_t f = s->div[j].d;
        if (m % f)
            continue;
        uint64_t f0 = i > 0 ? s->cur[0] : f, fsq = sq + (uint64_t)f * f, last, rsq;
        uint32_t rest = m / f, rom = om - s->div[j].om;
        /* The factors after f are at most f: so must rest's primes be. */
        int q = 0;
        while (q < s->nprimes && rest % s->primes[q])
            q++;
        if (q < s->nprimes && s->primes[q] > f)
            continue;
        dims_bounds(rest, rom, r - 1, &last, &rsq);
        /* Prune what cannot beat the best: a spread above it, or the same
         * spread at best and no smaller sum of squares. */
        if (f0 - last > s->best_spread ||
            (f0 - last == s->best_spread && fsq + rsq >= s->best_sq))
            continue;
        s->cur[i] = f;
        dims_try(s, i + 1, rest, rom, f, fsq);
    }
}

/* A good first grid: each prime, largest first, joins the smallest factor.
 * Its spread and sum of squares bound the last round of the search. */
static void dims_greedy(const uint32_t *pf, int npf, int k, uint64_t *spread, uint64_t *sq)
{
    uint64_t g[DIMS_MAXPF + 1];
    int n = k < npf ? k : npf;   /* factors that can be above 1 */
    for (int j = 0; j < n; j++)
        g[j] = 1;
    for (int p = npf - 1; p >= 0 && n > 0; p--) {
        int lo = 0;
        for (int j = 1; j < n; j++)
            if (g[j] < g[lo])
                lo = j;
        g[lo] *= pf[p];
    }
    uint64_t mx = 1, mn = n < k ? 1 : UINT64_MAX;
    *sq = (uint64_t)(k - n);
    for (int j = 0; j < n; j++) {
        mx = g[j] > mx ? g[j] : mx;
        mn = g[j] < mn ? g[j] : mn;
        *sq += g[j] * g[j];
    }
    *spread = mx - (n > 0 ? mn : 1);
}

/* The divisors of n from its prime factors (ascending, repeated), sorted
 * descending by a radix sort (a comparison sort of 1600 of them costs more
 * than the search). Their count. */
static int dims_divisors(const uint32_t *pf, int npf, dims_div_t *div, dims_div_t *tmp)
{
    int ndiv = 1;
    div[0] = (dims_div_t){ 1, 0 };
    for (int i = 0; i < npf;) {
        int e = 1, base = ndiv;
        while (i + e < npf && pf[i + e] == pf[i])
            e++;
        uint32_t pk = 1;
        for (int x = 1; x <= e; x++) {
            pk *= pf[i];
            for (int d = 0; d < base; d++)
                div[ndiv++] = (dims_div_t){ div[d].d * pk, div[d].om + (uint32_t)x };
        }
        i += e;
    }
    for (int shift = 0; shift < 32; shift += 8) {   /* four passes: the result is in div */
        int at[257] = { 0 };
        for (int d = 0; d < ndiv; d++)
            at[256 - ((div[d].d >> shift) & 255)]++;
        for (int x = 1; x <= 256; x++)
            at[x] += at[x - 1];
        for (int d = 0; d < ndiv; d++)
            tmp[at[255 - ((div[d].d >> shift) & 255)]++] = div[d];
        dims_div_t *t = div;
        div = tmp;
        tmp = t;
    }
    return ndiv;
}

/* The k factors of n (k >= 1) into out[], non-increasing; ws holds
 * 2 * DIMS_MAXDIV divisors. */
static void dims_balance(uint32_t n, int k, int *out, dims_div_t *ws)
{
    uint32_t pf[DIMS_MAXPF];
    int npf = factorize(n, pf);
    dims_search_t s = { .k = k, .div = ws };
    s.ndiv = dims_divisors(pf, npf, ws, ws + DIMS_MAXDIV);
    for (int i = npf - 1; i >= 0; i--)
        if (s.nprimes == 0 || s.primes[s.nprimes - 1] != pf[i])
            s.primes[s.nprimes++] = pf[i];
    uint64_t gspread, gsq;
    dims_greedy(pf, npf, k, &gspread, &gsq);
    /* Searches allowing spreads up to 0, 1, 3, 7, ... until one finds a
     * grid: the best grid is usually far more even than the greedy one,
     * and a narrow window prunes most of the divisors. The greedy grid only
     * bounds the last round (its sum of squares + 1, so that a tie goes to
     * the search's order). */
    for (uint64_t b = 0;; b = 2 * b + 1) {
        s.nbest = -1;
        s.best_spread = b < gspread ? b : gspread;
        s.best_sq = b < gspread ? UINT64_MAX : gsq + 1;
        dims_try(&s, 0, n, (uint32_t)npf, n, 0);
        if (s.nbest >= 0)
            break;
    }
    for (int i = 0; i < k; i++)
        out[i] = i < s.nbest ? (int)s.best[i] : 1;
}

LOCUS_PMPI_WEAK(Dims_create)
int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
    LOCUS_ENTRY_CS();
    const char *fn = "MPI_Dims_create";
    LOCUS_CHECK_INIT(fn);
    if (ndims < 0)
        return locus_mpi_err(NULL, MPI_ERR_DIMS, fn);
    if (nnodes < 1 || (ndims > 0 && !dims))
        return locus_mpi_err(NULL, MPI_ERR_ARG, fn);
    long long fixed = 1;
    int free_dims = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return locus_mpi_err(NULL, MPI_ERR_DIMS, fn);
        if (dims[i] == 0)
            free_dims++;
        else if ((fixed *= dims[i]) > nnodes)   /* stops before it can overflow */
            return locus_mpi_err(NULL, MPI_ERR_DIMS, fn);
    }
    if (nnodes % fixed != 0 || (free_dims == 0 && fixed != nnodes))
        return locus_mpi_err(NULL, MPI_ERR_DIMS, fn);
    if (free_dims == 0)
        return MPI_SUCCESS;
    int *got = malloc(sizeof *got * (size_t)free_dims);
    dims_div_t *ws = malloc(sizeof *ws * 2 * DIMS_MAXDIV);
    if (!got || !ws) {
        free(got);
        free(ws);
        return locus_mpi_err(NULL, MPI_ERR_NO_MEM, fn);
    }
    dims_balance((uint32_t)(nnodes / fixed), free_dims, got, ws);
    for (int i = 0, k = 0; i < ndims; i++)
        if (dims[i] == 0)
            dims[i] = got[k++];
    free(got);
    free(ws);
    return MPI_SUCCESS;
}
