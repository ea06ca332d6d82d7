/* Boot: node map (PMI_process_mapping or host names) and the kvs glue. */
#include "locus_boot.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "boot_priv.h"
#include "locus_tunables.h"

/* ---- PMI_process_mapping: "(vector,(start,nnodes,ppn),...)" ---------- */

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

static const char *parse_num(const char *p, long *v)
{
    p = skip_ws(p);
    if (!isdigit((unsigned char)*p))
        return NULL;
    char *end;
    *v = strtol(p, &end, 10);
    if (*v < 0 || *v > 1000000)
        return NULL;
    return skip_ws(end);
}

int locus_boot_parse_mapping(const char *s, int size, int *node_of)
{
    enum { MAXB = 1024 };
    long bs[MAXB], bn[MAXB], bp[MAXB];
    int nb = 0;
    if (!s || size < 1)
        return -1;
    const char *p = skip_ws(s);
    if (*p++ != '(')
        return -1;
    p = skip_ws(p);
    if (strncmp(p, "vector", 6) != 0)
        return -1;
    p = skip_ws(p + 6);
    while (*p == ',') {
        p = skip_ws(p + 1);
        if (nb == MAXB)
            return -1;
        if (*p == '(') {
            if (!(p = parse_num(p + 1, &bs[nb])) || *p++ != ',')
                return -1;
            if (!(p = parse_num(p, &bn[nb])) || *p++ != ',')
                return -1;
            if (!(p = parse_num(p, &bp[nb])) || *p++ != ')')
                return -1;
        } else {
            /* MPICH also accepts a bare node id: one rank there. */
            if (!(p = parse_num(p, &bs[nb])))
                return -1;
            bn[nb] = 1;
            bp[nb] = 1;
        }
        p = skip_ws(p);
        if (bn[nb] < 1 || bp[nb] < 1)
            return -1;
        nb++;
    }
    if (*p++ != ')' || *skip_ws(p) != '\0' || nb == 0)
        return -1;
    /* A mapping shorter than the job repeats (as MPICH reads it). */
    int r = 0;
    while (r < size) {
        for (int i = 0; i < nb && r < size; i++)
            for (long n = 0; n < bn[i] && r < size; n++)
                for (long k = 0; k < bp[i] && r < size; k++)
                    node_of[r++] = (int)(bs[i] + n);
    }
    /* Renumber node ids by first appearance. */
    int *ids = malloc((size_t)size * sizeof *ids);
    if (!ids)
        return -1;
    int nnodes = 0;
    for (r = 0; r < size; r++) {
        int j;
        for (j = 0; j < nnodes && ids[j] != node_of[r]; j++)
            ;
        if (j == nnodes)
            ids[nnodes++] = node_of[r];
        node_of[r] = j;
    }
    free(ids);
    return nnodes;
}

/* ---- node identity ------------------------------------------------------ */

/* The node index locusrun gave this rank (LOCUS_NODE_ID), or -1 when the
 * variable is absent or belongs to another job (an outer locusrun: then
 * LOCUS_KVSNAME names another kvs than the one we are connected to). */
static int launcher_node_id(const locus_boot_t *b)
{
    const char *kvs = getenv("LOCUS_KVSNAME");
    const char *id = locus_tunable_str("LOCUS_NODE_ID");
    if (!kvs || strcmp(kvs, b->kvsname) != 0 || !*id)
        return -1;
    char *end;
    long v = strtol(id, &end, 10);
    return *end == '\0' && end != id && v >= 0 && v < 1000000 ? (int)v : -1;
}

static void sanitize(char *s)
{
    for (; *s; s++)
        if (*s < 33 || *s > 126)
            *s = '_';
}

int boot_node_index(char (*names)[BOOT_NODE_NAME], int *nnodes, const char *name)
{
    int j;
    for (j = 0; j < *nnodes && strncmp(names[j], name, BOOT_NODE_NAME - 1) != 0; j++)
        ;
    if (j == *nnodes)
        snprintf(names[(*nnodes)++], BOOT_NODE_NAME, "%.*s", BOOT_NODE_NAME - 1, name);
    return j;
}

/*
 * Without a process mapping, ranks exchange who they are: the launcher's
 * node id where there is one (two network namespaces on one kernel are two
 * nodes though they share a host name), the host name otherwise.
 */
static int map_by_exchange(locus_boot_t *b, char *err, size_t errlen)
{
    char host[256], key[64], val[PMI_WIRE_VALLEN_MAX + 1];
    int id = launcher_node_id(b);
    if (id >= 0) {
        snprintf(host, sizeof host, "locus-node-%d", id);
    } else {
        if (gethostname(host, sizeof host) != 0)
            strcpy(host, "localhost");
        host[sizeof host - 1] = '\0';
        sanitize(host);
    }
    snprintf(key, sizeof key, "locus-host-%d", b->rank);
    if (locus_boot_put(b, key, host) || locus_boot_fence(b)) {
        snprintf(err, errlen, "PMI: node identity exchange failed");
        return -1;
    }
    char (*names)[BOOT_NODE_NAME] = malloc((size_t)b->size * sizeof *names);
    if (!names) {
        snprintf(err, errlen, "out of memory for %d node names", b->size);
        return -1;
    }
    int nnodes = 0;
    for (int r = 0; r < b->size; r++) {
        snprintf(key, sizeof key, "locus-host-%d", r);
        if (r == b->rank) {
            strcpy(val, host);
        } else if (locus_boot_get(b, r, key, val, sizeof val)) {
            snprintf(err, errlen, "PMI: no node name for rank %d", r);
            free(names);
            return -1;
        }
        b->node_of[r] = boot_node_index(names, &nnodes, val);
    }
    free(names);
    return nnodes;
}

/* ---- start-up phases ------------------------------------------------------ */

double boot_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void locus_boot_phase(locus_boot_t *b, int phase)
{
    double t = boot_now();
    b->count[b->phase].seconds += t - b->phase_t0;
    b->phase = phase;
    b->phase_t0 = t;
}

const char *locus_boot_phase_name(int phase)
{
    static const char *const names[LOCUS_BOOT_NPHASES] = {
        "pmi", "nodemap", "shm", "net", "rest", "run" };
    return phase >= 0 && phase < LOCUS_BOOT_NPHASES ? names[phase] : "?";
}

_Static_assert(sizeof LOCUS_TP_NODE_KEY == sizeof PMI_WIRE_NODE_KEY,
               "the transports' and the PMI wire's node-scoped key prefix differ");

static const char *const addr_names[LOCUS_ADDR_NSTRATEGIES] = {
    "simple", "shm", "roots", "lazy", "fabric" };

const char *locus_boot_addr_name(int strategy)
{
    return strategy >= 0 && strategy < LOCUS_ADDR_NSTRATEGIES ? addr_names[strategy] : "?";
}

static int addr_strategy(locus_boot_t *b, char *err, size_t errlen)
{
    const char *s = locus_tunable_str("LOCUS_ADDR_EXCHANGE");
    b->addr_auto = strcmp(s, "auto") == 0;
    if (b->addr_auto) {
        long from = 0;
        if (locus_tunable_long("LOCUS_ADDR_FABRIC_NODES", &from, err, errlen) != 0)
            return -1;
        if (from < 1 || from > INT_MAX) {
            snprintf(err, errlen, "LOCUS_ADDR_FABRIC_NODES=%ld: expected a node count of 1 or more",
                     from);
            return -1;
        }
        b->addr_fabric_nodes = (int)from;
        b->addr_strategy = LOCUS_ADDR_ROOTS; /* settled once the node count is known */
        return 0;
    }
    for (int i = 0; i < LOCUS_ADDR_NSTRATEGIES; i++)
        if (strcmp(s, addr_names[i]) == 0) {
            b->addr_strategy = i;
            return 0;
        }
    snprintf(err, errlen, "LOCUS_ADDR_EXCHANGE=%.40s: expected auto, simple, shm, roots, lazy "
             "or fabric", s);
    return -1;
}

/* auto: by the job's node count, which every rank knows alike. The start-up
 * model and the measurements (docs/startup.md) cross at a few nodes: below
 * LOCUS_ADDR_FABRIC_NODES `roots` (no listener beyond the process manager),
 * from there `fabric`, whose root-to-root allgather keeps the launcher's
 * fence from carrying every node's blob to every node. */
static void addr_strategy_settle(locus_boot_t *b)
{
    if (b->addr_auto && b->nnodes >= b->addr_fabric_nodes)
        b->addr_strategy = LOCUS_ADDR_FABRIC;
}

/* ---- init ---------------------------------------------------------------- */

static void set_jobid(locus_boot_t *b)
{
    const char *j = locus_tunable_str("LOCUS_JOBID");
    if (!*j)
        j = b->singleton ? "" : b->kvsname;
    if (!*j) {
        snprintf(b->jobid, sizeof b->jobid, "single%ld", (long)getpid());
        return;
    }
    size_t n = 0;
    for (; *j && n < sizeof b->jobid - 1; j++)
        b->jobid[n++] = (isalnum((unsigned char)*j) || *j == '_' || *j == '.' || *j == '-')
                            ? *j : '_';
    b->jobid[n] = '\0';
}

/* The job's key (locus_auth.h). locusrun gives its ranks LOCUS_KVSNAME,
 * the kvs they are connected to: those must have its LOCUS_JOB_KEY. A
 * derived key is left in LOCUS_JOB_KEY too, where every listener of this
 * process reads it (as LOCUS_JOBID is left for the shared-memory names). */
static int job_key(locus_boot_t *b, char *err, size_t errlen)
{
    if (b->singleton)
        return 0;
    const char *kvs = getenv("LOCUS_KVSNAME");
    int by_locusrun = kvs && strcmp(kvs, b->kvsname) == 0;
    char why[256];
    if (locus_auth_key_job(b->kvsname, by_locusrun, &b->key, &b->key_from, why,
                           sizeof why) != 0) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    if (b->key_from == LOCUS_AUTH_KEY_DERIVED) {
        char hex[LOCUS_AUTH_KEY_HEX + 1];
        locus_auth_key_hex(&b->key, hex);
        setenv("LOCUS_JOB_KEY", hex, 0);
    }
    return 0;
}

/* LOCUS_UNIVERSE_SIZE, where set (locusrun counts its host list's slots;
 * its PMI server answers only the job's size), wins over the process
 * manager's. Never below the job's size: a value left in the environment
 * by an outer job may be smaller than this one. */
static int universe_size(locus_boot_t *b, char *err, size_t errlen)
{
    const char *s = locus_tunable_str("LOCUS_UNIVERSE_SIZE");
    if (!*s)
        return 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (*end != '\0' || end == s || v < 1 || v > INT_MAX) {
        snprintf(err, errlen, "LOCUS_UNIVERSE_SIZE=%.40s: expected a process count", s);
        return -1;
    }
    b->universe_size = v < b->size ? b->size : (int)v;
    return 0;
}

int locus_boot_init(locus_boot_t *b, char *err, size_t errlen)
{
    memset(b, 0, sizeof *b);
    b->phase_t0 = boot_now();
    if (addr_strategy(b, err, errlen) != 0 || boot_pm_connect(b, err, errlen) ||
        universe_size(b, err, errlen) != 0)
        return -1;
    if (job_key(b, err, errlen) != 0)
        return -1;
    locus_boot_phase(b, LOCUS_BOOT_PH_NODEMAP);
    set_jobid(b);
    b->node_of = calloc((size_t)b->size, sizeof *b->node_of);
    if (!b->node_of) {
        snprintf(err, errlen, "out of memory for the node map of %d ranks", b->size);
        return -1;
    }
    if (b->singleton) {
        b->nnodes = 1;
    } else {
        int n = boot_pm_node_map(b, b->node_of);
        if (n > 0) {
            b->mapping_from = 1;
            /* locusrun numbers nodes in order of their first rank, as the
             * mapping's reader does: the two must agree. Its proxy also
             * completes a barrier of its node's ranks itself. */
            int id = launcher_node_id(b);
            b->node_barrier = id >= 0;
            if (id >= 0 && id != b->node_of[b->rank]) {
                snprintf(err, errlen, "the process manager's node map puts rank %d on node %d, but "
                         "LOCUS_NODE_ID says node %d", b->rank, b->node_of[b->rank], id);
                return -1;
            }
        } else {
            n = map_by_exchange(b, err, errlen);
            if (n < 0)
                return -1;
            b->mapping_from = 2;
        }
        b->nnodes = n;
    }
    addr_strategy_settle(b);
    int me = b->node_of[b->rank];
    for (int r = 0; r < b->size; r++)
        b->local_size += b->node_of[r] == me;
    b->local_ranks = malloc((size_t)b->local_size * sizeof *b->local_ranks);
    if (!b->local_ranks) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int k = 0;
    for (int r = 0; r < b->size; r++) {
        if (b->node_of[r] == me) {
            if (r == b->rank)
                b->local_rank = k;
            b->local_ranks[k++] = r;
        }
    }
    return 0;
}

/* PMI-1 values cannot hold spaces or non-printable bytes, PMI-2 values no
 * ';'; the transports' values may, so the kvs escapes them as %XX (and '%'
 * itself). */
int locus_boot_escape(const char *in, char *out, size_t outlen)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
        if (n + 4 > outlen)
            return -1;
        if (*p <= 32 || *p >= 127 || *p == '%' || *p == ';')
            n += (size_t)snprintf(out + n, outlen - n, "%%%02X", *p);
        else
            out[n++] = (char)*p;
    }
    if (n >= outlen)
        return -1;
    out[n] = '\0';
    return (int)n;
}

int locus_boot_unescape(const char *in, char *out, size_t outlen)
{
    size_t n = 0;
    for (const char *p = in; *p; p++) {
        unsigned x;
        if (n + 1 >= outlen)
            return -1;
        if (*p == '%' && p[1] && p[2] && sscanf(p + 1, "%2x", &x) == 1) {
            out[n++] = (char)x;
            p += 2;
        } else {
            out[n++] = *p;
        }
    }
    out[n] = '\0';
    return (int)n;
}

int boot_kvs_put(locus_boot_t *b, const char *key, const char *val)
{
    char enc[PMI_WIRE_VALLEN_MAX + 1];
    if (locus_boot_escape(val, enc, sizeof enc) < 0)
        return -1;
    return locus_boot_put(b, key, enc);
}

int boot_kvs_get(locus_boot_t *b, int owner, const char *key, char *val, size_t vallen)
{
    char enc[PMI_WIRE_VALLEN_MAX + 1];
    if (locus_boot_get(b, owner, key, enc, sizeof enc))
        return -1;
    return locus_boot_unescape(enc, val, vallen) < 0 ? -1 : 0;
}

static int kvs_put(void *ctx, const char *key, const char *val)
{
    return boot_kvs_put(ctx, key, val);
}

static int kvs_get(void *ctx, int owner, const char *key, char *val, size_t vallen)
{
    return boot_kvs_get(ctx, owner, key, val, vallen);
}

static int kvs_fence(void *ctx)
{
    return locus_boot_fence(ctx);
}

static int kvs_node_fence(void *ctx)
{
    return locus_boot_node_fence(ctx);
}

static int kvs_publish(void *ctx, const char *name, const char *card)
{
    return locus_boot_publish(ctx, name, card);
}

static int kvs_card(void *ctx, const char *name, int rank, char *val, size_t vallen)
{
    return locus_boot_card(ctx, name, rank, val, vallen);
}

static const char *kvs_error(void *ctx)
{
    return locus_boot_addr_error(ctx);
}

locus_tp_kvs_t locus_boot_kvs(locus_boot_t *b)
{
    locus_tp_kvs_t k = { .ctx = b, .put = kvs_put, .get = kvs_get, .fence = kvs_fence,
                         .node_fence = kvs_node_fence, .publish = kvs_publish,
                         .card = kvs_card, .error = kvs_error };
    return k;
}
