/*
 * locus_place.h — the placement engine: (machine model, request) -> plan.
 *
 * This header is the whole contract of the placement layer. The engine is a
 * pure function: it reads a locus_topo_t (see src/topo/locus_topo.h) and a
 * request, and fills a plan; it never looks at the calling process, so a
 * plan for any machine can be computed from that machine's hwloc XML export.
 * The same input always gives the same plan.
 *
 * Users reach it through `locus map` and `locusrun`; both parse placement
 * options with locus_place_opt_parse() so the two accept the same words.
 */
#ifndef LOCUS_PLACE_H
#define LOCUS_PLACE_H

#include <stdio.h>
#include "locus_topo.h"

#define LOCUS_PLACE_NAME_MAX 64
#define LOCUS_PLACE_OSDEV_MAX 8
#define LOCUS_PLACE_RAILS_MAX 64

typedef enum {
    LOCUS_MAP_DEFAULT = 0, /* consecutive ranks share a NUMA node, balanced across NUMA nodes */
    LOCUS_MAP_CORE,
    LOCUS_MAP_NUMA,
    LOCUS_MAP_SOCKET,
    LOCUS_MAP_L3CACHE,
    LOCUS_MAP_NIC,         /* spread evenly over NICs, each rank on cores nearest its NIC */
    LOCUS_MAP_PPR          /* ppr:K:OBJ, K ranks per object of kind ppr_obj */
} locus_map_policy_t;

typedef enum {
    LOCUS_BIND_DEFAULT = 0, /* core when ranks x cpus_per_rank <= allowed cores, else pu when
                               ranks <= allowed PUs, else none (oversubscribed) */
    LOCUS_BIND_CORE,
    LOCUS_BIND_PU,
    LOCUS_BIND_L3CACHE,
    LOCUS_BIND_NUMA,
    LOCUS_BIND_SOCKET,
    LOCUS_BIND_NONE
} locus_bind_policy_t;

/* Object kinds usable in ppr:K:OBJ. */
typedef enum {
    LOCUS_OBJ_CORE = 0,
    LOCUS_OBJ_NUMA,
    LOCUS_OBJ_SOCKET,
    LOCUS_OBJ_L3CACHE,
    LOCUS_OBJ_NODE
} locus_obj_kind_t;

typedef struct {
    int nranks;                   /* > 0 */
    locus_map_policy_t map_by;
    int ppr_count;                /* K of ppr:K:OBJ */
    locus_obj_kind_t ppr_obj;     /* OBJ of ppr:K:OBJ */
    int cpus_per_rank;            /* threads per rank, >= 1 */
    locus_bind_policy_t bind_to;
    int oversubscribe;            /* allow more ranks than allowed PUs */
    char nic_filter[256];         /* "" or comma-separated NIC names: exactly these are used */
    int mem_on;                   /* -1: memory local to the cpus; else OS NUMA index */
    int rails;                    /* NICs per rank, 1..LOCUS_PLACE_RAILS_MAX */
    char env_error[160];          /* "" or why a LOCUS_* variable read by
                                     locus_place_request_init is invalid: then
                                     locus_plan_make refuses the request with it */
} locus_place_request_t;

/* One device chosen for a rank (a NIC or a GPU). */
typedef struct {
    char name[LOCUS_PLACE_NAME_MAX];  /* preferred OS device name: mlx5_0, hfi1_0, cuda0, rsmi0... */
    char pci[LOCUS_PLACE_NAME_MAX];   /* PCI bus id "0000:04:00.0", "" when unknown or virtual */
    char netdev[LOCUS_PLACE_NAME_MAX];/* NIC: its network interface (eth0, ib0, veth1), "" if none */
    int nosdevs;
    char osdevs[LOCUS_PLACE_OSDEV_MAX][LOCUS_PLACE_NAME_MAX]; /* every OS device of that PCI function */
    int index;                        /* index among devices of its kind, for *_VISIBLE_DEVICES */
} locus_place_dev_t;

typedef struct {
    char *name;
    char *value;
} locus_place_env_t;

typedef struct {
    int rank;
    int ncpus;
    int *cpus;                 /* OS PU indices the rank is bound to, ascending */
    int nnuma;
    int *numa;                 /* OS NUMA node indices for its memory */
    int has_nic;
    locus_place_dev_t nic;     /* its primary NIC: rails[0] */
    int nrails;
    locus_place_dev_t *rails;  /* its NICs (--rails N), nearest first; NULL when none */
    int has_gpu;
    locus_place_dev_t gpu;
    int nenv;
    locus_place_env_t *env;    /* variables to export: LOCUS_NIC, LOCUS_NET_IFACES,
                                  UCX_NET_DEVICES, OMP_*, ... */
    int bound;                 /* 0 when --bind-to none: cpus is the allowed set, not a binding */
    int home_numa;             /* OS index of the NUMA node the rank was mapped to (the
                                  locality its NIC and GPU were chosen for), -1 if none */
} locus_rank_plan_t;

typedef struct {
    int nranks;
    locus_rank_plan_t *ranks;
    int nwarnings;
    char **warnings;           /* human-readable, one line each, no newline */
    char policy[160];          /* the effective policy, e.g. "map-by numa, bind-to core, 1 cpu per rank" */
} locus_plan_t;

/* Fills *req with the defaults (map default, bind default, 1 cpu per rank,
 * no oversubscription, no NIC filter, mem_on -1, rails from LOCUS_RAILS,
 * default 1) and nranks = 0. An invalid LOCUS_RAILS leaves its reason in
 * req->env_error. */
void locus_place_request_init(locus_place_request_t *req);

/*
 * Parses one placement command-line option shared by `locus map` and
 * `locusrun`: --map-by, --bind-to, --cpus-per-rank, --oversubscribe, --nic,
 * --mem-on, --rails (which overrides LOCUS_RAILS). `opt` is the option word (e.g. "--map-by"), `val` the next word
 * or NULL. Returns the number of words consumed (1 or 2), 0 if `opt` is not
 * a placement option, or -1 with a one-line reason in err.
 */
int locus_place_opt_parse(locus_place_request_t *req, const char *opt,
                          const char *val, char *err, size_t errlen);
/* 1 when `name` is a placement option that takes a value word. */
int locus_place_opt_takes_value(const char *name);

/*
 * Computes the plan. Returns 0 on success; -1 with a one-line reason in err
 * when the request is impossible (nranks <= 0, more ranks than allowed PUs
 * without oversubscribe, a NIC filter matching nothing, req->env_error
 * set, ...). On success the caller frees the plan with locus_plan_free().
 *
 * NICs: the candidates are the --nic list when given, else the NICs of the
 * best class: InfiniBand, Omni-Path, Slingshot and EFA first; then
 * Ethernet by link speed (RDMA-capable first among equals); then
 * management ports, then virtual interfaces; ports that are down last.
 * Each rank gets the nearest candidate; the ranks of one NUMA node are
 * split evenly (±1) over the candidates equally near to it. With rails
 * N > 1 it also gets the next nearest, up to N in all, balanced the same
 * way. LOCUS_NET_IFACES lists their network interfaces, nearest first.
 */
int locus_plan_make(const locus_topo_t *topo, const locus_place_request_t *req,
                    locus_plan_t *plan, char *err, size_t errlen);

void locus_plan_free(locus_plan_t *plan);

/* Value of `name` in a rank's environment list, or NULL. */
const char *locus_rank_plan_env(const locus_rank_plan_t *rp, const char *name);

/* Writes the plan as JSON: {"host":..., "ranks":[{"rank","cpus","numa","nic","rails","gpu",
 * "env"}...], "warnings":[...]}. */
void locus_plan_write_json(const locus_plan_t *plan, const locus_topo_t *topo, FILE *out);

/* Writes the human table: rank, PUs (OS indices, list syntax), NUMA, NIC(s), GPU. */
void locus_plan_write_table(const locus_plan_t *plan, const locus_topo_t *topo, FILE *out);

/* One `--report-bindings` line for a rank, without newline, into buf. */
void locus_rank_plan_format(const locus_rank_plan_t *rp, const char *host,
                            char *buf, size_t buflen);

/*
 * Binds the calling process as the rank plan says: CPU affinity to rp->cpus
 * (unless !rp->bound) and memory policy to rp->numa. Meant for a forked
 * child before exec. Needs a topology of this machine. Returns 0, or -1
 * with a one-line reason in err.
 */
int locus_bind_apply(const locus_topo_t *topo, const locus_rank_plan_t *rp,
                     char *err, size_t errlen);

#endif
