/*
 * osu.h — shared parts of the OSU-style point-to-point programs
 * (osu_latency, osu_bw, osu_bibw, osu_mbw_mr): options, iteration defaults
 * of OMB 5.3 (osu_pt2pt.h), the header and row layout, JSON output.
 */
#ifndef BENCH_OSU_H
#define BENCH_OSU_H

#include "bench_util.h"

#define OSU_LARGE_MESSAGE_SIZE 8192
#define OSU_MAX_SIZE (1L << 22)
#define OSU_FIELD_WIDTH 20

typedef struct {
    const char *prog;       /* "osu_bw" */
    const char *title;      /* "OSU MPI Bandwidth Test" */
    long min, max;          /* message sizes */
    long iters, skip;       /* for sizes <= 8 KiB */
    long iters_large, skip_large;
    long window;            /* 0 when the program has no window */
    int json;
    int pairs;              /* osu_mbw_mr: sender/receiver pairs */
} osu_opts_t;

/*
 * Parses -m [MIN:]MAX, -i ITERS, -x WARMUP, -W WINDOW (when o->window is
 * non-zero), --json and -h into `o`, which holds the program's defaults on
 * entry. Bad input ends the run through bench_usage_exit().
 */
void osu_opts_parse(int argc, char **argv, int rank, osu_opts_t *o);

/* The next size after `size` (0 → 1, then doubling). */
long osu_size_next(long size);

/* Iterations and warm-up for one size. */
void osu_loop_counts(const osu_opts_t *o, long size, long *iters, long *skip);

/*
 * Rank 0's output. Text: the "# title" line, `extra` lines if any, then the
 * column titles `%-10s` + `%20s` each. JSON: opens {"benchmark": prog, ...,
 * "rows": [. `cols` are the column titles, `keys` their JSON names.
 */
void osu_head(const osu_opts_t *o, bench_json_t *j, const char *extra, int ncols,
              const char *const *cols, const char *const *keys);

/* One row: the size and ncols values (%-10ld then %20.2f each). */
void osu_row(const osu_opts_t *o, bench_json_t *j, long size, int ncols, const double *v,
             const char *const *keys);

/*
 * Streams `window` messages of `size` bytes per iteration from sender to
 * `peer` (the receiver answers each window with a 4-byte ack), `skip`
 * untimed iterations first. Returns the timed seconds (on both sides).
 * reqs must hold `window` requests.
 */
double osu_stream(char *sbuf, char *rbuf, long size, long window, long iters, long skip,
                  int peer, int sender, void *reqs);

/*
 * Both sides post `window` receives and `window` sends per iteration
 * (osu_bibw). Returns the timed seconds. reqs must hold 2*window requests.
 */
double osu_bistream(char *sbuf, char *rbuf, long size, long window, long iters, long skip,
                    int peer, void *reqs);

/* Closes the JSON document (no-op for text). */
void osu_tail(const osu_opts_t *o, bench_json_t *j);

#endif
