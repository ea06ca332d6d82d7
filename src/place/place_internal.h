/* Private to src/place: the stages of locus_plan_make. */
#ifndef LOCUS_PLACE_INTERNAL_H
#define LOCUS_PLACE_INTERNAL_H

#include "locus_place.h"

/* One place ranks are mapped to: a NUMA node, package, L3, core, NIC... */
typedef struct {
    char *in;          /* in[c]: core c belongs to this domain */
    int ncores;        /* allowed cores in it */
    int npus;          /* allowed PUs in it */
    int package;       /* package index when all its cores share one, else -1 */
    int nic;           /* device index for --map-by nic, else -1 */
    int key;           /* the core key that defines it (NUMA, package, L3 index...) */
    int quota;         /* ranks it receives */
    int alone;         /* ranks it holds with no two on one core */
    int mem_local;     /* every core's NUMA node allows memory */
} place_dom_t;

/* Everything locus_plan_make works with; lives for one call. */
typedef struct {
    const locus_topo_t *t;
    const locus_place_request_t *req;
    locus_plan_t *plan;
    int T;                 /* PUs per rank */
    int unit_pu;           /* 1: ranks take PUs; 0: ranks take whole cores */
    locus_bind_policy_t bind;
    int ndom;
    place_dom_t *dom;
    int *rank_dom;         /* domain of each rank */
    int *core_use;         /* ranks on each core */
    int *pu_use;           /* ranks on each PU */
    int *mine;             /* stamp: rank+1 on what the current rank picked */
    int *pick;             /* the current rank's picks (core or PU indices) */
    int *home;             /* home NUMA index of each rank, -1 if none */
} place_ctx_t;

/* Picks rank r's cores or PUs in its domain, then fills its cpus, memory
 * nodes and OpenMP environment; 0 or -1 (out of memory). */
int place_rank_make(place_ctx_t *x, int r);

/* Appends a formatted warning to the plan; 0 or -1 (out of memory). */
int place_warn(locus_plan_t *plan, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Appends NAME=VALUE to a rank's environment; 0 or -1. */
int place_env_add(locus_rank_plan_t *rp, const char *name, const char *value);

/* Candidate NICs: the --nic list when given (exactly those), else the
 * NICs of the best class (see locus_place.h). Fills cand (size
 * topo->ndevs) with 1s and returns how many, or -1 with err filled. */
int place_nic_candidates(const locus_topo_t *t, const char *filter, char *cand,
                         char *err, size_t errlen);

/* Rails 1..nrails-1 of every rank: rails[r * nrails] holds its primary NIC
 * (or -1: then the rank has none); each further rail is the nearest
 * candidate the rank does not have yet, the least used at that rail among
 * equals. Returns 0 or -1 (out of memory). */
int place_rails_choose(const place_ctx_t *x, const char *cand, int *rails, int nrails);

/* A rank's NIC variables for its rails (nrails >= 1, rails[0] primary):
 * LOCUS_NIC, UCX_NET_DEVICES, LOCUS_NET_IFACES, HFI_UNIT; 0 or -1. */
int place_nic_env(locus_rank_plan_t *rp, const locus_topo_t *t, const int *rails, int nrails);

/* Gives each rank its NIC(s) and GPU and their environment; 0 or -1. */
int place_devs_assign(place_ctx_t *c, char *err, size_t errlen);

#endif
