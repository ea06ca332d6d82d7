/*
 * fe_tree.c — the front end's side of a tree of proxies
 * (LOCUS_LAUNCH_FANOUT = k): it starts the first k remote proxies, each of
 * them the next k, so a launch is O(log_k N) ssh hops deep instead of N
 * from one process, as Hydra's and PRRTE's tree launches do.
 *
 * Layout: the remote nodes in job order are the tree positions 0..m-1;
 * positions 0..k-1 are started from here, position p starts
 * k(p+1)..k(p+1)+k-1. Every message for a node below a direct proxy goes
 * into that proxy's stream as "via NODE <message>" and comes back the same
 * way (ctl.c); inner proxies combine their subtree's fences (proxy_tree.c),
 * so the front end's fences have one member per direct link.
 */
#include "frontend.h"
#include "locus_tunables.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether the launcher can start proxies from another node. */
static int tree_applies(const fe_t *fe)
{
    const launch_opts_t *o = fe->o;
    if (o->launcher_slurm)
        return 0;  /* one srun starts them all (connect_back.c) */
    return o->launcher == LAUNCHER_SSH || o->launcher == LAUNCHER_EXEC;
}

/* LOCUS_LAUNCH_FANOUT=auto: every proxy from here up to this many remote
 * nodes, a tree of this fanout from there (docs/startup.md measures it). */
#define AUTO_STAR_MAX 8
#define AUTO_FANOUT 4

/* LOCUS_LAUNCH_FANOUT: 0 (star), k >= 2, or auto; -1 with the reason printed. */
static int fanout_read(int remote)
{
    const char *s = locus_tunable_str("LOCUS_LAUNCH_FANOUT");
    if (!strcmp(s, "auto"))
        return remote > AUTO_STAR_MAX ? AUTO_FANOUT : 0;
    char *end;
    long k = strtol(s, &end, 10);
    if (*end != '\0' || end == s || k < 0 || k == 1 || k > 4096) {
        fprintf(stderr, "locusrun: LOCUS_LAUNCH_FANOUT: '%s' is not 0 (every proxy started "
                "from here), a fanout of 2 to 4096, or auto\n", s);
        return -1;
    }
    return (int)k;
}

/* Every node's ranks as runs of consecutive ranks, in one pass. */
static int runs_make(fe_t *fe)
{
    const int *node_of = fe->layout.node_of;
    int n = fe->o->nranks, nn = fe->nlinks, nruns = 0;
    fe->run_at = calloc((size_t)nn + 2, sizeof *fe->run_at);
    for (int r = 0; fe->run_at && r < n; r++) {
        if (r == 0 || node_of[r] != node_of[r - 1]) {
            fe->run_at[node_of[r] + 2]++;
            nruns++;
        }
    }
    fe->runs = malloc((size_t)(2 * nruns + 1) * sizeof *fe->runs);
    if (fe->run_at == NULL || fe->runs == NULL) {
        fprintf(stderr, "locusrun: out of memory\n");
        return -1;
    }
    for (int i = 2; i <= nn + 1; i++)
        fe->run_at[i] += fe->run_at[i - 1];
    /* run_at[n + 1] counts node n's runs as they are filled in */
    for (int r = 0; r < n; r++) {
        int *at = &fe->run_at[node_of[r] + 1];
        if (r == 0 || node_of[r] != node_of[r - 1]) {
            fe->runs[2 * *at] = r;
            fe->runs[2 * *at + 1] = 0;
            (*at)++;
        }
        fe->runs[2 * (*at - 1) + 1]++;
    }
    return 0;
}

int tree_make(fe_t *fe)
{
    int remote = 0;
    for (int i = 0; i < fe->nlinks; i++) {
        fe_link_t *l = &fe->links[i];
        l->top = i;
        l->parent = l->pos = -1;
        remote += l->how != LAUNCHER_LOCAL;
    }
    int k = fanout_read(remote);
    if (k < 0)
        return -1;
    fe->slot_of = malloc((size_t)fe->o->nranks * sizeof *fe->slot_of);
    fe->tree = malloc((size_t)(remote + 1) * sizeof *fe->tree);
    fe->direct = malloc((size_t)fe->nlinks * sizeof *fe->direct);
    if (fe->slot_of == NULL || fe->tree == NULL || fe->direct == NULL) {
        fprintf(stderr, "locusrun: out of memory\n");
        return -1;
    }
    fe->fanout = tree_applies(fe) && k >= 2 && remote > k ? k : 0;
    for (int i = 0; i < fe->nlinks; i++)
        if (fe->links[i].how != LAUNCHER_LOCAL)
            fe->tree[fe->ntree++] = i;
    for (int p = 0; fe->fanout && p < fe->ntree; p++) {
        fe_link_t *l = &fe->links[fe->tree[p]];
        l->pos = p;
        if (p >= k) {
            l->parent = fe->tree[p / k - 1];
            l->top = fe->links[l->parent].top;  /* parents come first */
        }
        long kid0 = (long)k * (p + 1);
        l->kid0 = (int)(kid0 < fe->ntree ? kid0 : fe->ntree);
        l->nkids = kid0 < fe->ntree ? (int)(fe->ntree - kid0 < k ? fe->ntree - kid0 : k) : 0;
        if (!link_direct(l))
            l->fd = -1;
    }
    for (int i = 0; i < fe->nlinks; i++) {
        fe_link_t *l = &fe->links[i];
        l->slot = link_direct(l) ? fe->ndirect : -1;
        if (link_direct(l))
            fe->direct[fe->ndirect++] = i;
    }
    for (int r = 0; r < fe->o->nranks; r++)
        fe->slot_of[r] = fe->links[fe->links[fe->layout.node_of[r]].top].slot;
    return fe->fanout ? runs_make(fe) : 0;
}

/* Calls fn for every link below l (not l itself), depth first. */
static void below_each(fe_t *fe, const fe_link_t *l, void (*fn)(fe_t *, fe_link_t *, void *),
                       void *arg)
{
    for (int q = l->kid0; q < l->kid0 + l->nkids; q++) {
        fe_link_t *d = &fe->links[fe->tree[q]];
        fn(fe, d, arg);
        below_each(fe, d, fn, arg);
    }
}

typedef struct {
    ctl_outq_t *q;
    int kid;                   /* node of the child the links are below */
} below_ctx_t;

/* "below KID NODE" and NODE's ranks as runs "subranks NODE FIRST COUNT". */
static void queue_below(fe_t *fe, fe_link_t *d, void *arg)
{
    below_ctx_t *c = arg;
    char kid[16], node[16], first[16], count[16];
    snprintf(kid, sizeof kid, "%d", c->kid);
    snprintf(node, sizeof node, "%d", d->node);
    ctl_queuel(c->q, "below", kid, node, (char *)NULL);
    for (int i = fe->run_at[d->node]; i < fe->run_at[d->node + 1]; i++) {
        snprintf(first, sizeof first, "%d", fe->runs[2 * i]);
        snprintf(count, sizeof count, "%d", fe->runs[2 * i + 1]);
        ctl_queuel(c->q, "subranks", node, first, count, (char *)NULL);
    }
}

static void queue_below_kid(fe_t *fe, fe_link_t *kid, void *arg)
{
    below_ctx_t c = { .q = arg, .kid = kid->node };
    queue_below(fe, kid, &c);
    below_each(fe, kid, queue_below, &c);
}

void tree_queue(fe_t *fe, fe_link_t *l)
{
    if (l->nkids == 0)
        return;
    char timeout[32];
    snprintf(timeout, sizeof timeout, "%g", fe->launch_timeout);
    ctl_queuel(&l->out, "launch", fe->o->launcher == LAUNCHER_SSH ? "ssh" : "exec",
               fe->proxy_path, timeout, fe->o->launcher_exec ? fe->o->launcher_exec : "",
               (char *)NULL);
    for (int q = l->kid0; q < l->kid0 + l->nkids; q++) {
        fe_link_t *kid = &fe->links[fe->tree[q]];
        char node[16];
        snprintf(node, sizeof node, "%d", kid->node);
        ctl_queuel(&l->out, "child", node, kid->host, (char *)NULL);
    }
    for (int q = l->kid0; q < l->kid0 + l->nkids; q++)
        queue_below_kid(fe, &fe->links[fe->tree[q]], &l->out);
}

void tree_route_flush(fe_t *fe)
{
    if (fe->fanout == 0)
        return;
    /* In job order, which puts a parent's messages before its children's. */
    for (int i = 0; i < fe->nlinks; i++) {
        fe_link_t *l = &fe->links[i];
        if (link_direct(l) || l->out.len == 0)
            continue;
        fe_link_t *top = &fe->links[l->top];
        if (l->gone || (top->fd < 0 && top->pid > 0))
            l->out.len = 0;  /* cannot be delivered */
        else if (ctl_outq_route(&top->out, l->node, &l->out) < 0)
            l->out.len = 0;
    }
}

typedef struct {
    void (*lost)(fe_t *fe, fe_link_t *d);
} cut_ctx_t;

static void cut_one(fe_t *fe, fe_link_t *d, void *arg)
{
    const cut_ctx_t *c = arg;
    if (d->gone)
        return;
    d->gone = d->reaped = 1;
    if (!d->done)
        c->lost(fe, d);
}

void tree_cut(fe_t *fe, fe_link_t *l, void (*lost)(fe_t *fe, fe_link_t *d))
{
    cut_ctx_t c = { lost };
    below_each(fe, l, cut_one, &c);
}

static void busy_one(fe_t *fe, fe_link_t *d, void *arg)
{
    (void)fe;
    *(int *)arg |= !d->gone && !d->escalated;
}

int tree_busy_below(fe_t *fe, const fe_link_t *l)
{
    int busy = 0;
    below_each(fe, l, busy_one, &busy);
    return busy;
}

void tree_hello(fe_t *fe, fe_link_t *l)
{
    double now = launch_now();
    for (int q = l->kid0; q < l->kid0 + l->nkids; q++)
        fe->links[fe->tree[q]].started = now;
}

void tree_free(fe_t *fe)
{
    free(fe->tree);
    free(fe->direct);
    free(fe->slot_of);
    free(fe->run_at);
    free(fe->runs);
}
