/* The placement engine: checks, domains, quotas, and the order of ranks. */
#include <stdlib.h>
#include <string.h>

#include "place_internal.h"

#define PLACE_MAX_RANKS 1000000

/* Key of core c for grouping into domains of one kind; -2 = not usable. */
typedef int (*core_key_fn)(const locus_topo_t *t, int c);

static int key_numa(const locus_topo_t *t, int c) { return t->cores[c].numa; }
static int key_package(const locus_topo_t *t, int c) { return t->cores[c].package; }
static int key_l3(const locus_topo_t *t, int c) { return t->cores[c].l3; }
static int key_core(const locus_topo_t *t, int c) { (void)t; return c; }
static int key_all(const locus_topo_t *t, int c) { (void)t; (void)c; return 0; }

static place_dom_t *dom_new(place_ctx_t *x)
{
    place_dom_t *d = realloc(x->dom, (size_t)(x->ndom + 1) * sizeof *d);
    if (!d)
        return NULL;
    x->dom = d;
    d = &x->dom[x->ndom];
    memset(d, 0, sizeof *d);
    d->in = calloc((size_t)x->t->ncores, 1);
    if (!d->in)
        return NULL;
    d->nic = -1;
    x->ndom++;
    return d;
}

static void dom_finish(const locus_topo_t *t, place_dom_t *d)
{
    d->package = -2;
    d->mem_local = 1;
    for (int c = 0; c < t->ncores; c++) {
        if (!d->in[c])
            continue;
        d->ncores++;
        d->npus += t->cores[c].nallowed;
        if (t->cores[c].numa >= 0 && !t->numas[t->cores[c].numa].allowed)
            d->mem_local = 0;
        if (d->package == -2)
            d->package = t->cores[c].package;
        else if (d->package != t->cores[c].package)
            d->package = -1;
    }
    if (d->package == -2)
        d->package = -1;
}

/* One domain per distinct key, in the order the keys first appear among
 * allowed cores (hwloc's logical order). */
static int doms_by_key(place_ctx_t *x, core_key_fn key)
{
    const locus_topo_t *t = x->t;
    for (int c = 0; c < t->ncores; c++) {
        if (!t->cores[c].nallowed)
            continue;
        int k = key(t, c), seen = 0;
        for (int d = 0; d < x->ndom && !seen; d++)
            seen = x->dom[d].key == k;
        if (seen)
            continue;
        place_dom_t *d = dom_new(x);
        if (!d)
            return -1;
        d->key = k;
        for (int e = c; e < t->ncores; e++)
            d->in[e] = t->cores[e].nallowed && key(t, e) == k;
        dom_finish(t, d);
    }
    return 0;
}

static int nic_has_core(const locus_topo_t *t, int nic, int c)
{
    const locus_topo_core_t *co = &t->cores[c];
    for (int p = 0; p < co->npus; p++) {
        const locus_topo_pu_t *pu = &t->pus[co->first_pu + p];
        if (pu->allowed && hwloc_bitmap_isset(t->devs[nic].cpuset, (unsigned)pu->os))
            return 1;
    }
    return 0;
}

/* NIC i's domain. The cores it is nearest to (own[j * ncores + c]: NIC j
 * is nearest to core c), split in contiguous shares among the NICs nearest
 * to the same cores (two HCAs on one socket take half the socket each):
 * domains that overlapped let one NIC's ranks fill the cores its sibling's
 * ranks were to have, and those then spilled onto another socket, far from
 * their NIC. */
static void nic_dom_cores(const locus_topo_t *t, const char *cand, const char *own, int i,
                          char *in)
{
    size_t C = (size_t)t->ncores;
    const char *mine = own + (size_t)i * C;
    int nown = 0, sibs = 0, me = 0;
    for (size_t c = 0; c < C; c++)
        nown += in[c] = mine[c];
    for (int j = 0; nown && j < t->ndevs; j++)
        if (cand[j] && !memcmp(own + (size_t)j * C, mine, C)) {
            me += j < i;
            sibs++;
        }
    if (nown >= sibs && sibs > 1) {
        int lo = me * nown / sibs, hi = (me + 1) * nown / sibs, k = 0;
        for (size_t c = 0; c < C; c++)
            if (in[c]) {
                in[c] = k >= lo && k < hi;
                k++;
            }
    }
    /* Nearest to no core (nearer NICs own them all): its locality. */
    for (size_t c = 0; !nown && c < C; c++)
        nown += in[c] = t->cores[c].nallowed && nic_has_core(t, i, (int)c);
    for (size_t c = 0; !nown && c < C; c++)
        in[c] = t->cores[c].nallowed > 0;
}

/* own[i * ncores + c]: candidate NIC i is among the nearest candidates of
 * allowed core c, those whose locality holds it and is the smallest such. */
static char *nic_ownership(const locus_topo_t *t, const char *cand)
{
    size_t C = (size_t)t->ncores;
    char *own = calloc((size_t)t->ndevs * C + 1, 1);
    for (size_t c = 0; own && c < C; c++) {
        int best = -1;
        for (int i = 0; i < t->ndevs && t->cores[c].nallowed; i++)
            if (cand[i] && nic_has_core(t, i, (int)c)) {
                int w = hwloc_bitmap_weight(t->devs[i].cpuset);
                best = best < 0 || w < best ? w : best;
            }
        for (int i = 0; best >= 0 && i < t->ndevs; i++)
            own[(size_t)i * C + c] = cand[i] && nic_has_core(t, i, (int)c)
                                     && hwloc_bitmap_weight(t->devs[i].cpuset) == best;
    }
    return own;
}

/* One domain per candidate NIC: the allowed cores it is nearest to. */
static int doms_by_nic(place_ctx_t *x, char *err, size_t errlen)
{
    const locus_topo_t *t = x->t;
    char *cand = calloc((size_t)t->ndevs + 1, 1), *own = NULL;
    if (!cand)
        return -1;
    int n = place_nic_candidates(t, x->req->nic_filter, cand, err, errlen);
    if (n == 0)
        snprintf(err, errlen, "--map-by nic: this machine has no NIC");
    if (n > 0 && !(own = nic_ownership(t, cand)))
        n = -1;
    for (int i = 0; n > 0 && i < t->ndevs; i++) {
        if (!cand[i])
            continue;
        place_dom_t *d = dom_new(x);
        if (!d) {
            n = -1;
            break;
        }
        d->nic = i;
        nic_dom_cores(t, cand, own, i, d->in);
        dom_finish(t, d);
    }
    free(own);
    free(cand);
    return n > 0 ? 0 : -1;
}

static core_key_fn obj_key(locus_obj_kind_t k)
{
    switch (k) {
    case LOCUS_OBJ_CORE: return key_core;
    case LOCUS_OBJ_NUMA: return key_numa;
    case LOCUS_OBJ_SOCKET: return key_package;
    case LOCUS_OBJ_L3CACHE: return key_l3;
    default: return key_all;
    }
}

static int doms_build(place_ctx_t *x, char *err, size_t errlen)
{
    const locus_place_request_t *r = x->req;
    switch (r->map_by) {
    case LOCUS_MAP_NIC:
        return doms_by_nic(x, err, errlen);
    case LOCUS_MAP_CORE:
        return doms_by_key(x, key_all);
    case LOCUS_MAP_SOCKET:
        return doms_by_key(x, key_package);
    case LOCUS_MAP_L3CACHE:
        if (x->t->nl3s > 0)
            return doms_by_key(x, key_l3);
        if (place_warn(x->plan, "no L3 cache in this topology: mapping by NUMA node") < 0)
            return -1;
        return doms_by_key(x, key_numa);
    case LOCUS_MAP_PPR:
        if (r->ppr_obj == LOCUS_OBJ_L3CACHE && x->t->nl3s == 0) {
            snprintf(err, errlen, "ppr:%d:l3cache: this topology has no L3 cache", r->ppr_count);
            return -1;
        }
        return doms_by_key(x, obj_key(r->ppr_obj));
    default:
        return doms_by_key(x, key_numa);
    }
}

/* Balanced counts (±1) that fill whole cores first, then PUs, then stack:
 * a domain never gets a second rank per core while another has a free core. */
/* How many ranks each domain holds without two sharing a core: cores / T
 * when ranks take whole cores; when they take PUs, a rank packs its T PUs
 * onto fresh cores in order and leaves the rest of its last core unused
 * by others, so count how often T PUs accumulate. */
static void doms_measure(place_ctx_t *x)
{
    for (int d = 0; d < x->ndom; d++) {
        place_dom_t *o = &x->dom[d];
        if (!x->unit_pu) {
            o->alone = o->ncores / x->T;
            continue;
        }
        int acc = 0;
        o->alone = 0;
        for (int c = 0; c < x->t->ncores; c++) {
            if (!o->in[c])
                continue;
            acc += x->t->cores[c].nallowed;
            if (acc >= x->T) {
                o->alone++;
                acc = 0;
            }
        }
    }
}

static void quotas_fill(place_ctx_t *x)
{
    for (int r = 0; r < x->req->nranks; r++) {
        int best = -1;
        for (int tier = 0; tier < 3 && best < 0; tier++)
            for (int d = 0; d < x->ndom; d++) {
                place_dom_t *o = &x->dom[d];
                int cap = tier == 0 ? o->alone : tier == 1 ? o->npus / x->T : -1;
                if (cap >= 0 && o->quota >= cap)
                    continue;
                /* Among equals, CPUs whose own node takes memory come first. */
                if (best < 0 || o->quota < x->dom[best].quota
                    || (o->quota == x->dom[best].quota && o->mem_local > x->dom[best].mem_local))
                    best = d;
            }
        x->dom[best].quota++;
    }
}

/* n / ndom ranks per NIC; the rest one per NIC, each on a NIC of the NUMA
 * node holding the fewest ranks so far: two ranks on a two-socket node
 * with two HCAs per socket use both sockets, not the first two HCAs. */
static void quotas_nic(place_ctx_t *x)
{
    int n = x->req->nranks, base = n / x->ndom;
    for (int d = 0; d < x->ndom; d++)
        x->dom[d].quota = base;
    for (int extra = n % x->ndom; extra > 0; extra--) {
        int best = -1, best_load = 0;
        for (int d = 0; d < x->ndom; d++) {
            if (x->dom[d].quota > base)
                continue;
            int load = 0, numa = x->t->devs[x->dom[d].nic].numa;
            for (int e = 0; e < x->ndom; e++)
                load += x->t->devs[x->dom[e].nic].numa == numa ? x->dom[e].quota : 0;
            if (best < 0 || load < best_load) {
                best = d;
                best_load = load;
            }
        }
        x->dom[best].quota++;
    }
}

static int quotas_make(place_ctx_t *x, char *err, size_t errlen)
{
    int n = x->req->nranks;
    if (x->req->map_by == LOCUS_MAP_PPR) {
        long long most = (long long)x->req->ppr_count * x->ndom;
        if (n > most) {
            static const char *obj[] = {"core", "numa", "socket", "l3cache", "node"};
            snprintf(err, errlen, "--map-by ppr:%d:%s places at most %lld ranks on this machine "
                     "(%d objects), %d requested", x->req->ppr_count, obj[x->req->ppr_obj], most,
                     x->ndom, n);
            return -1;
        }
        for (int d = 0; d < x->ndom; d++) {
            x->dom[d].quota = n < x->req->ppr_count ? n : x->req->ppr_count;
            n -= x->dom[d].quota;
        }
    } else if (x->req->map_by == LOCUS_MAP_NIC) {
        quotas_nic(x);
    } else {
        quotas_fill(x);
    }
    return 0;
}

/* Block (consecutive ranks share a domain) or cyclic (round-robin). There
 * are as many domains as NICs with --map-by nic, which may be more than
 * cores (SR-IOV functions, virtual interfaces). */
static int ranks_to_doms(place_ctx_t *x)
{
    int cyclic = x->req->map_by == LOCUS_MAP_NUMA || x->req->map_by == LOCUS_MAP_SOCKET
                 || x->req->map_by == LOCUS_MAP_L3CACHE;
    int *left = calloc((size_t)x->ndom + 1, sizeof *left);
    if (!left)
        return -1;
    for (int d = 0; d < x->ndom; d++)
        left[d] = x->dom[d].quota;
    int d = 0;
    for (int r = 0; r < x->req->nranks; r++) {
        while (left[d] == 0)
            d = (d + 1) % x->ndom;
        x->rank_dom[r] = d;
        left[d]--;
        if (cyclic)
            d = (d + 1) % x->ndom;
    }
    free(left);
    return 0;
}

/* Whether a rank of domain d still fits there without sharing: a free
 * core, or when ranks take PUs, T PUs that no rank uses. */
static int dom_has_room(const place_ctx_t *x, int d)
{
    int free_pus = 0;
    for (int c = 0; c < x->t->ncores; c++) {
        if (!x->dom[d].in[c])
            continue;
        if (x->core_use[c] == 0)
            return 1;
        for (int p = 0; x->unit_pu && p < x->t->cores[c].npus; p++) {
            const int q = x->t->cores[c].first_pu + p;
            free_pus += x->t->pus[q].allowed && x->pu_use[q] == 0;
        }
    }
    return x->unit_pu && free_pus >= x->T;
}

/* Each domain's first ranks, as many as its cores hold alone, are placed
 * first; then ranks whose domain still has room (a free core, or free PUs
 * when ranks take PUs); then the rest.
 * A rank that must share or leave its domain thus never takes a core that
 * another domain's own rank was to have, and no core is shared while
 * another stays free. Within each pass, rank order. */
static int ranks_place(place_ctx_t *x)
{
    int *seen = calloc((size_t)x->ndom + 1, sizeof *seen);
    char *done = calloc((size_t)x->req->nranks + 1, 1);
    int rc = seen && done ? 0 : -1;
    for (int r = 0; rc == 0 && r < x->req->nranks; r++) {
        place_dom_t *d = &x->dom[x->rank_dom[r]];
        if (seen[x->rank_dom[r]]++ < d->alone) {
            done[r] = 1;
            rc = place_rank_make(x, r);
        }
    }
    for (int progress = 1; progress && rc == 0; ) {
        progress = 0;
        for (int r = 0; rc == 0 && r < x->req->nranks; r++)
            if (!done[r] && dom_has_room(x, x->rank_dom[r])) {
                done[r] = progress = 1;
                rc = place_rank_make(x, r);
            }
    }
    for (int r = 0; rc == 0 && r < x->req->nranks; r++)
        if (!done[r])
            rc = place_rank_make(x, r);
    free(seen);
    free(done);
    return rc;
}

static int request_check(const locus_topo_t *t, const locus_place_request_t *req,
                         char *err, size_t errlen)
{
    int A = locus_topo_allowed_pus(t), C = locus_topo_allowed_cores(t);
    if (req->env_error[0]) {
        snprintf(err, errlen, "%s", req->env_error);
        return -1;
    }
    if (req->rails < 1 || req->rails > LOCUS_PLACE_RAILS_MAX) {
        snprintf(err, errlen, "%d rails: must be between 1 and %d", req->rails,
                 LOCUS_PLACE_RAILS_MAX);
        return -1;
    }
    if (req->nranks <= 0) {
        snprintf(err, errlen, "the number of ranks must be at least 1 (got %d)", req->nranks);
        return -1;
    }
    if (req->nranks > PLACE_MAX_RANKS) {
        snprintf(err, errlen, "%d ranks is more than the %d one node can take", req->nranks,
                 PLACE_MAX_RANKS);
        return -1;
    }
    if (req->cpus_per_rank < 1 || req->cpus_per_rank > A) {
        snprintf(err, errlen, "--cpus-per-rank %d: must be between 1 and the %d allowed PUs",
                 req->cpus_per_rank, A);
        return -1;
    }
    if (req->nranks > A && !req->oversubscribe) {
        snprintf(err, errlen, "%d ranks but only %d allowed PUs on %s (add --oversubscribe "
                 "to allow more ranks than PUs)", req->nranks, A, t->host[0] ? t->host : "this node");
        return -1;
    }
    if (req->bind_to == LOCUS_BIND_CORE && req->cpus_per_rank > C) {
        snprintf(err, errlen, "--bind-to core with --cpus-per-rank %d needs %d cores, only %d "
                 "allowed", req->cpus_per_rank, req->cpus_per_rank, C);
        return -1;
    }
    if (req->mem_on >= 0) {
        int i = locus_topo_numa_find(t, req->mem_on);
        if (i < 0 || !t->numas[i].allowed) {
            snprintf(err, errlen, "--mem-on %d: no such NUMA node allowed on this machine",
                     req->mem_on);
            return -1;
        }
    }
    return 0;
}

static void policy_describe(const place_ctx_t *x)
{
    static const char *map[] = {"default", "core", "numa", "socket", "l3cache", "nic", "ppr"};
    static const char *bind[] = {"default", "core", "pu", "l3cache", "numa", "socket", "none"};
    static const char *obj[] = {"core", "numa", "socket", "l3cache", "node"};
    char m[48];
    if (x->req->map_by == LOCUS_MAP_PPR)
        snprintf(m, sizeof m, "ppr:%d:%s", x->req->ppr_count, obj[x->req->ppr_obj]);
    else
        snprintf(m, sizeof m, "%s", map[x->req->map_by]);
    char rails[32] = "";
    if (x->req->rails > 1)
        snprintf(rails, sizeof rails, ", %d rails", x->req->rails);
    snprintf(x->plan->policy, sizeof x->plan->policy, "map-by %s, bind-to %s, %d cpu%s per rank%s%s",
             m, bind[x->bind], x->req->cpus_per_rank, x->req->cpus_per_rank > 1 ? "s" : "",
             rails, x->req->oversubscribe ? ", oversubscribe" : "");
}

static int ctx_alloc(place_ctx_t *x)
{
    const locus_topo_t *t = x->t;
    int n = x->req->nranks;
    size_t big = (size_t)(t->npus + t->ncores + 1);
    x->rank_dom = calloc((size_t)n, sizeof *x->rank_dom);
    x->home = calloc((size_t)n, sizeof *x->home);
    x->core_use = calloc(big, sizeof *x->core_use);
    x->pu_use = calloc(big, sizeof *x->pu_use);
    x->mine = calloc(big, sizeof *x->mine);
    x->pick = calloc(big + (size_t)x->T, sizeof *x->pick);
    x->plan->ranks = calloc((size_t)n, sizeof *x->plan->ranks);
    return x->rank_dom && x->home && x->core_use && x->pu_use && x->mine && x->pick
           && x->plan->ranks ? 0 : -1;
}

static void ctx_free(place_ctx_t *x)
{
    for (int d = 0; d < x->ndom; d++)
        free(x->dom[d].in);
    free(x->dom);
    free(x->rank_dom);
    free(x->home);
    free(x->core_use);
    free(x->pu_use);
    free(x->mine);
    free(x->pick);
}

int locus_plan_make(const locus_topo_t *t, const locus_place_request_t *req,
                    locus_plan_t *plan, char *err, size_t errlen)
{
    memset(plan, 0, sizeof *plan);
    if (request_check(t, req, err, errlen) < 0)
        return -1;
    place_ctx_t x = {.t = t, .req = req, .plan = plan, .T = req->cpus_per_rank};
    long long want = (long long)req->nranks * req->cpus_per_rank;
    int C = locus_topo_allowed_cores(t);
    x.bind = req->bind_to;
    if (x.bind == LOCUS_BIND_DEFAULT)
        x.bind = want <= C ? LOCUS_BIND_CORE
                 : req->nranks <= locus_topo_allowed_pus(t) ? LOCUS_BIND_PU : LOCUS_BIND_NONE;
    x.unit_pu = x.bind == LOCUS_BIND_PU || (x.bind != LOCUS_BIND_CORE && want > C);
    policy_describe(&x);
    int rc = -1;
    snprintf(err, errlen, "out of memory while planning");
    if (ctx_alloc(&x) < 0)
        goto out;
    plan->nranks = req->nranks;
    if (doms_build(&x, err, errlen) < 0)
        goto out;
    doms_measure(&x);
    if (quotas_make(&x, err, errlen) < 0)
        goto out;
    snprintf(err, errlen, "out of memory while planning");
    if (ranks_to_doms(&x) < 0 || ranks_place(&x) < 0)
        goto out;
    if (place_devs_assign(&x, err, errlen) < 0)
        goto out;
    rc = 0;
out:
    ctx_free(&x);
    if (rc < 0)
        locus_plan_free(plan);
    return rc;
}
