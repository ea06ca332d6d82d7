/*
 * test_core_match.c — matching: non-overtaking per source and context
 * across eager and rendezvous, the oldest match for wildcards (posted and
 * unexpected), truncation, cancel, iprobe, contexts kept apart, bins of
 * idle contexts dropped, non-contiguous receives.
 */
#include <stdlib.h>
#include <string.h>

#include "rig.h"

#define EAGER 64
#define BIG 300                 /* > EAGER: rendezvous */

/* Injects message `seed` from src: eager or rendezvous by its size. */
static void inject_seed(rig_t *t, int src, uint32_t ctx, int tag, int seed, size_t len)
{
    char buf[BIG];
    rig_fill(buf, len, seed);
    rig_inject(t, src, ctx, tag, 0, 0, buf, len);
}

/* Checks a completed receive got message `seed` of len bytes from src/tag. */
static void expect(rig_t *t, locus_req_t *r, const char *buf, int src, int tag, int seed,
                   size_t len, const char *what)
{
    CHECK(r->done, "%s: not complete", what);
    if (!r->done)
        return;
    CHECK(r->st_error == 0, "%s: error %d", what, r->st_error);
    CHECK(r->st_source == src && r->st_tag == tag, "%s: got source %d tag %d, want %d/%d", what,
          r->st_source, r->st_tag, src, tag);
    CHECK(r->st_bytes == len && rig_is(buf, len, seed), "%s: got %zu bytes, want message %d", what,
          r->st_bytes, seed);
    rig_put(t, r);
}

/* Four messages from one source, eager and rendezvous mixed, received in
 * the three orders: all unexpected, all posted first, half and half. */
static void order_per_source(void)
{
    static const size_t len[4] = {8, BIG, 16, BIG - 1};
    for (int mode = 0; mode < 3; mode++) {
        rig_t t;
        rig_open(&t, 4, EAGER);
        char buf[4][BIG];
        locus_req_t *r[4];
        int posted_first = mode == 1 ? 4 : mode == 2 ? 2 : 0;
        for (int i = 0; i < posted_first; i++)
            r[i] = rig_recv(&t, 7, 1, 5, buf[i], BIG);
        for (int i = 0; i < 4; i++)
            inject_seed(&t, 1, 7, 5, i, len[i]);
        rig_drain(&t);
        CHECK(t.c.nunexp == 4 - posted_first, "mode %d: %ld unexpected", mode, t.c.nunexp);
        for (int i = posted_first; i < 4; i++)
            r[i] = rig_recv(&t, 7, 1, 5, buf[i], BIG);
        rig_drain(&t);
        for (int i = 0; i < 4; i++)
            expect(&t, r[i], buf[i], 1, 5, i, len[i], "order");
        CHECK(t.c.nposted == 0 && t.c.nunexp == 0, "mode %d: queues not empty", mode);
        rig_close(&t);
    }
}

/* Two sources interleaved: each keeps its own order, neither blocks the other. */
static void order_two_sources(void)
{
    rig_t t;
    rig_open(&t, 4, EAGER);
    for (int i = 0; i < 6; i++)
        inject_seed(&t, 1 + i % 2, 3, 0, i, i % 3 == 2 ? BIG : 10);
    rig_drain(&t);
    char buf[BIG];
    for (int src = 2; src >= 1; src--) {
        for (int i = src - 1; i < 6; i += 2) {
            locus_req_t *r = rig_recv(&t, 3, src, 0, buf, BIG);
            rig_drain(&t);
            expect(&t, r, buf, src, 0, i, i % 3 == 2 ? BIG : 10, "two sources");
        }
    }
    rig_close(&t);
}

/* Unexpected messages: a wildcard receive takes the oldest that matches,
 * across sources. */
static void wildcard_unexpected(void)
{
    rig_t t;
    rig_open(&t, 4, EAGER);
    inject_seed(&t, 2, 9, 7, 0, 4);
    inject_seed(&t, 1, 9, 8, 1, BIG);
    inject_seed(&t, 2, 9, 9, 2, 4);
    inject_seed(&t, 1, 9, 7, 3, 4);
    inject_seed(&t, 3, 9, 8, 4, 4);
    rig_drain(&t);
    char buf[BIG];
    locus_req_t *r = rig_recv(&t, 9, LOCUS_ANY, LOCUS_ANY, buf, BIG);
    expect(&t, r, buf, 2, 7, 0, 4, "any/any");
    r = rig_recv(&t, 9, LOCUS_ANY, 7, buf, BIG);
    expect(&t, r, buf, 1, 7, 3, 4, "any/7");
    r = rig_recv(&t, 9, 2, LOCUS_ANY, buf, BIG);
    expect(&t, r, buf, 2, 9, 2, 4, "2/any");
    r = rig_recv(&t, 9, LOCUS_ANY, 8, buf, BIG);
    rig_drain(&t);
    expect(&t, r, buf, 1, 8, 1, BIG, "any/8 (rendezvous)");
    r = rig_recv(&t, 9, LOCUS_ANY, LOCUS_ANY, buf, BIG);
    expect(&t, r, buf, 3, 8, 4, 4, "any/any last");
    rig_close(&t);
}

/* Posted receives: an arriving message takes the oldest matching one,
 * whether posted for its source or for any source, tags wildcard or not. */
static void wildcard_posted(void)
{
    rig_t t;
    rig_open(&t, 4, EAGER);
    char b[7][BIG];
    locus_req_t *a = rig_recv(&t, 4, 1, 5, b[0], BIG);
    locus_req_t *w = rig_recv(&t, 4, LOCUS_ANY, 5, b[1], BIG);
    locus_req_t *aa = rig_recv(&t, 4, LOCUS_ANY, LOCUS_ANY, b[2], BIG);
    locus_req_t *s = rig_recv(&t, 4, 1, LOCUS_ANY, b[3], BIG);
    inject_seed(&t, 1, 4, 5, 0, 8);     /* a, older than w */
    inject_seed(&t, 2, 4, 5, 1, BIG);   /* w: nothing for source 2 */
    inject_seed(&t, 1, 4, 6, 2, 8);     /* aa, older than s */
    inject_seed(&t, 1, 4, 5, 3, 8);     /* s */
    rig_drain(&t);
    expect(&t, a, b[0], 1, 5, 0, 8, "source-specific first");
    expect(&t, w, b[1], 2, 5, 1, BIG, "wildcard source");
    expect(&t, aa, b[2], 1, 6, 2, 8, "older wildcard wins");
    expect(&t, s, b[3], 1, 5, 3, 8, "source queue after the wildcard");

    /* A wildcard posted before a tag-mismatched one and after a source match. */
    locus_req_t *w9 = rig_recv(&t, 4, LOCUS_ANY, 9, b[4], BIG);
    locus_req_t *s1 = rig_recv(&t, 4, 1, LOCUS_ANY, b[5], BIG);
    locus_req_t *w2 = rig_recv(&t, 4, LOCUS_ANY, LOCUS_ANY, b[6], BIG);
    inject_seed(&t, 1, 4, 3, 4, 8);     /* s1: w9's tag differs, w2 is younger */
    inject_seed(&t, 1, 4, 9, 5, 8);     /* w9 */
    inject_seed(&t, 1, 4, 4, 6, 8);     /* w2 */
    rig_drain(&t);
    expect(&t, s1, b[5], 1, 3, 4, 8, "source match before a younger wildcard");
    expect(&t, w9, b[4], 1, 9, 5, 8, "tag-specific wildcard");
    expect(&t, w2, b[6], 1, 4, 6, 8, "last wildcard");
    CHECK(t.c.nposted == 0 && t.c.nunexp == 0, "queues not empty");
    rig_close(&t);
}

/* A message larger than the receive: the first bytes, LOCUS_ERR_TRUNCATE,
 * nothing written beyond; eager and rendezvous, posted and unexpected. */
static void truncation(void)
{
    for (int mode = 0; mode < 4; mode++) {
        rig_t t;
        rig_open(&t, 2, EAGER);
        size_t len = mode & 1 ? BIG : 40, cap = mode & 1 ? 100 : 6;
        char buf[BIG + 8], want[BIG];
        memset(buf, 0xee, sizeof buf);
        rig_fill(want, len, 42);
        locus_req_t *r = NULL;
        if (mode & 2)
            r = rig_recv(&t, 1, 1, 0, buf, cap);
        rig_inject(&t, 1, 1, 0, 0, 0, want, len);
        rig_drain(&t);
        if (!(mode & 2))
            r = rig_recv(&t, 1, 1, 0, buf, cap);
        rig_drain(&t);
        CHECK(r->done && r->st_error == LOCUS_ERR_TRUNCATE, "mode %d: error %d", mode,
              r->st_error);
        CHECK(r->st_bytes == cap, "mode %d: %zu bytes", mode, r->st_bytes);
        CHECK(memcmp(buf, want, cap) == 0, "mode %d: data", mode);
        int clean = 1;
        for (size_t i = cap; i < sizeof buf; i++)
            clean &= (unsigned char)buf[i] == 0xee;
        CHECK(clean, "mode %d: wrote beyond the receive", mode);
        rig_put(&t, r);
        rig_close(&t);
    }
}

/* Cancel takes a posted receive out (it never matches afterwards); a
 * matched one cannot be cancelled. */
static void cancel(void)
{
    rig_t t;
    rig_open(&t, 3, EAGER);
    char buf[BIG];
    locus_req_t *r = rig_recv(&t, 2, 1, 5, buf, BIG);
    locus_req_t *w = rig_recv(&t, 2, LOCUS_ANY, LOCUS_ANY, buf, BIG);
    CHECK(locus_core_cancel(&t.c, r) == 1, "cancel of a posted receive");
    CHECK(locus_core_cancel(&t.c, w) == 1, "cancel of a posted wildcard receive");
    CHECK(r->done && r->st_cancelled && w->done && w->st_cancelled, "cancelled status");
    CHECK(t.c.nposted == 0, "%ld still posted", t.c.nposted);
    rig_put(&t, r);
    rig_put(&t, w);
    inject_seed(&t, 1, 2, 5, 0, 8);
    rig_drain(&t);
    CHECK(t.c.nunexp == 1, "the message matched a cancelled receive");
    r = rig_recv(&t, 2, 1, 5, buf, BIG);
    CHECK(locus_core_cancel(&t.c, r) == 0, "cancel of a matched receive");
    expect(&t, r, buf, 1, 5, 0, 8, "after cancel");
    rig_close(&t);
}

/* A message on context A never matches a receive on B, wildcards included. */
static void contexts_apart(void)
{
    rig_t t;
    rig_open(&t, 3, EAGER);
    char ba[BIG], bb[BIG], bw[BIG];
    inject_seed(&t, 1, 100, 1, 0, 8);
    rig_drain(&t);
    locus_req_t *rb = rig_recv(&t, 101, 1, 1, bb, BIG);
    locus_req_t *rw = rig_recv(&t, 102, LOCUS_ANY, LOCUS_ANY, bw, BIG);
    CHECK(!rb->done && !rw->done, "a receive matched another context's message");
    int src, tag;
    size_t bytes;
    CHECK(!locus_core_iprobe(&t.c, 101, LOCUS_ANY, LOCUS_ANY, &src, &tag, &bytes),
          "iprobe saw another context's message");
    CHECK(locus_core_iprobe(&t.c, 100, 1, 1, &src, &tag, &bytes), "iprobe on the context");
    inject_seed(&t, 1, 101, 1, 1, 8);
    inject_seed(&t, 2, 102, 3, 2, BIG);
    rig_drain(&t);
    expect(&t, rb, bb, 1, 1, 1, 8, "context B");
    expect(&t, rw, bw, 2, 3, 2, BIG, "context C wildcard");
    locus_req_t *ra = rig_recv(&t, 100, LOCUS_ANY, LOCUS_ANY, ba, BIG);
    expect(&t, ra, ba, 1, 1, 0, 8, "context A");
    rig_close(&t);
}

/* iprobe reports the oldest match without taking it. */
static void iprobe(void)
{
    rig_t t;
    rig_open(&t, 4, EAGER);
    inject_seed(&t, 2, 5, 4, 0, 10);
    inject_seed(&t, 1, 5, 3, 1, BIG);
    rig_drain(&t);
    int src = -9, tag = -9;
    size_t bytes = 0;
    for (int k = 0; k < 2; k++) {
        CHECK(locus_core_iprobe(&t.c, 5, LOCUS_ANY, LOCUS_ANY, &src, &tag, &bytes) &&
                  src == 2 && tag == 4 && bytes == 10,
              "probe %d: %d/%d/%zu", k, src, tag, bytes);
    }
    CHECK(locus_core_iprobe(&t.c, 5, 1, LOCUS_ANY, &src, &tag, &bytes) && src == 1 &&
              tag == 3 && bytes == BIG, "probe source 1: %d/%d/%zu", src, tag, bytes);
    CHECK(locus_core_iprobe(&t.c, 5, LOCUS_ANY, 3, &src, &tag, &bytes) && src == 1,
          "probe tag 3: %d", src);
    CHECK(!locus_core_iprobe(&t.c, 5, 3, LOCUS_ANY, &src, &tag, &bytes), "probe source 3");
    CHECK(!locus_core_iprobe(&t.c, 5, 2, 3, &src, &tag, &bytes), "probe 2/3");
    char buf[BIG];
    locus_req_t *r = rig_recv(&t, 5, LOCUS_ANY, LOCUS_ANY, buf, BIG);
    expect(&t, r, buf, 2, 4, 0, 10, "after probe");
    r = rig_recv(&t, 5, LOCUS_ANY, LOCUS_ANY, buf, BIG);
    rig_drain(&t);
    expect(&t, r, buf, 1, 3, 1, BIG, "after probe, rendezvous");
    CHECK(!locus_core_iprobe(&t.c, 5, LOCUS_ANY, LOCUS_ANY, &src, &tag, &bytes), "empty");
    rig_close(&t);
}

/* Thousands of short-lived contexts (communicators created and freed): the
 * bins of idle ones are dropped, the ones with something waiting kept. */
static void bins_dropped(void)
{
    rig_t t;
    rig_open(&t, 2, EAGER);
    char keep_u[BIG], keep_p[BIG], buf[BIG];
    inject_seed(&t, 1, 50, 0, 7, 8);
    rig_drain(&t);
    locus_req_t *kp = rig_recv(&t, 51, 1, 0, keep_p, BIG);
    int most = 0;
    for (uint32_t ctx = 1000; ctx < 6000; ctx++) {
        inject_seed(&t, 1, ctx, 0, (int)ctx, 8);
        rig_drain(&t);
        locus_req_t *r = rig_recv(&t, ctx, LOCUS_ANY, 0, buf, BIG);
        if (!r->done || !rig_is(buf, 8, (int)ctx)) {
            CHECK(0, "context %u", ctx);
            break;
        }
        rig_put(&t, r);
        r = rig_recv(&t, ctx + 10000, 1, 0, buf, BIG);  /* posted first */
        inject_seed(&t, 1, ctx + 10000, 0, 1, 8);
        rig_drain(&t);
        CHECK(r->done, "context %u posted", ctx + 10000);
        rig_put(&t, r);
        if (t.c.nbins > most)
            most = t.c.nbins;
    }
    CHECK(most <= 64, "%d bins for 2 busy contexts", most);
    locus_req_t *ku = rig_recv(&t, 50, 1, 0, keep_u, BIG);
    expect(&t, ku, keep_u, 1, 0, 7, 8, "kept unexpected");
    inject_seed(&t, 1, 51, 0, 8, 8);
    rig_drain(&t);
    expect(&t, kp, keep_p, 1, 0, 8, 8, "kept posted");
    rig_close(&t);
}

/* Many sources in one context: arrival order for wildcards, per-source
 * order for specific receives, through the source table's growth. */
static void many_sources(void)
{
    enum { N = 1000 };
    rig_t t;
    rig_open(&t, N + 1, EAGER);
    for (int i = 0; i < 2 * N; i++)
        inject_seed(&t, N - i % N, 6, 0, i, 4);
    rig_drain(&t);
    char buf[8];
    for (int i = 0; i < N; i++) {
        locus_req_t *r = rig_recv(&t, 6, LOCUS_ANY, 0, buf, sizeof buf);
        expect(&t, r, buf, N - i, 0, i, 4, "many sources, wildcard");
    }
    for (int s = 1; s <= N; s++) {
        locus_req_t *r = rig_recv(&t, 6, s, 0, buf, sizeof buf);
        expect(&t, r, buf, s, 0, 2 * N - s, 4, "many sources, specific");
    }
    CHECK(t.c.nunexp == 0, "%ld left", t.c.nunexp);
    rig_close(&t);
}

/* A strided receive unpacks eager and rendezvous data and holds its
 * datatype until done (the caller drops its reference at once). */
static void noncontig(void)
{
    rig_t t;
    rig_open(&t, 2, EAGER);
    locus_dtype_t *vec;
    /* 50 blocks of 2 bytes every 4 bytes: 100 bytes of data. */
    if (locus_dtype_hvector(50, 2, 4, locus_dtype_basic(LOCUS_EL_BYTE), &vec))
        abort();
    locus_dtype_commit(vec);
    for (int big = 0; big < 2; big++) {
        size_t len = big ? 100 : 40;
        char src[100], dst[200];
        rig_fill(src, len, 3 + big);
        memset(dst, 0, sizeof dst);
        locus_req_t *r = locus_core_req_get(&t.c);
        r->ctx = 1;
        r->rank = 1;
        r->tag = 0;
        r->len = 100;
        r->ubuf = dst;
        r->ucount = 1;
        r->udt = vec;
        locus_core_irecv(&t.c, r);
        rig_inject(&t, 1, 1, 0, 0, 0, src, len);
        rig_drain(&t);
        CHECK(r->done && r->st_bytes == len && r->udt == NULL, "strided %d", big);
        int ok = 1;
        for (size_t i = 0; i < len; i++)
            ok &= dst[(i / 2) * 4 + i % 2] == src[i];
        CHECK(ok, "strided %d: data", big);
        rig_put(&t, r);
    }
    locus_dtype_release(vec);
    rig_close(&t);
}

void test_match(void)
{
    order_per_source();
    order_two_sources();
    wildcard_unexpected();
    wildcard_posted();
    truncation();
    cancel();
    contexts_apart();
    iprobe();
    bins_dropped();
    many_sources();
    noncontig();
}
