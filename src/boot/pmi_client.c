/* The PMI-1 client: connection, handshake and the lock-step commands. */
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

static int parse_int(const char *s, int *out)
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
        if (parse_int(v, dst[i]) != 0) {
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

int boot_connect(locus_boot_t *b, char *err, size_t errlen)
{
    const char *fds = getenv("PMI_FD");
    const char *port = getenv("PMI_PORT");
    b->fd = -1;
    b->rank = 0;
    b->size = 1;
    if (getenv("PMIX_RANK") && !fds && !port) {
        snprintf(err, errlen, "started by a PMIx launcher (Open MPI's mpirun?): "
                 "Locus speaks PMI-1; use locusrun or mpiexec.mpich");
        return -1;
    }
    if (!fds && !port) {
        b->singleton = 1;
        return 0;
    }
    if (fds) {
        if (parse_int(fds, &b->fd)) {
            snprintf(err, errlen, "PMI_FD=%s: not a file descriptor number", fds);
            return -1;
        }
        const char *r = getenv("PMI_RANK"), *s = getenv("PMI_SIZE");
        if ((r && parse_int(r, &b->rank)) || (s && parse_int(s, &b->size)) || b->size < 1 ||
            b->rank >= b->size) {
            snprintf(err, errlen, "PMI_RANK=%s PMI_SIZE=%s: not a valid rank/size",
                     r ? r : "", s ? s : "");
            return -1;
        }
        pmi_reader_init(&b->rd, b->fd);
    } else {
        b->fd = connect_port(port, err, errlen);
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
    parse_int(pmi_msg_get(&m, "vallen_max"), &b->vallen_max);
    len = pmi_msg_format(line, sizeof line, "get_appnum", NULL);
    if (boot_call(b, line, len, "appnum", &m, err, errlen))
        return -1;
    parse_int(pmi_msg_get(&m, "appnum"), &b->appnum);
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
        parse_int(pmi_msg_get(&m, "size"), &b->universe_size);
    return 0;
}

int locus_boot_put(locus_boot_t *b, const char *key, const char *val)
{
    if (b->singleton)
        return 0;
    char line[PMI_WIRE_LINE_MAX], err[256];
    pmi_msg_t m;
    int len = pmi_msg_format(line, sizeof line, "put", "kvsname", b->kvsname, "key", key,
                             "value", val, NULL);
    locus_boot_count_t *c = &b->count[b->phase];
    c->puts++;
    c->put_bytes += (long)(strlen(key) + strlen(val));
    return boot_call(b, line, len, "put_result", &m, err, sizeof err);
}

int locus_boot_get(locus_boot_t *b, const char *key, char *val, size_t vallen)
{
    if (b->singleton)
        return -1;
    char line[PMI_WIRE_LINE_MAX], err[256];
    pmi_msg_t m;
    int len = pmi_msg_format(line, sizeof line, "get", "kvsname", b->kvsname, "key", key, NULL);
    b->count[b->phase].gets++;
    if (boot_call(b, line, len, "get_result", &m, err, sizeof err))
        return -1;
    const char *found = pmi_msg_get(&m, "found");
    const char *v = pmi_msg_get(&m, "value");
    b->count[b->phase].get_bytes += v ? (long)strlen(v) : 0;
    if (!v || (found && strcmp(found, "FALSE") == 0))
        return -1;
    if (strlen(v) >= vallen)
        return -1;
    strcpy(val, v);
    return 0;
}

int locus_boot_fence(locus_boot_t *b)
{
    if (b->singleton)
        return 0;
    char line[PMI_WIRE_LINE_MAX], err[256];
    pmi_msg_t m;
    int len = pmi_msg_format(line, sizeof line, "barrier_in", NULL);
    b->count[b->phase].fences++;
    return boot_call(b, line, len, "barrier_out", &m, err, sizeof err);
}

int locus_boot_fence_progress(locus_boot_t *b, int (*progress)(void *arg), void *arg)
{
    if (b->singleton)
        return 0;
    char line[PMI_WIRE_LINE_MAX];
    pmi_msg_t m;
    int len = pmi_msg_format(line, sizeof line, "barrier_in", NULL);
    b->count[b->phase].fences++;
    if (len < 0 || pmi_write_all(b->fd, line, (size_t)len) != 0)
        return -1;
    /* Spin while progress moves something; once idle a while, sleep in
     * poll() a millisecond at a time so a long wait costs no CPU. */
    long idle = 0;
    for (;;) {
        int rc = pmi_reader_next(&b->rd, &m);
        if (rc == PMI_WIRE_OK) {
            const char *rcs = pmi_msg_get(&m, "rc");
            return strcmp(m.cmd, "barrier_out") == 0 && (!rcs || strcmp(rcs, "0") == 0) ? 0 : -1;
        }
        if (rc != PMI_WIRE_EAGAIN)
            return -1;
        int n = progress(arg);
        if (n < 0)
            return -1;
        idle = n > 0 ? 0 : idle + 1;
        struct pollfd p = { .fd = b->fd, .events = POLLIN };
        rc = poll(&p, 1, idle > 1000 ? 1 : 0);
        if (rc < 0 && errno != EINTR)
            return -1;
        if (rc > 0 && (rc = pmi_reader_fill(&b->rd)) <= 0 && rc != PMI_WIRE_EAGAIN)
            return -1;
    }
}

void locus_boot_abort(locus_boot_t *b, int code, const char *msg)
{
    (void)msg; /* PMI-1 values cannot carry spaces; the caller printed it */
    if (!b->singleton && b->fd >= 0) {
        char line[PMI_WIRE_LINE_MAX], num[16];
        snprintf(num, sizeof num, "%d", code);
        int len = pmi_msg_format(line, sizeof line, "abort", "exitcode", num, NULL);
        if (len > 0)
            pmi_write_all(b->fd, line, (size_t)len);
    }
    _exit(code ? code : 1);
}

void locus_boot_finalize(locus_boot_t *b)
{
    if (!b->singleton && b->fd >= 0) {
        char line[PMI_WIRE_LINE_MAX], err[256];
        pmi_msg_t m;
        int len = pmi_msg_format(line, sizeof line, "finalize", NULL);
        boot_call(b, line, len, "finalize_ack", &m, err, sizeof err);
        close(b->fd);
        b->fd = -1;
    }
    locus_boot_addr_free(b);
    free(b->node_of);
    free(b->local_ranks);
    b->node_of = NULL;
    b->local_ranks = NULL;
}
