/*
 * Message frames (MSG, RTS) put back in the pair's order. Each carries the
 * pair's sequence; with traffic classes they travel on several connections,
 * so a small message on the latency class can arrive before an older one
 * still queued on the normal class. MPI's order is the sender's: a frame
 * ahead of its turn is kept (its header and payload copied) until the ones
 * before it came. Likewise with several rails: message frames go on the
 * lowest open rail, which changes when a rail fails (its frames are sent
 * again on another) or comes back. A repeated sequence, or one ahead with
 * a single class and rail (nothing could have overtaken), is a protocol
 * error: a failover sends again exactly what the peer did not get.
 */
#include "tcp_tp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int seq_error(tcp_tp_t *tp, const tcp_conn_t *c)
{
    tcp_fail(tp, -EPROTO, "bad frame from rank %d on rail %d: message out of sequence "
             "(lost, repeated or overtaken)", c->peer, c->rail);
    return -1;
}

/* 0: f is the pair's next message; 1: it is ahead (to hold; hold() finds
 * a repeat of a held one); -1: failed. */
static int seq_check(tcp_tp_t *tp, const tcp_conn_t *c, const tcp_frame_t *f)
{
    const tcp_peer_t *pe = &tp->peers[c->peer];
    int32_t d = (int32_t)(f->a - pe->rx_seq);
    if (d == 0)
        return 0;
    return d < 0 || (pe->ncls < 2 && pe->nconn < 2) ? seq_error(tp, c) : 1;
}

/* Keeps f, from c (body: its core header and payload, now owned by the
 * list), in sequence order. */
static int hold(tcp_tp_t *tp, const tcp_conn_t *c, const tcp_frame_t *f, unsigned char *body)
{
    tcp_peer_t *pe = &tp->peers[c->peer];
    int32_t d = (int32_t)(f->a - pe->rx_seq);
    tcp_held_t **pp = &pe->held;
    while (*pp && (int32_t)((*pp)->f.a - pe->rx_seq) < d)
        pp = &(*pp)->next;
    if (*pp && (*pp)->f.a == f->a) {
        free(body);
        return seq_error(tp, c); /* a repeat of one already held */
    }
    tcp_held_t *h = malloc(sizeof *h);
    if (!h) {
        free(body);
        tcp_fail(tp, -ENOMEM, "out of memory holding a message that came ahead of its turn");
        return -1;
    }
    h->f = *f;
    h->body = body;
    h->next = *pp;
    *pp = h;
    pe->nheld++;
    tp->stats.held++;
    if (pe->nheld > tp->stats.held_max)
        tp->stats.held_max = pe->nheld;
    return 0;
}

static int hold_copy(tcp_tp_t *tp, const tcp_conn_t *c, const tcp_frame_t *f,
                     const unsigned char *body, size_t len)
{
    unsigned char *copy = malloc(len ? len : 1);
    if (!copy) {
        tcp_fail(tp, -ENOMEM, "out of memory holding a message that came ahead of its turn");
        return -1;
    }
    memcpy(copy, body, len);
    return hold(tp, c, f, copy);
}

static void deliver(tcp_tp_t *tp, int peer, const tcp_frame_t *f, const unsigned char *body)
{
    tp->peers[peer].rx_seq++;
    if (f->type == TCP_F_RTS)
        tcp_rndv_arrived(tp, peer, f, body);
    else if (!tp->draining)
        tp->up.deliver(tp->core, peer, body, f->hdrlen, body + f->hdrlen, f->b);
}

/* Delivers the held frames whose turn has come. */
static void release(tcp_tp_t *tp, int peer)
{
    tcp_peer_t *pe = &tp->peers[peer];
    while (pe->held && pe->held->f.a == pe->rx_seq && !tp->failed) {
        tcp_held_t *h = pe->held;
        pe->held = h->next;
        pe->nheld--;
        deliver(tp, peer, &h->f, h->body);
        free(h->body);
        free(h);
    }
}

void tcp_held_free(tcp_peer_t *pe)
{
    while (pe->held) {
        tcp_held_t *h = pe->held;
        pe->held = h->next;
        free(h->body);
        free(h);
    }
    pe->nheld = 0;
}

/* A frame whose body (len bytes at body) is all in rbuf. */
static int arrived(tcp_tp_t *tp, tcp_conn_t *c, const tcp_frame_t *f, const unsigned char *body,
                   size_t len)
{
    int ahead = seq_check(tp, c, f);
    if (ahead < 0)
        return -1;
    if (ahead)
        return hold_copy(tp, c, f, body, len) < 0 ? -1 : (int)(sizeof *f + len);
    deliver(tp, c->peer, f, body);
    release(tp, c->peer);
    return (int)(sizeof *f + len);
}

int tcp_msg_frame(tcp_tp_t *tp, tcp_conn_t *c, const tcp_frame_t *f, const unsigned char *p,
                  size_t avail)
{
    size_t need = sizeof *f + f->hdrlen + f->b;
    if (need <= avail)
        return arrived(tp, c, f, p + sizeof *f, f->hdrlen + f->b);
    if (need <= TCP_RBUF_SIZE)
        return 0; /* the rest is on its way; it will fit */
    if ((int32_t)(f->a - tp->peers[c->peer].rx_seq) < 0)
        return seq_error(tp, c); /* caught before the body is read */
    c->big = malloc(f->hdrlen + f->b);
    if (!c->big) {
        tcp_fail(tp, -ENOMEM, "out of memory for a %llu-byte message",
                 (unsigned long long)f->b);
        return -1;
    }
    c->big_len = f->hdrlen + f->b;
    c->big_got = 0;
    c->fr = *f;
    c->rx = TCP_RX_BIG;
    return (int)sizeof *f;
}

/* A message too large for rbuf is all in c->big. */
void tcp_big_done(tcp_tp_t *tp, tcp_conn_t *c)
{
    unsigned char *big = c->big;
    c->big = NULL;
    c->rx = TCP_RX_HEAD;
    tcp_rx_count(tp, c);
    int ahead = seq_check(tp, c, &c->fr);
    if (ahead > 0) {
        hold(tp, c, &c->fr, big);
        return;
    }
    if (ahead == 0) {
        deliver(tp, c->peer, &c->fr, big);
        release(tp, c->peer);
    }
    free(big);
}

int tcp_rts_frame(tcp_tp_t *tp, tcp_conn_t *c, const tcp_frame_t *f, const unsigned char *p,
                  size_t avail)
{
    size_t need = sizeof *f + f->hdrlen;
    return need > avail ? 0 : arrived(tp, c, f, p + sizeof *f, f->hdrlen);
}
