/*
 * Acknowledgements, for rail failover (tcp_failover.c): with two rails or
 * more to a peer, a frame is kept until the peer has it.
 *
 * Both sides count the frames of each connection (all but ACK): written
 * whole, received whole. Every frame head carries the count received so
 * far on the connection it travels on, so a reply acknowledges for free; a
 * one-way stream gets an ACK frame every ACK_EVERY frames, after one to
 * two sweeps (tcp_timers, every millisecond) of silence, and at once for
 * every lane when a rendezvous receive completes (the sender's buffer is
 * held until then). The sender keeps each frame written (an eager
 * message's copy, a DATA chunk's place in the user's buffer) until it is
 * acknowledged: a send whose chunks are kept completes on their
 * acknowledgement, not when written. A pair with one rail keeps nothing and
 * sends no ACK: there is nowhere else to send a frame again.
 */
#include "tcp_tp.h"

#include <errno.h>
#include <stdlib.h>

#define ACK_EVERY 32                    /* frames received before an ACK frame is sent */

void tcp_peer_keep(tcp_tp_t *tp, tcp_peer_t *pe)
{
    if (!pe->keep && pe->nconn >= 2) {
        pe->keep = 1;
        tp->keeping++;
    }
}

/* Queues on `via` an ACK of the frames received on `of` (often via itself),
 * ahead of anything not yet begun: it is small and frees the peer's memory. */
static void ack_queue(tcp_tp_t *tp, tcp_conn_t *via, tcp_conn_t *of)
{
    tcp_qent_t *e = tcp_qent_new(0);
    if (!e) {
        tcp_fail(tp, -ENOMEM, "out of memory for an acknowledgement");
        return;
    }
    e->head_len = (uint32_t)tcp_head_make(e->head, TCP_F_ACK, 0, NULL, (uint32_t)of->lane,
                                          of->gen, of->rx_frames);
    e->kind = TCP_QE_ACK;
    of->rx_acked = of->rx_frames;
    tcp_queue_push_front(&via->q, e);
    tcp_conn_dirty(tp, via);
    tp->stats.acks++;
}

void tcp_rx_count(tcp_tp_t *tp, tcp_conn_t *c)
{
    c->rx_frames++;
    if (!tp->peers[c->peer].keep)
        return;
    if (c->rx_frames - c->rx_acked >= ACK_EVERY) {
        ack_queue(tp, c, c);
    } else if (!c->on_acks) {
        c->on_acks = 1;
        c->ack_aged = 0;
        c->next_ack = tp->acks;
        tp->acks = c;
    }
}

/* A rendezvous receive is complete: its sender's buffer is held until we
 * acknowledge its chunks, so the ACKs go out at the end of this progress
 * round (all on one lane, one write). Not later: the receiver may not call
 * progress again for a long while, and the sender's send must complete. */
void tcp_acks_peer(tcp_tp_t *tp, int peer)
{
    tcp_peer_t *pe = &tp->peers[peer];
    tcp_conn_t *via = tcp_lane_primary(pe, TCP_CLS_NORMAL);
    if (!via)
        return;
    for (int i = 0; i < TCP_LANES; i++) {
        tcp_conn_t *c = pe->conn[i];
        if (c && c->state == TCP_C_OPEN && c->rx_frames != c->rx_acked)
            ack_queue(tp, via, c);
    }
}

void tcp_sent_keep(tcp_tp_t *tp, tcp_conn_t *c, tcp_qent_t *e)
{
    c->tx_frames++;
    if (tp->peers[c->peer].keep) {
        tcp_queue_push(&c->sent, e);
        return;
    }
    if (e->is_data)
        tcp_data_confirm(tp, e);
    free(e);
}

/* The peer has the first n frames written on c: what was kept for them goes. */
void tcp_ack_apply(tcp_tp_t *tp, tcp_conn_t *c, uint32_t n)
{
    int32_t d = (int32_t)(n - c->tx_acked);
    if (d <= 0)
        return;
    if ((int32_t)(c->tx_frames - n) < 0) {
        tcp_fail(tp, -EPROTO, "bad frame from rank %d on rail %d: it acknowledges frames "
                 "never sent", c->peer, c->rail);
        return;
    }
    while (d-- > 0 && c->sent.head) {
        tcp_qent_t *e = c->sent.head;
        if (!(c->sent.head = e->next))
            c->sent.tail = NULL;
        c->tx_acked++;
        if (e->is_data)
            tcp_data_confirm(tp, e);
        free(e);
    }
}

int tcp_ack_frame(tcp_tp_t *tp, tcp_conn_t *c, const tcp_frame_t *f)
{
    tcp_peer_t *pe = &tp->peers[c->peer];
    if (f->a >= TCP_LANES) {
        tcp_fail(tp, -EPROTO, "bad frame from rank %d on rail %d: acknowledgement of no lane",
                 c->peer, c->rail);
        return -1;
    }
    tcp_conn_t *o = pe->conn[f->a];
    /* A lane lost since (its frames wait for the peer's FAILOVER) or
     * dialled again (another generation) is settled by the FAILOVER. */
    if (o && o->gen == (uint16_t)f->b && o->state == TCP_C_OPEN && o->sent.head)
        tcp_ack_apply(tp, o, (uint32_t)f->c);
    return (int)sizeof *f;
}

/* Acknowledgements owed for a whole sweep go out as ACK frames. */
void tcp_acks_sweep(tcp_tp_t *tp)
{
    for (tcp_conn_t **pp = &tp->acks; *pp;) {
        tcp_conn_t *c = *pp;
        if (c->state == TCP_C_OPEN && c->rx_frames != c->rx_acked && !c->ack_aged) {
            c->ack_aged = 1;
            pp = &c->next_ack;
            continue;
        }
        if (c->state == TCP_C_OPEN && c->rx_frames != c->rx_acked)
            ack_queue(tp, c, c);
        *pp = c->next_ack;
        c->on_acks = 0;
    }
}
