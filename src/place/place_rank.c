/* One rank's cores or PUs, its binding, memory nodes and OpenMP
 * environment: the part of the engine that walks the machine's cores. */
#include <stdlib.h>
#include <string.h>

#include "place_internal.h"

static int in_region(const place_ctx_t *x, int level, int d, int core)
{
    if (!x->t->cores[core].nallowed)
        return 0;
    if (level == 0)
        return x->dom[d].in[core];
    if (level == 1)
        return x->dom[d].package >= 0 && x->t->cores[core].package == x->dom[d].package;
    return 1;
}

/* Least-used core of the domain. The domain widens (to its package, then
 * the machine) only to avoid sharing a core while another one is free;
 * once every core is busy, ranks share inside their own domain. */
static int core_pick(place_ctx_t *x, int d, int stamp)
{
    const locus_topo_t *t = x->t;
    int free_core = 0;
    for (int c = 0; c < t->ncores; c++)
        free_core |= t->cores[c].nallowed && x->mine[c] != stamp && x->core_use[c] == 0;
    int fallback = -1;
    for (int level = 0; level < 3; level++) {
        int best = -1;
        for (int c = 0; c < t->ncores; c++)
            if (in_region(x, level, d, c) && x->mine[c] != stamp
                && (best < 0 || x->core_use[c] < x->core_use[best]))
                best = c;
        if (best >= 0 && (x->core_use[best] == 0 || !free_core))
            return best;
        if (fallback < 0)
            fallback = best;
    }
    return fallback;
}

/* PU order: least used, then on the least shared core, then on a core
 * this rank already has (threads of one rank stay together). */
static int pu_better(const place_ctx_t *x, int stamp, int p, int q)
{
    if (q < 0)
        return 1;
    if (x->pu_use[p] != x->pu_use[q])
        return x->pu_use[p] < x->pu_use[q];
    int cp = x->t->pus[p].core, cq = x->t->pus[q].core;
    if (x->core_use[cp] != x->core_use[cq])
        return x->core_use[cp] < x->core_use[cq];
    int mp = x->mine[x->t->npus + cp] == stamp, mq = x->mine[x->t->npus + cq] == stamp;
    return mp > mq;
}

/* The domain widens to avoid stacking on a PU while a PU is free, or
 * sharing a core while a core is free. */
static int pu_pick(place_ctx_t *x, int d, int stamp)
{
    const locus_topo_t *t = x->t;
    int free_pu = 0, free_core = 0;
    for (int p = 0; p < t->npus; p++)
        if (t->pus[p].allowed && x->mine[p] != stamp && x->pu_use[p] == 0) {
            free_pu = 1;
            free_core |= x->core_use[t->pus[p].core] == 0;
        }
    int fallback = -1;
    for (int level = 0; level < 3; level++) {
        int best = -1;
        for (int p = 0; p < t->npus; p++)
            if (t->pus[p].allowed && in_region(x, level, d, t->pus[p].core)
                && x->mine[p] != stamp && pu_better(x, stamp, p, best))
                best = p;
        if (best < 0)
            continue;
        int shares = x->core_use[t->pus[best].core] > 0;
        if (!(x->pu_use[best] > 0 && free_pu) && !(shares && free_core))
            return best;
        if (fallback < 0)
            fallback = best;
    }
    return fallback;
}

/* The key a --bind-to policy widens a picked core to (-1: the core alone). */
static int bind_key(const place_ctx_t *x, int c)
{
    switch (x->bind) {
    case LOCUS_BIND_NUMA: return x->t->cores[c].numa;
    case LOCUS_BIND_SOCKET: return x->t->cores[c].package;
    case LOCUS_BIND_L3CACHE: return x->t->cores[c].l3;
    default: return -1;
    }
}

static void core_add_pus(const locus_topo_t *t, int c, hwloc_bitmap_t set)
{
    const locus_topo_core_t *co = &t->cores[c];
    for (int p = 0; p < co->npus; p++)
        if (t->pus[co->first_pu + p].allowed)
            hwloc_bitmap_set(set, (unsigned)t->pus[co->first_pu + p].os);
}

static int *bitmap_to_array(hwloc_const_bitmap_t set, int *n)
{
    int w = hwloc_bitmap_weight(set);
    int *a = malloc((size_t)(w > 0 ? w : 1) * sizeof *a);
    if (!a)
        return NULL;
    unsigned i;
    *n = 0;
    hwloc_bitmap_foreach_begin(i, set) {
        a[(*n)++] = (int)i;
    } hwloc_bitmap_foreach_end();
    return a;
}

/* Memory goes where the CPUs are; a rank on CPUs whose node forbids
 * memory (a cpuset with mems elsewhere) gets every allowed CPU node. */
static int rank_numa(place_ctx_t *x, locus_rank_plan_t *rp, hwloc_const_bitmap_t cpus)
{
    const locus_topo_t *t = x->t;
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
    if (!nodes)
        return -1;
    if (x->req->mem_on >= 0)
        hwloc_bitmap_set(nodes, (unsigned)x->req->mem_on);
    for (int pass = 0; pass < 2 && hwloc_bitmap_iszero(nodes); pass++)
        for (int i = 0; i < t->nnumas; i++)
            if (t->numas[i].has_cpus && t->numas[i].allowed
                && (pass == 1 || hwloc_bitmap_intersects(t->numas[i].cpuset, cpus)))
                hwloc_bitmap_set(nodes, (unsigned)t->numas[i].os);
    for (int i = 0; i < t->nnumas && hwloc_bitmap_iszero(nodes); i++)
        if (t->numas[i].allowed)
            hwloc_bitmap_set(nodes, (unsigned)t->numas[i].os);
    rp->numa = bitmap_to_array(nodes, &rp->nnuma);
    hwloc_bitmap_free(nodes);
    return rp->numa ? 0 : -1;
}

/* Strings grow by doubling; OMP_PLACES for a wide rank is long. */
typedef struct { char *s; size_t len, cap; } place_str_t;

static int str_add(place_str_t *b, const char *fmt, int v)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, fmt, v);
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 128;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s)
            return -1;
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->len, tmp, (size_t)n + 1);
    b->len += (size_t)n;
    return 0;
}

/* OMP_PLACES: one place per core of the rank (per PU when it took PUs). */
static int rank_omp_env(place_ctx_t *x, locus_rank_plan_t *rp, hwloc_const_bitmap_t cpus)
{
    const locus_topo_t *t = x->t;
    char num[16];
    snprintf(num, sizeof num, "%d", x->req->cpus_per_rank);
    if (place_env_add(rp, "OMP_NUM_THREADS", num) < 0)
        return -1;
    if (!rp->bound)
        return 0;
    place_str_t b = {0};
    int nplaces = 0, rc = 0;
    for (int c = 0; c < t->ncores && rc == 0; c++) {
        const locus_topo_core_t *co = &t->cores[c];
        int opened = 0;
        for (int p = 0; p < co->npus && rc == 0; p++) {
            int os = t->pus[co->first_pu + p].os;
            if (!t->pus[co->first_pu + p].allowed || !hwloc_bitmap_isset(cpus, (unsigned)os))
                continue;
            if (x->unit_pu && x->bind == LOCUS_BIND_PU)
                rc = str_add(&b, nplaces++ ? ",{%d}" : "{%d}", os);
            else if (!opened++)
                rc = str_add(&b, nplaces++ ? ",{%d" : "{%d", os);
            else
                rc = str_add(&b, ",%d", os);
        }
        if (opened && rc == 0)
            rc = str_add(&b, "}", 0);
    }
    if (rc == 0)
        rc = place_env_add(rp, "OMP_PLACES", b.s ? b.s : "");
    free(b.s);
    if (rc == 0)
        rc = place_env_add(rp, "OMP_PROC_BIND", nplaces == x->req->cpus_per_rank ? "close" : "spread");
    return rc;
}

int place_rank_make(place_ctx_t *x, int r)
{
    const locus_topo_t *t = x->t;
    locus_rank_plan_t *rp = &x->plan->ranks[r];
    int d = x->rank_dom[r], stamp = r + 1;
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
    if (!cpus)
        return -1;
    rp->rank = r;
    for (int k = 0; k < x->T; k++) {
        int i = x->unit_pu ? pu_pick(x, d, stamp) : core_pick(x, d, stamp);
        if (i < 0) {
            hwloc_bitmap_free(cpus);
            return -1;
        }
        x->pick[k] = i;
        x->mine[i] = stamp;
        if (x->unit_pu)
            x->mine[t->npus + t->pus[i].core] = stamp;
    }
    /* Home: where its first core inside its own domain is (a rank may
     * also take a free core elsewhere rather than share one). */
    int first_core = x->unit_pu ? t->pus[x->pick[0]].core : x->pick[0];
    for (int k = x->T - 1; k >= 0; k--) {
        int c = x->unit_pu ? t->pus[x->pick[k]].core : x->pick[k];
        if (x->dom[d].in[c])
            first_core = c;
    }
    x->home[r] = t->cores[first_core].numa;
    rp->home_numa = x->home[r] >= 0 ? t->numas[x->home[r]].os : -1;
    for (int k = 0; k < x->T; k++) {
        int i = x->pick[k];
        if (x->unit_pu) {
            x->pu_use[i]++;
            hwloc_bitmap_set(cpus, (unsigned)t->pus[i].os);
        } else {
            x->core_use[i]++;
            core_add_pus(t, i, cpus);
        }
    }
    if (x->unit_pu)
        for (int c = 0; c < t->ncores; c++)
            x->core_use[c] += x->mine[t->npus + c] == stamp;
    /* Widen to the object --bind-to names, or to everything for none. */
    for (int k = 0; k < x->T; k++) {
        int c0 = x->unit_pu ? t->pus[x->pick[k]].core : x->pick[k];
        int key = bind_key(x, c0);
        for (int c = 0; key >= 0 && c < t->ncores; c++)
            if (bind_key(x, c) == key)
                core_add_pus(t, c, cpus);
    }
    rp->bound = x->bind != LOCUS_BIND_NONE;
    if (!rp->bound)
        hwloc_bitmap_copy(cpus, t->allowed);
    int rc = -1;
    rp->cpus = bitmap_to_array(cpus, &rp->ncpus);
    if (rp->cpus && rank_numa(x, rp, cpus) == 0 && rank_omp_env(x, rp, cpus) == 0)
        rc = 0;
    hwloc_bitmap_free(cpus);
    return rc;
}

