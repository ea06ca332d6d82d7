/*
 * proxy_plan.c — placement of a node's ranks, planned by the node's own
 * proxy on the topology it sees (its own cores, its own network devices:
 * inside a network namespace, the namespace's interfaces), so nodes of one
 * job may differ from each other and from the front end's machine.
 */
#include "proxy.h"
#include "locus_place.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void note(proxy_t *px, const char *line)
{
    ctl_sendl(px->ctl_out, "note", line, (char *)NULL);
}

static const char *value_in(char *const *kv, int n, const char *name, size_t len)
{
    for (int i = n - 1; i >= 0; i--)
        if (strncmp(kv[i], name, len) == 0 && kv[i][len] == '=')
            return kv[i] + len + 1;
    return NULL;
}

/* The user's value for a variable the plan sets, NULL when none: an
 * OpenMP variable from locusrun's environment (uenv), the last -x VAR=VAL
 * (env), or a LOCUS_* tunable set where locusrun runs (applied to this
 * proxy's environment by the tun message). An explicit choice (a thread
 * count, the interfaces in LOCUS_NET_IFACES) is never silently replaced. */
static const char *user_value(const proxy_t *px, const char *name)
{
    size_t n = strlen(name);
    const char *v = value_in(px->uenv, px->nuenv, name, n);
    if (!v)
        v = value_in(px->env, px->nenv, name, n);
    if (!v && strncmp(name, "LOCUS_", 6) == 0)
        v = getenv(name);
    return v;
}

static int *copy_ints(const int *v, int n)
{
    int *c = malloc((size_t)(n > 0 ? n : 1) * sizeof *c);
    if (c != NULL && n > 0)
        memcpy(c, v, (size_t)n * sizeof *c);
    return c;
}

/* Takes rank p's binding and environment from its plan. */
static int rank_take_plan(proxy_t *px, prank_t *p, const locus_rank_plan_t *rp)
{
    p->bound = rp->bound;
    p->ncpus = rp->ncpus;
    p->nnuma = rp->nnuma;
    p->cpus = copy_ints(rp->cpus, rp->ncpus);
    p->numa = copy_ints(rp->numa, rp->nnuma);
    p->env = calloc((size_t)rp->nenv + 2, sizeof *p->env);
    if (p->cpus == NULL || p->numa == NULL || p->env == NULL)
        return -1;
    for (int e = 0; e < rp->nenv; e++) {
        const char *val = user_value(px, rp->env[e].name);
        if (val == NULL)
            val = rp->env[e].value;
        size_t len = strlen(rp->env[e].name) + strlen(val) + 2;
        if ((p->env[e] = malloc(len)) == NULL)
            return -1;
        snprintf(p->env[e], len, "%s=%s", rp->env[e].name, val);
        p->nenv++;
    }
    /* --report-bindings: the rank names its network once it has one, under
     * the node's name of the binding lines. */
    if (px->report) {
        size_t len = strlen(px->host) + sizeof "LOCUS_REPORT_BINDINGS=";
        if ((p->env[p->nenv] = malloc(len)) == NULL)
            return -1;
        snprintf(p->env[p->nenv++], len, "LOCUS_REPORT_BINDINGS=%s", px->host);
    }
    return 0;
}

int proxy_plan(proxy_t *px)
{
    char err[512], line[1200];
    px->topo = locus_topo_load(NULL, err, sizeof err);
    if (px->topo == NULL) {
        proxy_fail(px, NULL, 1, "%s: cannot load this node's topology: %s", px->host, err);
        return -1;
    }
    locus_place_request_t req;
    locus_place_request_init(&req);
    req.nranks = px->nlocal;
    for (int i = 0; i < px->nplace;) {
        const char *val = i + 1 < px->nplace ? px->place[i + 1] : NULL;
        int used = locus_place_opt_parse(&req, px->place[i], val, err, sizeof err);
        if (used <= 0) {
            proxy_fail(px, NULL, 2, "%s: %s", px->host, used < 0 ? err : "bad placement option");
            return -1;
        }
        i += used;
    }
    locus_plan_t plan;
    if (locus_plan_make(px->topo, &req, &plan, err, sizeof err) < 0) {
        if (px->nnodes > 1)
            proxy_fail(px, NULL, 2, "%s: placement: %s", px->host, err);
        else
            proxy_fail(px, NULL, 2, "placement: %s", err);
        return -1;
    }
    for (int w = 0; w < plan.nwarnings; w++) {
        snprintf(line, sizeof line, "locusrun: warning: %s%s%s", px->nnodes > 1 ? px->host : "",
                 px->nnodes > 1 ? ": " : "", plan.warnings[w]);
        note(px, line);
    }
    int rc = 0;
    for (int i = 0; i < px->nlocal && rc == 0; i++) {
        prank_t *p = &px->ranks[i];
        locus_rank_plan_t *rp = &plan.ranks[p->local];
        rc = rank_take_plan(px, p, rp);
        if (px->report) {
            rp->rank = p->rank;
            locus_rank_plan_format(rp, px->host, line, sizeof line);
            note(px, line);
        }
    }
    locus_plan_free(&plan);
    if (rc < 0)
        proxy_fail(px, NULL, 1, "%s: out of memory", px->host);
    return rc;
}
