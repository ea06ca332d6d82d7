/*
 * Rail failover of the tcp transport: two ranks with two rails (run with
 * LOCUS_NET_IFACES naming two interfaces, see two_local_rails.py) stream
 * messages of known content both ways, small (eager) and large (striped
 * rendezvous), while one rail's connections are reset (tcp_tp_test_cut:
 * an RST, so what the kernel still held is lost, as on a failed network).
 *
 *   test_tcp_failover cut  MSGS   rank 0 cuts rail 1, waits until it is
 *                                 back, cuts rail 0 (the message rail);
 *                                 rank 1 then cuts rail 1 again. Every
 *                                 message must arrive exactly once, intact
 *                                 and in order; no rank fails; each counts
 *                                 its failovers and restored rails, and a
 *                                 restored rail carries data again.
 *   test_tcp_failover both MSGS   rank 0 cuts both rails at once: both
 *                                 ranks fail within seconds, with one line
 *                                 naming the peer and saying no rail is left.
 *   test_tcp_failover link SECS [--netns A,B] [--ifaces "x,y;x,y"]
 *                                 the same stream for SECS seconds, no cut:
 *                                 netns_rails.py takes a link down and up
 *                                 meanwhile (rank 0 prints "streaming" once
 *                                 both rails are open). Each rank prints the
 *                                 longest time it got no message, its
 *                                 slowest large send (send to completion:
 *                                 what a lost rail's stall costs a message)
 *                                 and the bytes its rail 1 sent once back.
 *   test_tcp_failover idle SECS ...  the same, but after 40 messages each
 *                                 rank only waits (nothing in flight): a
 *                                 peer cut off must still be noticed.
 *   test_tcp_failover split SECS ... --flag PATH  the same as link; once
 *                                 PATH exists (netns_rails.py made it with
 *                                 every rail down), each rank gives up a
 *                                 different rail as a stall would (rank 0
 *                                 rail 1, rank 1 rail 0): when the rails
 *                                 return, each side's last lane is one the
 *                                 other side closed. Nothing may be lost.
 */
#include "shm_harness.h"
#include "tcp.h"
#include "tcp_test.h"

#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PENDING 4
#define MAGIC 0x5a17f0c1u
#define MIB (1u << 20)

typedef struct {
    uint32_t magic, kind; /* kind 0: data, 1: end (seq = messages sent) */
    uint32_t seq, pad;
    uint64_t len, sum;
} fhdr_t;

typedef struct frecv {
    fhdr_t h;
    unsigned char *buf;
} frecv_t;

typedef struct {
    int rank, errors, ended;
    double last_rx, max_gap, gap_at;  /* the longest time without a message */
    double sent_at[MAX_PENDING], max_send, send_at; /* the slowest large send */
    locus_tp_t *tp;
    uint32_t next_seq, end_count;
    long recv_open;
    int send_busy[MAX_PENDING];
    uint64_t rng;
    const char *flag;                 /* split: give up a rail once it exists */
    double flag_checked;
    int gave_up;
} fcore_t;

/* One write per line: the two ranks share stderr, and the tests read it. */
#define FAIL(c, ...) do { if ((c)->errors++ < 10) { \
    char line_[512]; int k_ = snprintf(line_, sizeof line_, "rank %d: ", (c)->rank); \
    snprintf(line_ + k_, sizeof line_ - (size_t)k_, __VA_ARGS__); \
    fprintf(stderr, "%s\n", line_); } } while (0)

static uint64_t seed_of(int src, uint32_t seq)
{
    return ((uint64_t)src << 40) ^ 0x9e3779b9u ^ seq;
}

/* 0: a data message in its turn; 1: the end; -1: bad. */
static int take_hdr(fcore_t *c, int src, const void *hdr, size_t hdrlen, size_t len, fhdr_t *h)
{
    if (hdrlen != sizeof *h) {
        FAIL(c, "header of %zu bytes", hdrlen);
        return -1;
    }
    memcpy(h, hdr, sizeof *h);
    if (h->magic != MAGIC || h->len != len) {
        FAIL(c, "bad header from %d (len %zu)", src, len);
        return -1;
    }
    if (h->kind == 1) {
        c->ended = 1;
        c->end_count = h->seq;
        return 1;
    }
    if (c->ended)
        FAIL(c, "message from %d after its end", src);
    if (h->seq != c->next_seq)
        FAIL(c, "from %d: seq %u, expected %u (lost, repeated or out of order)", src, h->seq,
             c->next_seq);
    c->next_seq = h->seq + 1;
    return 0;
}

static void verify(fcore_t *c, int src, const fhdr_t *h, const unsigned char *data)
{
    double now = tt_now();
    if (c->last_rx && now - c->last_rx > c->max_gap) {
        c->max_gap = now - c->last_rx;
        c->gap_at = now;
    }
    c->last_rx = now;
    size_t bad = harness_check(data, h->len, seed_of(src, h->seq));
    if (bad != SIZE_MAX || harness_sum(data, h->len) != h->sum)
        FAIL(c, "from %d seq %u: content differs at byte %zu of %llu", src, h->seq, bad,
             (unsigned long long)h->len);
}

static void f_deliver(void *core, int src, const void *hdr, size_t hdrlen, const void *data,
                      size_t len)
{
    fcore_t *c = core;
    fhdr_t h;
    if (take_hdr(c, src, hdr, hdrlen, len, &h) == 0)
        verify(c, src, &h, data);
}

static void f_arrived(void *core, int src, const void *hdr, size_t hdrlen, size_t len,
                      locus_tp_rndv_t *r)
{
    fcore_t *c = core;
    frecv_t *rv = calloc(1, sizeof *rv);
    if (take_hdr(c, src, hdr, hdrlen, len, &rv->h) != 0) {
        FAIL(c, "rendezvous for a non-data message");
        free(rv);
        return;
    }
    rv->buf = malloc(len ? len : 1);
    c->recv_open++;
    if (c->tp->ops->rndv_recv(c->tp, r, rv->buf, len, rv, 0) != 0)
        FAIL(c, "rndv_recv failed");
}

static void f_done(void *core, void *ctx)
{
    fcore_t *c = core;
    frecv_t *rv = ctx;
    verify(c, 1 - c->rank, &rv->h, rv->buf);
    c->recv_open--;
    free(rv->buf);
    free(rv);
}

static void f_sent(void *core, void *ctx)
{
    fcore_t *c = core;
    int *busy = ctx;
    if (!*busy)
        FAIL(c, "send_done twice");
    *busy = 0;
    double now = tt_now(), took = now - c->sent_at[busy - c->send_busy];
    if (took > c->max_send) {
        c->max_send = took;
        c->send_at = now;
    }
}

static const locus_tp_upcalls_t fup = { f_deliver, f_arrived, f_done, f_sent, NULL };

enum { MODE_CUT, MODE_BOTH, MODE_LINK, MODE_IDLE, MODE_SPLIT };

typedef struct {
    int mode, msgs; /* MODE_LINK, MODE_IDLE: msgs = seconds */
    const char *netns, *ifaces, *flag;
} fargs_t;

/* The failure a cut of both rails must end in: named peer, no rail left. */
static int failed_as_expected(fcore_t *c, double t_cut)
{
    const char *why = c->tp->ops->last_error(c->tp);
    char peer[32];
    snprintf(peer, sizeof peer, "connection to rank %d", 1 - c->rank);
    if (!why || !strstr(why, peer) || !strstr(why, "no other rail to it is left")) {
        fprintf(stderr, "rank %d: failed, but not saying the peer has no rail left: %s\n",
                c->rank, why ? why : "(none)");
        return 1;
    }
    double took = tt_now() - t_cut;
    printf("rank %d: failed %.2f s after the cut, as it must: %s\n", c->rank, took, why);
    if (took > 10) {
        fprintf(stderr, "rank %d: took %.2f s to notice no rail is left\n", c->rank, took);
        return 1;
    }
    return 0;
}

/* Split: once the flag exists (every rail is down), rank r gives up rail
 * 1 - r. Checked in every wait: a rank's sends block while the rails are
 * down. */
static void split_check(fcore_t *c)
{
    struct stat sb;
    if (!c->flag || c->gave_up || tt_now() - c->flag_checked < 0.01)
        return;
    c->flag_checked = tt_now();
    if (stat(c->flag, &sb) != 0)
        return;
    int n = tcp_tp_test_stall(c->tp, 1 - c->rank, 1 - c->rank);
    printf("rank %d: gave up rail %d (%d connection%s)\n", c->rank, 1 - c->rank, n,
           n == 1 ? "" : "s");
    fflush(stdout);
    c->gave_up = 1;
    if (n < 1)
        FAIL(c, "rail %d had no open connection to give up", 1 - c->rank);
}

static int progress(fcore_t *c)
{
    split_check(c);
    int rc = c->tp->ops->progress(c->tp);
    if (rc < 0)
        return -1;
    return 0;
}

static size_t pick_size(uint64_t *rng)
{
    uint64_t x = harness_rng(rng);
    switch (x % 10) {
    case 0: case 1: case 2: case 3: case 4: case 5: return (x >> 8) % 257;
    case 6: case 7: return (x >> 8) % (64 * 1024);
    default: return 64 * 1024 + (x >> 8) % (2 * MIB);
    }
}

static int send_msg(fcore_t *c, fhdr_t *h, const void *data, int *busy)
{
    double t0 = tt_now();
    for (;;) {
        int rc = c->tp->ops->send(c->tp, 1 - c->rank, h, sizeof *h, data, h->len, busy);
        if (rc == LOCUS_TP_DONE)
            return 0;
        if (rc == LOCUS_TP_PENDING) {
            *busy = 1;
            return 0;
        }
        if (rc != LOCUS_TP_AGAIN || progress(c) < 0 || tt_now() - t0 > 60)
            return -1;
    }
}

/* Connections per rail and peer: one per traffic class. */
static uint64_t lanes(fcore_t *c)
{
    tcp_stats_t st;
    tcp_tp_stats(c->tp, &st);
    return st.qos ? 3 : 1;
}

/* Progress until `rails` rails (each of its connections) are back, counted
 * by the rank's restored counter (at most 15 s). */
static int wait_restored(fcore_t *c, uint64_t rails)
{
    double t0 = tt_now();
    tcp_stats_t st;
    uint64_t want = rails * lanes(c);
    for (;;) {
        tcp_tp_stats(c->tp, &st);
        if (st.restored >= want)
            return 0;
        if (progress(c) < 0)
            return -1;
        if (tt_now() - t0 > 15) {
            FAIL(c, "a cut rail was not back within 15 s (%llu restored)",
                 (unsigned long long)st.restored);
            return -1;
        }
    }
}

static int cut(fcore_t *c, int rail)
{
    int n = tcp_tp_test_cut(c->tp, 1 - c->rank, rail);
    printf("rank %d: cut rail %d (%d connection%s)\n", c->rank, rail, n, n == 1 ? "" : "s");
    fflush(stdout);
    if (n < 1)
        FAIL(c, "rail %d had no open connection to cut", rail);
    return n;
}

static int f_rank(harness_t *hs, int rank, void *arg)
{
    const fargs_t *a = arg;
    static fcore_t c;
    memset(&c, 0, sizeof c);
    c.rank = rank;
    c.rng = 0x51u + (uint64_t)rank * 104729u;
    c.flag = a->mode == MODE_SPLIT ? a->flag : NULL;
    if (tt_enter(rank, a->netns, a->ifaces) != 0)
        return 1;
    int both = a->mode == MODE_BOTH, idle = a->mode == MODE_IDLE;
    int link = a->mode == MODE_LINK || idle || a->mode == MODE_SPLIT;
    locus_tp_init_t in;
    harness_init(hs, &in, rank, &fup, &c);
    char err[256];
    if (locus_tp_tcp_create(&in, &c.tp, err, sizeof err) != 0) {
        fprintf(stderr, "rank %d: create: %s\n", rank, err);
        return 1;
    }
    tcp_stats_t st;
    tcp_tp_stats(c.tp, &st);
    if (st.nrails < 2) {
        fprintf(stderr, "rank %d: %d rail(s): name two interfaces (LOCUS_NET_IFACES)\n", rank,
                st.nrails);
        return 1;
    }
    unsigned char *bufs[MAX_PENDING];
    for (int i = 0; i < MAX_PENDING; i++)
        bufs[i] = malloc(64 * 1024 + 2 * MIB);
    uint32_t sent = 0;
    double t_cut = 0, t_start = tt_now();
    uint64_t rail1_at_restore = 0, restored_seen = 0;
    int streaming = 0;
    for (int m = 0; !c.errors && (link ? tt_now() - t_start < a->msgs : m < a->msgs); m++) {
        if (idle && m >= 40) { /* connected: now nothing is sent */
            if (rank == 0 && !streaming) {
                streaming = 1;
                printf("streaming\n");
                fflush(stdout);
            }
            if (progress(&c) < 0)
                goto failed;
            m--;
            continue;
        }
        int slot;
        for (;;) {
            for (slot = 0; slot < MAX_PENDING && c.send_busy[slot]; slot++)
                ;
            if (slot < MAX_PENDING)
                break;
            if (progress(&c) < 0)
                goto failed;
        }
        fhdr_t h = { MAGIC, 0, sent++, 0, pick_size(&c.rng), 0 };
        harness_fill(bufs[slot], h.len, seed_of(rank, h.seq));
        h.sum = harness_sum(bufs[slot], h.len);
        c.sent_at[slot] = tt_now();
        if (send_msg(&c, &h, bufs[slot], &c.send_busy[slot]) < 0)
            goto failed;
        if (progress(&c) < 0)
            goto failed;
        /* Cuts in the middle of the stream, with sends of both ranks in flight. */
        if (link) {
            tcp_tp_stats(c.tp, &st);
            if (!streaming && rank == 0 && st.bytes_out[1] > 0) {
                streaming = 1;
                printf("streaming\n");
                fflush(stdout);
            }
            if (st.restored > restored_seen) { /* rail 1's bytes from its return on */
                restored_seen = st.restored;
                rail1_at_restore = st.bytes_out[1];
            }
        } else if (both && rank == 0 && m == a->msgs / 5) {
            t_cut = tt_now();
            cut(&c, 1);
            cut(&c, 0);
        } else if (!both && rank == 0 && m == a->msgs / 5) {
            cut(&c, 1);
        } else if (!both && rank == 0 && m == 2 * a->msgs / 5) {
            if (wait_restored(&c, 1) < 0)
                goto failed;
            tcp_tp_stats(c.tp, &st);
            rail1_at_restore = st.bytes_out[1];
            cut(&c, 0);
        } else if (!both && rank == 1 && m == 3 * a->msgs / 5) {
            if (wait_restored(&c, 2) < 0)
                goto failed;
            cut(&c, 1);
        }
        if (both && rank == 1 && m == a->msgs / 5)
            t_cut = tt_now(); /* about when rank 0 cuts */
    }
    {
        fhdr_t h = { MAGIC, 1, sent, 0, 0, 0 };
        int dummy = 0;
        if (send_msg(&c, &h, NULL, &dummy) < 0)
            goto failed;
    }
    double t0 = tt_now();
    for (;;) {
        int done = c.ended && c.recv_open == 0;
        for (int i = 0; i < MAX_PENDING; i++)
            done &= !c.send_busy[i];
        if (done || c.errors)
            break;
        if (progress(&c) < 0)
            goto failed;
        if (tt_now() - t0 > 60) {
            FAIL(&c, "still waiting after 60 s (%ld receives open)", c.recv_open);
            break;
        }
    }
    if (both) {
        /* Rank 0 cut everything: nothing may end well. */
        FAIL(&c, "no failure although both rails were cut");
        return 1;
    }
    if (c.ended && c.next_seq != c.end_count)
        FAIL(&c, "got %u messages, the peer sent %u", c.next_seq, c.end_count);
    /* Everyone has everything: a lane may still be coming back. */
    harness_barrier(hs);
    tcp_tp_stats(c.tp, &st);
    printf("STATS {\"rank\": %d, \"failovers\": %llu, \"restored\": %llu, \"resent\": %llu, "
           "\"acks\": %llu, \"stalls\": %llu, \"messages\": %u, \"max_gap_s\": %.3f, "
           "\"gap_at_s\": %.2f, \"max_send_s\": %.3f, \"send_at_s\": %.2f, "
           "\"rail1_after_restore\": %llu, "
           "\"rails\": [[%llu,%llu],[%llu,%llu]]}\n", rank,
           (unsigned long long)st.failovers, (unsigned long long)st.restored,
           (unsigned long long)st.resent, (unsigned long long)st.acks,
           (unsigned long long)st.stalls, c.next_seq, c.max_gap, c.gap_at - t_start, c.max_send,
           c.send_at - t_start,
           (unsigned long long)(st.bytes_out[1] - rail1_at_restore),
           (unsigned long long)st.bytes_out[0], (unsigned long long)st.bytes_in[0],
           (unsigned long long)st.bytes_out[1], (unsigned long long)st.bytes_in[1]);
    fflush(stdout);
    /* Three rail cuts, each lost on both sides, each rail's connection of
     * every class. (MODE_LINK: the script judges from the STATS line.) */
    if (link)
        ;
    else if (st.failovers < 3 * lanes(&c))
        FAIL(&c, "%llu failovers counted, expected %llu", (unsigned long long)st.failovers,
             (unsigned long long)(3 * lanes(&c)));
    if (!link && st.restored < 2 * lanes(&c))
        FAIL(&c, "%llu connections restored, expected at least %llu",
             (unsigned long long)st.restored, (unsigned long long)(2 * lanes(&c)));
    if (!link && rank == 0 && st.bytes_out[1] < rail1_at_restore + MIB)
        FAIL(&c, "rail 1, once back, carried %llu bytes", (unsigned long long)(st.bytes_out[1] -
             rail1_at_restore));
    c.tp->ops->finalize(c.tp);
    for (int i = 0; i < MAX_PENDING; i++)
        free(bufs[i]);
    return c.errors ? 1 : 0;
failed:
    if (both)
        return failed_as_expected(&c, t_cut ? t_cut : tt_now());
    {
        const char *why = c.tp->ops->last_error(c.tp);
        FAIL(&c, "transport failed: %s", why ? why : "?");
    }
    return 1;
}

int main(int argc, char **argv)
{
    static const char *const modes[] = { "cut", "both", "link", "idle", "split" };
    fargs_t a = { -1, argc > 2 ? atoi(argv[2]) : 0, NULL, NULL, NULL };
    for (int i = 0; i < 5 && argc > 1; i++)
        if (strcmp(argv[1], modes[i]) == 0)
            a.mode = i;
    for (int i = 3; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--netns") == 0)
            a.netns = argv[i + 1];
        else if (strcmp(argv[i], "--ifaces") == 0)
            a.ifaces = argv[i + 1];
        else if (strcmp(argv[i], "--flag") == 0)
            a.flag = argv[i + 1];
    }
    harness_t h;
    if (a.mode < 0 || a.msgs < (a.mode >= MODE_LINK ? 1 : 10) || harness_open(&h, 2) != 0) {
        fprintf(stderr, "usage: test_tcp_failover cut|both MSGS | link|idle|split SECS "
                "[--netns A,B] [--ifaces L;L] [--flag PATH]\n");
        return 2;
    }
    double t0 = tt_now();
    int failed = harness_run(&h, f_rank, &a, 180);
    harness_close(&h);
    if (failed) {
        fprintf(stderr, "FAILED: %d rank(s) failed\n", failed);
        return 1;
    }
    printf("took %.2f s\nNo Errors\n", tt_now() - t0);
    return 0;
}
