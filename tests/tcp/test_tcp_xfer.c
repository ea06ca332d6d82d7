/*
 * Stress test of the tcp transport: N real processes (forked, kvs in
 * shared memory), real sockets over loopback or the veth links of network
 * namespaces. Each rank sends MSGS messages of random sizes 0..MAX to
 * random peers, every one carrying {seq, len, checksum}; the receiver
 * checks the per-pair sequence (in order, exactly once), the length, the
 * checksum and every byte. Large receives are posted at once or much
 * later, some truncated. Then every rank finalizes (goodbye handshake)
 * while the others may still be draining.
 *
 *   test_tcp_xfer NPROCS MSGS MAX [--netns A,B] [--ifaces "x,y;z"]
 *                 [--min-rails N]
 * --min-rails N: every rank that sent at least 16 MiB of rendezvous data
 * must have put at least 10% of its bytes on each of N rails (striping).
 * Each rank prints one "STATS {json}" line with its counters.
 */
#include "shm_harness.h"
#include "tcp.h"
#include "tcp_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PENDING 4
#define MAGIC 0x7c971234u

typedef struct {
    uint32_t magic, kind; /* kind 0: data, 1: end (seq = messages sent) */
    uint32_t seq, pad;
    uint64_t len, sum;
} msg_hdr_t;

typedef struct recv_s {
    int src;
    msg_hdr_t h;
    unsigned char *buf;
    size_t want;
    locus_tp_rndv_t *rndv;
    struct recv_s *next;
} recv_t;

typedef struct {
    int rank, nprocs, errors;
    locus_tp_t *tp;
    uint32_t next_seq[HARNESS_MAX_PROCS];
    int ended[HARNESS_MAX_PROCS];
    uint32_t end_count[HARNESS_MAX_PROCS];
    long recv_open;
    recv_t *deferred;
    int send_busy[MAX_PENDING];
    uint64_t rng, rndv_bytes;
} core_t;

typedef struct {
    int msgs, min_rails;
    size_t max;
    const char *netns, *ifaces;
} args_t;

#define FAIL(c, ...) do { if ((c)->errors++ < 10) { \
    fprintf(stderr, "rank %d: ", (c)->rank); fprintf(stderr, __VA_ARGS__); \
    fputc('\n', stderr); } } while (0)

static uint64_t seed_of(int src, int dst, uint32_t seq)
{
    return ((uint64_t)src << 48) ^ ((uint64_t)dst << 32) ^ seq;
}

static int accept_hdr(core_t *c, int src, const void *hdr, size_t hdrlen, size_t len,
                      msg_hdr_t *h)
{
    if (hdrlen != sizeof *h) {
        FAIL(c, "header of %zu bytes from %d", hdrlen, src);
        return -1;
    }
    memcpy(h, hdr, sizeof *h);
    if (h->magic != MAGIC || h->len != len) {
        FAIL(c, "bad header from %d (len %zu, header says %llu)", src, len,
             (unsigned long long)h->len);
        return -1;
    }
    if (h->kind == 1) {
        c->ended[src] = 1;
        c->end_count[src] = h->seq;
        return 1;
    }
    if (c->ended[src])
        FAIL(c, "message from %d after its end", src);
    if (h->seq != c->next_seq[src])
        FAIL(c, "from %d: seq %u, expected %u (order or duplicate)", src, h->seq,
             c->next_seq[src]);
    c->next_seq[src] = h->seq + 1;
    return 0;
}

static void verify(core_t *c, int src, const msg_hdr_t *h, const unsigned char *data, size_t len)
{
    size_t bad = harness_check(data, len, seed_of(src, c->rank, h->seq));
    if (bad != SIZE_MAX)
        FAIL(c, "from %d seq %u: content differs at byte %zu of %zu", src, h->seq, bad, len);
    if (len == h->len && harness_sum(data, len) != h->sum)
        FAIL(c, "from %d seq %u: checksum mismatch", src, h->seq);
}

static void up_deliver(void *core, int src, const void *hdr, size_t hdrlen,
                       const void *data, size_t len)
{
    core_t *c = core;
    msg_hdr_t h;
    if (accept_hdr(c, src, hdr, hdrlen, len, &h) == 0)
        verify(c, src, &h, data, len);
}

static void post(core_t *c, recv_t *r)
{
    int rc = c->tp->ops->rndv_recv(c->tp, r->rndv, r->buf, r->want, r, 0);
    if (rc != 0)
        FAIL(c, "rndv_recv: %d", rc);
}

static void up_rndv_arrived(void *core, int src, const void *hdr, size_t hdrlen, size_t len,
                            locus_tp_rndv_t *rndv)
{
    core_t *c = core;
    recv_t *r = calloc(1, sizeof *r);
    if (accept_hdr(c, src, hdr, hdrlen, len, &r->h) != 0) {
        FAIL(c, "rendezvous for a non-data message");
        free(r);
        return;
    }
    r->src = src;
    r->rndv = rndv;
    uint64_t x = harness_rng(&c->rng);
    r->want = x % 8 == 0 ? len / 3 : len; /* some receives truncate */
    r->buf = malloc(r->want ? r->want : 1);
    c->recv_open++;
    if (x % 2) {
        post(c, r);
    } else {
        r->next = c->deferred;
        c->deferred = r;
    }
}

static void up_rndv_done(void *core, void *ctx)
{
    core_t *c = core;
    recv_t *r = ctx;
    verify(c, r->src, &r->h, r->buf, r->want);
    c->recv_open--;
    free(r->buf);
    free(r);
}

static void up_send_done(void *core, void *ctx)
{
    core_t *c = core;
    int *busy = ctx;
    if (!*busy)
        FAIL(c, "send_done twice");
    *busy = 0;
}

static const locus_tp_upcalls_t upcalls = { up_deliver, up_rndv_arrived, up_rndv_done,
                                            up_send_done, NULL };

static int progress(core_t *c)
{
    int rc = c->tp->ops->progress(c->tp);
    if (rc < 0) {
        const char *why = c->tp->ops->last_error(c->tp);
        FAIL(c, "progress: %d (%s)", rc, why ? why : "?");
        return -1;
    }
    if (c->deferred && harness_rng(&c->rng) % 4 == 0) { /* post late receives, any order */
        recv_t *r = c->deferred;
        c->deferred = r->next;
        post(c, r);
    }
    return 0;
}

static int send_msg(core_t *c, int dst, msg_hdr_t *h, const void *data, int *busy)
{
    double t0 = tt_now();
    for (;;) {
        int rc = c->tp->ops->send(c->tp, dst, h, sizeof *h, data, h->len, busy);
        if (rc == LOCUS_TP_DONE)
            return 0;
        if (rc == LOCUS_TP_PENDING) {
            *busy = 1;
            return 0;
        }
        if (rc != LOCUS_TP_AGAIN) {
            FAIL(c, "send to %d: %d", dst, rc);
            return -1;
        }
        if (progress(c) < 0)
            return -1;
        if (tt_now() - t0 > 60) {
            FAIL(c, "send to %d refused for 60 s", dst);
            return -1;
        }
    }
}

static size_t pick_size(uint64_t *rng, size_t max)
{
    uint64_t x = harness_rng(rng);
    switch (x % 4) {
    case 0: case 1: return (x >> 8) % 257 % (max + 1);
    case 2: return (x >> 8) % (128 * 1024 + 1) % (max + 1); /* around the eager limit */
    default: {
        double u = (double)((x >> 11) % 1000000) / 1e6;
        double v = 1024.0 * pow((double)max / 1024.0, u);
        return (size_t)v > max ? max : (size_t)v;
    }
    }
}

static void stats_print(core_t *c, const tcp_stats_t *st)
{
    char rails[256] = "";
    size_t k = 0;
    for (int i = 0; i < st->nrails; i++)
        k += (size_t)snprintf(rails + k, sizeof rails - k, "%s[%llu,%llu]", i ? "," : "",
                              (unsigned long long)st->bytes_out[i],
                              (unsigned long long)st->bytes_in[i]);
    printf("STATS {\"rank\": %d, \"eager\": %llu, \"rndv\": %llu, \"chunks\": %llu, "
           "\"again\": %llu, \"dials\": %llu, \"accepts\": %llu, \"lost_races\": %llu, "
           "\"fallbacks\": %llu, \"rails\": [%s]}\n", c->rank,
           (unsigned long long)st->eager_sent, (unsigned long long)st->rndv_sent,
           (unsigned long long)st->chunks_sent, (unsigned long long)st->again,
           (unsigned long long)st->dials, (unsigned long long)st->accepts,
           (unsigned long long)st->lost_races, (unsigned long long)st->fallbacks, rails);
}

static void rails_check(core_t *c, const args_t *a, const tcp_stats_t *st)
{
    if (a->min_rails <= 0 || c->rndv_bytes < (16u << 20))
        return;
    uint64_t total = 0;
    for (int i = 0; i < st->nrails; i++)
        total += st->bytes_out[i];
    int used = 0;
    for (int i = 0; i < st->nrails; i++)
        used += st->bytes_out[i] * 10 >= total;
    if (used < a->min_rails)
        FAIL(c, "%llu rendezvous bytes went out on %d rail(s), expected %d",
             (unsigned long long)c->rndv_bytes, used, a->min_rails);
}

/* What a rank still waits for when it gives up: enough to tell a lost
 * message from a send that never completes. */
static void stall_report(core_t *c, int nprocs)
{
    char busy[64] = "", ends[128] = "";
    size_t k = 0;
    for (int i = 0; i < MAX_PENDING; i++)
        if (c->send_busy[i])
            k += (size_t)snprintf(busy + k, sizeof busy - k, " %d", i);
    k = 0;
    for (int p = 0; p < nprocs && k < sizeof ends; p++)
        if (p != c->rank && !c->ended[p])
            k += (size_t)snprintf(ends + k, sizeof ends - k, " %d", p);
    int deferred = 0;
    for (recv_t *r = c->deferred; r; r = r->next)
        deferred++;
    tcp_stats_t st;
    tcp_tp_stats(c->tp, &st);
    FAIL(c, "still waiting after 120 s: %ld receives open, %d deferred, sends busy in "
         "slots [%s ], no end from [%s ]; sent %llu eager, %llu rendezvous (%llu chunks), "
         "received %llu rendezvous, %llu AGAIN",
         c->recv_open, deferred, busy, ends, (unsigned long long)st.eager_sent,
         (unsigned long long)st.rndv_sent, (unsigned long long)st.chunks_sent,
         (unsigned long long)st.rndv_recv, (unsigned long long)st.again);
}

static int wait_all(core_t *c, int nprocs)
{
    double t0 = tt_now();
    for (;;) {
        int done = !c->deferred && c->recv_open == 0;
        for (int i = 0; i < MAX_PENDING; i++)
            done &= !c->send_busy[i];
        for (int p = 0; p < nprocs; p++)
            done &= p == c->rank || c->ended[p];
        if (done || c->errors)
            return 0;
        if (progress(c) < 0)
            return -1;
        if (tt_now() - t0 > 120) {
            stall_report(c, nprocs);
            return -1;
        }
    }
}

static int run_rank(harness_t *hs, int rank, void *arg)
{
    args_t *a = arg;
    static core_t c;
    memset(&c, 0, sizeof c);
    c.rank = rank;
    c.nprocs = hs->nprocs;
    c.rng = 0x1234u + (uint64_t)rank * 7919u;
    if (tt_enter(rank, a->netns, a->ifaces) != 0)
        return 1;
    locus_tp_init_t in;
    harness_init(hs, &in, rank, &upcalls, &c);
    char err[256];
    if (locus_tp_tcp_create(&in, &c.tp, err, sizeof err) != 0) {
        fprintf(stderr, "rank %d: create: %s\n", rank, err);
        return 1;
    }
    for (int p = 0; p < hs->nprocs; p++)
        if (c.tp->ops->reaches(c.tp, p) != (p != rank))
            FAIL(&c, "reaches(%d) wrong", p);
    unsigned char *bufs[MAX_PENDING];
    for (int i = 0; i < MAX_PENDING; i++)
        bufs[i] = malloc(a->max ? a->max : 1);
    uint32_t sent_to[HARNESS_MAX_PROCS] = { 0 };
    tcp_stats_t st;
    for (int m = 0; m < a->msgs && !c.errors; m++) {
        int slot;
        for (;;) {
            for (slot = 0; slot < MAX_PENDING && c.send_busy[slot]; slot++)
                ;
            if (slot < MAX_PENDING)
                break;
            if (progress(&c) < 0)
                return 1;
        }
        int dst = (int)(harness_rng(&c.rng) % (uint64_t)(hs->nprocs - 1));
        if (dst >= rank)
            dst++;
        msg_hdr_t h = { MAGIC, 0, sent_to[dst]++, 0, pick_size(&c.rng, a->max), 0 };
        harness_fill(bufs[slot], h.len, seed_of(rank, dst, h.seq));
        h.sum = harness_sum(bufs[slot], h.len);
        tcp_tp_stats(c.tp, &st);
        if (h.len > st.eager_max)
            c.rndv_bytes += h.len;
        if (send_msg(&c, dst, &h, bufs[slot], &c.send_busy[slot]) < 0)
            break;
        if (progress(&c) < 0)
            return 1;
    }
    for (int dst = 0; dst < hs->nprocs && !c.errors; dst++) {
        if (dst == rank)
            continue;
        int dummy = 0;
        msg_hdr_t h = { MAGIC, 1, sent_to[dst], 0, 0, 0 };
        send_msg(&c, dst, &h, NULL, &dummy);
    }
    if (wait_all(&c, hs->nprocs) < 0)
        return 1;
    for (int p = 0; p < hs->nprocs; p++)
        if (p != rank && c.ended[p] && c.next_seq[p] != c.end_count[p])
            FAIL(&c, "from %d: got %u messages, it sent %u", p, c.next_seq[p], c.end_count[p]);
    tcp_tp_stats(c.tp, &st);
    stats_print(&c, &st);
    rails_check(&c, a, &st);
    c.tp->ops->finalize(c.tp);
    for (int i = 0; i < MAX_PENDING; i++)
        free(bufs[i]);
    return c.errors ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: test_tcp_xfer NPROCS MSGS MAX [--netns A,B] [--ifaces L;L] "
                        "[--min-rails N]\n");
        return 2;
    }
    args_t a = { atoi(argv[2]), 0, (size_t)atol(argv[3]), NULL, NULL };
    for (int i = 4; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--netns") == 0)
            a.netns = argv[i + 1];
        else if (strcmp(argv[i], "--ifaces") == 0)
            a.ifaces = argv[i + 1];
        else if (strcmp(argv[i], "--min-rails") == 0)
            a.min_rails = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "test_tcp_xfer: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    int n = atoi(argv[1]);
    harness_t h;
    if (n < 2 || harness_open(&h, n) != 0) {
        fprintf(stderr, "test_tcp_xfer: NPROCS must be 2..%d\n", HARNESS_MAX_PROCS);
        return 2;
    }
    int failed = harness_run(&h, run_rank, &a, 240);
    harness_close(&h);
    if (failed) {
        fprintf(stderr, "FAILED: %d rank(s) failed\n", failed);
        return 1;
    }
    printf("No Errors\n");
    return 0;
}
