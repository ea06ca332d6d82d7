/*
 * dtype_array.c — array types: the subarray and the distributed array
 * (MPI_Type_create_subarray/darray), composed from the general
 * constructors one dimension at a time, innermost (fastest varying) first.
 *
 * Each level is a set of blocks along one dimension of copies of the level
 * inside it, that inner level resized to lb 0 and the extent of one whole
 * "row" of the dimensions inside, so consecutive copies step one index
 * along the dimension. The result is resized to lb 0 and the extent of the
 * whole array, as MPI defines it.
 */
#include <stdlib.h>

#include "dtype_impl.h"

/* Blocks (start index, length) along one dimension. */
typedef struct {
    size_t n;
    size_t *start, *len;
} dblocks_t;

/* Dimension k (0 = innermost) of an ndims array in the given order. */
static int dim_at(int ndims, int k, int fortran_order)
{
    return fortran_order ? k : ndims - 1 - k;
}

/* Replaces *cur (its reference is consumed) by `blocks` of it along a
 * dimension whose index step is `stride` bytes. inner: *cur is the
 * innermost level (old itself, which keeps its own extent). */
static int level(locus_dtype_t **cur, const dblocks_t *b, ptrdiff_t stride, int inner)
{
    locus_dtype_t *row = *cur, *rs = NULL;
    *cur = NULL;
    int rc = LOCUS_DTYPE_OK;
    if (!inner) {
        rc = locus_dtype_resized(row, 0, stride, &rs);
        locus_dtype_release(row);
        if (rc)
            return rc;
        row = rs;
    }
    ptrdiff_t *displs = malloc((b->n + 1) * sizeof *displs);
    if (!displs)
        rc = LOCUS_DTYPE_ENOMEM;
    for (size_t i = 0; i < b->n && !rc; i++)
        if (b->start[i] > (size_t)PTRDIFF_MAX ||
            __builtin_mul_overflow((ptrdiff_t)b->start[i], stride, &displs[i]))
            rc = LOCUS_DTYPE_ERANGE;
    if (!rc)
        rc = locus_dtype_hindexed(b->n, b->len, displs, row, cur);
    free(displs);
    locus_dtype_release(row);
    return rc;
}

/* Builds the levels for per-dimension blocks blk[ndims] (array order) and
 * the final bounds. */
static int array_type(int ndims, const size_t *sizes, dblocks_t *blk, int fortran_order,
                      locus_dtype_t *old, locus_dtype_t **out)
{
    ptrdiff_t stride = old->extent;
    locus_dtype_t *cur = old;
    locus_dtype_retain(old);   /* level() drops one reference per step */
    int rc = LOCUS_DTYPE_OK;
    for (int k = 0; k < ndims && !rc; k++) {
        int d = dim_at(ndims, k, fortran_order);
        rc = level(&cur, &blk[d], stride, k == 0);
        if (!rc && (sizes[d] > (size_t)PTRDIFF_MAX ||
                    __builtin_mul_overflow(stride, (ptrdiff_t)sizes[d], &stride)))
            rc = LOCUS_DTYPE_ERANGE;
    }
    if (!rc)
        rc = locus_dtype_resized(cur, 0, stride, out);
    locus_dtype_release(cur);
    return rc;
}

static void blocks_free(dblocks_t *blk, int ndims)
{
    for (int d = 0; d < ndims; d++) {
        free(blk[d].start);
        free(blk[d].len);
    }
    free(blk);
}

static int blocks_alloc(dblocks_t *b, size_t n)
{
    b->n = 0;
    b->start = malloc((n + 1) * sizeof(size_t));
    b->len = malloc((n + 1) * sizeof(size_t));
    return b->start && b->len ? 0 : LOCUS_DTYPE_ENOMEM;
}

int locus_dtype_subarray(int ndims, const size_t *sizes, const size_t *subsizes,
                         const size_t *starts, int fortran_order, locus_dtype_t *old,
                         locus_dtype_t **out)
{
    if (ndims < 1 || !sizes || !subsizes || !starts || !old || !out)
        return LOCUS_DTYPE_EARG;
    for (int d = 0; d < ndims; d++)
        if (sizes[d] == 0 || subsizes[d] > sizes[d] || starts[d] > sizes[d] - subsizes[d])
            return LOCUS_DTYPE_EARG;
    dblocks_t *blk = calloc((size_t)ndims, sizeof *blk);
    int rc = blk ? LOCUS_DTYPE_OK : LOCUS_DTYPE_ENOMEM;
    for (int d = 0; d < ndims && !rc; d++) {
        rc = blocks_alloc(&blk[d], 1);
        if (!rc) {
            blk[d].start[0] = starts[d];
            blk[d].len[0] = subsizes[d];
            blk[d].n = 1;
        }
    }
    if (!rc)
        rc = array_type(ndims, sizes, blk, fortran_order, old, out);
    if (blk)
        blocks_free(blk, ndims);
    return rc;
}

/* The blocks process coordinate c of p owns along a dimension of g
 * elements. */
static int darray_dim(dblocks_t *b, size_t g, int dist, int darg, int p, int c)
{
    if (dist == LOCUS_DIST_NONE) {
        if (p != 1 || blocks_alloc(b, 1))
            return p != 1 ? LOCUS_DTYPE_EARG : LOCUS_DTYPE_ENOMEM;
        b->start[0] = 0;
        b->len[0] = g;
        b->n = 1;
        return LOCUS_DTYPE_OK;
    }
    if (darg != LOCUS_DARG_DEFAULT && darg <= 0)
        return LOCUS_DTYPE_EARG;
    if (dist == LOCUS_DIST_BLOCK) {
        size_t bs = darg == LOCUS_DARG_DEFAULT ? (g + (size_t)p - 1) / (size_t)p : (size_t)darg;
        if (bs * (size_t)p < g)   /* the blocks must cover the dimension */
            return LOCUS_DTYPE_EARG;
        if (blocks_alloc(b, 1))
            return LOCUS_DTYPE_ENOMEM;
        size_t start = bs * (size_t)c;
        if (start < g) {
            b->start[0] = start;
            b->len[0] = g - start < bs ? g - start : bs;
            b->n = 1;
        }
        return LOCUS_DTYPE_OK;
    }
    if (dist != LOCUS_DIST_CYCLIC)
        return LOCUS_DTYPE_EARG;
    size_t bs = darg == LOCUS_DARG_DEFAULT ? 1 : (size_t)darg, step = bs * (size_t)p;
    size_t first = bs * (size_t)c, n = first < g ? (g - first + step - 1) / step : 0;
    if (blocks_alloc(b, n))
        return LOCUS_DTYPE_ENOMEM;
    for (size_t s = first; s < g; s += step) {
        b->start[b->n] = s;
        b->len[b->n] = g - s < bs ? g - s : bs;
        b->n++;
    }
    return LOCUS_DTYPE_OK;
}

int locus_dtype_darray(int size, int rank, int ndims, const size_t *gsizes, const int *distribs,
                       const int *dargs, const int *psizes, int fortran_order,
                       locus_dtype_t *old, locus_dtype_t **out)
{
    if (size < 1 || rank < 0 || rank >= size || ndims < 1 || !gsizes || !distribs || !dargs ||
        !psizes || !old || !out)
        return LOCUS_DTYPE_EARG;
    long long grid = 1;
    for (int d = 0; d < ndims; d++) {
        if (gsizes[d] == 0 || psizes[d] < 1)
            return LOCUS_DTYPE_EARG;
        grid *= psizes[d];
        if (grid > size)
            return LOCUS_DTYPE_EARG;
    }
    if (grid != size)
        return LOCUS_DTYPE_EARG;
    dblocks_t *blk = calloc((size_t)ndims, sizeof *blk);
    if (!blk)
        return LOCUS_DTYPE_ENOMEM;
    /* Process coordinates: the grid is numbered in row-major order whatever
     * the array's order (as MPI_Cart_create numbers it). */
    int rc = LOCUS_DTYPE_OK, r = rank;
    for (int d = ndims - 1; d >= 0 && !rc; d--) {
        int c = r % psizes[d];
        r /= psizes[d];
        rc = darray_dim(&blk[d], gsizes[d], distribs[d], dargs[d], psizes[d], c);
    }
    if (!rc)
        rc = array_type(ndims, gsizes, blk, fortran_order, old, out);
    blocks_free(blk, ndims);
    return rc;
}
