/*
 * core_bench — what the core costs per message: matching, requests and
 * completion, over the self transport in one process (no MPI layer, no
 * second process, so the numbers hold on a busy machine). A program to
 * run by hand, not a test:
 *
 *   core_bench [-n MESSAGES] [-d DEPTHS] [-r REPEATS] [--json]
 *     -n  messages per measurement (default 1000000)
 *     -d  comma-separated numbers of other receives/messages waiting while
 *         measuring (default 0,16,256,4096)
 *     -r  repeats of each measurement; the best is shown (default 5)
 *
 * Cases, each a receive and a send of one 8-byte message on context 1:
 *   posted      the receive is posted first (a ping-pong's path)
 *   unexpected  the message arrives first
 *   posted_ctx  posted, with DEPTH receives waiting on other contexts
 *   posted_src  posted, with DEPTH receives waiting for other sources
 *   unexp_src   unexpected, with DEPTH messages from other sources waiting
 * The message's header names source 0; the waiting ones other sources
 * (the header's source is the communicator rank, any value will do).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "locus_core.h"

typedef struct {
    locus_core_t c;
    char rbuf[64], sbuf[64];
} bench_t;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what)
{
    fprintf(stderr, "core_bench: %s\n", what);
    exit(1);
}

static locus_req_t *recv_post(bench_t *b, uint32_t ctx, int rank, int tag)
{
    locus_req_t *r = locus_core_req_get(&b->c);
    if (!r)
        die("out of memory");
    r->ctx = ctx;
    r->rank = rank;
    r->tag = tag;
    r->rbuf = b->rbuf;
    r->len = sizeof b->rbuf;
    locus_core_irecv(&b->c, r);
    return r;
}

static void send_one(bench_t *b, uint32_t ctx, int src, int tag)
{
    locus_req_t *r = locus_core_req_get(&b->c);
    if (!r)
        die("out of memory");
    r->kind = LOCUS_REQ_SEND;
    r->world = 0;
    r->hdr = (locus_hdr_t){ .ctx = ctx, .src = src, .tag = tag };
    r->hdrlen = LOCUS_HDR_SHORT;
    r->sbuf = b->sbuf;
    r->len = 8;
    if (locus_core_isend(&b->c, r) != 0 || !r->done)
        die("self send did not complete");
    locus_core_req_put(&b->c, r);
}

static void open_core(bench_t *b)
{
    char err[256];
    memset(b, 0, sizeof *b);
    if (locus_core_init(&b->c, 0, 1, 1, err, sizeof err))
        die(err);
    locus_tp_init_t in = { .rank = 0, .size = 1, .local_size = 1, .up = &locus_core_upcalls,
                           .core = &b->c };
    locus_tp_t *tp;
    if (locus_tp_self_create(&in, &tp, err, sizeof err) || locus_core_add_tp(&b->c, tp))
        die(err);
}

enum { POSTED, UNEXPECTED, POSTED_CTX, POSTED_SRC, UNEXP_SRC, NCASES };
static const char *const case_name[NCASES] = {"posted", "unexpected", "posted_ctx", "posted_src",
                                              "unexp_src"};

/* Nanoseconds per message for one case at one depth. */
static double measure(int kind, long depth, long n)
{
    bench_t *b = malloc(sizeof *b);
    if (!b)
        die("out of memory");
    open_core(b);
    for (long i = 0; i < depth; i++) {
        if (kind == POSTED_CTX)
            recv_post(b, 1000 + (uint32_t)i, 0, 1);
        else if (kind == POSTED_SRC)
            recv_post(b, 1, 1 + (int)i, 1);
        else if (kind == UNEXP_SRC)
            send_one(b, 1, 1 + (int)i, 1);
    }
    int posted_first = kind != UNEXPECTED && kind != UNEXP_SRC;
    double t0 = now();
    for (long i = 0; i < n; i++) {
        locus_req_t *r;
        if (posted_first) {
            r = recv_post(b, 1, 0, 1);
            send_one(b, 1, 0, 1);
        } else {
            send_one(b, 1, 0, 1);
            r = recv_post(b, 1, 0, 1);
        }
        if (!r->done || r->st_source != 0)
            die("the message did not match its receive");
        locus_core_req_put(&b->c, r);
    }
    double t = now() - t0;
    locus_core_finalize(&b->c);
    free(b);
    return t * 1e9 / (double)n;
}

int main(int argc, char **argv)
{
    long n = 1000000, repeats = 5, depths[32];
    int ndepths = 0, json = 0;
    const char *dlist = "0,16,256,4096";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
            n = atol(argv[++i]);
        else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
            repeats = atol(argv[++i]);
        else if (strcmp(argv[i], "-d") == 0 && i + 1 < argc)
            dlist = argv[++i];
        else if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else {
            fprintf(stderr, "usage: core_bench [-n MESSAGES] [-d DEPTHS] [-r REPEATS] [--json]\n");
            return 2;
        }
    }
    for (const char *p = dlist; *p && ndepths < 32;) {
        char *end;
        long d = strtol(p, &end, 10);
        if (end == p || d < 0) {
            fprintf(stderr, "core_bench: bad -d '%s' (want numbers >= 0, comma-separated)\n",
                    dlist);
            return 2;
        }
        depths[ndepths++] = d;
        p = *end == ',' ? end + 1 : end;
    }
    if (n < 1 || repeats < 1) {
        fprintf(stderr, "core_bench: -n and -r must be positive\n");
        return 2;
    }
    if (json)
        printf("{\"benchmark\":\"core_bench\",\"messages\":%ld,\"rows\":[", n);
    else
        printf("# %-12s %8s %10s\n", "case", "depth", "ns/msg");
    int first = 1;
    for (int k = 0; k < NCASES; k++) {
        for (int d = 0; d < ndepths; d++) {
            long depth = k < POSTED_CTX ? 0 : depths[d];
            if (k < POSTED_CTX && d > 0)
                break;
            double best = 0;
            for (long r = 0; r < repeats; r++) {
                double t = measure(k, depth, n);
                if (r == 0 || t < best)
                    best = t;
            }
            if (json)
                printf("%s{\"case\":\"%s\",\"depth\":%ld,\"ns_per_msg\":%.2f}", first ? "" : ",",
                       case_name[k], depth, best);
            else
                printf("  %-12s %8ld %10.1f\n", case_name[k], depth, best);
            first = 0;
            fflush(stdout);
        }
    }
    if (json)
        printf("]}\n");
    return 0;
}
