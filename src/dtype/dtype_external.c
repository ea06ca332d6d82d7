/*
 * dtype_external.c — the external32 representation (MPI's portable
 * encoding, MPI-4.1 section 19.1.14's table): every basic element in
 * type-map order, big-endian, at a fixed size per kind.
 *
 * Data is packed natively in chunks (the pack engine), and the native
 * stream is converted element by element while walking the type
 * signature; a chunk that ends inside an element leaves it to the next.
 */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "dtype_impl.h"

#if LDBL_MANT_DIG != 64 && LDBL_MANT_DIG != 113
#error "external32: long double is neither x87 extended nor IEEE binary128"
#endif

/* How one kind is converted: ncomp components (2 for complex numbers) of
 * `native` bytes each, encoded in `ext` bytes each. */
enum { X_SWAP, X_INT, X_UINT, X_LDOUBLE };
typedef struct {
    unsigned char how, ncomp, native, ext;
} xrule_t;

static xrule_t xrule(locus_elem_t k)
{
    size_t n = locus_elem_size(k);
    switch (k) {
    case LOCUS_EL_LONG: case LOCUS_EL_AINT:
        return (xrule_t){X_INT, 1, (unsigned char)n, k == LOCUS_EL_LONG ? 4 : 8};
    case LOCUS_EL_ULONG:
        return (xrule_t){X_UINT, 1, (unsigned char)n, 4};
    case LOCUS_EL_WCHAR:
        return (xrule_t){X_UINT, 1, (unsigned char)n, 2};
    case LOCUS_EL_LDOUBLE:
        return (xrule_t){X_LDOUBLE, 1, (unsigned char)n, 16};
    case LOCUS_EL_CLDOUBLE:
        return (xrule_t){X_LDOUBLE, 2, (unsigned char)(n / 2), 16};
    default:
        if (locus_elem_is_complex(k))
            return (xrule_t){X_SWAP, 2, (unsigned char)(n / 2), (unsigned char)(n / 2)};
        return (xrule_t){X_SWAP, 1, (unsigned char)n, (unsigned char)n};
    }
}

size_t locus_elem_external_size(locus_elem_t el)
{
    if (locus_elem_is_pair(el)) {
        locus_elem_t v, i;
        size_t off;
        locus_elem_pair(el, &v, &i, &off);
        return locus_elem_external_size(v) + locus_elem_external_size(i);
    }
    if (!locus_dtype_basic(el))
        return 0;
    xrule_t r = xrule(el);
    return (size_t)r.ncomp * r.ext;
}

size_t locus_dtype_external_size(const locus_dtype_t *dt)
{
    if (!dt)
        return 0;
    size_t unit = 0;
    for (size_t s = 0; s < dt->nsig; s++)
        unit += dt->sig[s].count * locus_elem_external_size(dt->sig[s].kind);
    return unit * dt->nrep;
}

/* ---- scalar conversions (host is little- or big-endian) ---- */

static void put_be(unsigned char *out, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[n - 1 - i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_be(const unsigned char *in, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = v << 8 | in[i];
    return v;
}

/* Native-endian bytes <-> big-endian bytes, same size. */
static void swap_copy(unsigned char *dst, const unsigned char *src, size_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (size_t i = 0; i < n; i++)
        dst[i] = src[n - 1 - i];
#else
    memcpy(dst, src, n);
#endif
}

/* A native integer of n (<= 8) bytes, widened to 64 bits. */
static uint64_t int_load(const unsigned char *p, size_t n, int is_signed)
{
    unsigned char be[8];
    swap_copy(be, p, n);
    uint64_t v = get_be(be, n);
    if (is_signed && n < 8 && (v >> (8 * n - 1)) & 1)
        v |= ~(uint64_t)0 << (8 * n);
    return v;
}

static void int_store(unsigned char *p, uint64_t v, size_t n)
{
    unsigned char be[8];
    put_be(be, v, n);
    swap_copy(p, be, n);
}

/* 1 when v (a signed or unsigned 64-bit value) fits in n bytes. */
static int int_fits(uint64_t v, size_t n, int is_signed)
{
    if (n >= 8)
        return 1;
    if (is_signed) {
        int64_t s = (int64_t)v, lim = (int64_t)1 << (8 * n - 1);
        return s >= -lim && s < lim;
    }
    return v >> (8 * n) == 0;
}

#if LDBL_MANT_DIG == 64
/* x87 extended (64-bit mantissa with an explicit integer bit) <-> binary128
 * (112-bit fraction): the exponents share their bias, so only the
 * mantissa moves, rounded to nearest-even on the way back. */
static void ld_encode(unsigned char *out, const unsigned char *in)
{
    uint64_t m;
    uint16_t se;
    memcpy(&m, in, 8);
    memcpy(&se, in + 8, 2);
    unsigned exp = se & 0x7fff;
    if (exp == 0 && (m >> 63))
        exp = 1;                                   /* a pseudo-denormal is the smallest normal */
    /* The integer bit is implied in binary128 (and 0 in a denormal). */
    uint64_t frac63 = m & ~((uint64_t)1 << 63);
    uint64_t hi = (uint64_t)(se >> 15) << 63 | (uint64_t)exp << 48 | frac63 >> 15;
    put_be(out, hi, 8);
    put_be(out + 8, frac63 << 49, 8);
}

static void ld_decode(unsigned char *out, const unsigned char *in)
{
    uint64_t hi = get_be(in, 8), lo = get_be(in + 8, 8);
    unsigned sign = (unsigned)(hi >> 63), exp = (unsigned)(hi >> 48) & 0x7fff;
    uint64_t frac63 = (hi & 0xffffffffffffULL) << 15 | lo >> 49;
    uint64_t dropped = lo & (((uint64_t)1 << 49) - 1), half = (uint64_t)1 << 48;
    uint64_t m;
    if (exp == 0x7fff) {
        m = (uint64_t)1 << 63 | frac63;
        if ((hi & 0xffffffffffffULL) | lo)
            m |= frac63 ? 0 : 1;                   /* a NaN stays a NaN */
    } else {
        if (dropped > half || (dropped == half && (frac63 & 1)))
            frac63++;
        if (exp == 0) {
            m = frac63;                            /* subnormal; may round up to normal */
            if (m >> 63)
                exp = 1;
        } else {
            if (frac63 >> 63) {                    /* rounding carried out */
                frac63 = 0;
                exp++;
            }
            m = exp == 0x7fff ? (uint64_t)1 << 63 : (uint64_t)1 << 63 | frac63;
        }
    }
    uint16_t se = (uint16_t)(sign << 15 | exp);
    memset(out, 0, sizeof(long double));
    memcpy(out, &m, 8);
    memcpy(out + 8, &se, 2);
}
#else
static void ld_encode(unsigned char *out, const unsigned char *in)
{
    swap_copy(out, in, 16);
}

static void ld_decode(unsigned char *out, const unsigned char *in)
{
    swap_copy(out, in, 16);
}
#endif

/* One element of kind k: native -> external. Returns 0 or ECONV. */
static int elem_encode(locus_elem_t k, const unsigned char *in, unsigned char *out)
{
    xrule_t r = xrule(k);
    for (int c = 0; c < r.ncomp; c++, in += r.native, out += r.ext) {
        switch (r.how) {
        case X_SWAP:
            swap_copy(out, in, r.native);
            break;
        case X_INT: case X_UINT: {
            uint64_t v = int_load(in, r.native, r.how == X_INT);
            if (!int_fits(v, r.ext, r.how == X_INT))
                return LOCUS_DTYPE_ECONV;
            put_be(out, v, r.ext);
            break;
        }
        case X_LDOUBLE:
            ld_encode(out, in);
            break;
        }
    }
    return 0;
}

static void elem_decode(locus_elem_t k, const unsigned char *in, unsigned char *out)
{
    xrule_t r = xrule(k);
    for (int c = 0; c < r.ncomp; c++, in += r.ext, out += r.native) {
        switch (r.how) {
        case X_SWAP:
            swap_copy(out, in, r.native);
            break;
        case X_INT: case X_UINT: {
            uint64_t v = get_be(in, r.ext);
            if (r.how == X_INT && r.ext < 8 && (v >> (8 * r.ext - 1)) & 1)
                v |= ~(uint64_t)0 << (8 * r.ext);
            int_store(out, v, r.native);
            break;
        }
        case X_LDOUBLE:
            ld_decode(out, in);
            break;
        }
    }
}

/* ---- runs of one kind ---- */

/* m elements of kind k: native -> external. The common kinds (a plain
 * byte swap of 2, 4 or 8 bytes) get a loop the compiler turns into
 * vector byte shuffles. */
static int run_encode(locus_elem_t k, const unsigned char *in, unsigned char *out, size_t m)
{
    xrule_t r = xrule(k);
    size_t n = m * r.ncomp;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (r.how == X_SWAP && r.native == 4) {
        for (size_t i = 0; i < n; i++) {
            uint32_t v;
            memcpy(&v, in + 4 * i, 4);
            v = __builtin_bswap32(v);
            memcpy(out + 4 * i, &v, 4);
        }
        return 0;
    }
    if (r.how == X_SWAP && r.native == 8) {
        for (size_t i = 0; i < n; i++) {
            uint64_t v;
            memcpy(&v, in + 8 * i, 8);
            v = __builtin_bswap64(v);
            memcpy(out + 8 * i, &v, 8);
        }
        return 0;
    }
    if (r.how == X_SWAP && r.native == 2) {
        for (size_t i = 0; i < n; i++) {
            uint16_t v;
            memcpy(&v, in + 2 * i, 2);
            v = __builtin_bswap16(v);
            memcpy(out + 2 * i, &v, 2);
        }
        return 0;
    }
#endif
    if (r.how == X_SWAP && r.native == 1) {
        memcpy(out, in, n);
        return 0;
    }
    size_t ns = locus_elem_size(k), xs = locus_elem_external_size(k);
    for (size_t i = 0; i < m; i++)
        if (elem_encode(k, in + i * ns, out + i * xs))
            return LOCUS_DTYPE_ECONV;
    return 0;
}

/* m elements of kind k: external -> native (a byte swap is its own inverse). */
static void run_decode(locus_elem_t k, const unsigned char *in, unsigned char *out, size_t m)
{
    xrule_t r = xrule(k);
    if (r.how == X_SWAP) {
        run_encode(k, in, out, m);
        return;
    }
    size_t ns = locus_elem_size(k), xs = locus_elem_external_size(k);
    for (size_t i = 0; i < m; i++)
        elem_decode(k, in + i * xs, out + i * ns);
}

/* ---- the walk over the signature ---- */

enum { XCHUNK = 64 * 1024 };

/* Where the conversion is in the repeating unit signature. */
typedef struct {
    const locus_dtype_t *dt;
    size_t s, i;       /* run s, element i of the run */
} xcursor_t;

/* The kind at the cursor and how many of it follow in the current run. */
static locus_elem_t cursor_kind(const xcursor_t *c, size_t *left)
{
    /* A one-run signature is the same kind over every unit and element. */
    *left = c->dt->nsig == 1 ? SIZE_MAX : c->dt->sig[c->s].count - c->i;
    return c->dt->sig[c->s].kind;
}

static void cursor_skip(xcursor_t *c, size_t m)
{
    if (c->dt->nsig == 1)
        return;
    c->i += m;
    if (c->i == c->dt->sig[c->s].count) {
        c->i = 0;
        if (++c->s == c->dt->nsig)
            c->s = 0;
    }
}

int locus_dtype_pack_external(const void *buf, size_t count, const locus_dtype_t *dt,
                              void *out)
{
    size_t total = count * locus_dtype_size(dt);
    if (total == 0)
        return 0;
    unsigned char *chunk = malloc(XCHUNK), *o = out;
    if (!chunk)
        return LOCUS_DTYPE_ENOMEM;
    xcursor_t cur = {dt, 0, 0};
    size_t off = 0;
    int rc = 0;
    while (off < total && rc == 0) {
        size_t n = locus_dtype_pack(buf, count, dt, off, chunk, XCHUNK), used = 0;
        while (used < n && rc == 0) {
            size_t left;
            locus_elem_t k = cursor_kind(&cur, &left);
            size_t es = locus_elem_size(k), m = (n - used) / es;
            if (m == 0)
                break;                 /* the rest of this element is in the next chunk */
            if (m > left)
                m = left;
            rc = run_encode(k, chunk + used, o, m);
            o += m * locus_elem_external_size(k);
            used += m * es;
            cursor_skip(&cur, m);
        }
        off += used;
    }
    free(chunk);
    return rc;
}

int locus_dtype_unpack_external(const void *in, void *buf, size_t count,
                                const locus_dtype_t *dt)
{
    size_t total = count * locus_dtype_size(dt);
    if (total == 0)
        return 0;
    unsigned char *chunk = malloc(XCHUNK);
    const unsigned char *i = in;
    if (!chunk)
        return LOCUS_DTYPE_ENOMEM;
    xcursor_t cur = {dt, 0, 0};
    size_t off = 0;
    while (off < total) {
        size_t n = 0;
        while (off + n < total) {
            size_t left;
            locus_elem_t k = cursor_kind(&cur, &left);
            size_t es = locus_elem_size(k), m = (XCHUNK - n) / es;
            if (m == 0)
                break;
            if (m > left)
                m = left;
            if (m > (total - off - n) / es)
                m = (total - off - n) / es;
            run_decode(k, i, chunk + n, m);
            i += m * locus_elem_external_size(k);
            n += m * es;
            cursor_skip(&cur, m);
        }
        locus_dtype_unpack(buf, count, dt, off, chunk, n);
        off += n;
    }
    free(chunk);
    return 0;
}
