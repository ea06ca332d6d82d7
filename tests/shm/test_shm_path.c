/*
 * The choice between the pipelined copy and CMA (shm_path.h), on made-up
 * measurements: the configured rule goes first, the other path is tried
 * once, a near tie keeps the rule's path, a clearly faster path takes over
 * (and gives way again when the rates turn), the path not in use is tried
 * one message in SHM_PATH_EXPLORE (two in a row, the first only warming it
 * up and not counted), size classes are independent, and messages under
 * SHM_PATH_MIN always follow the rule. Streams (simulated windows of
 * receives on a made-up clock): epochs of one path each, the caller's
 * guess first, then the faster path, the other tried again now and then.
 */
#include <stdio.h>
#include <string.h>

#include "shm_path.h"

static int errors;
/* Messages of n that probe the path not in use (two each time). */
#define PROBES(n) (2 * (n) / SHM_PATH_EXPLORE)
#define CHECK(c, ...)                                                          \
    do {                                                                       \
        if (!(c)) {                                                            \
            fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #c);            \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, "\n");                                             \
            errors++;                                                          \
        }                                                                      \
    } while (0)

/* Chooses n times for messages of `want` bytes, each taking the time the
 * rates (GB/s = bytes/ns) say; returns how many went by CMA. */
static int run(shm_path_t *pt, uint64_t want, int rule, double pipe, double cma, int n)
{
    int ncma = 0;
    for (int i = 0; i < n; i++) {
        int c = shm_path_choose(pt, want, rule);
        ncma += c;
        shm_path_record(pt, want, c, (uint64_t)((double)want / (c ? cma : pipe)));
    }
    return ncma;
}

/* A stream on a simulated clock: `windows` windows of `w` receives of
 * `want` bytes, matched together, served one after another at the rate
 * (GB/s) of the path each took, `gap_ns` apart; `*now` moves on. Returns
 * how many went by CMA; counts in *mixed the windows that mixed the paths
 * beyond a try of CMA (SHM_STREAM_PROBE_MIN receives here, where they are
 * 256 KiB or more). */
static int stream(shm_stream_t *st, uint64_t *now, uint64_t want, int guess, double pipe,
                  double cma, int windows, int w, uint64_t gap_ns, int *mixed)
{
    int ncma = 0, path[64];
    for (int k = 0; k < windows; k++) {
        int seen[2] = {0, 0};
        for (int i = 0; i < w; i++) {
            int live = shm_stream_match(st, want, *now);
            path[i] = live ? shm_stream_path(st, want, guess) : guess;
            seen[path[i]]++;
        }
        for (int i = 0; i < w; i++) {
            *now += (uint64_t)((double)want / (path[i] ? cma : pipe));
            shm_stream_done(st, want, path[i], *now);
            ncma += path[i];
        }
        if (mixed && seen[0] > SHM_STREAM_PROBE_MIN && seen[1] > SHM_STREAM_PROBE_MIN)
            (*mixed)++;
        *now += gap_ns;
    }
    return ncma;
}

static void streams(void)
{
    shm_stream_t st;
    uint64_t now = 1000000, kib = 1024, mib = 1 << 20;
    int mixed = 0, n = 400, w = 64, q = SHM_STREAM_PROBE_MIN, c;

    /* The guess first, the other path next, then the faster one; the
     * other is tried again one epoch in SHM_STREAM_EXPLORE_FAR while far
     * behind (here 3x). Each window is one epoch, one path, but for a try
     * of CMA, its first q receives. */
    memset(&st, 0, sizeof st);
    CHECK(!shm_stream_match(&st, mib, now), "the first receive is alone");
    shm_stream_done(&st, mib, 0, now += 1000);
    c = stream(&st, &now, mib, 1, 24.0, 8.0, 1, w, 2000, &mixed);
    CHECK(c == w, "first epoch: the guess (CMA), %d of %d", c, w);
    c = stream(&st, &now, mib, 1, 24.0, 8.0, 1, w, 2000, &mixed);
    CHECK(c == 0, "second epoch: the other path (a whole window of the pipeline), %d of %d by CMA",
          c, w);
    c = stream(&st, &now, mib, 1, 24.0, 8.0, n, w, 2000, &mixed);
    CHECK(c <= q * (n / SHM_STREAM_EXPLORE_FAR + 1), "pipeline 3x faster: %d of %d by CMA", c,
          n * w);
    CHECK(c >= q * (n / SHM_STREAM_EXPLORE_FAR - 1), "CMA never tried again: %d", c);
    CHECK(st.rate[7][1] > 7.9 && st.rate[7][1] < 8.1, "CMA's rate from its tries %.2f",
          st.rate[7][1]);
    CHECK(st.rate[7][0] > 23.0 && st.rate[7][0] < 25.0, "pipeline's rate %.2f", st.rate[7][0]);

    /* The rates turn: CMA takes over within a few tries. */
    c = stream(&st, &now, mib, 1, 5.0, 20.0, n, w, 2000, &mixed);
    CHECK(c >= n * w - w * (SHM_STREAM_EXPLORE_FAR + n / SHM_STREAM_EXPLORE_FAR + 2),
          "CMA 4x faster now: only %d of %d by CMA", c, n * w);
    /* A near tie: the other path is tried one epoch in SHM_STREAM_EXPLORE. */
    c = stream(&st, &now, mib, 1, 18.0, 20.0, n, w, 2000, &mixed);
    CHECK(c >= n * w - w * (n / SHM_STREAM_EXPLORE + 4) && c <= n * w - w * (n / SHM_STREAM_EXPLORE - 4),
          "near tie: %d of %d by CMA", c, n * w);
    CHECK(mixed == 0, "%d windows mixed the paths", mixed);

    /* Short pauses within an epoch are part of its time: 4 windows of 4
     * MiB at 20 GB/s, 40 us apart, measure 16 MiB in 959 us, 17.5 GB/s;
     * a try of the other path (one window's 4 MiB) has no pause; a long
     * pause ends the stream (the next receive is alone). */
    memset(&st, 0, sizeof st);
    shm_stream_match(&st, mib, now);
    shm_stream_done(&st, mib, 0, now += 1000);
    stream(&st, &now, mib, 0, 20.0, 20.0, 8, 4, 40000, NULL);
    CHECK(st.epochs[7] == 2 && st.rate[7][0] > 17.2 && st.rate[7][0] < 17.8 &&
          st.rate[7][1] > 19.8 && st.rate[7][1] < 20.2,
          "16 MiB at 20 GB/s with 40 us pauses: %u epochs, %.2f / %.2f", st.epochs[7],
          st.rate[7][0], st.rate[7][1]);
    now += SHM_STREAM_GAP_NS + 1;
    CHECK(!shm_stream_match(&st, mib, now), "after a long pause, alone");

    /* Another class's receive voids the epoch under way; classes learn
     * apart. */
    memset(&st, 0, sizeof st);
    shm_stream_match(&st, 64 * kib, now);
    shm_stream_done(&st, 64 * kib, 0, now += 1000);
    stream(&st, &now, 64 * kib, 0, 30.0, 10.0, 40, w, 1000, NULL);
    CHECK(st.epochs[3] == 40, "64 KiB: %u epochs of 40", st.epochs[3]);
    shm_stream_match(&st, 64 * kib, now);
    CHECK(shm_stream_match(&st, 4 * mib, now) && st.cls == 0, "mixed classes: the epoch void");
    CHECK(shm_stream_path(&st, 4 * mib, 1) == 1 && st.cls == 0,
          "an epoch began while another receive was in flight");
    shm_stream_done(&st, 64 * kib, 0, now += 1000);
    shm_stream_done(&st, 4 * mib, 0, now += 1000);
    CHECK(st.epochs[3] == 40 && st.epochs[9] == 0, "a void epoch counted");
    c = stream(&st, &now, 4 * mib, 0, 10.0, 30.0, 40, w, 1000, NULL);
    CHECK(c >= 40 * w - w * (SHM_STREAM_EXPLORE_FAR / 8 + 3), "4 MiB, CMA faster: %d", c);
    CHECK(st.rate[3][0] > st.rate[3][1], "4 MiB's measures changed 64 KiB's");

    /* A try of CMA whose read fell back to the pipeline: the try is void
     * once its receives are done, and the next window tries again. */
    memset(&st, 0, sizeof st);
    shm_stream_match(&st, mib, now);
    shm_stream_done(&st, mib, 0, now += 1000);
    stream(&st, &now, mib, 0, 30.0, 10.0, 1, w, 1000, NULL);
    int path[64];
    for (int i = 0; i < w; i++) {
        shm_stream_match(&st, mib, now);
        path[i] = shm_stream_path(&st, mib, 0);
    }
    CHECK(path[0] == 1 && path[q - 1] == 1 && path[q] == 0, "a try of CMA: %d %d %d", path[0],
          path[q - 1], path[q]);
    for (int i = 0; i < w; i++)
        shm_stream_done(&st, mib, i == 0 ? 0 : path[i], now += 100000); /* the first fell back */
    CHECK(st.rate[7][1] == 0, "a try short of a receive measured CMA at %.2f", st.rate[7][1]);
    now += 1000;
    c = stream(&st, &now, mib, 0, 30.0, 10.0, 1, w, 1000, NULL);
    CHECK(c == q && st.rate[7][1] > 9.9 && st.rate[7][1] < 10.1,
          "after a void try, the next: %d by CMA at %.2f", c, st.rate[7][1]);
}

int main(void)
{
    shm_path_t pt;
    memset(&pt, 0, sizeof pt);
    uint64_t mib = 1 << 20;
    CHECK(shm_path_choose(&pt, mib, 0) == 0, "the rule's path first");
    shm_path_record(&pt, mib, 0, 1000);
    CHECK(shm_path_choose(&pt, mib, 0) == 1, "then the other once");
    shm_path_record(&pt, mib, 1, 1000);

    /* A probe: two messages by the other path; the first one's time does
     * not count, the second's replaces the old figure. */
    memset(&pt, 0, sizeof pt);
    run(&pt, mib, 0, 14.0, 13.0, SHM_PATH_EXPLORE);
    double before = pt.rate[7][1];
    int first = shm_path_choose(&pt, mib, 0);
    shm_path_record(&pt, mib, first, 1);   /* absurdly fast: must not count */
    CHECK(first == 1 && pt.rate[7][1] == before, "the probe's first message counted");
    int second = shm_path_choose(&pt, mib, 0);
    shm_path_record(&pt, mib, second, (uint64_t)((double)mib / 20.0));
    CHECK(second == 1 && pt.rate[7][1] > 19.9 && pt.rate[7][1] < 20.1,
          "the probe's second message: path %d, CMA rate %.2f", second, pt.rate[7][1]);
    CHECK(shm_path_choose(&pt, mib, 0) == 1, "CMA measured faster: taken");

    memset(&pt, 0, sizeof pt);
    int c = run(&pt, mib, 0, 14.0, 13.0, 640);
    CHECK(c <= PROBES(640) + 2, "pipeline faster: %d of 640 by CMA", c);
    memset(&pt, 0, sizeof pt);
    c = run(&pt, mib, 0, 12.0, 13.0, 640);
    CHECK(c <= PROBES(640) + 2, "CMA only 8%% faster: %d of 640 by CMA", c);
    memset(&pt, 0, sizeof pt);
    c = run(&pt, mib, 0, 3.5, 12.5, 640);
    CHECK(c >= 640 - PROBES(640) - 2, "pipeline slow: only %d of 640 by CMA", c);
    /* The rates turn (the ranks' CPUs moved): back to the pipeline once
     * exploring has seen it. */
    c = run(&pt, mib, 0, 15.0, 12.5, 640);
    CHECK(c < 640 / 4, "pipeline fast again: %d of 640 still by CMA", c);
    /* With the rule saying CMA, a slightly faster pipeline does not win. */
    memset(&pt, 0, sizeof pt);
    c = run(&pt, 4 * mib, 1, 13.0, 12.5, 640);
    CHECK(c >= 640 - PROBES(640) - 2, "rule CMA, near tie: %d of 640 by CMA", c);

    /* Classes are independent; small messages follow the rule. */
    memset(&pt, 0, sizeof pt);
    run(&pt, 64 << 10, 0, 3.0, 12.0, 200);
    c = run(&pt, 4 * mib, 0, 15.0, 12.0, 200);
    CHECK(c <= PROBES(200) + 2, "4 MiB learned from 64 KiB: %d of 200 by CMA", c);
    CHECK(run(&pt, SHM_PATH_MIN / 2, 0, 0.1, 100.0, 50) == 0, "below SHM_PATH_MIN, the rule");
    CHECK(run(&pt, SHM_PATH_MIN / 2, 1, 100.0, 0.1, 50) == 50, "below SHM_PATH_MIN, the rule (CMA)");
    /* The smallest measured class learns like the others. */
    c = run(&pt, SHM_PATH_MIN, 0, 3.0, 12.0, 200);
    CHECK(c >= 200 - PROBES(200) - 4, "SHM_PATH_MIN, pipeline slow: %d of 200 by CMA",
          c);

    /* Messages amid others: the rule until lone ones measured the other
     * path twice as fast; nothing counted, no probe. */
    memset(&pt, 0, sizeof pt);
    CHECK(shm_path_best(&pt, mib, 1) == 1 && shm_path_best(&pt, mib, 0) == 0,
          "amid others, unmeasured: the rule");
    run(&pt, mib, 1, 20.0, 12.5, 200);   /* the pipeline 1.6x faster alone */
    CHECK(shm_path_choose(&pt, mib, 1) == 0, "alone: the pipeline 1.6x faster is taken");
    CHECK(shm_path_best(&pt, mib, 1) == 1, "amid others: 1.6x does not move the rule");
    run(&pt, mib, 1, 30.0, 12.5, 200);   /* now 2.4x */
    CHECK(shm_path_best(&pt, mib, 1) == 0, "amid others: 2.4x faster moves it");
    uint32_t n = pt.n[7];
    for (int i = 0; i < 3 * SHM_PATH_EXPLORE; i++)
        CHECK(shm_path_best(&pt, mib, 1) == 0, "amid others: a probe at %d", i);
    CHECK(pt.n[7] == n, "amid others: messages counted");

    streams();

    if (errors)
        fprintf(stderr, "%d check(s) failed\n", errors);
    else
        printf("shm_path: OK\n");
    return errors != 0;
}
