/*
 * bins.c — the tables of the matching bins (the layout, its ordering
 * argument and the queue operations are in core_priv.h): contexts hashed
 * to bins, sources hashed to queues inside.
 *
 * Both tables are open-addressed with linear probing, at most half full,
 * and never delete in place: a bin is dropped only by a sweep that rebuilds
 * the context table, and a source queue lives as long as its bin.
 */
#include "core_priv.h"

#include <stdlib.h>

#define BINS_MIN 16u            /* smallest context table; sweep floor */
#define SRCS_MIN 8u             /* smallest source table of a bin */

/* Context ids and ranks are small dense integers, often strided (node
 * leaders every 16 ranks): mix them before masking so they spread. */
static inline uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

/* ---- source queues ------------------------------------------------------- */

locus_srcq_t *locus_srcq_lookup(locus_bin_t *b, int32_t src)
{
    if (!b->srcs)
        return NULL;
    for (uint32_t i = mix32((uint32_t)src) & b->src_mask;; i = (i + 1) & b->src_mask) {
        locus_srcq_t *q = b->srcs[i];
        if (!q)
            return NULL;
        if (q->src == src) {
            b->src_last = q;
            return q;
        }
    }
}

static void srcq_place(locus_srcq_t **t, uint32_t mask, locus_srcq_t *q)
{
    uint32_t i = mix32((uint32_t)q->src) & mask;
    while (t[i])
        i = (i + 1) & mask;
    t[i] = q;
}

locus_srcq_t *locus_srcq_add(locus_bin_t *b, int32_t src)
{
    locus_srcq_t *q;
    if (!b->srcs || 2 * ((uint32_t)b->nsrcs + 1) > b->src_mask + 1) {
        uint32_t cap = b->srcs ? 2 * (b->src_mask + 1) : SRCS_MIN;
        locus_srcq_t **t = calloc(cap, sizeof *t);
        if (!t)
            return NULL;
        for (uint32_t i = 0; b->srcs && i <= b->src_mask; i++)
            if (b->srcs[i])
                srcq_place(t, cap - 1, b->srcs[i]);
        free(b->srcs);
        b->srcs = t;
        b->src_mask = cap - 1;
    }
    if (!(q = calloc(1, sizeof *q)))
        return NULL;
    q->src = src;
    srcq_place(b->srcs, b->src_mask, q);
    b->nsrcs++;
    b->src_last = q;
    return q;
}

/* ---- bins ---------------------------------------------------------------- */

locus_bin_t *locus_bin_lookup(locus_core_t *c, uint32_t ctx)
{
    if (!c->bins)
        return NULL;
    for (uint32_t i = mix32(ctx) & c->bins_mask;; i = (i + 1) & c->bins_mask) {
        locus_bin_t *b = c->bins[i];
        if (!b)
            return NULL;
        if (b->ctx == ctx) {
            c->bin_last = b;
            return b;
        }
    }
}

static void bin_place(locus_bin_t **t, uint32_t mask, locus_bin_t *b)
{
    uint32_t i = mix32(b->ctx) & mask;
    while (t[i])
        i = (i + 1) & mask;
    t[i] = b;
}

static void bin_free(locus_bin_t *b)
{
    for (uint32_t i = 0; b->srcs && i <= b->src_mask; i++)
        free(b->srcs[i]);
    free(b->srcs);
    free(b);
}

static inline int bin_empty(const locus_bin_t *b)
{
    return !b->nposted && !b->nunexp;
}

/* Rebuilds the context table with room for `extra` more bins; `sweep`
 * drops the bins with nothing waiting (and shrinks the table to fit). */
static int bins_rebuild(locus_core_t *c, int sweep, int extra)
{
    uint32_t keep = 0, cap = BINS_MIN;
    for (uint32_t i = 0; c->bins && i <= c->bins_mask; i++)
        keep += c->bins[i] && !(sweep && bin_empty(c->bins[i]));
    while (cap < 2 * (keep + (uint32_t)extra))
        cap *= 2;
    locus_bin_t **t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (uint32_t i = 0; c->bins && i <= c->bins_mask; i++) {
        locus_bin_t *b = c->bins[i];
        if (!b)
            continue;
        if (sweep && bin_empty(b)) {
            if (c->bin_last == b)
                c->bin_last = NULL;
            bin_free(b);
            continue;
        }
        bin_place(t, cap - 1, b);
    }
    free(c->bins);
    c->bins = t;
    c->bins_mask = cap - 1;
    c->nbins = (int)keep;
    return 0;
}

locus_bin_t *locus_bin_get(locus_core_t *c, uint32_t ctx)
{
    locus_bin_t *b = locus_bin_find(c, ctx);
    if (b)
        return b;
    /* Context ids are never reused, so the bins of freed communicators
     * stay empty for good: drop the empty ones each time the table has
     * doubled since the last sweep (amortized O(1) per new bin). */
    if (c->nbins >= c->bins_sweep_at) {
        if (bins_rebuild(c, 1, 1))
            return NULL;
        c->bins_sweep_at = 2 * c->nbins > (int)BINS_MIN ? 2 * c->nbins : (int)BINS_MIN;
    } else if (2 * ((uint32_t)c->nbins + 1) > c->bins_mask + 1 && bins_rebuild(c, 0, 1)) {
        return NULL;
    }
    if (!(b = calloc(1, sizeof *b)))
        return NULL;
    b->ctx = ctx;
    bin_place(c->bins, c->bins_mask, b);
    c->nbins++;
    c->bin_last = b;
    return b;
}

void locus_bins_free(locus_core_t *c)
{
    for (uint32_t i = 0; c->bins && i <= c->bins_mask; i++) {
        locus_bin_t *b = c->bins[i];
        if (!b)
            continue;
        while (b->uhead) {
            locus_umsg_t *u = b->uhead;
            b->uhead = u->next;
            free(u);
        }
        bin_free(b);
    }
    free(c->bins);
    c->bins = NULL;
    c->bin_last = NULL;
    c->bins_mask = 0;
    c->nbins = c->bins_sweep_at = 0;
    c->nposted = c->nunexp = 0;
}
