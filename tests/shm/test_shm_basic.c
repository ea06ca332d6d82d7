/*
 * Edge cases of the shm transport, each with real processes:
 *  - one local rank: no transport, but both fences still happen;
 *  - a bad tunable on one rank: every rank fails cleanly, nobody hangs;
 *  - full ring: LOCUS_TP_AGAIN, nothing lost, order kept once drained;
 *  - eager payloads in the sender's pool: once its chunks are all taken
 *    the ring's cells carry them, order kept, the chunks come back;
 *  - limits: empty messages, the eager limit and one byte more, the
 *    largest header, oversized headers, sends to self, truncation to 0;
 *  - a pipelined send fills only so many chunks ahead of its receiver,
 *    a window of them the whole pool;
 *  - CMA refused at run time (the sender turns non-dumpable, the receiver
 *    drops its capabilities): the message still arrives, pipelined.
 */
#include "shm.h"
#include "shm_harness.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int failures;

#define CHECK(cond) do { if (!(cond)) { \
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    failures++; } } while (0)

/* A minimal core: logs what arrives (messages in arrival order). */
typedef struct {
    uint32_t hdr4;           /* first 4 header bytes */
    size_t len, hdrlen;
    int data_ok;             /* payload equals the test pattern */
    locus_tp_rndv_t *rndv;   /* large messages */
} ev_t;

typedef struct {
    locus_tp_t *tp;
    int ndeliver, nrndv, ndone, nsent, nev;
    ev_t ev[256];
} rec_t;

static unsigned char pat[16384];

static ev_t *ev_add(rec_t *c, const void *hdr, size_t hdrlen, size_t len)
{
    ev_t *e = &c->ev[c->nev < 255 ? c->nev++ : 255];
    memset(e, 0, sizeof *e);
    memcpy(&e->hdr4, hdr ? hdr : "", hdrlen < 4 ? hdrlen : (hdr ? 4 : 0));
    e->len = len;
    e->hdrlen = hdrlen;
    return e;
}

static void r_deliver(void *core, int src, const void *hdr, size_t hdrlen, const void *data, size_t len)
{
    rec_t *c = core;
    (void)src;
    c->ndeliver++;
    ev_t *e = ev_add(c, hdr, hdrlen, len);
    e->data_ok = len <= sizeof pat && (len == 0 || memcmp(data, pat, len) == 0);
}

static void r_arrived(void *core, int src, const void *hdr, size_t hdrlen, size_t len, locus_tp_rndv_t *r)
{
    rec_t *c = core;
    (void)src;
    c->nrndv++;
    ev_add(c, hdr, hdrlen, len)->rndv = r;
}

static void r_done(void *core, void *ctx)
{
    (void)ctx;
    ((rec_t *)core)->ndone++;
}

static void r_sent(void *core, void *ctx)
{
    (void)ctx;
    ((rec_t *)core)->nsent++;
}

static const locus_tp_upcalls_t rup = { r_deliver, r_arrived, r_done, r_sent, NULL };

static int make(harness_t *h, int rank, rec_t *c)
{
    locus_tp_init_t in;
    harness_init(h, &in, rank, &rup, c);
    char err[256];
    if (locus_tp_shm_create(&in, &c->tp, err, sizeof err) != 0 || !c->tp) {
        fprintf(stderr, "rank %d: create: %s\n", rank, err);
        return -1;
    }
    return 0;
}

/* make(), then the transport's counters as they start. */
static locus_tp_t *start(harness_t *h, int rank, rec_t *c, shm_stats_t *st)
{
    if (make(h, rank, c) != 0)
        return NULL;
    shm_tp_stats(c->tp, st);
    return c->tp;
}

/* A rank's end: the others done with it too, then its transport gone. */
static int finish(harness_t *h, locus_tp_t *tp)
{
    harness_barrier(h);
    tp->ops->finalize(tp);
    return failures ? 1 : 0;
}

static void pump(rec_t *c, int *what, int until)
{
    for (long i = 0; *what < until && i < 100000000; i++)
        if (c->tp->ops->progress(c->tp) < 0)
            break;
}

/* ---- one local rank ---- */

static int fences;
static int counting_fence(void *ctx)
{
    (void)ctx;
    fences++;
    return 0;
}

static void test_single(void)
{
    harness_t h;
    CHECK(harness_open(&h, 1) == 0);
    locus_tp_init_t in;
    rec_t c;
    harness_init(&h, &in, 0, &rup, &c);
    in.kvs.fence = counting_fence;
    locus_tp_t *tp = (locus_tp_t *)&c;
    char err[128];
    CHECK(locus_tp_shm_create(&in, &tp, err, sizeof err) == 0);
    CHECK(tp == NULL);
    CHECK(fences == 2);
    harness_close(&h);
}

/* ---- a bad tunable on rank 0 ---- */

static int bad_rank(harness_t *h, int rank, void *arg)
{
    (void)arg;
    if (rank == 0)
        setenv("LOCUS_SHM_RING_SIZE", "lots", 1);
    locus_tp_init_t in;
    rec_t c;
    harness_init(h, &in, rank, &rup, &c);
    char err[256] = "";
    locus_tp_t *tp = NULL;
    int rc = locus_tp_shm_create(&in, &tp, err, sizeof err);
    if (rc != -1 || tp != NULL)
        return 1;
    if (rank == 0 && !strstr(err, "LOCUS_SHM_RING_SIZE=lots"))
        return 2;
    if (rank == 1 && !strstr(err, "local rank 0"))
        return 3;
    return 0;
}

/* ---- full ring, limits ---- */

/* Sends messages of len bytes to rank 1 (which does not progress), header
 * = their sequence number, until its ring is full: the number sent. */
static int fill_ring(locus_tp_t *tp, uint32_t *seq, size_t len)
{
    int sent = 0;
    for (;;) {
        int rc = tp->ops->send(tp, 1, seq, sizeof *seq, pat, len, NULL);
        if (rc == LOCUS_TP_AGAIN)
            break;
        CHECK(rc == LOCUS_TP_DONE);
        ++*seq;
        if (++sent > 100000)
            break;
    }
    return sent;
}

static int ring_rank(harness_t *h, int rank, void *arg)
{
    (void)arg;
    static rec_t c;
    shm_stats_t st;
    locus_tp_t *tp = start(h, rank, &c, &st);
    if (!tp)
        return 1;
    size_t emax = st.eager_max;
    CHECK(emax == 4096 && sizeof pat > emax + 1);
    uint32_t seq = 0;
    if (rank == 0) {
        /* Rank 1 does not progress: fill its ring. */
        int sent = fill_ring(tp, &seq, 64);
        /* 16 KiB ring = 256 cells; {16 head + 8 header + 64 data} = 2 cells. */
        CHECK(sent == 128);
        CHECK(tp->ops->send(tp, 1, &seq, sizeof seq, pat, 0, NULL) == LOCUS_TP_AGAIN);
        CHECK(tp->ops->send(tp, 1, &seq, sizeof seq, pat, emax + 1, NULL) == LOCUS_TP_AGAIN);
        shm_tp_stats(tp, &st);
        CHECK(st.again == 3 && st.eager_sent == 128 && st.rndv_sent == 0);
        CHECK(tp->ops->send(tp, 0, &seq, sizeof seq, pat, 1, NULL) < 0); /* self */
        CHECK(tp->ops->send(tp, 7, &seq, sizeof seq, pat, 1, NULL) < 0); /* no such rank */
        CHECK(tp->ops->reaches(tp, 1) && !tp->ops->reaches(tp, 0) && !tp->ops->reaches(tp, 2));
        harness_barrier(h); /* 1: rank 1 drains */
        harness_barrier(h); /* 2: drained */
        unsigned char hmax[LOCUS_TP_HDR_MAX];
        memset(hmax, 0xab, sizeof hmax);
        CHECK(tp->ops->send(tp, 1, NULL, 0, NULL, 0, NULL) == LOCUS_TP_DONE);
        CHECK(tp->ops->send(tp, 1, hmax, sizeof hmax, pat, emax, NULL) == LOCUS_TP_DONE);
        CHECK(tp->ops->send(tp, 1, hmax, LOCUS_TP_HDR_MAX + 1, pat, 1, NULL) < 0);
        CHECK(tp->ops->send(tp, 1, hmax, LOCUS_TP_HDR_MAX + 1, pat, emax + 1, NULL) < 0);
        /* Large: PENDING (DONE would also be legal: the contract lets a
         * transport buffer a large message). */
        int pend = 0, rc = tp->ops->send(tp, 1, hmax, sizeof hmax, pat, emax + 1, NULL);
        CHECK(rc == LOCUS_TP_PENDING || rc == LOCUS_TP_DONE);
        pend += rc == LOCUS_TP_PENDING;
        rc = tp->ops->send(tp, 1, hmax, 3, pat, sizeof pat, NULL);
        CHECK(rc == LOCUS_TP_PENDING || rc == LOCUS_TP_DONE);
        pend += rc == LOCUS_TP_PENDING;
        pump(&c, &c.nsent, pend);
        CHECK(c.nsent == pend);
        harness_barrier(h); /* 3 */
    } else {
        harness_barrier(h); /* 1 */
        pump(&c, &c.ndeliver, 128);
        CHECK(c.ndeliver == 128);
        for (int i = 0; i < c.nev; i++)
            CHECK(c.ev[i].hdr4 == (uint32_t)i && c.ev[i].len == 64 && c.ev[i].data_ok);
        c.nev = 0;
        harness_barrier(h); /* 2 */
        pump(&c, &c.nrndv, 2);
        CHECK(c.nev == 4);
        CHECK(c.ev[0].len == 0 && c.ev[0].hdrlen == 0 && !c.ev[0].rndv);
        CHECK(c.ev[1].len == emax && c.ev[1].hdrlen == LOCUS_TP_HDR_MAX && c.ev[1].data_ok &&
              c.ev[1].hdr4 == 0xabababab && !c.ev[1].rndv);
        CHECK(c.ev[2].len == emax + 1 && c.ev[2].hdrlen == LOCUS_TP_HDR_MAX && c.ev[2].rndv &&
              c.ev[2].hdr4 == 0xabababab);
        CHECK(c.ev[3].len == sizeof pat && c.ev[3].hdrlen == 3 && c.ev[3].rndv);
        static unsigned char big[sizeof pat];
        CHECK(tp->ops->rndv_recv(tp, c.ev[2].rndv, big, c.ev[2].len, NULL, 0) == 0);
        pump(&c, &c.ndone, 1);
        CHECK(c.ndone == 1 && memcmp(big, pat, emax + 1) == 0);
        CHECK(tp->ops->rndv_recv(tp, c.ev[3].rndv, big, 0, NULL, 0) == 0); /* truncated to 0 */
        pump(&c, &c.ndone, 2);
        CHECK(c.ndone == 2);
        harness_barrier(h); /* 3 */
    }
    tp->ops->finalize(tp);
    return failures ? 1 : 0;
}

/* ---- CMA refused at run time ---- */

static int cma_rank(harness_t *h, int rank, void *arg)
{
    (void)arg;
    static rec_t c;
    shm_stats_t st;
    locus_tp_t *tp = start(h, rank, &c, &st);
    if (!tp)
        return 1;
    if (!st.cma_enabled) {
        printf("CMA not available at start: run-time fallback not exercised\n");
        tp->ops->finalize(tp);
        return 0;
    }
    static unsigned char buf[1 << 20], got[1 << 20];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)(i * 13 + 1);
    locus_tp_rndv_t *r;
    if (rank == 0) {
        /* Only a process with CAP_SYS_PTRACE may read a non-dumpable one. */
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    } else {
        struct __user_cap_header_struct hd = { _LINUX_CAPABILITY_VERSION_3, 0 };
        struct __user_cap_data_struct d[2];
        memset(d, 0, sizeof d);
        if (syscall(SYS_capset, &hd, d) != 0)
            perror("capset");
    }
    harness_barrier(h);
    for (int m = 0; m < 2; m++) {
        if (rank == 0) {
            CHECK(tp->ops->send(tp, 1, &m, sizeof m, buf, sizeof buf, NULL) == LOCUS_TP_PENDING);
            pump(&c, &c.nsent, m + 1);
        } else {
            pump(&c, &c.nrndv, m + 1);
            r = c.ev[c.nev - 1].rndv;
            memset(got, 0, sizeof got);
            CHECK(r && tp->ops->rndv_recv(tp, r, got, sizeof got, NULL, 0) == 0);
            pump(&c, &c.ndone, m + 1);
            CHECK(memcmp(got, buf, sizeof buf) == 0);
        }
    }
    if (rank == 1) {
        shm_tp_stats(tp, &st);
        CHECK(st.cma_fallbacks == 1 && st.pipe_recv == 2 && st.cma_recv == 0);
        if (st.cma_fallbacks != 1)
            fprintf(stderr, "fallbacks %llu, pipelined %llu, cma %llu\n",
                    (unsigned long long)st.cma_fallbacks, (unsigned long long)st.pipe_recv,
                    (unsigned long long)st.cma_recv);
    }
    return finish(h, tp);
}

/* ---- a pipelined send's chunks ahead of its receiver ---- */

/* The default pool at 2 ranks holds 4 MiB of 32k chunks; one message of 4
 * MiB fills only SHM_SEND_AHEAD_BYTES of it ahead of its receiver (it
 * waits at that limit, never for the pool), while eight of 1 MiB in flight
 * together take all of it. The receiver stands still (at a barrier) while
 * the sender fills what it may. */
static void fill_ahead(rec_t *c, shm_stats_t *st, int window)
{
    for (long i = 0; i < 1000000; i++) {
        c->tp->ops->progress(c->tp);
        shm_tp_stats(c->tp, st);
        if (window ? st->pool_full > 0 : st->ahead_waits > 0)
            break;
    }
}

static int ahead_rank(harness_t *h, int rank, void *arg)
{
    (void)arg;
    static rec_t c;
    shm_stats_t st;
    locus_tp_t *tp = start(h, rank, &c, &st);
    if (!tp)
        return 1;
    CHECK(st.seg_bytes >= (4u << 20));
    enum { LEN = 4 << 20, PART = 1 << 20, N = 8 };
    unsigned char *buf = malloc(LEN), *got = malloc(LEN);
    CHECK(buf && got);
    if (!buf || !got)
        return 1;
    for (size_t i = 0; i < LEN; i++)
        buf[i] = (unsigned char)(i * 31 + 7);
    harness_barrier(h);
    /* First one message of 4 MiB, then N of 1 MiB from (into) the buffer's
     * quarters. */
    for (int w = 0; w < 2; w++) {
        int first = w ? 1 : 0, last = w ? N : 0;
        if (rank == 0) {
            for (int m = first; m <= last; m++)
                CHECK(tp->ops->send(tp, 1, &m, sizeof m, buf + (m ? (size_t)(m % 4) * PART : 0),
                                    m ? PART : LEN, NULL) == LOCUS_TP_PENDING);
            fill_ahead(&c, &st, w);
            if (w == 0)
                CHECK(st.ahead_waits > 0 && st.pool_full == 0);
            else
                CHECK(st.pool_full > 0);
            if (st.ahead_waits == 0 || (st.pool_full > 0) != (w == 1))
                fprintf(stderr, "window %d: ahead waits %llu, pool full %llu\n", w,
                        (unsigned long long)st.ahead_waits, (unsigned long long)st.pool_full);
            harness_barrier(h);
            pump(&c, &c.nsent, last + 1);
        } else {
            pump(&c, &c.nrndv, last + 1);
            for (int k = first; k <= last; k++)
                CHECK(tp->ops->rndv_recv(tp, c.ev[k].rndv, got + (k ? (size_t)(k % 4) * PART : 0),
                                         k ? PART : LEN, NULL, 0) == 0);
            harness_barrier(h);
            pump(&c, &c.ndone, last + 1);
            CHECK(memcmp(got, buf, LEN) == 0);
            memset(got, 0, LEN);
        }
    }
    harness_barrier(h);
    free(buf);
    free(got);
    tp->ops->finalize(tp);
    return failures ? 1 : 0;
}

/* ---- eager payloads in pool chunks ---- */

enum { POOL_CHUNKS = 32, POOLED_LEN = 1024 };

static int pooled_rank(harness_t *h, int rank, void *arg)
{
    (void)arg;
    static rec_t c;
    if (make(h, rank, &c) != 0)
        return 1;
    locus_tp_t *tp = c.tp;
    shm_stats_t st;
    uint32_t seq = 0;
    /* 16 KiB ring = 256 cells: a pooled message takes 1 (its header), one
     * in the ring {16 head + 8 header + 1024 data} 17. */
    int want = POOL_CHUNKS + (256 - POOL_CHUNKS) / 17;
    if (rank == 0) {
        int sent = fill_ring(tp, &seq, POOLED_LEN);
        shm_tp_stats(tp, &st);
        CHECK(sent == want && st.eager_sent == (uint64_t)want);
        CHECK(st.eager_pooled == POOL_CHUNKS && st.rndv_sent == 0);
        harness_barrier(h); /* 1: rank 1 drains */
        harness_barrier(h); /* 2: drained, every chunk free again */
        CHECK(tp->ops->send(tp, 1, &seq, sizeof seq, pat, POOLED_LEN, NULL) == LOCUS_TP_DONE);
        shm_tp_stats(tp, &st);
        CHECK(st.eager_pooled == POOL_CHUNKS + 1);
        harness_barrier(h); /* 3 */
    } else {
        harness_barrier(h); /* 1 */
        pump(&c, &c.ndeliver, want);
        harness_barrier(h); /* 2 */
        pump(&c, &c.ndeliver, want + 1);
        CHECK(c.ndeliver == want + 1 && c.nev == want + 1);
        for (int i = 0; i < c.nev; i++)
            CHECK(c.ev[i].hdr4 == (uint32_t)i && c.ev[i].len == POOLED_LEN && c.ev[i].data_ok);
        harness_barrier(h); /* 3 */
    }
    return finish(h, tp);
}

/* ---- eager payloads past half the ring ---- */

enum { WIDE_LEN = 12 << 10 };

/*
 * 16 KiB ring, LOCUS_SHM_EAGER_MAX=16k, 32 chunks of 32 KiB: a 12 KiB
 * payload fits no half ring but goes eagerly in a chunk; with every chunk
 * taken it goes by rendezvous, not into the ring's cells.
 */
static int wide_rank(harness_t *h, int rank, void *arg)
{
    (void)arg;
    static rec_t c;
    shm_stats_t st;
    locus_tp_t *tp = start(h, rank, &c, &st);
    if (!tp)
        return 1;
    CHECK(st.eager_max == 16384);
    static unsigned char got[WIDE_LEN];
    uint32_t last = POOL_CHUNKS;
    if (rank == 0) {
        for (uint32_t m = 0; m < POOL_CHUNKS; m++)
            CHECK(tp->ops->send(tp, 1, &m, sizeof m, pat, WIDE_LEN, NULL) == LOCUS_TP_DONE);
        CHECK(tp->ops->send(tp, 1, &last, sizeof last, pat, WIDE_LEN, &c) == LOCUS_TP_PENDING);
        shm_tp_stats(tp, &st);
        CHECK(st.eager_pooled == POOL_CHUNKS && st.eager_sent == POOL_CHUNKS);
        CHECK(st.rndv_sent == 1);
        harness_barrier(h); /* 1: rank 1 takes them */
        pump(&c, &c.nsent, 1);
        CHECK(c.nsent == 1);
    } else {
        harness_barrier(h); /* 1 */
        pump(&c, &c.nrndv, 1);
        CHECK(c.ndeliver == POOL_CHUNKS && c.nrndv == 1 && c.nev == POOL_CHUNKS + 1);
        for (int i = 0; i < POOL_CHUNKS; i++)
            CHECK(c.ev[i].hdr4 == (uint32_t)i && c.ev[i].len == WIDE_LEN && c.ev[i].data_ok);
        ev_t *e = &c.ev[POOL_CHUNKS];
        CHECK(e->hdr4 == last && e->len == WIDE_LEN && e->rndv);
        if (e->rndv)
            CHECK(tp->ops->rndv_recv(tp, e->rndv, got, WIDE_LEN, NULL, 0) == 0);
        pump(&c, &c.ndone, 1);
        CHECK(c.ndone == 1 && memcmp(got, pat, WIDE_LEN) == 0);
    }
    return finish(h, tp);
}

static void run2(const char *what, int (*fn)(harness_t *, int, void *))
{
    harness_t h;
    CHECK(harness_open(&h, 2) == 0);
    int failed = harness_run(&h, fn, NULL, 60);
    if (failed)
        fprintf(stderr, "%s: %d rank(s) failed\n", what, failed);
    CHECK(failed == 0);
    harness_close(&h);
}

int main(void)
{
    for (size_t i = 0; i < sizeof pat; i++)
        pat[i] = (unsigned char)(i * 7 + 3);
    harness_set_jobid("shmb");
    setenv("LOCUS_SHM_RING_SIZE", "16k", 1);
    setenv("LOCUS_SHM_EAGER_MAX", "4096", 1);
    test_single();
    run2("bad tunable", bad_rank);
    run2("full ring and limits", ring_rank);
    setenv("LOCUS_SHM_POOL_SIZE", "1M", 1);
    setenv("LOCUS_SHM_CHUNK_SIZE", "32k", 1);
    run2("eager payloads in pool chunks", pooled_rank);
    setenv("LOCUS_SHM_EAGER_MAX", "16k", 1);
    setenv("LOCUS_SINGLE_COPY", "none", 1);
    run2("eager payloads past half the ring", wide_rank);
    setenv("LOCUS_SHM_EAGER_MAX", "4096", 1);
    unsetenv("LOCUS_SHM_POOL_SIZE");
    unsetenv("LOCUS_SHM_CHUNK_SIZE");
    setenv("LOCUS_SINGLE_COPY", "none", 1);
    setenv("LOCUS_SHM_CHUNK_SIZE", "32k", 1);
    run2("a send's chunks ahead of its receiver", ahead_rank);
    unsetenv("LOCUS_SHM_CHUNK_SIZE");
    setenv("LOCUS_SINGLE_COPY", "auto", 1);
    setenv("LOCUS_SHM_CMA_MIN", "0", 1);
    run2("CMA refused at run time", cma_rank);
    CHECK(harness_shm_leftovers() == 0);
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("No Errors\n");
    return 0;
}
