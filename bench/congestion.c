/*
 * congestion.c — how much other traffic slows an application down, in the
 * spirit of GPCNeT's network_load_test (our own code): the same victim tests
 * run twice, alone and while congestor ranks flood the victims' nodes, and
 * the ratio of the two (the congestion impact factor) is the figure.
 *
 * Roles by node (MPI_Comm_split_type SHARED; nodes numbered by their lowest
 * world rank): on the first V nodes (--victim-nodes, default 2) the lower
 * half of the local ranks (at least one) are victims, the rest sinks; every
 * rank of the other nodes is a congestor. Phases: isolated (the victims
 * test, everyone else naps), then congested: the congestors stream
 * --bulk-size messages (--window outstanding per peer) until the victims'
 * root says STOP, and the victims test again after --warmup s.
 *   --pattern incast    every congestor to every sink on the first H victim
 *                       nodes (--hot-nodes; default: as many as the
 *                       congestor nodes can offer twice their downlink's
 *                       rate, at least 1): those downlinks are where the
 *                       queues build
 *   --pattern alltoall  every congestor and sink to every other one on
 *                       another node (sinks then load their own node's
 *                       uplink too)
 *   --pattern both      the two together
 * Victim tests, each for at most --test-time s:
 *   lat        random-ring two-sided 8 B latency (GPCNeT's "RR Two-sided
 *              Lat"): Irecv+Isend to both ring neighbours, time / 2, usec
 *   allreduce  8 B MPI_Allreduce among the victims, usec per call
 *   bw         ring bandwidth with sync: 8 outstanding 128 KiB messages to
 *              the right neighbour, from the left, then a barrier; MB/s/rank
 * Samples run in blocks sized to the time left; each block has a new random
 * ring (seed broadcast). Every sample is kept and gathered to the root.
 *
 * Rank 0 (the victims' root) prints, one figure a line:
 *   congestion: config ranks P nodes N victim_nodes V hot_nodes H victims v sinks s ...
 *   congestion: result test T phase isolated|congested n K avg A p50 M p99 Q worst W units U
 *   congestion: bulk role congestor|sink ranks R bytes B seconds S rate_MBps X
 *   congestion: done seconds S
 * For bw "p99" is the rate 99% of the samples reach (the 1st percentile) and
 * "worst" the lowest; for the others the 99th percentile and the highest.
 * "rate_MBps" sums each sending rank's bytes over its own congested phase.
 * Every wait is bounded: past --time-limit nothing new starts, 30 s later
 * a rank still waiting aborts the job.
 * Only standard MPI: it builds with any MPI's mpicc (locus bench congestion).
 */
#define _POSIX_C_SOURCE 200809L   /* nanosleep under -std=c11 */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { ROLE_VICTIM, ROLE_SINK, ROLE_CONGESTOR };
enum { TEST_LAT, TEST_ALLREDUCE, TEST_BW, NTESTS };
enum { PAT_INCAST = 1, PAT_ALLTOALL = 2 };
/* World tags (control) and bulk-communicator tags. */
enum { TAG_GO = 71, TAG_STOP, TAG_LAT, TAG_BW, TAG_DATA = 1, TAG_END };
/* Samples per block at most: the ring changes at each block. */
#define BLOCK_MAX 100
#define BW_OUTSTANDING 8
#define BW_SIZE 131072

static const char *test_name[NTESTS] = { "lat", "allreduce", "bw" };

struct opts {
    int victim_nodes, hot_nodes, window, pattern, iters[NTESTS], warm[NTESTS];
    long bulk;
    double test_time, warmup, time_limit;
    unsigned long long seed;
};

struct ctx {
    struct opts o;
    int rank, size, vrank, nvict;
    int hot;                    /* victim nodes the incast aims at */
    MPI_Comm vcomm;             /* the victims */
    int left, right;            /* ring neighbours in vcomm */
    char *bw_send, *bw_recv;
    double soft_end, hard_end;  /* stop starting work / give up (MPI_Wtime) */
};

static void die(const char *what)
{
    fprintf(stderr, "congestion: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void nap(long usec)
{
    struct timespec ts = { 0, usec * 1000 };
    nanosleep(&ts, NULL);
}

/* splitmix64: every victim draws the same ring from the broadcast seed. */
static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void new_ring(struct ctx *c, uint64_t seed)
{
    int *perm = malloc((size_t)c->nvict * sizeof *perm), me = 0;
    if (!perm)
        die("out of memory");
    for (int i = 0; i < c->nvict; i++)
        perm[i] = i;
    for (int i = c->nvict - 1; i > 0; i--) {
        int j = (int)(mix(&seed) % (uint64_t)(i + 1)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int i = 0; i < c->nvict; i++)
        if (perm[i] == c->vrank)
            me = i;
    c->left = perm[(me + c->nvict - 1) % c->nvict];
    c->right = perm[(me + 1) % c->nvict];
    free(perm);
}

/* One sample of a test: its value in the test's units. */
static double sample(struct ctx *c, int test)
{
    MPI_Request rq[2 * BW_OUTSTANDING];
    double t0 = MPI_Wtime();
    if (test == TEST_LAT) {
        double out[2] = { 1.0, 2.0 }, in[2];
        MPI_Irecv(&in[0], 1, MPI_DOUBLE, c->left, TAG_LAT, c->vcomm, &rq[0]);
        MPI_Irecv(&in[1], 1, MPI_DOUBLE, c->right, TAG_LAT, c->vcomm, &rq[1]);
        MPI_Isend(&out[0], 1, MPI_DOUBLE, c->left, TAG_LAT, c->vcomm, &rq[2]);
        MPI_Isend(&out[1], 1, MPI_DOUBLE, c->right, TAG_LAT, c->vcomm, &rq[3]);
        MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
        return (MPI_Wtime() - t0) * 1e6 / 2;   /* two messages each way */
    }
    if (test == TEST_ALLREDUCE) {
        double x = 1.0, sum = 0;
        MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, c->vcomm);
        if (sum != (double)c->nvict)
            die("allreduce: wrong sum");
        return (MPI_Wtime() - t0) * 1e6;
    }
    for (int k = 0; k < BW_OUTSTANDING; k++)
        MPI_Irecv(c->bw_recv + (size_t)k * BW_SIZE, BW_SIZE, MPI_BYTE, c->left, TAG_BW, c->vcomm,
                  &rq[k]);
    for (int k = 0; k < BW_OUTSTANDING; k++)
        MPI_Isend(c->bw_send, BW_SIZE, MPI_BYTE, c->right, TAG_BW, c->vcomm,
                  &rq[BW_OUTSTANDING + k]);
    MPI_Waitall(2 * BW_OUTSTANDING, rq, MPI_STATUSES_IGNORE);
    MPI_Barrier(c->vcomm);   /* the "sync": a slow pair holds everyone */
    return (double)BW_OUTSTANDING * BW_SIZE / (MPI_Wtime() - t0) / 1e6;
}

/* Samples in the next block: what fits in `left` seconds at `per` a sample
 * (1 while that is unknown), at least 1, at most cap and BLOCK_MAX. */
static long long block(double per, double left, long long cap)
{
    double fit = per > 0 ? left / per : 1;
    long long n = fit < 1 ? 1 : fit > BLOCK_MAX ? BLOCK_MAX : (long long)fit;
    return n < cap ? n : cap;
}

/*
 * Runs one test on every victim for at most `budget` seconds: blocks of
 * samples whose size the root picks from the time one sample took so far
 * (so a congested run, at seconds a sample, still ends near its budget),
 * broadcast with the block's ring seed. The first blocks are warm-up, not
 * recorded (at most a fifth of the budget). Returns how many samples went
 * into out (the same count on every victim).
 */
static int run_test(struct ctx *c, int test, double budget, uint64_t *seed, double *out)
{
    int max = c->o.iters[test], done = 0, warm_left = c->o.warm[test];
    double t_begin = MPI_Wtime(), per = 0;
    for (;;) {
        long long ctl[3] = { 0, 0, 0 };   /* samples, ring seed, record? */
        if (c->vrank == 0) {
            double now = MPI_Wtime(), end = t_begin + budget, warm_end = t_begin + 0.2 * budget;
            if (end > c->soft_end)
                end = c->soft_end;
            if (warm_left > 0 && now >= warm_end)
                warm_left = 0;
            long long n = 0;
            if (warm_left > 0)
                n = block(per, warm_end - now, warm_left);
            else if (done < max && (now < end || (done == 0 && now < c->hard_end - 10)))
                n = block(per, end - now, max - done);   /* one sample at least */
            ctl[0] = n;
            ctl[1] = (long long)(mix(seed) >> 2);
            ctl[2] = warm_left == 0;
        }
        MPI_Bcast(ctl, 3, MPI_LONG_LONG, 0, c->vcomm);
        if (ctl[0] == 0)
            break;
        new_ring(c, (uint64_t)ctl[1]);
        double t0 = MPI_Wtime();
        for (long long i = 0; i < ctl[0]; i++) {
            double v = sample(c, test);
            if (ctl[2])
                out[done++] = v;
        }
        per = (MPI_Wtime() - t0) / (double)ctl[0];
        if (!ctl[2])
            warm_left -= (int)ctl[0];
        if (warm_left < 0)
            warm_left = 0;
    }
    return done;
}

/* Polls a request with naps: idle ranks leave the CPU to the busy ones. */
static void wait_polite(struct ctx *c, MPI_Request *rq, const char *what)
{
    int flag = 0;
    for (;;) {
        MPI_Test(rq, &flag, MPI_STATUS_IGNORE);
        if (flag)
            return;
        if (MPI_Wtime() > c->hard_end) {
            char msg[128];
            snprintf(msg, sizeof msg, "rank %d: no %s before the time limit", c->rank, what);
            die(msg);
        }
        nap(1000);
    }
}

/*
 * Does rank a send bulk data to rank b? (the same answer on every rank)
 * incast: every congestor to every sink of the first `hot` victim nodes;
 * alltoall: every congestor and sink to every other one on another node.
 */
static int sends_to(const int *role, const int *node, int pattern, int hot, int a, int b)
{
    if (node[a] == node[b] || role[a] == ROLE_VICTIM || role[b] == ROLE_VICTIM)
        return 0;
    if ((pattern & PAT_INCAST) && role[a] == ROLE_CONGESTOR && role[b] == ROLE_SINK &&
        node[b] < hot)
        return 1;
    return (pattern & PAT_ALLTOALL) != 0;
}


struct bulk_stats {
    double bytes, seconds;
};

/*
 * A congestion-group rank in the congested phase: keeps `window` sends of
 * --bulk-size outstanding to each destination and `window` receives (any
 * tag, so a source's messages complete in the order it sent them) posted
 * from each source, until the victims' root says STOP (or the time limit).
 * Then it sends each destination `window` END messages carrying how many
 * data messages went there, after the data: a receiver that knows the count
 * posts exactly as many receives as messages will come. Every request
 * completes, none is cancelled; the rank returns when all are done.
 */
static struct bulk_stats run_bulk(struct ctx *c, MPI_Comm bcomm, const int *role,
                                  const int *node)
{
    struct bulk_stats st = { 0, 0 };
    int P = c->size, W = c->o.window, ndst = 0, nsrc = 0;
    int *dst = malloc((size_t)P * sizeof *dst), *src = malloc((size_t)P * sizeof *src);
    if (!dst || !src)
        die("out of memory");
    for (int r = 0; r < P; r++) {
        if (sends_to(role, node, c->o.pattern, c->hot, c->rank, r))
            dst[ndst++] = r;
        if (sends_to(role, node, c->o.pattern, c->hot, r, c->rank))
            src[nsrc++] = r;
    }
    int B = (int)c->o.bulk;
    /* Requests: data sends, END sends, receives (W of each per peer), STOP. */
    int nsend = ndst * W, nreq = 2 * nsend + nsrc * W + 1;
    MPI_Request *rq = malloc((size_t)nreq * sizeof *rq);
    MPI_Status *sts = malloc((size_t)nreq * sizeof *sts);
    int *idx = malloc((size_t)nreq * sizeof *idx);
    char *sbuf = calloc((size_t)B, 1), *rbuf = malloc((size_t)(nsrc * W) * (size_t)B + 1);
    long long *sent = calloc((size_t)ndst + 1, sizeof *sent);
    long long *got = calloc((size_t)nsrc + 1, sizeof *got);      /* receives completed */
    long long *posted = calloc((size_t)nsrc + 1, sizeof *posted); /* receives posted */
    long long *total = malloc(((size_t)nsrc + 1) * sizeof *total); /* -1: not known yet */
    if (!rq || !sts || !idx || !sbuf || !rbuf || !sent || !got || !posted || !total)
        die("out of memory");
    MPI_Request *data = rq, *ends = rq + nsend, *recv = rq + 2 * nsend, *stop = rq + nreq - 1;
    for (int q = 0; q < nreq; q++)
        rq[q] = MPI_REQUEST_NULL;
    int stop_msg;
    MPI_Irecv(&stop_msg, 1, MPI_INT, 0, TAG_STOP, MPI_COMM_WORLD, stop);
    for (int i = 0; i < nsrc; i++) {
        total[i] = -1;
        for (int k = 0; k < W; k++, posted[i]++)
            MPI_Irecv(rbuf + (size_t)(i * W + k) * (size_t)B, B, MPI_BYTE, src[i], MPI_ANY_TAG,
                      bcomm, &recv[i * W + k]);
    }
    double t0 = MPI_Wtime(), t_stop = 0;
    for (int i = 0; i < ndst; i++)
        for (int k = 0; k < W; k++, sent[i]++)
            MPI_Isend(sbuf, B, MPI_BYTE, dst[i], TAG_DATA, bcomm, &data[i * W + k]);
    int stopping = 0, stopped = 0;
    for (;;) {
        int n = 0;
        MPI_Testsome(nreq, rq, &n, idx, sts);
        if (n == MPI_UNDEFINED)   /* every request done, none reposted */
            break;
        for (int j = 0; j < n; j++) {
            int q = idx[j];
            if (q == nreq - 1) {
                stopped = 1;
            } else if (q < nsend) {                  /* a data send */
                if (!stopping) {
                    st.bytes += B;
                    MPI_Isend(sbuf, B, MPI_BYTE, dst[q / W], TAG_DATA, bcomm, &data[q]);
                    sent[q / W]++;
                }
            } else if (q >= 2 * nsend) {             /* a receive */
                int r = q - 2 * nsend, i = r / W;
                char *buf = rbuf + (size_t)r * (size_t)B;
                got[i]++;
                if (sts[j].MPI_TAG == TAG_END && total[i] < 0) {
                    long long k;
                    memcpy(&k, buf, sizeof k);
                    total[i] = k + W;
                }
                if (total[i] < 0 || posted[i] < total[i]) {
                    MPI_Irecv(buf, B, MPI_BYTE, src[i], MPI_ANY_TAG, bcomm, &recv[r]);
                    posted[i]++;
                }
            }                                        /* END sends: nothing to do */
        }
        double now = MPI_Wtime();
        if (!stopping && (stopped || now > c->soft_end)) {
            stopping = 1;
            t_stop = now;
            /* Posted after the data, so matched after it (non-overtaking). */
            for (int i = 0; i < ndst; i++)
                for (int k = 0; k < W; k++)
                    MPI_Isend(&sent[i], (int)sizeof sent[i], MPI_BYTE, dst[i], TAG_END, bcomm,
                              &ends[i * W + k]);
        }
        if (n == 0) {
            if (now > c->hard_end)
                die("bulk traffic did not drain before the time limit");
            nap(1000);
        }
    }
    for (int i = 0; i < nsrc; i++)
        if (got[i] != total[i])
            die("bulk: a source's message count does not add up");
    st.seconds = t_stop - t0;
    free(dst), free(src), free(rq), free(sts), free(idx), free(sbuf), free(rbuf);
    free(sent), free(got), free(posted), free(total);
    return st;
}

/* Sorted samples' summary: average, median, the tail at 99% (the slow
 * end: high for times, low for rates) and the worst sample. */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(int test, const char *phase, double *v, int n)
{
    const char *units = test == TEST_BW ? "MB/s" : "usec";
    if (n == 0) {
        printf("congestion: result test %s phase %s n 0 units %s\n", test_name[test], phase,
               units);
        return;
    }
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += v[i];
    /* Nearest rank: the smallest value with at least 99% of samples at or below. */
    int hi = (int)ceil(0.99 * n) - 1, lo = (int)ceil(0.01 * n) - 1;
    if (lo < 0)
        lo = 0;
    int rate = test == TEST_BW;
    printf("congestion: result test %s phase %s n %d avg %.3f p50 %.3f p99 %.3f worst %.3f "
           "units %s\n", test_name[test], phase, n, sum / n, v[(n - 1) / 2],
           rate ? v[lo] : v[hi], rate ? v[0] : v[n - 1], units);
}

static void usage(void)
{
    fprintf(stderr,
            "usage: congestion [--victim-nodes V] [--hot-nodes H] [--pattern incast|alltoall|both]\n"
            "                  [--bulk-size BYTES] [--window W] [--test-time S] [--warmup S]\n"
            "                  [--lat-iters N] [--allreduce-iters N] [--bw-iters N]\n"
            "                  [--time-limit S] [--seed N] [--quick]\n");
}

/* Options: every rank parses the same argv; 0 when good. */
static int parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){ .victim_nodes = 2, .window = 4, .pattern = PAT_INCAST,
                        .iters = { 5000, 5000, 40 }, .warm = { 50, 50, 1 }, .bulk = 131072,
                        .test_time = 3.0, .warmup = 0.5, .time_limit = 120, .seed = 20190919 };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quick")) {
            o->test_time = 0.5, o->warmup = 0.3, o->time_limit = 60;
            o->iters[TEST_LAT] = o->iters[TEST_ALLREDUCE] = 300, o->iters[TEST_BW] = 5;
            o->warm[TEST_LAT] = o->warm[TEST_ALLREDUCE] = 10;
            continue;
        }
        if (!v)
            return -1;
        if (!strcmp(a, "--pattern")) {
            i++;
            if (!strcmp(v, "incast"))
                o->pattern = PAT_INCAST;
            else if (!strcmp(v, "alltoall"))
                o->pattern = PAT_ALLTOALL;
            else if (!strcmp(v, "both"))
                o->pattern = PAT_INCAST | PAT_ALLTOALL;
            else
                return -1;
            continue;
        }
        char *end;
        double d = strtod(v, &end);
        if (*end || !(d >= 0))
            return -1;
        i++;
        if (!strcmp(a, "--victim-nodes") && d >= 1)
            o->victim_nodes = (int)d;
        else if (!strcmp(a, "--hot-nodes"))
            o->hot_nodes = (int)d;
        else if (!strcmp(a, "--bulk-size") && d >= 8 && d <= (1 << 30))
            o->bulk = (long)d;
        else if (!strcmp(a, "--window") && d >= 1 && d <= 64)
            o->window = (int)d;
        else if (!strcmp(a, "--test-time"))
            o->test_time = d;
        else if (!strcmp(a, "--warmup"))
            o->warmup = d;
        else if (!strcmp(a, "--lat-iters") && d >= 1)
            o->iters[TEST_LAT] = (int)d;
        else if (!strcmp(a, "--allreduce-iters") && d >= 1)
            o->iters[TEST_ALLREDUCE] = (int)d;
        else if (!strcmp(a, "--bw-iters") && d >= 1)
            o->iters[TEST_BW] = (int)d;
        else if (!strcmp(a, "--time-limit") && d > 0)
            o->time_limit = d;
        else if (!strcmp(a, "--seed"))
            o->seed = (unsigned long long)d;
        else
            return -1;
    }
    return 0;
}

static void sleep_s(double s)
{
    struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
    nanosleep(&ts, NULL);
}

/* Sends a one-int control message to every rank that is not a victim. */
static void tell_others(struct ctx *c, const int *role, int tag)
{
    int msg = tag;
    for (int r = 0; r < c->size; r++)
        if (role[r] != ROLE_VICTIM) {
            MPI_Request rq;
            MPI_Isend(&msg, 1, MPI_INT, r, tag, MPI_COMM_WORLD, &rq);
            wait_polite(c, &rq, tag == TAG_GO ? "GO sent" : "STOP sent");
        }
}

/*
 * The ranks of this node: MPI_COMM_TYPE_SHARED, unless the processor names
 * (host names) group ranks more coarsely. An MPI told to keep off shared
 * memory (MPICH's MPIR_CVAR_NOLOCAL, which the emulated cluster's runs set
 * to force TCP) puts every rank alone in its shared-memory domain.
 */
static MPI_Comm node_comm(struct ctx *c)
{
    MPI_Comm shm, byname;
    int lsize, nsize, len, color = c->rank, most[2];
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &shm);
    MPI_Comm_size(shm, &lsize);
    char *names = calloc((size_t)c->size, MPI_MAX_PROCESSOR_NAME), me[MPI_MAX_PROCESSOR_NAME];
    if (!names)
        die("out of memory");
    memset(me, 0, sizeof me);
    MPI_Get_processor_name(me, &len);
    MPI_Allgather(me, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                  MPI_COMM_WORLD);
    for (int r = c->size - 1; r >= 0; r--)
        if (!strcmp(names + (size_t)r * MPI_MAX_PROCESSOR_NAME, me))
            color = r;
    free(names);
    MPI_Comm_split(MPI_COMM_WORLD, color, c->rank, &byname);
    MPI_Comm_size(byname, &nsize);
    /* Every rank must choose alike: compare the counts over the job. */
    int mine[2] = { nsize > lsize, nsize < lsize };
    MPI_Allreduce(mine, most, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (most[0] && !most[1]) {
        MPI_Comm_free(&shm);
        return byname;
    }
    MPI_Comm_free(&byname);
    return shm;
}

static const char *pattern_name(int p)
{
    return p == PAT_INCAST ? "incast" : p == PAT_ALLTOALL ? "alltoall" : "both";
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    struct ctx c = { 0 };
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.size);
    if (parse(argc, argv, &c.o) != 0) {
        if (c.rank == 0)
            usage();
        MPI_Finalize();
        return 2;
    }
    int P = c.size;

    /* Nodes: numbered in the order of their lowest world rank. */
    MPI_Comm shm = node_comm(&c);
    int lrank, lsize, leader = c.rank;
    MPI_Comm_rank(shm, &lrank);
    MPI_Comm_size(shm, &lsize);
    MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, shm);
    int *leaders = malloc((size_t)P * sizeof(int)), *node = malloc((size_t)P * sizeof(int));
    int *role = malloc((size_t)P * sizeof(int));
    if (!leaders || !node || !role)
        die("out of memory");
    MPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, MPI_COMM_WORLD);
    int nnodes = 0;
    for (int r = 0; r < P; r++) {
        node[r] = 0;
        for (int q = 0; q < leaders[r]; q++)
            node[r] += leaders[q] == q;
        nnodes += leaders[r] == r;
    }
    int victims_here = lsize / 2 > 0 ? lsize / 2 : 1;
    int mine = node[c.rank] >= c.o.victim_nodes ? ROLE_CONGESTOR
               : lrank < victims_here             ? ROLE_VICTIM
                                                  : ROLE_SINK;
    MPI_Allgather(&mine, 1, MPI_INT, role, 1, MPI_INT, MPI_COMM_WORLD);
    /* The incast's targets: enough victim nodes that the congestor nodes
     * offer each one twice what its downlink carries (one at least). */
    int vnodes = c.o.victim_nodes < nnodes ? c.o.victim_nodes : nnodes;
    c.hot = c.o.hot_nodes > 0 ? c.o.hot_nodes : (nnodes - vnodes) / 2;
    c.hot = c.hot < 1 ? 1 : c.hot > vnodes ? vnodes : c.hot;
    int count[3] = { 0, 0, 0 };
    for (int r = 0; r < P; r++)
        count[role[r]]++;
    if (count[ROLE_VICTIM] < 2) {
        if (c.rank == 0)
            fprintf(stderr, "congestion: %d victim(s) on %d node(s); the victim tests need 2 "
                    "(run on at least 2 nodes)\n", count[ROLE_VICTIM], nnodes);
        free(leaders);
        free(node);
        free(role);
        MPI_Comm_free(&shm);
        MPI_Finalize();
        return 2;
    }
    MPI_Comm_split(MPI_COMM_WORLD, mine == ROLE_VICTIM ? 0 : MPI_UNDEFINED, c.rank, &c.vcomm);
    MPI_Comm bcomm;
    MPI_Comm_dup(MPI_COMM_WORLD, &bcomm);
    double *samples[2][NTESTS] = { { 0 } };
    int got[2][NTESTS] = { { 0 } };
    if (mine == ROLE_VICTIM) {
        MPI_Comm_rank(c.vcomm, &c.vrank);
        MPI_Comm_size(c.vcomm, &c.nvict);
        c.bw_send = calloc(BW_SIZE, 1);
        c.bw_recv = malloc((size_t)BW_OUTSTANDING * BW_SIZE);
        for (int ph = 0; ph < 2; ph++)
            for (int t = 0; t < NTESTS; t++)
                samples[ph][t] = malloc((size_t)c.o.iters[t] * sizeof(double));
        if (!c.bw_send || !c.bw_recv)
            die("out of memory");
    }

    MPI_Barrier(MPI_COMM_WORLD);
    double t_start = MPI_Wtime();
    c.soft_end = t_start + c.o.time_limit;
    c.hard_end = c.soft_end + 30;   /* then something is stuck: abort */
    struct bulk_stats bs = { 0, 0 };
    if (mine == ROLE_VICTIM) {
        uint64_t seed = c.o.seed;
        for (int t = 0; t < NTESTS; t++)
            got[0][t] = run_test(&c, t, c.o.test_time, &seed, samples[0][t]);
        if (c.vrank == 0)
            tell_others(&c, role, TAG_GO);
        /* Let the congestors fill the switch queues before measuring. */
        sleep_s(c.o.warmup);
        for (int t = 0; t < NTESTS; t++)
            got[1][t] = run_test(&c, t, c.o.test_time, &seed, samples[1][t]);
        if (c.vrank == 0)
            tell_others(&c, role, TAG_STOP);
    } else {
        int go;
        MPI_Request rq;
        MPI_Irecv(&go, 1, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD, &rq);
        wait_polite(&c, &rq, "GO from the victims");
        bs = run_bulk(&c, bcomm, role, node);
    }

    /* Every victim's samples to the root; the bulk ranks' sums to rank 0. */
    if (c.rank == 0)
        printf("congestion: config ranks %d nodes %d victim_nodes %d hot_nodes %d victims %d "
               "sinks %d congestors %d bulk %ld window %d pattern %s seed %llu\n", P, nnodes,
               vnodes, c.hot, count[ROLE_VICTIM], count[ROLE_SINK], count[ROLE_CONGESTOR],
               c.o.bulk, c.o.window, pattern_name(c.o.pattern), c.o.seed);
    if (mine == ROLE_VICTIM)
        for (int ph = 0; ph < 2; ph++)
            for (int t = 0; t < NTESTS; t++) {
                int n = got[ph][t];
                double *all = NULL;
                if (c.vrank == 0 && !(all = malloc(((size_t)n * c.nvict + 1) * sizeof *all)))
                    die("out of memory");
                MPI_Gather(samples[ph][t], n, MPI_DOUBLE, all, n, MPI_DOUBLE, 0, c.vcomm);
                if (c.vrank == 0)
                    report(t, ph ? "congested" : "isolated", all, n * c.nvict);
                free(all);
                free(samples[ph][t]);
            }
    double rate = bs.seconds > 0 ? bs.bytes / bs.seconds : 0;
    double part[8] = { mine == ROLE_CONGESTOR, 0, 0, 0, mine == ROLE_SINK, 0, 0, 0 };
    int at = mine == ROLE_CONGESTOR ? 1 : 5;
    if (mine != ROLE_VICTIM)
        part[at] = bs.bytes, part[at + 1] = bs.seconds, part[at + 2] = rate;
    double sum[8];
    MPI_Reduce(part, sum, 8, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (c.rank == 0) {
        for (int k = 0; k < 2; k++) {
            double *s = sum + 4 * k;
            /* rate: the sum of each rank's bytes over its own phase length */
            printf("congestion: bulk role %s ranks %.0f bytes %.0f seconds %.3f rate_MBps %.3f\n",
                   k ? "sink" : "congestor", s[0], s[1], s[0] > 0 ? s[2] / s[0] : 0, s[3] / 1e6);
        }
        printf("congestion: done seconds %.3f\n", MPI_Wtime() - t_start);
        fflush(stdout);
    }
    if (mine == ROLE_VICTIM) {
        free(c.bw_send);
        free(c.bw_recv);
        MPI_Comm_free(&c.vcomm);
    }
    MPI_Comm_free(&bcomm);
    MPI_Comm_free(&shm);
    free(leaders), free(node), free(role);
    MPI_Finalize();
    return 0;
}
