/* The calibration cache: this machine's key, where the file lives, reading
 * and writing it. (Choosing values from rates: tune_choose.c.) */
#include "locus_tune.h"
#include "locus_tunables.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

int locus_tune_sets(const char *name)
{
    return !strcmp(name, "LOCUS_SHM_CHUNK_SIZE") || !strcmp(name, "LOCUS_SHM_CMA_MIN") ||
           !strcmp(name, "LOCUS_SHM_CMA_MAX") || !strcmp(name, "LOCUS_COLL_PAIR_MSG_MIN");
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

void locus_tune_key_this(locus_tune_key_t *k)
{
    memset(k, 0, sizeof *k);
    snprintf(k->cpu, sizeof k->cpu, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            char *v = trim(colon + 1);
            if (*v)
                snprintf(k->cpu, sizeof k->cpu, "%s", v);
            break;
        }
    }
    if (f)
        fclose(f);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    k->ncpus = n > 0 ? (int)n : 0;
    struct utsname u;
    snprintf(k->kernel, sizeof k->kernel, "%s", uname(&u) == 0 ? u.release : "unknown");
}

int locus_tune_key_equal(const locus_tune_key_t *a, const locus_tune_key_t *b)
{
    return !strcmp(a->cpu, b->cpu) && a->ncpus == b->ncpus && !strcmp(a->kernel, b->kernel);
}

/* Appends s to out as file-name characters: letters, digits, '.', '-';
 * every other run of characters becomes one '_'. */
static void slug_add(char *out, size_t len, const char *s)
{
    size_t n = strlen(out);
    int gap = 0;
    for (; *s && n + 2 < len; s++) {
        int ok = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                 (*s >= '0' && *s <= '9') || *s == '.' || *s == '-';
        if (!ok) {
            gap = 1;
            continue;
        }
        if (gap && n > 0 && out[n - 1] != '-')
            out[n++] = '_';
        gap = 0;
        out[n++] = *s;
    }
    out[n] = '\0';
}

int locus_tune_path(char *path, size_t len)
{
    const char *file = locus_tunable_str("LOCUS_TUNE_FILE");
    if (*file) {
        snprintf(path, len, "%s", file);
        return strcmp(file, "none") == 0 ? 1 : 0;
    }
    char dir[4096];
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && xdg[0] == '/')
        snprintf(dir, sizeof dir, "%s/locus", xdg);
    else if (home && *home)
        snprintf(dir, sizeof dir, "%s/.cache/locus", home);
    else {
        path[0] = '\0';
        return -1;
    }
    locus_tune_key_t k;
    locus_tune_key_this(&k);
    char name[200] = "tune-";
    char cpus[24];
    snprintf(cpus, sizeof cpus, "-%dcpu-", k.ncpus);
    slug_add(name, 120, k.cpu);
    slug_add(name, sizeof name, cpus);
    slug_add(name, sizeof name, k.kernel);
    snprintf(path, len, "%s/%s", dir, name);
    return 0;
}

/* A "sizes" list into sizes[] (at most LOCUS_TUNE_MAX_SIZES); -1 if bad. */
static int read_sizes(char *rest, long *sizes, int *n)
{
    *n = 0;
    for (char *save, *w = strtok_r(rest, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        long v;
        if (*n == LOCUS_TUNE_MAX_SIZES || locus_parse_size(w, &v) != 0 || v <= 0)
            return -1;
        sizes[(*n)++] = v;
    }
    return 0;
}

/* The numbers (what: "rate", "time") after a record's name, one per size
 * (the rest of strtok_r's `save`); -1 with the reason in err. */
static int read_numbers(char **save, double *out, int nsizes, const char *what,
                        const char *name, char *err, size_t errlen)
{
    int n = 0;
    char *end;
    for (char *w = strtok_r(NULL, " ", save); w; w = strtok_r(NULL, " ", save)) {
        double v = strtod(w, &end);
        if (end == w || *end || !(v >= 0 && v < 1e6) || n == nsizes) {
            snprintf(err, errlen, "bad %s for %s", what, name);
            return -1;
        }
        out[n++] = v;
    }
    if (n != nsizes) {
        snprintf(err, errlen, "%s has %d %ss for %d sizes", name, n, what, nsizes);
        return -1;
    }
    return 0;
}

/* One record of the file into *t; -1 with the reason in err. */
static int read_record(locus_tune_t *t, char *line, char *err, size_t errlen)
{
    char *rest = strchr(line, ' ');
    if (rest)
        *rest++ = '\0';
    else
        rest = line + strlen(line);
    rest = trim(rest);
    char *end;
    if (!strcmp(line, "format")) {
        if (strcmp(rest, "1") != 0) {
            snprintf(err, errlen, "format %.32s is not one this Locus reads (1)", rest);
            return -1;
        }
    } else if (!strcmp(line, "cpu")) {
        snprintf(t->key.cpu, sizeof t->key.cpu, "%s", rest);
    } else if (!strcmp(line, "cpus")) {
        long n = strtol(rest, &end, 10);
        if (end == rest || *end || n <= 0 || n > 1 << 20) {
            snprintf(err, errlen, "bad cpus '%.32s'", rest);
            return -1;
        }
        t->key.ncpus = (int)n;
    } else if (!strcmp(line, "kernel")) {
        snprintf(t->key.kernel, sizeof t->key.kernel, "%s", rest);
    } else if (!strcmp(line, "date")) {
        snprintf(t->date, sizeof t->date, "%s", rest);
    } else if (!strcmp(line, "mode")) {
        snprintf(t->mode, sizeof t->mode, "%s", rest);
    } else if (!strcmp(line, "sizes") || !strcmp(line, "pair-sizes")) {
        int pair = line[0] == 'p';
        if (read_sizes(rest, pair ? t->pair_sizes : t->sizes,
                       pair ? &t->npair_sizes : &t->nsizes) != 0) {
            snprintf(err, errlen, "bad %s", line);
            return -1;
        }
    } else if (!strcmp(line, "time")) {
        char *save, *w = strtok_r(rest, " ", &save);
        if (!w || (strcmp(w, "segment") != 0 && strcmp(w, "messages") != 0) ||
            t->nways == LOCUS_TUNE_PAIR_WAYS) {
            snprintf(err, errlen, "time of an unknown way '%.32s'", w ? w : "");
            return -1;
        }
        locus_tune_way_t *way = &t->ways[t->nways];
        memset(way, 0, sizeof *way);
        snprintf(way->name, sizeof way->name, "%s", w);
        if (read_numbers(&save, way->us, t->npair_sizes, "time", way->name, err, errlen) != 0)
            return -1;
        t->nways++;
    } else if (!strcmp(line, "rate")) {
        if (t->npaths == LOCUS_TUNE_MAX_PATHS) {
            snprintf(err, errlen, "too many rate lines");
            return -1;
        }
        locus_tune_path_t *p = &t->paths[t->npaths];
        memset(p, 0, sizeof *p);
        char *save, *w = strtok_r(rest, " ", &save);
        if (!w || (strcmp(w, "cma") != 0 && (strncmp(w, "pipe-", 5) != 0 ||
                                              locus_parse_size(w + 5, &p->chunk) != 0 ||
                                              p->chunk <= 0))) {
            snprintf(err, errlen, "rate of an unknown path '%.32s'", w ? w : "");
            return -1;
        }
        snprintf(p->name, sizeof p->name, "%s", w);
        if (read_numbers(&save, p->gbs, t->nsizes, "rate", p->name, err, errlen) != 0)
            return -1;
        t->npaths++;
    } else if (!strcmp(line, "note")) {
        locus_tune_note(t, "%s", rest);
    } else if (!strcmp(line, "set")) {
        char *v = strchr(rest, ' ');
        long x;
        if (v)
            *v++ = '\0';
        if (!locus_tune_sets(rest) || !v || locus_parse_size(v, &x) != 0 ||
            t->nvalues == LOCUS_TUNE_MAX_VALUES) {
            snprintf(err, errlen, "bad value '%.40s %.20s'", rest, v ? v : "");
            return -1;
        }
        locus_tune_value_t *tv = &t->values[t->nvalues++];
        snprintf(tv->name, sizeof tv->name, "%s", rest);
        snprintf(tv->value, sizeof tv->value, "%s", v);
    } else if (!strcmp(line, "end")) {
        t->complete = 1;
    } else {
        snprintf(err, errlen, "unknown record '%.32s'", line);
        return -1;
    }
    return 0;
}

int locus_tune_read(const char *path, locus_tune_t *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s", strerror(errno));
        return errno == ENOENT ? -1 : -2;
    }
    char line[1024], why[200] = "";
    int lineno = 0, format = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            snprintf(why, sizeof why, "line too long");
            rc = -2;
            break;
        }
        char *s = trim(line);
        if (!*s || *s == '#')
            continue;
        if (!format && strncmp(s, "format ", 7) != 0) {
            snprintf(why, sizeof why, "not a locus tune cache (no format line first)");
            rc = -2;
            break;
        }
        format = 1;
        if (t->complete) {
            snprintf(why, sizeof why, "records after the end line");
            rc = -2;
        } else if (read_record(t, s, why, sizeof why) != 0) {
            rc = -2;
        }
    }
    fclose(f);
    if (rc == 0 && (!format || !t->key.cpu[0] || !t->key.ncpus || !t->key.kernel[0] ||
                    !t->complete)) {
        snprintf(why, sizeof why, "incomplete (needs format, cpu, cpus, kernel ... end: cut short?)");
        lineno = 0;
        rc = -2;
    }
    if (rc != 0) {
        if (lineno)
            snprintf(err, errlen, "line %d: %s", lineno, why);
        else
            snprintf(err, errlen, "%s", why);
    }
    return rc;
}

/* mkdir -p of the folder that holds `path`. */
static int make_parent(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = '\0';
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(dir, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* "key v0 v1 ...": a sizes line (v NULL: sizes) or a rate/time line. */
static void write_line(FILE *f, const char *key, const long *sizes, const double *v, int n)
{
    fprintf(f, "%s", key);
    for (int i = 0; i < n; i++)
        if (sizes)
            fprintf(f, " %ld", sizes[i]);
        else
            fprintf(f, " %.3f", v[i]);
    fprintf(f, "\n");
}

static void write_body(FILE *f, const locus_tune_t *t)
{
    fprintf(f, "# Locus self-calibration, written by `locus tune`; delete the file to forget it.\n"
               "# Used only on the machine of this key; the environment overrides every value.\n");
    fprintf(f, "format 1\ncpu %s\ncpus %d\nkernel %s\n", t->key.cpu, t->key.ncpus, t->key.kernel);
    if (t->date[0])
        fprintf(f, "date %s\n", t->date);
    if (t->mode[0])
        fprintf(f, "mode %s\n", t->mode);
    char key[48];
    write_line(f, "sizes", t->sizes, NULL, t->nsizes);
    fprintf(f, "# rates in GB/s (1e9 payload bytes per second), 0 = not measured\n");
    for (int p = 0; p < t->npaths; p++) {
        snprintf(key, sizeof key, "rate %s", t->paths[p].name);
        write_line(f, key, NULL, t->paths[p].gbs, t->nsizes);
    }
    if (t->nways) {
        write_line(f, "pair-sizes", t->pair_sizes, NULL, t->npair_sizes);
        fprintf(f, "# 2 ranks' allreduce per way, us per call, 0 = not measured\n");
    }
    for (int w = 0; w < t->nways; w++) {
        snprintf(key, sizeof key, "time %s", t->ways[w].name);
        write_line(f, key, NULL, t->ways[w].us, t->npair_sizes);
    }
    for (int i = 0; i < t->nnotes; i++)
        fprintf(f, "note %s\n", t->notes[i]);
    for (int i = 0; i < t->nvalues; i++)
        fprintf(f, "set %s %s\n", t->values[i].name, t->values[i].value);
    fprintf(f, "end\n");
}

int locus_tune_write(const char *path, const locus_tune_t *t, char *err, size_t errlen)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp%d", path, (int)getpid());
    if (make_parent(path) != 0) {
        snprintf(err, errlen, "cannot create the folder of %s: %s", path, strerror(errno));
        return -1;
    }
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
        return -1;
    }
    write_body(f, t);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno ? errno : EIO));
        unlink(tmp);
        return -1;
    }
    return 0;
}
