/*
 * dtype_build.c — the type constructors. Each one describes its result
 * afresh (so a derived type never points at the types it was made from, and
 * MPI_Type_free of a component is always safe): one unit of blocks and the
 * loops that repeat it (dtype_impl.h). Repetitions of a type -- vector,
 * contiguous, resized, dup, a one-block indexed or struct -- take over its
 * unit and add loops around its own; only several blocks of non-contiguous
 * types are flattened into one unit.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dtype_impl.h"

/* Grows a block list and a signature while a constructor walks its inputs. */
typedef struct {
    locus_dblock_t *b;
    size_t nb, bcap;
    locus_dsig_t *s;
    size_t ns, scap;
    size_t bytes, nbasic;
    ptrdiff_t tlo, thi;       /* data bounds seen so far */
    int err;
} dbuild_t;

static void bld_block(dbuild_t *bd, ptrdiff_t off, size_t len)
{
    if (len == 0 || bd->err)
        return;
    if (bd->bytes == 0) {
        bd->tlo = off;
        bd->thi = off + (ptrdiff_t)len;
    } else {
        if (off < bd->tlo)
            bd->tlo = off;
        if (off + (ptrdiff_t)len > bd->thi)
            bd->thi = off + (ptrdiff_t)len;
    }
    bd->bytes += len;
    if (bd->nb > 0 && bd->b[bd->nb - 1].off + (ptrdiff_t)bd->b[bd->nb - 1].len == off) {
        bd->b[bd->nb - 1].len += len;
        return;
    }
    if (bd->nb == bd->bcap) {
        size_t cap = bd->bcap ? 2 * bd->bcap : 8;
        locus_dblock_t *nb = realloc(bd->b, cap * sizeof(*nb));
        if (!nb) {
            bd->err = LOCUS_DTYPE_ENOMEM;
            return;
        }
        bd->b = nb;
        bd->bcap = cap;
    }
    bd->b[bd->nb].off = off;
    bd->b[bd->nb].len = len;
    bd->nb++;
}

static void bld_sig(dbuild_t *bd, locus_elem_t kind, size_t count)
{
    if (count == 0 || bd->err)
        return;
    bd->nbasic += count;
    if (bd->ns > 0 && bd->s[bd->ns - 1].kind == kind) {
        bd->s[bd->ns - 1].count += count;
        return;
    }
    if (bd->ns == bd->scap) {
        size_t cap = bd->scap ? 2 * bd->scap : 4;
        locus_dsig_t *ns = realloc(bd->s, cap * sizeof(*ns));
        if (!ns) {
            bd->err = LOCUS_DTYPE_ENOMEM;
            return;
        }
        bd->s = ns;
        bd->scap = cap;
    }
    bd->s[bd->ns].kind = kind;
    bd->s[bd->ns].count = count;
    bd->ns++;
}

/* a*b, or a flagged ERANGE in the builder when it overflows. */
static ptrdiff_t bld_mul(dbuild_t *bd, ptrdiff_t a, ptrdiff_t b)
{
    ptrdiff_t r;
    if (__builtin_mul_overflow(a, b, &r)) {
        bd->err = LOCUS_DTYPE_ERANGE;
        return 0;
    }
    return r;
}

static ptrdiff_t bld_add(dbuild_t *bd, ptrdiff_t a, ptrdiff_t b)
{
    ptrdiff_t r;
    if (__builtin_add_overflow(a, b, &r)) {
        bd->err = LOCUS_DTYPE_ERANGE;
        return 0;
    }
    return r;
}

/* A size_t count as a ptrdiff_t (flagging ERANGE beyond PTRDIFF_MAX). */
static ptrdiff_t bld_count(dbuild_t *bd, size_t n)
{
    if (n > (size_t)PTRDIFF_MAX) {
        bd->err = LOCUS_DTYPE_ERANGE;
        return 0;
    }
    return (ptrdiff_t)n;
}

/* Offset of repetition r of t's unit from its element's origin: r's digits
 * in the mixed radix of the loop counts, innermost fastest. */
static ptrdiff_t rep_offset(const locus_dtype_t *t, size_t r)
{
    ptrdiff_t off = 0;
    for (int l = t->nloops - 1; l >= 0; l--) {
        off += (ptrdiff_t)(r % t->loops[l].count) * t->loops[l].stride;
        r /= t->loops[l].count;
    }
    return off;
}

/* Appends `count` consecutive elements of t whose origin is at disp, as
 * blocks (flattened: struct and indexed types of several blocks). */
static void bld_type(dbuild_t *bd, const locus_dtype_t *t, ptrdiff_t disp, size_t count)
{
    if (count == 0 || t->size == 0 || bd->err)
        return;
    if (locus_dtype_is_contig(t)) {
        size_t len = (size_t)bld_mul(bd, bld_count(bd, count), (ptrdiff_t)t->size);
        bld_block(bd, bld_add(bd, disp, t->true_lb), len);
    } else {
        bld_mul(bd, bld_count(bd, count), t->extent);   /* the last origin must fit */
        for (size_t e = 0; e < count && !bd->err; e++)
            for (size_t r = 0; r < t->nrep && !bd->err; r++) {
                ptrdiff_t base = disp + (ptrdiff_t)e * t->extent + rep_offset(t, r);
                for (size_t b = 0; b < t->nblocks; b++)
                    bld_block(bd, base + t->blocks[b].off, t->blocks[b].len);
            }
    }
    if (t->nsig == 1) {
        bld_sig(bd, t->sig[0].kind, count * t->nrep * t->sig[0].count);
        return;
    }
    for (size_t i = 0; i < count * t->nrep && !bd->err; i++)
        for (size_t s = 0; s < t->nsig; s++)
            bld_sig(bd, t->sig[s].kind, t->sig[s].count);
}

/* Loops of a type being built, outermost first. */
typedef struct {
    int n;
    locus_dloop_t l[2 * LOCUS_DTYPE_MAXLOOPS + 2];
} dloops_t;

static void loops_add(dloops_t *ls, size_t count, ptrdiff_t stride)
{
    ls->l[ls->n].count = count;
    ls->l[ls->n].stride = stride;
    ls->n++;
}

/* Starts an empty builder with `count` consecutive elements of t at disp
 * without copying t per element: t's unit (moved by disp) becomes the new
 * unit, inside a loop over the count and t's own loops. A contiguous t is
 * one block. */
static void bld_nest(dbuild_t *bd, const locus_dtype_t *t, ptrdiff_t disp, size_t count,
                     dloops_t *ls)
{
    if (count == 0 || t->size == 0 || bd->err)
        return;
    if (locus_dtype_is_contig(t)) {
        bld_type(bd, t, disp, count);
        return;
    }
    bld_mul(bd, bld_count(bd, count), t->extent);   /* the last origin must fit */
    for (size_t b = 0; b < t->nblocks; b++)
        bld_block(bd, bld_add(bd, disp, t->blocks[b].off), t->blocks[b].len);
    for (size_t s = 0; s < t->nsig; s++)
        bld_sig(bd, t->sig[s].kind, t->sig[s].count);
    loops_add(ls, count, t->extent);
    for (int l = 0; l < t->nloops; l++)
        loops_add(ls, t->loops[l].count, t->loops[l].stride);
}

/* Replaces the unit by `count` copies of it `stride` apart: how a loop
 * that does not fit in LOCUS_DTYPE_MAXLOOPS joins the unit. */
static void bld_unroll(dbuild_t *bd, size_t count, ptrdiff_t stride)
{
    size_t nb = bd->nb, ns = bd->ns;
    locus_dblock_t *b = malloc(nb * sizeof *b);
    locus_dsig_t *s = malloc(ns * sizeof *s);
    if (!b || !s) {
        bd->err = LOCUS_DTYPE_ENOMEM;
    } else {
        memcpy(b, bd->b, nb * sizeof *b);
        memcpy(s, bd->s, ns * sizeof *s);
        for (size_t c = 1; c < count && !bd->err; c++) {
            for (size_t i = 0; i < nb; i++)
                bld_block(bd, bld_add(bd, bld_mul(bd, (ptrdiff_t)c, stride), b[i].off),
                          b[i].len);
            for (size_t i = 0; i < ns; i++)
                bld_sig(bd, s[i].kind, s[i].count);
        }
    }
    free(b);
    free(s);
}

/* Drops loops of one copy, merges a loop with the one inside it when the
 * outer steps over the inner exactly, and turns an innermost loop over one
 * block laid right behind itself into a longer block (only for a one-run
 * signature, which stays one run), until nothing changes. */
static void loops_normalize(dbuild_t *bd, dloops_t *ls)
{
    int changed = 1;
    while (changed && !bd->err) {
        changed = 0;
        int n = 0;
        for (int i = 0; i < ls->n; i++)
            if (ls->l[i].count != 1)
                ls->l[n++] = ls->l[i];
        ls->n = n;
        for (int i = 0; i + 1 < ls->n; i++) {
            locus_dloop_t *o = &ls->l[i], *in = &ls->l[i + 1];
            ptrdiff_t span;
            size_t c;
            if (in->count <= (size_t)PTRDIFF_MAX &&
                !__builtin_mul_overflow((ptrdiff_t)in->count, in->stride, &span) &&
                span == o->stride && !__builtin_mul_overflow(o->count, in->count, &c)) {
                in->count = c;
                o->count = 1;
                changed = 1;
            }
        }
        locus_dloop_t *last = ls->n ? &ls->l[ls->n - 1] : NULL;
        if (last && bd->nb == 1 && bd->ns == 1 && last->stride == (ptrdiff_t)bd->b[0].len) {
            size_t len = (size_t)bld_mul(bd, bld_count(bd, last->count), last->stride);
            bd->b[0].len = len;
            bd->s[0].count *= last->count;
            bd->nbasic *= last->count;
            bd->bytes = len;
            bd->thi = bd->tlo + (ptrdiff_t)len;
            ls->n--;
            changed = 1;
        }
    }
    while (ls->n > LOCUS_DTYPE_MAXLOOPS && !bd->err) {
        ls->n--;
        bld_unroll(bd, ls->l[ls->n].count, ls->l[ls->n].stride);
    }
}

/* Turns the builder's unit, repeated by the loops ls, into a type. lb and
 * extent are the type bounds computed by the constructor. */
static int bld_finish(dbuild_t *bd, dloops_t *ls, ptrdiff_t lb, ptrdiff_t extent,
                      locus_elem_t elem, size_t align, int resized, locus_dtype_t **out)
{
    locus_dtype_t *dt = NULL;
    int err = LOCUS_DTYPE_ENOMEM;
    if (bd->nb == 0)
        ls->n = 0;
    loops_normalize(bd, ls);
    /* The copies of the unit, the data and the true bounds must fit. */
    size_t nrep = 1, total;
    ptrdiff_t lo = bd->tlo, hi = bd->thi;
    for (int l = 0; l < ls->n && !bd->err; l++) {
        if (__builtin_mul_overflow(nrep, ls->l[l].count, &nrep))
            bd->err = LOCUS_DTYPE_ERANGE;
        ptrdiff_t span = bld_mul(bd, bld_count(bd, ls->l[l].count - 1), ls->l[l].stride);
        if (span < 0)
            lo = bld_add(bd, lo, span);
        else
            hi = bld_add(bd, hi, span);
    }
    if (!bd->err && (__builtin_mul_overflow(bd->bytes, nrep, &total) || total > PTRDIFF_MAX))
        bd->err = LOCUS_DTYPE_ERANGE;
    if (!bd->err)
        bld_add(bd, hi, -lo);
    if (bd->err) {
        err = bd->err;
        goto fail;
    }
    dt = calloc(1, sizeof(*dt));
    if (!dt)
        goto fail;
    dt->prefix = malloc((bd->nb + 1) * sizeof(size_t));
    if (!dt->prefix)
        goto fail;
    dt->refs = 1;
    dt->elem = elem;
    dt->nrep = nrep;
    dt->nloops = ls->n;
    memcpy(dt->loops, ls->l, (size_t)ls->n * sizeof *ls->l);
    dt->nblocks = bd->nb;
    dt->blocks = bd->b;
    dt->nsig = bd->ns;
    dt->sig = bd->s;
    dt->unit_size = bd->bytes;
    dt->unit_nbasic = bd->nbasic;
    dt->size = total;
    dt->align = align ? align : 1;
    dt->resized = (unsigned char)resized;
    dt->lb = lb;
    dt->extent = extent;
    dt->prefix[0] = 0;
    for (size_t b = 0; b < bd->nb; b++)
        dt->prefix[b + 1] = dt->prefix[b] + bd->b[b].len;
    dt->true_lb = bd->nb ? lo : 0;
    dt->true_extent = bd->nb ? hi - lo : 0;
    *out = dt;
    return LOCUS_DTYPE_OK;
fail:
    if (dt)
        free(dt->prefix);
    free(dt);
    free(bd->b);
    free(bd->s);
    return err;
}

/* An empty type map (no data, bounds never set) adds nothing to the
 * bounds of a type made from it, as in MPI's definition. */
static int has_bounds(const locus_dtype_t *t)
{
    return t->size > 0 || t->resized;
}

/* Type bounds of `bl` consecutive elements of t placed at disp. */
static void span_of(dbuild_t *bd, const locus_dtype_t *t, ptrdiff_t disp, size_t bl,
                    ptrdiff_t *lo, ptrdiff_t *hi)
{
    ptrdiff_t last = bld_mul(bd, bld_count(bd, bl - 1), t->extent);
    ptrdiff_t base = bld_add(bd, disp, t->lb);
    *lo = bld_add(bd, base, last < 0 ? last : 0);
    *hi = bld_add(bd, bld_add(bd, base, t->extent), last > 0 ? last : 0);
}

static locus_elem_t elem_join(locus_elem_t a, locus_elem_t b, int first)
{
    if (first)
        return b;
    return a == b ? a : LOCUS_EL_MIXED;
}

int locus_dtype_hvector(size_t count, size_t blocklen, ptrdiff_t stride, locus_dtype_t *old,
                        locus_dtype_t **out)
{
    if (!old || !out)
        return LOCUS_DTYPE_EARG;
    dbuild_t bd = {0};
    dloops_t ls = {0};
    ptrdiff_t lb = 0, ub = 0;
    if (count > 0 && blocklen > 0 && has_bounds(old)) {
        ptrdiff_t lo0, hi0, lo1, hi1;
        span_of(&bd, old, 0, blocklen, &lo0, &hi0);
        span_of(&bd, old, bld_mul(&bd, bld_count(&bd, count - 1), stride), blocklen, &lo1, &hi1);
        lb = lo0 < lo1 ? lo0 : lo1;
        ub = hi0 > hi1 ? hi0 : hi1;
    }
    if (count > 0) {
        loops_add(&ls, count, stride);
        bld_nest(&bd, old, 0, blocklen, &ls);
    }
    return bld_finish(&bd, &ls, lb, bld_add(&bd, ub, -lb), old->elem, old->align, old->resized,
                      out);
}

int locus_dtype_contiguous(size_t count, locus_dtype_t *old, locus_dtype_t **out)
{
    if (!old)
        return LOCUS_DTYPE_EARG;
    return locus_dtype_hvector(count, 1, old->extent, old, out);
}

/* The one entry of a struct or indexed type that has data (types NULL:
 * all of type old), or -1 when none or several do (then the entries are
 * flattened into one unit). */
static ptrdiff_t data_entry(size_t count, const size_t *blocklens, locus_dtype_t *const *types,
                            const locus_dtype_t *old)
{
    ptrdiff_t one = -1;
    for (size_t i = 0; i < count; i++)
        if (blocklens[i] > 0 && (types ? types[i] : old)->size > 0) {
            if (one != -1)
                return -1;
            one = (ptrdiff_t)i;
        }
    return one;
}

int locus_dtype_struct(size_t count, const size_t *blocklens, const ptrdiff_t *displs,
                       locus_dtype_t *const *types, locus_dtype_t **out)
{
    if (!out || (count > 0 && (!blocklens || !displs || !types)))
        return LOCUS_DTYPE_EARG;
    for (size_t i = 0; i < count; i++)
        if (!types[i])
            return LOCUS_DTYPE_EARG;
    dbuild_t bd = {0};
    dloops_t ls = {0};
    ptrdiff_t lb = 0, ub = 0;
    locus_elem_t elem = LOCUS_EL_BYTE;
    size_t align = 1;
    int any = 0, resized = 0;
    ptrdiff_t one = data_entry(count, blocklens, types, NULL);
    for (size_t i = 0; i < count && !bd.err; i++) {
        const locus_dtype_t *t = types[i];
        if (blocklens[i] == 0 || !has_bounds(t))
            continue;
        if (one < 0)
            bld_type(&bd, t, displs[i], blocklens[i]);
        else if ((size_t)one == i)
            bld_nest(&bd, t, displs[i], blocklens[i], &ls);
        ptrdiff_t lo, hi;
        span_of(&bd, t, displs[i], blocklens[i], &lo, &hi);
        lb = (!any || lo < lb) ? lo : lb;
        ub = (!any || hi > ub) ? hi : ub;
        elem = elem_join(elem, t->elem, !any);
        if (t->align > align)
            align = t->align;
        resized |= t->resized;
        any = 1;
    }
    if (!any && count > 0)
        elem = types[0]->elem;
    /* Pad the extent to the strictest alignment inside, as the C compiler
     * pads a struct, so arrays of the type match arrays of the C struct.
     * Types whose bounds were set explicitly keep the user's choice. */
    ptrdiff_t extent = bld_add(&bd, ub, -lb);
    if (!resized && extent % (ptrdiff_t)align)
        extent += (ptrdiff_t)align - extent % (ptrdiff_t)align;
    return bld_finish(&bd, &ls, lb, extent, elem, align, resized, out);
}

int locus_dtype_hindexed(size_t count, const size_t *blocklens, const ptrdiff_t *displs,
                         locus_dtype_t *old, locus_dtype_t **out)
{
    if (!old || !out || (count > 0 && (!blocklens || !displs)))
        return LOCUS_DTYPE_EARG;
    dbuild_t bd = {0};
    dloops_t ls = {0};
    ptrdiff_t lb = 0, ub = 0;
    int any = 0;
    ptrdiff_t one = data_entry(count, blocklens, NULL, old);
    for (size_t i = 0; i < count && !bd.err; i++) {
        if (blocklens[i] == 0 || !has_bounds(old))
            continue;
        if (one < 0)
            bld_type(&bd, old, displs[i], blocklens[i]);
        else if ((size_t)one == i)
            bld_nest(&bd, old, displs[i], blocklens[i], &ls);
        ptrdiff_t lo, hi;
        span_of(&bd, old, displs[i], blocklens[i], &lo, &hi);
        lb = (!any || lo < lb) ? lo : lb;
        ub = (!any || hi > ub) ? hi : ub;
        any = 1;
    }
    return bld_finish(&bd, &ls, lb, bld_add(&bd, ub, -lb), old->elem, old->align,
                      old->resized, out);
}

int locus_dtype_resized(locus_dtype_t *old, ptrdiff_t lb, ptrdiff_t extent,
                        locus_dtype_t **out)
{
    if (!old || !out)
        return LOCUS_DTYPE_EARG;
    dbuild_t bd = {0};
    dloops_t ls = {0};
    bld_nest(&bd, old, 0, 1, &ls);
    return bld_finish(&bd, &ls, lb, extent, old->elem, old->align, 1, out);
}

int locus_dtype_dup(locus_dtype_t *old, locus_dtype_t **out)
{
    if (!old || !out)
        return LOCUS_DTYPE_EARG;
    dbuild_t bd = {0};
    dloops_t ls = {0};
    bld_nest(&bd, old, 0, 1, &ls);
    int rc = bld_finish(&bd, &ls, old->lb, old->extent, old->elem, old->align, old->resized,
                        out);
    if (rc == 0)
        (*out)->committed = old->committed;
    return rc;
}

void locus_dtype_commit(locus_dtype_t *dt)
{
    if (dt)
        dt->committed = 1;
}

int locus_dtype_is_committed(const locus_dtype_t *dt)
{
    return dt && dt->committed;
}

int locus_dtype_is_basic(const locus_dtype_t *dt)
{
    return dt && dt->basic;
}

void locus_dtype_retain(locus_dtype_t *dt)
{
    if (dt && !dt->basic)
        __atomic_add_fetch(&dt->refs, 1, __ATOMIC_RELAXED);
}

void locus_dtype_release(locus_dtype_t *dt)
{
    if (!dt || dt->basic)
        return;
    if (__atomic_sub_fetch(&dt->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        if (dt->owner_gone)
            dt->owner_gone(dt->owner);
        free(dt->blocks);
        free(dt->prefix);
        free(dt->sig);
        free(dt);
    }
}

void locus_dtype_set_owner(locus_dtype_t *dt, void *owner, void (*gone)(void *owner))
{
    dt->owner = owner;
    dt->owner_gone = gone;
}

void *locus_dtype_owner(const locus_dtype_t *dt)
{
    return dt ? dt->owner : NULL;
}
