/*
 * The PMIx backend, through OpenPMIx's client library (libpmix): what
 * Open MPI's mpirun, prterun and srun --mpi=pmix serve. Locus's kvs is one
 * flat name space, PMIx's is per process: a put is PMIx_Put(GLOBAL), a
 * fence commits and collects (PMIX_COLLECT_DATA) and a get asks for the
 * key from the process that put it. The node map comes from the server's
 * per-process job data (PMIX_NODEID or PMIX_HOSTNAME), with no exchange.
 */
#include "locus_boot.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "boot_priv.h"

#ifdef LOCUS_HAVE_PMIX
#include <pmix.h>

typedef struct {
    pmix_proc_t me;
    pmix_info_t collect;        /* kept alive until the fence's callback */
    atomic_int fence_done;      /* 0 pending, 1 done */
    atomic_int fence_status;
} pmix_state_t;

static pmix_state_t *state(locus_boot_t *b)
{
    return b->pmix;
}

/* An integer job attribute of `rank` (PMIX_RANK_WILDCARD: the job's). */
static int pmix_get_int(locus_boot_t *b, pmix_rank_t rank, const char *key, long *out)
{
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, state(b)->me.nspace, rank);
    pmix_value_t *v = NULL;
    if (PMIx_Get(&p, key, NULL, 0, &v) != PMIX_SUCCESS || !v)
        return -1;
    int rc = 0;
    switch (v->type) {
    case PMIX_UINT32: *out = (long)v->data.uint32; break;
    case PMIX_UINT16: *out = (long)v->data.uint16; break;
    case PMIX_INT: *out = (long)v->data.integer; break;
    case PMIX_UINT64: *out = (long)v->data.uint64; break;
    case PMIX_SIZE: *out = (long)v->data.size; break;
    case PMIX_PROC_RANK: *out = (long)v->data.rank; break;
    default: rc = -1;
    }
    PMIX_VALUE_RELEASE(v);
    return rc;
}

static int pmix_connect(locus_boot_t *b, char *err, size_t errlen)
{
    pmix_state_t *st = calloc(1, sizeof *st);
    if (!st) {
        snprintf(err, errlen, "PMIx: out of memory");
        return -1;
    }
    b->pmix = st;
    pmix_status_t rc = PMIx_Init(&st->me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        snprintf(err, errlen, "PMIx: PMIx_Init failed: %s (is the launcher's PMIx server "
                 "reachable, and of a compatible version?)", PMIx_Error_string(rc));
        free(st);
        b->pmix = NULL;
        return -1;
    }
    long size = 0, v;
    if (pmix_get_int(b, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, &size) || size < 1 ||
        (long)st->me.rank >= size) {
        snprintf(err, errlen, "PMIx: no valid job size for rank %u", st->me.rank);
        return -1;
    }
    b->rank = (int)st->me.rank;
    b->size = (int)size;
    b->universe_size = b->size;
    if (pmix_get_int(b, PMIX_RANK_WILDCARD, PMIX_UNIV_SIZE, &v) == 0 && v >= size)
        b->universe_size = (int)v;
    if (pmix_get_int(b, st->me.rank, PMIX_APPNUM, &v) == 0 && v >= 0)
        b->appnum = (int)v;
    snprintf(b->kvsname, sizeof b->kvsname, "%s", st->me.nspace);
    b->vallen_max = PMI_WIRE_VALLEN_MAX; /* PMIx has no limit; Locus's buffers do */
    return 0;
}

static int pmix_put(locus_boot_t *b, const char *key, const char *val)
{
    (void)b;
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_STRING;
    v.data.string = (char *)val; /* PMIx_Put copies it */
    /* node-scoped keys stay with the node's PMIx server */
    pmix_scope_t scope = pmi_wire_node_key(key) ? PMIX_LOCAL : PMIX_GLOBAL;
    return PMIx_Put(scope, key, &v) == PMIX_SUCCESS ? 0 : -1;
}

/* A string value of `rank`'s into val: 0, or -1 when absent, not a
 * string or too long. */
static int pmix_get_str(locus_boot_t *b, pmix_rank_t rank, const char *key, char *val,
                        size_t vallen)
{
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, state(b)->me.nspace, rank);
    pmix_value_t *v = NULL;
    if (PMIx_Get(&p, key, NULL, 0, &v) != PMIX_SUCCESS || !v)
        return -1;
    int rc = v->type == PMIX_STRING && v->data.string && strlen(v->data.string) < vallen
                 ? 0 : -1;
    if (rc == 0)
        strcpy(val, v->data.string);
    PMIX_VALUE_RELEASE(v);
    return rc;
}

static int pmix_get(locus_boot_t *b, int owner, const char *key, char *val, size_t vallen)
{
    return pmix_get_str(b, owner >= 0 ? (pmix_rank_t)owner : PMIX_RANK_UNDEF, key, val, vallen);
}

/* Node of every rank from the server's job data, no exchange: PMIX_NODEID
 * where the server gives it for every rank, else PMIX_HOSTNAME (a string
 * the server gives for every process, where PMIX_NODEID may cover only
 * this node's: Open MPI 4.1). */
static int pmix_node_map(locus_boot_t *b, int *node_of)
{
    char (*names)[BOOT_NODE_NAME] = malloc((size_t)b->size * sizeof *names);
    if (!names)
        return 0;
    int by_id = 1, nnodes = 0;
    for (int r = 0; r < b->size && nnodes >= 0; r++) {
        long id = -1;
        if (by_id && (pmix_get_int(b, (pmix_rank_t)r, PMIX_NODEID, &id) || id < 0)) {
            by_id = 0;
            r = -1;     /* start again by host name */
            nnodes = 0;
            continue;
        }
        char key[BOOT_NODE_NAME];
        if (by_id)
            snprintf(key, sizeof key, "#%ld", id);
        else if (pmix_get_str(b, (pmix_rank_t)r, PMIX_HOSTNAME, key, sizeof key) != 0)
            nnodes = -1;
        if (nnodes < 0)
            break;
        node_of[r] = boot_node_index(names, &nnodes, key);
    }
    free(names);
    return nnodes > 0 ? nnodes : 0;
}

static void fence_done(pmix_status_t status, void *cbdata)
{
    pmix_state_t *st = cbdata;
    atomic_store(&st->fence_status, status);
    atomic_store(&st->fence_done, 1);
}

static int pmix_fence_begin(locus_boot_t *b)
{
    pmix_state_t *st = state(b);
    if (PMIx_Commit() != PMIX_SUCCESS)
        return -1;
    bool collect = true;
    PMIX_INFO_LOAD(&st->collect, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    atomic_store(&st->fence_done, 0);
    return PMIx_Fence_nb(NULL, 0, &st->collect, 1, fence_done, st) == PMIX_SUCCESS ? 0 : -1;
}

/* The callback runs on libpmix's progress thread: wait in short sleeps. */
static int pmix_fence_test(locus_boot_t *b, int wait_ms)
{
    pmix_state_t *st = state(b);
    double until = boot_now() + (wait_ms < 0 ? 1e9 : wait_ms * 1e-3);
    for (;;) {
        if (atomic_load(&st->fence_done))
            return atomic_load(&st->fence_status) == PMIX_SUCCESS ? 1 : -1;
        if (wait_ms == 0 || boot_now() >= until)
            return 0;
        struct timespec ts = { 0, 50 * 1000 };
        nanosleep(&ts, NULL);
    }
}

static void pmix_abort(locus_boot_t *b, int code, const char *msg)
{
    if (b->pmix) /* else PMIx_Init failed: there is no server to tell */
        PMIx_Abort(code, msg ? msg : "", NULL, 0);
}

static void pmix_finalize(locus_boot_t *b)
{
    if (b->pmix)
        PMIx_Finalize(NULL, 0);
    free(b->pmix);
    b->pmix = NULL;
}

#else /* built without libpmix */

static int pmix_connect(locus_boot_t *b, char *err, size_t errlen)
{
    (void)b;
    snprintf(err, errlen, "started by a PMIx launcher, but this Locus was built without "
             "OpenPMIx (install libpmix-dev and rebuild), or use locusrun or mpiexec.hydra");
    return -1;
}
#define pmix_put NULL
#define pmix_get NULL
#define pmix_node_map NULL
#define pmix_fence_begin NULL
#define pmix_fence_test NULL
#define pmix_abort NULL
#define pmix_finalize NULL
#endif

const boot_pm_t boot_pm_pmix = {
    .name = "pmix", .connect = pmix_connect, .put = pmix_put, .get = pmix_get,
    .node_map = pmix_node_map, .fence_begin = pmix_fence_begin,
    .fence_test = pmix_fence_test, .abort = pmix_abort, .finalize = pmix_finalize,
};
