/*
 * tune_run.h — `locus tune`'s measurements: one 2-rank job of a benchmark
 * program (osu_bw, imb) under locusrun (real processes, bound by locusrun,
 * real shared memory), one column of its table read back per size.
 */
#ifndef LOCUS_TUNE_RUN_H
#define LOCUS_TUNE_RUN_H

#include <limits.h>
#include <stddef.h>

typedef struct {
    char locusrun[PATH_MAX]; /* next to this `locus` */
    char osu_bw[PATH_MAX];   /* <libexec>/locus/osu_bw (install) or <build>/bench/osu_bw */
    char imb[PATH_MAX];      /* the same for imb */
} tune_tools_t;

/* Finds the programs. Returns 0, or -1 with a one-line reason in err. */
int tune_tools_find(tune_tools_t *tools, char *err, size_t errlen);

typedef struct {
    const char *env[8];  /* "NAME=VALUE" set for the job, NULL-terminated */
    const char *prog;    /* tools->osu_bw or tools->imb */
    int column;          /* of a table row, the value's (0: the size; osu_bw's MB/s 1) */
    const char *args[12]; /* the program's arguments, NULL-terminated */
    int oversubscribe;   /* pass --oversubscribe (one allowed CPU) */
    int report_bindings; /* fill `bindings` from --report-bindings */
    double timeout_s;
} tune_job_t;

/*
 * Runs the job and fills values[i] with the column of the row for sizes[i]
 * (0 for a size it did not print). Returns 0 when it ran to the end; -1 when it
 * failed, with its last line of output (or why it could not start) in err;
 * -2 when it ran past timeout_s (the rows printed so far are kept).
 * bindings gets "PUs 0 and 1"-style text when asked and found, else "".
 */
int tune_job_run(const tune_tools_t *tools, const tune_job_t *job, const long *sizes, int nsizes,
                 double *values, char *bindings, size_t blen, char *err, size_t errlen);

/* Seconds on the monotonic clock. */
double tune_now(void);

#endif
