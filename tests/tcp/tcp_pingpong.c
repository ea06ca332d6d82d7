/*
 * tcp_pingpong — round trips of the tcp transport alone (no MPI layer):
 * two forked ranks (the shm tests' harness), rank 0 sends SIZE bytes, rank
 * 1 sends them back, ITERS times per size after a warm-up; rank 0 prints
 * the median and mean round trip in microseconds per size. With
 * LOCUS_NET_IFACES=lo,eth0 (or any two interfaces) the pair has two rails,
 * so the failover bookkeeping (acknowledgements, kept frames) is on; with
 * one interface it is off. Used to measure what that bookkeeping costs
 * (docs/tcp.md); not a ctest case.
 *
 *   tcp_pingpong [ITERS] [SIZES]     (defaults: 20000, "8,4k,64k,1m")
 */
#include "shm_harness.h"
#include "tcp.h"
#include "tcp_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    locus_tp_t *tp;
    long got;        /* messages whose data is in */
    long sent;       /* large sends completed */
    unsigned char *buf;
    size_t len;
} pcore_t;

static void p_deliver(void *core, int src, const void *hdr, size_t hdrlen, const void *data,
                      size_t len)
{
    (void)src, (void)hdr, (void)hdrlen;
    pcore_t *c = core;
    memcpy(c->buf, data, len);
    c->got++;
}

static void p_arrived(void *core, int src, const void *hdr, size_t hdrlen, size_t len,
                      locus_tp_rndv_t *r)
{
    (void)src, (void)hdr, (void)hdrlen;
    pcore_t *c = core;
    c->tp->ops->rndv_recv(c->tp, r, c->buf, len, NULL, 0);
}

static void p_done(void *core, void *ctx)
{
    (void)ctx;
    ((pcore_t *)core)->got++;
}

static void p_sent(void *core, void *ctx)
{
    (void)ctx;
    ((pcore_t *)core)->sent++;
}

static const locus_tp_upcalls_t pup = { p_deliver, p_arrived, p_done, p_sent, NULL };

typedef struct {
    long iters;
    long sizes[16];
    int nsizes;
} pargs_t;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sends len bytes to peer and waits until the send is done (a large one
 * completes later). */
static int send_one(harness_t *h, pcore_t *c, int peer, size_t len)
{
    int rc;
    uint32_t tag = 7;
    while ((rc = c->tp->ops->send(c->tp, peer, &tag, sizeof tag, c->buf, len, NULL)) ==
           LOCUS_TP_AGAIN)
        if (harness_progress(h, c->tp) < 0)
            return -1;
    if (rc < 0)
        return -1;
    if (rc == LOCUS_TP_PENDING) {
        long want = c->sent + 1;
        while (c->sent < want)
            if (harness_progress(h, c->tp) < 0)
                return -1;
    }
    return 0;
}

static int recv_one(harness_t *h, pcore_t *c)
{
    long want = c->got + 1;
    while (c->got < want)
        if (harness_progress(h, c->tp) < 0)
            return -1;
    return 0;
}

static int pp_rank(harness_t *h, int rank, void *arg)
{
    const pargs_t *a = arg;
    static pcore_t c;
    locus_tp_init_t in;
    harness_init(h, &in, rank, &pup, &c);
    char err[256];
    if (locus_tp_tcp_create(&in, &c.tp, err, sizeof err) != 0) {
        fprintf(stderr, "rank %d: %s\n", rank, err);
        return 1;
    }
    size_t max = 0;
    for (int s = 0; s < a->nsizes; s++)
        max = (size_t)a->sizes[s] > max ? (size_t)a->sizes[s] : max;
    c.buf = calloc(1, max ? max : 1);
    double *rt = malloc(sizeof *rt * (size_t)a->iters);
    int peer = 1 - rank;
    for (int s = 0; s < a->nsizes; s++) {
        size_t len = (size_t)a->sizes[s];
        long iters = len >= (1 << 20) ? a->iters / 20 + 1 : a->iters;
        long warm = iters / 10 + 10;
        for (long i = -warm; i < iters; i++) {
            double t0 = tt_now();
            if (rank == 0) {
                if (send_one(h, &c, peer, len) || recv_one(h, &c))
                    goto fail;
            } else {
                if (recv_one(h, &c) || send_one(h, &c, peer, len))
                    goto fail;
            }
            if (i >= 0)
                rt[i] = (tt_now() - t0) * 1e6;
        }
        if (rank == 0) {
            double sum = 0;
            for (long i = 0; i < iters; i++)
                sum += rt[i];
            qsort(rt, (size_t)iters, sizeof *rt, cmp_double);
            tcp_stats_t st;
            tcp_tp_stats(c.tp, &st);
            printf("size %8zu  rails %d  round trip median %9.2f us  mean %9.2f us  (%ld)\n",
                   len, st.nrails, rt[iters / 2], sum / (double)iters, iters);
            fflush(stdout);
        }
    }
    harness_barrier(h);
    c.tp->ops->finalize(c.tp);
    free(rt);
    return 0;
fail:
    fprintf(stderr, "rank %d: %s\n", rank, c.tp->ops->last_error(c.tp));
    return 1;
}

int main(int argc, char **argv)
{
    pargs_t a = { .iters = argc > 1 ? atol(argv[1]) : 20000 };
    a.nsizes = harness_parse_sizes(argc > 2 ? argv[2] : "8,4k,64k,1m", a.sizes, 16);
    harness_t h;
    if (a.iters < 1 || a.nsizes < 1 || harness_open(&h, 2) != 0) {
        fprintf(stderr, "usage: tcp_pingpong [ITERS] [SIZES]\n");
        return 2;
    }
    int failed = harness_run(&h, pp_rank, &a, 600);
    harness_close(&h);
    return failed ? 1 : 0;
}
