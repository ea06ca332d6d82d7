/*
 * The PMI-2 backend (pmi.md A1b): a PMI-1 "init" asking for version 2,
 * then length-framed commands on PMI_FD. Slurm's pmi2 plugin and Hydra
 * serve it. Node-scoped keys (PMI_WIRE_NODE_KEY) are node attributes:
 * info-putnodeattr, and info-getnodeattr with wait=TRUE, which blocks
 * until a process of the node put the key.
 */
#include "locus_boot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot_priv.h"

#define PMI2_FRAME_MAX (PMI_WIRE_LINE_MAX + 8)

static int pmi2_connect(locus_boot_t *b, char *err, size_t errlen)
{
    if (boot_take_fd(b, err, errlen))
        return -1;
    char line[PMI2_FRAME_MAX];
    pmi_msg_t m;
    int len = pmi_msg_format(line, sizeof line, "init", "pmi_version", "2",
                             "pmi_subversion", "0", NULL);
    if (boot_call(b, line, len, "response_to_init", &m, err, errlen))
        return -1;
    const char *v = pmi_msg_get(&m, "pmi_version");
    if (!v || strcmp(v, "2") != 0) {
        snprintf(err, errlen, "PMI-2: the process manager answered init with version %s",
                 v ? v : "(none)");
        return -1;
    }
    b->rd.v2 = 1;
    /* Slurm refuses fullinit without all three keys (pmi.md). */
    const char *jobid = getenv("PMI_JOBID"), *id = getenv("PMI_ID");
    char rank[16];
    snprintf(rank, sizeof rank, "%d", b->rank);
    len = pmi2_msg_format(line, sizeof line, "fullinit", "pmijobid", jobid ? jobid : "",
                          "pmirank", id ? id : rank, "threaded", "FALSE", NULL);
    if (boot_call(b, line, len, "fullinit-response", &m, err, errlen))
        return -1;
    int r = -1, s = -1;
    if (boot_parse_int(pmi_msg_get(&m, "rank"), &r) || boot_parse_int(pmi_msg_get(&m, "size"), &s) ||
        s < 1 || r >= s) {
        snprintf(err, errlen, "PMI-2: fullinit-response without a valid rank and size");
        return -1;
    }
    b->rank = r;
    b->size = s;
    boot_parse_int(pmi_msg_get(&m, "appnum"), &b->appnum);
    len = pmi2_msg_format(line, sizeof line, "job-getid", NULL);
    if (boot_call(b, line, len, "job-getid-response", &m, err, errlen))
        return -1;
    const char *job = pmi_msg_get(&m, "jobid");
    if (!job || !*job || strlen(job) > PMI_WIRE_KVSNAME_MAX) {
        snprintf(err, errlen, "PMI-2: job-getid-response without a job id");
        return -1;
    }
    snprintf(b->kvsname, sizeof b->kvsname, "%s", job);
    b->vallen_max = PMI_WIRE_VALLEN_MAX; /* PMI2_MAX_VALLEN; there is no get_maxes */
    b->universe_size = b->size;
    char val[32];
    len = pmi2_msg_format(line, sizeof line, "info-getjobattr", "key", "universeSize", NULL);
    if (boot_call(b, line, len, "info-getjobattr-response", &m, err, errlen) == 0 &&
        boot_wire_value(&m, val, sizeof val) == 0)
        boot_parse_int(val, &b->universe_size);
    return 0;
}

static int pmi2_put(locus_boot_t *b, const char *key, const char *val)
{
    char line[PMI2_FRAME_MAX], err[256];
    pmi_msg_t m;
    int node = pmi_wire_node_key(key);
    int len = pmi2_msg_format(line, sizeof line, node ? "info-putnodeattr" : "kvs-put", "key",
                              key, "value", val, NULL);
    return boot_call(b, line, len, node ? "info-putnodeattr-response" : "kvs-put-response", &m,
                     err, sizeof err);
}

static int pmi2_get(locus_boot_t *b, int owner, const char *key, char *val, size_t vallen)
{
    (void)owner; /* one kvs for the job */
    char line[PMI2_FRAME_MAX], err[256];
    pmi_msg_t m;
    int node = pmi_wire_node_key(key);
    int len = node ? pmi2_msg_format(line, sizeof line, "info-getnodeattr", "key", key, "wait",
                                     "TRUE", NULL)
                   : pmi2_msg_format(line, sizeof line, "kvs-get", "key", key, NULL);
    if (boot_call(b, line, len, node ? "info-getnodeattr-response" : "kvs-get-response", &m, err,
                  sizeof err))
        return -1;
    return boot_wire_value(&m, val, vallen);
}

static int pmi2_node_map(locus_boot_t *b, int *node_of)
{
    char line[PMI2_FRAME_MAX], err[256], val[PMI_WIRE_VALLEN_MAX + 1];
    pmi_msg_t m;
    int len = pmi2_msg_format(line, sizeof line, "info-getjobattr", "key",
                              "PMI_process_mapping", NULL);
    if (boot_call(b, line, len, "info-getjobattr-response", &m, err, sizeof err) ||
        boot_wire_value(&m, val, sizeof val))
        return 0;
    int n = locus_boot_parse_mapping(val, b->size, node_of);
    return n > 0 ? n : 0;
}

static int pmi2_send(locus_boot_t *b, const char *cmd, const char *key)
{
    char line[PMI2_FRAME_MAX];
    int len = pmi2_msg_format(line, sizeof line, cmd, key ? "key" : NULL, key, NULL);
    return len < 0 || pmi_write_all(b->fd, line, (size_t)len) != 0 ? -1 : 0;
}

/*
 * Hydra answers kvs-fence at once (measured: 4.0.2 with one rank 0.5 s
 * late) and holds back a kvs-get of a missing key until every rank has
 * fenced; Slurm's fence is itself a barrier. A fence is therefore
 * kvs-fence, then a get of a key nobody puts, whose found=FALSE answer
 * (any rc: Slurm may call it a failure) marks that everyone is there.
 */
#define PMI2_SYNC_KEY "locus.fence-sync"

static int pmi2_fence_begin(locus_boot_t *b)
{
    b->fence_step = 0;
    return pmi2_send(b, "kvs-fence", NULL);
}

static int pmi2_fence_test(locus_boot_t *b, int wait_ms)
{
    if (b->fence_step == 0) {
        int rc = boot_wire_fence_test(b, "kvs-fence-response", 0, wait_ms);
        if (rc != 1)
            return rc;
        if (pmi2_send(b, "kvs-get", PMI2_SYNC_KEY) != 0)
            return -1;
        b->fence_step = 1;
    }
    return boot_wire_fence_test(b, "kvs-get-response", 1, wait_ms);
}

static void pmi2_abort(locus_boot_t *b, int code, const char *msg)
{
    (void)code; /* PMI-2's abort carries no exit code: the launcher picks one */
    char text[256], line[PMI2_FRAME_MAX];
    snprintf(text, sizeof text, "%s", msg ? msg : "");
    for (char *p = text; *p; p++)
        if (*p == ';' || *p == '\n')
            *p = ',';
    int len = pmi2_msg_format(line, sizeof line, "abort", "isworld", "TRUE", "msg", text, NULL);
    if (b->fd >= 0 && len > 0)
        pmi_write_all(b->fd, line, (size_t)len);
}

static void pmi2_finalize(locus_boot_t *b)
{
    char line[PMI2_FRAME_MAX];
    boot_wire_finalize(b, line, pmi2_msg_format(line, sizeof line, "finalize", NULL),
                       "finalize-response");
}

const boot_pm_t boot_pm_pmi2 = {
    .name = "pmi2", .connect = pmi2_connect, .put = pmi2_put, .get = pmi2_get,
    .node_map = pmi2_node_map, .fence_begin = pmi2_fence_begin,
    .fence_test = pmi2_fence_test, .abort = pmi2_abort, .finalize = pmi2_finalize,
};
