/*
 * Property tests of the placement engine on every shipped topology: for
 * many rank counts, threads per rank, policies and cpuset restrictions,
 * every plan must keep the rules of docs/placement.md. Locality is
 * re-derived from hwloc here (not from the engine's own distance); the
 * device rules are in place_props_devs.c.
 *   place_props TOPOLOGY_DIR | FILE.xml
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place_props.h"

int failures, plans;
char ctx[512];

static int core_of_os(const locus_topo_t *t, int os)
{
    for (int p = 0; p < t->npus; p++)
        if (t->pus[p].os == os)
            return t->pus[p].core;
    return -1;
}

/* Which requests may legitimately be refused. */
static int infeasible(const locus_topo_t *t, const locus_place_request_t *r)
{
    int A = locus_topo_allowed_pus(t), C = locus_topo_allowed_cores(t);
    int nnic = 0;
    for (int i = 0; i < t->ndevs; i++)
        nnic += t->devs[i].kind == LOCUS_DEV_NIC;
    if (r->nranks > A && !r->oversubscribe)
        return 1;
    if (r->cpus_per_rank > A || (r->bind_to == LOCUS_BIND_CORE && r->cpus_per_rank > C))
        return 1;
    if (r->map_by == LOCUS_MAP_NIC && nnic == 0)
        return 1;
    return 0;
}

/* (c) ranks per NUMA node within one, unless the smaller node could not
 * take another rank without two ranks sharing a core (fewer than T idle
 * cores when ranks take whole cores, T PUs on idle cores when they take
 * PUs) and either the larger one has no shared core or the
 * smaller one is full to one rank per T PUs. Needs a plan bound to cores
 * or PUs, where cpus show which cores each rank took. */
static void check_balance(const locus_topo_t *t, const locus_plan_t *p, int T, int by_core)
{
    int n = t->nnumas;
    int *count = calloc((size_t)n + 1, sizeof *count), *pus = calloc((size_t)n + 1, sizeof *pus);
    int *freepus = calloc((size_t)n + 1, sizeof *freepus), *shared = calloc((size_t)n + 1, sizeof *shared);
    int *users = calloc((size_t)t->ncores + 1, sizeof *users), *last = calloc((size_t)t->ncores + 1, sizeof *last);
    for (int r = 0; r < p->nranks; r++) {
        int m = locus_topo_numa_find(t, p->ranks[r].home_numa);
        if (m >= 0)
            count[m]++;
        for (int i = 0; i < p->ranks[r].ncpus; i++) {
            int c = core_of_os(t, p->ranks[r].cpus[i]);
            if (c >= 0 && last[c] != r + 1) {
                users[c]++;
                last[c] = r + 1;
            }
        }
    }
    for (int c = 0; c < t->ncores; c++) {
        int m = t->cores[c].numa;
        if (!t->cores[c].nallowed || m < 0)
            continue;
        pus[m] += t->cores[c].nallowed;
        if (users[c] == 0)
            freepus[m] += by_core ? 1 : t->cores[c].nallowed;
        shared[m] |= users[c] > 1;
    }
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            if (!pus[a] || !pus[b] || count[a] <= count[b] + 1)
                continue;
            int ok = freepus[b] < T && (!shared[a] || count[b] >= pus[b] / T);
            CHECK(ok, "NUMA %d has %d ranks, NUMA %d only %d", t->numas[a].os, count[a],
                  t->numas[b].os, count[b]);
        }
    free(count);
    free(pus);
    free(freepus);
    free(shared);
    free(users);
    free(last);
}

/* Wide bindings (numa, socket, l3cache, none) hide which cores a rank was
 * mapped to: the same request bound to cores (or PUs) must map every rank
 * to the same NUMA node, and that plan's balance is checked. */
static void check_balance_wide(const locus_topo_t *t, const locus_place_request_t *req,
                               const locus_plan_t *p)
{
    locus_place_request_t narrow = *req;
    long long want = (long long)req->nranks * req->cpus_per_rank;
    narrow.bind_to = want > locus_topo_allowed_cores(t) ? LOCUS_BIND_PU : LOCUS_BIND_CORE;
    locus_plan_t q;
    char err[512];
    if (locus_plan_make(t, &narrow, &q, err, sizeof err) < 0) {
        CHECK(0, "the same request bound narrowly is refused: %s", err);
        return;
    }
    for (int r = 0; r < p->nranks; r++)
        CHECK(p->ranks[r].home_numa == q.ranks[r].home_numa,
              "rank %d maps to NUMA %d, but to %d when bound narrowly", r,
              p->ranks[r].home_numa, q.ranks[r].home_numa);
    check_balance(t, &q, req->cpus_per_rank, narrow.bind_to == LOCUS_BIND_CORE);
    locus_plan_free(&q);
}

void props_check_plan(const locus_topo_t *t, const locus_place_request_t *req,
                      const locus_plan_t *p)
{
    int C = locus_topo_allowed_cores(t), T = req->cpus_per_rank, n = req->nranks;
    int *core_users = calloc((size_t)t->ncores, sizeof *core_users);
    int *last = calloc((size_t)t->ncores, sizeof *last);
    CHECK(p->nranks == n, "plan has %d ranks, asked %d", p->nranks, n);
    int any_cpu_mem = 0;
    for (int m = 0; m < t->nnumas; m++)
        any_cpu_mem |= t->numas[m].has_cpus && t->numas[m].allowed;
    for (int r = 0; r < p->nranks; r++) {
        const locus_rank_plan_t *rp = &p->ranks[r];
        CHECK(rp->rank == r, "rank field %d at %d", rp->rank, r);
        CHECK(rp->ncpus > 0, "rank %d has an empty set", r);
        for (int i = 0; i < rp->ncpus; i++) {
            CHECK(hwloc_bitmap_isset(t->allowed, (unsigned)rp->cpus[i]),
                  "rank %d on disallowed PU %d", r, rp->cpus[i]);
            CHECK(i == 0 || rp->cpus[i] > rp->cpus[i - 1], "rank %d cpus not ascending", r);
            int c = core_of_os(t, rp->cpus[i]);
            if (c >= 0 && last[c] != r + 1 && rp->bound) {
                core_users[c]++;
                last[c] = r + 1;
            }
        }
        CHECK(rp->nnuma > 0, "rank %d has no memory node", r);
        for (int i = 0; i < rp->nnuma; i++) {
            int m = locus_topo_numa_find(t, rp->numa[i]);
            CHECK(m >= 0 && t->numas[m].allowed, "rank %d memory on unknown/disallowed node %d", r,
                  rp->numa[i]);
            if (req->mem_on >= 0)
                CHECK(rp->numa[i] == req->mem_on, "rank %d memory on %d, asked %d", r, rp->numa[i],
                      req->mem_on);
            else if (m >= 0 && any_cpu_mem)
                CHECK(t->numas[m].has_cpus, "rank %d memory on CPU-less node %d", r, rp->numa[i]);
        }
        /* (f) memory local: on a node of its CPUs whenever such a node allows memory. */
        if (req->mem_on < 0 && rp->bound) {
            int local_exists = 0, local_used = 0;
            for (int m = 0; m < t->nnumas; m++) {
                if (!t->numas[m].has_cpus || !t->numas[m].allowed)
                    continue;
                int touches = 0;
                for (int i = 0; i < rp->ncpus && !touches; i++)
                    touches = hwloc_bitmap_isset(t->numas[m].cpuset, (unsigned)rp->cpus[i]);
                local_exists |= touches;
                for (int i = 0; touches && i < rp->nnuma; i++)
                    local_used |= rp->numa[i] == t->numas[m].os;
                for (int i = 0; !touches && i < rp->nnuma; i++)
                    CHECK(!local_exists || rp->numa[i] != t->numas[m].os,
                          "rank %d memory on remote node %d", r, rp->numa[i]);
            }
            CHECK(!local_exists || local_used, "rank %d memory not local", r);
        }
        const char *omp = locus_rank_plan_env(rp, "OMP_NUM_THREADS");
        CHECK(omp && atoi(omp) == T, "rank %d OMP_NUM_THREADS %s", r, omp ? omp : "unset");
        if (rp->home_numa >= 0 && rp->bound) {
            int m = locus_topo_numa_find(t, rp->home_numa);
            int touches = 0;
            for (int i = 0; m >= 0 && i < rp->ncpus; i++)
                touches |= hwloc_bitmap_isset(t->numas[m].cpuset, (unsigned)rp->cpus[i]);
            CHECK(touches, "rank %d home NUMA %d is not where its CPUs are", r, rp->home_numa);
        }
    }
    /* (b) no two ranks on one core while cores are free. */
    int narrow = req->bind_to == LOCUS_BIND_DEFAULT || req->bind_to == LOCUS_BIND_CORE
                 || req->bind_to == LOCUS_BIND_PU;
    if (narrow && (long long)n * T <= C)
        for (int c = 0; c < t->ncores; c++)
            CHECK(core_users[c] <= 1, "core %d shared by %d ranks with %d ranks x %d <= %d cores",
                  c, core_users[c], n, T, C);
    if (narrow && req->bind_to != LOCUS_BIND_PU && (long long)n * T > C && n <= locus_topo_allowed_pus(t)) {
        int shared = 0, idle = 0;
        for (int c = 0; c < t->ncores; c++) {
            shared |= core_users[c] > 1;
            idle |= t->cores[c].nallowed && core_users[c] == 0;
        }
        CHECK(!(shared && idle), "a core is shared while another allowed core is idle");
    }
    if (req->map_by == LOCUS_MAP_DEFAULT || req->map_by == LOCUS_MAP_NUMA) {
        int by_core = req->bind_to == LOCUS_BIND_CORE
                      || (req->bind_to == LOCUS_BIND_DEFAULT && (long long)n * T <= C);
        if (narrow && !(req->bind_to == LOCUS_BIND_DEFAULT && n > locus_topo_allowed_pus(t)))
            check_balance(t, p, T, by_core);
        else
            check_balance_wide(t, req, p);
    }
    props_check_devs(t, req, p);
    free(core_users);
    free(last);
}

static int plans_equal(const locus_plan_t *a, const locus_plan_t *b)
{
    if (a->nranks != b->nranks || a->nwarnings != b->nwarnings)
        return 0;
    for (int r = 0; r < a->nranks; r++) {
        const locus_rank_plan_t *x = &a->ranks[r], *y = &b->ranks[r];
        if (x->ncpus != y->ncpus || x->nnuma != y->nnuma || x->nenv != y->nenv
            || x->has_nic != y->has_nic || x->has_gpu != y->has_gpu
            || memcmp(x->cpus, y->cpus, (size_t)x->ncpus * sizeof *x->cpus)
            || memcmp(x->numa, y->numa, (size_t)x->nnuma * sizeof *x->numa)
            || strcmp(x->nic.name, y->nic.name) || strcmp(x->gpu.name, y->gpu.name))
            return 0;
        for (int k = 0; k < x->nenv; k++)
            if (strcmp(x->env[k].name, y->env[k].name) || strcmp(x->env[k].value, y->env[k].value))
                return 0;
    }
    return 1;
}

static void run_one(const locus_topo_t *t, locus_place_request_t *req, const char *label)
{
    locus_plan_t p, q;
    char err[512];
    snprintf(ctx, sizeof ctx, "%s n=%d T=%d map=%d bind=%d over=%d", label, req->nranks,
             req->cpus_per_rank, req->map_by, req->bind_to, req->oversubscribe);
    int rc = locus_plan_make(t, req, &p, err, sizeof err);
    if (rc < 0) {
        CHECK(infeasible(t, req) || req->map_by == LOCUS_MAP_PPR, "refused: %s", err);
        CHECK(err[0] && !strchr(err, '\n'), "error message not one line");
        return;
    }
    plans++;
    CHECK(!(req->nranks > locus_topo_allowed_pus(t) && !req->oversubscribe),
          "more ranks than PUs accepted without --oversubscribe");
    props_check_plan(t, req, &p);
    /* (g) deterministic. */
    if (locus_plan_make(t, req, &q, err, sizeof err) == 0) {
        CHECK(plans_equal(&p, &q), "two runs gave different plans");
        locus_plan_free(&q);
    } else {
        CHECK(0, "second run refused: %s", err);
    }
    locus_plan_free(&p);
}

static void run_matrix(const locus_topo_t *t, const char *label, int full)
{
    int A = locus_topo_allowed_pus(t), C = locus_topo_allowed_cores(t);
    int numa = 0, ngpu = 0, nnic = 0;
    for (int i = 0; i < t->nnumas; i++)
        numa += t->numas[i].has_cpus;
    for (int i = 0; i < t->ndevs; i++) {
        ngpu += t->devs[i].kind == LOCUS_DEV_GPU;
        nnic += t->devs[i].kind == LOCUS_DEV_NIC;
    }
    int ns[] = {1, numa - 1, numa, ngpu, nnic, C, C + 1, A, A + 1};
    static const locus_map_policy_t maps[] = {LOCUS_MAP_DEFAULT, LOCUS_MAP_CORE, LOCUS_MAP_NUMA,
                                              LOCUS_MAP_SOCKET, LOCUS_MAP_L3CACHE, LOCUS_MAP_NIC,
                                              LOCUS_MAP_PPR};
    static const locus_bind_policy_t binds[] = {LOCUS_BIND_DEFAULT, LOCUS_BIND_CORE, LOCUS_BIND_PU,
                                                LOCUS_BIND_NUMA, LOCUS_BIND_SOCKET,
                                                LOCUS_BIND_L3CACHE, LOCUS_BIND_NONE};
    for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
        int n = ns[ni];
        if (n < 1)
            continue;
        int Ts[] = {1, 2, C / n > 0 ? C / n : 1};
        for (int ti = 0; ti < 3; ti++) {
            for (size_t mi = 0; mi < sizeof maps / sizeof maps[0]; mi++)
                for (size_t bi = 0; bi < sizeof binds / sizeof binds[0]; bi++) {
                    int narrow = bi <= 2 || binds[bi] == LOCUS_BIND_NONE;
                    if ((!full && bi > 0 && mi > 0) || (mi > 0 && !narrow))
                        continue;
                    /* --oversubscribe changes nothing until ranks outnumber PUs. */
                    for (int over = n > A ? 0 : 1; over < 2; over++) {
                        locus_place_request_t req;
                        locus_place_request_init(&req);
                        req.nranks = n;
                        req.cpus_per_rank = Ts[ti];
                        req.map_by = maps[mi];
                        req.bind_to = binds[bi];
                        req.oversubscribe = over;
                        req.ppr_count = 2;
                        req.ppr_obj = LOCUS_OBJ_NUMA;
                        run_one(t, &req, label);
                        if (bi == 0 && ti == 0 && over && (maps[mi] == LOCUS_MAP_DEFAULT
                            || maps[mi] == LOCUS_MAP_NUMA || maps[mi] == LOCUS_MAP_NIC))
                            props_check_rails(t, &req);
                    }
                }
        }
    }
    /* --mem-on every allowed node, CPU-less ones included. */
    for (int i = 0; i < t->nnumas; i++) {
        if (!t->numas[i].allowed)
            continue;
        locus_place_request_t req;
        locus_place_request_init(&req);
        req.nranks = numa > 1 ? numa : 2;
        req.oversubscribe = 1;
        req.mem_on = t->numas[i].os;
        run_one(t, &req, label);
    }
}

/* Slurm-step-like cpusets: one PU per core, all but the first core, a
 * set straddling the first two NUMA nodes, a single PU. */
static void restrictions(const char *path, const char *label)
{
    char err[512];
    locus_topo_t *t = locus_topo_load(path, err, sizeof err);
    if (!t)
        return;
    hwloc_bitmap_t sets[4];
    for (int k = 0; k < 4; k++)
        sets[k] = hwloc_bitmap_alloc();
    int straddle_numa = -1, taken = 0;
    for (int c = 0; c < t->ncores; c++) {
        const locus_topo_core_t *co = &t->cores[c];
        for (int p = 0; p < co->npus; p++) {
            const locus_topo_pu_t *pu = &t->pus[co->first_pu + p];
            if (!pu->allowed)
                continue;
            if (!hwloc_bitmap_intersects(sets[0], t->numas[0].cpuset) || 1) {
                int first_of_core = 1;
                for (int q = 0; q < p; q++)
                    first_of_core &= !t->pus[co->first_pu + q].allowed;
                if (first_of_core)
                    hwloc_bitmap_set(sets[0], (unsigned)pu->os);
            }
            if (c > 0)
                hwloc_bitmap_set(sets[1], (unsigned)pu->os);
            if (hwloc_bitmap_iszero(sets[3]))
                hwloc_bitmap_set(sets[3], (unsigned)pu->os);
        }
        /* Last two cores of one NUMA node and first two of the next. */
        if (co->nallowed && co->numa >= 0) {
            if (straddle_numa < 0)
                straddle_numa = co->numa;
            int next_is_other = c + 1 < t->ncores && t->cores[c + 1].numa != co->numa;
            if ((co->numa == straddle_numa && (next_is_other || (c + 2 < t->ncores
                 && t->cores[c + 2].numa != co->numa))) || (co->numa != straddle_numa && taken < 2)) {
                for (int p = 0; p < co->npus; p++)
                    if (t->pus[co->first_pu + p].allowed)
                        hwloc_bitmap_set(sets[2], (unsigned)t->pus[co->first_pu + p].os);
                taken += co->numa != straddle_numa;
            }
        }
    }
    locus_topo_free(t);
    static const char *names[] = {"one-PU-per-core", "reserved-core-0", "straddle", "single-PU"};
    for (int k = 0; k < 4; k++) {
        char *list = NULL, lab[300];
        hwloc_bitmap_list_asprintf(&list, sets[k]);
        snprintf(lab, sizeof lab, "%s restrict %s (%s)", label, names[k], list);
        t = locus_topo_load(path, err, sizeof err);
        if (t && list && *list) {
            if (locus_topo_restrict(t, list, err, sizeof err) == 0) {
                hwloc_bitmap_t got = t->allowed;
                snprintf(ctx, sizeof ctx, "%s", lab);
                CHECK(hwloc_bitmap_isequal(got, sets[k]), "allowed set after restrict differs");
                run_matrix(t, lab, 0);
            } else {
                snprintf(ctx, sizeof ctx, "%s", lab);
                CHECK(0, "restrict failed: %s", err);
            }
        }
        locus_topo_free(t);
        free(list);
        hwloc_bitmap_free(sets[k]);
    }
}

/* Random cpusets (a fixed seed, so failures repeat): each allowed PU kept
 * with probability 1/2, 1/4 or 1/8. */
static void random_restrictions(const char *path, const char *label, int count)
{
    unsigned long long seed = 0x9e3779b97f4a7c15ULL;
    char err[512];
    for (int k = 0; k < count; k++) {
        locus_topo_t *t = locus_topo_load(path, err, sizeof err);
        if (!t)
            return;
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        int shift = 1 + k % 3;
        for (int p = 0; p < t->npus; p++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            if (t->pus[p].allowed && ((seed >> 33) & ((1u << shift) - 1)) == 0)
                hwloc_bitmap_set(set, (unsigned)t->pus[p].os);
        }
        char *list = NULL, lab[600];
        hwloc_bitmap_list_asprintf(&list, set);
        snprintf(lab, sizeof lab, "%s random cpuset %s", label, list);
        if (!hwloc_bitmap_iszero(set)) {
            snprintf(ctx, sizeof ctx, "%.500s", lab);
            if (locus_topo_restrict(t, list, err, sizeof err) == 0)
                run_matrix(t, lab, 0);
            else
                CHECK(0, "restrict failed: %s", err);
        }
        free(list);
        hwloc_bitmap_free(set);
        locus_topo_free(t);
    }
}

/* Every policy at every rank count from 1 to the allowed PUs, one PU per
 * rank (where ranks start to share cores and NUMA nodes fill unevenly):
 * each rank's NIC is one of the nearest to it, balanced among equals. */
static void sweep_counts(const locus_topo_t *t, const char *label)
{
    static const locus_map_policy_t maps[] = {LOCUS_MAP_DEFAULT, LOCUS_MAP_CORE, LOCUS_MAP_NUMA,
                                              LOCUS_MAP_SOCKET, LOCUS_MAP_L3CACHE, LOCUS_MAP_NIC,
                                              LOCUS_MAP_PPR};
    int A = locus_topo_allowed_pus(t);
    for (size_t mi = 0; mi < sizeof maps / sizeof maps[0]; mi++)
        for (int n = 1; n <= A; n++) {
            locus_place_request_t req;
            locus_place_request_init(&req);
            req.nranks = n;
            req.map_by = maps[mi];
            req.ppr_count = (A + 1) / 2;
            req.ppr_obj = LOCUS_OBJ_SOCKET;
            char err[512];
            locus_plan_t p;
            snprintf(ctx, sizeof ctx, "%s sweep n=%d map=%d", label, n, (int)maps[mi]);
            if (locus_plan_make(t, &req, &p, err, sizeof err) < 0) {
                CHECK(infeasible(t, &req) || req.map_by == LOCUS_MAP_PPR, "refused: %s", err);
                continue;
            }
            plans++;
            props_check_devs(t, &req, &p);
            locus_plan_free(&p);
        }
}

static void run_file(const char *path, const char *label)
{
    char err[512];
    locus_topo_t *t = locus_topo_load(path, err, sizeof err);
    snprintf(ctx, sizeof ctx, "%s", label);
    CHECK(t != NULL, "load: %s", err);
    if (t) {
        run_matrix(t, label, 1);
        sweep_counts(t, label);
        props_check_nic_filter(t);
        locus_topo_free(t);
        restrictions(path, label);
        /* PLACE_RANDOM_SETS=200 for a longer hunt. */
        const char *sets = getenv("PLACE_RANDOM_SETS");
        random_restrictions(path, label, sets ? atoi(sets) : 4);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: place_props TOPOLOGY_DIR | FILE.xml\n");
        return 2;
    }
    size_t al = strlen(argv[1]);
    if (al > 4 && !strcmp(argv[1] + al - 4, ".xml")) {
        run_file(argv[1], strrchr(argv[1], '/') ? strrchr(argv[1], '/') + 1 : argv[1]);
        printf("%s: %d plans checked, %d failures\n", argv[1], plans, failures);
        return failures ? 1 : 0;
    }
    DIR *dir = opendir(argv[1]);
    if (!dir) {
        perror(argv[1]);
        return 1;
    }
    char *files[64];
    int nf = 0;
    struct dirent *e;
    while ((e = readdir(dir)) && nf < 64) {
        size_t l = strlen(e->d_name);
        if (l > 4 && !strcmp(e->d_name + l - 4, ".xml"))
            files[nf++] = strdup(e->d_name);
    }
    closedir(dir);
    for (int i = 0; i < nf; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", argv[1], files[i]);
        run_file(path, files[i]);
        free(files[i]);
    }
    CHECK(nf >= 7, "only %d topologies found", nf);
    printf("%d topologies, %d plans checked, %d failures\n", nf, plans, failures);
    return failures ? 1 : 0;
}
