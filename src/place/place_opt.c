/* Placement options shared by `locus map` and `locusrun`. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "locus_place.h"
#include "locus_tunables.h"

void locus_place_request_init(locus_place_request_t *req)
{
    memset(req, 0, sizeof *req);
    req->map_by = LOCUS_MAP_DEFAULT;
    req->bind_to = LOCUS_BIND_DEFAULT;
    req->cpus_per_rank = 1;
    req->ppr_count = 1;
    req->ppr_obj = LOCUS_OBJ_CORE;
    req->mem_on = -1;
    req->rails = 1;
    /* A bad value is kept, not printed: the caller learns it from
     * locus_plan_make's error, like any other impossible request. */
    long v;
    char err[128];
    if (locus_tunable_long("LOCUS_RAILS", &v, err, sizeof err) < 0 || v < 1
        || v > LOCUS_PLACE_RAILS_MAX)
        snprintf(req->env_error, sizeof req->env_error, "bad LOCUS_RAILS '%.40s' (expected a whole "
                 "number from 1 to %d)", locus_tunable_str("LOCUS_RAILS"), LOCUS_PLACE_RAILS_MAX);
    else
        req->rails = (int)v;
}

/* A whole decimal number in [lo, hi], or -1 after filling err. */
static int int_parse(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int obj_parse(const char *s, locus_obj_kind_t *kind)
{
    static const struct { const char *w; locus_obj_kind_t k; } words[] = {
        {"core", LOCUS_OBJ_CORE}, {"numa", LOCUS_OBJ_NUMA}, {"socket", LOCUS_OBJ_SOCKET},
        {"package", LOCUS_OBJ_SOCKET}, {"l3cache", LOCUS_OBJ_L3CACHE}, {"l3", LOCUS_OBJ_L3CACHE},
        {"node", LOCUS_OBJ_NODE}, {"board", LOCUS_OBJ_NODE},
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (!strcmp(s, words[i].w)) {
            *kind = words[i].k;
            return 0;
        }
    return -1;
}

static int map_parse(locus_place_request_t *req, const char *v, char *err, size_t errlen)
{
    static const struct { const char *w; locus_map_policy_t p; } words[] = {
        {"default", LOCUS_MAP_DEFAULT}, {"core", LOCUS_MAP_CORE}, {"numa", LOCUS_MAP_NUMA},
        {"socket", LOCUS_MAP_SOCKET}, {"package", LOCUS_MAP_SOCKET},
        {"l3cache", LOCUS_MAP_L3CACHE}, {"l3", LOCUS_MAP_L3CACHE}, {"nic", LOCUS_MAP_NIC},
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (!strcmp(v, words[i].w)) {
            req->map_by = words[i].p;
            return 0;
        }
    if (!strncmp(v, "ppr:", 4)) {
        char buf[64];
        snprintf(buf, sizeof buf, "%s", v + 4);
        char *colon = strchr(buf, ':');
        long k;
        if (colon) {
            *colon = '\0';
            if (int_parse(buf, 1, 1 << 20, &k) == 0 && obj_parse(colon + 1, &req->ppr_obj) == 0) {
                req->map_by = LOCUS_MAP_PPR;
                req->ppr_count = (int)k;
                return 0;
            }
        }
        snprintf(err, errlen, "bad --map-by '%s' (expected ppr:K:OBJ, K >= 1, OBJ one of "
                 "core, numa, socket, l3cache, node)", v);
        return -1;
    }
    snprintf(err, errlen, "unknown --map-by policy '%s' (expected core, numa, socket, "
             "l3cache, nic or ppr:K:OBJ)", v);
    return -1;
}

static int bind_parse(locus_place_request_t *req, const char *v, char *err, size_t errlen)
{
    static const struct { const char *w; locus_bind_policy_t b; } words[] = {
        {"default", LOCUS_BIND_DEFAULT}, {"core", LOCUS_BIND_CORE}, {"pu", LOCUS_BIND_PU},
        {"hwthread", LOCUS_BIND_PU}, {"l3cache", LOCUS_BIND_L3CACHE}, {"l3", LOCUS_BIND_L3CACHE},
        {"numa", LOCUS_BIND_NUMA}, {"socket", LOCUS_BIND_SOCKET}, {"package", LOCUS_BIND_SOCKET},
        {"none", LOCUS_BIND_NONE},
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (!strcmp(v, words[i].w)) {
            req->bind_to = words[i].b;
            return 0;
        }
    snprintf(err, errlen, "unknown --bind-to policy '%s' (expected core, pu, l3cache, numa, "
             "socket or none)", v);
    return -1;
}

int locus_place_opt_takes_value(const char *name)
{
    static const char *with_value[] = {"--map-by", "--bind-to", "--cpus-per-rank",
                                       "--cpus-per-proc", "--nic", "--mem-on", "--rails"};
    for (size_t i = 0; i < sizeof with_value / sizeof with_value[0]; i++)
        if (!strcmp(name, with_value[i]))
            return 1;
    return 0;
}

int locus_place_opt_parse(locus_place_request_t *req, const char *opt,
                          const char *val, char *err, size_t errlen)
{
    /* Accept both "--map-by numa" and "--map-by=numa". */
    char name[64];
    const char *eq = strchr(opt, '=');
    int used = 2;
    if (eq && opt[0] == '-' && (size_t)(eq - opt) < sizeof name) {
        memcpy(name, opt, (size_t)(eq - opt));
        name[eq - opt] = '\0';
        val = eq + 1;
        used = 1;
    } else {
        snprintf(name, sizeof name, "%s", opt);
    }
    if (!strcmp(name, "--oversubscribe")) {
        if (used == 1) {
            snprintf(err, errlen, "--oversubscribe takes no value");
            return -1;
        }
        req->oversubscribe = 1;
        return 1;
    }
    if (!locus_place_opt_takes_value(name))
        return 0;
    if (!val || !*val) {
        snprintf(err, errlen, "option %s needs a value", name);
        return -1;
    }
    long v;
    if (!strcmp(name, "--map-by"))
        return map_parse(req, val, err, errlen) < 0 ? -1 : used;
    if (!strcmp(name, "--bind-to"))
        return bind_parse(req, val, err, errlen) < 0 ? -1 : used;
    if (!strcmp(name, "--nic")) {
        if (strlen(val) >= sizeof req->nic_filter) {
            snprintf(err, errlen, "--nic list too long");
            return -1;
        }
        snprintf(req->nic_filter, sizeof req->nic_filter, "%s", val);
        return used;
    }
    if (!strcmp(name, "--mem-on")) {
        if (int_parse(val, 0, INT_MAX, &v) < 0) {
            snprintf(err, errlen, "bad --mem-on '%s' (expected a NUMA node number)", val);
            return -1;
        }
        req->mem_on = (int)v;
        return used;
    }
    if (!strcmp(name, "--rails")) {
        if (int_parse(val, 1, LOCUS_PLACE_RAILS_MAX, &v) < 0) {
            snprintf(err, errlen, "bad --rails '%s' (expected a whole number from 1 to %d)", val,
                     LOCUS_PLACE_RAILS_MAX);
            return -1;
        }
        req->rails = (int)v;
        /* The command line wins over the environment, a bad one included. */
        req->env_error[0] = '\0';
        return used;
    }
    if (int_parse(val, 1, 1 << 16, &v) < 0) {
        snprintf(err, errlen, "bad %s '%s' (expected a whole number >= 1)", name, val);
        return -1;
    }
    req->cpus_per_rank = (int)v;
    return used;
}
