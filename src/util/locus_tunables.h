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
 * default. `name` must be in the table (abort()s otherwise: a programming
 * error, caught by the tests). */
const char *locus_tunable_str(const char *name);

/*
 * The value as an integer, accepting k/K, m/M, g/G suffixes (powers of
 * 1024). Returns 0 and sets *out, or -1 with a one-line reason in err
 * naming the variable and the bad value.
 */
int locus_tunable_long(const char *name, long *out, char *err, size_t errlen);

/* Parses a size like "64k" or "4M" into *out; -1 when malformed or negative. */
int locus_parse_size(const char *s, long *out);

/* Prints the table: name, value in force (marked when set), default, doc. */
void locus_tunables_print(FILE *out);

#endif
