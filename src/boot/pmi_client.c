/* The PMI-1 backend: connection, handshake and the lock-step commands;
 * the wire helpers PMI-2 shares. */
#include "locus_boot.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "boot_priv.h"

/* Sends one formatted line and reads the reply, which must be `expect`
 * with rc=0 (or no rc). Returns 0, or -1 with err set. */
int boot_call(locus_boot_t *b, const char *line, int len, const char *expect,
              pmi_msg_t *reply, char *err, size_t errlen)
{
    if (len < 0) {
        snprintf(err, errlen, "PMI: cannot format a %s request (%s)", expect,
                 pmi_wire_strerror(len));
        return -1;
    }
    if (pmi_write_all(b->fd, line, (size_t)len) != 0) {
        snprintf(err, errlen, "PMI: write to the process manager failed: %s", strerror(errno));
        return -1;
    }
    int rc = pmi_reader_wait(&b->rd, reply);
    if (rc != PMI_WIRE_OK) {
        snprintf(err, errlen, "PMI: no %s from the process manager (%s)", expect,
                 pmi_wire_strerror(rc));
        return -1;
    }
    if (strcmp(reply->cmd, expect) != 0) {
        snprintf(err, errlen, "PMI: expected cmd=%s, got cmd=%s", expect, reply->cmd);
        return -1;
    }
    const char *rcs = pmi_msg_get(reply, "rc");
    if (rcs && strcmp(rcs, "0") != 0) {
        const char *m = pmi_msg_get(reply, "msg");
        if (!m)
            m = pmi_msg_get(reply, "errmsg");
        snprintf(err, errlen, "PMI: %s failed (rc=%s%s%s)", expect, rcs, m ? ", " : "",
                 m ? m : "");
        return -1;
    }
    return 0;
}

static int connect_port(const char *hostport, char *err, size_t errlen)
{
    char host[256];
    const char *colon = strrchr(hostport, ':');
    if (!colon || colon == hostport || (size_t)(colon - hostport) >= sizeof host) {
        snprintf(err, errlen, "PMI_PORT=%s: expected host:port", hostport);
        return -1;
    }
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = '\0';
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
    int gai = getaddrinfo(host, colon + 1, &hints, &ai);
    if (gai != 0) {
        snprintf(err, errlen, "PMI_PORT=%s: %s", hostport, gai_strerror(gai));
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *a = ai; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0)
            continue;
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
            break;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    if (fd < 0)
        snprintf(err, errlen, "PMI_PORT=%s: cannot connect: %s", hostport, strerror(errno));
    return fd;
}

int boot_parse_int(const char *s, int *out)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 0 || v > 0x7fffffff)
        return -1;
    *out = (int)v;
    return 0;
}

/* rank= and size= of an initack-sequence message, when present; -1 with
 * err set when one is there but not a number. */
static int initack_take(const pmi_msg_t *m, locus_boot_t *b, int *got_rank, int *got_size,
                        char *err, size_t errlen)
{
    static const char *const keys[] = { "rank", "size" };
    int *dst[] = { &b->rank, &b->size }, *got[] = { got_rank, got_size };
    for (int i = 0; i < 2; i++) {
        const char *v = pmi_msg_get(m, keys[i]);
        if (v == NULL)
            continue;
        if (boot_parse_int(v, dst[i]) != 0) {
            snprintf(err, errlen, "PMI: initack: %s=%s is not a number", keys[i], v);
            return -1;
        }
        *got[i] = 1;
    }
    return 0;
}

/* PMI_PORT start-up: initack, then three "cmd=set" lines. The rank and
 * size come from the server here, so they are checked here: a rank outside
 * 0..size-1 would index every per-rank table out of bounds. */
static int boot_initack(locus_boot_t *b, char *err, size_t errlen)
{
    char line[PMI_WIRE_LINE_MAX];
    pmi_msg_t m;
    const char *id = getenv("PMI_ID");
    int got_rank = 0, got_size = 0;
    int len = pmi_msg_format(line, sizeof line, "initack", "pmiid", id ? id : "0", NULL);
    if (boot_call(b, line, len, "initack", &m, err, errlen) ||
        initack_take(&m, b, &got_rank, &got_size, err, errlen))
        return -1;
    for (int i = 0; i < 3; i++) {
        int rc = pmi_reader_wait(&b->rd, &m);
        if (rc != PMI_WIRE_OK || strcmp(m.cmd, "set") != 0) {
            snprintf(err, errlen, "PMI: malformed initack sequence");
            return -1;
        }
        if (initack_take(&m, b, &got_rank, &got_size, err, errlen))
            return -1;
    }
    if (!got_rank || !got_size) {
        snprintf(err, errlen, "PMI: initack sequence without a %s", got_rank ? "size" : "rank");
        return -1;
    }
    if (b->size < 1 || b->rank >= b->size) {
        snprintf(err, errlen, "PMI: the process manager gave rank %d of a job of size %d",
                 b->rank, b->size);
        return -1;
    }
    return 0;
}

/* The descriptor and PMI_RANK/PMI_SIZE that Hydra, locusrun and Slurm
 * export with it (PMI-1 and PMI-2 alike). */
int boot_take_fd(locus_boot_t *b, char *err, size_t errlen)
{
    const char *fds = getenv("PMI_FD");
    if (boot_parse_int(fds, &b->fd)) {
        snprintf(err, errlen, "PMI_FD=%s: not a file descriptor number", fds ? fds : "");
        return -1;
    }
    const char *r = getenv("PMI_RANK"), *s = getenv("PMI_SIZE");
    if ((r && boot_parse_int(r, &b->rank)) || (s && boot_parse_int(s, &b->size)) || b->size < 1 ||
        b->rank >= b->size) {
        snprintf(err, errlen, "PMI_RANK=%s PMI_SIZE=%s: not a valid rank/size",
                 r ? r : "", s ? s : "");
        return -1;
    }
    pmi_reader_init(&b->rd, b->fd);
    return 0;
}

static int pmi1_connect(locus_boot_t *b, char *err, size_t errlen)
{
    if (getenv("PMI_FD")) {
        if (boot_take_fd(b, err, errlen))
            return -1;
    } else {
        b->fd = connect_port(getenv("PMI_PORT"), err, errlen);
        if (b->fd < 0)
            return -1;
        pmi_reader_init(&b->rd, b->fd);
        if (boot_initack(b, err, errlen))
            return -1;
    }

    char line[PMI_WIRE_LINE_MAX];
    pmi_msg_t m;
    int len = pmi_msg_format(line, sizeof line, "init", "pmi_version", "1",
                             "pmi_subversion", "1", NULL);
    if (boot_call(b, line, len, "response_to_init", &m, err, errlen))
        return -1;
    len = pmi_msg_format(line, sizeof line, "get_maxes", NULL);
    if (boot_call(b, line, len, "maxes", &m, err, errlen))
        return -1;
    b->vallen_max = PMI_WIRE_VALLEN_MAX;
    boot_parse_int(pmi_msg_get(&m, "vallen_max"), &b->vallen_max);
    len = pmi_msg_format(line, sizeof line, "get_appnum", NULL);
    if (boot_call(b, line, len, "appnum", &m, err, errlen))
        return -1;
    boot_parse_int(pmi_msg_get(&m, "appnum"), &b->appnum);
    len = pmi_msg_format(line, sizeof line, "get_my_kvsname", NULL);
    if (boot_call(b, line, len, "my_kvsname", &m, err, errlen))
        return -1;
    const char *kvs = pmi_msg_get(&m, "kvsname");
    if (!kvs || !*kvs) {
        snprintf(err, errlen, "PMI: my_kvsname without a kvsname");
        return -1;
    }
    snprintf(b->kvsname, sizeof b->kvsname, "%s", kvs);
    b->universe_size = b->size;
    len = pmi_msg_format(line, sizeof line, "get_universe_size", NULL);
    if (boot_call(b, line, len, "universe_size", &m, err, errlen) == 0)
        boot_parse_int(pmi_msg_get(&m, "size"), &b->universe_size);
    return 0;
}

static int pmi1_put(locus_boot_t *b, const char *key, const char *val)
{
    char line[PMI_WIRE_LINE_MAX], err[256];
    pmi_msg_t m;
    int len = pmi_msg_format(line, sizeof line, "put", "kvsname", b->kvsname, "key", key,
                             "value", val, NULL);
    return boot_call(b, line, len, "put_result", &m, err, sizeof err);
}

/* The value of a get_result / kvs-get-response into val: 0, or -1 when
 * it was not found or does not fit. */
int boot_wire_value(const pmi_msg_t *m, char *val, size_t vallen)
{
    const char *found = pmi_msg_get(m, "found");
    const char *v = pmi_msg_get(m, "value");
    if (!v || (found && strcmp(found, "FALSE") == 0) || strlen(v) >= vallen)
        return -1;
    strcpy(val, v);
    return 0;
}

static int pmi1_get(locus_boot_t *b, int owner, const char *key, char *val, size_t vallen)
{
    (void)owner; /* one kvs for the job */
    char line[PMI_WIRE_LINE_MAX], err[256];
    pmi_msg_t m;
    int len = pmi_msg_format(line, sizeof line, "get", "kvsname", b->kvsname, "key", key, NULL);
    if (boot_call(b, line, len, "get_result", &m, err, sizeof err))
        return -1;
    return boot_wire_value(&m, val, vallen);
}

static int pmi1_node_map(locus_boot_t *b, int *node_of)
{
    char val[PMI_WIRE_VALLEN_MAX + 1];
    if (pmi1_get(b, -1, "PMI_process_mapping", val, sizeof val) != 0)
        return 0;
    int n = locus_boot_parse_mapping(val, b->size, node_of);
    return n > 0 ? n : 0;
}

static int pmi1_fence_begin(locus_boot_t *b)
{
    char line[PMI_WIRE_LINE_MAX];
    int len = pmi_msg_format(line, sizeof line, "barrier_in", NULL);
    return len < 0 || pmi_write_all(b->fd, line, (size_t)len) != 0 ? -1 : 0;
}

static int pmi1_node_fence_begin(locus_boot_t *b)
{
    char line[PMI_WIRE_LINE_MAX], group[32];
    snprintf(group, sizeof group, "NODE:%d", b->node_fences++);
    int len = pmi_msg_format(line, sizeof line, "barrier_in", "group", group, NULL);
    return len < 0 || pmi_write_all(b->fd, line, (size_t)len) != 0 ? -1 : 0;
}

int boot_wire_fence_test(locus_boot_t *b, const char *expect, int any_rc, int wait_ms)
{
    pmi_msg_t m;
    for (int round = 0; round < 2; round++) {
        int rc = pmi_reader_next(&b->rd, &m);
        if (rc == PMI_WIRE_OK) {
            const char *rcs = pmi_msg_get(&m, "rc");
            return strcmp(m.cmd, expect) == 0 && (any_rc || !rcs || strcmp(rcs, "0") == 0) ? 1 : -1;
        }
        if (rc != PMI_WIRE_EAGAIN || round == 1)
            return rc == PMI_WIRE_EAGAIN ? 0 : -1;
        struct pollfd p = { .fd = b->fd, .events = POLLIN };
        rc = poll(&p, 1, wait_ms);
        if (rc < 0 && errno != EINTR)
            return -1;
        if (rc <= 0)
            return 0;
        if ((rc = pmi_reader_fill(&b->rd)) <= 0 && rc != PMI_WIRE_EAGAIN)
            return -1;
    }
    return 0;
}

static int pmi1_fence_test(locus_boot_t *b, int wait_ms)
{
    return boot_wire_fence_test(b, "barrier_out", 0, wait_ms);
}

static void pmi1_abort(locus_boot_t *b, int code, const char *msg)
{
    (void)msg; /* PMI-1 values cannot carry spaces; the caller printed it */
    if (b->fd >= 0) {
        char line[PMI_WIRE_LINE_MAX], num[16];
        snprintf(num, sizeof num, "%d", code);
        int len = pmi_msg_format(line, sizeof line, "abort", "exitcode", num, NULL);
        if (len > 0)
            pmi_write_all(b->fd, line, (size_t)len);
    }
}

/* Sends `line`, waits for `expect`, closes the descriptor. */
void boot_wire_finalize(locus_boot_t *b, const char *line, int len, const char *expect)
{
    if (b->fd < 0)
        return;
    char err[256];
    pmi_msg_t m;
    boot_call(b, line, len, expect, &m, err, sizeof err);
    close(b->fd);
    b->fd = -1;
}

static void pmi1_finalize(locus_boot_t *b)
{
    char line[PMI_WIRE_LINE_MAX];
    boot_wire_finalize(b, line, pmi_msg_format(line, sizeof line, "finalize", NULL),
                       "finalize_ack");
}

const boot_pm_t boot_pm_pmi1 = {
    .name = "pmi1", .connect = pmi1_connect, .put = pmi1_put, .get = pmi1_get,
    .node_map = pmi1_node_map, .fence_begin = pmi1_fence_begin,
    .fence_test = pmi1_fence_test, .node_fence_begin = pmi1_node_fence_begin,
    .abort = pmi1_abort, .finalize = pmi1_finalize,
};
