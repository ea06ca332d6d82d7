/*
 * test_ofi_compact — the compact form of the ofi transport's eager
 * messages (src/transport/ofi/ofi_compact.c) without a provider: headers
 * packed into a tag and CQ data and back to the same bytes, at the
 * fields' limits and past them; arrivals out of turn held and handed to
 * the core in order (with the sequence number wrapping round); malformed
 * ones and one behind its turn failing the transport with a reason.
 */
#include "ofi_tp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                      \
    do {                                                      \
        if (!(cond)) {                                        \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                     \
            fputc('\n', stderr);                              \
            failures++;                                       \
        }                                                     \
    } while (0)

/* What the core was handed, in order. */
typedef struct {
    int src;
    uint32_t hdr[4];
    size_t hdrlen, len;
    char data[64];
} got_t;

static got_t got[16];
static int ngot;

static void deliver(void *core, int src, const void *hdr, size_t hdrlen, const void *data,
                    size_t len)
{
    (void)core;
    if (ngot == 16 || hdrlen != 16 || len > sizeof got[0].data) {
        failures++;
        fprintf(stderr, "FAIL: unexpected delivery (hdrlen %zu, len %zu)\n", hdrlen, len);
        return;
    }
    got_t *g = &got[ngot++];
    g->src = src;
    memcpy(g->hdr, hdr, sizeof g->hdr);
    g->hdrlen = hdrlen;
    g->len = len;
    memcpy(g->data, data, len);
}

static void rndv_arrived(void *core, int src, const void *hdr, size_t hdrlen, size_t len,
                         locus_tp_rndv_t *rndv)
{
    (void)core, (void)src, (void)hdr, (void)hdrlen, (void)len, (void)rndv;
    failures++;
    fprintf(stderr, "FAIL: a compact message announced as large\n");
}

static const locus_tp_upcalls_t ups = { .deliver = deliver, .rndv_arrived = rndv_arrived };

static ofi_tp_t *tp_new(int size)
{
    ofi_tp_t *tp = calloc(1, sizeof *tp);
    tp->rank = 0;
    tp->size = size;
    tp->up = &ups;
    tp->bufsize = 4096;
    tp->peers = calloc((size_t)size, sizeof *tp->peers);
    return tp;
}

static void tp_free(ofi_tp_t *tp)
{
    for (int i = 0; i < tp->size; i++)
        while (tp->peers[i].held) {
            ofi_held_t *h = tp->peers[i].held;
            tp->peers[i].held = h->next;
            free(h);
        }
    free(tp->peers);
    free(tp);
}

/* A compact message from src, as the provider's completion would say it;
 * the buffer is scribbled over afterwards, as a reposted buffer would be. */
static void arrive(ofi_tp_t *tp, int src, uint32_t seq, const uint32_t w[4], const char *text,
                   uint64_t flags)
{
    char mem[64];
    ofi_buf_t b = { .kind = OFI_CTX_RX, .compact = 1, .mem = mem };
    struct fi_cq_tagged_entry e = { .op_context = &b, .flags = flags, .len = strlen(text) };
    memcpy(mem, text, e.len);
    CHECK(ofi_compact_pack(w, src, seq, &e.tag, &e.data), "pack of seq %u from %d", seq, src);
    ofi_compact_arrived(tp, &b, &e);
    memset(mem, 'x', sizeof mem);
}

static void test_pack_limits(void)
{
    uint32_t lim[4] = { (1u << 30) - 1, OFI_COMPACT_RANKS - 1, 0xffffffffu, 0 };
    uint64_t tag, data;
    CHECK(ofi_compact_pack(lim, OFI_COMPACT_RANKS - 1, 0xfffffffeu, &tag, &data), "limits");
    CHECK((tag & OFI_COMPACT_TAG) == OFI_COMPACT_TAG, "tag 0x%llx lacks the two bits",
          (unsigned long long)tag);
    uint32_t back[4], rank, low;
    ofi_compact_unpack(tag, data, back, &rank, &low);
    CHECK(!memcmp(back, lim, sizeof lim), "words back %x %x %x %x", back[0], back[1], back[2],
          back[3]);
    CHECK(rank == OFI_COMPACT_RANKS - 1 && low == (0xfffffffeu & ((1u << 22) - 1)),
          "rank %u, seq low bits 0x%x", rank, low);
    const uint32_t nofit[][4] = { { 1u << 30, 0, 0, 0 }, { 0, OFI_COMPACT_RANKS, 0, 0 },
                                  { 0, 0, 0, 1 }, { 0, 0xffffffffu, 0, 0 } };
    for (size_t i = 0; i < sizeof nofit / sizeof nofit[0]; i++)
        CHECK(!ofi_compact_pack(nofit[i], 0, 0, &tag, &data), "header %zu packed", i);
    CHECK(!ofi_compact_pack(lim, OFI_COMPACT_RANKS, 0, &tag, &data), "rank 2^21 packed");
}

static void test_order(void)
{
    ofi_tp_t *tp = tp_new(4);
    const uint32_t w[4] = { 7, 3, 42, 0 };
    ngot = 0;
    arrive(tp, 2, 0, w, "first", FI_TAGGED | FI_RECV | FI_REMOTE_CQ_DATA);
    CHECK(ngot == 1 && got[0].src == 2 && !memcmp(got[0].hdr, w, sizeof w) &&
              got[0].len == 5 && !memcmp(got[0].data, "first", 5),
          "in turn: %d deliveries", ngot);
    /* 2 and 3 come before 1: held, then all three in order. */
    arrive(tp, 2, 2, w, "third", FI_TAGGED | FI_RECV | FI_REMOTE_CQ_DATA);
    arrive(tp, 2, 3, w, "fourth!", FI_TAGGED | FI_RECV | FI_REMOTE_CQ_DATA);
    CHECK(ngot == 1 && tp->peers[2].held, "ahead of turn: %d deliveries", ngot);
    arrive(tp, 2, 1, w, "second", FI_TAGGED | FI_RECV | FI_REMOTE_CQ_DATA);
    const char *want[] = { "first", "second", "third", "fourth!" };
    CHECK(ngot == 4 && !tp->peers[2].held && tp->peers[2].rx_seq == 4, "%d deliveries", ngot);
    for (int i = 0; i < ngot && i < 4; i++)
        CHECK(got[i].len == strlen(want[i]) && !memcmp(got[i].data, want[i], got[i].len) &&
                  !memcmp(got[i].hdr, w, sizeof w) && got[i].src == 2,
              "delivery %d: %.*s", i, (int)got[i].len, got[i].data);
    CHECK(!tp->failed, "failed: %s", tp->errmsg);
    tp_free(tp);
}

static void test_wrap(void)
{
    ofi_tp_t *tp = tp_new(2);
    tp->peers[1].rx_seq = 0xfffffffeu;
    const uint32_t w[4] = { 1, 0, 5, 0 };
    ngot = 0;
    arrive(tp, 1, 0u, w, "c", FI_TAGGED | FI_RECV | FI_REMOTE_CQ_DATA); /* 2 ahead */
    arrive(tp, 1, 0xfffffffeu, w, "a", FI_TAGGED | FI_RECV | FI_REMOTE_CQ_DATA);
    arrive(tp, 1, 0xffffffffu, w, "b", FI_TAGGED | FI_RECV | FI_REMOTE_CQ_DATA);
    CHECK(ngot == 3 && got[0].data[0] == 'a' && got[1].data[0] == 'b' && got[2].data[0] == 'c' &&
              tp->peers[1].rx_seq == 1 && !tp->failed,
          "across the wrap: %d deliveries, rx_seq %u", ngot, tp->peers[1].rx_seq);
    tp_free(tp);
}

/* The low 22 bits say how far ahead a message is: up to 2^21 - 1 it is
 * held, from 2^21 it reads as behind, which cannot be, and fails. */
static void test_window(void)
{
    const uint32_t w[4] = { 1, 0, 5, 0 };
    ofi_tp_t *tp = tp_new(2);
    ngot = 0;
    arrive(tp, 1, (1u << 21) - 1, w, "far", FI_TAGGED | FI_RECV | FI_REMOTE_CQ_DATA);
    CHECK(!tp->failed && ngot == 0 && tp->peers[1].held &&
              tp->peers[1].held->seq == (1u << 21) - 1,
          "2^21 - 1 ahead: failed %d, %s", tp->failed, tp->errmsg);
    tp_free(tp);
    tp = tp_new(2);
    arrive(tp, 1, 1u << 21, w, "too far", FI_TAGGED | FI_RECV | FI_REMOTE_CQ_DATA);
    CHECK(tp->failed && strstr(tp->errmsg, "turns behind") && ngot == 0,
          "2^21 ahead: %s", tp->errmsg);
    tp_free(tp);
}

static void test_malformed(void)
{
    const uint32_t w[4] = { 1, 0, 5, 0 };
    ofi_tp_t *tp = tp_new(2);
    ngot = 0;
    arrive(tp, 1, 0, w, "no data", FI_TAGGED | FI_RECV);
    CHECK(tp->failed && strstr(tp->errmsg, "malformed compact message") && ngot == 0,
          "without FI_REMOTE_CQ_DATA: %s", tp->errmsg);
    tp_free(tp);

    tp = tp_new(2);
    arrive(tp, 3, 0, w, "stranger", FI_TAGGED | FI_RECV | FI_REMOTE_CQ_DATA);
    CHECK(tp->failed && strstr(tp->errmsg, "malformed compact message") && ngot == 0,
          "from rank 3 of 2: %s", tp->errmsg);
    tp_free(tp);

    tp = tp_new(2);
    arrive(tp, 0, 0, w, "myself", FI_TAGGED | FI_RECV | FI_REMOTE_CQ_DATA);
    CHECK(tp->failed && strstr(tp->errmsg, "malformed compact message") && ngot == 0,
          "from this rank itself: %s", tp->errmsg);
    tp_free(tp);

    tp = tp_new(2);
    tp->peers[1].rx_seq = 10;
    arrive(tp, 1, 9, w, "again", FI_TAGGED | FI_RECV | FI_REMOTE_CQ_DATA);
    CHECK(tp->failed && strstr(tp->errmsg, "rank 1 sent a message 1 turns behind") && ngot == 0,
          "behind its turn: %s", tp->errmsg);
    tp_free(tp);
}

int main(void)
{
    test_pack_limits();
    test_order();
    test_wrap();
    test_window();
    test_malformed();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("ofi compact: OK\n");
    return 0;
}
