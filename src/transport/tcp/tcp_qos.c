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

const char *tcp_qos_name(int mode)
{
    return tp_qos_name(mode);
}

int tcp_qos_cfg_read(tcp_qos_cfg_t *q, char *err, size_t errlen)
{
    if (tp_qos_read(&q->s, err, errlen))
        return -1;
    q->dscp[TCP_CLS_LATENCY] = q->s.dscp_latency;
    q->dscp[TCP_CLS_NORMAL] = q->s.dscp_normal;
    q->dscp[TCP_CLS_BULK] = q->s.dscp_bulk;
    return 0;
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
    unsigned char head[TCP_HEAD_MAX];
    uint32_t id = tp_qos_probe_start(&tp->peers[peer].path, now);
    size_t hl = tcp_head_make(head, TCP_F_PING, 0, NULL, id, now, 0);
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

void tcp_qos_pong(tcp_tp_t *tp, tcp_conn_t *c, const tcp_frame_t *f)
{
    tp_qos_probe_reply(&tp->peers[c->peer].path, &tp->cfg.qos.s, (uint32_t)f->a, f->b,
                       locus_now_ns(), &tp->stats.adaptive);
}

static int static_class(const tcp_tp_t *tp, int kind, size_t bytes)
{
    if (kind == TCP_KIND_DATA)
        return TCP_CLS_BULK;
    if (kind == TCP_KIND_CONTROL || bytes <= (size_t)tp->cfg.qos.s.small)
        return TCP_CLS_LATENCY;
    return TCP_CLS_NORMAL;
}

/* The class of a send of `bytes` (a frame with its payload, or a whole
 * rendezvous message's data) to peer. */
int tcp_qos_class(tcp_tp_t *tp, int peer, int kind, size_t bytes)
{
    int cls = TCP_CLS_NORMAL, mode = tp->cfg.qos.s.mode;
    if (tp->peers[peer].ncls < TCP_CLASSES)
        mode = TCP_QOS_OFF; /* the peer opened one class: it has QoS off */
    if (mode == TCP_QOS_STATIC) {
        cls = static_class(tp, kind, bytes);
    } else if (mode == TCP_QOS_ADAPTIVE) {
        uint64_t now = locus_now_ns();
        /* Only raises: data moved down to bulk on a path judged congested
         * would starve behind another rank's data still judged clear
         * (strict priority), and paths flip as TCP's queues fill and drain.
         * The path is probed while control and message frames use it. */
        int probe = 0, want = 0;
        if (kind != TCP_KIND_DATA) {
            want = tp_qos_path_use(&tp->peers[peer].path, &tp->cfg.qos.s, now, &probe,
                                   &tp->stats.adaptive) &&
                   static_class(tp, kind, bytes) == TCP_CLS_LATENCY;
            if (probe)
                probe_send(tp, peer, now);
        }
        if (tp_qos_raise(&tp->budget, &tp->cfg.qos.s, want, bytes, now, &tp->stats.adaptive))
            cls = TCP_CLS_LATENCY;
    }
    tp->stats.cls_frames[cls]++;
    tp->stats.cls_bytes[cls] += bytes;
    return cls;
}
