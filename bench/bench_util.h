/*
 * bench_util.h — what the Locus benchmark programs share.
 *
 * The programs are plain MPI C (any MPI's mpicc builds them), so nothing here
 * depends on Locus: size parsing, aligned touched buffers, the least-squares
 * fit, a tiny JSON writer and the "bad input" exit rule.
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stddef.h>
#include <stdio.h>

/* Exit status for bad command-line input (the project-wide rule). */
#define BENCH_EXIT_USAGE 2

/*
 * Parses a non-negative size such as "4096", "64k" or "4M" (powers of 1024)
 * into *out. Returns 0, or -1 when malformed, negative or overflowing.
 */
int bench_size_parse(const char *s, long *out);

/*
 * Parses "MAX" or "MIN:MAX" sizes (each as bench_size_parse) into *min and
 * *max; a missing MIN leaves *min unchanged. Returns 0, or -1 when malformed
 * or MIN > MAX.
 */
int bench_range_parse(const char *s, long *min, long *max);

/* Parses a positive integer (no suffix) into *out; returns 0 or -1. */
int bench_int_parse(const char *s, long *out);

/* Parses a count >= 0 (no suffix) into *out; returns 0 or -1. */
int bench_count_parse(const char *s, long *out);

/*
 * Allocates `len` bytes (at least one page) aligned to a page and writes
 * every byte, so first-touch puts the pages where the rank runs and no page
 * fault lands in a timed loop. Returns NULL when out of memory.
 */
void *bench_buf_alloc(size_t len);

/*
 * Linear least-squares fit y = a + b*x over n points (n >= 2, not all x
 * equal). Returns 0 and sets *a and *b, or -1 when the fit is undefined.
 */
int bench_fit_linear(const double *x, const double *y, int n, double *a, double *b);

/*
 * Ends a run on bad input: rank 0 prints "PROG: MSG" on stderr (one line),
 * every rank finalizes MPI and exits with BENCH_EXIT_USAGE. Every rank parses
 * the same arguments, so all of them reach this together and nobody hangs.
 */
void bench_usage_exit(const char *prog, int rank, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));

/* Minimal JSON writer: keeps track of whether a comma is due. */
typedef struct {
    FILE *out;
    int depth;
    int need_comma[16];
} bench_json_t;

/* Starts a JSON document on `out` with an opening '{'. */
void bench_json_begin(bench_json_t *j, FILE *out);
/* Opens a nested object ("key": {) or, with key NULL inside an array, {. */
void bench_json_obj(bench_json_t *j, const char *key);
/* Opens a nested array ("key": [). */
void bench_json_arr(bench_json_t *j, const char *key);
/* Closes the innermost object or array (`c` is '}' or ']'). */
void bench_json_close(bench_json_t *j, char c);
/* Writes "key": "value" (value escaped). */
void bench_json_str(bench_json_t *j, const char *key, const char *value);
/* Writes "key": number (%.17g; key NULL inside an array). */
void bench_json_num(bench_json_t *j, const char *key, double value);
/* Writes "key": integer. */
void bench_json_int(bench_json_t *j, const char *key, long value);
/* Closes the document ('}') and ends the line. */
void bench_json_end(bench_json_t *j);

/* The MPI library's version string (MPI_Get_library_version), first line. */
void bench_mpi_library(char *buf, size_t len);

#endif
