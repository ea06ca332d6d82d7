/*
 * fence.c — the front end's half of PMI barriers that span nodes. Each
 * proxy completes a barrier among its own ranks, sends the pairs its ranks
 * put since its last fence, then `fence GROUP`; when every node of the
 * group has fenced, every pair still pending goes to every node but the
 * one it came from (Hydra's keyval_cache broadcast), then `barrier_out`.
 * So after any barrier a proxy holds every pair put job-wide before it and
 * answers gets from its own cache.
 *
 * An inner proxy of a tree does the same for its subtree (proxy_tree.c):
 * its nodes are itself and its children, pairs from above have origin -1,
 * and what its subtree puts also goes up once (relay_up, fence_take_up).
 */
#include "fence.h"
#include "pmi_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fence_init(fe_fences_t *f, int nnodes, int size, const int *node_of, size_t bytes_max,
                int fences_max)
{
    memset(f, 0, sizeof *f);
    f->nnodes = nnodes;
    f->size = size;
    f->node_of = node_of;
    f->bytes_max = bytes_max;
    f->fences_max = fences_max;
}

static void fence_drop(fe_fences_t *f, int i)
{
    free(f->fences[i].group);
    free(f->fences[i].member);
    free(f->fences[i].in);
    f->fences[i] = f->fences[--f->nfences];
}

/* Drops the pairs sent down everywhere and, relaying up, sent up too. */
static void pairs_compact(fe_fences_t *f)
{
    size_t k = 0;
    for (size_t i = 0; i < f->npairs; i++) {
        fe_pair_t *p = &f->pairs[i];
        if (p->sent && !p->up) {
            f->bytes -= strlen(p->key) + strlen(p->val) + 2;
            free(p->key);
            free(p->val);
        } else {
            f->pairs[k++] = *p;
        }
    }
    f->npairs = k;
}

static void pairs_clear(fe_fences_t *f)
{
    for (size_t i = 0; i < f->npairs; i++) {
        free(f->pairs[i].key);
        free(f->pairs[i].val);
    }
    f->npairs = 0;
    f->bytes = 0;
}

void fence_free(fe_fences_t *f)
{
    while (f->nfences > 0)
        fence_drop(f, f->nfences - 1);
    free(f->fences);
    pairs_clear(f);
    free(f->pairs);
    memset(f, 0, sizeof *f);
}

int fence_pair(fe_fences_t *f, int node, const char *key, const char *val)
{
    size_t len = strlen(key) + strlen(val) + 2;
    if (f->bytes + len > f->bytes_max)
        return -1;
    f->pairs_in++;
    f->pair_bytes_in += len;
    f->node_pairs_in += pmi_wire_node_key(key);
    if (f->npairs == f->cap) {
        size_t ncap = f->cap ? 2 * f->cap : 64;
        fe_pair_t *np = realloc(f->pairs, ncap * sizeof *np);
        if (np == NULL)
            return -1;
        f->pairs = np;
        f->cap = ncap;
    }
    fe_pair_t *p = &f->pairs[f->npairs];
    p->key = strdup(key);
    p->val = strdup(val);
    p->origin = node;
    p->up = f->relay_up && node >= 0;
    p->sent = 0;
    if (p->key == NULL || p->val == NULL) {
        free(p->key);
        free(p->val);
        return -1;
    }
    f->npairs++;
    f->bytes += len;
    return 0;
}

/* Marks the nodes of a group's member list; -1 when it is not a list of
 * ranks of this job. WORLD is every node with ranks; NODE groups never
 * leave a node. */
static int group_nodes(const fe_fences_t *f, const char *group, unsigned char *member)
{
    const char *colon = strrchr(group, ':');
    if (colon == NULL || colon == group)
        return -1;
    size_t len = (size_t)(colon - group);
    int n = 0;
    if (len == 5 && strncmp(group, "WORLD", 5) == 0) {
        /* Every node with ranks: in a tree only the direct links (or a
         * proxy and its children) are nodes here. */
        for (int r = 0; r < f->size; r++) {
            int node = f->node_of[r];
            if (node >= 0 && !member[node]) {
                member[node] = 1;
                n++;
            }
        }
        return n;
    }
    for (size_t i = 0; i < len;) {
        long r = 0;
        size_t d = i;
        while (i < len && group[i] >= '0' && group[i] <= '9' && r < 10000000)
            r = r * 10 + (group[i++] - '0');
        if (i == d || (i < len && group[i] != ',') || r >= f->size)
            return -1;
        i++;
        int node = f->node_of[r];
        if (node < 0)
            continue;  /* not a rank of this subtree */
        n += !member[node];
        member[node] = 1;
    }
    return n;
}

int fence_arrive(fe_fences_t *f, int node, const char *group, char *err, size_t errlen)
{
    fe_fence_t *fc = NULL;
    for (int i = 0; i < f->nfences; i++)
        if (strcmp(f->fences[i].group, group) == 0)
            fc = &f->fences[i];
    if (fc == NULL) {
        if (f->nfences == f->fences_max) {
            snprintf(err, errlen, "more than %d barriers outstanding at once", f->fences_max);
            return -1;
        }
        if (f->nfences == f->fences_cap) {
            int ncap = f->fences_cap ? 2 * f->fences_cap : 8;
            fe_fence_t *nf = realloc(f->fences, (size_t)ncap * sizeof *nf);
            if (nf == NULL) {
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            f->fences = nf;
            f->fences_cap = ncap;
        }
        fc = &f->fences[f->nfences];
        memset(fc, 0, sizeof *fc);
        fc->group = strdup(group);
        fc->member = calloc((size_t)f->nnodes, 1);
        fc->in = calloc((size_t)f->nnodes, 1);
        f->nfences++;
        fc->expected = fc->group && fc->member && fc->in
                           ? group_nodes(f, group, fc->member) : -1;
        if (fc->expected <= 0) {
            fence_drop(f, f->nfences - 1);
            snprintf(err, errlen, "barrier group '%s' is not a group of this job's ranks", group);
            return -1;
        }
    }
    if (!fc->member[node] || fc->in[node]) {
        snprintf(err, errlen, "barrier '%s': %s", group,
                 fc->in[node] ? "fenced twice" : "no rank of this node is in the group");
        return -1;
    }
    fc->in[node] = 1;
    fc->arrived++;
    return fc->arrived == fc->expected;
}

void fence_complete(fe_fences_t *f, const char *group,
                    void (*send)(void *ctx, int node, const char *verb, const char *w1,
                                 const char *w2),
                    void *ctx)
{
    int idx = -1;
    for (int i = 0; i < f->nfences; i++)
        if (strcmp(f->fences[i].group, group) == 0)
            idx = i;
    if (idx < 0)
        return;
    for (int node = 0; node < f->nnodes; node++)
        for (size_t i = 0; i < f->npairs; i++)
            if (f->pairs[i].origin != node && !f->pairs[i].sent)
                send(ctx, node, "kvs", f->pairs[i].key, f->pairs[i].val);
    for (size_t i = 0; i < f->npairs; i++)
        f->pairs[i].sent = 1;
    pairs_compact(f);
    fe_fence_t *fc = &f->fences[idx];
    for (int node = 0; node < f->nnodes; node++)
        if (fc->member[node])
            send(ctx, node, "barrier_out", fc->group, NULL);
    fence_drop(f, idx);
}

void fence_take_up(fe_fences_t *f, void (*send)(void *ctx, const char *key, const char *val),
                   void *ctx)
{
    for (size_t i = 0; i < f->npairs; i++) {
        if (f->pairs[i].up) {
            send(ctx, f->pairs[i].key, f->pairs[i].val);
            f->pairs[i].up = 0;
        }
    }
    pairs_compact(f);
}
