/*
 * proxy_pmi.c — the PMI-1 server of the proxy, one lock-step connection
 * per rank. Responses copy Hydra's (reference/pmi.md): rc right after
 * cmd=, reserved PMI_ keys refused, missing keys answered rc!=0,
 * barrier_out carrying tag=. A client that misbehaves gets an rc error and
 * the connection stays usable; nothing it sends can stall the proxy.
 */
#include "proxy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static void reply(proxy_t *px, prank_t *p, const char *line, int len)
{
    if (len < 0)
        return;
    if (px->pmi_trace)
        fprintf(stderr, "locusrun pmi: rank %d <- %s", p->rank, line);
    /* Never block on a client: one that lets its replies pile up until
     * the socket is full is broken, and is dropped like a closed one. */
    size_t off = 0;
    while (p->pmi_fd >= 0 && off < (size_t)len) {
        ssize_t n = send(p->pmi_fd, line + off, (size_t)len - off,
                         MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) {
            off += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            proxy_pmi_drop(px, p);
            return;
        }
    }
}

#define REPLY(px, p, ...) do { \
    char out_[PMI_WIRE_LINE_MAX + 2]; \
    reply(px, p, out_, pmi_msg_format(out_, sizeof out_, __VA_ARGS__, (char *)NULL)); \
} while (0)

static void reply_err(proxy_t *px, prank_t *p, const char *cmd, const char *why)
{
    REPLY(px, p, cmd, "rc", "-1", "msg", why);
}

/* Name of the response to a request, NULL when the request is unknown. */
static const char *response_name(const char *cmd)
{
    static const char *const map[][2] = {
        { "init", "response_to_init" }, { "get_maxes", "maxes" },
        { "get_appnum", "appnum" }, { "get_universe_size", "universe_size" },
        { "get_my_kvsname", "my_kvsname" }, { "put", "put_result" },
        { "get", "get_result" }, { "barrier_in", "barrier_out" },
        { "finalize", "finalize_ack" }, { "publish_name", "publish_result" },
        { "unpublish_name", "unpublish_result" }, { "lookup_name", "lookup_result" },
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(map[i][0], cmd) == 0)
            return map[i][1];
    return NULL;
}

static void do_init(proxy_t *px, prank_t *p, const pmi_msg_t *m)
{
    const char *ver = pmi_msg_get(m, "pmi_version");
    const char *sub = pmi_msg_get(m, "pmi_subversion");
    if (p->pmi_state != PMI_ST_NEW) {
        reply_err(px, p, "response_to_init", "already_initialized");
        return;
    }
    if (ver == NULL || strcmp(ver, "1") != 0 || sub == NULL) {
        /* Only PMI-1 is served; say which version we speak. */
        REPLY(px, p, "response_to_init", "rc", "-1", "pmi_version", "1",
              "pmi_subversion", "2", "msg", "unsupported_version");
        return;
    }
    p->pmi_state = PMI_ST_INIT;
    REPLY(px, p, "response_to_init", "rc", "0", "pmi_version", "1", "pmi_subversion", "2");
}

static void do_get(proxy_t *px, prank_t *p, const pmi_msg_t *m)
{
    const char *key = pmi_msg_get(m, "key");
    const char *kvs = pmi_msg_get(m, "kvsname");
    char num[32];
    const char *val = NULL;
    if (key == NULL || key[0] == '\0') {
        reply_err(px, p, "get_result", "missing_key");
        return;
    }
    if (kvs != NULL && strcmp(kvs, px->kvsname) != 0) {
        reply_err(px, p, "get_result", "unknown_kvsname");
        return;
    }
    if (strcmp(key, "PMI_process_mapping") == 0) {
        val = px->mapping;
    } else if (strcmp(key, "universeSize") == 0) {
        snprintf(num, sizeof num, "%d", px->size);
        val = num;
    } else {
        val = kvs_get(&px->kvs, key);
    }
    px->served.gets++;
    if (val == NULL) {
        px->served.gets_missed++;
        REPLY(px, p, "get_result", "rc", "1", "msg", "key_not_found");
        return;
    }
    px->served.bytes_out += (long)strlen(val);
    REPLY(px, p, "get_result", "rc", "0", "value", val);
}

/*
 * Stores a pair, charging it to the local rank `owner` (-1: a pair from
 * another node, charged there). Returns 0, 1 when the owner would pass its
 * bound (LOCUS_PMI_KVS_KEYS_MAX/BYTES_MAX; nothing stored), -1 when out of
 * memory. A hostile or broken client cannot grow the store without bound.
 */
static int kvs_store(proxy_t *px, const char *key, const char *val, int owner)
{
    const kvs_slot_t *old = kvs_find(&px->kvs, key);
    long klen = (long)strlen(key), vlen = (long)strlen(val);
    long old_len = old ? klen + (long)strlen(old->val) : 0;
    int old_owner = old ? old->owner : -1;
    if (owner >= 0) {
        const prank_t *p = &px->ranks[owner];
        long keys = p->kvs_keys + 1, bytes = p->kvs_bytes + klen + vlen;
        if (old_owner == owner) {
            keys--;
            bytes -= old_len;
        }
        if (keys > px->kvs_keys_max || bytes > px->kvs_bytes_max)
            return 1;
    }
    /* node-scoped keys (LOCUS_TP_NODE_KEY) are read on this node only */
    if (kvs_put(&px->kvs, key, val, owner, !pmi_wire_node_key(key)) < 0)
        return -1;
    if (old_owner >= 0) {
        px->ranks[old_owner].kvs_keys--;
        px->ranks[old_owner].kvs_bytes -= old_len;
    }
    if (owner >= 0) {
        px->ranks[owner].kvs_keys++;
        px->ranks[owner].kvs_bytes += klen + vlen;
    }
    return 0;
}

int proxy_kvs_remote(proxy_t *px, const char *key, const char *val)
{
    return kvs_store(px, key, val, -1) < 0 ? -1 : 0;
}

static void do_put(proxy_t *px, prank_t *p, const pmi_msg_t *m)
{
    const char *key = pmi_msg_get(m, "key");
    const char *val = pmi_msg_get(m, "value");
    const char *kvs = pmi_msg_get(m, "kvsname");
    if (key == NULL || key[0] == '\0' || val == NULL) {
        reply_err(px, p, "put_result", "missing_key_or_value");
    } else if (kvs != NULL && strcmp(kvs, px->kvsname) != 0) {
        reply_err(px, p, "put_result", "unknown_kvsname");
    } else if (strncmp(key, "PMI_", 4) == 0) {
        REPLY(px, p, "put_result", "rc", "1", "msg", "reserved_key");
    } else {
        px->served.puts++;
        px->served.node_puts += pmi_wire_node_key(key);
        px->served.bytes_in += (long)(strlen(key) + strlen(val));
        int rc = kvs_store(px, key, val, (int)(p - px->ranks));
        if (rc == 0) {
            REPLY(px, p, "put_result", "rc", "0");
        } else if (rc < 0) {
            reply_err(px, p, "put_result", "out_of_memory");
        } else {
            reply_err(px, p, "put_result", "kvs_limit");
            proxy_fail(px, p, 1, "rank %d (pid %d) on %s put more than %ld PMI keys or %ld "
                       "bytes (LOCUS_PMI_KVS_KEYS_MAX, LOCUS_PMI_KVS_BYTES_MAX); killing the job",
                       p->rank, (int)p->pid, px->host, px->kvs_keys_max, px->kvs_bytes_max);
        }
    }
}

/* Local members of a group "WORLD", "NODE" or "r0,r1,...": fills in[] and
 * returns how many, or -1 when the list is malformed, names a rank outside
 * the job, or does not contain the caller. *spans: it has members on other
 * nodes (so the front end completes it). */
static int group_members(proxy_t *px, prank_t *p, const char *spec, size_t len,
                         unsigned char *in, int *spans)
{
    *spans = 0;
    if ((len == 5 && !strncmp(spec, "WORLD", 5)) || (len == 4 && !strncmp(spec, "NODE", 4))) {
        memset(in, 1, (size_t)px->nlocal);
        *spans = spec[0] == 'W' && px->nnodes > 1;
        return px->nlocal;
    }
    memset(in, 0, (size_t)px->nlocal);
    int n = 0, self = 0;
    for (size_t i = 0; i < len;) {
        long r = 0;
        size_t d = i;
        while (i < len && spec[i] >= '0' && spec[i] <= '9' && r < 10000000)
            r = r * 10 + (spec[i++] - '0');
        if (i == d || (i < len && spec[i] != ',') || r >= px->size)
            return -1;
        i++;
        int found = 0;
        for (int k = 0; k < px->nlocal; k++) {
            if (px->ranks[k].rank == r) {
                found = 1;
                if (!in[k])
                    n++;
                in[k] = 1;
                self |= (&px->ranks[k] == p);
            }
        }
        *spans |= !found;
    }
    return self ? n : -1;
}

/* Answers every member and forgets the barrier (b is invalid after). */
static void barrier_finish(proxy_t *px, pbarrier_t *b)
{
    for (int k = 0; k < px->nlocal; k++) {
        if (!b->in[k])
            continue;
        px->ranks[k].nbarriers--;
        if (px->ranks[k].pmi_state == PMI_ST_INIT)
            REPLY(px, &px->ranks[k], "barrier_out", "rc", "0", "tag", b->tag);
    }
    free(b->in);
    *b = px->barriers[--px->nbarriers];
}

static int relay_pair(void *ctx, const char *key, const char *val)
{
    return proxy_up_pair(ctx, key, val);
}

static void barrier_check(proxy_t *px, pbarrier_t *b)
{
    if (b->arrived < b->expected || b->relayed)
        return;
    if (!b->spans) {
        /* Every member is here: no need to ask the front end. Local puts
         * are visible on this node already. */
        barrier_finish(px, b);
        return;
    }
    /* New local pairs go up before the fence, so they reach the other
     * nodes before the front end answers barrier_out. */
    kvs_flush(&px->kvs, relay_pair, px);
    b->relayed = 1;
    proxy_up_fence(px, b->group);  /* b may be finished (freed) in there */
}

void proxy_pmi_barrier_done(proxy_t *px, const char *group)
{
    if (proxy_pmix_fence_done(px, group))
        return;
    for (int i = px->nbarriers - 1; i >= 0; i--)
        if (px->barriers[i].relayed && strcmp(px->barriers[i].group, group) == 0)
            barrier_finish(px, &px->barriers[i]);
}

/* A new outstanding barrier for group, or NULL (reply sent). */
static pbarrier_t *barrier_new(proxy_t *px, prank_t *p, const char *group, size_t speclen)
{
    pbarrier_t *nb = realloc(px->barriers, (size_t)(px->nbarriers + 1) * sizeof *nb);
    if (nb == NULL) {
        reply_err(px, p, "barrier_out", "out_of_memory");
        return NULL;
    }
    px->barriers = nb;
    pbarrier_t *b = &nb[px->nbarriers];
    memset(b, 0, sizeof *b);
    b->in = calloc((size_t)px->nlocal, 1);
    unsigned char *members = calloc((size_t)px->nlocal, 1);
    int n = members && b->in ? group_members(px, p, group, speclen, members, &b->spans) : -1;
    free(members);
    if (n < 0) {
        free(b->in);
        reply_err(px, p, "barrier_out", "bad_group");
        return NULL;
    }
    snprintf(b->group, sizeof b->group, "%s", group);
    snprintf(b->tag, sizeof b->tag, "%s", group + speclen + 1);
    b->expected = n;
    px->nbarriers++;
    return b;
}

static void do_barrier(proxy_t *px, prank_t *p, const pmi_msg_t *m)
{
    const char *grp = pmi_msg_get(m, "group");
    char group[PMI_WIRE_VALLEN_MAX + 1];
    snprintf(group, sizeof group, "%s", grp ? grp : "WORLD:0");
    const char *colon = strrchr(group, ':');
    if (colon == NULL || colon[1] == '\0' || strlen(colon + 1) >= 32) {
        reply_err(px, p, "barrier_out", "bad_group");
        return;
    }
    size_t speclen = (size_t)(colon - group);
    pbarrier_t *b = NULL;
    for (int i = 0; i < px->nbarriers && b == NULL; i++)
        if (strcmp(px->barriers[i].group, group) == 0)
            b = &px->barriers[i];
    int k = (int)(p - px->ranks);
    if (b != NULL && b->in[k]) {
        reply_err(px, p, "barrier_out", "already_in_barrier");
        return;
    }
    if (p->nbarriers >= px->barriers_max) {
        /* Each would hold a slot until the others come: bounded per rank. */
        reply_err(px, p, "barrier_out", "too_many_barriers");
        proxy_fail(px, p, 1, "rank %d (pid %d) on %s entered more than %ld PMI barriers at "
                   "once (LOCUS_PMI_BARRIERS_MAX); killing the job", p->rank, (int)p->pid,
                   px->host, px->barriers_max);
        return;
    }
    /* Membership is derived per arrival so a rank outside a rank-list
     * group cannot complete it. */
    unsigned char *mine = calloc((size_t)px->nlocal, 1);
    int spans;
    int ok = mine && group_members(px, p, group, speclen, mine, &spans) >= 0;
    free(mine);
    if (!ok) {
        reply_err(px, p, "barrier_out", "not_a_member");
        return;
    }
    if (b == NULL && (b = barrier_new(px, p, group, speclen)) == NULL)
        return;
    b->in[k] = 1;
    b->arrived++;
    px->served.barriers++;
    p->nbarriers++;
    barrier_check(px, b);
}

void proxy_rank_abort(proxy_t *px, prank_t *p, long code, const char *msg)
{
    int status = (int)(code & 0xff);
    if (status == 0)
        status = 1;  /* an abort is a failure even with code 0 */
    p->pmi_state = PMI_ST_FINALIZED;  /* its exit is expected now */
    proxy_fail(px, p, status, "rank %d (pid %d) on %s called abort with exit code %ld%s%s",
               p->rank, (int)p->pid, px->host, code, msg && msg[0] ? ": " : "", msg ? msg : "");
}

/* MPICH writes abort messages without escaping their spaces; take the
 * exit code and the rest of the line as text rather than refusing it. */
static int try_raw_abort(proxy_t *px, prank_t *p)
{
    pmi_reader_t *r = p->pmi_rd;
    char *nl = memchr(r->buf, '\n', r->len);
    if (r->discarding || nl == NULL || r->len < 9 || memcmp(r->buf, "cmd=abort", 9) != 0 ||
        (r->buf[9] != ' ' && r->buf[9] != '\n'))
        return 0;
    char line[PMI_WIRE_LINE_MAX + 1];
    size_t len = (size_t)(nl - r->buf);
    if (len > PMI_WIRE_LINE_MAX)
        len = PMI_WIRE_LINE_MAX;
    memcpy(line, r->buf, len);
    line[len] = '\0';
    for (char *c = line; *c; c++)
        if ((unsigned char)*c < 32 || (unsigned char)*c > 126)
            *c = '?';
    memmove(r->buf, nl + 1, r->len - (size_t)(nl + 1 - r->buf));
    r->len -= (size_t)(nl + 1 - r->buf);
    if (px->pmi_trace)
        fprintf(stderr, "locusrun pmi: rank %d -> %s\n", p->rank, line);
    char *code = strstr(line, "exitcode=");
    char *msg = strstr(line, "message=");
    if (msg == NULL)
        msg = strstr(line, "msg=");
    if (msg)
        msg = strchr(msg, '=') + 1;
    if (code) {
        code += 9;
        char *end = code + strcspn(code, " ");
        if (*end && (msg == NULL || end < msg))
            *end = '\0';
    }
    proxy_rank_abort(px, p, code ? strtol(code, NULL, 10) : 1, msg);
    return 1;
}

static void dispatch(proxy_t *px, prank_t *p, const pmi_msg_t *m)
{
    const char *cmd = m->cmd;
    const char *resp = response_name(cmd);
    char num[32];

    if (strcmp(cmd, "abort") == 0) {
        const char *code = pmi_msg_get(m, "exitcode");
        proxy_rank_abort(px, p, code ? strtol(code, NULL, 10) : 1, pmi_msg_get(m, "message"));
        return;
    }
    if (resp == NULL) {
        reply_err(px, p, "error", "unknown_command");
        return;
    }
    if (strcmp(cmd, "init") == 0) {
        do_init(px, p, m);
        return;
    }
    if (p->pmi_state != PMI_ST_INIT) {
        reply_err(px, p, resp, p->pmi_state == PMI_ST_NEW ? "init_first" : "after_finalize");
        return;
    }
    if (strcmp(cmd, "get_maxes") == 0) {
        REPLY(px, p, resp, "rc", "0", "kvsname_max", "256", "keylen_max", "64",
              "vallen_max", "1024");
    } else if (strcmp(cmd, "get_appnum") == 0) {
        REPLY(px, p, resp, "rc", "0", "appnum", "0");
    } else if (strcmp(cmd, "get_universe_size") == 0) {
        snprintf(num, sizeof num, "%d", px->size);
        REPLY(px, p, resp, "rc", "0", "size", num);
    } else if (strcmp(cmd, "get_my_kvsname") == 0) {
        REPLY(px, p, resp, "rc", "0", "kvsname", px->kvsname);
    } else if (strcmp(cmd, "put") == 0) {
        do_put(px, p, m);
    } else if (strcmp(cmd, "get") == 0) {
        do_get(px, p, m);
    } else if (strcmp(cmd, "barrier_in") == 0) {
        do_barrier(px, p, m);
    } else if (strcmp(cmd, "finalize") == 0) {
        p->pmi_state = PMI_ST_FINALIZED;
        REPLY(px, p, resp, "rc", "0");
    } else if (strcmp(cmd, "lookup_name") == 0) {
        REPLY(px, p, resp, "rc", "1", "msg", "service_not_found");
    } else {
        /* publish/unpublish: name service is not offered. */
        reply_err(px, p, resp, "not_supported");
    }
}

void proxy_pmi_serve(proxy_t *px, prank_t *p)
{
    pmi_msg_t *m = &px->pmsg;
    for (;;) {
        if (try_raw_abort(px, p))
            continue;
        int rc = pmi_reader_next(p->pmi_rd, m);
        if (rc == PMI_WIRE_EAGAIN)
            return;
        if (rc != PMI_WIRE_OK) {
            if (px->pmi_trace)
                fprintf(stderr, "locusrun pmi: rank %d -> (bad line: %s)\n", p->rank,
                        pmi_wire_strerror(rc));
            reply_err(px, p, "error", rc == PMI_WIRE_ETOOLONG ? "too_long"
                                      : rc == PMI_WIRE_ETOOMANY ? "too_many_tokens"
                                                                : "malformed");
            continue;
        }
        if (px->pmi_trace) {
            fprintf(stderr, "locusrun pmi: rank %d -> cmd=%s", p->rank, m->cmd);
            for (int i = 0; i < m->ntokens; i++)
                fprintf(stderr, " %s=%s", m->tokens[i].key, m->tokens[i].val);
            fputc('\n', stderr);
        }
        dispatch(px, p, m);
        if (p->pmi_fd < 0)
            return;
    }
}
