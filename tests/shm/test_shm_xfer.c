/*
 * Multi-process stress test of the shm transport: N real processes (forked,
 * kvs in shared memory) each send thousands of messages of random sizes
 * 0..max to random peers. Every message carries {seq, len, checksum}; the
 * receiver checks the per-pair sequence (in order, exactly once), the
 * length, the checksum and the content. Large receives are posted at once
 * or later, some truncated. At the end /dev/shm holds nothing of the job.
 *
 *   test_shm_xfer NPROCS MSGS_PER_PROC MAX_SIZE EXPECT
 * EXPECT: cma (every large message by CMA), pipe (none by CMA), split
 * (some by the split single copy), splitfail (the splits fall back), bulk
 * (every large message received as collective traffic: none split),
 * bulknever (the same where the rule never takes CMA: pipelined), any.
 */
#include "shm.h"
#include "shm_harness.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PENDING 4
#define MAGIC 0x5ca1ab1eu

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
    harness_t *h;
    uint32_t next_seq[HARNESS_MAX_PROCS]; /* expected from each source */
    int ended[HARNESS_MAX_PROCS];
    uint32_t end_count[HARNESS_MAX_PROCS];
    long recv_open;                       /* large receives not done yet */
    recv_t *deferred;                     /* arrived, not posted yet */
    int send_busy[MAX_PENDING];
    uint64_t rng;
} core_t;

static uint64_t seed_of(int src, int dst, uint32_t seq)
{
    return ((uint64_t)src << 48) ^ ((uint64_t)dst << 32) ^ seq;
}

#define FAIL(c, ...) do { if ((c)->errors++ < 10) { \
    fprintf(stderr, "rank %d: ", (c)->rank); fprintf(stderr, __VA_ARGS__); \
    fputc('\n', stderr); } } while (0)

/* Checks the order; returns 0 for a data message to verify. */
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
    uint64_t seed = seed_of(src, c->rank, h->seq);
    size_t bad = harness_check(data, len, seed);
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

/* Receive hints for every large message (LOCUS_TP_RECV_BULK in "bulk"). */
static int recv_hints;

static void post(core_t *c, recv_t *r)
{
    int rc = c->tp->ops->rndv_recv(c->tp, r->rndv, r->buf, r->want, r, recv_hints);
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
    (void)c;
}

static const locus_tp_upcalls_t upcalls = { up_deliver, up_rndv_arrived, up_rndv_done, up_send_done, NULL };

static int progress(core_t *c)
{
    int rc = harness_progress(c->h, c->tp);
    if (rc < 0) {
        FAIL(c, "progress: %d", rc);
        return -1;
    }
    /* Post deferred receives now and then, in any order. */
    if (c->deferred && harness_rng(&c->rng) % 4 == 0) {
        recv_t *r = c->deferred;
        c->deferred = r->next;
        post(c, r);
    }
    return 0;
}

static int send_msg(core_t *c, int dst, msg_hdr_t *h, const void *data, int *busy)
{
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
    }
}

typedef struct {
    int msgs;
    size_t max;
    const char *expect;
} args_t;

static size_t pick_size(uint64_t *rng, size_t max)
{
    uint64_t x = harness_rng(rng);
    switch (x % 4) {
    case 0: case 1: return (x >> 8) % 257;                    /* small, eager */
    case 2: return (x >> 8) % (64 * 1024 + 1) % (max + 1);    /* around the eager limit */
    default: {                                                /* log-uniform up to max */
        double u = (double)((x >> 11) % 1000000) / 1e6;
        size_t lo = 1024;
        double v = (double)lo * pow((double)max / (double)lo, u);
        return (size_t)v > max ? max : (size_t)v;
    }
    }
}

static int run_rank(harness_t *hs, int rank, void *arg)
{
    args_t *a = arg;
    static core_t c; /* one per process (each rank is its own process) */
    memset(&c, 0, sizeof c);
    c.rank = rank;
    c.h = hs;
    c.nprocs = hs->nprocs;
    c.rng = 0x1234u + (uint64_t)rank * 7919u;
    locus_tp_init_t in;
    harness_init(hs, &in, rank, &upcalls, &c);
    char err[256];
    if (locus_tp_shm_create(&in, &c.tp, err, sizeof err) != 0 || !c.tp) {
        fprintf(stderr, "rank %d: create: %s\n", rank, c.tp ? "" : err);
        return 1;
    }
    for (int p = 0; p < hs->nprocs; p++)
        if (c.tp->ops->reaches(c.tp, p) != (p != rank))
            FAIL(&c, "reaches(%d) wrong", p);
    harness_barrier(hs); /* every rank has returned from create: all unlinked */
    if (harness_shm_leftovers() != 0)
        FAIL(&c, "segments still in /dev/shm after create");

    unsigned char *bufs[MAX_PENDING];
    for (int i = 0; i < MAX_PENDING; i++)
        bufs[i] = malloc(a->max ? a->max : 1);
    uint32_t sent_to[HARNESS_MAX_PROCS] = { 0 };
    for (int m = 0; m < a->msgs && !c.errors; m++) {
        int slot;
        while (1) {
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
    /* Until every peer has ended and everything of ours is done. */
    for (;;) {
        int done = !c.deferred && c.recv_open == 0;
        for (int i = 0; i < MAX_PENDING; i++)
            done &= !c.send_busy[i];
        for (int p = 0; p < hs->nprocs; p++)
            done &= p == rank || c.ended[p];
        if (done || c.errors)
            break;
        if (progress(&c) < 0)
            break;
    }
    for (int p = 0; p < hs->nprocs; p++)
        if (p != rank && c.ended[p] && c.next_seq[p] != c.end_count[p])
            FAIL(&c, "from %d: got %u messages, it sent %u", p, c.next_seq[p], c.end_count[p]);

    shm_stats_t st;
    shm_tp_stats(c.tp, &st);
    if (strcmp(a->expect, "cma") == 0 && (st.pipe_recv != 0 || !st.cma_enabled))
        FAIL(&c, "expected CMA only, got %llu pipelined receives",
             (unsigned long long)st.pipe_recv);
    if (strcmp(a->expect, "pipe") == 0 && (st.cma_recv != 0 || st.cma_enabled))
        FAIL(&c, "expected no CMA, got %llu CMA receives", (unsigned long long)st.cma_recv);
    /* Sizes around the eager limit come up often: some of them waited in
     * the pool with their announcement, except where CMA is forced. */
    if (strcmp(a->expect, "pipe") == 0 && st.rts_data == 0)
        FAIL(&c, "no announcement came with its data (%llu announced)",
             (unsigned long long)st.rndv_sent);
    if (strcmp(a->expect, "cma") == 0 && st.rts_data != 0)
        FAIL(&c, "CMA forced, yet %llu announcements came with their data",
             (unsigned long long)st.rts_data);
    if (strcmp(a->expect, "split") == 0 && (st.split_recv == 0 || st.cma_fallbacks != 0))
        FAIL(&c, "expected split single copies, got %llu (%llu fallbacks)",
             (unsigned long long)st.split_recv, (unsigned long long)st.cma_fallbacks);
    if (strcmp(a->expect, "bulk") == 0 && (st.split_recv != 0 || st.cma_recv == 0))
        FAIL(&c, "expected collective traffic by plain CMA, never split: got %llu split, %llu CMA",
             (unsigned long long)st.split_recv, (unsigned long long)st.cma_recv);
    /* The measured paths still read some by CMA (probes, and size classes
     * where lone messages found CMA faster: 120-480 of about 880 here),
     * but large messages go through the pipeline's chunks: 11000-14000
     * chunks for about 880 announced, where plain CMA from 32 KiB sent
     * 35-45 (the data that came with announcements). */
    if (strcmp(a->expect, "bulknever") == 0 &&
        (st.split_recv != 0 || st.chunks_sent < 2 * st.rndv_sent))
        FAIL(&c, "expected collective traffic pipelined where CMA is never the rule: got %llu "
             "split, %llu chunks sent for %llu announced", (unsigned long long)st.split_recv,
             (unsigned long long)st.chunks_sent, (unsigned long long)st.rndv_sent);
    if (strcmp(a->expect, "splitfail") == 0 &&
        (st.split_recv != 0 || st.cma_fallbacks == 0 || st.cma_fallbacks > MAX_PENDING ||
         st.cma_recv == 0))
        FAIL(&c, "expected the splits in flight to fall back, then plain CMA: got %llu split, %llu "
             "fallbacks, %llu CMA", (unsigned long long)st.split_recv,
             (unsigned long long)st.cma_fallbacks, (unsigned long long)st.cma_recv);
    printf("rank %d: %llu eager, %llu rndv sent (%llu with data), %llu cma (%llu split) + %llu "
           "pipelined received, %llu chunks, %llu again, oversubscribed %d, segment %llu KiB\n",
           rank, (unsigned long long)st.eager_sent, (unsigned long long)st.rndv_sent,
           (unsigned long long)st.rts_data,
           (unsigned long long)st.cma_recv, (unsigned long long)st.split_recv,
           (unsigned long long)st.pipe_recv,
           (unsigned long long)st.chunks_sent, (unsigned long long)st.again, st.oversubscribed,
           (unsigned long long)st.seg_bytes / 1024);
    c.tp->ops->finalize(c.tp);
    for (int i = 0; i < MAX_PENDING; i++)
        free(bufs[i]);
    return c.errors ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: test_shm_xfer NPROCS MSGS_PER_PROC MAX_SIZE cma|pipe|any\n");
        return 2;
    }
    args_t a = { atoi(argv[2]), (size_t)atol(argv[3]), argv[4] };
    if (strcmp(a.expect, "bulk") == 0 || strcmp(a.expect, "bulknever") == 0)
        recv_hints = LOCUS_TP_RECV_BULK;
    int n = atoi(argv[1]);
    harness_set_jobid("shmx");
    harness_t h;
    if (n < 2 || harness_open(&h, n) != 0) {
        fprintf(stderr, "test_shm_xfer: NPROCS must be 2..%d\n", HARNESS_MAX_PROCS);
        return 2;
    }
    int failed = harness_run(&h, run_rank, &a, 120);
    harness_close(&h);
    int left = harness_shm_leftovers();
    if (failed || left) {
        fprintf(stderr, "FAILED: %d rank(s) failed, %d segment(s) left in /dev/shm\n", failed, left);
        return 1;
    }
    printf("No Errors\n");
    return 0;
}
