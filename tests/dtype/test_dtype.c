/*
 * test_dtype.c — the datatype engine against a naive reference model.
 *
 * The reference keeps every type as its explicit type map (a list of
 * (displacement, basic size) entries plus lb/extent), built by the textbook
 * definitions of each constructor; packing it copies entry by entry. Every
 * constructor, nesting, resizing and padding case is checked against it, and
 * pack/unpack in random pieces against one-shot calls.
 */
#include <stdint.h>
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

/* ---- reference model ---- */
typedef struct {
    ptrdiff_t disp;
    size_t len;
} rent_t;
typedef struct {
    rent_t *e;
    size_t n;
    ptrdiff_t lb, extent;
    size_t align;
    int resized;
} rtype_t;

static void r_push(rtype_t *t, ptrdiff_t d, size_t len)
{
    t->e = realloc(t->e, (t->n + 1) * sizeof(rent_t));
    t->e[t->n].disp = d;
    t->e[t->n].len = len;
    t->n++;
}

static rtype_t r_basic(size_t size)
{
    rtype_t t = {0};
    r_push(&t, 0, size);
    t.extent = (ptrdiff_t)size;
    t.align = size > 16 ? 16 : size;
    return t;
}

/* Textbook general constructor: blocks of copies of old at byte displs. */
static rtype_t r_general(int count, const size_t *bl, const ptrdiff_t *d, const rtype_t *const *olds,
                         int is_struct)
{
    rtype_t t = {0};
    int any = 0;
    ptrdiff_t lb = 0, ub = 0;
    t.align = 1;
    for (int i = 0; i < count; i++) {
        const rtype_t *o = olds[i];
        for (size_t j = 0; j < bl[i]; j++) {
            ptrdiff_t base = d[i] + (ptrdiff_t)j * o->extent;
            for (size_t k = 0; k < o->n; k++)
                r_push(&t, base + o->e[k].disp, o->e[k].len);
            ptrdiff_t lo = base + o->lb, hi = base + o->lb + o->extent;
            if (!any || lo < lb)
                lb = lo;
            if (!any || hi > ub)
                ub = hi;
            any = 1;
        }
        if (bl[i] > 0) {
            if (o->align > t.align)
                t.align = o->align;
            t.resized |= o->resized;
        }
    }
    t.lb = lb;
    t.extent = ub - lb;
    if (is_struct && !t.resized && t.extent % (ptrdiff_t)t.align)
        t.extent += (ptrdiff_t)t.align - t.extent % (ptrdiff_t)t.align;
    return t;
}

static rtype_t r_hvector(int count, size_t bl, ptrdiff_t stride, const rtype_t *o)
{
    size_t *bls = malloc(sizeof(size_t) * (count + 1));
    ptrdiff_t *ds = malloc(sizeof(ptrdiff_t) * (count + 1));
    const rtype_t **os = malloc(sizeof(void *) * (count + 1));
    for (int i = 0; i < count; i++) {
        bls[i] = bl;
        ds[i] = i * stride;
        os[i] = o;
    }
    rtype_t t = r_general(count, bls, ds, os, 0);
    free(bls);
    free(ds);
    free(os);
    return t;
}

static size_t r_size(const rtype_t *t)
{
    size_t s = 0;
    for (size_t i = 0; i < t->n; i++)
        s += t->e[i].len;
    return s;
}

static void r_pack(const char *buf, size_t count, const rtype_t *t, char *out)
{
    for (size_t c = 0; c < count; c++)
        for (size_t i = 0; i < t->n; i++) {
            memcpy(out, buf + (ptrdiff_t)c * t->extent + t->e[i].disp, t->e[i].len);
            out += t->e[i].len;
        }
}

static void r_unpack(char *buf, size_t count, const rtype_t *t, const char *in)
{
    for (size_t c = 0; c < count; c++)
        for (size_t i = 0; i < t->n; i++) {
            memcpy(buf + (ptrdiff_t)c * t->extent + t->e[i].disp, in, t->e[i].len);
            in += t->e[i].len;
        }
}

/* ---- comparison of engine and reference ---- */

/* Both buffers are `span` bytes with the origin at `origin` bytes in. */
static void compare(const char *what, locus_dtype_t *dt, const rtype_t *rt)
{
    ptrdiff_t lb, ext, tlb, text;
    locus_dtype_extent(dt, &lb, &ext);
    locus_dtype_true_extent(dt, &tlb, &text);
    size_t size = r_size(rt);
    int ok = 1;
    if (locus_dtype_size(dt) != size || lb != rt->lb || ext != rt->extent) {
        fprintf(stderr, "%s: size/lb/extent %zu/%td/%td, want %zu/%td/%td\n", what,
                locus_dtype_size(dt), lb, ext, size, rt->lb, rt->extent);
        ok = 0;
    }
    /* True bounds from the reference entries. */
    if (rt->n > 0) {
        ptrdiff_t lo = rt->e[0].disp, hi = rt->e[0].disp + (ptrdiff_t)rt->e[0].len;
        for (size_t i = 1; i < rt->n; i++) {
            if (rt->e[i].disp < lo)
                lo = rt->e[i].disp;
            if (rt->e[i].disp + (ptrdiff_t)rt->e[i].len > hi)
                hi = rt->e[i].disp + (ptrdiff_t)rt->e[i].len;
        }
        if (tlb != lo || text != hi - lo) {
            fprintf(stderr, "%s: true lb/extent %td/%td, want %td/%td\n", what, tlb, text, lo,
                    hi - lo);
            ok = 0;
        }
    }
    for (size_t count = 0; count <= 4 && ok; count++) {
        /* Memory span covering count elements, with room on both sides. */
        ptrdiff_t lo = 0, hi = 0;
        for (size_t c = 0; c < count; c++)
            for (size_t i = 0; i < rt->n; i++) {
                ptrdiff_t a = (ptrdiff_t)c * rt->extent + rt->e[i].disp;
                if (a < lo)
                    lo = a;
                if (a + (ptrdiff_t)rt->e[i].len > hi)
                    hi = a + (ptrdiff_t)rt->e[i].len;
            }
        size_t span = (size_t)(hi - lo) + 64;
        char *mem = malloc(span), *mem2 = calloc(1, span), *mem3 = calloc(1, span);
        for (size_t i = 0; i < span; i++)
            mem[i] = (char)rand();
        char *origin = mem + 32 - lo, *origin2 = mem2 + 32 - lo, *origin3 = mem3 + 32 - lo;
        size_t total = count * size;
        char *want = malloc(total + 1), *got = malloc(total + 1), *piece = malloc(total + 1);
        r_pack(origin, count, rt, want);
        size_t n = locus_dtype_pack(origin, count, dt, 0, got, total + 1);
        if (n != total || memcmp(want, got, total)) {
            fprintf(stderr, "%s: one-shot pack of %zu differs\n", what, count);
            ok = 0;
        }
        /* Piecewise at random split points. */
        for (int trial = 0; trial < 5 && ok; trial++) {
            size_t off = 0;
            memset(piece, 0, total + 1);
            while (off < total) {
                size_t step = 1 + (size_t)rand() % (total / 3 + 2);
                size_t w = locus_dtype_pack(origin, count, dt, off, piece + off, step);
                if (w == 0 || w > step) {
                    ok = 0;
                    break;
                }
                off += w;
            }
            if (!ok || memcmp(piece, want, total)) {
                fprintf(stderr, "%s: piecewise pack of %zu differs\n", what, count);
                ok = 0;
            }
            /* Piecewise unpack vs the reference unpack. */
            memset(mem2, 0, span);
            memset(mem3, 0, span);
            r_unpack(origin3, count, rt, want);
            off = 0;
            while (off < total && ok) {
                size_t step = 1 + (size_t)rand() % (total / 2 + 2);
                if (step > total - off)
                    step = total - off;
                size_t w = locus_dtype_unpack(origin2, count, dt, off, want + off, step);
                if (w != step)
                    ok = 0;
                off += w;
            }
            if (!ok || memcmp(mem2, mem3, span)) {
                fprintf(stderr, "%s: piecewise unpack of %zu differs\n", what, count);
                ok = 0;
            }
        }
        CHECK(locus_dtype_pack(origin, count, dt, total, got, 10) == 0);
        free(mem);
        free(mem2);
        free(mem3);
        free(want);
        free(got);
        free(piece);
    }
    if (!ok) {
        failures++;
        fprintf(stderr, "FAIL %s\n", what);
    }
}

static void r_free(rtype_t *t)
{
    free(t->e);
}

/* ---- tests ---- */

static void test_basic(void)
{
    struct { locus_elem_t el; size_t size; } b[] = {
        {LOCUS_EL_BYTE, 1}, {LOCUS_EL_CHAR, 1}, {LOCUS_EL_SHORT, sizeof(short)},
        {LOCUS_EL_INT, sizeof(int)}, {LOCUS_EL_LONG, sizeof(long)},
        {LOCUS_EL_LLONG, sizeof(long long)}, {LOCUS_EL_FLOAT, 4}, {LOCUS_EL_DOUBLE, 8},
        {LOCUS_EL_LDOUBLE, sizeof(long double)}, {LOCUS_EL_INT8, 1}, {LOCUS_EL_UINT16, 2},
        {LOCUS_EL_INT32, 4}, {LOCUS_EL_UINT64, 8}, {LOCUS_EL_BOOL, sizeof(_Bool)},
        {LOCUS_EL_AINT, sizeof(void *)}, {LOCUS_EL_COUNT, 8}, {LOCUS_EL_OFFSET, 8},
    };
    for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
        locus_dtype_t *t = locus_dtype_basic(b[i].el);
        ptrdiff_t lb, ext;
        locus_dtype_extent(t, &lb, &ext);
        CHECK(t && locus_dtype_size(t) == b[i].size && lb == 0 && ext == (ptrdiff_t)b[i].size);
        CHECK(locus_dtype_is_contig(t) && locus_dtype_is_basic(t) && locus_dtype_is_committed(t));
        CHECK(locus_dtype_elem(t) == b[i].el);
        CHECK(locus_elem_size(b[i].el) == b[i].size);
        locus_dtype_release(t);   /* ignored for basic types */
        locus_dtype_retain(t);
    }
    for (int el = 0; el < LOCUS_EL_NKINDS; el++)
        CHECK(locus_dtype_basic((locus_elem_t)el) != NULL);
    CHECK(locus_dtype_basic(LOCUS_EL_MIXED) == NULL);
    CHECK(locus_dtype_basic(LOCUS_EL_NKINDS) == NULL);

    /* Pair types have the C struct layout. */
    struct si { short v; int i; };
    struct di { double v; int i; };
    struct ldi { long double v; int i; };
    struct fi { float v; int i; };
    locus_dtype_t *t = locus_dtype_basic(LOCUS_EL_SHORT_INT);
    ptrdiff_t lb, ext, tlb, text;
    locus_dtype_extent(t, &lb, &ext);
    locus_dtype_true_extent(t, &tlb, &text);
    CHECK(locus_dtype_size(t) == sizeof(short) + sizeof(int));
    CHECK(ext == sizeof(struct si) && tlb == 0 && text == (ptrdiff_t)sizeof(struct si));
    CHECK(!locus_dtype_is_contig(t));
    CHECK(locus_elem_extent(LOCUS_EL_SHORT_INT) == sizeof(struct si));
    CHECK(locus_elem_extent(LOCUS_EL_DOUBLE_INT) == sizeof(struct di));
    CHECK(locus_elem_extent(LOCUS_EL_LDOUBLE_INT) == sizeof(struct ldi));
    CHECK(locus_dtype_size(locus_dtype_basic(LOCUS_EL_DOUBLE_INT)) == 12);
    CHECK(locus_dtype_is_contig(locus_dtype_basic(LOCUS_EL_FLOAT_INT)));
    CHECK(locus_elem_extent(LOCUS_EL_FLOAT_INT) == sizeof(struct fi));
    /* Packing short_int skips the padding. */
    struct si arr[3] = {{1, 10}, {2, 20}, {3, 30}};
    char packed[18];
    CHECK(locus_dtype_pack(arr, 3, t, 0, packed, sizeof(packed)) == 18);
    short s;
    int v;
    memcpy(&s, packed + 6, 2);
    memcpy(&v, packed + 8, 4);
    CHECK(s == 2 && v == 20);
    CHECK(locus_dtype_count_elements(t, 18) == 6);
    CHECK(locus_dtype_count_elements(t, 8) == 3);
    CHECK(locus_dtype_count_elements(t, 7) == -1);
}

static void test_contiguous(void)
{
    locus_dtype_t *t;
    CHECK(locus_dtype_contiguous(5, locus_dtype_basic(LOCUS_EL_DOUBLE), &t) == 0);
    rtype_t d = r_basic(8);
    rtype_t r = r_hvector(5, 1, 8, &d);
    compare("contiguous(5,double)", t, &r);
    CHECK(locus_dtype_is_contig(t) && !locus_dtype_is_basic(t) && !locus_dtype_is_committed(t));
    CHECK(locus_dtype_elem(t) == LOCUS_EL_DOUBLE);
    locus_dtype_commit(t);
    CHECK(locus_dtype_is_committed(t));
    CHECK(locus_dtype_count_elements(t, 80) == 10 && locus_dtype_count_elements(t, 12) == -1);
    locus_dtype_t *t0;
    CHECK(locus_dtype_contiguous(0, locus_dtype_basic(LOCUS_EL_INT), &t0) == 0);
    CHECK(locus_dtype_size(t0) == 0);
    ptrdiff_t lb, ext;
    locus_dtype_extent(t0, &lb, &ext);
    CHECK(ext == 0);
    CHECK(locus_dtype_count_elements(t0, 0) == 0);
    locus_dtype_t *bad = NULL;
    /* A count whose extent overflows. */
    CHECK(locus_dtype_contiguous((size_t)1 << 62, locus_dtype_basic(LOCUS_EL_INT), &bad) ==
          LOCUS_DTYPE_ERANGE && bad == NULL);
    CHECK(locus_dtype_contiguous(1, NULL, &bad) == LOCUS_DTYPE_EARG && bad == NULL);
    /* retain/release: two references, freed after the second release (ASan
     * reports a leak or double free otherwise). */
    locus_dtype_retain(t);
    locus_dtype_release(t);
    locus_dtype_release(t);
    locus_dtype_release(t0);
    r_free(&d);
    r_free(&r);
}

static void test_vector(void)
{
    rtype_t ri = r_basic(4);
    locus_dtype_t *it = locus_dtype_basic(LOCUS_EL_INT);
    int cases[][3] = {{3, 2, 5}, {4, 1, 1}, {1, 3, 7}, {5, 2, -3}, {3, 2, 2}, {0, 2, 3}, {2, 0, 3}};
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        locus_dtype_t *t;
        /* MPI_Type_vector: stride in elements. */
        CHECK(locus_dtype_hvector(cases[c][0], cases[c][1], cases[c][2] * 4, it, &t) == 0);
        rtype_t r = r_hvector(cases[c][0], cases[c][1], cases[c][2] * 4, &ri);
        char name[64];
        snprintf(name, sizeof(name), "vector(%d,%d,%d)", cases[c][0], cases[c][1], cases[c][2]);
        compare(name, t, &r);
        locus_dtype_release(t);
        r_free(&r);
    }
    /* hvector with a byte stride that is not a multiple of the extent. */
    locus_dtype_t *t;
    CHECK(locus_dtype_hvector(4, 3, 13, locus_dtype_basic(LOCUS_EL_SHORT), &t) == 0);
    rtype_t rs = r_basic(2);
    rtype_t r = r_hvector(4, 3, 13, &rs);
    compare("hvector(4,3,13B,short)", t, &r);
    CHECK(!locus_dtype_is_contig(t));
    CHECK(locus_dtype_count_elements(t, 24) == 12);
    locus_dtype_release(t);
    r_free(&r);
    r_free(&rs);
    r_free(&ri);
}

static void test_indexed(void)
{
    rtype_t rd = r_basic(8);
    locus_dtype_t *dt = locus_dtype_basic(LOCUS_EL_DOUBLE);
    size_t bl[] = {2, 0, 1, 3, 1};
    ptrdiff_t d[] = {64, 0, -16, 16, 40};   /* bytes; out of order, overlapping none */
    locus_dtype_t *t;
    CHECK(locus_dtype_hindexed(5, bl, d, dt, &t) == 0);
    const rtype_t *os[] = {&rd, &rd, &rd, &rd, &rd};
    rtype_t r = r_general(5, bl, d, os, 0);
    compare("hindexed", t, &r);
    locus_dtype_release(t);
    r_free(&r);
    /* Indexed block (MPI_Type_create_indexed_block): equal block lengths,
     * displacements in elements; adjacent blocks merge. */
    size_t bl2[] = {2, 2, 2};
    ptrdiff_t d2[] = {0, 16, 48};
    CHECK(locus_dtype_hindexed(3, bl2, d2, dt, &t) == 0);
    r = r_general(3, bl2, d2, os, 0);
    compare("indexed_block", t, &r);
    locus_dtype_release(t);
    r_free(&r);
    r_free(&rd);
    CHECK(locus_dtype_hindexed(1, NULL, d, dt, &t) == LOCUS_DTYPE_EARG);
}

static void test_struct(void)
{
    /* struct { char c; double d; int i; } as a user would describe it. */
    struct s1 { char c; double d; int i; };
    size_t bl[] = {1, 1, 1};
    ptrdiff_t d[] = {offsetof(struct s1, c), offsetof(struct s1, d), offsetof(struct s1, i)};
    locus_dtype_t *ts[] = {locus_dtype_basic(LOCUS_EL_CHAR), locus_dtype_basic(LOCUS_EL_DOUBLE),
                           locus_dtype_basic(LOCUS_EL_INT)};
    locus_dtype_t *t;
    CHECK(locus_dtype_struct(3, bl, d, ts, &t) == 0);
    ptrdiff_t lb, ext;
    locus_dtype_extent(t, &lb, &ext);
    CHECK(lb == 0 && ext == (ptrdiff_t)sizeof(struct s1));   /* padded to 8 */
    CHECK(locus_dtype_size(t) == 13);
    CHECK(locus_dtype_elem(t) == LOCUS_EL_MIXED);
    rtype_t rc = r_basic(1), rd = r_basic(8), ri = r_basic(4);
    const rtype_t *os[] = {&rc, &rd, &ri};
    rtype_t r = r_general(3, bl, d, os, 1);
    compare("struct{char,double,int}", t, &r);
    /* Elements in a packed stream: 1 + 1 + 1 per struct; partial ones. */
    CHECK(locus_dtype_count_elements(t, 13) == 3);
    CHECK(locus_dtype_count_elements(t, 13 + 9) == 5);
    CHECK(locus_dtype_count_elements(t, 13 + 5) == -1);
    CHECK(locus_dtype_count_elements(t, 1) == 1);
    struct s1 a[2] = {{'x', 1.5, 7}, {'y', 2.5, 8}}, b[2];
    memset(b, 0, sizeof(b));
    char buf[26];
    CHECK(locus_dtype_pack(a, 2, t, 0, buf, sizeof(buf)) == 26);
    CHECK(locus_dtype_unpack(b, 2, t, 0, buf, 26) == 26);
    CHECK(b[1].c == 'y' && b[1].d == 2.5 && b[1].i == 8 && b[0].i == 7);

    /* Same-kind struct keeps the kind. */
    locus_dtype_t *t2, *ts2[] = {ts[2], ts[2]};
    CHECK(locus_dtype_struct(2, (size_t[]){1, 2}, (ptrdiff_t[]){0, 8}, ts2, &t2) == 0);
    CHECK(locus_dtype_elem(t2) == LOCUS_EL_INT);
    locus_dtype_release(t2);

    /* Nested: vector of the struct, struct of vectors, contiguous of a
     * resized struct. */
    locus_dtype_t *v, *rz, *c, *sv;
    CHECK(locus_dtype_hvector(3, 2, 3 * (ptrdiff_t)sizeof(struct s1), t, &v) == 0);
    rtype_t rv = r_hvector(3, 2, 3 * (ptrdiff_t)sizeof(struct s1), &r);
    compare("vector(struct)", v, &rv);
    CHECK(locus_dtype_resized(t, -8, 40, &rz) == 0);
    rtype_t rr = r;
    rr.e = malloc(r.n * sizeof(rent_t));
    memcpy(rr.e, r.e, r.n * sizeof(rent_t));
    rr.lb = -8;
    rr.extent = 40;
    rr.resized = 1;
    compare("resized(struct,-8,40)", rz, &rr);
    CHECK(!locus_dtype_is_contig(rz));
    CHECK(locus_dtype_contiguous(3, rz, &c) == 0);
    rtype_t rcc = r_hvector(3, 1, 40, &rr);
    compare("contiguous(resized)", c, &rcc);
    locus_dtype_t *ts3[] = {v, ts[0], rz};
    size_t bl3[] = {1, 3, 2};
    ptrdiff_t d3[] = {8, 0, 400};
    CHECK(locus_dtype_struct(3, bl3, d3, ts3, &sv) == 0);
    const rtype_t *os3[] = {&rv, &rc, &rr};
    rtype_t rsv = r_general(3, bl3, d3, os3, 1);
    compare("struct{vector,char,resized}", sv, &rsv);
    /* dup keeps layout. */
    locus_dtype_t *dp;
    CHECK(locus_dtype_dup(sv, &dp) == 0);
    compare("dup", dp, &rsv);
    /* Components can be freed before the types made from them. */
    locus_dtype_release(t);
    locus_dtype_release(rz);
    compare("vector(struct) after free", v, &rv);
    locus_dtype_release(v);
    locus_dtype_release(c);
    locus_dtype_release(sv);
    locus_dtype_release(dp);
    r_free(&r); r_free(&rv); r_free(&rr); r_free(&rcc); r_free(&rsv);
    r_free(&rc); r_free(&rd); r_free(&ri);

    /* struct {double; char}: extent padded from 9 to 16. */
    CHECK(locus_dtype_struct(2, (size_t[]){1, 1}, (ptrdiff_t[]){0, 8},
                             (locus_dtype_t *[]){ts[1], ts[0]}, &t) == 0);
    locus_dtype_extent(t, &lb, &ext);
    ptrdiff_t tlb, text;
    locus_dtype_true_extent(t, &tlb, &text);
    CHECK(ext == 16 && text == 9 && tlb == 0);
    locus_dtype_release(t);
    CHECK(locus_dtype_struct(1, (size_t[]){1}, (ptrdiff_t[]){0}, (locus_dtype_t *[]){NULL}, &t) ==
          LOCUS_DTYPE_EARG);
    /* An empty component adds nothing to the bounds; a resized empty one does. */
    locus_dtype_t *empty, *rempty, *ts4[2];
    CHECK(locus_dtype_contiguous(0, ts[1], &empty) == 0);
    CHECK(locus_dtype_resized(empty, -8, 24, &rempty) == 0);
    ts4[0] = empty;
    ts4[1] = ts[2];
    CHECK(locus_dtype_struct(2, (size_t[]){1, 1}, (ptrdiff_t[]){100, 4}, ts4, &t) == 0);
    locus_dtype_extent(t, &lb, &ext);
    CHECK(lb == 4 && ext == 4);
    locus_dtype_release(t);
    ts4[0] = rempty;
    CHECK(locus_dtype_struct(2, (size_t[]){1, 1}, (ptrdiff_t[]){100, 4}, ts4, &t) == 0);
    locus_dtype_extent(t, &lb, &ext);
    CHECK(lb == 4 && ext == 116 - 4);
    locus_dtype_release(t);
    locus_dtype_release(empty);
    locus_dtype_release(rempty);
    /* Empty struct. */
    CHECK(locus_dtype_struct(0, NULL, NULL, NULL, &t) == 0);
    CHECK(locus_dtype_size(t) == 0);
    locus_dtype_release(t);
}

static void test_resized(void)
{
    locus_dtype_t *t, *c;
    /* An int with extent 12: every third int of an array. */
    CHECK(locus_dtype_resized(locus_dtype_basic(LOCUS_EL_INT), 0, 12, &t) == 0);
    CHECK(locus_dtype_contiguous(4, t, &c) == 0);
    int a[12], out[4];
    for (int i = 0; i < 12; i++)
        a[i] = i;
    CHECK(locus_dtype_pack(a, 1, c, 0, out, sizeof(out)) == 16);
    CHECK(out[0] == 0 && out[1] == 3 && out[2] == 6 && out[3] == 9);
    CHECK(locus_dtype_pack(a, 4, t, 0, out, sizeof(out)) == 16 && out[3] == 9);
    ptrdiff_t lb, ext, tlb, text;
    locus_dtype_extent(c, &lb, &ext);
    locus_dtype_true_extent(c, &tlb, &text);
    CHECK(ext == 48 && text == 40 && lb == 0 && tlb == 0);
    CHECK(locus_dtype_elem(c) == LOCUS_EL_INT);
    rtype_t ri = r_basic(4);
    ri.extent = 12;
    rtype_t rc = r_hvector(4, 1, 12, &ri);
    compare("contiguous(resized int)", c, &rc);
    locus_dtype_release(t);
    locus_dtype_release(c);
    r_free(&ri);
    r_free(&rc);
}

/* Large vector: the representation must not be O(count) and pieces must be
 * cheap; checked for correctness here (time bounded by the ctest TIMEOUT). */
static void test_large(void)
{
    const int n = 1 << 20;
    locus_dtype_t *t;
    CHECK(locus_dtype_hvector(n, 1, 16, locus_dtype_basic(LOCUS_EL_DOUBLE), &t) == 0);
    double *src = malloc((size_t)n * 16), *packed = malloc((size_t)n * 8);
    for (int i = 0; i < 2 * n; i++)
        src[i] = i;
    size_t off = 0, total = (size_t)n * 8;
    while (off < total)
        off += locus_dtype_pack(src, 1, t, off, (char *)packed + off, 1000);
    int ok = 1;
    for (int i = 0; i < n; i++)
        ok &= packed[i] == 2.0 * i;
    CHECK(ok);
    CHECK(locus_dtype_count_elements(t, total) == n);
    free(src);
    free(packed);
    locus_dtype_release(t);
}

#define LEVELS_DEEP 16

static rtype_t r_resized(const rtype_t *o, ptrdiff_t lb, ptrdiff_t extent)
{
    rtype_t t = *o;
    t.e = malloc((o->n + 1) * sizeof(rent_t));
    memcpy(t.e, o->e, o->n * sizeof(rent_t));
    t.lb = lb;
    t.extent = extent;
    t.resized = 1;
    return t;
}

/* Repetitions of non-contiguous types nest as loops over one unit instead
 * of copying it per element (dtype_impl.h): every way of getting there --
 * contiguous, vector and hvector of vectors, resized and dup, one-block
 * hindexed and struct, negative strides, overlapping resized copies,
 * nestings deeper than the loops kept (unrolled into the unit) -- against
 * the reference. */
static void test_nested(void)
{
    locus_dtype_t *it = locus_dtype_basic(LOCUS_EL_INT);
    rtype_t ri = r_basic(4);
    locus_dtype_t *v, *c, *vv, *vvv, *rz, *crz, *dp, *hi, *st, *nv;
    CHECK(locus_dtype_hvector(3, 2, 20, it, &v) == 0);
    rtype_t rv = r_hvector(3, 2, 20, &ri);
    compare("vector(3,2,5 ints)", v, &rv);
    CHECK(locus_dtype_contiguous(3, v, &c) == 0);
    rtype_t rc = r_hvector(3, 1, rv.extent, &rv);
    compare("contiguous(3, vector)", c, &rc);
    CHECK(locus_dtype_hvector(2, 2, 200, v, &vv) == 0);
    rtype_t rvv = r_hvector(2, 2, 200, &rv);
    compare("hvector(2,2,200B, vector)", vv, &rvv);
    CHECK(locus_dtype_hvector(3, 1, -500, vv, &vvv) == 0);
    rtype_t rvvv = r_hvector(3, 1, -500, &rvv);
    compare("hvector(3,1,-500B, hvector(vector))", vvv, &rvvv);
    CHECK(locus_dtype_resized(v, 0, 8, &rz) == 0);   /* copies overlap */
    rtype_t rrz = r_resized(&rv, 0, 8);
    compare("resized(vector,0,8)", rz, &rrz);
    CHECK(locus_dtype_contiguous(4, rz, &crz) == 0);
    rtype_t rcrz = r_hvector(4, 1, 8, &rrz);
    compare("contiguous(4, resized(vector))", crz, &rcrz);
    CHECK(locus_dtype_dup(vvv, &dp) == 0);
    compare("dup(hvector(hvector(vector)))", dp, &rvvv);
    size_t bl1[] = {0, 3, 0};
    ptrdiff_t d1[] = {0, -44, 8};
    CHECK(locus_dtype_hindexed(3, bl1, d1, vv, &hi) == 0);
    const rtype_t *os1[] = {&rvv, &rvv, &rvv};
    rtype_t rhi = r_general(3, bl1, d1, os1, 0);
    compare("hindexed(one block of hvector(vector))", hi, &rhi);
    locus_dtype_t *ts[] = {rz, it};
    size_t bl2[] = {5, 0};
    ptrdiff_t d2[] = {12, 0};
    CHECK(locus_dtype_struct(2, bl2, d2, ts, &st) == 0);
    const rtype_t *os2[] = {&rrz, &ri};
    rtype_t rst = r_general(2, bl2, d2, os2, 1);
    compare("struct{5 resized(vector)}", st, &rst);
    CHECK(locus_dtype_count_elements(st, locus_dtype_size(st)) ==
          (long)(locus_dtype_size(st) / 4));
    CHECK(locus_dtype_count_elements(vvv, 2 * locus_dtype_size(vvv) + 8) ==
          (long)(2 * locus_dtype_size(vvv) / 4 + 2));
    CHECK(locus_dtype_elements_bytes(vvv, 7) == 28);

    /* Deeper than the loops kept: 2 copies per level, strides that do not
     * merge (a gap each time). */
    locus_dtype_t *cur = it;
    rtype_t rcur = r_basic(4), rnext;
    locus_dtype_retain(cur);
    for (int level = 0; level < LEVELS_DEEP; level++) {
        ptrdiff_t stride = rcur.extent + 4 * (level % 3 + 1);
        CHECK(locus_dtype_hvector(2, 1, stride, cur, &nv) == 0);
        rnext = r_hvector(2, 1, stride, &rcur);
        locus_dtype_release(cur);
        r_free(&rcur);
        cur = nv;
        rcur = rnext;
    }
    compare("hvector nested 16 deep", cur, &rcur);
    locus_dtype_release(cur);
    r_free(&rcur);

    /* Pair types (two signature runs in one block) repeated. */
    locus_dtype_t *pc, *pv, *si = locus_dtype_basic(LOCUS_EL_SHORT_INT);
    ptrdiff_t lb, ext;
    locus_dtype_extent(si, &lb, &ext);
    CHECK(locus_dtype_hvector(3, 2, 3 * ext, si, &pv) == 0);
    CHECK(locus_dtype_contiguous(2, pv, &pc) == 0);
    CHECK(locus_dtype_size(pc) == 12 * locus_dtype_size(si));
    CHECK(locus_dtype_count_elements(pc, locus_dtype_size(pc)) == 24);
    CHECK(locus_dtype_count_elements(pc, 3 * locus_dtype_size(si) + 2) == 7);
    CHECK(locus_dtype_elements_bytes(pc, 7) == (long long)(3 * locus_dtype_size(si) + 2));
    locus_dtype_release(pv);
    locus_dtype_release(pc);

    locus_dtype_t *all[] = {v, c, vv, vvv, rz, crz, dp, hi, st};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        locus_dtype_release(all[i]);
    rtype_t *rall[] = {&ri, &rv, &rc, &rvv, &rvvv, &rrz, &rcrz, &rhi, &rst};
    for (size_t i = 0; i < sizeof(rall) / sizeof(rall[0]); i++)
        r_free(rall[i]);
}

int main(void)
{
    srand(12345);
    test_basic();
    test_contiguous();
    test_vector();
    test_indexed();
    test_struct();
    test_resized();
    test_nested();
    test_large();
    if (failures) {
        printf(" Found %d errors\n", failures);
        return 1;
    }
    printf(" No Errors\n");
    return 0;
}
