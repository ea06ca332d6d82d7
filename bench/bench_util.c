/* Helpers shared by the benchmark programs (see bench_util.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* getopt_long, posix_memalign, sched_getcpu under -std=c11 */
#endif
#include "bench_util.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

int bench_size_parse(const char *s, long *out)
{
    if (!s || !isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno || v < 0)
        return -1;
    long mult = 1;
    switch (*end) {
    case '\0': break;
    case 'k': case 'K': mult = 1L << 10; end++; break;
    case 'm': case 'M': mult = 1L << 20; end++; break;
    case 'g': case 'G': mult = 1L << 30; end++; break;
    default: return -1;
    }
    if (*end != '\0' || v > LONG_MAX / mult)
        return -1;
    *out = v * mult;
    return 0;
}

int bench_range_parse(const char *s, long *min, long *max)
{
    const char *colon = strchr(s, ':');
    if (!colon)
        return bench_size_parse(s, max);
    char first[64];
    size_t n = (size_t)(colon - s);
    if (n == 0 || n >= sizeof first)
        return -1;
    memcpy(first, s, n);
    first[n] = '\0';
    long lo, hi;
    if (bench_size_parse(first, &lo) || bench_size_parse(colon + 1, &hi) || lo > hi)
        return -1;
    *min = lo;
    *max = hi;
    return 0;
}

int bench_int_parse(const char *s, long *out)
{
    if (!s || !isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno || *end != '\0' || v <= 0 || v > INT_MAX)
        return -1;
    *out = v;
    return 0;
}

int bench_count_parse(const char *s, long *out)
{
    if (s && strcmp(s, "0") == 0) {
        *out = 0;
        return 0;
    }
    return bench_int_parse(s, out);
}

void *bench_buf_alloc(size_t len)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t psz = page > 0 ? (size_t)page : 4096;
    size_t n = len < psz ? psz : (len + psz - 1) / psz * psz;
    void *p = NULL;
    if (posix_memalign(&p, psz, n) != 0)
        return NULL;
    memset(p, 'a', n);
    return p;
}

void bench_usage_exit(const char *prog, int rank, const char *fmt, ...)
{
    if (rank == 0) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "%s: ", prog);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
    }
    MPI_Finalize();
    exit(BENCH_EXIT_USAGE);
}

static void json_sep(bench_json_t *j)
{
    if (j->need_comma[j->depth])
        fputc(',', j->out);
    j->need_comma[j->depth] = 1;
}

static void json_key(bench_json_t *j, const char *key)
{
    json_sep(j);
    if (key)
        fprintf(j->out, "\"%s\":", key);
}

void bench_json_begin(bench_json_t *j, FILE *out)
{
    memset(j, 0, sizeof *j);
    j->out = out;
    fputc('{', out);
}

static void json_open(bench_json_t *j, const char *key, char c)
{
    json_key(j, key);
    fputc(c, j->out);
    if (j->depth + 1 < (int)(sizeof j->need_comma / sizeof j->need_comma[0]))
        j->depth++;
    j->need_comma[j->depth] = 0;
}

void bench_json_obj(bench_json_t *j, const char *key) { json_open(j, key, '{'); }
void bench_json_arr(bench_json_t *j, const char *key) { json_open(j, key, '['); }

void bench_json_close(bench_json_t *j, char c)
{
    fputc(c, j->out);
    if (j->depth > 0)
        j->depth--;
}

void bench_json_str(bench_json_t *j, const char *key, const char *value)
{
    json_key(j, key);
    fputc('"', j->out);
    for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(j->out, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(j->out, "\\u%04x", *p);
        else
            fputc(*p, j->out);
    }
    fputc('"', j->out);
}

void bench_json_num(bench_json_t *j, const char *key, double value)
{
    json_key(j, key);
    fprintf(j->out, "%.17g", value);
}

void bench_json_int(bench_json_t *j, const char *key, long value)
{
    json_key(j, key);
    fprintf(j->out, "%ld", value);
}

void bench_json_end(bench_json_t *j)
{
    fputs("}\n", j->out);
    fflush(j->out);
}

void bench_mpi_library(char *buf, size_t len)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    v[0] = '\0';
    MPI_Get_library_version(v, &n);
    v[sizeof v - 1] = '\0';
    char *nl = strchr(v, '\n');
    if (nl)
        *nl = '\0';
    for (char *t = v; *t; t++)
        if (*t == '\t')
            *t = ' ';
    /* Strip trailing blanks and commas some libraries leave. */
    size_t k = strlen(v);
    while (k > 0 && (v[k - 1] == ' ' || v[k - 1] == ',' || v[k - 1] == '\t'))
        v[--k] = '\0';
    snprintf(buf, len, "%s", v);
}
