/*
 * Messages: eager sends (written straight to the socket when nothing is
 * queued before them), the rendezvous (RTS, CTS, DATA chunks striped over
 * the open rails) and the handling of each arriving frame.
 */
#include "tcp_tp.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* The smallest chunk a message is split into to use several rails. */
#define SPLIT_MIN (16u << 10)

static int proto_error(tcp_tp_t *tp, const tcp_conn_t *c, const char *what)
{
    tcp_fail(tp, -EPROTO, "bad frame from rank %d on rail %d: %s", c->peer, c->rail, what);
    return -1;
}

static tcp_qent_t *frame_copy(tcp_tp_t *tp, const unsigned char *head, size_t hl,
                              const void *data, size_t len)
{
    tcp_qent_t *e = tcp_qent_new(len);
    if (!e) {
        tcp_fail(tp, -ENOMEM, "out of memory for a send queue entry");
        return NULL;
    }
    memcpy(e->head, head, hl);
    e->head_len = (uint32_t)hl;
    if (len)
        memcpy((void *)e->data, data, len);
    e->data_len = len;
    e->kind = TCP_QE_FRAME;
    return e;
}

/* Sends a frame (head = frame + core header, then data) on the lowest open
 * rail of class cls: straight to the socket when that lane is idle, else
 * (and for whatever the socket did not take) queued with a copy of the
 * data. With several rails a frame written whole is kept (copied) until
 * the peer acknowledges it. */
static int lane_send(tcp_tp_t *tp, int dst, int cls, unsigned char *head, size_t hl,
                     const void *data, size_t len)
{
    tcp_peer_t *pe = &tp->peers[dst];
    tcp_conn_t *c = tcp_lane_primary(pe, cls);
    size_t done = 0;
    if (c && !c->q.head && !c->flushing) {
        memcpy(head + offsetof(tcp_frame_t, ack), &c->rx_frames, sizeof c->rx_frames);
        struct iovec iov[2] = { { (void *)head, hl }, { (void *)data, len } };
        struct msghdr m = { .msg_iov = iov, .msg_iovlen = len ? 2 : 1 };
        ssize_t w = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                tcp_conn_lost(tp, c, errno); /* another rail takes it, if one is left */
                if (tp->failed)
                    return tp->failed;
            }
            w = 0;
        } else {
            c->rx_acked = c->rx_frames;
            tp->stats.bytes_out[c->rail] += (uint64_t)w;
        }
        if ((size_t)w == hl + len) {
            c->tx_frames++;
            if (!pe->keep)
                return 0;
            tcp_qent_t *e = frame_copy(tp, head, hl, data, len);
            if (!e)
                return tp->failed;
            tcp_queue_push(&c->sent, e);
            return 0;
        }
        done = (size_t)w;
    }
    tcp_qent_t *e = frame_copy(tp, head, hl, data, len);
    if (!e)
        return tp->failed;
    e->off = done;
    e->counted = 1;
    pe->queued += hl + len;
    if (pe->queued > tp->stats.queued_max)
        tp->stats.queued_max = pe->queued;
    tcp_lane_push(tp, dst, cls, e);
    return 0;
}

size_t tcp_head_make(unsigned char *head, int type, size_t hdrlen, const void *hdr,
                        uint32_t a, uint64_t b, uint64_t c)
{
    tcp_frame_t f = { .type = (uint8_t)type, .hdrlen = (uint8_t)hdrlen, .a = a, .b = b, .c = c };
    memcpy(head, &f, sizeof f);
    if (hdrlen)
        memcpy(head + sizeof f, hdr, hdrlen);
    return sizeof f + hdrlen;
}

/* A control frame (CTS, PING, PONG) on rail 0 of class cls. Never refused
 * (no AGAIN): they are small and bounded by the messages in flight. Written
 * at once where the lane is open: the peer is waiting on it. */
void tcp_ctl_send(tcp_tp_t *tp, int peer, int cls, const unsigned char *head, size_t hl)
{
    tcp_qent_t *e = tcp_qent_new(0);
    if (!e) {
        tcp_fail(tp, -ENOMEM, "out of memory for a control frame");
        return;
    }
    memcpy(e->head, head, hl);
    e->head_len = (uint32_t)hl;
    e->kind = TCP_QE_FRAME;
    tcp_lane_push(tp, peer, cls, e);
    tcp_conn_t *c = tcp_lane_primary(&tp->peers[peer], cls);
    if (c)
        tcp_conn_flush(tp, c);
}

int tcp_tp_send(locus_tp_t *t, int dst, const void *hdr, size_t hdrlen,
                const void *data, size_t len, void *ctx)
{
    tcp_tp_t *tp = (tcp_tp_t *)t;
    if ((unsigned)dst >= (unsigned)tp->size || dst == tp->rank || hdrlen > LOCUS_TP_HDR_MAX)
        return -EINVAL;
    if (tp->failed)
        return tp->failed;
    tcp_peer_t *pe = &tp->peers[dst];
    if (pe->state == TCP_P_NONE && tcp_peer_dial(tp, dst) != 0)
        return tp->failed;
    if (pe->bye) {
        tcp_fail(tp, -EPIPE, "send to rank %d after it finalized", dst);
        return tp->failed;
    }
    /* With several rails, a message that can fill two chunks of SPLIT_MIN
     * goes by rendezvous so that its chunks are striped: eager frames all
     * travel on rail 0 (they keep the pair's order). */
    int eager = len <= pe->eager_max && (pe->nconn < 2 || len < 2 * SPLIT_MIN);
    size_t cost = sizeof(tcp_frame_t) + hdrlen + (eager ? len : 0);
    /* Backpressure: a peer that does not read costs at most this much. */
    if (pe->queued > 0 && pe->queued + cost > (uint64_t)tp->cfg.sendq_max) {
        tp->stats.again++;
        return LOCUS_TP_AGAIN;
    }
    unsigned char head[TCP_HEAD_MAX];
    int cls = tcp_qos_class(tp, dst, eager ? TCP_KIND_MSG : TCP_KIND_CONTROL, cost);
    if (eager) {
        size_t hl = tcp_head_make(head, TCP_F_MSG, hdrlen, hdr, pe->tx_seq++, len, 0);
        int rc = lane_send(tp, dst, cls, head, hl, data, len);
        if (rc < 0)
            return rc;
        tp->stats.eager_sent++;
        return LOCUS_TP_DONE;
    }
    tcp_sreq_t *s = tp_ids_get(&tp->sids, sizeof *s);
    if (!s) {
        tcp_fail(tp, -ENOMEM, "out of memory for a large send");
        return tp->failed;
    }
    s->peer = dst;
    s->buf = data;
    s->len = len;
    s->ctx = ctx;
    size_t hl = tcp_head_make(head, TCP_F_RTS, hdrlen, hdr, pe->tx_seq++, len, s->id);
    int rc = lane_send(tp, dst, cls, head, hl, NULL, 0);
    if (rc < 0)
        return rc;
    pe->outstanding++;
    tp->stats.rndv_sent++;
    return LOCUS_TP_PENDING;
}

/* ---- the receiver's side of the rendezvous ---- */

static void rndv_complete(tcp_tp_t *tp, locus_tp_rndv_t *r, int counted)
{
    void *ctx = r->ctx;
    if (counted) {
        tp->peers[r->peer].outstanding--;
        /* The sender's buffer is held until we acknowledge its chunks:
         * acknowledge now, so that its send completes a round trip later
         * instead of an ack delay later. */
        if (tp->peers[r->peer].keep)
            tcp_acks_peer(tp, r->peer);
    }
    tp_ids_put(&tp->rids, r->id);
    tp->stats.rndv_recv++;
    if (!tp->draining)
        tp->up.rndv_done(tp->core, ctx);
}

int tcp_tp_rndv_recv(locus_tp_t *t, locus_tp_rndv_t *r, void *buf, size_t len, void *ctx,
                     int hints)
{
    (void)hints;   /* one path: the socket */
    tcp_tp_t *tp = (tcp_tp_t *)t;
    if (!r || !r->busy || r->state != TCP_R_ARRIVED)
        return -EINVAL;
    if (tp->failed)
        return tp->failed;
    r->buf = buf;
    r->want = len < r->len ? len : r->len;
    r->ctx = ctx;
    r->state = TCP_R_RECEIVING;
    unsigned char head[TCP_HEAD_MAX];
    size_t hl = tcp_head_make(head, TCP_F_CTS, 0, NULL, r->sid, r->want, r->id);
    tcp_ctl_send(tp, r->peer, tcp_qos_class(tp, r->peer, TCP_KIND_CONTROL, hl), head, hl);
    if (r->want == 0)
        rndv_complete(tp, r, 0);
    else
        tp->peers[r->peer].outstanding++;
    return tp->failed;
}

void tcp_data_done(tcp_tp_t *tp, tcp_conn_t *c)
{
    locus_tp_rndv_t *r = c->dst_r;
    c->rx = TCP_RX_HEAD;
    c->dst = NULL;
    c->dst_r = NULL;
    tcp_rx_count(tp, c);
    if (!r)
        return; /* discarded while draining */
    r->got += c->fr.c;
    if (r->got == r->want)
        rndv_complete(tp, r, 1);
}

/* ---- the sender's side ---- */

static void send_complete(tcp_tp_t *tp, tcp_sreq_t *s)
{
    void *ctx = s->ctx;
    tp->peers[s->peer].outstanding--;
    tp_ids_put(&tp->sids, s->id);
    if (!tp->draining)
        tp->up.send_done(tp->core, ctx);
}

/* The peer has this chunk (it was written, or acknowledged where frames
 * are kept): its send completes with the last one. */
void tcp_data_confirm(tcp_tp_t *tp, tcp_qent_t *e)
{
    tcp_sreq_t *s = e->sreq;
    s->written += e->data_len;
    if (s->written == s->want)
        send_complete(tp, s);
}

void tcp_qent_written(tcp_tp_t *tp, tcp_conn_t *c, tcp_qent_t *e)
{
    if (e->is_data)
        c->chunk_queued -= e->data_len;
    if (e->counted) { /* once: a frame sent again after a failover is no longer counted */
        tp->peers[c->peer].queued -= e->head_len + e->data_len;
        e->counted = 0;
    }
    if (e->kind == TCP_QE_FRAME)
        tcp_sent_keep(tp, c, e);
    else
        free(e);
}

/* The open rail of pe's class cls with the least queued, if it has room
 * for a chunk. */
static tcp_conn_t *rail_pick(tcp_peer_t *pe, int cls, uint64_t window)
{
    tcp_conn_t *best = NULL;
    for (int i = 0; i < pe->nconn; i++) {
        tcp_conn_t *c = pe->conn[TCP_LANE(cls, i)];
        if (c && c->state == TCP_C_OPEN && c->chunk_queued < window &&
            (!best || c->chunk_queued < best->chunk_queued))
            best = c;
    }
    return best;
}

/* The chunk size for send s: the configured one, or for a message smaller
 * than one chunk per rail an equal share per rail (at least SPLIT_MIN), so
 * that mid-size messages (a collective's blocks) use every rail too. */
static uint64_t chunk_for(const tcp_tp_t *tp, const tcp_peer_t *pe, const tcp_sreq_t *s)
{
    uint64_t chunk = (uint64_t)tp->cfg.chunk_size;
    if (pe->nconn < 2 || s->want >= (uint64_t)pe->nconn * chunk)
        return chunk;
    uint64_t share = (s->want + (uint64_t)pe->nconn - 1) / (uint64_t)pe->nconn;
    return share < SPLIT_MIN ? (chunk < SPLIT_MIN ? chunk : SPLIT_MIN) : share;
}

/* Queues DATA chunks of one peer's sends, oldest first, each on the open
 * rail with the least queued while that rail has less than two chunks
 * waiting: the kernel stays fed, frames behind stay close, and a faster
 * rail takes more. Returns the chunks queued, -1 when out of memory. */
static int pump_peer(tcp_tp_t *tp, tcp_peer_t *pe)
{
    uint64_t window = 2 * (uint64_t)tp->cfg.chunk_size;
    int n = 0;
    tcp_conn_t *c;
    while (pe->act_head && (c = rail_pick(pe, pe->act_head->cls, window))) {
        tcp_sreq_t *s = pe->act_head;
        uint64_t chunk = chunk_for(tp, pe, s);
        tcp_qent_t *e = tcp_qent_new(0);
        if (!e) {
            tcp_fail(tp, -ENOMEM, "out of memory for a data chunk");
            return -1;
        }
        uint64_t m = s->want - s->queued < chunk ? s->want - s->queued : chunk;
        e->head_len = (uint32_t)tcp_head_make(e->head, TCP_F_DATA, 0, NULL, s->rid, s->queued, m);
        e->data = s->buf + s->queued;
        e->data_len = m;
        e->is_data = 1;
        e->kind = TCP_QE_FRAME;
        e->sreq = s;
        tcp_queue_push(&c->q, e);
        tcp_conn_dirty(tp, c);
        c->chunk_queued += m;
        s->queued += m;
        tp->stats.chunks_sent++;
        n++;
        if (s->queued == s->want && !(pe->act_head = s->next))
            pe->act_tail = NULL;
    }
    return n;
}

/* Pumps every peer with sends left; a peer leaves the list when it has none. */
int tcp_pump(tcp_tp_t *tp)
{
    int n = 0;
    for (int *pp = &tp->pump_head; *pp >= 0;) {
        tcp_peer_t *pe = &tp->peers[*pp];
        int k = pump_peer(tp, pe);
        if (k < 0)
            return n;
        n += k;
        if (pe->act_head) {
            pp = &pe->next_pump;
        } else {
            pe->on_pump = 0;
            *pp = pe->next_pump;
        }
    }
    return n;
}

/* ---- arriving frames ---- */

/* An RTS in its turn (tcp_order.c): the core decides where the data goes. */
int tcp_rndv_arrived(tcp_tp_t *tp, int peer, const tcp_frame_t *f, const unsigned char *hdr)
{
    if (tp->draining)
        return 0;
    locus_tp_rndv_t *r = tp_ids_get(&tp->rids, sizeof *r);
    if (!r) {
        tcp_fail(tp, -ENOMEM, "out of memory for a large receive");
        return -1;
    }
    r->peer = peer;
    r->state = TCP_R_ARRIVED;
    r->sid = (uint32_t)f->c;
    r->len = f->b;
    tp->up.rndv_arrived(tp->core, peer, hdr, f->hdrlen, f->b, r);
    return 0;
}

static int cts_frame(tcp_tp_t *tp, tcp_conn_t *c, const tcp_frame_t *f)
{
    if (tp->draining)
        return (int)sizeof *f;
    tcp_sreq_t *s = tp_ids_find(&tp->sids, f->a);
    if (!s || s->peer != c->peer || s->want || s->queued || f->c > UINT32_MAX)
        return proto_error(tp, c, "clear-to-send for no waiting send");
    s->rid = (uint32_t)f->c;
    s->want = f->b < s->len ? f->b : s->len;
    s->cls = tcp_qos_class(tp, c->peer, TCP_KIND_DATA, s->want);
    if (s->want == 0) {
        send_complete(tp, s);
        return (int)sizeof *f;
    }
    tcp_peer_t *pe = &tp->peers[c->peer];
    s->next = NULL;
    if (pe->act_tail)
        pe->act_tail->next = s;
    else
        pe->act_head = s;
    pe->act_tail = s;
    if (!pe->on_pump) {
        pe->on_pump = 1;
        pe->next_pump = tp->pump_head;
        tp->pump_head = c->peer;
    }
    return (int)sizeof *f;
}

static int data_frame(tcp_tp_t *tp, tcp_conn_t *c, const tcp_frame_t *f)
{
    locus_tp_rndv_t *r = tp->draining ? NULL : tp_ids_find(&tp->rids, f->a);
    if (!tp->draining && (!r || r->peer != c->peer || r->state != TCP_R_RECEIVING ||
                          f->c == 0 || f->b > r->want || f->c > r->want - f->b))
        return proto_error(tp, c, "data outside any receive");
    c->fr = *f;
    c->dst_r = r;
    c->dst = r ? r->buf + f->b : NULL;
    c->dst_left = f->c;
    c->rx = TCP_RX_DATA;
    return (int)sizeof *f;
}

/* Message and control frames may come on any lane: the lowest open rail
 * of a class carries them, and that changes when a rail fails or is back. */
static int frame_handle(tcp_tp_t *tp, tcp_conn_t *c, const tcp_frame_t *f,
                        const unsigned char *p, size_t avail)
{
    tcp_peer_t *pe = &tp->peers[c->peer];
    switch (f->type) {
    case TCP_F_MSG:
    case TCP_F_RTS:
        if (f->hdrlen > LOCUS_TP_HDR_MAX)
            return proto_error(tp, c, "message frame with a long header");
        if (f->type == TCP_F_RTS)
            return f->c > UINT32_MAX ? proto_error(tp, c, "bad request id")
                                     : tcp_rts_frame(tp, c, f, p, avail);
        if (f->b > (uint64_t)tp->cfg.eager_max)
            return proto_error(tp, c, "eager message above the eager limit");
        return tcp_msg_frame(tp, c, f, p, avail);
    case TCP_F_CTS:
        return cts_frame(tp, c, f);
    case TCP_F_DATA:
        return data_frame(tp, c, f);
    case TCP_F_BYE:
        c->bye_rcvd = 1;
        pe->bye = 1; /* sent on every lane at once: the peer is finalizing */
        return (int)sizeof *f;
    case TCP_F_PING:
        tcp_qos_ping(tp, c, f);
        return (int)sizeof *f;
    case TCP_F_PONG:
        tcp_qos_pong(tp, c, f);
        return (int)sizeof *f;
    case TCP_F_FAILOVER:
        return tcp_failover_frame(tp, c, f);
    default:
        return proto_error(tp, c, "unknown frame type");
    }
}

/* Whether f is all in the avail bytes at its head, so that handling it
 * consumes it whole. (DATA, and a message too large for rbuf, are counted
 * when their last byte is in: tcp_data_done, tcp_big_done.) */
static int frame_whole(const tcp_frame_t *f, size_t avail)
{
    switch (f->type) {
    case TCP_F_MSG:
        return sizeof *f + f->hdrlen + f->b <= avail;
    case TCP_F_RTS:
        return sizeof *f + f->hdrlen <= avail;
    case TCP_F_DATA:
        return 0;
    default:
        return 1;
    }
}

int tcp_frame_begin(tcp_tp_t *tp, tcp_conn_t *c, const unsigned char *p, size_t avail)
{
    tcp_frame_t f;
    memcpy(&f, p, sizeof f);
    if (c->sent.head)
        tcp_ack_apply(tp, c, f.ack);
    if (f.type == TCP_F_ACK) /* not counted: it is never sent again */
        return tcp_ack_frame(tp, c, &f);
    /* Counted before it is handled: handling may fail this very connection
     * (a reply written to it finds it reset), and the count it then
     * reports to the peer must include a frame already delivered. */
    if (frame_whole(&f, avail))
        tcp_rx_count(tp, c);
    return frame_handle(tp, c, &f, p, avail);
}
