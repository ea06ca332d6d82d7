/*
 * Accepting connections and the handshake: the hello that names the
 * dialler (rank, job nonce, rail), its answer, and simultaneous dials
 * settled by rank (the lower rank's dial wins).
 */
#include "tcp_tp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

/* Queues a handshake message (a header alone) on c. */
static int hello_queue(tcp_tp_t *tp, tcp_conn_t *c, const void *head, size_t len)
{
    tcp_qent_t *e = tcp_qent_new(0);
    if (!e) {
        tcp_fail(tp, -ENOMEM, "out of memory");
        return -1;
    }
    memcpy(e->head, head, len);
    e->head_len = (uint32_t)len;
    tcp_queue_push(&c->q, e);
    tcp_conn_dirty(tp, c);
    return 0;
}

void tcp_hello_send(tcp_tp_t *tp, tcp_conn_t *c)
{
    const tcp_peer_t *pe = &tp->peers[c->peer];
    tcp_hello_t h = {
        .magic = TCP_HELLO_MAGIC, .version = TCP_WIRE_VERSION,
        .rail = (uint8_t)c->rail, .nconn = (uint8_t)pe->nconn,
        .cls = (uint8_t)c->cls, .ncls = (uint8_t)pe->ncls,
        .src = tp->rank, .dst = c->peer, .eager_max = (uint32_t)tp->cfg.eager_max,
        .src_nonce = tp->nonce, .dst_nonce = pe->card->nonce,
    };
    hello_queue(tp, c, &h, sizeof h);
}

void tcp_accept_all(tcp_tp_t *tp, tcp_rail_t *rail)
{
    for (;;) {
        int fd = accept4(rail->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNABORTED ||
                errno == EINTR)
                return;
            /* EMFILE and friends: a peer could never reach us. */
            tcp_fail(tp, -errno, "accept on %s: %s%s", rail->ifname, strerror(errno),
                     errno == EMFILE ? " (raise the open-files limit, ulimit -n)" : "");
            return;
        }
        tcp_conn_t *c = tcp_conn_new(tp, -1, 0, rail->index, 0);
        if (!c) {
            close(fd);
            tcp_fail(tp, -ENOMEM, "out of memory");
            return;
        }
        c->fd = fd;
        tcp_sock_tune(tp, fd);
        tcp_conn_state(tp, c, TCP_C_ACCEPTED);
        if (tcp_conn_watch(tp, c, EPOLL_CTL_ADD, EPOLLIN) != 0) {
            tcp_fail(tp, -errno, "epoll_ctl: %s", strerror(errno));
            return;
        }
        tp->stats.accepts++;
    }
}

static void ack_send(tcp_tp_t *tp, tcp_conn_t *c, uint32_t status)
{
    tcp_hello_ack_t a = { TCP_HELLO_MAGIC, status };
    if (hello_queue(tp, c, &a, sizeof a) == 0 && status != TCP_HELLO_OK)
        tcp_conn_state(tp, c, TCP_C_REJECTING);
}

/* NULL when h is a hello we may accept on c, else why not. */
static const char *hello_problem(const tcp_tp_t *tp, const tcp_conn_t *c, const tcp_hello_t *h)
{
    if (h->magic != TCP_HELLO_MAGIC || h->version != TCP_WIRE_VERSION)
        return "not a Locus tcp hello of this version";
    if (h->dst != tp->rank || h->dst_nonce != tp->nonce)
        return "meant for another rank or job";
    if (h->src < 0 || h->src >= tp->size || h->src == tp->rank)
        return "impossible source rank";
    if (h->nconn < 1 || h->nconn > tp->nrails || h->rail >= h->nconn || h->rail != c->rail)
        return "impossible rail";
    if (h->ncls < 1 || h->ncls > TCP_CLASSES || h->cls >= h->ncls)
        return "impossible traffic class";
    const tcp_peer_t *pe = &tp->peers[h->src];
    if (pe->state == TCP_P_INCOMING &&
        (pe->conn[TCP_LANE(h->cls, h->rail)] || pe->nconn != h->nconn || pe->ncls != h->ncls))
        return "a second connection for the same rail and class";
    return NULL;
}

/* The lower rank's dial wins: drop ours when theirs comes from below. */
static void dials_abort(tcp_tp_t *tp, int p)
{
    tcp_peer_t *pe = &tp->peers[p];
    for (int i = 0; i < TCP_LANES; i++)
        if (pe->conn[i]) {
            tcp_queue_free(&pe->conn[i]->q); /* only the hello: frames wait in waitq */
            tcp_conn_close(tp, pe->conn[i]);
            pe->conn[i] = NULL;
        }
    tp->stats.lost_races++;
}

static void lane_open(tcp_tp_t *tp, tcp_conn_t *c)
{
    tcp_peer_t *pe = &tp->peers[c->peer];
    if (c->rail == 0 && pe->waitq[c->cls].head) {
        tcp_queue_splice(&c->q, &pe->waitq[c->cls]);
        tcp_conn_dirty(tp, c);
    }
}

static void hello_arrived(tcp_tp_t *tp, tcp_conn_t *c, const tcp_hello_t *h)
{
    const char *why = hello_problem(tp, c, h);
    if (why) {
        tcp_note(tp, "refused a connection on %s: %s", tp->rails[c->rail].ifname, why);
        tp->stats.rejected++;
        ack_send(tp, c, TCP_HELLO_BAD);
        return;
    }
    int p = h->src;
    tcp_peer_t *pe = &tp->peers[p];
    if (pe->state == TCP_P_DIALING) {
        if (p > tp->rank) {
            ack_send(tp, c, TCP_HELLO_LOST);
            return;
        }
        dials_abort(tp, p);
    }
    pe->state = TCP_P_INCOMING;
    pe->nconn = h->nconn;
    pe->ncls = h->ncls;
    c->cls = h->cls;
    c->lane = TCP_LANE(h->cls, h->rail);
    if (h->ncls > 1)
        tcp_qos_mark(tp, c->fd, c->cls);
    pe->eager_max = (uint64_t)tp->cfg.eager_max < h->eager_max ? (uint64_t)tp->cfg.eager_max
                                                               : h->eager_max;
    pe->conn[c->lane] = c;
    c->peer = p;
    ack_send(tp, c, TCP_HELLO_OK);
    tcp_conn_state(tp, c, TCP_C_OPEN);
    lane_open(tp, c);
}

static void ack_arrived(tcp_tp_t *tp, tcp_conn_t *c, const tcp_hello_ack_t *a)
{
    tcp_peer_t *pe = &tp->peers[c->peer];
    if (a->magic != TCP_HELLO_MAGIC || a->status < TCP_HELLO_OK || a->status > TCP_HELLO_BAD ||
        (a->status == TCP_HELLO_LOST && c->peer > tp->rank)) {
        tcp_fail(tp, -EPROTO, "bad handshake answer from rank %d", c->peer);
        return;
    }
    if (a->status == TCP_HELLO_BAD) {
        tcp_fail(tp, -EPROTO, "rank %d refused our connection (another job or Locus version?)",
                 c->peer);
        return;
    }
    if (a->status == TCP_HELLO_LOST) {
        /* It dials us too and its dial wins: wait for it, keep the frames. */
        pe->conn[c->lane] = NULL;
        tcp_conn_close(tp, c);
        int left = 0;
        for (int i = 0; i < TCP_LANES; i++)
            left |= pe->conn[i] != NULL;
        if (!left) {
            pe->state = TCP_P_LOST;
            tp->stats.lost_races++;
        }
        return;
    }
    tcp_conn_state(tp, c, TCP_C_OPEN);
    lane_open(tp, c);
}

int tcp_conn_handshake(tcp_tp_t *tp, tcp_conn_t *c)
{
    size_t avail = c->rend - c->rpos;
    /* A hello on a connection accepted, its answer on one made. */
    int hello = c->state == TCP_C_ACCEPTED;
    if (hello || c->state == TCP_C_HELLO_WAIT) {
        union {
            tcp_hello_t h;
            tcp_hello_ack_t a;
        } m;
        size_t len = hello ? sizeof m.h : sizeof m.a;
        if (avail < len)
            return 0;
        memcpy(&m, c->rbuf + c->rpos, len);
        c->rpos += len;
        if (hello)
            hello_arrived(tp, c, &m.h);
        else
            ack_arrived(tp, c, &m.a);
        return 1;
    }
    /* REJECTING: whatever else the stranger sends is dropped. */
    c->rpos = c->rend;
    return 0;
}

