/*
 * test_dtype_array.c — subarray and distributed-array types against index
 * math done here from MPI's definitions: which global elements a type
 * selects, in which order (the local array's C or Fortran order), and its
 * bounds. Every process of every grid is checked, for block, cyclic(k)
 * and undistributed dimensions, default and explicit distribution
 * arguments, sizes that do not divide evenly, and an old type that is
 * itself derived.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "locus_dtype.h"

static int failures;
#define CHECK(c)                                                               \
    do {                                                                       \
        if (!(c)) {                                                            \
            failures++;                                                        \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
        }                                                                      \
    } while (0)

enum { MAXD = 4 };

/* The old types tried: int, and a derived {int, gap, int} resized to 16
 * bytes (2 ints of data per element, so element e of a global array holds
 * 2e and 2e+1 at bytes 0 and 8). */
typedef struct {
    locus_dtype_t *t;
    int ints;        /* ints of data per element */
    size_t ext;      /* bytes per element */
    size_t second;   /* byte offset of the second int */
} old_t;

static old_t old_int(void)
{
    return (old_t){locus_dtype_basic(LOCUS_EL_INT), 1, sizeof(int), 0};
}

static old_t old_gappy(void)
{
    locus_dtype_t *v, *r;
    CHECK(locus_dtype_hvector(2, 1, 8, locus_dtype_basic(LOCUS_EL_INT), &v) == 0);
    CHECK(locus_dtype_resized(v, 0, 16, &r) == 0);
    locus_dtype_release(v);
    return (old_t){r, 2, 16, 8};
}

/* A global array of n elements of the old type, element e holding the
 * values e*ints .. e*ints+ints-1. */
static char *global_array(const old_t *o, size_t n)
{
    char *g = calloc(n, o->ext);
    for (size_t e = 0; e < n; e++) {
        int v0 = (int)(e * (size_t)o->ints);
        memcpy(g + e * o->ext, &v0, sizeof v0);
        if (o->ints == 2) {
            int v1 = v0 + 1;
            memcpy(g + e * o->ext + o->second, &v1, sizeof v1);
        }
    }
    return g;
}

/* Linear index of multi-index idx in an array dims[] in the given order. */
static size_t linear(int nd, const size_t *idx, const size_t *dims, int fortran)
{
    size_t l = 0;
    for (int k = 0; k < nd; k++) {
        int d = fortran ? nd - 1 - k : k;   /* slowest first */
        l = l * dims[d] + idx[d];
    }
    return l;
}

/* Advances idx through dims[] in the given order; 0 at the end. */
static int next_index(int nd, size_t *idx, const size_t *dims, int fortran)
{
    for (int k = 0; k < nd; k++) {
        int d = fortran ? k : nd - 1 - k;   /* fastest first */
        if (++idx[d] < dims[d])
            return 1;
        idx[d] = 0;
    }
    return 0;
}

/* Checks that dt selects exactly the global elements want[0..n) (linear
 * indices, in stream order) of an array of `total` elements, with lb 0 and
 * the extent of the whole array. */
static void check_selection(const char *what, locus_dtype_t *dt, const old_t *o, size_t total,
                            const size_t *want, size_t n)
{
    ptrdiff_t lb, ext;
    locus_dtype_extent(dt, &lb, &ext);
    int ok = lb == 0 && ext == (ptrdiff_t)(total * o->ext) &&
             locus_dtype_size(dt) == n * (size_t)o->ints * sizeof(int);
    char *g = global_array(o, total);
    size_t nints = n * (size_t)o->ints;
    int *packed = calloc(nints + 1, sizeof(int));
    if (ok)
        ok = locus_dtype_pack(g, 1, dt, 0, packed, nints * sizeof(int)) == nints * sizeof(int);
    for (size_t i = 0; ok && i < n; i++)
        for (int k = 0; k < o->ints; k++)
            if (packed[i * (size_t)o->ints + (size_t)k] != (int)(want[i] * (size_t)o->ints) + k) {
                fprintf(stderr, "%s: stream element %zu is %d, want global element %zu\n", what,
                        i, packed[i * (size_t)o->ints + (size_t)k], want[i]);
                ok = 0;
                break;
            }
    /* Unpacking the stream into an empty array puts back exactly the
     * selected elements. */
    if (ok) {
        char *back = calloc(total, o->ext);
        locus_dtype_unpack(back, 1, dt, 0, packed, nints * sizeof(int));
        for (size_t i = 0; i < n && ok; i++)
            ok = memcmp(back + want[i] * o->ext, g + want[i] * o->ext, sizeof(int)) == 0;
        free(back);
    }
    if (!ok) {
        fprintf(stderr, "FAIL %s (lb %td extent %td size %zu; want %zu elements)\n", what, lb, ext,
                locus_dtype_size(dt), n);
        failures++;
    }
    free(g);
    free(packed);
}

static void test_subarray(const old_t *o, int nd, const size_t *sizes, const size_t *sub,
                          const size_t *starts, int fortran)
{
    size_t total = 1, n = 1;
    for (int d = 0; d < nd; d++) {
        total *= sizes[d];
        n *= sub[d];
    }
    size_t *want = malloc((n + 1) * sizeof(size_t)), idx[MAXD] = {0}, g[MAXD], k = 0;
    if (n > 0)
        do {
            for (int d = 0; d < nd; d++)
                g[d] = starts[d] + idx[d];
            want[k++] = linear(nd, g, sizes, fortran);
        } while (next_index(nd, idx, sub, fortran));
    locus_dtype_t *dt;
    char what[160];
    int len = snprintf(what, sizeof what, "subarray %s nd=%d", fortran ? "F" : "C", nd);
    for (int d = 0; d < nd; d++)
        len += snprintf(what + len, sizeof what - (size_t)len, " %zu/%zu@%zu", sub[d], sizes[d],
                        starts[d]);
    int rc = locus_dtype_subarray(nd, sizes, sub, starts, fortran, o->t, &dt);
    CHECK(rc == 0);
    if (rc == 0) {
        check_selection(what, dt, o, total, want, k);
        locus_dtype_release(dt);
    }
    free(want);
}

/* Owner coordinate and local index of global index gi along a dimension. */
static void owner_of(size_t gi, size_t gsize, int dist, int darg, int p, int *coord, size_t *local)
{
    if (dist == LOCUS_DIST_NONE) {
        *coord = 0;
        *local = gi;
    } else if (dist == LOCUS_DIST_BLOCK) {
        size_t b = darg == LOCUS_DARG_DEFAULT ? (gsize + (size_t)p - 1) / (size_t)p : (size_t)darg;
        *coord = (int)(gi / b);
        *local = gi % b;
    } else {
        size_t b = darg == LOCUS_DARG_DEFAULT ? 1 : (size_t)darg;
        *coord = (int)(gi / b % (size_t)p);
        *local = gi / (b * (size_t)p) * b + gi % b;
    }
}

static int cmp_pair(const void *a, const void *b)
{
    const size_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

static void test_darray(const old_t *o, int nd, const size_t *gs, const int *dist,
                        const int *darg, const int *ps, int fortran)
{
    int size = 1;
    size_t total = 1;
    for (int d = 0; d < nd; d++) {
        size *= ps[d];
        total *= gs[d];
    }
    size_t seen = 0;
    for (int rank = 0; rank < size; rank++) {
        int my[MAXD];
        for (int d = nd - 1, r = rank; d >= 0; d--) {   /* row-major process grid */
            my[d] = r % ps[d];
            r /= ps[d];
        }
        /* Local sizes: how many indices of each dimension this rank owns. */
        size_t lsize[MAXD];
        for (int d = 0; d < nd; d++) {
            lsize[d] = 0;
            for (size_t gi = 0; gi < gs[d]; gi++) {
                int c;
                size_t l;
                owner_of(gi, gs[d], dist[d], darg[d], ps[d], &c, &l);
                lsize[d] += c == my[d];
            }
        }
        /* (local linear index, global linear index) of every owned element,
         * sorted by the local index: the stream order. */
        size_t (*own)[2] = malloc((total + 1) * sizeof *own), n = 0, g[MAXD] = {0};
        do {
            size_t loc[MAXD];
            int mine = 1;
            for (int d = 0; d < nd && mine; d++) {
                int c;
                owner_of(g[d], gs[d], dist[d], darg[d], ps[d], &c, &loc[d]);
                mine = c == my[d];
            }
            if (mine) {
                own[n][0] = linear(nd, loc, lsize, fortran);
                own[n][1] = linear(nd, g, gs, fortran);
                n++;
            }
        } while (next_index(nd, g, gs, fortran));
        qsort(own, n, sizeof *own, cmp_pair);
        size_t *want = malloc((n + 1) * sizeof(size_t));
        for (size_t i = 0; i < n; i++)
            want[i] = own[i][1];
        char what[200];
        int len = snprintf(what, sizeof what, "darray %s rank %d/%d:", fortran ? "F" : "C", rank,
                           size);
        for (int d = 0; d < nd; d++)
            len += snprintf(what + len, sizeof what - (size_t)len, " %zu:%s(%d)/%d", gs[d],
                            dist[d] == LOCUS_DIST_NONE ? "none"
                            : dist[d] == LOCUS_DIST_BLOCK ? "block" : "cyclic",
                            darg[d], ps[d]);
        locus_dtype_t *dt;
        int rc = locus_dtype_darray(size, rank, nd, gs, dist, darg, ps, fortran, o->t, &dt);
        if (rc != 0) {
            fprintf(stderr, "%s: rc %d\n", what, rc);
            failures++;
        } else {
            check_selection(what, dt, o, total, want, n);
            locus_dtype_release(dt);
        }
        seen += n;
        free(own);
        free(want);
    }
    CHECK(seen == total);   /* the ranks' pieces partition the array */
}

static void subarrays(const old_t *o)
{
    for (int fortran = 0; fortran <= 1; fortran++) {
        test_subarray(o, 1, (size_t[]){10}, (size_t[]){4}, (size_t[]){3}, fortran);
        test_subarray(o, 1, (size_t[]){10}, (size_t[]){10}, (size_t[]){0}, fortran);
        test_subarray(o, 2, (size_t[]){5, 7}, (size_t[]){2, 3}, (size_t[]){1, 4}, fortran);
        test_subarray(o, 2, (size_t[]){5, 7}, (size_t[]){5, 1}, (size_t[]){0, 6}, fortran);
        test_subarray(o, 3, (size_t[]){4, 3, 6}, (size_t[]){2, 3, 2}, (size_t[]){2, 0, 3},
                      fortran);
        test_subarray(o, 4, (size_t[]){3, 4, 2, 5}, (size_t[]){1, 2, 2, 3},
                      (size_t[]){2, 1, 0, 2}, fortran);
        test_subarray(o, 2, (size_t[]){6, 6}, (size_t[]){0, 3}, (size_t[]){6, 0}, fortran);
    }
}

static void darrays(const old_t *o)
{
    const int B = LOCUS_DIST_BLOCK, C = LOCUS_DIST_CYCLIC, N = LOCUS_DIST_NONE,
              D = LOCUS_DARG_DEFAULT;
    for (int f = 0; f <= 1; f++) {
        test_darray(o, 1, (size_t[]){10}, (int[]){B}, (int[]){D}, (int[]){3}, f);
        test_darray(o, 1, (size_t[]){10}, (int[]){B}, (int[]){4}, (int[]){3}, f);
        test_darray(o, 1, (size_t[]){11}, (int[]){C}, (int[]){D}, (int[]){4}, f);
        test_darray(o, 1, (size_t[]){11}, (int[]){C}, (int[]){3}, (int[]){2}, f);
        test_darray(o, 2, (size_t[]){7, 9}, (int[]){B, C}, (int[]){D, 2}, (int[]){2, 3}, f);
        test_darray(o, 2, (size_t[]){8, 5}, (int[]){C, B}, (int[]){D, D}, (int[]){4, 2}, f);
        test_darray(o, 2, (size_t[]){6, 5}, (int[]){N, C}, (int[]){D, 1}, (int[]){1, 3}, f);
        test_darray(o, 3, (size_t[]){5, 4, 7}, (int[]){B, N, C}, (int[]){2, D, 2},
                    (int[]){3, 1, 2}, f);
        test_darray(o, 3, (size_t[]){6, 6, 6}, (int[]){C, C, B}, (int[]){1, 2, D},
                    (int[]){2, 2, 2}, f);
        /* More processes than indices: some ranks own nothing. */
        test_darray(o, 2, (size_t[]){3, 2}, (int[]){B, C}, (int[]){D, D}, (int[]){4, 2}, f);
    }
}

static void errors(void)
{
    locus_dtype_t *dt = NULL, *it = locus_dtype_basic(LOCUS_EL_INT);
    const int B = LOCUS_DIST_BLOCK, N = LOCUS_DIST_NONE, D = LOCUS_DARG_DEFAULT;
    /* Subarray: past the end, zero-size dimension, no dimensions. */
    CHECK(locus_dtype_subarray(1, (size_t[]){4}, (size_t[]){3}, (size_t[]){2}, 0, it, &dt) ==
          LOCUS_DTYPE_EARG);
    CHECK(locus_dtype_subarray(1, (size_t[]){0}, (size_t[]){0}, (size_t[]){0}, 0, it, &dt) ==
          LOCUS_DTYPE_EARG);
    CHECK(locus_dtype_subarray(0, (size_t[]){4}, (size_t[]){1}, (size_t[]){0}, 0, it, &dt) ==
          LOCUS_DTYPE_EARG);
    /* Darray: grid of the wrong size, NONE over several processes, a block
     * too small to cover its dimension, a bad rank. */
    CHECK(locus_dtype_darray(4, 0, 1, (size_t[]){8}, (int[]){B}, (int[]){D}, (int[]){3}, 0, it,
                             &dt) == LOCUS_DTYPE_EARG);
    CHECK(locus_dtype_darray(2, 0, 1, (size_t[]){8}, (int[]){N}, (int[]){D}, (int[]){2}, 0, it,
                             &dt) == LOCUS_DTYPE_EARG);
    CHECK(locus_dtype_darray(2, 0, 1, (size_t[]){8}, (int[]){B}, (int[]){3}, (int[]){2}, 0, it,
                             &dt) == LOCUS_DTYPE_EARG);
    CHECK(locus_dtype_darray(2, 2, 1, (size_t[]){8}, (int[]){B}, (int[]){D}, (int[]){2}, 0, it,
                             &dt) == LOCUS_DTYPE_EARG);
    CHECK(dt == NULL);
    /* An array too large for the address space. */
    CHECK(locus_dtype_subarray(2, (size_t[]){(size_t)1 << 40, (size_t)1 << 40}, (size_t[]){1, 1},
                               (size_t[]){0, 0}, 0, it, &dt) == LOCUS_DTYPE_ERANGE);
}

int main(void)
{
    old_t oi = old_int(), og = old_gappy();
    subarrays(&oi);
    subarrays(&og);
    darrays(&oi);
    darrays(&og);
    errors();
    locus_dtype_release(og.t);
    if (failures) {
        printf(" Found %d errors\n", failures);
        return 1;
    }
    printf(" No Errors\n");
    return 0;
}
