/*
 * The transport's protocol choice follows the node decision the core hands
 * it (locus_tp_init_t.oversubscribed), never one of its own: run under an
 * affinity shim that makes a fixed 1024-bit cpu_set_t fail with EINVAL, as
 * on a host with 2048 possible CPUs, 2 ranks on a node of at least 2 CPUs
 * must be told "oversubscribed: no" and move a 256 KiB message by CMA split
 * between both sides (LOCUS_SINGLE_COPY=auto, CMA from 128 KiB); told
 * "oversubscribed", the receiver reads it all (the sender may not be
 * running to write its half), and the rule alone decides: CMA from 128
 * KiB, CMA when unset (uncalibrated), pipelined when CMA is from 1 GiB;
 * not oversubscribed with the rule unset (1 GiB), pipelined.
 * Where the kernel refuses CMA, pipelined.
 *
 *   test_shm_decide SHIM.so   (re-executes itself with LD_PRELOAD=SHIM.so)
 */
#include "shm.h"
#include "shm_harness.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LEN (256u << 10)

typedef struct {
    locus_tp_t *tp;
    int done, sent;
    locus_tp_rndv_t *rndv;
    unsigned char buf[LEN];
} core_t;

static void c_deliver(void *core, int src, const void *hdr, size_t hdrlen, const void *data,
                      size_t len)
{
    (void)core, (void)src, (void)hdr, (void)hdrlen, (void)data, (void)len;
}

static void c_arrived(void *core, int src, const void *hdr, size_t hdrlen, size_t len,
                      locus_tp_rndv_t *r)
{
    core_t *c = core;
    (void)src, (void)hdr, (void)hdrlen;
    c->tp->ops->rndv_recv(c->tp, r, c->buf, len, NULL, 0);
}

static void c_done(void *core, void *ctx)
{
    (void)ctx;
    ((core_t *)core)->done = 1;
}

static void c_sent(void *core, void *ctx)
{
    (void)ctx;
    ((core_t *)core)->sent = 1;
}

static const locus_tp_upcalls_t ups = { c_deliver, c_arrived, c_done, c_sent, NULL };

/* One run: whether the ranks are told oversubscribed, LOCUS_SHM_CMA_MIN
 * (NULL: unset, and no calibration), whether the 256 KiB message must go
 * by CMA. */
typedef struct {
    int over;
    const char *cma_min;
    int by_cma;
} decide_case_t;

static int decide_rank(harness_t *h, int rank, void *arg)
{
    const decide_case_t *k = arg;
    static core_t c;
    int bad = 0;
    locus_tp_init_t in;
    harness_init(h, &in, rank, &ups, &c);
    char err[256], line[256];
    if (locus_tp_shm_create(&in, &c.tp, err, sizeof err) != 0 || !c.tp) {
        fprintf(stderr, "rank %d: %s\n", rank, err);
        return 1;
    }
    if (!c.tp->ops->describe) {
        fprintf(stderr, "rank %d: the shm transport offers no describe op\n", rank);
        return 1;
    }
    c.tp->ops->describe(c.tp, line, sizeof line);
    shm_stats_t st;
    shm_tp_stats(c.tp, &st);
    printf("rank %d (told oversubscribed=%d): %s\n", rank, h->oversubscribed, line);
    const char *want = h->oversubscribed ? "oversubscribed: yes" : "oversubscribed: no";
    if (!strstr(line, want) || st.oversubscribed != h->oversubscribed) {
        fprintf(stderr, "rank %d: describe says '%s', want '%s'\n", rank, line, want);
        bad = 1;
    }
    if (rank == 0) {
        for (size_t i = 0; i < LEN; i++)
            c.buf[i] = (unsigned char)(i * 31 + 7);
        if (c.tp->ops->send(c.tp, 1, "d", 1, c.buf, LEN, NULL) != LOCUS_TP_PENDING)
            bad = 1;
        for (long i = 0; i < 100000000 && !c.sent; i++)
            if (harness_progress(h, c.tp) < 0)
                return 1;
    } else {
        for (long i = 0; i < 100000000 && !c.done; i++)
            if (harness_progress(h, c.tp) < 0)
                return 1;
        for (size_t i = 0; i < LEN; i++)
            if (c.buf[i] != (unsigned char)(i * 31 + 7)) {
                fprintf(stderr, "rank 1: byte %zu wrong\n", i);
                bad = 1;
                break;
            }
        shm_tp_stats(c.tp, &st);
        int want_cma = st.cma_enabled && k->by_cma, want_split = want_cma && !h->oversubscribed;
        if (!c.done || st.cma_recv != (uint64_t)want_cma || st.pipe_recv != (uint64_t)!want_cma ||
            st.split_recv != (uint64_t)want_split) {
            fprintf(stderr, "rank 1: %llu by CMA (%llu split), %llu pipelined; want %s (CMA %s)\n",
                    (unsigned long long)st.cma_recv, (unsigned long long)st.split_recv,
                    (unsigned long long)st.pipe_recv,
                    want_split ? "CMA split" : want_cma ? "CMA, not split" : "pipelined",
                    st.cma_enabled ? "usable" : "refused");
            bad = 1;
        }
    }
    harness_barrier(h);
    c.tp->ops->finalize(c.tp);
    return bad;
}

/* With LD_PRELOAD set, ASan (when built in) must be told that its runtime
 * is not first in the library list. */
static void reexec_with_shim(const char *shim, char **argv)
{
    setenv("LD_PRELOAD", shim, 1);
    const char *asan = getenv("ASAN_OPTIONS");
    char opts[1024];
    snprintf(opts, sizeof opts, "%s%sverify_asan_link_order=0", asan ? asan : "",
             asan && *asan ? ":" : "");
    setenv("ASAN_OPTIONS", opts, 1);
    setenv("SHM_DECIDE_SHIMMED", "1", 1);
    execv("/proc/self/exe", argv);
    perror("execv");
    exit(1);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_shm_decide AFFINITY_SHIM.so\n");
        return 2;
    }
    if (!getenv("SHM_DECIDE_SHIMMED"))
        reexec_with_shim(argv[1], argv);
    /* The shim is in force: the fixed-size call fails as on a big host. */
    cpu_set_t set;
    errno = 0;
    if (sched_getaffinity(0, sizeof set, &set) != -1 || errno != EINVAL) {
        fprintf(stderr, "the affinity shim is not in force (LD_PRELOAD=%s)\n", argv[1]);
        return 1;
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online < 2) {
        printf("SKIPPED: %ld CPU online, the case needs 2\n", online);
        return 77;
    }
    harness_set_jobid("shmdec");
    setenv("LOCUS_SINGLE_COPY", "auto", 1);
    setenv("LOCUS_TUNE_FILE", "none", 1);
    /* Oversubscribed, the rule alone: CMA where it says so, and for every
     * large message where neither the user nor `locus tune` set it. */
    static const decide_case_t cases[] = {
        { 0, "128k", 1 }, { 0, NULL, 0 }, { 1, "128k", 1 }, { 1, NULL, 1 }, { 1, "1G", 0 } };
    int fail = 0;
    for (size_t n = 0; n < sizeof cases / sizeof cases[0]; n++) {
        const decide_case_t *k = &cases[n];
        if (k->cma_min)
            setenv("LOCUS_SHM_CMA_MIN", k->cma_min, 1);
        else
            unsetenv("LOCUS_SHM_CMA_MIN");
        printf("told oversubscribed=%d, LOCUS_SHM_CMA_MIN %s\n", k->over,
               k->cma_min ? k->cma_min : "unset");
        fflush(stdout);
        harness_t h;
        if (harness_open(&h, 2) != 0)
            return 1;
        if (h.oversubscribed != 0) {
            fprintf(stderr, "2 ranks on %ld CPUs counted as oversubscribed\n", online);
            fail = 1;
        }
        h.oversubscribed = k->over;
        fail |= harness_run(&h, decide_rank, (void *)k, 60) != 0;
        harness_close(&h);
    }
    fail |= harness_shm_leftovers() != 0;
    if (fail)
        return 1;
    printf("No Errors\n");
    return 0;
}
