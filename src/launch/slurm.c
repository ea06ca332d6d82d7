/*
 * slurm.c — the nodes of a Slurm allocation, for locusrun run inside one
 * (sbatch, salloc): SLURM_JOB_NODELIST in Slurm's hostlist syntax
 * ("n[0-3,7],gpu[01-02]") and SLURM_TASKS_PER_NODE ("2(x3),1") become a
 * host list with slots, as Open MPI's and Hydra's Slurm support read them.
 */
#include "hosts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add_host(launch_hosts_t *h, const char *name, int slots, char *err, size_t errlen)
{
    if (!hosts_name_ok(name)) {
        snprintf(err, errlen, "SLURM_JOB_NODELIST: '%.60s' is not a host name", name);
        return -1;
    }
    if (hosts_add(h, name, slots) < 0) {
        snprintf(err, errlen, "SLURM_TASKS_PER_NODE: too many slots on %.60s", name);
        return -1;
    }
    return 0;
}

/*
 * Expands one entry "pre[a-b,c]post..." (brackets may repeat) into names,
 * calling add for each. Ranges keep the zero padding of their first bound.
 */
static int expand(const char *entry, size_t len, char *out, size_t at,
                  int (*add)(void *ctx, const char *name), void *ctx)
{
    const char *open = memchr(entry, '[', len);
    if (open == NULL) {
        if (at + len > LAUNCH_HOST_MAX)
            return -1;
        memcpy(out + at, entry, len);
        out[at + len] = '\0';
        return add(ctx, out);
    }
    const char *close = memchr(open, ']', len - (size_t)(open - entry));
    size_t pre = (size_t)(open - entry);
    if (close == NULL || at + pre > LAUNCH_HOST_MAX)
        return -1;
    memcpy(out + at, entry, pre);
    const char *rest = close + 1;
    size_t restlen = len - (size_t)(rest - entry);
    for (const char *r = open + 1; r < close;) {
        const char *comma = memchr(r, ',', (size_t)(close - r));
        const char *end = comma ? comma : close;
        char *e1;
        long lo = strtol(r, &e1, 10), hi = lo;
        if (e1 == r || e1 > end)
            return -1;
        int width = (int)(e1 - r);
        if (*e1 == '-') {
            char *e2;
            hi = strtol(e1 + 1, &e2, 10);
            if (e2 != end || hi < lo || hi - lo > 100000)
                return -1;
        } else if (e1 != end) {
            return -1;
        }
        for (long v = lo; v <= hi; v++) {
            int n = snprintf(out + at + pre, LAUNCH_HOST_MAX + 1 - at - pre, "%0*ld", width, v);
            if (n < 0 || at + pre + (size_t)n > LAUNCH_HOST_MAX ||
                expand(rest, restlen, out, at + pre + (size_t)n, add, ctx) < 0)
                return -1;
        }
        r = end + 1;
    }
    return 0;
}

typedef struct {
    char (*names)[LAUNCH_HOST_MAX + 1];
    int n, cap;
} name_list_t;

static int collect(void *ctx, const char *name)
{
    name_list_t *l = ctx;
    if (l->n == l->cap) {
        int ncap = l->cap ? 2 * l->cap : 16;
        if (ncap > 100000)
            return -1;
        void *nn = realloc(l->names, (size_t)ncap * sizeof *l->names);
        if (!nn)
            return -1;
        l->names = nn;
        l->cap = ncap;
    }
    snprintf(l->names[l->n++], LAUNCH_HOST_MAX + 1, "%s", name);
    return 0;
}

/* The next count of "2(x3),1": *count and *repeat; -1 when malformed. */
static int next_tasks(const char **p, long *count, long *repeat)
{
    char *end;
    *count = strtol(*p, &end, 10);
    *repeat = 1;
    if (end == *p || *count < 1 || *count > 100000) /* locusrun's slots bound */
        return -1;
    if (end[0] == '(' && end[1] == 'x') {
        const char *r = end + 2;
        *repeat = strtol(r, &end, 10);
        if (end == r || *end != ')' || *repeat < 1)
            return -1;
        end++;
    }
    if (*end == ',')
        end++;
    else if (*end != '\0')
        return -1;
    *p = end;
    return 0;
}

int hosts_from_slurm(launch_hosts_t *h, const char *nodelist, const char *tasks, char *err,
                     size_t errlen)
{
    name_list_t l = { NULL, 0, 0 };
    char name[LAUNCH_HOST_MAX + 1];
    int rc = 0;
    for (const char *p = nodelist; *p && rc == 0;) {
        /* An entry ends at a comma outside brackets. */
        const char *q = p;
        int depth = 0;
        while (*q && (depth > 0 || *q != ',')) {
            depth += (*q == '[') - (*q == ']');
            q++;
        }
        if (q == p || depth != 0 || expand(p, (size_t)(q - p), name, 0, collect, &l) < 0)
            rc = -1;
        p = *q ? q + 1 : q;
    }
    if (rc != 0 || l.n == 0) {
        snprintf(err, errlen, "SLURM_JOB_NODELIST=%.60s: not a Slurm host list", nodelist);
        free(l.names);
        return -1;
    }
    const char *t = tasks && *tasks ? tasks : NULL;
    long count = 1, repeat = 0;
    for (int i = 0; i < l.n && rc == 0; i++) {
        if (t && repeat == 0 && (*t == '\0' || next_tasks(&t, &count, &repeat) < 0)) {
            snprintf(err, errlen, "SLURM_TASKS_PER_NODE=%.60s: not counts like 2(x3),1", tasks);
            rc = -1;
            break;
        }
        repeat--;
        rc = add_host(h, l.names[i], (int)count, err, errlen);
    }
    if (rc == 0 && t && (repeat > 0 || *t)) {
        snprintf(err, errlen, "SLURM_TASKS_PER_NODE=%.60s: counts for more nodes than "
                 "SLURM_JOB_NODELIST's %d", tasks, l.n);
        rc = -1;
    }
    free(l.names);
    return rc;
}
