/*
 * proxy_plan.c — placement of a node's ranks, planned by the node's own
 * proxy on the topology it sees (its own cores, its own network devices:
 * inside a network namespace, the namespace's interfaces), so nodes of one
 * job may differ from each other and from the front end's machine.
 */
#include "proxy.h"
#include "locus_dial.h"
#include "locus_place.h"
#include "locus_tunables.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* ---- the launch's slot ledger (slots.c) ---- */

/* The key this job's ledger entries go under, or NULL when this proxy
 * stays out of the ledger: a spawned job (LOCUS_SLOTS_KEY) always takes
 * part, the first job of a launch up to LOCUS_SLOT_LEDGER_NODES nodes (each
 * proxy's two requests cost the front end two connections), and an
 * unbound one never. */
static const char *ledger_key(const proxy_t *px, const locus_place_request_t *req)
{
    const char *server = getenv("LOCUS_NAME_SERVER");
    if (!server || !*server || req->bind_to == LOCUS_BIND_NONE)
        return NULL;
    const char *key = getenv("LOCUS_SLOTS_KEY");
    if (key && *key)
        return key;
    long max = 64;
    (void)locus_tunable_long("LOCUS_SLOT_LEDGER_NODES", &max, NULL, 0);
    return px->nnodes <= max ? px->jobid : NULL;
}

/* How long a proxy waits, in all, for another job's hold on its node's
 * PUs to become that job's claim (the two plan at the same moment). */
#define LEDGER_WAIT_MS 2000

/* Keeps the node's ranks off the PUs other jobs of the launch are bound
 * to: the topology shrinks to the free ones when they hold the ranks,
 * else stays whole (the plan then shares PUs, as an oversubscribed one
 * does). *key becomes NULL when the ledger does not answer (nothing to
 * claim then). 0, or -1 when the topology could not be loaded again. */
static int ledger_take(proxy_t *px, const char **key, const locus_place_request_t *req,
                       char *err, size_t errlen)
{
    char *allowed = NULL, args[LOCUS_SERVICE_LINE_MAX], reply[LOCUS_SERVICE_LINE_MAX + 8];
    int per_core = px->topo->ncores > 0 ? px->topo->npus / px->topo->ncores : 1;
    long need = (long)px->nlocal * (req->cpus_per_rank > 0 ? req->cpus_per_rank : 1) *
                (per_core > 0 ? per_core : 1);
    if (hwloc_bitmap_list_asprintf(&allowed, px->topo->allowed) < 0)
        return 0;
    int n = snprintf(args, sizeof args, "%s %s %s %ld", *key, px->host, allowed, need);
    free(allowed);
    int rc = n < 0 || (size_t)n >= sizeof args ? -1 : 0;
    for (int waited = 0; rc == 0; waited += 20) {
        rc = locus_service_call("take", args, reply, sizeof reply, LOCUS_LEDGER_CONNECT_MS, err,
                                errlen);
        if (rc != 0 || strcmp(reply, "wait") != 0)
            break;
        if (waited >= LEDGER_WAIT_MS) {
            snprintf(reply, sizeof reply, "ok -");  /* the whole node */
            break;
        }
        struct timespec ms20 = { 0, 20 * 1000 * 1000 };
        nanosleep(&ms20, NULL);
    }
    if (rc != 0 || strncmp(reply, "ok ", 3) != 0) {
        *key = NULL;
        return 0;
    }
    /* Restricted only where that leaves PUs out (the ledger said there
     * are enough of them). */
    hwloc_bitmap_t free_pus = strcmp(reply + 3, "-") ? hwloc_bitmap_alloc() : NULL;
    int shrink = free_pus && hwloc_bitmap_list_sscanf(free_pus, reply + 3) == 0 &&
                 hwloc_bitmap_weight(free_pus) < hwloc_bitmap_weight(px->topo->allowed);
    hwloc_bitmap_free(free_pus);
    if (!shrink || locus_topo_restrict(px->topo, reply + 3, err, errlen) == 0)
        return 0;
    /* hwloc failed half-way: the whole topology again. */
    locus_topo_free(px->topo);
    px->topo = locus_topo_load(NULL, err, errlen);
    return px->topo ? 0 : -1;
}

/* Tells the ledger the PUs the plan binds the node's ranks to. */
static void ledger_claim(const proxy_t *px, const char *key, const locus_plan_t *plan)
{
    hwloc_bitmap_t bound = hwloc_bitmap_alloc();
    char *list = NULL, args[LOCUS_SERVICE_LINE_MAX], reply[64], err[512];
    for (int i = 0; bound && i < plan->nranks; i++)
        for (int c = 0; plan->ranks[i].bound && c < plan->ranks[i].ncpus; c++)
            hwloc_bitmap_set(bound, (unsigned)plan->ranks[i].cpus[c]);
    if (bound && (hwloc_bitmap_iszero(bound) ? (list = strdup("-")) != NULL
                                             : hwloc_bitmap_list_asprintf(&list, bound) >= 0)) {
        int n = snprintf(args, sizeof args, "%s %s %s", key, px->host, list);
        if (n > 0 && (size_t)n < sizeof args)
            (void)locus_service_call("claim", args, reply, sizeof reply,
                                     LOCUS_LEDGER_CONNECT_MS, err, sizeof err);
    }
    free(list);
    hwloc_bitmap_free(bound);
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
    const char *key = ledger_key(px, &req);
    if (key && ledger_take(px, &key, &req, err, sizeof err) < 0) {
        proxy_fail(px, NULL, 1, "%s: cannot load this node's topology: %s", px->host, err);
        return -1;
    }
    locus_plan_t plan;
    if (locus_plan_make(px->topo, &req, &plan, err, sizeof err) < 0) {
        if (px->nnodes > 1)
            proxy_fail(px, NULL, 2, "%s: placement: %s", px->host, err);
        else
            proxy_fail(px, NULL, 2, "placement: %s", err);
        return -1;
    }
    if (key)
        ledger_claim(px, key, &plan);
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
