/*
 * Connections: their life cycle, dialling a peer (rail i to its rail i,
 * bound to our rail's interface, falling back to any route), losing one,
 * and handshake deadlines. Accepting and the handshake: tcp_hello.c.
 */
#include "tcp_tp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

void tcp_sock_tune(const tcp_tp_t *tp, int fd)
{
    int one = 1;
    /* Failures here cost performance, never correctness: not fatal. */
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (tp->cfg.sndbuf > 0) {
        int v = (int)tp->cfg.sndbuf;
        (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof v);
    }
    if (tp->cfg.rcvbuf > 0) {
        int v = (int)tp->cfg.rcvbuf;
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof v);
    }
    if (tp->cfg.user_timeout > 0) {
        /* An idle connection is probed (keepalive) after a third of
         * LOCUS_TCP_USER_TIMEOUT without a word from the peer, then every
         * second (less often past 127 probes, the kernel's most), and fails
         * when they go unanswered until then: a rank that sends nothing
         * notices a vanished node too. Data the peer's host leaves
         * unacknowledged is timed by tcp_timers, not by the kernel's
         * TCP_USER_TIMEOUT: since Linux 5.11 that also ends a connection
         * whose window stayed closed that long, so a rank computing for
         * 10 s without reading would fail its peers. */
        int idle = tp->cfg.user_timeout / 3 > 1 ? (int)tp->cfg.user_timeout / 3 : 1;
        int rest = (int)tp->cfg.user_timeout - idle > 1 ? (int)tp->cfg.user_timeout - idle : 1;
        int intvl = (rest + 126) / 127; /* the kernel takes at most 127 probes */
        int cnt = (rest + intvl - 1) / intvl;
        (void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
        (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
        (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
        (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
    }
}

int tcp_conn_handshaking(int state)
{
    return state == TCP_C_CONNECTING || state == TCP_C_AUTH_CHAL || state == TCP_C_HELLO_WAIT ||
           state == TCP_C_RETRY || state == TCP_C_AUTH_RESP || state == TCP_C_ACCEPTED ||
           state == TCP_C_REJECTING;
}

void tcp_conn_deadline(tcp_tp_t *tp, tcp_conn_t *c, uint64_t ns)
{
    c->deadline_ns = ns;
    if (ns < tp->deadline_next)
        tp->deadline_next = ns;
}

void tcp_conn_state(tcp_tp_t *tp, tcp_conn_t *c, int state)
{
    tp->handshaking += tcp_conn_handshaking(state) - tcp_conn_handshaking(c->state);
    tp->unproven += (state == TCP_C_AUTH_RESP) - (c->state == TCP_C_AUTH_RESP);
    c->state = state;
    /* A stranger gets LOCUS_AUTH_TIMEOUT_MS to prove the key; a handshake
     * with a rank of the job, LOCUS_TCP_CONNECT_TIMEOUT. */
    if (state == TCP_C_AUTH_RESP)
        tcp_conn_deadline(tp, c, locus_now_ns() + (uint64_t)tp->cfg.auth_timeout_ms * 1000000ull);
    else if (c->redial && tcp_conn_handshaking(state)) /* a lost rail: one SYN retransmit */
        tcp_conn_deadline(tp, c, locus_now_ns() + 2000000000ull);
    else if (tcp_conn_handshaking(state))
        tcp_conn_deadline(tp, c,
                          locus_now_ns() + (uint64_t)tp->cfg.connect_timeout * 1000000000ull);
}

int tcp_conn_watch(tcp_tp_t *tp, tcp_conn_t *c, int op, uint32_t events)
{
    struct epoll_event ev = { .events = events, .data.ptr = c };
    return epoll_ctl(tp->ep, op, c->fd, &ev);
}

tcp_conn_t *tcp_conn_new(tcp_tp_t *tp, int peer, int cls, int rail, int dialled)
{
    tcp_conn_t *c = calloc(1, sizeof *c);
    if (!c || !(c->rbuf = malloc(TCP_RBUF_SIZE))) {
        free(c);
        return NULL;
    }
    c->kind = TCP_OBJ_CONN;
    c->fd = -1;
    c->state = TCP_C_CLOSED;
    c->peer = peer;
    c->rail = rail;
    c->cls = cls;
    c->lane = TCP_LANE(cls, rail);
    c->dialled = dialled;
    c->next = tp->conns;
    tp->conns = c;
    return c;
}

void tcp_conn_close(tcp_tp_t *tp, tcp_conn_t *c)
{
    if (c->in_grave)
        return;
    c->in_grave = 1;
    if (c->on_acks)
        for (tcp_conn_t **pp = &tp->acks; *pp; pp = &(*pp)->next_ack)
            if (*pp == c) {
                *pp = c->next_ack;
                c->on_acks = 0;
                break;
            }
    if (c->fd >= 0) {
        (void)epoll_ctl(tp->ep, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
        c->fd = -1;
    }
    tcp_conn_state(tp, c, TCP_C_CLOSED);
    for (tcp_conn_t **pp = &tp->conns; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    /* Freed at the end of the progress round (an event may point at it). */
    c->next = tp->grave;
    tp->grave = c;
}

static const char *ip_str(struct in_addr a, char *buf)
{
    return inet_ntop(AF_INET, &a, buf, INET_ADDRSTRLEN);
}

/* ---- dialling ---- */

/* Another lane to c's peer is open, or still being dialled for the first
 * time: c failing to connect is not yet the peer out of reach. */
static int peer_has_other(const tcp_tp_t *tp, const tcp_conn_t *c)
{
    const tcp_peer_t *pe = &tp->peers[c->peer];
    for (int i = 0; i < TCP_LANES; i++) {
        const tcp_conn_t *o = pe->conn[i];
        if (o && o != c && (o->state == TCP_C_OPEN || !o->redial))
            return 1;
    }
    return 0;
}

static void conn_retry(tcp_tp_t *tp, tcp_conn_t *c, int err);

static void connect_failed(tcp_tp_t *tp, tcp_conn_t *c, int err)
{
    const struct sockaddr_in *to = &tp->peers[c->peer].card->addr[c->rail];
    const tcp_rail_t *r = &tp->rails[c->rail];
    char ip[INET_ADDRSTRLEN], mine[INET_ADDRSTRLEN];
    if (c->redial) { /* a lost rail dialled again: try later, the others carry on */
        tcp_redial_again(tp, c, err);
        return;
    }
    if (c->fd >= 0) {
        (void)epoll_ctl(tp->ep, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
        c->fd = -1;
    }
    if (c->fallback == 0 && err != ECONNREFUSED) {
        tcp_note(tp, "rail %d (%s %s) cannot reach rank %d at %s:%u (%s); using any route",
                 c->rail, r->ifname, ip_str(r->addr.sin_addr, mine), c->peer,
                 ip_str(to->sin_addr, ip), ntohs(to->sin_port), strerror(err));
        c->fallback = 1;
        tp->stats.fallbacks += c->cls == TCP_CLS_NORMAL; /* rails, not each class's connection */
        tcp_conn_connect(tp, c);
        return;
    }
    if (tp->peers[c->peer].keep && peer_has_other(tp, c) && err != ECONNREFUSED) {
        /* Several rails: this one is down, the others may do. */
        tcp_note(tp, "rail %d (%s) cannot reach rank %d at %s:%u (%s); dialling it again "
                 "later", c->rail, r->ifname, c->peer, ip_str(to->sin_addr, ip),
                 ntohs(to->sin_port), strerror(err));
        c->redial = 1;
        c->give_up_ns = UINT64_MAX;
        c->redial_since_ns = locus_now_ns();
        tcp_redial_again(tp, c, err);
        return;
    }
    if ((err == EHOSTUNREACH || err == ENETUNREACH) && locus_now_ns() < c->give_up_ns) {
        /* Its address did not resolve to a link-layer one (ARP unanswered
         * while many ranks start at once, or a full neighbour table):
         * dial again until LOCUS_TCP_CONNECT_TIMEOUT. */
        conn_retry(tp, c, err);
        return;
    }
    tcp_conn_state(tp, c, TCP_C_CLOSED);
    tcp_fail(tp, -err, "cannot connect to rank %d at %s:%u (rail %d, %s): %s%s", c->peer,
             ip_str(to->sin_addr, ip), ntohs(to->sin_port), c->rail, r->ifname, strerror(err),
             err == ECONNREFUSED ? " (is the process gone?)" : "");
}

/* The connect() of c finished (writable) or failed. */
void tcp_conn_writable(tcp_tp_t *tp, tcp_conn_t *c)
{
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
        err = errno;
    if (err) {
        connect_failed(tp, c, err);
        return;
    }
    tcp_conn_watch(tp, c, EPOLL_CTL_MOD, EPOLLIN);
    /* The acceptor speaks first: its challenge (tcp_hello.c). */
    locus_auth_init(&c->auth, &tp->key, "tcp");
    tcp_conn_state(tp, c, TCP_C_AUTH_CHAL);
}

void tcp_conn_connect(tcp_tp_t *tp, tcp_conn_t *c)
{
    const struct sockaddr_in *to = &tp->peers[c->peer].card->addr[c->rail];
    const tcp_rail_t *r = &tp->rails[c->rail];
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0) {
        tcp_fail(tp, -errno, "socket: %s", strerror(errno));
        return;
    }
    tcp_sock_tune(tp, c->fd);
    if (tp->peers[c->peer].ncls > 1)
        tcp_qos_mark(tp, c->fd, c->cls);
    if (c->fallback == 0) {
        struct sockaddr_in src = r->addr;
        src.sin_port = 0;
        if (bind(c->fd, (struct sockaddr *)&src, sizeof src) != 0) {
            connect_failed(tp, c, errno);
            return;
        }
        /* Pins the route to the plan's NIC. Not for an address of this
         * host (the kernel routes those through lo), and root-only on
         * older kernels: where refused, the source address still binds. */
        if (!tcp_addr_is_local(tp, to->sin_addr))
            (void)setsockopt(c->fd, SOL_SOCKET, SO_BINDTODEVICE, r->ifname,
                             (socklen_t)strlen(r->ifname) + 1);
    }
    tcp_conn_state(tp, c, TCP_C_CONNECTING); /* a redial: 2 s, then the back-off */
    if (!c->redial && c->fallback == 0) {
        /* A NIC that cannot reach the peer often fails by silence, not by
         * an error: give the pinned route a quarter of the time (at least
         * 2 s, a SYN retransmit) and keep the rest for any route. */
        long s = tp->cfg.connect_timeout / 4 > 2 ? tp->cfg.connect_timeout / 4 : 2;
        s = s < tp->cfg.connect_timeout ? s : tp->cfg.connect_timeout;
        tcp_conn_deadline(tp, c, locus_now_ns() + (uint64_t)s * 1000000000ull);
    }
    if (tcp_conn_watch(tp, c, EPOLL_CTL_ADD, EPOLLOUT) != 0) {
        tcp_fail(tp, -errno, "epoll_ctl: %s", strerror(errno));
        return;
    }
    if (connect(c->fd, (const struct sockaddr *)to, sizeof *to) == 0)
        tcp_conn_writable(tp, c);
    else if (errno != EINPROGRESS)
        connect_failed(tp, c, errno);
}

static int card_fetch(tcp_tp_t *tp, int p)
{
    tcp_peer_t *pe = &tp->peers[p];
    char val[400], err[200];
    pe->card = malloc(sizeof *pe->card);
    if (!pe->card) {
        tcp_fail(tp, -ENOMEM, "out of memory");
        return -1;
    }
    if (tp->kvs.card(tp->kvs.ctx, "tcp", p, val, sizeof val) != 0) {
        tcp_fail(tp, -EIO, "%s", tp->kvs.error(tp->kvs.ctx));
        return -1;
    }
    if (strcmp(val, "-") == 0) {
        tcp_fail(tp, -EIO, "rank %d published no tcp address (its set-up failed)", p);
        return -1;
    }
    if (tcp_card_parse(val, pe->card, err, sizeof err) != 0) {
        tcp_fail(tp, -EPROTO, "rank %d: %s", p, err);
        return -1;
    }
    return 0;
}

int tcp_peer_dial(tcp_tp_t *tp, int p)
{
    tcp_peer_t *pe = &tp->peers[p];
    if (!pe->card && card_fetch(tp, p) != 0)
        return tp->failed;
    pe->eager_max = (uint64_t)tp->cfg.eager_max < pe->card->eager_max
                        ? (uint64_t)tp->cfg.eager_max : pe->card->eager_max;
    pe->nconn = tp->nrails < pe->card->nrails ? tp->nrails : pe->card->nrails;
    /* The classes both open, known before any frame of the pair is given
     * one: a pair whose dials cross keeps them whichever dial wins (taking
     * the winner's count afterwards stranded frames queued for a class it
     * lacked: LOCUS_QOS set on one rank hung a 1 MiB exchange). */
    pe->ncls = tp->ncls < pe->card->ncls ? tp->ncls : pe->card->ncls;
    tcp_peer_keep(tp, pe);
    pe->state = TCP_P_DIALING;
    tp->stats.dials++;
    uint64_t give_up = locus_now_ns() + (uint64_t)tp->cfg.connect_timeout * 1000000000ull;
    for (int k = 0; k < pe->ncls; k++)
        for (int i = 0; i < pe->nconn && !tp->failed; i++) {
            tcp_conn_t *c = tcp_conn_new(tp, p, k, i, 1);
            if (!c) {
                tcp_fail(tp, -ENOMEM, "out of memory");
                return tp->failed;
            }
            c->give_up_ns = give_up;
            pe->conn[c->lane] = c;
            tcp_conn_connect(tp, c);
        }
    return tp->failed;
}

/*
 * Our dial was closed before the peer proved the key: a peer flooded by
 * strangers closes its oldest unproven connections, ours among them. Dial
 * again after a short pause (growing), until LOCUS_TCP_CONNECT_TIMEOUT
 * from the first dial. Only what the handshake queued is dropped: frames
 * wait in the peer's queue until a lane is open.
 */
static void conn_retry(tcp_tp_t *tp, tcp_conn_t *c, int err)
{
    if (c->redial) {
        tcp_redial_again(tp, c, err);
        return;
    }
    if (c->fd >= 0) {
        (void)epoll_ctl(tp->ep, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
        c->fd = -1;
    }
    tcp_queue_free(&c->q);
    c->rpos = c->rend = 0;
    c->blocked = c->want_out = 0;
    uint64_t now = locus_now_ns();
    if (now >= c->give_up_ns) {
        tcp_conn_state(tp, c, TCP_C_CLOSED);
        if (err == EHOSTUNREACH || err == ENETUNREACH)
            tcp_fail(tp, -err, "cannot connect to rank %d (rail %d): %s, %d times in %ld s",
                     c->peer, c->rail, strerror(err), c->redials + 1, tp->cfg.connect_timeout);
        else
            tcp_fail(tp, err ? -err : -ECONNRESET, "rank %d closed our connections (rail %d) "
                     "before proving the job key, %d times in %ld s: is it flooded by "
                     "strangers, or not a rank of this job?", c->peer, c->rail, c->redials + 1,
                     tp->cfg.connect_timeout);
        return;
    }
    tp->stats.redials++;
    int shift = c->redials < 5 ? c->redials : 5;
    c->redials++;
    uint64_t at = now + (10000000ull << shift); /* 10 ms, doubling up to 320 ms */
    tcp_conn_state(tp, c, TCP_C_RETRY);
    tcp_conn_deadline(tp, c, at < c->give_up_ns ? at : c->give_up_ns);
}

/* End of stream (err 0) or a socket error on c. */
void tcp_conn_lost(tcp_tp_t *tp, tcp_conn_t *c, int err)
{
    int p = c->peer, state = c->state;
    if (c->dialled && !c->authed && (state == TCP_C_AUTH_CHAL || state == TCP_C_HELLO_WAIT)) {
        conn_retry(tp, c, err);
        return;
    }
    if (c->redial && state != TCP_C_OPEN) {
        tcp_redial_again(tp, c, err);
        return;
    }
    if (state == TCP_C_OPEN && !c->bye_rcvd && p >= 0 && tp->peers[p].conn[c->lane] == c) {
        /* Its frames move to another rail; the job fails only with none left. */
        tcp_lane_fail(tp, c, err, NULL);
        return;
    }
    if (p >= 0 && tp->peers[p].conn[c->lane] == c)
        tp->peers[p].conn[c->lane] = NULL;
    tcp_conn_close(tp, c);
    if (state == TCP_C_AUTH_RESP || state == TCP_C_ACCEPTED || state == TCP_C_REJECTING ||
        tp->draining)
        return; /* a stranger, or a loser of a dial race, or shutting down */
    if (state == TCP_C_OPEN && c->bye_rcvd)
        return;
    char ip[INET_ADDRSTRLEN];
    const tcp_rail_t *r = &tp->rails[c->rail];
    tcp_fail(tp, err ? -err : -ECONNRESET,
             "connection to rank %d (rail %d, %s %s) %s%s without goodbye: the process died "
             "or the network failed", p, c->rail, r->ifname, ip_str(r->addr.sin_addr, ip),
             err ? "failed: " : "closed", err ? strerror(err) : "");
}

/* Handshakes past their deadline (LOCUS_AUTH_TIMEOUT_MS for a stranger,
 * LOCUS_TCP_CONNECT_TIMEOUT for a rank), and dials due again. Walks the
 * connections only when the earliest deadline has come. */
void tcp_deadlines(tcp_tp_t *tp)
{
    uint64_t now = locus_now_ns();
    if (now < tp->deadline_next)
        return;
    tp->deadline_next = UINT64_MAX; /* lowered again by every deadline still ahead */
    for (tcp_conn_t *c = tp->conns, *next; c; c = next) {
        next = c->next;
        if (!tcp_conn_handshaking(c->state))
            continue;
        if (now < c->deadline_ns) {
            tcp_conn_deadline(tp, c, c->deadline_ns);
            continue;
        }
        if (c->state == TCP_C_CONNECTING) {
            connect_failed(tp, c, ETIMEDOUT);
        } else if (c->redial && (c->state == TCP_C_AUTH_CHAL || c->state == TCP_C_HELLO_WAIT)) {
            tcp_redial_again(tp, c, ETIMEDOUT);
        } else if (c->state == TCP_C_RETRY) {
            if (c->redial && (tp->draining || tp->peers[c->peer].bye))
                tcp_redial_drop(tp, c); /* the peer is finalizing: nothing will need it */
            else if (now >= c->give_up_ns)
                tcp_fail(tp, -ETIMEDOUT, "rank %d closed our connections (rail %d) before "
                         "proving the job key, %d times in %ld s", c->peer, c->rail,
                         c->redials, tp->cfg.connect_timeout);
            else
                tcp_conn_connect(tp, c);
        } else if (c->state == TCP_C_AUTH_CHAL || c->state == TCP_C_HELLO_WAIT) {
            tcp_fail(tp, -ETIMEDOUT, "rank %d did not answer our handshake within %ld s",
                     c->peer, tp->cfg.connect_timeout);
        } else {
            tp->stats.auth_timeouts += c->state == TCP_C_AUTH_RESP;
            tcp_conn_close(tp, c); /* a silent stranger, or a refusal nobody reads */
        }
    }
}
