/*
 * Backpressure: rank 1 stops reading (once connected) while rank 0 keeps sending eager
 * messages. Once the socket buffers and LOCUS_TCP_SENDQ_MAX bytes of queue
 * are full, rank 0's sends are refused with LOCUS_TP_AGAIN (its memory
 * stays bounded) instead of queueing without limit. Then rank 1 reads
 * again and every message arrives, in order and intact.
 */
#include "shm_harness.h"
#include "tcp.h"
#include "tcp_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MSGS 3000
#define LEN 4096
#define SENDQ (64 * 1024)

static int failures;

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); failures++; } } while (0)

typedef struct {
    locus_tp_t *tp;
    uint32_t next;
    int bad;
} bcore_t;

static void b_deliver(void *core, int src, const void *hdr, size_t hdrlen, const void *data,
                      size_t len)
{
    bcore_t *c = core;
    (void)src;
    uint32_t seq = tt_seq_take(hdr, hdrlen, &c->next, &c->bad);
    c->bad += len != LEN || harness_check(data, len, seq) != SIZE_MAX;
}

static void b_arrived(void *core, int src, const void *hdr, size_t hdrlen, size_t len,
                      locus_tp_rndv_t *r)
{
    (void)src, (void)hdr, (void)hdrlen, (void)len, (void)r;
    ((bcore_t *)core)->bad++; /* every message here is eager */
}

static void b_none(void *core, void *ctx)
{
    (void)core, (void)ctx;
}

static const locus_tp_upcalls_t bup = { b_deliver, b_arrived, b_none, b_none, NULL };

static int bp_rank(harness_t *h, int rank, void *arg)
{
    (void)arg;
    static bcore_t c;
    locus_tp_init_t in;
    harness_init(h, &in, rank, &bup, &c);
    char err[256];
    if (locus_tp_tcp_create(&in, &c.tp, err, sizeof err) != 0) {
        fprintf(stderr, "rank %d: %s\n", rank, err);
        return 1;
    }
    if (rank == 1) {
        /* Connected (first message in), then not a single progress call
         * until the sender is refused: its data piles up in the socket
         * buffers, then in its queue. */
        double t0 = tt_now();
        while (c.next < 1 && tt_now() - t0 < 30)
            if (c.tp->ops->progress(c.tp) < 0)
                break;
        h->kvs->flags[1] = 2;
        while (!h->kvs->flags[0] && tt_now() - t0 < 60)
            usleep(2000);
        t0 = tt_now();
        while (c.next < MSGS && !c.bad && tt_now() - t0 < 60)
            if (c.tp->ops->progress(c.tp) < 0) {
                CHECK(0, "progress: %s", c.tp->ops->last_error(c.tp));
                break;
            }
        CHECK(c.next == MSGS && !c.bad, "received %u of %d, %d bad", c.next, MSGS, c.bad);
        h->kvs->flags[1] = 3; /* all in */
    } else {
        static unsigned char buf[LEN];
        long accepted_before_again = -1, refused = 0;
        double t0 = tt_now(), first_again = 0;
        for (uint32_t i = 0; i < MSGS && tt_now() - t0 < 90;) {
            harness_fill(buf, LEN, i);
            int rc = c.tp->ops->send(c.tp, 1, &i, sizeof i, buf, LEN, NULL);
            if (rc == LOCUS_TP_AGAIN) {
                if (accepted_before_again < 0) {
                    accepted_before_again = (long)i;
                    first_again = tt_now();
                }
                refused++;
                /* Refused for a second of progress: the receiver is not reading. */
                if (tt_now() - first_again > 1.0)
                    h->kvs->flags[0] = 1;
                if (c.tp->ops->progress(c.tp) < 0)
                    break;
                continue;
            }
            CHECK(rc == LOCUS_TP_DONE, "send %u: %d", i, rc);
            if (rc != LOCUS_TP_DONE)
                break;
            /* After the first message, wait until the receiver has it (the
             * connection is up), so the flood fills the sockets first. */
            while (i == 0 && h->kvs->flags[1] != 2 && tt_now() - t0 < 30)
                c.tp->ops->progress(c.tp);
            i++;
            c.tp->ops->progress(c.tp);
        }
        h->kvs->flags[0] = 1;
        tcp_stats_t st;
        tcp_tp_stats(c.tp, &st);
        printf("sender: %ld messages (%ld KiB) accepted before the first refusal, %ld refusals, "
               "at most %llu bytes queued\n", accepted_before_again,
               accepted_before_again * LEN / 1024, refused, (unsigned long long)st.queued_max);
        CHECK(accepted_before_again > 0 && accepted_before_again * LEN < (8 << 20),
              "sender never refused, or only after %ld messages", accepted_before_again);
        CHECK(st.queued_max <= SENDQ + LEN + 100, "queue grew to %llu bytes",
              (unsigned long long)st.queued_max);
        CHECK(st.again == (uint64_t)refused, "again counter %llu, refusals %ld",
              (unsigned long long)st.again, refused);
        /* Keep writing until the receiver has everything. */
        double t1 = tt_now();
        while (h->kvs->flags[1] != 3 && tt_now() - t1 < 60)
            if (c.tp->ops->progress(c.tp) < 0)
                break;
    }
    harness_barrier(h);
    c.tp->ops->finalize(c.tp);
    return failures != 0;
}

int main(void)
{
    char v[32];
    snprintf(v, sizeof v, "%d", SENDQ);
    setenv("LOCUS_TCP_SENDQ_MAX", v, 1);
    setenv("LOCUS_TCP_SNDBUF", "64k", 1);
    setenv("LOCUS_TCP_RCVBUF", "64k", 1);
    setenv("LOCUS_NET_IFACES", "lo", 0);
    harness_t h;
    if (harness_open(&h, 2) != 0)
        return 1;
    int failed = harness_run(&h, bp_rank, NULL, 100);
    harness_close(&h);
    if (failed) {
        fprintf(stderr, "FAILED\n");
        return 1;
    }
    printf("No Errors\n");
    return 0;
}
