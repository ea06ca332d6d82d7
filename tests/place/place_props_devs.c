/*
 * Device properties of plans: which NICs are candidates (the class ranking
 * of docs/placement.md, re-derived here from the model's facts), nearest
 * device, balance among equally near ones, rails and the NIC variables.
 * Locality comes from hwloc, not from the engine's own distance.
 */
#include <stdlib.h>
#include <string.h>

#include "place_props.h"

int props_hw_distance(const locus_topo_t *t, const char *name, const char *pci, int home_os)
{
    hwloc_obj_t os = NULL;
    while ((os = hwloc_get_next_osdev(t->hw, os)))
        if (os->name && !strcmp(os->name, name))
            break;
    if (!os && pci[0])
        os = hwloc_get_pcidev_by_busidstring(t->hw, pci);
    if (!os || home_os < 0)
        return 2;
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(t->hw, os);
    int m = locus_topo_numa_find(t, home_os);
    if (!anc || m < 0 || hwloc_bitmap_iszero(anc->cpuset)
        || hwloc_bitmap_isequal(anc->cpuset, hwloc_topology_get_complete_cpuset(t->hw)))
        return 2;
    hwloc_const_bitmap_t ncpus = t->numas[m].cpuset;
    if (hwloc_bitmap_isincluded(anc->cpuset, ncpus))
        return 0;
    int first = hwloc_bitmap_first(ncpus);
    hwloc_obj_t pu = first >= 0 ? hwloc_get_pu_obj_by_os_index(t->hw, (unsigned)first) : NULL;
    hwloc_obj_t pkg = pu ? hwloc_get_ancestor_obj_by_type(t->hw, HWLOC_OBJ_PACKAGE, pu) : NULL;
    if (pkg && hwloc_bitmap_isincluded(anc->cpuset, pkg->cpuset))
        return 1;
    return 2;
}

static int dev_distance(const locus_topo_t *t, int i, int home_os)
{
    return props_hw_distance(t, t->devs[i].name, t->devs[i].pci, home_os);
}

/* The ranking as documented: fabrics; Ethernet by speed, PCI link, RDMA;
 * management ports; virtual interfaces; down ports. */
static int tier(const locus_topo_dev_t *d)
{
    if (d->link_up == 0 || (d->ipv4 == 0 && !d->rdma))
        return 4;
    if (d->is_virtual)
        return 3;
    if (d->nic_class != LOCUS_NIC_ETHERNET)
        return 0;
    return d->mgmt ? 2 : 1;
}

static int ranks_before(const locus_topo_dev_t *a, const locus_topo_dev_t *b)
{
    int ta = tier(a), tb = tier(b);
    if (ta != tb || ta == 0 || ta == 4)
        return ta < tb;
    if (a->speed_mbps != b->speed_mbps)
        return a->speed_mbps > b->speed_mbps;
    if (a->link_gbps != b->link_gbps)
        return a->link_gbps > b->link_gbps;
    return a->rdma > b->rdma;
}

static int named_by(const locus_topo_dev_t *d, const char *filter)
{
    char buf[256], *save = NULL;
    snprintf(buf, sizeof buf, "%s", filter);
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (!strcmp(tok, d->name) || !strcmp(tok, d->netdev) || (d->pci[0] && !strcmp(tok, d->pci)))
            return 1;
        for (int k = 0; k < d->nosdevs; k++)
            if (!strcmp(tok, d->osdevs[k]))
                return 1;
    }
    return 0;
}

/* cand[i] = 1 for the devices a rank may get. */
static int candidates(const locus_topo_t *t, const char *filter, int nic, char *cand)
{
    int n = 0;
    for (int i = 0; i < t->ndevs; i++) {
        const locus_topo_dev_t *d = &t->devs[i];
        cand[i] = d->kind == (nic ? LOCUS_DEV_NIC : LOCUS_DEV_GPU);
        if (cand[i] && nic && filter[0])
            cand[i] = named_by(d, filter);
        else if (cand[i] && nic)
            for (int j = 0; j < t->ndevs && cand[i]; j++)
                cand[i] = t->devs[j].kind != LOCUS_DEV_NIC || !ranks_before(&t->devs[j], d);
        n += cand[i];
    }
    return n;
}

static int dev_find(const locus_topo_t *t, locus_dev_kind_t kind, const char *name)
{
    for (int i = 0; i < t->ndevs; i++)
        if (t->devs[i].kind == kind && !strcmp(t->devs[i].name, name))
            return i;
    return -1;
}

/* elig[j] = 1 for the candidates not in taken[0..ntaken-1] that are
 * nearest to home_os; returns how many. */
static int eligible(const locus_topo_t *t, const char *cand, const int *taken, int ntaken,
                    int home_os, char *elig)
{
    int best = 3, n = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int j = 0; j < t->ndevs; j++) {
            int used = 0;
            for (int q = 0; q < ntaken; q++)
                used |= taken[q] == j;
            int d = cand[j] && !used ? dev_distance(t, j, home_os) : 3;
            if (pass == 0 && d < best)
                best = d;
            if (pass == 1) {
                elig[j] = d < 3 && d == best;
                n += elig[j];
            }
        }
    return n;
}

/* (e) For two devices a and b: if every rank that got either could have
 * had both, their loads differ by at most one. elig holds nranks rows of
 * t->ndevs flags. */
static void check_pair_balance(const locus_topo_t *t, int n, const int *of, const char *elig,
                               const char *what)
{
    int *load = calloc((size_t)t->ndevs + 1, sizeof *load);
    for (int r = 0; r < n; r++)
        if (of[r] >= 0)
            load[of[r]]++;
    for (int a = 0; a < t->ndevs; a++)
        for (int b = 0; b < t->ndevs; b++) {
            if (load[a] <= load[b] + 1)
                continue;
            int free_choice = 1, any_b = 0;
            for (int r = 0; r < n && free_choice; r++) {
                const char *e = &elig[(size_t)r * (size_t)t->ndevs];
                if (of[r] == a || of[r] == b)
                    free_choice = e[a] && e[b];
                any_b |= e[a] && e[b];
            }
            CHECK(!free_choice || !any_b, "%s: %s has %d ranks, %s only %d, and every rank on "
                  "them could have had either", what, t->devs[a].name, load[a], t->devs[b].name,
                  load[b]);
        }
    free(load);
}

/* A NUMA node's ranks are split evenly (±1) over its nearest devices. */
static void check_group_split(const locus_topo_t *t, const locus_plan_t *p, const int *of,
                              const char *elig, const char *what)
{
    int *count = calloc((size_t)t->ndevs + 1, sizeof *count);
    for (int m = -1; m < t->nnumas; m++) {
        int home = m < 0 ? -1 : t->numas[m].os, first = -1;
        memset(count, 0, ((size_t)t->ndevs + 1) * sizeof *count);
        for (int r = 0; r < p->nranks; r++)
            if (p->ranks[r].home_numa == home && of[r] >= 0) {
                count[of[r]]++;
                if (first < 0)
                    first = r;
            }
        if (first < 0)
            continue;
        const char *e = &elig[(size_t)first * (size_t)t->ndevs];
        for (int a = 0; a < t->ndevs; a++)
            for (int b = 0; b < t->ndevs; b++)
                CHECK(!e[a] || !e[b] || count[a] <= count[b] + 1, "%s: NUMA %d's ranks: %d on %s, "
                      "%d on the equally near %s", what, home, count[a], t->devs[a].name,
                      count[b], t->devs[b].name);
    }
    free(count);
}

static void check_nic_env(const locus_topo_t *t, const locus_rank_plan_t *rp)
{
    char want[4096] = "";
    for (int k = 0; k < rp->nrails; k++) {
        int i = dev_find(t, LOCUS_DEV_NIC, rp->rails[k].name);
        CHECK(i >= 0 && !strcmp(t->devs[i].netdev, rp->rails[k].netdev),
              "rank %d rail %d netdev %s", rp->rank, k, rp->rails[k].netdev);
        if (rp->rails[k].netdev[0] && i >= 0 && t->devs[i].ipv4 != 0)
            snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", want[0] ? "," : "",
                     rp->rails[k].netdev);
    }
    const char *got = locus_rank_plan_env(rp, "LOCUS_NET_IFACES");
    CHECK(want[0] ? got && !strcmp(got, want) : !got, "rank %d LOCUS_NET_IFACES %s, want %s",
          rp->rank, got ? got : "unset", want[0] ? want : "unset");
    const char *nic = locus_rank_plan_env(rp, "LOCUS_NIC"), *ucx = locus_rank_plan_env(rp, "UCX_NET_DEVICES");
    CHECK(nic && !strcmp(nic, rp->nic.name), "rank %d LOCUS_NIC %s", rp->rank, nic ? nic : "unset");
    int entries = 1;
    for (const char *c = ucx; c && *c; c++)
        entries += *c == ',';
    CHECK(ucx && entries == rp->nrails, "rank %d UCX_NET_DEVICES %s for %d rails", rp->rank,
          ucx ? ucx : "unset", rp->nrails);
}

/* Every rail of every rank: count, distinct candidates, nearest first,
 * the N nearest, and each level balanced among free choices. */
static void check_rails(const locus_topo_t *t, const locus_place_request_t *req,
                        const locus_plan_t *p, const char *cand, int ncand)
{
    int n = p->nranks, want = req->rails < ncand ? req->rails : ncand;
    int *rails = calloc((size_t)n * (size_t)(want + 1), sizeof *rails), *of = calloc((size_t)n, sizeof *of);
    char *elig = calloc((size_t)n * (size_t)t->ndevs + 1, 1);
    for (int r = 0; r < n; r++) {
        const locus_rank_plan_t *rp = &p->ranks[r];
        CHECK(rp->nrails == (rp->has_nic ? want : 0), "rank %d has %d rails, want %d", r,
              rp->nrails, want);
        CHECK(!rp->has_nic || (rp->nrails > 0 && !strcmp(rp->rails[0].name, rp->nic.name)),
              "rank %d: rails[0] is not its NIC", r);
        for (int k = 0; k < rp->nrails && k < want; k++) {
            int i = dev_find(t, LOCUS_DEV_NIC, rp->rails[k].name);
            rails[(size_t)r * (size_t)want + (size_t)k] = i;
            CHECK(i >= 0 && cand[i], "rank %d rail %d %s is no candidate", r, k, rp->rails[k].name);
            for (int q = 0; q < k; q++)
                CHECK(rails[(size_t)r * (size_t)want + (size_t)q] != i, "rank %d has %s twice", r,
                      rp->rails[k].name);
        }
        if (rp->has_nic)
            check_nic_env(t, rp);
    }
    for (int k = 1; k < want; k++) {
        for (int r = 0; r < n; r++) {
            const int *mine = &rails[(size_t)r * (size_t)want];
            char *e = &elig[(size_t)r * (size_t)t->ndevs];
            of[r] = p->ranks[r].nrails > k ? mine[k] : -1;
            if (of[r] < 0) {
                memset(e, 0, (size_t)t->ndevs);
                continue;
            }
            eligible(t, cand, mine, k, p->ranks[r].home_numa, e);
            CHECK(e[of[r]], "rank %d rail %d %s is not among the nearest NICs it lacks", r, k,
                  t->devs[of[r]].name);
        }
        char what[32];
        snprintf(what, sizeof what, "rail %d", k);
        check_pair_balance(t, n, of, elig, what);
    }
    free(rails);
    free(of);
    free(elig);
}

/* --map-by nic: NUMA nodes with as many candidate NICs and as many allowed
 * cores and PUs hold as many ranks (±1): the ranks beyond an even share go
 * to different nodes. (Where one node allows fewer CPUs, it may fill up
 * first, and its ranks then run, and take NICs, elsewhere.) */
static void check_nic_numa_spread(const locus_topo_t *t, const locus_plan_t *p, const int *of,
                                  const char *cand)
{
    int n = t->nnumas + 1;
    int *nics = calloc((size_t)n, sizeof *nics), *ranks = calloc((size_t)n, sizeof *ranks);
    int *cores = calloc((size_t)n, sizeof *cores), *pus = calloc((size_t)n, sizeof *pus);
    for (int i = 0; i < t->ndevs; i++)
        nics[t->devs[i].numa + 1] += cand[i];
    for (int c = 0; c < t->ncores; c++) {
        cores[t->cores[c].numa + 1] += t->cores[c].nallowed > 0;
        pus[t->cores[c].numa + 1] += t->cores[c].nallowed;
    }
    for (int r = 0; r < p->nranks; r++)
        if (of[r] >= 0)
            ranks[t->devs[of[r]].numa + 1]++;
    for (int a = 1; a < n; a++)
        for (int b = 1; b < n; b++)
            CHECK(!nics[a] || nics[a] != nics[b] || cores[a] != cores[b] || pus[a] != pus[b]
                  || ranks[a] <= ranks[b] + 1, "--map-by nic: NUMA %d's NICs have %d ranks, "
                  "NUMA %d's as many NICs only %d", t->numas[a - 1].os, ranks[a],
                  t->numas[b - 1].os, ranks[b]);
    free(nics);
    free(ranks);
    free(cores);
    free(pus);
}

void props_check_devs(const locus_topo_t *t, const locus_place_request_t *req,
                      const locus_plan_t *p)
{
    int n = p->nranks;
    char *cand = calloc((size_t)t->ndevs + 1, 1), *elig = calloc((size_t)n * (size_t)t->ndevs + 1, 1);
    int *of = calloc((size_t)n, sizeof *of);
    for (int nic = 1; nic >= 0; nic--) {
        int ncand = candidates(t, req->nic_filter, nic, cand);
        int fixed = nic && req->map_by == LOCUS_MAP_NIC;
        for (int r = 0; r < n; r++) {
            const locus_rank_plan_t *rp = &p->ranks[r];
            int has = nic ? rp->has_nic : rp->has_gpu;
            const char *name = nic ? rp->nic.name : rp->gpu.name;
            CHECK(has == (ncand > 0), "rank %d %s presence %d with %d candidates", r,
                  nic ? "NIC" : "GPU", has, ncand);
            of[r] = has ? dev_find(t, nic ? LOCUS_DEV_NIC : LOCUS_DEV_GPU, name) : -1;
            CHECK(!has || (of[r] >= 0 && cand[of[r]]), "rank %d got %s, not a candidate (%s)", r,
                  name, nic ? "fabric class rule" : "no such GPU");
            char *e = &elig[(size_t)r * (size_t)t->ndevs];
            /* --map-by nic too: a rank its NIC's domain could not hold
             * still gets a NIC nearest to where it runs. */
            eligible(t, cand, NULL, 0, rp->home_numa, e);
            CHECK(of[r] < 0 || e[of[r]], "rank %d: %s is not among the nearest %ss", r, name,
                  nic ? "NIC" : "GPU");
        }
        check_pair_balance(t, n, of, elig, nic ? "NIC" : "GPU");
        check_group_split(t, p, of, elig, nic ? "NIC" : "GPU");
        if (fixed)
            check_nic_numa_spread(t, p, of, cand);
        if (nic)
            check_rails(t, req, p, cand, ncand);
    }
    free(cand);
    free(elig);
    free(of);
}

void props_check_rails(const locus_topo_t *t, const locus_place_request_t *req)
{
    char *cand = calloc((size_t)t->ndevs + 1, 1), err[512];
    int ncand = candidates(t, req->nic_filter, 1, cand);
    free(cand);
    locus_plan_t one;
    if (ncand < 2 || locus_plan_make(t, req, &one, err, sizeof err) < 0)
        return;
    int counts[] = {2, ncand + 1};
    for (int i = 0; i < 2; i++) {
        locus_place_request_t r = *req;
        r.rails = counts[i];
        locus_plan_t p;
        if (locus_plan_make(t, &r, &p, err, sizeof err) < 0) {
            CHECK(0, "%d rails refused: %s", r.rails, err);
            continue;
        }
        plans++;
        props_check_plan(t, &r, &p);
        for (int k = 0; k < p.nranks; k++)
            CHECK(!strcmp(p.ranks[k].nic.name, one.ranks[k].nic.name), "rails %d: rank %d's "
                  "primary NIC %s, %s with one rail", r.rails, k, p.ranks[k].nic.name,
                  one.ranks[k].nic.name);
        int warned = 0;
        for (int w = 0; w < p.nwarnings; w++)
            warned |= strstr(p.warnings[w], "rails") != NULL;
        CHECK(warned == (r.rails > ncand), "rails %d of %d candidates: warning %d", r.rails, ncand,
              warned);
        locus_plan_free(&p);
    }
    locus_plan_free(&one);
}

void props_check_nic_filter(const locus_topo_t *t)
{
    char err[512];
    int C = locus_topo_allowed_cores(t), first = -1, other = -1;
    for (int i = 0; i < t->ndevs; i++) {
        if (t->devs[i].kind != LOCUS_DEV_NIC)
            continue;
        if (first < 0)
            first = i;
        else if (other < 0 && tier(&t->devs[i]) != tier(&t->devs[first]))
            other = i;
        locus_place_request_t req;
        locus_place_request_init(&req);
        req.nranks = C;
        snprintf(req.nic_filter, sizeof req.nic_filter, "%s", t->devs[i].netdev[0]
                 ? t->devs[i].netdev : t->devs[i].name);
        locus_plan_t p;
        snprintf(ctx, sizeof ctx, "--nic %s", req.nic_filter);
        if (locus_plan_make(t, &req, &p, err, sizeof err) < 0) {
            CHECK(0, "refused: %s", err);
            continue;
        }
        for (int r = 0; r < p.nranks; r++)
            CHECK(p.ranks[r].has_nic && !strcmp(p.ranks[r].nic.name, t->devs[i].name),
                  "rank %d got %s", r, p.ranks[r].has_nic ? p.ranks[r].nic.name : "none");
        props_check_plan(t, &req, &p);
        locus_plan_free(&p);
    }
    if (other < 0)
        return;
    locus_place_request_t req;
    locus_place_request_init(&req);
    req.nranks = C;
    req.rails = 2;
    snprintf(req.nic_filter, sizeof req.nic_filter, "%s,%s", t->devs[first].name, t->devs[other].name);
    snprintf(ctx, sizeof ctx, "--nic %s --rails 2", req.nic_filter);
    locus_plan_t p;
    if (locus_plan_make(t, &req, &p, err, sizeof err) < 0) {
        CHECK(0, "refused: %s", err);
        return;
    }
    for (int r = 0; r < p.nranks; r++)
        CHECK(p.ranks[r].nrails == 2, "rank %d has %d rails", r, p.ranks[r].nrails);
    props_check_plan(t, &req, &p);
    locus_plan_free(&p);
}
