/*
 * locus_tune.h — the per-machine calibration cache: what `locus tune`
 * measured (rates of the large-message paths at a few message sizes), the
 * values it chose from them, and the machine they belong to.
 *
 * The tunables layer (locus_tunables.h) reads the cache and uses its
 * values as the defaults of the variables it names; the environment still
 * wins. A cache is used only on the machine it was measured on: the key is
 * the CPU model (/proc/cpuinfo "model name"), the CPUs online and the
 * kernel release (uname -r).
 *
 * The file is text, one record per line ('#' starts a comment):
 *
 *   format 1
 *   cpu AMD EPYC 7763 64-Core Processor
 *   cpus 2
 *   kernel 6.1.0-18-amd64
 *   date 2025-01-31T12:00:00Z
 *   mode full
 *   sizes 65536 262144 1048576 4194304
 *   rate pipe-64k 21.3 30.8 29.5 28.1      GB/s per size, 0 = not measured
 *   rate cma 8.4 10.0 9.7 9.1
 *   note CMA not permitted: ...
 *   pair-sizes 2048 4096 8192 16384         2 ranks' allreduce, this machine's
 *   time segment 0.47 0.69 1.20 1.93        way (through the shared segment) and
 *   time messages 0.62 0.88 1.60 2.67       as messages: us per call, 0 = not
 *                                           measured (older files have none)
 *   set LOCUS_SHM_CHUNK_SIZE 64k
 *   set LOCUS_SHM_CMA_MIN 1024G
 *   set LOCUS_COLL_PAIR_MSG_MIN 1024G
 *   end                                    (a file cut short is refused)
 */
#ifndef LOCUS_TUNE_H
#define LOCUS_TUNE_H

#include <stddef.h>

#define LOCUS_TUNE_MAX_SIZES 16
#define LOCUS_TUNE_MAX_PATHS 8
#define LOCUS_TUNE_MAX_NOTES 8
#define LOCUS_TUNE_MAX_VALUES 6
#define LOCUS_TUNE_PAIR_WAYS 2

/* Two rates closer than this (relative) are a tie: the shipped default
 * chunk stays unless another is faster by more. */
#define LOCUS_TUNE_NOISE 0.05

/* LOCUS_SHM_CMA_MIN when CMA was never as fast as the pipeline: 1 TiB, more
 * than any one message (a plain size, so every reader of sizes takes it). */
#define LOCUS_TUNE_NEVER "1024G"

typedef struct {
    char cpu[128];   /* "model name" of /proc/cpuinfo, "unknown" without one */
    int ncpus;       /* CPUs online */
    char kernel[65]; /* uname -r */
} locus_tune_key_t;

/* One large-message path: the pipelined copy with one chunk size, or CMA. */
typedef struct {
    char name[16];                    /* "pipe-128k" or "cma" */
    long chunk;                       /* chunk bytes; 0 for cma */
    double gbs[LOCUS_TUNE_MAX_SIZES]; /* GB/s (1e9 payload bytes/s) per size; 0: not measured */
} locus_tune_path_t;

/* One way two ranks on their own cores move a small collective's data:
 * "segment" (the shared segment) or "messages" (the transport). */
typedef struct {
    char name[16];
    double us[LOCUS_TUNE_MAX_SIZES]; /* us per allreduce per size; 0: not measured */
} locus_tune_way_t;

typedef struct {
    char name[32];  /* "LOCUS_SHM_CHUNK_SIZE" */
    char value[32]; /* "64k" */
} locus_tune_value_t;

typedef struct {
    locus_tune_key_t key;
    char date[32];  /* UTC, ISO 8601 */
    char mode[8];   /* "full" or "quick" */
    int nsizes;
    long sizes[LOCUS_TUNE_MAX_SIZES];
    int npaths;
    locus_tune_path_t paths[LOCUS_TUNE_MAX_PATHS];
    int npair_sizes;
    long pair_sizes[LOCUS_TUNE_MAX_SIZES];
    int nways;                         /* 0 or LOCUS_TUNE_PAIR_WAYS */
    locus_tune_way_t ways[LOCUS_TUNE_PAIR_WAYS];
    int nnotes;
    char notes[LOCUS_TUNE_MAX_NOTES][200];
    int nvalues;
    locus_tune_value_t values[LOCUS_TUNE_MAX_VALUES];
    int complete;   /* read: the end line was there */
} locus_tune_t;

/* 1 when `name` is a variable `locus tune` sets (LOCUS_SHM_CHUNK_SIZE,
 * LOCUS_SHM_CMA_MIN, LOCUS_SHM_CMA_MAX, LOCUS_COLL_PAIR_MSG_MIN), else 0. */
int locus_tune_sets(const char *name);

/* This machine's key. Never fails: what cannot be read is "unknown" / 0. */
void locus_tune_key_this(locus_tune_key_t *k);

/* 1 when both keys name the same machine, else 0. */
int locus_tune_key_equal(const locus_tune_key_t *a, const locus_tune_key_t *b);

/*
 * The cache file for this machine: LOCUS_TUNE_FILE when set, else
 * $XDG_CACHE_HOME/locus/tune-<key> (an absolute XDG_CACHE_HOME) or
 * $HOME/.cache/locus/tune-<key>, <key> being this machine's key made into
 * a file name (so one home shared by different machines keeps one file per
 * kind). Returns 0; 1 when LOCUS_TUNE_FILE is "none" (no cache: path is
 * "none"); -1 when there is no home to put it in (path is empty).
 */
int locus_tune_path(char *path, size_t len);

/*
 * Reads the cache at `path` into *t. Returns 0; -1 when the file does not
 * exist (err: "no such file"); -2 when it cannot be read or is malformed,
 * with a one-line reason in err ("line 7: ..."). A cache for another
 * machine reads fine: compare t->key with locus_tune_key_this().
 */
int locus_tune_read(const char *path, locus_tune_t *t, char *err, size_t errlen);

/* Writes *t to `path` (creating its folder, replacing the file atomically).
 * Returns 0, or -1 with a one-line reason in err. */
int locus_tune_write(const char *path, const locus_tune_t *t, char *err, size_t errlen);

/*
 * Chooses the values from the measured rates (replacing t->values):
 * LOCUS_SHM_CHUNK_SIZE is the chunk of the pipeline path with the best
 * geometric mean over the sizes every measured chunk has (the shipped
 * default when it is within LOCUS_TUNE_NOISE of the best);
 * LOCUS_SHM_CMA_MIN and LOCUS_SHM_CMA_MAX bound the run of consecutive
 * sizes at which CMA is at least as fast as the pipeline with that chunk,
 * the run CMA gains most over (the sum of the logarithms of its ratios):
 * CMA_MIN its first size, CMA_MAX the size after it (left out when the run
 * reaches the largest size); CMA_MIN is LOCUS_TUNE_NEVER when CMA never
 * is as fast. LOCUS_COLL_PAIR_MSG_MIN is the smallest pair size from
 * which messages are as fast as the segment at every larger pair size
 * (the segment must win by more than LOCUS_TUNE_NOISE), LOCUS_TUNE_NEVER
 * when the segment wins at the largest. A value is left out (the shipped
 * default stays) when its paths or ways were not measured at every size;
 * the reason goes into t->notes.
 */
void locus_tune_choose(locus_tune_t *t);

/* Rounds disagree when one configuration's values at one size differ by
 * more than this factor from round to round: the machine changed speed
 * while it was measured (seen on a VM: osu_bw at 35 GB/s, then 10 a
 * minute later, then 35 again), and a choice made from it may be wrong. */
#define LOCUS_TUNE_UNSTEADY 2.0

/* Of n sizes' lowest and highest values over the rounds (lo[i], hi[i];
 * 0: not measured): the index of the widest hi / lo, or -1 when none is
 * wider than LOCUS_TUNE_UNSTEADY. *ratio: that widest ratio (1 if none). */
int locus_tune_unsteady(const double *lo, const double *hi, int n, double *ratio);

/* The median of the n values measured (those above 0) in v, the mean of
 * the two middle ones when their count is even; 0 when none was. Reorders
 * v. What `locus tune` keeps of its rounds: a path whose rate swings by
 * factors from round to round is judged by its usual rate, not by its
 * luckiest round. */
double locus_tune_median(double *v, int n);

/* The chosen value of `name` in *t, or NULL. */
const char *locus_tune_value(const locus_tune_t *t, const char *name);

/* Appends a note (truncated to fit; ignored when the table is full). */
void locus_tune_note(locus_tune_t *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
