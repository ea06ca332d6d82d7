/*
 * A rank is SIGKILLed in the middle of traffic: the survivors must notice
 * (progress() < 0 once they wait on it) instead of hanging, and /dev/shm
 * must hold nothing of the job, since segments are unlinked at start-up.
 *
 *   test_shm_kill NPROCS
 */
#include "shm_harness.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define VICTIM 1
#define EXIT_NOTICED 3

typedef struct {
    locus_tp_t *tp;
    long got, pending;
    unsigned char rbuf[1 << 20];
} kcore_t;

static void k_deliver(void *core, int src, const void *hdr, size_t hdrlen, const void *data, size_t len)
{
    (void)src, (void)hdr, (void)hdrlen, (void)data, (void)len;
    ((kcore_t *)core)->got++;
}

static void k_arrived(void *core, int src, const void *hdr, size_t hdrlen, size_t len, locus_tp_rndv_t *r)
{
    kcore_t *c = core;
    (void)src, (void)hdr, (void)hdrlen;
    /* Receivers post at once; the victim dies with some of them open. */
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

static int kill_rank(harness_t *h, int rank, void *arg)
{
    (void)arg;
    static kcore_t c;
    static unsigned char sbuf[1 << 20];
    locus_tp_init_t in;
    harness_init(h, &in, rank, &kup, &c);
    char err[256];
    if (locus_tp_shm_create(&in, &c.tp, err, sizeof err) != 0 || !c.tp) {
        fprintf(stderr, "rank %d: %s\n", rank, err);
        return 1;
    }
    harness_barrier(h);
    h->kvs->flags[rank] = 1;
    uint64_t x = (uint64_t)rank + 1;
    for (long i = 0;; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int dst = (int)((x >> 33) % (uint64_t)(h->nprocs - 1));
        if (dst >= rank)
            dst++;
        size_t len = (x >> 20) % 4 == 0 ? sizeof sbuf : (x >> 24) % 512;
        int rc;
        while ((rc = c.tp->ops->send(c.tp, dst, &i, sizeof i, sbuf, len, NULL)) == LOCUS_TP_AGAIN)
            if (harness_progress(h, c.tp) < 0)
                return EXIT_NOTICED;
        if (rc < 0)
            return 1;
        if (rc == LOCUS_TP_PENDING)
            c.pending++;
        /* At most two large sends in flight, as a blocking MPI program would. */
        while (c.pending > 2)
            if (harness_progress(h, c.tp) < 0)
                return EXIT_NOTICED;
        if (harness_progress(h, c.tp) < 0)
            return EXIT_NOTICED;
        if (c.got >= 200)
            h->kvs->flags[rank] = 2; /* traffic flows: the parent may kill now */
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4;
    harness_set_jobid("shmk");
    harness_t h;
    if (n < 3 || harness_open(&h, n) != 0) {
        fprintf(stderr, "test_shm_kill: NPROCS must be 3..%d\n", HARNESS_MAX_PROCS);
        return 2;
    }
    pid_t pids[HARNESS_MAX_PROCS];
    for (int r = 0; r < n; r++) {
        pids[r] = fork();
        if (pids[r] == 0) {
            alarm(60);
            _exit(kill_rank(&h, r, NULL));
        }
    }
    int fail = 0;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int up = 0; up < n;) {
        up = 0;
        for (int r = 0; r < n; r++)
            up += h.kvs->flags[r] == 2;
        usleep(1000);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec > 30) {
            fprintf(stderr, "ranks did not start\n");
            fail = 1;
            break;
        }
    }
    kill(pids[VICTIM], SIGKILL);
    /* Survivors must exit with EXIT_NOTICED within a few seconds. */
    int left = n;
    clock_gettime(CLOCK_MONOTONIC, &t0);
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
                if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL) {
                    fprintf(stderr, "victim ended otherwise than by SIGKILL\n");
                    fail = 1;
                }
            } else if (!WIFEXITED(st) || WEXITSTATUS(st) != EXIT_NOTICED) {
                fprintf(stderr, "rank %d: status %#x, expected exit %d\n", r, st, EXIT_NOTICED);
                fail = 1;
            }
            continue;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec > 20) {
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
    if (harness_shm_leftovers() != 0)
        fail = 1;
    if (fail)
        return 1;
    printf("No Errors\n");
    return 0;
}
