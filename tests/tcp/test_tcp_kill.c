/*
 * A rank dies in the middle of traffic, either SIGKILLed ("kill") or by
 * exiting without finalize, so without goodbye ("exit"): every survivor's
 * progress() must fail within seconds (a reset or end of stream from a
 * peer that did not say goodbye is fatal), naming the dead rank, instead
 * of hanging.
 *
 *   test_tcp_kill NPROCS kill|exit
 */
#include "shm_harness.h"
#include "tcp.h"
#include "tcp_test.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define VICTIM 1
#define EXIT_NOTICED 3
#define GO (HARNESS_MAX_PROCS - 1) /* flags[GO]: the parent tells the victim to exit, */
                                   /* flags[GO - 1]: the survivors to end */

typedef struct {
    locus_tp_t *tp;
    long got, pending;
    int seen[HARNESS_MAX_PROCS];
    unsigned char rbuf[1 << 20];
} kcore_t;

static void k_deliver(void *core, int src, const void *hdr, size_t hdrlen, const void *data,
                      size_t len)
{
    (void)hdr, (void)hdrlen, (void)data, (void)len;
    kcore_t *c = core;
    c->got++;
    c->seen[src] = 1;
}

static void k_arrived(void *core, int src, const void *hdr, size_t hdrlen, size_t len,
                      locus_tp_rndv_t *r)
{
    kcore_t *c = core;
    (void)hdr, (void)hdrlen;
    c->seen[src] = 1;
    c->tp->ops->rndv_recv(c->tp, r, c->rbuf, len < sizeof c->rbuf ? len : sizeof c->rbuf, NULL, 0);
}

static void k_done(void *core, void *ctx)
{
    (void)ctx;
    ((kcore_t *)core)->got++;
}

static void k_sent(void *core, void *ctx)
{
    (void)ctx;
    ((kcore_t *)core)->pending--;
}

static const locus_tp_upcalls_t kup = { k_deliver, k_arrived, k_done, k_sent, NULL };

static harness_t *H;

/* A survivor that noticed stays alive (so that it is not mistaken for a
 * second victim by the others) until the parent saw everyone notice. */
static int noticed(kcore_t *c, int rank)
{
    const char *why = c->tp->ops->last_error(c->tp);
    char want[64];
    snprintf(want, sizeof want, "connection to rank %d", VICTIM);
    if (!why || !strstr(why, want) || !strstr(why, "without goodbye")) {
        fprintf(stderr, "rank %d: failed, but the reason does not name the dead rank: %s\n", rank,
                why ? why : "(none)");
        return 1;
    }
    H->kvs->flags[rank] = 4;
    double t0 = tt_now();
    while (!H->kvs->flags[GO - 1] && tt_now() - t0 < 30)
        usleep(1000);
    return EXIT_NOTICED;
}

static int kill_rank(harness_t *h, int rank, const char *mode)
{
    static kcore_t c;
    static unsigned char sbuf[1 << 20];
    locus_tp_init_t in;
    harness_init(h, &in, rank, &kup, &c);
    char err[256];
    if (locus_tp_tcp_create(&in, &c.tp, err, sizeof err) != 0) {
        fprintf(stderr, "rank %d: %s\n", rank, err);
        return 1;
    }
    uint64_t x = (uint64_t)rank + 1;
    for (long i = 0;; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        /* Round-robin first (every pair connected), then random peers. */
        int dst = i < h->nprocs ? (int)i : (int)((x >> 33) % (uint64_t)h->nprocs);
        if (dst == rank)
            continue;
        size_t len = (x >> 20) % 4 == 0 ? sizeof sbuf : (x >> 24) % 512;
        int rc;
        while ((rc = c.tp->ops->send(c.tp, dst, &i, sizeof i, sbuf, len, NULL)) == LOCUS_TP_AGAIN)
            if (c.tp->ops->progress(c.tp) < 0)
                return noticed(&c, rank);
        if (rc < 0)
            return noticed(&c, rank);
        if (rc == LOCUS_TP_PENDING)
            c.pending++;
        while (c.pending > 2) /* at most two large sends in flight */
            if (c.tp->ops->progress(c.tp) < 0)
                return noticed(&c, rank);
        if (c.tp->ops->progress(c.tp) < 0)
            return noticed(&c, rank);
        int all = 1;
        for (int p = 0; p < h->nprocs; p++)
            all &= p == rank || c.seen[p];
        if (all && c.got >= 200) {
            h->kvs->flags[rank] = 2; /* traffic flows with everyone */
            if (rank == VICTIM && strcmp(mode, "exit") == 0 && h->kvs->flags[GO])
                _exit(0); /* no finalize: no goodbye */
        }
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4;
    const char *mode = argc > 2 ? argv[2] : "kill";
    harness_t h;
    H = &h;
    setenv("LOCUS_NET_IFACES", "lo", 0);
    if (n < 3 || n > GO - 1 || (strcmp(mode, "kill") && strcmp(mode, "exit")) ||
        harness_open(&h, n) != 0) {
        fprintf(stderr, "usage: test_tcp_kill NPROCS(3..%d) kill|exit\n", GO - 1);
        return 2;
    }
    pid_t pids[HARNESS_MAX_PROCS];
    fflush(NULL);
    for (int r = 0; r < n; r++) {
        pids[r] = fork();
        if (pids[r] == 0) {
            alarm(60);
            _exit(kill_rank(&h, r, mode));
        }
    }
    int fail = 0;
    double t0 = tt_now();
    for (int up = 0; up < n;) {
        up = 0;
        for (int r = 0; r < n; r++)
            up += h.kvs->flags[r] == 2;
        usleep(1000);
        if (tt_now() - t0 > 30) {
            fprintf(stderr, "ranks did not start\n");
            fail = 1;
            break;
        }
    }
    if (strcmp(mode, "kill") == 0)
        kill(pids[VICTIM], SIGKILL);
    else
        h.kvs->flags[GO] = 1; /* the victim exits by itself */
    /* Every survivor must notice within 20 s (it then waits for us). */
    t0 = tt_now();
    for (int all = 0; !all && tt_now() - t0 < 20;) {
        all = 1;
        for (int r = 0; r < n; r++)
            all &= r == VICTIM || h.kvs->flags[r] == 4;
        usleep(2000);
    }
    h.kvs->flags[GO - 1] = 1;
    int left = n;
    t0 = tt_now();
    while (left > 0) {
        int st;
        pid_t p = waitpid(-1, &st, WNOHANG);
        if (p > 0) {
            left--;
            int r = 0;
            while (r < n && pids[r] != p)
                r++;
            pids[r] = 0;
            if (r == VICTIM) {
                int ok = strcmp(mode, "kill") == 0 ? WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL
                                                   : WIFEXITED(st) && WEXITSTATUS(st) == 0;
                if (!ok) {
                    fprintf(stderr, "victim ended with status %#x\n", st);
                    fail = 1;
                }
            } else if (!WIFEXITED(st) || WEXITSTATUS(st) != EXIT_NOTICED) {
                fprintf(stderr, "rank %d: status %#x, expected exit %d\n", r, st, EXIT_NOTICED);
                fail = 1;
            }
            continue;
        }
        if (tt_now() - t0 > 20) {
            for (int r = 0; r < n; r++)
                if (pids[r] > 0) {
                    fprintf(stderr, "rank %d did not notice the dead peer\n", r);
                    kill(pids[r], SIGKILL);
                    waitpid(pids[r], NULL, 0);
                }
            fail = 1;
            break;
        }
        usleep(2000);
    }
    harness_close(&h);
    if (fail)
        return 1;
    printf("No Errors (%s)\n", mode);
    return 0;
}
