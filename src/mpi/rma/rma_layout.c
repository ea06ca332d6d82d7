/*
 * rma_layout.c — the target layout of an operation that does not go
 * through memory mapped here (CMA, messages): the contiguous runs of
 * count x datatype, in packed order.
 *
 * Datatypes are decoded through MPI_Type_get_envelope/contents (the way
 * ROMIO flattens types): the cost is the number of runs, whatever the
 * type's span, so a column of a large matrix is as cheap as its data.
 * Combiners the decoder does not know (darray, and nesting beyond
 * RMA_DEPTH) are enumerated through the engine's public pack instead:
 * memory whose bytes hold their own position is packed, once per position
 * byte, which tells where every packed byte came from -- memory in
 * proportion to the element's span, so that fallback is bounded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rma.h"

#define RMA_DEPTH 16
/* The pack-based fallback holds npass copies of one element's span. */
#define RMA_SCAN_MAX ((size_t)64 << 20)

typedef struct {
    rma_run_t *v;
    size_t n, cap;
    int err;
} runs_t;

/* Appends a run, merging it with the last one when adjacent. */
static void runs_add(runs_t *r, int64_t off, uint64_t len)
{
    if (len == 0 || r->err)
        return;
    if (r->n > 0 && r->v[r->n - 1].off + (int64_t)r->v[r->n - 1].len == off) {
        r->v[r->n - 1].len += len;
        return;
    }
    if (r->n == r->cap) {
        size_t c = r->cap ? 2 * r->cap : 16;
        rma_run_t *v = realloc(r->v, c * sizeof *v);
        if (!v) {
            r->err = MPI_ERR_NO_MEM;
            return;
        }
        r->v = v;
        r->cap = c;
    }
    r->v[r->n++] = (rma_run_t){ off, len };
}

void rma_span_of(size_t count, locus_dtype_t *dt, int64_t *lo, int64_t *hi)
{
    *lo = *hi = 0;
    if (count == 0 || locus_dtype_size(dt) == 0)
        return;
    ptrdiff_t lb, ext, tlb, text;
    locus_dtype_extent(dt, &lb, &ext);
    locus_dtype_true_extent(dt, &tlb, &text);
    int64_t last = (int64_t)(count - 1) * (int64_t)ext;
    *lo = (int64_t)tlb + (last < 0 ? last : 0);
    *hi = (int64_t)tlb + (int64_t)text + (last > 0 ? last : 0);
}

/* One element of dt at off, through the engine's pack (see above). */
static void scan_one(locus_dtype_t *dt, int64_t off, runs_t *r)
{
    int64_t lo, hi;
    rma_span_of(1, dt, &lo, &hi);
    size_t span = (size_t)(hi - lo), total = locus_dtype_size(dt);
    int npass = 1;
    while (npass < 8 && (span - 1) >> (8 * npass))
        npass++;
    if (span > RMA_SCAN_MAX / (size_t)npass) {
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail,
                 "a target datatype spanning %zu bytes per element that the layout decoder "
                 "does not know (e.g. darray)", span);
        r->err = MPI_ERR_NO_MEM;
        return;
    }
    enum { PIECE = 16384 };
    unsigned char *mem = malloc(span * (size_t)npass), *piece = malloc((size_t)PIECE * npass);
    if (!mem || !piece) {
        r->err = MPI_ERR_NO_MEM;
    } else {
        for (int k = 0; k < npass; k++)
            for (size_t p = 0; p < span; p++)
                mem[(size_t)k * span + p] = (unsigned char)(p >> (8 * k));
        for (size_t at = 0; at < total && !r->err; at += PIECE) {
            size_t n = total - at < PIECE ? total - at : PIECE;
            for (int k = 0; k < npass; k++)
                locus_dtype_pack(mem + (size_t)k * span - lo, 1, dt, at,
                                 piece + (size_t)k * PIECE, n);
            for (size_t i = 0; i < n; i++) {
                uint64_t pos = 0;
                for (int k = 0; k < npass; k++)
                    pos |= (uint64_t)piece[(size_t)k * PIECE + i] << (8 * k);
                runs_add(r, off + lo + (int64_t)pos, 1);
            }
        }
    }
    free(mem);
    free(piece);
}

static void flatten(MPI_Datatype h, MPI_Count count, int64_t off, runs_t *r, int depth);

/* A subarray: contiguous runs of the last dimension (C order; Fortran
 * order is the same with the dimensions reversed). */
static void subarray(const int *iv, const MPI_Count *cv, int large, MPI_Datatype old,
                     int64_t off, runs_t *r, int depth)
{
    /* ints: ndims, sizes, subsizes, starts, order; the large-count form
     * keeps ndims and order in ints and the three arrays in counts */
    int nd = iv[0];
    if (nd < 1 || nd > 32) {
        r->err = MPI_ERR_TYPE;
        return;
    }
    int order = large ? iv[1] : iv[1 + 3 * nd];
    MPI_Count v[3][32];
    for (int k = 0; k < 3; k++)
        for (int d = 0; d < nd; d++) {
            int src = order == MPI_ORDER_FORTRAN ? nd - 1 - d : d;
            v[k][d] = large ? cv[k * nd + src] : iv[1 + k * nd + src];
        }
    ptrdiff_t lb, ext;
    locus_dtype_extent(locus_dt_of(old), &lb, &ext);
    /* stride of each dimension in elements */
    MPI_Count stride[32], idx[32] = { 0 };
    stride[nd - 1] = 1;
    for (int d = nd - 2; d >= 0; d--)
        stride[d] = stride[d + 1] * v[0][d + 1];
    for (;;) {
        MPI_Count e = v[2][nd - 1];
        for (int d = 0; d < nd - 1; d++)
            e += (v[2][d] + idx[d]) * stride[d];
        flatten(old, v[1][nd - 1], off + (int64_t)(e * ext), r, depth + 1);
        int d = nd - 2;
        while (d >= 0 && ++idx[d] == v[1][d])
            idx[d--] = 0;
        if (d < 0 || r->err)
            break;
    }
}

/* The decoded constructor of a derived type. */
static void flatten_derived(MPI_Datatype h, int comb, const int *iv, const MPI_Aint *av,
                            const MPI_Count *cv, int large, const MPI_Datatype *tv,
                            int64_t off, runs_t *r, int depth)
{
    /* The k-th count argument and the k-th (byte or element) displacement,
     * from the int/address arrays or the large-count one. */
#define CNT(ik, ck) (large ? cv[ck] : (MPI_Count)iv[ik])
    ptrdiff_t lb, ext;
    locus_dtype_extent(locus_dt_of(tv[0]), &lb, &ext);
    (void)h;
    switch (comb) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        flatten(tv[0], 1, off, r, depth + 1);
        return;
    case MPI_COMBINER_CONTIGUOUS:
        flatten(tv[0], CNT(0, 0), off, r, depth + 1);
        return;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
        MPI_Count n = CNT(0, 0), bl = CNT(1, 1);
        int64_t stride = comb == MPI_COMBINER_VECTOR ? (int64_t)CNT(2, 2) * ext
                         : large ? (int64_t)cv[2] : (int64_t)av[0];
        for (MPI_Count j = 0; j < n && !r->err; j++)
            flatten(tv[0], bl, off + j * stride, r, depth + 1);
        return;
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK: {
        int block = comb == MPI_COMBINER_INDEXED_BLOCK || comb == MPI_COMBINER_HINDEXED_BLOCK;
        int bytes = comb == MPI_COMBINER_HINDEXED || comb == MPI_COMBINER_HINDEXED_BLOCK;
        MPI_Count n = CNT(0, 0), first = block ? 2 : 1 + n;
        for (MPI_Count j = 0; j < n && !r->err; j++) {
            MPI_Count bl = block ? CNT(1, 1) : CNT(1 + j, 1 + j);
            int64_t d = bytes ? (large ? (int64_t)cv[first + j] : (int64_t)av[j])
                              : (int64_t)CNT(first + j, first + j) * ext;
            flatten(tv[0], bl, off + d, r, depth + 1);
        }
        return;
    }
    case MPI_COMBINER_STRUCT: {
        MPI_Count n = CNT(0, 0);
        for (MPI_Count j = 0; j < n && !r->err; j++)
            flatten(tv[j], CNT(1 + j, 1 + j),
                    off + (large ? (int64_t)cv[1 + n + j] : (int64_t)av[j]), r, depth + 1);
        return;
    }
    case MPI_COMBINER_SUBARRAY:
        subarray(iv, cv, large, tv[0], off, r, depth);
        return;
    }
    scan_one(locus_dt_of(h), off, r);
#undef CNT
}

/* The runs of count x h at off, appended to r. */
static void flatten(MPI_Datatype h, MPI_Count count, int64_t off, runs_t *r, int depth)
{
    locus_dtype_t *dt = locus_dt_of(h);
    if (!dt || r->err || count <= 0 || locus_dtype_size(dt) == 0)
        return;
    ptrdiff_t lb, ext, tlb, text;
    locus_dtype_extent(dt, &lb, &ext);
    if (locus_dtype_is_contig(dt)) {
        locus_dtype_true_extent(dt, &tlb, &text);
        runs_add(r, off + tlb, (uint64_t)count * locus_dtype_size(dt));
        return;
    }
    MPI_Count ni = 0, na = 0, nc = 0, nd = 0;
    int comb = MPI_COMBINER_NAMED;
    if (depth < RMA_DEPTH)
        PMPI_Type_get_envelope_c(h, &ni, &na, &nc, &nd, &comb);
    if (comb == MPI_COMBINER_NAMED || comb == MPI_COMBINER_DARRAY || depth >= RMA_DEPTH) {
        /* padded pairs, darray, very deep nesting: one element scanned,
         * the others are the same runs one extent further each */
        runs_t one = { 0 };
        scan_one(dt, 0, &one);
        r->err = r->err ? r->err : one.err;
        for (MPI_Count e = 0; e < count && !r->err; e++)
            for (size_t k = 0; k < one.n; k++)
                runs_add(r, off + e * ext + one.v[k].off, one.v[k].len);
        free(one.v);
        return;
    }
    int *iv = malloc((size_t)(ni + 1) * sizeof *iv);
    MPI_Aint *av = malloc((size_t)(na + 1) * sizeof *av);
    MPI_Count *cv = malloc((size_t)(nc + 1) * sizeof *cv);
    MPI_Datatype *tv = malloc((size_t)(nd + 1) * sizeof *tv);
    if (!iv || !av || !cv || !tv ||
        PMPI_Type_get_contents_c(h, ni, na, nc, nd, iv, av, cv, tv) != MPI_SUCCESS) {
        r->err = MPI_ERR_NO_MEM;
        nd = 0;
    }
    for (MPI_Count e = 0; e < count && !r->err; e++)
        flatten_derived(h, comb, iv, av, cv, nc > 0, tv, off + e * ext, r, depth);
    /* the components MPI_Type_get_contents handed out */
    for (MPI_Count k = 0; k < nd; k++)
        if (!locus_mdt_of(tv[k])->predefined)
            PMPI_Type_free(&tv[k]);
    free(iv);
    free(av);
    free(cv);
    free(tv);
}

int rma_runs_of(size_t count, locus_dtype_t *dt, rma_run_t **runs, size_t *nruns)
{
    runs_t r = { 0 };
    MPI_Datatype h = locus_dt_handle(dt);
    if (count > 0 && locus_dtype_size(dt) > 0) {
        if (h == MPI_DATATYPE_NULL) {
            ptrdiff_t lb, ext;
            locus_dtype_extent(dt, &lb, &ext);
            for (size_t e = 0; e < count && !r.err; e++)
                scan_one(dt, (int64_t)e * ext, &r);
        } else {
            flatten(h, (MPI_Count)count, 0, &r, 0);
        }
    }
    if (r.err) {
        free(r.v);
        return r.err;
    }
    *runs = r.v;
    *nruns = r.n;
    return MPI_SUCCESS;
}
