#include "locus_tunables.h"
#include "locus_tune.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define LOCUS_TUNABLE(name, def, doc) { name, def, doc },
static const locus_tunable_t table[] = {
#include "tunables_launch.def"
#include "tunables_place.def"
#include "tunables_boot.def"
#include "tunables_core.def"
#include "tunables_shm.def"
#include "tunables_tcp.def"
#include "tunables_ofi.def"
#include "tunables_coll.def"
#include "tunables_mpi.def"
#include "tunables_rma.def"
#include "tunables_bench.def"
};
#undef LOCUS_TUNABLE

const locus_tunable_t *locus_tunables(int *count)
{
    *count = (int)(sizeof table / sizeof table[0]);
    return table;
}

const locus_tunable_t *locus_tunable_find(const char *name)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].name, name) == 0)
            return &table[i];
    return NULL;
}

/* The calibration cache, read once per process: every rank of a job reads
 * its own copy at MPI_Init, and nothing changes it afterwards. */
typedef struct {
    pthread_once_t once;
    locus_tune_state_t state;
    char path[4096];
    char detail[512];
    locus_tune_t tab;
} tune_cache_t;

static tune_cache_t tune_cache = { .once = PTHREAD_ONCE_INIT };

static void tune_cache_load(void)
{
    tune_cache_t *c = &tune_cache;
    int where = locus_tune_path(c->path, sizeof c->path);
    if (where != 0) {
        c->state = LOCUS_TUNE_OFF;
        snprintf(c->detail, sizeof c->detail, "%s",
                 where > 0 ? "LOCUS_TUNE_FILE=none" : "no HOME or XDG_CACHE_HOME to keep it in");
        if (where > 0)
            c->path[0] = '\0';
        return;
    }
    char err[256];
    int rc = locus_tune_read(c->path, &c->tab, err, sizeof err);
    if (rc == -1) {
        c->state = LOCUS_TUNE_MISSING;
        snprintf(c->detail, sizeof c->detail, "not measured yet: run 'locus tune'");
        return;
    }
    if (rc != 0) {
        c->state = LOCUS_TUNE_CORRUPT;
        snprintf(c->detail, sizeof c->detail, "unreadable (%s)", err);
        /* The one place this layer speaks: a rank has no other way to
         * learn why its tuned values are gone. */
        fprintf(stderr, "locus: warning: ignoring the calibration cache %s (%s); "
                        "using the shipped defaults (run 'locus tune' again)\n", c->path, err);
        return;
    }
    locus_tune_key_t me;
    locus_tune_key_this(&me);
    if (!locus_tune_key_equal(&me, &c->tab.key)) {
        c->state = LOCUS_TUNE_FOREIGN;
        snprintf(c->detail, sizeof c->detail, "measured on another machine (%.100s, %d CPUs, "
                 "Linux %.64s), not this one (%.100s, %d CPUs, Linux %.64s)",
                 c->tab.key.cpu, c->tab.key.ncpus, c->tab.key.kernel, me.cpu, me.ncpus, me.kernel);
        return;
    }
    c->state = LOCUS_TUNE_USED;
}

locus_tune_state_t locus_tunables_cache(const char **path, const char **detail)
{
    pthread_once(&tune_cache.once, tune_cache_load);
    *path = tune_cache.path;
    *detail = tune_cache.state == LOCUS_TUNE_USED ? "" : tune_cache.detail;
    return tune_cache.state;
}

const char *locus_tunable_tuned(const char *name)
{
    if (!locus_tune_sets(name))
        return NULL;
    pthread_once(&tune_cache.once, tune_cache_load);
    if (tune_cache.state != LOCUS_TUNE_USED)
        return NULL;
    return locus_tune_value(&tune_cache.tab, name);
}

static const locus_tunable_t *find_or_die(const char *name)
{
    const locus_tunable_t *t = locus_tunable_find(name);
    if (!t) {
        fprintf(stderr, "locus: internal error: %s is not in the tunables table\n", name);
        abort();
    }
    return t;
}

locus_tunable_source_t locus_tunable_source(const char *name)
{
    find_or_die(name);
    const char *v = getenv(name);
    if (v && *v)
        return LOCUS_TUNABLE_ENV;
    return locus_tunable_tuned(name) ? LOCUS_TUNABLE_TUNED : LOCUS_TUNABLE_DEFAULT;
}

const char *locus_tunable_str(const char *name)
{
    const locus_tunable_t *t = find_or_die(name);
    const char *v = getenv(name);
    if (v && *v)
        return v;
    const char *tuned = locus_tunable_tuned(name);
    return tuned ? tuned : t->default_val;
}

int locus_parse_size(const char *s, long *out)
{
    if (!s || !*s)
        return -1;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno || end == s || v < 0)
        return -1;
    long mult = 1;
    switch (*end) {
    case '\0': break;
    case 'k': case 'K': mult = 1L << 10; end++; break;
    case 'm': case 'M': mult = 1L << 20; end++; break;
    case 'g': case 'G': mult = 1L << 30; end++; break;
    default: return -1;
    }
    if (*end != '\0' || (v > 0 && mult > 1 && v > (long)(0x7fffffffffffffffL / mult)))
        return -1;
    *out = v * mult;
    return 0;
}

const char *locus_size_str(char *buf, size_t len, long v)
{
    static const char unit[] = "kMG";
    int u = -1;
    while (u < 2 && v >= 1024 && v % 1024 == 0) {
        v /= 1024;
        u++;
    }
    if (u < 0)
        snprintf(buf, len, "%ld", v);
    else
        snprintf(buf, len, "%ld%c", v, unit[u]);
    return buf;
}

int locus_tunable_long(const char *name, long *out, char *err, size_t errlen)
{
    const char *v = locus_tunable_str(name);
    if (locus_parse_size(v, out) != 0) {
        snprintf(err, errlen, "%s=%s is not a non-negative integer (suffixes k, M, G allowed)",
                 name, v);
        return -1;
    }
    return 0;
}

#define SHM_POOL_NODE_BYTES (32L << 20)

int locus_shm_pool_size(int local_ranks, long *out, char *err, size_t errlen)
{
    if (locus_tunable_long("LOCUS_SHM_POOL_SIZE", out, err, errlen) != 0)
        return -1;
    if (locus_tunable_source("LOCUS_SHM_POOL_SIZE") == LOCUS_TUNABLE_DEFAULT) {
        long share = SHM_POOL_NODE_BYTES / (local_ranks > 0 ? local_ranks : 1);
        *out = share < *out ? *out : share > *out * 4 ? *out * 4 : share;
    }
    return 0;
}

int locus_tunable_secret(const char *name)
{
    return strcmp(name, "LOCUS_JOB_KEY") == 0;
}

const char *locus_tunable_shown(const char *name)
{
    if (!locus_tunable_secret(name))
        return locus_tunable_str(name);
    return locus_tunable_source(name) == LOCUS_TUNABLE_ENV ? "(hidden)" : "";
}

void locus_tunables_print(FILE *out)
{
    int n;
    const locus_tunable_t *t = locus_tunables(&n);
    fprintf(out, "%-28s %-12s %-12s %s\n", "VARIABLE", "VALUE", "DEFAULT", "MEANING");
    for (int i = 0; i < n; i++) {
        locus_tunable_source_t src = locus_tunable_source(t[i].name);
        char val[64];
        snprintf(val, sizeof val, "%s%s", locus_tunable_shown(t[i].name),
                 src == LOCUS_TUNABLE_ENV ? "*" : src == LOCUS_TUNABLE_TUNED ? "+" : "");
        fprintf(out, "%-28s %-12s %-12s %s\n", t[i].name, val, t[i].default_val, t[i].doc);
    }
    fprintf(out, "(* = set in the environment, + = measured for this machine by `locus tune`)\n");
}
