/*
 * dtype_pack.c — queries and the pack/unpack loops over a type's unit of
 * blocks and the loops that repeat it (dtype_impl.h).
 */
#include <string.h>

#include "dtype_impl.h"
#include "locus_copy.h"

size_t locus_dtype_size(const locus_dtype_t *dt)
{
    return dt ? dt->size : 0;
}

void locus_dtype_extent(const locus_dtype_t *dt, ptrdiff_t *lb, ptrdiff_t *extent)
{
    if (lb)
        *lb = dt ? dt->lb : 0;
    if (extent)
        *extent = dt ? dt->extent : 0;
}

void locus_dtype_true_extent(const locus_dtype_t *dt, ptrdiff_t *lb, ptrdiff_t *extent)
{
    if (lb)
        *lb = dt ? dt->true_lb : 0;
    if (extent)
        *extent = dt ? dt->true_extent : 0;
}

int locus_dtype_is_contig(const locus_dtype_t *dt)
{
    if (!dt)
        return 0;
    if (dt->size == 0)
        return 1;
    return dt->nloops == 0 && dt->nblocks == 1 && dt->extent == (ptrdiff_t)dt->size;
}

locus_elem_t locus_dtype_elem(const locus_dtype_t *dt)
{
    return dt ? dt->elem : LOCUS_EL_MIXED;
}

long locus_dtype_count_elements(const locus_dtype_t *dt, size_t bytes)
{
    if (!dt)
        return -1;
    if (dt->size == 0)
        return bytes == 0 ? 0 : -1;
    size_t n = bytes / dt->size * dt->unit_nbasic * dt->nrep;
    size_t rest = bytes % dt->size;
    n += rest / dt->unit_size * dt->unit_nbasic;
    rest %= dt->unit_size;
    for (size_t s = 0; s < dt->nsig && rest > 0; s++) {
        size_t elsize = locus_elem_size(dt->sig[s].kind);
        size_t run = elsize * dt->sig[s].count;
        if (rest >= run) {
            rest -= run;
            n += dt->sig[s].count;
        } else {
            if (rest % elsize)
                return -1;
            n += rest / elsize;
            rest = 0;
        }
    }
    return (long)n;
}

long long locus_dtype_elements_bytes(const locus_dtype_t *dt, size_t nelem)
{
    if (!dt)
        return -1;
    if (nelem == 0)
        return 0;
    if (dt->unit_nbasic == 0)
        return -1;
    /* Whole units first (a unit is one repetition of the type's element),
     * then the runs of the last, partial unit. */
    size_t units = nelem / dt->unit_nbasic, rest = nelem % dt->unit_nbasic;
    size_t bytes = units * dt->unit_size;
    for (size_t s = 0; s < dt->nsig && rest > 0; s++) {
        size_t take = rest < dt->sig[s].count ? rest : dt->sig[s].count;
        bytes += take * locus_elem_size(dt->sig[s].kind);
        rest -= take;
    }
    return (long long)bytes;
}

/* Copies one piece between memory and the stream; constant sizes let the
 * compiler turn the common small blocks into plain loads and stores. */
static inline void piece_copy(char *dst, const char *src, size_t n)
{
    switch (n) {
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    case 16: memcpy(dst, src, 16); break;
    default: locus_copy(dst, src, n); break;
    }
}

/* The last block whose packed start is <= w (prefix is sorted). */
static size_t block_find(const locus_dtype_t *dt, size_t w)
{
    size_t lo = 0, hi = dt->nblocks;   /* prefix[lo] <= w < prefix[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (dt->prefix[mid] <= w)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Copies n bytes between p (user memory) and s (stream); the direction is
 * a compile-time constant in every caller, so each walker below is
 * specialised into a pack and an unpack loop. */
static inline __attribute__((always_inline)) void move(char *p, char *s, size_t n, int to_stream)
{
    if (to_stream)
        piece_copy(s, p, n);
    else
        piece_copy(p, s, n);
}

/*
 * Where the walk is: the innermost loop's index r, block b and byte inb in
 * it, and the offset from the buffer of the current copy of the innermost
 * loop (element origin plus the outer loops' indices times their strides),
 * with the outer loops' indices (idx[0..nloops-2]).
 */
typedef struct {
    size_t r, b, inb;
    ptrdiff_t outer;
    size_t idx[LOCUS_DTYPE_MAXLOOPS];
} dpos_t;

/* The innermost loop, or one copy when the type has no loop. */
static inline size_t inner_count(const locus_dtype_t *dt)
{
    return dt->nloops ? dt->loops[dt->nloops - 1].count : 1;
}

static inline ptrdiff_t inner_stride(const locus_dtype_t *dt)
{
    return dt->nloops ? dt->loops[dt->nloops - 1].stride : 0;
}

/* Past the innermost loop's last copy: the next index of the outer loops
 * (carrying outwards), or after the last, the next element's origin. Once
 * per innermost loop, so vectors (no outer loop) pay one add per element. */
static inline void outer_next(const locus_dtype_t *dt, dpos_t *at)
{
    for (int l = dt->nloops - 2; l >= 0; l--) {
        if (++at->idx[l] < dt->loops[l].count) {
            at->outer += dt->loops[l].stride;
            return;
        }
        at->idx[l] = 0;
        at->outer -= (ptrdiff_t)(dt->loops[l].count - 1) * dt->loops[l].stride;
    }
    at->outer += dt->extent;
}

/* The general walk over the unit's blocks. */
static inline __attribute__((always_inline)) void
walk_blocks(char *mem, const locus_dtype_t *dt, dpos_t at, char *stream, size_t n, int to_stream)
{
    const size_t nin = inner_count(dt);
    const ptrdiff_t sin = inner_stride(dt);
    size_t r = at.r, b = at.b, inb = at.inb, done = 0;
    char *base = mem + at.outer + (ptrdiff_t)r * sin;
    while (done < n) {
        const locus_dblock_t *bk = &dt->blocks[b];
        size_t take = bk->len - inb;
        if (take > n - done)
            take = n - done;
        move(base + bk->off + inb, stream + done, take, to_stream);
        done += take;
        inb = 0;
        if (++b == dt->nblocks) {
            b = 0;
            if (++r == nin) {
                r = 0;
                outer_next(dt, &at);
                base = mem + at.outer;
            } else {
                base += sin;
            }
        }
    }
}

/* One block per copy of the unit (vectors and the like): no block index to
 * keep, and whole blocks of 4 or 8 bytes become single loads and stores. */
static inline __attribute__((always_inline)) void
walk_vector(char *mem, const locus_dtype_t *dt, dpos_t at, char *stream, size_t n, int to_stream)
{
    const size_t len = dt->blocks[0].len, nrep = inner_count(dt);
    const ptrdiff_t off = dt->blocks[0].off, stride = inner_stride(dt);
    size_t r = at.r, inb = at.inb, done = 0;
    char *base = mem + at.outer + (ptrdiff_t)r * stride + off;
    while (done < n) {
        if (inb == 0 && n - done >= len) {
            /* Whole blocks up to the end of the innermost loop. */
            size_t k = (n - done) / len;
            if (k > nrep - r)
                k = nrep - r;
            char *s = stream + done;
            if (len == 8)
                for (size_t i = 0; i < k; i++, base += stride, s += 8)
                    move(base, s, 8, to_stream);
            else if (len == 4)
                for (size_t i = 0; i < k; i++, base += stride, s += 4)
                    move(base, s, 4, to_stream);
            else
                for (size_t i = 0; i < k; i++, base += stride, s += len)
                    move(base, s, len, to_stream);
            done += k * len;
            r += k;
        } else {
            size_t take = len - inb;
            if (take > n - done)
                take = n - done;
            move(base + inb, stream + done, take, to_stream);
            done += take;
            inb += take;
            if (inb < len)
                break;          /* n reached inside the block */
            inb = 0;
            base += stride;
            r++;
        }
        if (r == nrep) {
            r = 0;
            outer_next(dt, &at);
            base = mem + at.outer + off;
        }
    }
}

/* The position `w` bytes into the packed stream of element e: the copy of
 * the unit (its digits in the loops' mixed radix), the block, the byte. */
static void pos_find(const locus_dtype_t *dt, size_t e, size_t w, dpos_t *at)
{
    size_t rep = w / dt->unit_size;
    w %= dt->unit_size;
    at->b = block_find(dt, w);
    at->inb = w - dt->prefix[at->b];
    at->r = rep % inner_count(dt);
    rep /= inner_count(dt);
    at->outer = (ptrdiff_t)e * dt->extent;
    for (int l = dt->nloops - 2; l >= 0; l--) {
        at->idx[l] = rep % dt->loops[l].count;
        rep /= dt->loops[l].count;
        at->outer += (ptrdiff_t)at->idx[l] * dt->loops[l].stride;
    }
}

/*
 * Moves up to len stream bytes, starting `offset` into the stream of count
 * elements, between user memory and the stream. Finding the start costs a
 * division and a binary search, so pipelined pieces never rescan.
 */
static size_t dtype_copy(char *mem, size_t count, const locus_dtype_t *dt, size_t offset,
                         char *stream, size_t len, int to_stream)
{
    if (!dt || dt->size == 0)
        return 0;
    size_t total = count * dt->size;
    if (offset >= total)
        return 0;
    size_t n = total - offset < len ? total - offset : len;
    if (locus_dtype_is_contig(dt)) {
        char *p = mem + dt->true_lb + offset;
        if (to_stream)
            locus_copy(stream, p, n);
        else
            locus_copy(p, stream, n);
        return n;
    }
    dpos_t at = {0};
    pos_find(dt, offset / dt->size, offset % dt->size, &at);
    if (dt->nblocks == 1) {
        if (to_stream)
            walk_vector(mem, dt, at, stream, n, 1);
        else
            walk_vector(mem, dt, at, stream, n, 0);
    } else if (to_stream) {
        walk_blocks(mem, dt, at, stream, n, 1);
    } else {
        walk_blocks(mem, dt, at, stream, n, 0);
    }
    return n;
}

size_t locus_dtype_pack(const void *buf, size_t count, const locus_dtype_t *dt,
                        size_t offset, void *out, size_t maxlen)
{
    return dtype_copy((char *)buf, count, dt, offset, out, maxlen, 1);
}

size_t locus_dtype_unpack(void *buf, size_t count, const locus_dtype_t *dt,
                          size_t offset, const void *in, size_t len)
{
    return dtype_copy(buf, count, dt, offset, (char *)in, len, 0);
}
