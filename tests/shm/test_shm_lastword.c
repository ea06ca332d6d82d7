/*
 * A peer's last word is not lost: rank 1 receives a large message by CMA,
 * puts the FIN in rank 0's ring, finalizes and exits. Rank 0, which has not
 * polled its ring since, then runs its idle path (the dead-peer check): it
 * must take the FIN instead of declaring the peer dead with a transfer
 * outstanding. This is the window between one progress round's poll of
 * the ring and its liveness check, made deterministic.
 */
#include "shm_harness.h"
#include "shm_tp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LEN (256u << 10)

typedef struct {
    locus_tp_t *tp;
    int arrived, done, sent;
    unsigned char buf[LEN];
} lcore_t;

static void l_deliver(void *core, int src, const void *hdr, size_t hdrlen, const void *data,
                      size_t len)
{
    (void)core, (void)src, (void)hdr, (void)hdrlen, (void)data, (void)len;
}

static void l_arrived(void *core, int src, const void *hdr, size_t hdrlen, size_t len,
                      locus_tp_rndv_t *r)
{
    lcore_t *c = core;
    (void)src, (void)hdr, (void)hdrlen;
    c->arrived = 1;
    /* Read whole by the receiver (the bulk hint): a split would wait for
     * rank 0, which does not progress on purpose. */
    c->tp->ops->rndv_recv(c->tp, r, c->buf, len, NULL, LOCUS_TP_RECV_BULK);
}

static void l_done(void *core, void *ctx)
{
    (void)ctx;
    ((lcore_t *)core)->done = 1;
}

static void l_sent(void *core, void *ctx)
{
    (void)ctx;
    ((lcore_t *)core)->sent = 1;
}

static const locus_tp_upcalls_t lup = { l_deliver, l_arrived, l_done, l_sent, NULL };

static int pid_gone(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *rp = strrchr(buf, ')');
    return rp && (rp[2] == 'Z' || rp[2] == 'X');
}

static int lastword_rank(harness_t *h, int rank, void *arg)
{
    (void)arg;
    static lcore_t c;
    locus_tp_init_t in;
    harness_init(h, &in, rank, &lup, &c);
    char err[256];
    if (locus_tp_shm_create(&in, &c.tp, err, sizeof err) != 0 || !c.tp) {
        fprintf(stderr, "rank %d: %s\n", rank, err);
        return 1;
    }
    shm_tp_t *tp = (shm_tp_t *)c.tp;
    if (rank == 0) {
        for (size_t i = 0; i < LEN; i++)
            c.buf[i] = (unsigned char)(i * 7);
        int rc = c.tp->ops->send(c.tp, 1, "h", 1, c.buf, LEN, NULL);
        if (rc != LOCUS_TP_PENDING) {
            fprintf(stderr, "rank 0: send gave %d, want PENDING\n", rc);
            return 1;
        }
        /* No progress until rank 1 is gone: its FIN waits in our ring. */
        while (h->kvs->flags[1] != 2)
            usleep(1000);
        while (!pid_gone(tp->peers[1].pid))
            usleep(1000);
        for (int i = 0; i < 4096; i++)
            if (shm_tp_idle(tp) < 0) {
                fprintf(stderr, "rank 0: peer declared dead with its FIN in our ring\n");
                return 1;
            }
        for (int i = 0; i < 1000000 && !c.sent; i++)
            if (harness_progress(h, c.tp) < 0) {
                fprintf(stderr, "rank 0: progress failed\n");
                return 1;
            }
        if (!c.sent) {
            fprintf(stderr, "rank 0: the FIN never completed the send\n");
            return 1;
        }
        c.tp->ops->finalize(c.tp);
        return 0;
    }
    time_t t0 = time(NULL);
    while (!c.done && time(NULL) - t0 < 30)
        if (harness_progress(h, c.tp) < 0)
            return 1;
    for (size_t i = 0; i < LEN && c.done; i++)
        if (c.buf[i] != (unsigned char)(i * 7)) {
            fprintf(stderr, "rank 1: byte %zu wrong\n", i);
            return 1;
        }
    if (!c.done || tp->stats.cma_recv != 1) {
        fprintf(stderr, "rank 1: message not received by CMA (done %d)\n", c.done);
        return 1;
    }
    c.tp->ops->finalize(c.tp);
    h->kvs->flags[1] = 2;
    return 0;
}

int main(void)
{
    harness_t h;
    harness_set_jobid("lastword");
    setenv("LOCUS_SINGLE_COPY", "cma", 1);
    if (harness_open(&h, 2) != 0)
        return 1;
    int bad = harness_run(&h, lastword_rank, NULL, 60);
    int left = harness_shm_leftovers();
    harness_close(&h);
    if (left)
        fprintf(stderr, "%d segment(s) left in /dev/shm\n", left);
    if (bad || left)
        return 1;
    printf("lastword: ok\n");
    return 0;
}
