/*
 * Construction and teardown: tunables, rails, the card published through
 * the kvs's address exchange, the ops table, counters and error reporting.
 */
#include "locus_tunables.h"
#include "tcp_tp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <unistd.h>

void tcp_fail(tcp_tp_t *tp, int code, const char *fmt, ...)
{
    if (tp->failed)
        return; /* the first cause is the one worth telling */
    tp->failed = code < 0 ? code : -EPROTO;
    int k = snprintf(tp->errmsg, sizeof tp->errmsg, "tcp: rank %d: ", tp->rank);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tp->errmsg + k, sizeof tp->errmsg - (size_t)k, fmt, ap);
    va_end(ap);
    if (tp->cfg.verbose)
        fprintf(stderr, "locus: %s\n", tp->errmsg);
}

/* LOCUS_VERBOSE=1: one line on stderr about a choice the user may want to
 * know of (a rail that fell back to another route, a refused stranger). */
void tcp_note(const tcp_tp_t *tp, const char *fmt, ...)
{
    if (!tp->cfg.verbose)
        return;
    char line[400];
    int k = snprintf(line, sizeof line, "locus: rank %d: tcp: ", tp->rank);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + k, sizeof line - (size_t)k, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s\n", line);
}

int tcp_cfg_range(const char *name, long v, long lo, long hi, char *err, size_t errlen)
{
    if (v >= lo && v <= hi)
        return 0;
    snprintf(err, errlen, "%s=%s: expected %ld..%ld", name, locus_tunable_str(name), lo, hi);
    return -1;
}

static int cfg_read(tcp_cfg_t *c, char *err, size_t errlen)
{
    long verbose = 0;
    if (locus_tunable_long("LOCUS_TCP_EAGER_MAX", &c->eager_max, err, errlen) ||
        locus_tunable_long("LOCUS_TCP_CHUNK_SIZE", &c->chunk_size, err, errlen) ||
        locus_tunable_long("LOCUS_TCP_SNDBUF", &c->sndbuf, err, errlen) ||
        locus_tunable_long("LOCUS_TCP_RCVBUF", &c->rcvbuf, err, errlen) ||
        locus_tunable_long("LOCUS_TCP_SENDQ_MAX", &c->sendq_max, err, errlen) ||
        locus_tunable_long("LOCUS_TCP_CONNECT_TIMEOUT", &c->connect_timeout, err, errlen) ||
        locus_tunable_long("LOCUS_TCP_BYE_TIMEOUT", &c->bye_timeout, err, errlen) ||
        locus_tunable_long("LOCUS_TCP_USER_TIMEOUT", &c->user_timeout, err, errlen) ||
        locus_tunable_long("LOCUS_TCP_RAIL_TIMEOUT", &c->rail_timeout_ms, err, errlen) ||
        locus_tunable_long("LOCUS_TCP_RAILS", &c->max_rails, err, errlen) ||
        locus_tunable_long("LOCUS_AUTH_TIMEOUT_MS", &c->auth_timeout_ms, err, errlen) ||
        locus_tunable_long("LOCUS_AUTH_PENDING_MAX", &c->auth_pending_max, err, errlen) ||
        locus_tunable_long("LOCUS_VERBOSE", &verbose, err, errlen))
        return -1;
    c->verbose = verbose > 0;
    if (tcp_cfg_range("LOCUS_TCP_EAGER_MAX", c->eager_max, 0, 64L << 20, err, errlen) ||
        tcp_cfg_range("LOCUS_TCP_CHUNK_SIZE", c->chunk_size, 4096, 64L << 20, err, errlen) ||
        tcp_cfg_range("LOCUS_TCP_SNDBUF", c->sndbuf, 0, 1L << 30, err, errlen) ||
        tcp_cfg_range("LOCUS_TCP_RCVBUF", c->rcvbuf, 0, 1L << 30, err, errlen) ||
        tcp_cfg_range("LOCUS_TCP_SENDQ_MAX", c->sendq_max, 4096, 1L << 34, err, errlen) ||
        tcp_cfg_range("LOCUS_TCP_CONNECT_TIMEOUT", c->connect_timeout, 1, 3600, err, errlen) ||
        tcp_cfg_range("LOCUS_TCP_BYE_TIMEOUT", c->bye_timeout, 1, 3600, err, errlen) ||
        tcp_cfg_range("LOCUS_TCP_USER_TIMEOUT", c->user_timeout, 0, 3600, err, errlen) ||
        tcp_cfg_range("LOCUS_TCP_RAIL_TIMEOUT", c->rail_timeout_ms, 0, 3600000, err, errlen) ||
        tcp_cfg_range("LOCUS_TCP_RAILS", c->max_rails, 0, TCP_MAX_RAILS, err, errlen) ||
        tcp_cfg_range("LOCUS_AUTH_TIMEOUT_MS", c->auth_timeout_ms, 10, 600000, err, errlen) ||
        tcp_cfg_range("LOCUS_AUTH_PENDING_MAX", c->auth_pending_max, 1, 65536, err, errlen))
        return -1;
    return tcp_qos_cfg_read(&c->qos, err, errlen);
}

static void tp_destroy(tcp_tp_t *tp)
{
    explicit_bzero(&tp->key, sizeof tp->key);
    for (int i = 0; i < tp->nrails; i++)
        if (tp->rails[i].fd >= 0)
            close(tp->rails[i].fd);
    if (tp->ep >= 0)
        close(tp->ep);
    if (tp->peers)
        for (int p = 0; p < tp->size; p++) {
            for (int k = 0; k < TCP_CLASSES; k++)
                tcp_queue_free(&tp->peers[p].waitq[k]);
            tcp_held_free(&tp->peers[p]);
            tcp_limbo_free(&tp->peers[p]);
            free(tp->peers[p].card);
        }
    tp_ids_free(&tp->sids);
    tp_ids_free(&tp->rids);
    free(tp->peers);
    free(tp);
}

static void tcp_tp_finalize(locus_tp_t *t)
{
    tcp_tp_t *tp = (tcp_tp_t *)t;
    tcp_shutdown(tp);
    tp_destroy(tp);
}

static int tcp_tp_reaches(locus_tp_t *t, int peer)
{
    tcp_tp_t *tp = (tcp_tp_t *)t;
    return (unsigned)peer < (unsigned)tp->size && peer != tp->rank;
}

static const char *tcp_tp_last_error(locus_tp_t *t)
{
    tcp_tp_t *tp = (tcp_tp_t *)t;
    return tp->failed ? tp->errmsg : NULL;
}

static void tcp_tp_where(locus_tp_t *t, char *buf, size_t len)
{
    const tcp_tp_t *tp = (const tcp_tp_t *)t;
    size_t k = 0;
    buf[0] = '\0';
    for (int r = 0; r < tp->nrails && k < len; r++)
        k += (size_t)snprintf(buf + k, len - k, "%s%s", r ? "+" : "", tp->rails[r].ifname);
}

const locus_tp_ops_t tcp_tp_ops = {
    .name = "tcp", .send = tcp_tp_send, .rndv_recv = tcp_tp_rndv_recv,
    .progress = tcp_tp_progress, .reaches = tcp_tp_reaches, .finalize = tcp_tp_finalize,
    .wait = tcp_tp_wait, .last_error = tcp_tp_last_error, .where = tcp_tp_where,
};

/* Everything before the card is published that can fail locally. */
static int setup_local(tcp_tp_t *tp, char *err, size_t errlen)
{
    if (cfg_read(&tp->cfg, err, errlen) != 0)
        return -1;
    tp->ncls = tp->cfg.qos.s.mode == TCP_QOS_OFF ? 1 : TCP_CLASSES;
    char why[256];
    if (locus_auth_key_env(&tp->key, why, sizeof why) != 0) {
        snprintf(err, errlen, "tcp: %s", why);
        return -1;
    }
    tp->peers = calloc((size_t)tp->size, sizeof *tp->peers);
    if (!tp->peers) {
        snprintf(err, errlen, "tcp: out of memory for %d peers", tp->size);
        return -1;
    }
    tp->ep = epoll_create1(EPOLL_CLOEXEC);
    if (tp->ep < 0) {
        snprintf(err, errlen, "tcp: epoll_create1: %s", strerror(errno));
        return -1;
    }
    if (getrandom(&tp->nonce, sizeof tp->nonce, GRND_NONBLOCK) != sizeof tp->nonce)
        tp->nonce = locus_now_ns() * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
    if (tcp_rails_pick(tp, err, errlen) != 0)
        return -1;
    /* Every other rank may dial every lane at once (the first round of an
     * all-to-all): those are not a flood, and the job holds that many
     * connections anyway once they are proven. */
    long lanes = (long)(tp->size - 1) * tp->nrails * tp->ncls;
    if (lanes > tp->cfg.auth_pending_max)
        tp->cfg.auth_pending_max = lanes;
    for (int i = 0; i < tp->nrails; i++) {
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &tp->rails[i] };
        if (epoll_ctl(tp->ep, EPOLL_CTL_ADD, tp->rails[i].fd, &ev) != 0) {
            snprintf(err, errlen, "tcp: epoll_ctl: %s", strerror(errno));
            return -1;
        }
    }
    return 0;
}

static void rails_report(const tcp_tp_t *tp)
{
    char line[300];
    size_t k = 0;
    line[0] = '\0';
    for (int i = 0; i < tp->nrails && k < sizeof line; i++) {
        char ip[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &tp->rails[i].addr.sin_addr, ip, sizeof ip);
        k += (size_t)snprintf(line + k, sizeof line - k, "%s%s %s:%u", i ? ", " : "",
                              tp->rails[i].ifname, ip, ntohs(tp->rails[i].addr.sin_port));
    }
    tcp_note(tp, "%d rail%s (%s): %s", tp->nrails, tp->nrails == 1 ? "" : "s",
             *locus_tunable_str("LOCUS_NET_IFACES") ? "LOCUS_NET_IFACES" : "found here", line);
}

int locus_tp_tcp_create(const locus_tp_init_t *in, locus_tp_t **out, char *err, size_t errlen)
{
    const locus_tp_kvs_t *kvs = &in->kvs;
    *out = NULL;
    tcp_tp_t *tp = calloc(1, sizeof *tp);
    if (!tp) {
        snprintf(err, errlen, "tcp: out of memory");
        (void)kvs->publish(kvs->ctx, "tcp", "-"); /* on every path: nobody waits for us */
        return -1;
    }
    tp->base.ops = &tcp_tp_ops;
    tp->up = *in->up;
    tp->core = in->core;
    tp->kvs = in->kvs;
    tp->rank = in->rank;
    tp->size = in->size;
    tp->ep = -1;
    tp->pump_head = -1;
    for (int i = 0; i < TCP_MAX_RAILS; i++)
        tp->rails[i].fd = -1;

    int rc = setup_local(tp, err, errlen);
    char val[400] = "-";
    if (rc == 0) {
        tcp_card_t card = { .nonce = tp->nonce, .eager_max = (uint64_t)tp->cfg.eager_max,
                            .ncls = tp->ncls, .nrails = tp->nrails };
        for (int i = 0; i < tp->nrails; i++)
            card.addr[i] = tp->rails[i].addr;
        if (tcp_card_format(&card, val, sizeof val) != 0) {
            snprintf(err, errlen, "tcp: card too long");
            rc = -1;
            strcpy(val, "-");
        }
    }
    if (kvs->publish(kvs->ctx, "tcp", val) != 0 && rc == 0) {
        snprintf(err, errlen, "tcp: %s", kvs->error(kvs->ctx));
        rc = -1;
    }
    if (rc != 0) {
        tp_destroy(tp);
        return -1;
    }
    tp->stats.nrails = tp->nrails;
    tp->stats.eager_max = (uint64_t)tp->cfg.eager_max;
    tp->stats.qos = tp->cfg.qos.s.mode;
    rails_report(tp);
    if (tp->ncls > 1)
        tcp_note(tp, "traffic classes (LOCUS_QOS=%s): DSCP latency %d, normal %d, bulk %d",
                 tcp_qos_name(tp->cfg.qos.s.mode), tp->cfg.qos.dscp[TCP_CLS_LATENCY],
                 tp->cfg.qos.dscp[TCP_CLS_NORMAL], tp->cfg.qos.dscp[TCP_CLS_BULK]);
    *out = &tp->base;
    return 0;
}

void tcp_tp_stats(const locus_tp_t *t, tcp_stats_t *out)
{
    *out = ((const tcp_tp_t *)t)->stats;
}
