/*
 * locus_bind_apply on this machine: a forked child applies each rank's
 * plan and reads its binding back from the kernel (sched_getaffinity)
 * and hwloc (memory policy). Also: a plan from XML refuses to bind, and
 * an unbound rank keeps the parent's affinity.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "locus_place.h"

static int child_check(const locus_topo_t *t, const locus_rank_plan_t *rp)
{
    char err[256];
    cpu_set_t before, after;
    sched_getaffinity(0, sizeof before, &before);
    if (locus_bind_apply(t, rp, err, sizeof err) < 0) {
        fprintf(stderr, "rank %d: %s\n", rp->rank, err);
        return 1;
    }
    sched_getaffinity(0, sizeof after, &after);
    if (!rp->bound)
        return CPU_EQUAL(&before, &after) ? 0 : 1;
    cpu_set_t want;
    CPU_ZERO(&want);
    for (int i = 0; i < rp->ncpus; i++)
        CPU_SET(rp->cpus[i], &want);
    if (!CPU_EQUAL(&want, &after)) {
        fprintf(stderr, "rank %d: affinity differs from the plan\n", rp->rank);
        return 1;
    }
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
    hwloc_membind_policy_t pol;
    int rc = 0;
    if (hwloc_get_membind(t->hw, nodes, &pol, HWLOC_MEMBIND_PROCESS | HWLOC_MEMBIND_BYNODESET) == 0) {
        for (int i = 0; i < rp->nnuma; i++)
            if (!hwloc_bitmap_isset(nodes, (unsigned)rp->numa[i])) {
                fprintf(stderr, "rank %d: memory not allowed on node %d\n", rp->rank, rp->numa[i]);
                rc = 1;
            }
    }
    hwloc_bitmap_free(nodes);
    return rc;
}

static int run_plan(const locus_topo_t *t, const locus_place_request_t *req)
{
    locus_plan_t plan;
    char err[256];
    if (locus_plan_make(t, req, &plan, err, sizeof err) < 0) {
        fprintf(stderr, "plan: %s\n", err);
        return 1;
    }
    int fails = 0;
    for (int r = 0; r < plan.nranks; r++) {
        char line[512];
        locus_rank_plan_format(&plan.ranks[r], locus_topo_hostname(t), line, sizeof line);
        printf("%s\n", line);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0)
            _exit(child_check(t, &plan.ranks[r]));
        int st = 0;
        waitpid(pid, &st, 0);
        fails += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    locus_plan_free(&plan);
    return fails;
}

int main(int argc, char **argv)
{
    char err[256];
    int fails = 0;
    locus_topo_t *t = locus_topo_load(NULL, err, sizeof err);
    if (!t) {
        fprintf(stderr, "load: %s\n", err);
        return 1;
    }
    if (!locus_topo_is_this_system(t)) {
        fprintf(stderr, "native topology not marked as this system\n");
        fails++;
    }
    locus_place_request_t req;
    locus_place_request_init(&req);
    req.nranks = locus_topo_allowed_pus(t);
    fails += run_plan(t, &req);
    req.bind_to = LOCUS_BIND_NUMA;
    req.nranks = 1;
    fails += run_plan(t, &req);
    req.bind_to = LOCUS_BIND_DEFAULT;
    req.nranks = locus_topo_allowed_pus(t) + 2;
    req.oversubscribe = 1;
    fails += run_plan(t, &req);
    req.nranks = 1;
    req.oversubscribe = 0;
    req.mem_on = t->numas[0].os;
    fails += run_plan(t, &req);
    if (argc > 1) {
        /* A topology read from XML describes another machine: no binding. */
        locus_topo_t *x = locus_topo_load(argv[1], err, sizeof err);
        locus_plan_t plan;
        locus_place_request_init(&req);
        req.nranks = 1;
        if (!x || locus_plan_make(x, &req, &plan, err, sizeof err) < 0) {
            fails++;
        } else {
            if (locus_topo_is_this_system(x) || locus_bind_apply(x, &plan.ranks[0], err, sizeof err) == 0) {
                fprintf(stderr, "binding with an XML topology was accepted\n");
                fails++;
            }
            locus_plan_free(&plan);
        }
        locus_topo_free(x);
    }
    locus_topo_free(t);
    printf("%s\n", fails ? "FAILED" : "No Errors");
    return fails ? 1 : 0;
}
