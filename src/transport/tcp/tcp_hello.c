/*
 * Accepting connections and the handshake: the job key's challenge-response
 * first (strangers refused at their first wrong byte, closed when silent,
 * capped in number), then the hello that names the dialler (rank, job
 * nonce, rail), its answer, and simultaneous dials settled by rank (the
 * lower rank's dial wins).
 */
#include "tcp_tp.h"

#include <errno.h>
#include <stdio.h>
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
        .cls = (uint8_t)c->cls, .ncls = (uint8_t)pe->ncls, .gen = c->gen,
        .src = tp->rank, .dst = c->peer, .eager_max = (uint32_t)tp->cfg.eager_max,
        .src_nonce = tp->nonce, .dst_nonce = pe->card->nonce,
    };
    hello_queue(tp, c, &h, sizeof h);
}

/* ---- strangers ---- */

#define ACCEPTS_PER_ROUND 64   /* a flood is taken in bites: progress goes on between */
#define REST_NS 100000000ull   /* rails rest this long after accept() ran short */
#define STRANGER_NOTES 5       /* refusals told one by one under LOCUS_VERBOSE */

static void stranger_note(tcp_tp_t *tp, const tcp_conn_t *c, const char *why)
{
    if (tp->strangers_noted++ < STRANGER_NOTES)
        tcp_note(tp, "refused a connection on %s: %s%s", tp->rails[c->rail].ifname, why,
                 tp->strangers_noted == STRANGER_NOTES ? " (further refusals are counted only)"
                                                       : "");
}

/* Closes the oldest connection that has not proven the key (the earliest
 * deadline: all got the same time). 1 if there was one. */
static int evict_oldest(tcp_tp_t *tp)
{
    tcp_conn_t *old = NULL;
    for (tcp_conn_t *c = tp->conns; c; c = c->next)
        if (c->state == TCP_C_AUTH_RESP && (!old || c->deadline_ns < old->deadline_ns))
            old = c;
    if (!old)
        return 0;
    tcp_conn_close(tp, old);
    tp->stats.auth_evicted++;
    return 1;
}

/* accept() ran out of descriptors (or buffers, or memory): never the job's
 * death. One warning, a descriptor freed, and the rails are not polled for
 * REST_NS (they would only fail again); what waits stays in the backlog. */
static void accept_short(tcp_tp_t *tp, tcp_rail_t *rail, int err)
{
    tp->stats.accept_errors++;
    if (!tp->accept_warned) {
        tp->accept_warned = 1;
        fprintf(stderr, "locus: warning: rank %d: tcp: accept on %s: %s; pausing new "
                "connections for %llu ms (raise the open-files limit, ulimit -n)\n",
                tp->rank, rail->ifname, strerror(err), REST_NS / 1000000ull);
    }
    evict_oldest(tp);
    for (int i = 0; i < tp->nrails; i++) {
        tcp_rail_t *r = &tp->rails[i];
        struct epoll_event ev = { .events = 0, .data.ptr = r };
        if (!r->resting && epoll_ctl(tp->ep, EPOLL_CTL_MOD, r->fd, &ev) == 0)
            r->resting = 1;
    }
    tp->rest_until_ns = locus_now_ns() + REST_NS;
}

void tcp_rails_wake(tcp_tp_t *tp)
{
    if (!tp->rest_until_ns || locus_now_ns() < tp->rest_until_ns)
        return;
    tp->rest_until_ns = 0;
    for (int i = 0; i < tp->nrails; i++) {
        tcp_rail_t *r = &tp->rails[i];
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = r };
        if (r->resting && epoll_ctl(tp->ep, EPOLL_CTL_MOD, r->fd, &ev) == 0)
            r->resting = 0;
    }
}

/* Errors of accept() that say this listening socket cannot work at all. */
static int accept_fatal(int err)
{
    return err == EBADF || err == EINVAL || err == ENOTSOCK || err == EOPNOTSUPP ||
           err == EFAULT;
}

void tcp_accept_all(tcp_tp_t *tp, tcp_rail_t *rail)
{
    for (int k = 0; k < ACCEPTS_PER_ROUND; k++) {
        int fd = accept4(rail->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            int err = errno;
            if (err == EAGAIN || err == EWOULDBLOCK)
                return;
            if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
                accept_short(tp, rail, err);
                return;
            }
            if (accept_fatal(err)) {
                tcp_fail(tp, -err, "accept on %s: %s", rail->ifname, strerror(err));
                return;
            }
            continue; /* ECONNABORTED, EINTR, EPERM, a network error of that connection */
        }
        tcp_conn_t *c = tcp_conn_new(tp, -1, 0, rail->index, 0);
        if (!c) {
            close(fd);
            accept_short(tp, rail, ENOMEM);
            return;
        }
        c->fd = fd;
        tcp_sock_tune(tp, fd);
        locus_auth_init(&c->auth, &tp->key, "tcp");
        unsigned char chal[LOCUS_AUTH_CHAL_LEN];
        tcp_conn_state(tp, c, TCP_C_AUTH_RESP);
        if (locus_auth_challenge(&c->auth, chal) != 0 ||
            tcp_conn_watch(tp, c, EPOLL_CTL_ADD, EPOLLIN) != 0) {
            int err = errno ? errno : ENOMEM;
            tcp_conn_close(tp, c);
            accept_short(tp, rail, err);
            return;
        }
        tp->stats.accepts++;
        hello_queue(tp, c, chal, sizeof chal);
        if (tp->unproven > tp->cfg.auth_pending_max)
            evict_oldest(tp);
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
    /* The dialler opens the fewer classes of the pair (tcp_peer_dial). */
    if (h->ncls < 1 || h->ncls > tp->ncls || h->cls >= h->ncls)
        return "impossible traffic class";
    const tcp_peer_t *pe = &tp->peers[h->src];
    const tcp_conn_t *old = pe->conn[TCP_LANE(h->cls, h->rail)];
    if (h->gen > 0 && (pe->state != TCP_P_INCOMING || h->nconn < 2))
        return "a rail dialled again that was never open";
    /* A lane dialled again (h->gen newer than ours) replaces ours: the
     * peer lost it (hello_arrived hands ours to the failover). */
    if (pe->state == TCP_P_INCOMING &&
        ((old && (int16_t)(h->gen - old->gen) <= 0) || pe->nconn != h->nconn ||
         pe->ncls != h->ncls))
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

/* Frames that waited for a lane go on c where it is now their class's
 * lowest open one. */
static void lane_open(tcp_tp_t *tp, tcp_conn_t *c)
{
    tcp_peer_t *pe = &tp->peers[c->peer];
    for (int k = 0; k < TCP_CLASSES; k++)
        if (pe->waitq[k].head && tcp_lane_primary(pe, k) == c) {
            tcp_queue_splice(&c->q, &pe->waitq[k]);
            tcp_conn_dirty(tp, c);
        }
    if (c->gen > 0 || c->redial)
        tcp_lane_restored(tp, c);
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
    tcp_conn_t *old = pe->conn[TCP_LANE(h->cls, h->rail)];
    if (old && pe->state == TCP_P_INCOMING) {
        /* Dialled again: the peer lost our lane (we may not have noticed).
         * c takes its place at once, even where it was our last. */
        pe->replacing = 1;
        int rc = tcp_lane_fail(tp, old, 0, "the peer dialled it again");
        pe->replacing = 0;
        if (rc != 0)
            return;
    }
    pe->state = TCP_P_INCOMING;
    pe->nconn = h->nconn;
    pe->ncls = h->ncls;
    tcp_peer_keep(tp, pe);
    c->cls = h->cls;
    c->gen = h->gen;
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
    if (a->status != TCP_HELLO_OK && c->redial) {
        tcp_redial_again(tp, c, EALREADY); /* it has not let go of the old one yet */
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

/* ---- the key's challenge-response ---- */

/* Acceptor: the dialler's answer to our challenge (its hello follows). */
static int resp_arrived(tcp_tp_t *tp, tcp_conn_t *c, const unsigned char *p, size_t avail)
{
    if (!locus_auth_prefix_ok(LOCUS_AUTH_MSG_RESP, p, avail)) {
        /* A forged hello, or anything else that knows no key: closed at
         * once, without a word. */
        stranger_note(tp, c, "no answer to the job key's challenge");
        tp->stats.auth_refused++;
        tcp_conn_close(tp, c);
        return 0;
    }
    if (avail < LOCUS_AUTH_RESP_LEN)
        return 0;
    c->rpos += LOCUS_AUTH_RESP_LEN;
    unsigned char proof[LOCUS_AUTH_PROOF_LEN];
    if (locus_auth_check(&c->auth, p, proof) != 0) {
        /* A Locus rank with another key (another job): told so, so that
         * it fails at once with a reason instead of dialling again. */
        stranger_note(tp, c, "a wrong answer to the job key's challenge (another job?)");
        tp->stats.auth_refused++;
        hello_queue(tp, c, proof, sizeof proof);
        tcp_conn_state(tp, c, TCP_C_REJECTING);
        c->rpos = c->rend;
        return 0;
    }
    if (hello_queue(tp, c, proof, sizeof proof) != 0)
        return 0;
    c->authed = 1;
    tcp_conn_state(tp, c, TCP_C_ACCEPTED);
    return 1;
}

/* Dialler: 1 when a whole record of kind msg (len bytes) is at p, and
 * consumed; 0 while it is incomplete, or when it is something else (the
 * job fails: the peer's address answered `what`). */
static int dialler_record(tcp_tp_t *tp, tcp_conn_t *c, int msg, size_t len,
                          const unsigned char *p, size_t avail, const char *what)
{
    if (!locus_auth_prefix_ok(msg, p, avail)) {
        tcp_fail(tp, -EPROTO, "rank %d's address (rail %d) %s", c->peer, c->rail, what);
        return 0;
    }
    if (avail < len)
        return 0;
    c->rpos += len;
    return 1;
}

/* Dialler: the acceptor's challenge; our answer and our hello go out. */
static int chal_arrived(tcp_tp_t *tp, tcp_conn_t *c, const unsigned char *p, size_t avail)
{
    if (!dialler_record(tp, c, LOCUS_AUTH_MSG_CHAL, LOCUS_AUTH_CHAL_LEN, p, avail,
                        "answered with no job key challenge: not a rank of this job or "
                        "Locus version"))
        return 0;
    unsigned char resp[LOCUS_AUTH_RESP_LEN];
    if (locus_auth_answer(&c->auth, p, resp) != 0) {
        tcp_fail(tp, -EIO, "getrandom: %s", strerror(errno));
        return 0;
    }
    if (hello_queue(tp, c, resp, sizeof resp) != 0)
        return 0;
    tcp_hello_send(tp, c);
    tcp_conn_state(tp, c, TCP_C_HELLO_WAIT);
    return 1;
}

/* Dialler: the acceptor's proof of the key (its ack follows). */
static int proof_arrived(tcp_tp_t *tp, tcp_conn_t *c, const unsigned char *p, size_t avail)
{
    if (!dialler_record(tp, c, LOCUS_AUTH_MSG_PROOF, LOCUS_AUTH_PROOF_LEN, p, avail,
                        "did not prove the job key: not a rank of this job"))
        return 0;
    int rc = locus_auth_confirm(&c->auth, p);
    if (rc == -1)
        tcp_fail(tp, -EACCES, "rank %d refused our proof of the job key: its LOCUS_JOB_KEY "
                 "differs from ours", c->peer);
    else if (rc != 0)
        tcp_fail(tp, -EACCES, "rank %d's address (rail %d) answered without proving the job "
                 "key: not a rank of this job", c->peer, c->rail);
    else
        c->authed = 1;
    return rc == 0;
}

int tcp_conn_handshake(tcp_tp_t *tp, tcp_conn_t *c)
{
    size_t avail = c->rend - c->rpos;
    const unsigned char *p = c->rbuf + c->rpos;
    if (c->state == TCP_C_AUTH_RESP)
        return resp_arrived(tp, c, p, avail);
    if (c->state == TCP_C_AUTH_CHAL)
        return chal_arrived(tp, c, p, avail);
    if (c->state == TCP_C_HELLO_WAIT && !c->authed)
        return proof_arrived(tp, c, p, avail);
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
        memcpy(&m, p, len);
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
