/*
 * Traffic classes (LOCUS_QOS) over loopback, two ranks:
 *  - marks: with static, each class's connection carries its DSCP (IP_TOS)
 *    and SO_PRIORITY, read back from the sockets on both sides, for the
 *    default DSCP and for LOCUS_QOS_DSCP=10,12,14;
 *  - order: rank 0 sends a mix that changes class on every message (60 kB
 *    eager: normal; 8 B: latency; 200 kB rendezvous: RTS latency, data
 *    bulk) through tiny socket buffers while rank 1 does not read, so the
 *    small ones overtake the large ones on the wire. Rank 1 must get every
 *    message in the sender's order, intact, and must have held some;
 *  - adaptive: with a 1 µs congestion threshold every probed path counts as
 *    congested, so small sends are raised (probes answered); with
 *    LOCUS_QOS_SHARE=0 and LOCUS_QOS_FLOOR=0 the budget refuses every raise.
 */
#include "shm_harness.h"
#include "tcp.h"
#include "tcp_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROUNDS 40
#define PER_ROUND 4
#define MSGS (ROUNDS * PER_ROUND)
#define BIG (200 * 1024)

static int failures, my_rank;

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "%s:%d: rank %d: ", __FILE__, \
    __LINE__, my_rank); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); failures++; } } while (0)

typedef struct {
    locus_tp_t *tp;
    uint32_t next, done, sent;
    int bad;
    unsigned char *rbuf[MSGS];
} qcore_t;

static int all_small; /* the adaptive runs send 8 bytes every time */

/* Message i's size: the pattern changes class on every message. */
static size_t msg_len(uint32_t i)
{
    static const size_t lens[PER_ROUND] = { 60000, 8, BIG, 8 };
    return all_small ? 8 : lens[i % PER_ROUND];
}

static void q_deliver(void *core, int src, const void *hdr, size_t hdrlen, const void *data,
                      size_t len)
{
    qcore_t *c = core;
    (void)src;
    uint32_t seq = tt_seq_take(hdr, hdrlen, &c->next, &c->bad);
    c->bad += len != msg_len(seq) || harness_check(data, len, seq) != SIZE_MAX;
    c->done++;
}

static void q_arrived(void *core, int src, const void *hdr, size_t hdrlen, size_t len,
                      locus_tp_rndv_t *r)
{
    qcore_t *c = core;
    (void)src;
    uint32_t seq = tt_seq_take(hdr, hdrlen, &c->next, &c->bad);
    c->bad += len != msg_len(seq) || seq >= MSGS;
    if (seq < MSGS && (c->rbuf[seq] = malloc(len)))
        c->tp->ops->rndv_recv(c->tp, r, c->rbuf[seq], len, (void *)(uintptr_t)seq, 0);
}

static void q_received(void *core, void *ctx)
{
    qcore_t *c = core;
    uint32_t seq = (uint32_t)(uintptr_t)ctx;
    c->bad += harness_check(c->rbuf[seq], msg_len(seq), seq) != SIZE_MAX;
    free(c->rbuf[seq]);
    c->rbuf[seq] = NULL;
    c->done++;
}

static void q_sent(void *core, void *ctx)
{
    (void)ctx;
    ((qcore_t *)core)->sent++;
}

static const locus_tp_upcalls_t qup = { q_deliver, q_arrived, q_received, q_sent, NULL };

static int progress_until(qcore_t *c, const volatile int *flag, int want, double secs)
{
    double t0 = tt_now();
    while ((!flag || *flag < want) && tt_now() - t0 < secs)
        if (c->tp->ops->progress(c->tp) < 0) {
            CHECK(0, "progress: %s", c->tp->ops->last_error(c->tp));
            return -1;
        }
    return 0;
}

/* Both sides' sockets of each class carry its marks. */
static void marks_check(qcore_t *c, int peer, const int dscp[3])
{
    static const int prio[3] = { 0, 6, 2 }; /* normal, latency, bulk */
    for (int k = 0; k < 3; k++) {
        int tos = -1, p = -1;
        CHECK(tcp_tp_lane_marks(c->tp, peer, k, &tos, &p) == 0, "class %d: no open connection", k);
        CHECK(tos == dscp[k] << 2 && p == prio[k], "class %d: IP_TOS 0x%x SO_PRIORITY %d, "
              "want 0x%x and %d", k, tos, p, dscp[k] << 2, prio[k]);
    }
}

/* This process's transport as rank `rank` (0 on success). */
static int setup(harness_t *h, int rank, qcore_t *c)
{
    my_rank = rank;
    locus_tp_init_t in;
    harness_init(h, &in, rank, &qup, c);
    char err[256];
    if (locus_tp_tcp_create(&in, &c->tp, err, sizeof err) != 0) {
        fprintf(stderr, "rank %d: %s\n", rank, err);
        return 1;
    }
    return 0;
}

static int order_rank(harness_t *h, int rank, void *arg)
{
    const int *dscp = arg;
    static qcore_t c;
    if (setup(h, rank, &c) != 0)
        return 1;
    volatile int *flags = h->kvs->flags;
    if (rank == 0) {
        static unsigned char *bufs[MSGS]; /* a rendezvous send's buffer stays until sent */
        for (uint32_t i = 0; i < MSGS && !failures; i++) {
            unsigned char *b = bufs[i] = malloc(msg_len(i));
            CHECK(b, "out of memory");
            if (!b)
                break;
            harness_fill(b, msg_len(i), i);
            double t0 = tt_now();
            int rc;
            while ((rc = c.tp->ops->send(c.tp, 1, &i, sizeof i, b, msg_len(i), NULL)) ==
                       LOCUS_TP_AGAIN && tt_now() - t0 < 30)
                c.tp->ops->progress(c.tp);
            CHECK(rc == LOCUS_TP_DONE || rc == LOCUS_TP_PENDING, "send %u: %d", i, rc);
            if (i == 0)
                progress_until(&c, &flags[0], 1, 30); /* connected: rank 1 has it */
        }
        flags[0] = 2;
        progress_until(&c, &flags[1], 1, 60);
        marks_check(&c, 1, dscp);
        tcp_stats_t st;
        tcp_tp_stats(c.tp, &st);
        printf("sender: frames per class normal %llu, latency %llu, bulk %llu\n",
               (unsigned long long)st.cls_frames[0], (unsigned long long)st.cls_frames[1],
               (unsigned long long)st.cls_frames[2]);
        for (int k = 0; k < 3; k++)
            CHECK(st.cls_frames[k] > 0, "class %d carried nothing", k);
        for (int i = 0; i < MSGS; i++)
            free(bufs[i]);
    } else {
        /* The first message (connections open), then nothing read until
         * rank 0 has queued everything: the small messages' lane is not
         * behind the large ones'. */
        double t0 = tt_now();
        while (c.done < 1 && tt_now() - t0 < 30)
            if (c.tp->ops->progress(c.tp) < 0)
                break;
        flags[0] = 1;
        while (flags[0] < 2 && tt_now() - t0 < 60)
            usleep(1000);
        t0 = tt_now();
        while (c.done < MSGS && !c.bad && tt_now() - t0 < 60)
            if (c.tp->ops->progress(c.tp) < 0) {
                CHECK(0, "progress: %s", c.tp->ops->last_error(c.tp));
                break;
            }
        tcp_stats_t st;
        tcp_tp_stats(c.tp, &st);
        printf("receiver: %u of %d messages, %d bad, %llu held ahead of their turn "
               "(at most %llu at once)\n", c.done, MSGS, c.bad, (unsigned long long)st.held,
               (unsigned long long)st.held_max);
        CHECK(c.done == MSGS && !c.bad, "got %u of %d messages in order, %d bad", c.done, MSGS,
              c.bad);
        CHECK(st.held > 0, "no message overtook another: the test did not test the order");
        marks_check(&c, 0, dscp);
        flags[1] = 1;
    }
    harness_barrier(h);
    c.tp->ops->finalize(c.tp);
    return failures != 0;
}

/* Rank 0 sends small messages (answered) to rank 1 for a while. */
static int adaptive_rank(harness_t *h, int rank, void *arg)
{
    const char *expect = arg; /* "raised" or "denied" */
    static qcore_t c;
    all_small = 1;
    if (setup(h, rank, &c) != 0)
        return 1;
    volatile int *flags = h->kvs->flags;
    static unsigned char b[8];
    if (rank == 0) {
        double t0 = tt_now();
        for (uint32_t i = 0; i < MSGS && tt_now() - t0 < 30; i++) {
            harness_fill(b, 8, i);
            while (c.tp->ops->send(c.tp, 1, &i, sizeof i, b, 8, NULL) == LOCUS_TP_AGAIN)
                c.tp->ops->progress(c.tp);
            progress_until(&c, NULL, 0, 0.002); /* probes go out every 1 ms here */
        }
        flags[0] = 1;
        progress_until(&c, &flags[1], 1, 30);
        tcp_stats_t st;
        tcp_tp_stats(c.tp, &st);
        printf("adaptive (%s): %llu probes, max %llu us, %llu raised, %llu denied, "
               "congested %llu times\n", expect, (unsigned long long)st.adaptive.probes,
               (unsigned long long)st.adaptive.probe_max_us, (unsigned long long)st.adaptive.raised,
               (unsigned long long)st.adaptive.denied, (unsigned long long)st.adaptive.congested);
        CHECK(st.adaptive.probes > 0 && st.adaptive.congested > 0,
              "no probe came back, or no congestion seen");
        if (strcmp(expect, "raised") == 0)
            CHECK(st.adaptive.raised > 0 && st.cls_frames[1] > 0, "nothing raised");
        else
            CHECK(st.adaptive.denied > 0 && st.adaptive.raised == 0 && st.cls_frames[1] == 0,
                  "the budget let %llu raises through", (unsigned long long)st.adaptive.raised);
    } else {
        double t0 = tt_now();
        while (!flags[0] && tt_now() - t0 < 30)
            if (c.tp->ops->progress(c.tp) < 0)
                break;
        progress_until(&c, NULL, 0, 0.05);
        CHECK(c.done > 0 && !c.bad, "got %u messages, %d bad", c.done, c.bad);
        flags[1] = 1;
    }
    harness_barrier(h);
    c.tp->ops->finalize(c.tp);
    return failures != 0;
}

static int run(int (*fn)(harness_t *, int, void *), void *arg, const char *what)
{
    harness_t h;
    if (harness_open(&h, 2) != 0)
        return 1;
    int failed = harness_run(&h, fn, arg, 120);
    harness_close(&h);
    printf("%s: %s\n", what, failed ? "FAILED" : "ok");
    return failed != 0;
}

int main(void)
{
    int bad = 0;
    setenv("LOCUS_NET_IFACES", "lo", 1);
    setenv("LOCUS_QOS", "static", 1);
    /* Small buffers: a large message waits in its lane while small ones
     * pass on theirs. */
    setenv("LOCUS_TCP_SNDBUF", "4k", 1);
    setenv("LOCUS_TCP_RCVBUF", "4k", 1);
    static const int dflt[3] = { 0, 46, 8 }, custom[3] = { 12, 10, 14 };
    bad += run(order_rank, (void *)dflt, "static, default DSCP: marks and order");
    setenv("LOCUS_QOS_DSCP", "10,12,14", 1);
    bad += run(order_rank, (void *)custom, "static, LOCUS_QOS_DSCP=10,12,14");
    unsetenv("LOCUS_QOS_DSCP");
    unsetenv("LOCUS_TCP_SNDBUF");
    unsetenv("LOCUS_TCP_RCVBUF");
    setenv("LOCUS_QOS", "adaptive", 1);
    setenv("LOCUS_QOS_DELAY_US", "1", 1);
    setenv("LOCUS_QOS_PROBE_US", "1000", 1);
    bad += run(adaptive_rank, "raised", "adaptive: congested paths raise small sends");
    setenv("LOCUS_QOS_SHARE", "0", 1);
    setenv("LOCUS_QOS_FLOOR", "0", 1);
    bad += run(adaptive_rank, "denied", "adaptive: an empty budget raises nothing");
    if (harness_shm_leftovers())
        bad++;
    printf(bad ? "FAILED\n" : "No Errors\n");
    return bad != 0;
}
