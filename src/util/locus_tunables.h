/*
 * locus_tunables.h — every LOCUS_* environment variable, as data.
 *
 * Each tunable is one row (name, default, one-line doc) in a tunables_*.def
 * file of the layer that reads it (src/util/tunables_<layer>.def). The code
 * reads values only through these functions, and `locus info` prints the
 * same table, so the documentation cannot drift from the code.
 */
#ifndef LOCUS_TUNABLES_H
#define LOCUS_TUNABLES_H

#include <stdio.h>

typedef struct {
    const char *name;         /* "LOCUS_SHM_EAGER_MAX" */
    const char *default_val;  /* as a user would write it */
    const char *doc;          /* one line */
} locus_tunable_t;

/* The whole table and its length. */
const locus_tunable_t *locus_tunables(int *count);

/* The row for `name`, or NULL when it is not a known tunable. */
const locus_tunable_t *locus_tunable_find(const char *name);

/* The value in force: the environment's if set and non-empty, else the
 * value `locus tune` measured for this machine (for the variables it sets,
 * see locus_tune.h), else the default. `name` must be in the table
 * (abort()s otherwise: a programming error, caught by the tests). */
const char *locus_tunable_str(const char *name);

/* Where the value in force of `name` comes from. */
typedef enum {
    LOCUS_TUNABLE_DEFAULT,  /* the table's default */
    LOCUS_TUNABLE_ENV,      /* the environment */
    LOCUS_TUNABLE_TUNED     /* the calibration cache of this machine */
} locus_tunable_source_t;
locus_tunable_source_t locus_tunable_source(const char *name);

/* The value `locus tune` chose for `name` on this machine, whatever the
 * environment says, or NULL (no usable cache, or not a tuned variable). */
const char *locus_tunable_tuned(const char *name);

/* What became of the calibration cache (read once per process, at the
 * first lookup of a variable `locus tune` sets). */
typedef enum {
    LOCUS_TUNE_USED,     /* read; its values are the defaults of those variables */
    LOCUS_TUNE_MISSING,  /* no file yet: `locus tune` has not run here */
    LOCUS_TUNE_FOREIGN,  /* measured on another machine (key differs): ignored */
    LOCUS_TUNE_CORRUPT,  /* unreadable or malformed: ignored, with one warning on stderr */
    LOCUS_TUNE_OFF,      /* LOCUS_TUNE_FILE=none, or no home folder for it */
} locus_tune_state_t;

/* The cache's state; *path gets its file name (empty when there is none)
 * and *detail one line saying why it is not used (empty when it is). */
locus_tune_state_t locus_tunables_cache(const char **path, const char **detail);

/*
 * The value as an integer, accepting k/K, m/M, g/G suffixes (powers of
 * 1024). Returns 0 and sets *out, or -1 with a one-line reason in err
 * naming the variable and the bad value.
 */
int locus_tunable_long(const char *name, long *out, char *err, size_t errlen);

/* LOCUS_SHM_POOL_SIZE for a node of local_ranks ranks: the value set
 * (environment, calibration) as it is; unset, 32 MiB shared by the node's
 * ranks, from the shipped value up to four times it (why: shm_create.c).
 * Returns 0, or -1 with the reason in err. */
int locus_shm_pool_size(int local_ranks, long *out, char *err, size_t errlen);

/* Parses a size like "64k" or "4M" into *out; -1 when malformed or negative. */
int locus_parse_size(const char *s, long *out);

/* Writes v as locus_parse_size reads it and a user would type it: "64k",
 * "4M", "1024G", or the plain number when it is no whole multiple of 1k.
 * Returns buf. */
const char *locus_size_str(char *buf, size_t len, long v);

/* Whether the value of `name` is a secret (LOCUS_JOB_KEY): listings show
 * only whether it is set, never the value. */
int locus_tunable_secret(const char *name);
/* The value as every listing shows it (locus info, MPI_T): the value, or
 * for a secret "(hidden)" when set and "" when not. */
const char *locus_tunable_shown(const char *name);

/* Prints the table: name, value in force (marked * when set in the
 * environment, + when tuned), default, doc. */
void locus_tunables_print(FILE *out);

#endif
