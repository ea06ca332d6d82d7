/*
 * Rail failover: with two rails or more to a peer, a connection that fails
 * costs no frame and does not fail the job while another rail is left.
 *
 * Losing a lane (tcp_lane_fail): an error or reset on it, end of stream
 * without goodbye, the peer's host silent for LOCUS_TCP_USER_TIMEOUT
 * (hosts_check), or a stall: data waiting and no acknowledgement from the
 * peer's kernel for LOCUS_TCP_RAIL_TIMEOUT milliseconds, with the
 * retransmission or probe timer running, while another lane to the peer
 * is not stalled (when all are, it is the network or the peer's node, and
 * only LOCUS_TCP_USER_TIMEOUT decides). The lane is
 * closed at once and stops being read: what it carried (frames written and
 * not acknowledged, then its queue) waits in the peer's limbo. A FAILOVER
 * frame goes on a surviving lane, first in its queue, with the number of
 * frames received on the lost one. The peer does the same when it gets it
 * (or notices the loss itself), so each side learns exactly which of its
 * frames the other got; the others go again on the survivors, first in
 * their queues: message and control frames on the class's lowest open
 * rail (the receiver puts MSG and RTS back in order by sequence), DATA
 * chunks on the open lane with the least queued. Nothing arrives twice, so
 * a repeated sequence is still a protocol error. Only when no lane to the
 * peer is left does the job fail.
 *
 * Redial: the side that dialled the lost lane dials it again (its hello
 * carries the lane's generation, so the peer replaces its own connection
 * even if it had not noticed the loss), after REDIAL_FIRST_NS, doubling to
 * REDIAL_MAX_NS, never fatally; once open and proven it carries traffic
 * again. Each loss and each return is a line under LOCUS_VERBOSE and a
 * count in tcp_stats_t.
 *
 * What a frame is kept for until the peer acknowledges it: tcp_ack.c.
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

#define ACK_SWEEP_NS 1000000ull         /* acknowledgements owed go out within 1-2 ms */
#define STALL_TICK_NS 100000000ull      /* lanes with data waiting are checked every 100 ms */
#define HOSTS_TICK_NS 250000000ull      /* every lane's peer host, every 250 ms */
#define REDIAL_FIRST_NS 100000000ull    /* first redial 100 ms after the loss, */
#define REDIAL_MAX_NS 1000000000ull     /* doubling up to a second */

static const char *const cls_names[TCP_CLASSES] = { "normal", "latency", "bulk" };

static tcp_conn_t *redial_pending(const tcp_peer_t *pe);
static int lane_fatal(tcp_tp_t *tp, int p, int rail, int err, const char *why);

/* The lane that carries message and control frames of class cls: its
 * lowest open rail; failing that (a class whose every rail failed while
 * another class's did not), any open lane of the peer. */
tcp_conn_t *tcp_lane_primary(const tcp_peer_t *pe, int cls)
{
    for (int i = 0; i < pe->nconn; i++) {
        tcp_conn_t *c = pe->conn[TCP_LANE(cls, i)];
        if (c && c->state == TCP_C_OPEN)
            return c;
    }
    if (!pe->keep)
        return NULL;
    for (int k = 0; k < pe->ncls; k++)
        for (int i = 0; i < pe->nconn; i++) {
            tcp_conn_t *c = pe->conn[TCP_LANE(k, i)];
            if (c && c->state == TCP_C_OPEN)
                return c;
        }
    return NULL;
}

/* ---- losing a lane ---- */

static void orphan_wait_clear(tcp_tp_t *tp, tcp_peer_t *pe)
{
    if (pe->orphan_until_ns) {
        pe->orphan_until_ns = 0;
        tp->orphans_waiting--;
    }
}

/* Whether the loss of lane's generation gen was settled already (a
 * FAILOVER for it is a copy). */
static int gen_settled(const tcp_peer_t *pe, int lane, uint16_t gen)
{
    return pe->settled[lane] && (int16_t)(gen - (uint16_t)(pe->settled[lane] - 1)) <= 0;
}

/* Whether the kernel has data on c it cannot deliver (it retransmits or
 * probes a closed window), and how many ms ago the peer's host last
 * acknowledged anything. 0, or -1 when it cannot say. */
static int lane_kernel(const tcp_conn_t *c, int *undelivered, uint32_t *quiet_ms)
{
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    if (c->fd < 0 || getsockopt(c->fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0)
        return -1;
    *undelivered = ti.tcpi_retransmits > 0 || ti.tcpi_probes > 0;
    *quiet_ms = ti.tcpi_last_ack_recv;
    return 0;
}

/* The kernel has had data to deliver on c and heard nothing from the peer
 * for LOCUS_TCP_RAIL_TIMEOUT, and is retransmitting or probing: the path
 * is broken (a peer that only stopped reading still acknowledges, its
 * window closed). */
static int lane_stalled(const tcp_tp_t *tp, const tcp_conn_t *c)
{
    int undelivered;
    uint32_t quiet;
    return tp->cfg.rail_timeout_ms > 0 && lane_kernel(c, &undelivered, &quiet) == 0 &&
           undelivered && quiet >= (uint64_t)tp->cfg.rail_timeout_ms;
}

/* An open lane to c's peer other than c (not stalled itself, if strict):
 * of c's class on another rail; else of another class on another rail;
 * else (last: a rail's failure takes all its classes) on c's own rail. */
static tcp_conn_t *survivor(const tcp_tp_t *tp, const tcp_peer_t *pe, const tcp_conn_t *c,
                            int strict)
{
    for (int pass = 0; pass < 3; pass++)
        for (int k = 0; k < pe->ncls; k++) {
            if ((pass == 0) != (k == c->cls))
                continue;
            for (int i = 0; i < pe->nconn; i++) {
                tcp_conn_t *o = pe->conn[TCP_LANE(k, i)];
                if ((pass == 2) == (i == c->rail) && o && o != c && o->state == TCP_C_OPEN &&
                    !o->in_grave && !(strict && lane_stalled(tp, o)))
                    return o;
            }
        }
    return NULL;
}

static const char *lane_name(const tcp_tp_t *tp, const tcp_peer_t *pe, const tcp_conn_t *c,
                             char *buf, size_t len)
{
    char ip[INET_ADDRSTRLEN];
    const tcp_rail_t *r = &tp->rails[c->rail];
    inet_ntop(AF_INET, &r->addr.sin_addr, ip, sizeof ip);
    if (pe->ncls > 1)
        snprintf(buf, len, "rail %d (%s %s, %s class)", c->rail, r->ifname, ip,
                 cls_names[c->cls]);
    else
        snprintf(buf, len, "rail %d (%s %s)", c->rail, r->ifname, ip);
    return buf;
}

static void redial_at(tcp_tp_t *tp, tcp_conn_t *c, uint64_t at)
{
    tcp_conn_state(tp, c, TCP_C_RETRY);
    c->deadline_ns = at;
    tcp_conn_deadline(tp, c, at);
}

/* The lane of lost connection c is dialled again, in a while. */
static void redial_new(tcp_tp_t *tp, tcp_peer_t *pe, const tcp_conn_t *old)
{
    tcp_conn_t *n = tcp_conn_new(tp, old->peer, old->cls, old->rail, 1);
    if (!n) {
        tcp_fail(tp, -ENOMEM, "out of memory");
        return;
    }
    n->redial = 1;
    n->gen = (uint16_t)(old->gen + 1);
    n->fallback = old->fallback;
    n->give_up_ns = UINT64_MAX;
    n->redial_since_ns = locus_now_ns();
    pe->conn[n->lane] = n;
    redial_at(tp, n, n->redial_since_ns + REDIAL_FIRST_NS);
}

void tcp_redial_again(tcp_tp_t *tp, tcp_conn_t *c, int err)
{
    if (c->fd >= 0) {
        (void)epoll_ctl(tp->ep, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
        c->fd = -1;
    }
    tcp_queue_free(&c->q); /* handshake records only: frames wait elsewhere */
    free(c->big);
    c->big = NULL;
    c->rpos = c->rend = 0;
    c->rx = TCP_RX_HEAD;
    c->blocked = c->want_out = 0;
    c->authed = 0;
    tcp_peer_t *pe = &tp->peers[c->peer];
    if (tp->draining || pe->bye) {
        tcp_redial_drop(tp, c);
        return;
    }
    /* The lane the traffic waited for did not come back either. After an
     * outage the wait is bounded in time instead (tcp_timers), unless the
     * peer refuses: its process is gone. */
    if (pe->orphaned && !tcp_lane_primary(pe, 0) && redial_pending(pe) == NULL &&
        (!pe->orphan_until_ns || err == ECONNREFUSED)) {
        tcp_conn_state(tp, c, TCP_C_CLOSED);
        orphan_wait_clear(tp, pe);
        lane_fatal(tp, c->peer, pe->orphan_rail, pe->orphan_err,
                   pe->orphan_why[0] ? pe->orphan_why : NULL);
        return;
    }
    int shift = c->redials < 4 ? c->redials : 4;
    c->redials++;
    uint64_t wait = REDIAL_FIRST_NS << shift;
    redial_at(tp, c, locus_now_ns() + (wait < REDIAL_MAX_NS ? wait : REDIAL_MAX_NS));
}

void tcp_redial_drop(tcp_tp_t *tp, tcp_conn_t *c)
{
    tcp_peer_t *pe = &tp->peers[c->peer];
    if (pe->conn[c->lane] == c)
        pe->conn[c->lane] = NULL;
    tcp_queue_free(&c->q);
    tcp_conn_close(tp, c);
}

void tcp_redials_stop(tcp_tp_t *tp)
{
    for (tcp_conn_t *c = tp->conns, *next; c; c = next) {
        next = c->next;
        if (c->redial && c->state != TCP_C_OPEN)
            tcp_redial_drop(tp, c);
    }
}

void tcp_lane_restored(tcp_tp_t *tp, tcp_conn_t *c)
{
    char name[120];
    tcp_peer_t *pe = &tp->peers[c->peer];
    c->redial = 0; /* open: a later loss is a failover again */
    pe->orphaned = 0;
    orphan_wait_clear(tp, pe);
    pe->outage_ns = 0; /* a rail answers again: the outage is over */
    c->redials = 0;
    tp->stats.restored++;
    if (c->redial_since_ns)
        tcp_note(tp, "%s to rank %d restored after %.1f s: it carries traffic again",
                 lane_name(tp, pe, c, name, sizeof name), c->peer,
                 (double)(locus_now_ns() - c->redial_since_ns) / 1e9);
    else
        tcp_note(tp, "%s to rank %d restored (dialled again by it): it carries traffic again",
                 lane_name(tp, pe, c, name, sizeof name), c->peer);
}

/* A lane of pe dialled again whose connection is made and proving the key:
 * it is open within a round trip, or fails. */
static tcp_conn_t *redial_pending(const tcp_peer_t *pe)
{
    for (int i = 0; i < TCP_LANES; i++) {
        tcp_conn_t *c = pe->conn[i];
        if (c && c->redial && (c->state == TCP_C_AUTH_CHAL || c->state == TCP_C_HELLO_WAIT))
            return c;
    }
    return NULL;
}

/* The job fails: the lane on `rail` was the last to peer p. */
static int lane_fatal(tcp_tp_t *tp, int p, int rail, int err, const char *why)
{
    const tcp_peer_t *pe = &tp->peers[p];
    char ip[INET_ADDRSTRLEN];
    const tcp_rail_t *r = &tp->rails[rail];
    inet_ntop(AF_INET, &r->addr.sin_addr, ip, sizeof ip);
    if (why)
        tcp_fail(tp, err ? -err : -ECONNRESET, "connection to rank %d (rail %d, %s %s) %s "
                 "without goodbye%s", p, rail, r->ifname, ip, why,
                 pe->keep ? "; no other rail to it is left" : "");
    else
        tcp_fail(tp, err ? -err : -ECONNRESET,
                 "connection to rank %d (rail %d, %s %s) %s%s without goodbye: the process "
                 "died or the network failed%s", p, rail, r->ifname, ip,
                 err ? "failed: " : "closed", err ? strerror(err) : "",
                 pe->keep ? "; no other rail to it is left" : "");
    return tp->failed;
}

/* Moves q (its order kept) to the front of dst's queue (tcp_queue_front). */
static void queue_prepend(tcp_queue_t *dst, tcp_queue_t *q)
{
    if (!q->head)
        return;
    tcp_qent_t **pp = tcp_queue_front(dst);
    q->tail->next = *pp;
    if (!*pp)
        dst->tail = q->tail;
    *pp = q->head;
    q->head = q->tail = NULL;
}

/* How long the traffic of a peer whose every lane was lost after an
 * outage waits for one to come back: LOCUS_TCP_USER_TIMEOUT, the bound an
 * outage of every rail is held to anyway. */
static uint64_t orphan_wait_ns(const tcp_tp_t *tp)
{
    long s = tp->cfg.user_timeout > 0 ? tp->cfg.user_timeout : tp->cfg.connect_timeout;
    return (uint64_t)(s > 0 ? s : 1) * 1000000000ull;
}

/* The FAILOVERs that lost lane l carried or had queued go again now, behind
 * fo: a FAILOVER waits for nobody, and two lanes lost in turn would
 * otherwise each hold the FAILOVER the other side needs to settle the
 * other lane. The originals keep their place in the count, marked copied
 * (limbo_settle does not send them a second time); the peer ignores the
 * copy of one it already has (tcp_failover_frame). */
static int failovers_copy(tcp_tp_t *tp, tcp_limbo_t *l, tcp_queue_t *urgent)
{
    tcp_queue_t *qs[2] = { &l->sent, &l->unsent };
    for (int i = 0; i < 2; i++)
        for (tcp_qent_t *e = qs[i]->head; e; e = e->next) {
            if (e->kind != TCP_QE_FRAME || e->head[0] != TCP_F_FAILOVER || e->copied)
                continue;
            tcp_qent_t *n = tcp_qent_new(0);
            if (!n) {
                tcp_fail(tp, -ENOMEM, "out of memory");
                return tp->failed;
            }
            memcpy(n->head, e->head, e->head_len);
            n->head_len = e->head_len;
            n->kind = TCP_QE_FRAME;
            e->copied = 1;
            tcp_queue_push(urgent, n);
        }
    return 0;
}

int tcp_lane_fail(tcp_tp_t *tp, tcp_conn_t *c, int err, const char *why)
{
    int p = c->peer;
    tcp_peer_t *pe = &tp->peers[p];
    uint64_t now = locus_now_ns();
    /* A lane that answers. A connection reset or closed (the path works,
     * the connection is gone: after an outage of every rail, the peer's
     * kernel answers a connection it dropped with a reset) may also move to
     * one that stalls now and will answer again; one that timed out or
     * found no route may not: with every rail silent that long, the job
     * ends now, not a LOCUS_TCP_USER_TIMEOUT later. */
    int silent = err == ETIMEDOUT || err == EHOSTUNREACH || err == ENETUNREACH ||
                 err == EHOSTDOWN || err == ENETDOWN;
    if (silent && pe->keep)
        pe->outage_ns = now;
    tcp_conn_t *to = pe->keep ? survivor(tp, pe, c, 1) : NULL;
    if (!to && pe->keep && !silent)
        to = survivor(tp, pe, c, 0);
    /* No lane open, but one coming back this instant (the peer has it
     * open already, or it dialled this very lane again): the FAILOVER
     * waits for it, first in line. */
    tcp_conn_t *soon = pe->keep && !to && !tp->draining ? redial_pending(pe) : NULL;
    int waits = soon || (pe->keep && !to && pe->replacing);
    /* No lane left, the last one reset or closed by a peer that answers,
     * soon after another was lost to silence: both sides gave up lanes
     * during an outage of every rail, each its own. The peer is alive; the
     * side that dialled dials them again within a second of the network's
     * return. The traffic waits for that, up to orphan_wait_ns (also
     * where a redial is under way now: should it fail, the next one may
     * still come within the bound). */
    int after_outage = pe->keep && !to && !silent && !tp->draining && !pe->bye &&
                       pe->outage_ns && now - pe->outage_ns < orphan_wait_ns(tp);
    if (pe->conn[c->lane] == c)
        pe->conn[c->lane] = NULL;
    if (!to && !waits && !after_outage) {
        tcp_conn_close(tp, c);
        return tp->draining ? 0 : lane_fatal(tp, p, c->rail, err, why);
    }
    tcp_limbo_t *l = calloc(1, sizeof *l);
    tcp_qent_t *fo = tcp_qent_new(0);
    if (!l || !fo) {
        free(l);
        free(fo);
        tcp_conn_close(tp, c);
        tcp_fail(tp, -ENOMEM, "out of memory");
        return tp->failed;
    }
    /* Not read any more: the count we report is final. */
    l->lane = c->lane;
    l->gen = c->gen;
    l->base = c->tx_acked;
    l->sent = c->sent;
    l->unsent = c->q;
    c->sent.head = c->sent.tail = c->q.head = c->q.tail = NULL;
    c->chunk_queued = 0;
    l->next = pe->limbo;
    pe->limbo = l;
    fo->head_len = (uint32_t)tcp_head_make(fo->head, TCP_F_FAILOVER, 0, NULL, (uint32_t)c->lane,
                                           c->gen, c->rx_frames);
    fo->kind = TCP_QE_FRAME;
    tcp_queue_t urgent = { fo, fo };
    if (failovers_copy(tp, l, &urgent) != 0) {
        tcp_queue_free(&urgent);
        tcp_conn_close(tp, c);
        return tp->failed;
    }
    if (to) {
        queue_prepend(&to->q, &urgent);
        tcp_conn_dirty(tp, to);
    } else {
        queue_prepend(&pe->waitq[soon ? soon->cls : c->cls], &urgent);
        pe->orphan_rail = c->rail; /* for the reason, should no lane come back */
        pe->orphan_err = err;
        snprintf(pe->orphan_why, sizeof pe->orphan_why, "%s", why ? why : "");
        pe->orphaned = 1;
        if (after_outage && !pe->orphan_until_ns) {
            pe->orphan_until_ns = now + orphan_wait_ns(tp);
            tp->orphans_waiting++;
        }
    }
    tcp_conn_close(tp, c);
    tp->stats.failovers++;
    pe->path.probe_ns = 0; /* a probe lost with the lane must not read as congestion */
    char name[120], to_name[120], reason[160];
    if (why)
        snprintf(reason, sizeof reason, "%s", why);
    else if (err)
        snprintf(reason, sizeof reason, "%s", strerror(err));
    else
        snprintf(reason, sizeof reason, "closed without goodbye");
    if (to || soon)
        tcp_note(tp, "%s to rank %d lost (%s); its traffic moves to %s",
                 lane_name(tp, pe, c, name, sizeof name), p, reason,
                 lane_name(tp, pe, to ? to : soon, to_name, sizeof to_name));
    else if (pe->replacing)
        tcp_note(tp, "%s to rank %d lost (%s); its traffic moves to the new connection",
                 lane_name(tp, pe, c, name, sizeof name), p, reason);
    else
        tcp_note(tp, "%s to rank %d lost (%s) after an outage of every rail; its traffic "
                 "waits up to %.0f s for a rail to come back", lane_name(tp, pe, c, name,
                 sizeof name), p, reason, (double)orphan_wait_ns(tp) / 1e9);
    if (c->dialled && !tp->draining && !pe->bye)
        redial_new(tp, pe, c);
    return 0;
}

/* The open lane of class cls (else of any class) with the least data queued. */
static tcp_conn_t *data_lane(const tcp_peer_t *pe, int cls)
{
    tcp_conn_t *best = NULL;
    for (int pass = 0; pass < 2 && !best; pass++)
        for (int k = 0; k < pe->ncls; k++) {
            if (pass == 0 && k != cls)
                continue;
            for (int i = 0; i < pe->nconn; i++) {
                tcp_conn_t *c = pe->conn[TCP_LANE(k, i)];
                if (c && c->state == TCP_C_OPEN &&
                    (!best || c->chunk_queued < best->chunk_queued))
                    best = c;
            }
        }
    return best;
}

/* The peer received `got` frames of limbo l's lane: the rest go again. */
static int limbo_settle(tcp_tp_t *tp, int p, tcp_limbo_t *l, uint32_t got)
{
    tcp_peer_t *pe = &tp->peers[p];
    uint32_t kept = 0;
    for (tcp_qent_t *e = l->sent.head; e; e = e->next)
        kept++;
    uint32_t have = got - l->base;
    if ((int32_t)have < 0 || have > kept) {
        tcp_fail(tp, -EPROTO, "rank %d says it received %u frames on lane %d, of which we "
                 "wrote %u", p, got, l->lane, l->base + kept);
        return -1;
    }
    for (uint32_t i = 0; i < have; i++) {
        tcp_qent_t *e = l->sent.head;
        l->sent.head = e->next;
        if (e->is_data)
            tcp_data_confirm(tp, e);
        free(e);
    }
    if (!l->sent.head)
        l->sent.tail = NULL;
    tcp_queue_splice(&l->sent, &l->unsent);
    tcp_queue_t out[TCP_LANES];
    memset(out, 0, sizeof out);
    int cls = l->lane / TCP_MAX_RAILS;
    uint64_t n = 0;
    while (l->sent.head) {
        tcp_qent_t *e = l->sent.head;
        if (!(l->sent.head = e->next))
            l->sent.tail = NULL;
        /* Acknowledgements are made afresh; a goodbye belongs to its own
         * connection, and the lost one needs none; a FAILOVER copied went
         * already. */
        if (e->kind != TCP_QE_FRAME || e->head[0] == TCP_F_BYE || e->copied) {
            if (e->counted)
                pe->queued -= e->head_len + e->data_len;
            free(e);
            continue;
        }
        tcp_conn_t *c = e->is_data ? data_lane(pe, e->sreq->cls) : tcp_lane_primary(pe, cls);
        if (!c) {
            free(e);
            tcp_fail(tp, -ECONNRESET, "no rail to rank %d is left to send again what a lost "
                     "one carried", p);
            continue;
        }
        e->off = 0;
        if (e->is_data)
            c->chunk_queued += e->data_len;
        tcp_queue_push(&out[c->lane], e);
        n++;
    }
    for (int i = 0; i < TCP_LANES; i++)
        if (out[i].head) {
            queue_prepend(&pe->conn[i]->q, &out[i]);
            tcp_conn_dirty(tp, pe->conn[i]);
        }
    tp->stats.resent += n;
    return tp->failed;
}

int tcp_failover_frame(tcp_tp_t *tp, tcp_conn_t *c, const tcp_frame_t *f)
{
    int p = c->peer;
    tcp_peer_t *pe = &tp->peers[p];
    if (f->a >= TCP_LANES || !pe->keep || f->c > UINT32_MAX) {
        tcp_fail(tp, -EPROTO, "bad frame from rank %d on rail %d: failover of no lane", p,
                 c->rail);
        return -1;
    }
    int lane = (int)f->a;
    uint16_t gen = (uint16_t)f->b;
    tcp_conn_t *o = pe->conn[lane];
    if (o && o->gen == gen && o != c) {
        /* The peer lost a lane we had not given up yet: we stop reading it
         * too, and tell it what we received. */
        if (tcp_lane_fail(tp, o, 0, "lost by the peer") != 0)
            return -1;
    }
    for (tcp_limbo_t **pp = &pe->limbo; *pp; pp = &(*pp)->next) {
        tcp_limbo_t *l = *pp;
        if (l->lane == lane && l->gen == gen) {
            *pp = l->next;
            if (!gen_settled(pe, lane, gen))
                pe->settled[lane] = (uint32_t)gen + 1;
            int rc = limbo_settle(tp, p, l, (uint32_t)f->c);
            free(l);
            return rc < 0 ? -1 : (int)sizeof *f;
        }
    }
    if (gen_settled(pe, lane, gen))
        return (int)sizeof *f; /* the copy of one we had (failovers_copy) */
    tcp_fail(tp, -EPROTO, "bad frame from rank %d on rail %d: failover of lane %d (generation "
             "%u), which we do not have", p, c->rail, lane, gen);
    return -1;
}

void tcp_limbo_free(tcp_peer_t *pe)
{
    while (pe->limbo) {
        tcp_limbo_t *l = pe->limbo;
        pe->limbo = l->next;
        tcp_queue_free(&l->sent);
        tcp_queue_free(&l->unsent);
        free(l);
    }
}

/* ---- timers ---- */

static void lane_stall(tcp_tp_t *tp, tcp_conn_t *c)
{
    char why[80];
    snprintf(why, sizeof why, "no acknowledgement for %ld ms", tp->cfg.rail_timeout_ms);
    tp->stats.stalls++;
    tcp_lane_fail(tp, c, ETIMEDOUT, why);
}

/* Open lanes of peers with several rails, with data waiting, that stalled
 * while another lane to the same peer did not. */
static void stalls_check(tcp_tp_t *tp)
{
    for (tcp_conn_t *c = tp->conns, *next; c && !tp->failed; c = next) {
        next = c->next;
        if (c->state != TCP_C_OPEN || c->peer < 0 || !tp->peers[c->peer].keep ||
            (!c->q.head && !c->sent.head) || !lane_stalled(tp, c))
            continue;
        const tcp_peer_t *pe = &tp->peers[c->peer];
        if (!survivor(tp, pe, c, 1))
            continue; /* every lane is stalled: hosts_check decides */
        lane_stall(tp, c);
    }
}

/* Lanes whose kernel has retransmitted or probed at every check for
 * LOCUS_TCP_USER_TIMEOUT, with no word from the peer's host that long:
 * lost (with no other lane to the peer left, the job fails). Timed here,
 * not by the kernel's TCP_USER_TIMEOUT (tcp_sock_tune says why). Every
 * check, not one: a lane that only received can show an old last
 * acknowledgement while the reply to a probe is on its way, and a closed
 * window's answered probe clears the probe count. */
static void hosts_check(tcp_tp_t *tp, uint64_t now)
{
    uint64_t limit_ms = (uint64_t)tp->cfg.user_timeout * 1000u;
    for (tcp_conn_t *c = tp->conns, *next; c && !tp->failed; c = next) {
        next = c->next;
        /* Open, in use, and the peer has not said goodbye on it. */
        int watched = c->state == TCP_C_OPEN && c->peer >= 0 && !c->bye_rcvd &&
                      tp->peers[c->peer].conn[c->lane] == c;
        int undelivered = 0;
        uint32_t quiet = 0;
        if (!watched || lane_kernel(c, &undelivered, &quiet) != 0 || !undelivered) {
            c->silent_since_ns = 0;
        } else if (!c->silent_since_ns) {
            c->silent_since_ns = now;
        } else if (quiet >= limit_ms && now - c->silent_since_ns >= limit_ms * 1000000u) {
            char why[80];
            snprintf(why, sizeof why, "had no acknowledgement from its host for %ld s",
                     tp->cfg.user_timeout);
            tcp_lane_fail(tp, c, ETIMEDOUT, why);
        }
    }
}

/* Peers orphaned after an outage whose wait ran out: no lane came back. */
static void orphans_check(tcp_tp_t *tp, uint64_t now)
{
    for (int p = 0; p < tp->size && tp->orphans_waiting && !tp->failed; p++) {
        tcp_peer_t *pe = &tp->peers[p];
        if (!pe->orphan_until_ns || now < pe->orphan_until_ns || tcp_lane_primary(pe, 0))
            continue;
        orphan_wait_clear(tp, pe);
        char why[160];
        snprintf(why, sizeof why, "lost after an outage of every rail (%s) and none came back "
                 "within %.0f s,", pe->orphan_why[0] ? pe->orphan_why : pe->orphan_err ?
                 strerror(pe->orphan_err) : "closed", (double)orphan_wait_ns(tp) / 1e9);
        lane_fatal(tp, p, pe->orphan_rail, pe->orphan_err, why);
    }
}

void tcp_timers(tcp_tp_t *tp)
{
    uint64_t now = locus_now_ns();
    /* Not at finalize: every receive is complete by then, so nothing an
     * orphan waits with is the program's, and failing would cut the other
     * peers' goodbyes short. */
    if (tp->orphans_waiting && !tp->draining && now >= tp->orphan_next_ns) {
        orphans_check(tp, now); /* a scan of every peer: not every round */
        tp->orphan_next_ns = now + STALL_TICK_NS;
    }
    if (tp->acks && now >= tp->ack_next_ns) {
        tcp_acks_sweep(tp);
        tp->ack_next_ns = now + ACK_SWEEP_NS;
    }
    if (tp->keeping && tp->cfg.rail_timeout_ms > 0 && now >= tp->stall_next_ns) {
        stalls_check(tp);
        tp->stall_next_ns = now + STALL_TICK_NS;
    }
    if (tp->cfg.user_timeout > 0 && now >= tp->hosts_next_ns) {
        hosts_check(tp, now);
        tp->hosts_next_ns = now + HOSTS_TICK_NS;
    }
}

/* ---- for tests ---- */

int tcp_tp_test_cut(locus_tp_t *t, int peer, int rail)
{
    tcp_tp_t *tp = (tcp_tp_t *)t;
    if ((unsigned)peer >= (unsigned)tp->size || (unsigned)rail >= TCP_MAX_RAILS)
        return 0;
    tcp_peer_t *pe = &tp->peers[peer];
    int n = 0;
    for (int k = 0; k < TCP_CLASSES; k++) {
        tcp_conn_t *c = pe->conn[TCP_LANE(k, rail)];
        if (!c || c->state != TCP_C_OPEN)
            continue;
        /* A reset, not a goodbye: what our kernel still holds for the peer
         * is dropped, as a failed network would lose it. */
        struct linger lg = { 1, 0 };
        (void)setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        n++;
        tcp_lane_fail(tp, c, ECONNRESET, "cut by a test");
    }
    return n;
}

int tcp_tp_test_stall(locus_tp_t *t, int peer, int rail)
{
    tcp_tp_t *tp = (tcp_tp_t *)t;
    if ((unsigned)peer >= (unsigned)tp->size || (unsigned)rail >= TCP_MAX_RAILS)
        return 0;
    int n = 0;
    for (int k = 0; k < TCP_CLASSES && !tp->failed; k++) {
        tcp_conn_t *c = tp->peers[peer].conn[TCP_LANE(k, rail)];
        if (c && c->state == TCP_C_OPEN) {
            lane_stall(tp, c);
            n++;
        }
    }
    return n;
}
