/* Plans: their memory, their environment, and how they are shown. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "place_internal.h"

int place_warn(locus_plan_t *plan, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char **w = realloc(plan->warnings, (size_t)(plan->nwarnings + 1) * sizeof *w);
    if (!w)
        return -1;
    plan->warnings = w;
    if (!(w[plan->nwarnings] = strdup(buf)))
        return -1;
    plan->nwarnings++;
    return 0;
}

int place_env_add(locus_rank_plan_t *rp, const char *name, const char *value)
{
    locus_place_env_t *e = realloc(rp->env, (size_t)(rp->nenv + 1) * sizeof *e);
    if (!e)
        return -1;
    rp->env = e;
    e[rp->nenv].name = strdup(name);
    e[rp->nenv].value = strdup(value);
    if (!e[rp->nenv].name || !e[rp->nenv].value) {
        free(e[rp->nenv].name);
        free(e[rp->nenv].value);
        return -1;
    }
    rp->nenv++;
    return 0;
}

void locus_plan_free(locus_plan_t *plan)
{
    if (!plan)
        return;
    for (int r = 0; plan->ranks && r < plan->nranks; r++) {
        locus_rank_plan_t *rp = &plan->ranks[r];
        free(rp->cpus);
        free(rp->numa);
        free(rp->rails);
        for (int k = 0; k < rp->nenv; k++) {
            free(rp->env[k].name);
            free(rp->env[k].value);
        }
        free(rp->env);
    }
    free(plan->ranks);
    for (int i = 0; i < plan->nwarnings; i++)
        free(plan->warnings[i]);
    free(plan->warnings);
    memset(plan, 0, sizeof *plan);
}

const char *locus_rank_plan_env(const locus_rank_plan_t *rp, const char *name)
{
    for (int k = 0; k < rp->nenv; k++)
        if (!strcmp(rp->env[k].name, name))
            return rp->env[k].value;
    return NULL;
}

/* An ascending int list in list syntax ("0-3,8") into buf. */
static void list_format(const int *v, int n, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used + 1 < len; ) {
        int j = i;
        while (j + 1 < n && v[j + 1] == v[j] + 1)
            j++;
        int w = j > i ? snprintf(buf + used, len - used, "%s%d-%d", i ? "," : "", v[i], v[j])
                      : snprintf(buf + used, len - used, "%s%d", i ? "," : "", v[i]);
        used += (size_t)w;
        i = j + 1;
    }
    if (used >= len && len > 4)
        memcpy(buf + len - 4, "...", 4);
}

static void json_ints(FILE *out, const int *v, int n)
{
    fputc('[', out);
    for (int i = 0; i < n; i++)
        fprintf(out, i ? ",%d" : "%d", v[i]);
    fputc(']', out);
}

static void json_str_or_null(FILE *out, const char *s)
{
    if (s[0])
        locus_topo_json_string(out, s);
    else
        fputs("null", out);
}

static void json_dev(FILE *out, int has, const locus_place_dev_t *d, int nic)
{
    if (!has) {
        fputs("null", out);
        return;
    }
    fputs("{\"name\":", out);
    locus_topo_json_string(out, d->name);
    fputs(",\"pci\":", out);
    json_str_or_null(out, d->pci);
    if (nic) {
        fputs(",\"netdev\":", out);
        json_str_or_null(out, d->netdev);
    }
    fputs(",\"osdevs\":[", out);
    for (int k = 0; k < d->nosdevs; k++) {
        if (k)
            fputc(',', out);
        locus_topo_json_string(out, d->osdevs[k]);
    }
    fprintf(out, "],\"index\":%d}", d->index);
}

void locus_plan_write_json(const locus_plan_t *plan, const locus_topo_t *topo, FILE *out)
{
    fputs("{\"host\":", out);
    locus_topo_json_string(out, locus_topo_hostname(topo));
    fputs(",\"policy\":", out);
    locus_topo_json_string(out, plan->policy);
    fprintf(out, ",\"nranks\":%d,\"ranks\":[", plan->nranks);
    for (int r = 0; r < plan->nranks; r++) {
        const locus_rank_plan_t *rp = &plan->ranks[r];
        fprintf(out, "%s\n  {\"rank\":%d,\"bound\":%s,\"cpus\":", r ? "," : "", rp->rank,
                rp->bound ? "true" : "false");
        json_ints(out, rp->cpus, rp->ncpus);
        fputs(",\"numa\":", out);
        json_ints(out, rp->numa, rp->nnuma);
        fputs(",\"home_numa\":", out);
        if (rp->home_numa >= 0)
            fprintf(out, "%d", rp->home_numa);
        else
            fputs("null", out);
        fputs(",\"nic\":", out);
        json_dev(out, rp->has_nic, &rp->nic, 1);
        fputs(",\"rails\":[", out);
        for (int k = 0; k < rp->nrails; k++) {
            if (k)
                fputc(',', out);
            json_dev(out, 1, &rp->rails[k], 1);
        }
        fputs("],\"gpu\":", out);
        json_dev(out, rp->has_gpu, &rp->gpu, 0);
        fputs(",\"env\":{", out);
        for (int k = 0; k < rp->nenv; k++) {
            if (k)
                fputc(',', out);
            locus_topo_json_string(out, rp->env[k].name);
            fputc(':', out);
            locus_topo_json_string(out, rp->env[k].value);
        }
        fputs("}}", out);
    }
    fputs("\n],\"warnings\":[", out);
    for (int i = 0; i < plan->nwarnings; i++) {
        if (i)
            fputc(',', out);
        locus_topo_json_string(out, plan->warnings[i]);
    }
    fputs("]}\n", out);
}

/* The rank's NICs, nearest first ("mlx5_0,mlx5_1"), or "-". */
static void nics_format(const locus_rank_plan_t *rp, char *buf, size_t len)
{
    size_t used = 0;
    snprintf(buf, len, "-");
    for (int k = 0; k < rp->nrails && used < len; k++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", k ? "," : "", rp->rails[k].name);
}

void locus_plan_write_table(const locus_plan_t *plan, const locus_topo_t *topo, FILE *out)
{
    const char *host = locus_topo_hostname(topo);
    fprintf(out, "# %s: %d rank%s, %s\n", host[0] ? host : "unknown", plan->nranks,
            plan->nranks == 1 ? "" : "s", plan->policy);
    fprintf(out, "%-6s %-24s %-6s %-10s %s\n", "rank", "PUs", "NUMA", "NIC", "GPU");
    for (int r = 0; r < plan->nranks; r++) {
        const locus_rank_plan_t *rp = &plan->ranks[r];
        char cpus[4096], numa[256], nics[1024];
        list_format(rp->cpus, rp->ncpus, cpus, sizeof cpus);
        list_format(rp->numa, rp->nnuma, numa, sizeof numa);
        nics_format(rp, nics, sizeof nics);
        if (!rp->bound)
            snprintf(cpus, sizeof cpus, "unbound");
        fprintf(out, "%-6d %-24s %-6s %-10s %s\n", rp->rank, cpus, numa, nics,
                rp->has_gpu ? rp->gpu.name : "-");
    }
}

void locus_rank_plan_format(const locus_rank_plan_t *rp, const char *host,
                            char *buf, size_t buflen)
{
    char cpus[1024], numa[256], nics[1024];
    list_format(rp->cpus, rp->ncpus, cpus, sizeof cpus);
    list_format(rp->numa, rp->nnuma, numa, sizeof numa);
    nics_format(rp, nics, sizeof nics);
    snprintf(buf, buflen, "[%s] rank %d %s PUs %s, memory on NUMA %s, NIC %s, GPU %s",
             host && host[0] ? host : "localhost", rp->rank,
             rp->bound ? "bound to" : "not bound, may run on", cpus, numa,
             rp->has_nic ? nics : "none", rp->has_gpu ? rp->gpu.name : "none");
}
