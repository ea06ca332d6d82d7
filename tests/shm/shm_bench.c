/*
 * shm_bench — ping-pong latency and streaming bandwidth over the shm
 * transport alone (no MPI layer), between two forked processes pinned to
 * CPUs 0 and 1. A program to run by hand, not a test:
 *
 *   shm_bench [-l SIZES] [-b SIZES] [-w WINDOW] [-n]
 *     -l  latency sizes, comma-separated (default 0,8,1k)
 *     -b  bandwidth sizes (default 64k,1M,4M)
 *     -w  messages in flight per bandwidth round (default 64, as osu_bw;
 *         fewer for large sizes, at most 64 MiB in flight)
 *     -r  repeats of each measurement; the best is shown (default 3)
 *     -n  do not pin the two processes
 *
 * Latency is half the mean round trip; bandwidth counts payload bytes
 * received per second (the receiver copies into one buffer, as osu_bw).
 * Tunables (LOCUS_SHM_*, LOCUS_SINGLE_COPY) come from the environment.
 */
#include "locus_tunables.h"
#include "shm.h"
#include "shm_harness.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    locus_tp_t *tp;
    unsigned char *rbuf;
    long recvd, pending;
    int failed;
} bcore_t;

static void b_deliver(void *core, int src, const void *hdr, size_t hdrlen, const void *data, size_t len)
{
    bcore_t *c = core;
    (void)src, (void)hdr, (void)hdrlen;
    if (len)
        memcpy(c->rbuf, data, len);
    c->recvd++;
}

static void b_arrived(void *core, int src, const void *hdr, size_t hdrlen, size_t len, locus_tp_rndv_t *r)
{
    bcore_t *c = core;
    (void)src, (void)hdr, (void)hdrlen;
    if (c->tp->ops->rndv_recv(c->tp, r, c->rbuf, len, NULL, 0) != 0)
        c->failed = 1;
}

static void b_rndv_done(void *core, void *ctx)
{
    (void)ctx;
    ((bcore_t *)core)->recvd++;
}

static void b_send_done(void *core, void *ctx)
{
    (void)ctx;
    ((bcore_t *)core)->pending--;
}

static const locus_tp_upcalls_t bup = { b_deliver, b_arrived, b_rndv_done, b_send_done, NULL };

typedef struct {
    long lat[32], bw[32];
    int nlat, nbw, window, pin, reps;
    long maxsize;
} bargs_t;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void progress(bcore_t *c)
{
    if (c->tp->ops->progress(c->tp) < 0) {
        fprintf(stderr, "shm_bench: progress failed\n");
        exit(1);
    }
}

/* A 24-byte header, about what an MPI core sends (context, source, tag, ...). */
static const unsigned char hdr[24];

static void send1(bcore_t *c, int dst, const void *buf, size_t len)
{
    int rc;
    while ((rc = c->tp->ops->send(c->tp, dst, hdr, sizeof hdr, buf, len, NULL)) == LOCUS_TP_AGAIN)
        progress(c);
    if (rc < 0) {
        fprintf(stderr, "shm_bench: send failed (%d)\n", rc);
        exit(1);
    }
    if (rc == LOCUS_TP_PENDING)
        c->pending++;
}

static void wait_recv(bcore_t *c, long n)
{
    while (c->recvd < n)
        progress(c);
}

static double pingpong(bcore_t *c, int rank, long size, const unsigned char *sbuf, long iters)
{
    double t0 = 0;
    long n = 0;
    c->recvd = 0;
    /* Count messages, not c->recvd + 1: waiting for a send to complete may
     * already have received the next message. */
    for (long i = -iters / 10 - 10; i < iters; i++) {
        if (i == 0)
            t0 = now_s();
        if (rank == 0) {
            send1(c, 1, sbuf, (size_t)size);
            wait_recv(c, ++n);
        } else {
            wait_recv(c, ++n);
            send1(c, 0, sbuf, (size_t)size);
        }
        while (c->pending)
            progress(c);
    }
    return (now_s() - t0) / (double)iters / 2;
}

static double stream(bcore_t *c, int rank, long size, const unsigned char *sbuf, int window, long iters)
{
    double t0 = 0;
    c->recvd = 0;
    long expect = 0;
    for (long i = -2; i < iters; i++) {
        if (i == 0)
            t0 = now_s();
        if (rank == 0) {
            for (int w = 0; w < window; w++)
                send1(c, 1, sbuf, (size_t)size);
            while (c->pending)
                progress(c);
            wait_recv(c, ++expect); /* the ack */
        } else {
            expect += window;
            wait_recv(c, expect);
            send1(c, 0, sbuf, 0);
        }
    }
    double t = now_s() - t0;
    return (double)size * (double)window * (double)iters / t;
}

static int bench_rank(harness_t *hs, int rank, void *arg)
{
    bargs_t *a = arg;
    if (a->pin) {
        cpu_set_t s;
        CPU_ZERO(&s);
        CPU_SET(rank, &s);
        sched_setaffinity(0, sizeof s, &s);
    }
    static bcore_t c;
    c.rbuf = aligned_alloc(4096, (size_t)a->maxsize + 4096);
    unsigned char *sbuf = aligned_alloc(4096, (size_t)a->maxsize + 4096);
    memset(c.rbuf, 1, (size_t)a->maxsize);
    memset(sbuf, 2, (size_t)a->maxsize);
    locus_tp_init_t in;
    harness_init(hs, &in, rank, &bup, &c);
    char err[256];
    if (locus_tp_shm_create(&in, &c.tp, err, sizeof err) != 0 || !c.tp) {
        fprintf(stderr, "shm_bench: %s\n", err);
        return 1;
    }
    if (rank == 0) {
        shm_stats_t st;
        shm_tp_stats(c.tp, &st);
        printf("# shm transport: eager max %llu, LOCUS_SINGLE_COPY=%s (CMA %s, from %s B), chunk %s, pool %s, ring %s\n",
               (unsigned long long)st.eager_max, locus_tunable_str("LOCUS_SINGLE_COPY"),
               st.cma_enabled ? "usable" : "off", locus_tunable_str("LOCUS_SHM_CMA_MIN"),
               locus_tunable_str("LOCUS_SHM_CHUNK_SIZE"), locus_tunable_str("LOCUS_SHM_POOL_SIZE"),
               locus_tunable_str("LOCUS_SHM_RING_SIZE"));
        printf("# %10s %12s\n", "bytes", "latency_us");
    }
    for (int i = 0; i < a->nlat; i++) {
        long iters = a->lat[i] <= 4096 ? 100000 : 100000000 / (a->lat[i] + 1000);
        double t = 1e9;
        for (int r = 0; r < a->reps; r++) {
            harness_barrier(hs);
            double x = pingpong(&c, rank, a->lat[i], sbuf, iters);
            t = x < t ? x : t;
        }
        if (rank == 0)
            printf("  %10ld %12.3f\n", a->lat[i], t * 1e6);
    }
    if (rank == 0 && a->nbw)
        printf("# %10s %12s\n", "bytes", "MB/s");
    for (int i = 0; i < a->nbw; i++) {
        /* Short runs: at most 64 MiB in flight, about 256 MiB per measurement. */
        int window = a->window;
        while (window > 1 && (long)window * a->bw[i] > (64L << 20))
            window /= 2;
        long per = (long)window * (a->bw[i] ? a->bw[i] : 1);
        long iters = (256L << 20) / per;
        if (iters < 2)
            iters = 2;
        double bw = 0;
        for (int r = 0; r < a->reps; r++) {
            harness_barrier(hs);
            double x = stream(&c, rank, a->bw[i], sbuf, window, iters);
            bw = x > bw ? x : bw;
        }
        if (rank == 0)
            printf("  %10ld %12.0f   (window %d)\n", a->bw[i], bw / 1e6, window);
    }
    fflush(stdout);
    harness_barrier(hs);
    c.tp->ops->finalize(c.tp);
    return c.failed;
}

int main(int argc, char **argv)
{
    bargs_t a = { .lat = { 0, 8, 1024 }, .bw = { 65536, 1 << 20, 4 << 20 },
                  .nlat = 3, .nbw = 3, .window = 64, .pin = 1, .reps = 3 };
    int opt;
    while ((opt = getopt(argc, argv, "l:b:w:r:n")) != -1) {
        switch (opt) {
        case 'l': a.nlat = harness_parse_sizes(optarg, a.lat, 32); break;
        case 'b': a.nbw = harness_parse_sizes(optarg, a.bw, 32); break;
        case 'w': a.window = atoi(optarg); break;
        case 'r': a.reps = atoi(optarg); break;
        case 'n': a.pin = 0; break;
        default: a.nlat = -1;
        }
        if (a.nlat < 0 || a.nbw < 0 || a.window < 1 || a.reps < 1) {
            fprintf(stderr, "usage: shm_bench [-l SIZES] [-b SIZES] [-w WINDOW] [-r REPEATS] [-n]\n");
            return 2;
        }
    }
    a.maxsize = 1;
    for (int i = 0; i < a.nlat; i++)
        a.maxsize = a.lat[i] > a.maxsize ? a.lat[i] : a.maxsize;
    for (int i = 0; i < a.nbw; i++)
        a.maxsize = a.bw[i] > a.maxsize ? a.bw[i] : a.maxsize;
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
        a.pin = 0;
    harness_set_jobid("shmbench");
    harness_t h;
    if (harness_open(&h, 2) != 0)
        return 1;
    int failed = harness_run(&h, bench_rank, &a, 300);
    harness_close(&h);
    return failed ? 1 : 0;
}
