/*
 * Traffic classes (LOCUS_QOS, docs/qos.md): which class each send takes,
 * the marks on each class's sockets, and adaptive mode's view of each path.
 *
 * A switch can only favour what it can tell apart: each class has its own
 * connections, and every packet of one carries the class's DSCP in its ToS
 * byte (it survives routers, unlike SO_PRIORITY, which only orders this
 * host's own queues). Moving a message between classes never reorders the
 * pair's messages: the receiver delivers by sequence (tcp_order.c).
 *
 * Adaptive mode probes each path in use: a PING on the normal class, its
 * PONG back on the latency class, so the round trip grows with the queue on
 * the way out. A path whose round trip stays above its idle value by
 * LOCUS_QOS_DELAY_US is congested: its control frames and small messages
 * move up to the latency class, within a budget (LOCUS_QOS_SHARE of the rank's bytes, or
 * LOCUS_QOS_FLOOR per window): a class that carries everything favours
 * nothing.
 */
#include "locus_tunables.h"
#include "tcp_tp.h"
#include "tp_qos.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define WINDOW_NS 100000000ull /* the budget's window: 100 ms */

const char *tcp_qos_name(int mode)
{
    return tp_qos_name(mode);
}

int tcp_qos_cfg_read(tcp_qos_cfg_t *q, char *err, size_t errlen)
{
    tp_qos_t common;
    if (tp_qos_read(&common, err, errlen))
        return -1;
    q->mode = common.mode;
    q->dscp[TCP_CLS_LATENCY] = common.dscp_latency;
    q->dscp[TCP_CLS_NORMAL] = common.dscp_normal;
    q->dscp[TCP_CLS_BULK] = common.dscp_bulk;
    q->small = common.small;
    if (locus_tunable_long("LOCUS_QOS_SHARE", &q->share, err, errlen) ||
        locus_tunable_long("LOCUS_QOS_FLOOR", &q->floor, err, errlen) ||
        locus_tunable_long("LOCUS_QOS_PROBE_US", &q->probe_us, err, errlen) ||
        locus_tunable_long("LOCUS_QOS_DELAY_US", &q->delay_us, err, errlen))
        return -1;
    return tcp_cfg_range("LOCUS_QOS_SHARE", q->share, 0, 100, err, errlen) ||
           tcp_cfg_range("LOCUS_QOS_FLOOR", q->floor, 0, 1L << 40, err, errlen) ||
           tcp_cfg_range("LOCUS_QOS_PROBE_US", q->probe_us, 100, 10000000, err, errlen) ||
           tcp_cfg_range("LOCUS_QOS_DELAY_US", q->delay_us, 1, 10000000, err, errlen) ? -1 : 0;
}

/* SO_PRIORITY after IP_TOS (setting the ToS resets the priority): the
 * priority orders this host's own queues, the DSCP the switches'. */
void tcp_qos_mark(const tcp_tp_t *tp, int fd, int cls)
{
    static const int prio[TCP_CLASSES] = { [TCP_CLS_NORMAL] = 0, [TCP_CLS_LATENCY] = 6,
                                           [TCP_CLS_BULK] = 2 };
    int tos = tp->cfg.qos.dscp[cls] << 2, p = prio[cls];
    (void)setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof tos);
    (void)setsockopt(fd, SOL_SOCKET, SO_PRIORITY, &p, sizeof p);
}

int tcp_tp_lane_marks(const locus_tp_t *t, int peer, int cls, int *tos, int *prio)
{
    const tcp_tp_t *tp = (const tcp_tp_t *)t;
    if ((unsigned)peer >= (unsigned)tp->size || (unsigned)cls >= TCP_CLASSES)
        return -1;
    const tcp_conn_t *c = tp->peers[peer].conn[TCP_LANE(cls, 0)];
    if (!c || c->state != TCP_C_OPEN)
        return -1;
    socklen_t l1 = sizeof *tos, l2 = sizeof *prio;
    return getsockopt(c->fd, IPPROTO_IP, IP_TOS, tos, &l1) == 0 &&
                   getsockopt(c->fd, SOL_SOCKET, SO_PRIORITY, prio, &l2) == 0
               ? 0 : -1;
}

/* ---- adaptive: probes ---- */

static void probe_send(tcp_tp_t *tp, int peer, uint64_t now)
{
    tcp_path_t *pa = &tp->peers[peer].path;
    unsigned char head[TCP_HEAD_MAX];
    pa->probe_id++;
    pa->probe_ns = pa->last_probe_ns = now;
    size_t hl = tcp_head_make(head, TCP_F_PING, 0, NULL, pa->probe_id, now, 0);
    tcp_ctl_send(tp, peer, TCP_CLS_NORMAL, head, hl);
}

void tcp_qos_ping(tcp_tp_t *tp, tcp_conn_t *c, const tcp_frame_t *f)
{
    if (tp->draining)
        return;
    unsigned char head[TCP_HEAD_MAX];
    size_t hl = tcp_head_make(head, TCP_F_PONG, 0, NULL, f->a, f->b, 0);
    int cls = tp->peers[c->peer].ncls > 1 ? TCP_CLS_LATENCY : TCP_CLS_NORMAL;
    tcp_ctl_send(tp, c->peer, cls, head, hl);
}

static void path_judge(tcp_tp_t *tp, tcp_path_t *pa)
{
    uint64_t delay = (uint64_t)tp->cfg.qos.delay_us * 1000u;
    int was = pa->congested;
    if (pa->excess_ns > delay)
        pa->congested = 1;
    else if (pa->excess_ns < delay / 2)
        pa->congested = 0;
    if (pa->congested && !was)
        tp->stats.congested++;
}

void tcp_qos_pong(tcp_tp_t *tp, tcp_conn_t *c, const tcp_frame_t *f)
{
    tcp_path_t *pa = &tp->peers[c->peer].path;
    uint64_t now = tcp_now_ns();
    if (!pa->probe_ns || f->a != pa->probe_id || f->b != pa->probe_ns || now < f->b)
        return; /* not the probe in flight (one from before a restart of the count) */
    uint64_t rtt = now - f->b;
    pa->probe_ns = 0;
    if (!pa->base_ns || rtt < pa->base_ns)
        pa->base_ns = rtt;
    /* A moving average over ~8 probes: one late reply (the peer was not
     * in MPI for a while) does not make a path congested. */
    pa->excess_ns = (7 * pa->excess_ns + (rtt - pa->base_ns)) / 8;
    path_judge(tp, pa);
    tp->stats.probes++;
    if (rtt / 1000 > tp->stats.probe_max_us)
        tp->stats.probe_max_us = rtt / 1000;
}

/* Probes a path in use now and then; a probe out longer than the
 * threshold already says the path is congested (its reply may take
 * hundreds of milliseconds behind a full queue). */
static int path_congested(tcp_tp_t *tp, int peer, uint64_t now)
{
    tcp_path_t *pa = &tp->peers[peer].path;
    pa->last_send_ns = now;
    uint64_t delay = (uint64_t)tp->cfg.qos.delay_us * 1000u;
    if (pa->probe_ns) {
        if (now - pa->probe_ns > delay && !pa->congested) {
            pa->congested = 1;
            pa->excess_ns = now - pa->probe_ns;
            tp->stats.congested++;
        }
    } else if (now - pa->last_probe_ns >= (uint64_t)tp->cfg.qos.probe_us * 1000u) {
        probe_send(tp, peer, now);
    }
    return pa->congested;
}

/* ---- adaptive: the budget ---- */

static void window_roll(tcp_tp_t *tp, uint64_t now)
{
    if (now - tp->win_ns < WINDOW_NS)
        return;
    int two = now - tp->win_ns >= 2 * WINDOW_NS; /* idle for a whole window */
    tp->win_all[1] = two ? 0 : tp->win_all[0];
    tp->win_hi[1] = two ? 0 : tp->win_hi[0];
    tp->win_all[0] = tp->win_hi[0] = 0;
    tp->win_ns = now;
}

static int budget_allows(const tcp_tp_t *tp, size_t bytes)
{
    uint64_t hi = tp->win_hi[0] + tp->win_hi[1] + bytes;
    uint64_t all = tp->win_all[0] + tp->win_all[1] + bytes;
    return hi <= 2 * (uint64_t)tp->cfg.qos.floor || hi * 100 <= (uint64_t)tp->cfg.qos.share * all;
}

static int static_class(const tcp_tp_t *tp, int kind, size_t bytes)
{
    if (kind == TCP_KIND_DATA)
        return TCP_CLS_BULK;
    if (kind == TCP_KIND_CONTROL || bytes <= (size_t)tp->cfg.qos.small)
        return TCP_CLS_LATENCY;
    return TCP_CLS_NORMAL;
}

/* The class of a send of `bytes` (a frame with its payload, or a whole
 * rendezvous message's data) to peer. */
int tcp_qos_class(tcp_tp_t *tp, int peer, int kind, size_t bytes)
{
    int cls = TCP_CLS_NORMAL, mode = tp->cfg.qos.mode;
    if (tp->peers[peer].ncls < TCP_CLASSES)
        mode = TCP_QOS_OFF; /* the peer opened one class: it has QoS off */
    if (mode == TCP_QOS_STATIC) {
        cls = static_class(tp, kind, bytes);
    } else if (mode == TCP_QOS_ADAPTIVE) {
        uint64_t now = tcp_now_ns();
        window_roll(tp, now);
        /* Only raises: data moved down to bulk on a path judged congested
         * would starve behind another rank's data still judged clear
         * (strict priority), and paths flip as TCP's queues fill and drain. */
        if (kind != TCP_KIND_DATA && path_congested(tp, peer, now)) {
            cls = static_class(tp, kind, bytes);
            if (cls == TCP_CLS_LATENCY && !budget_allows(tp, bytes)) {
                cls = TCP_CLS_NORMAL;
                tp->stats.denied++;
            }
            tp->stats.raised += cls == TCP_CLS_LATENCY;
        }
        tp->win_all[0] += bytes;
        if (cls == TCP_CLS_LATENCY)
            tp->win_hi[0] += bytes;
    }
    tp->stats.cls_frames[cls]++;
    tp->stats.cls_bytes[cls] += bytes;
    return cls;
}
