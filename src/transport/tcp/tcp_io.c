/*
 * Bytes on sockets: send queues written with one sendmsg per batch of
 * frames (partial writes resume where they stopped), and the receive loop
 * that reads into a per-connection buffer and parses frames out of it, or
 * straight into the destination for the bulk of a DATA chunk.
 */
#include "tcp_tp.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#define READ_ROUNDS 16       /* recv calls per readable connection per progress */
#define DIRECT_MIN 4096      /* DATA bodies at least this large bypass rbuf */

tcp_qent_t *tcp_qent_new(size_t copy)
{
    tcp_qent_t *e = malloc(sizeof *e + copy);
    if (!e)
        return NULL;
    memset(e, 0, sizeof *e);
    if (copy)
        e->data = (const unsigned char *)(e + 1);
    return e;
}

void tcp_queue_push(tcp_queue_t *q, tcp_qent_t *e)
{
    e->next = NULL;
    if (q->tail)
        q->tail->next = e;
    else
        q->head = e;
    q->tail = e;
}

/* Where an entry goes to be written next: behind a partly written one
 * (its rest must follow on the stream) and the handshake's records. */
tcp_qent_t **tcp_queue_front(tcp_queue_t *q)
{
    tcp_qent_t **pp = &q->head;
    while (*pp && ((*pp)->off > 0 || (*pp)->kind == TCP_QE_HS))
        pp = &(*pp)->next;
    return pp;
}

void tcp_queue_push_front(tcp_queue_t *q, tcp_qent_t *e)
{
    tcp_qent_t **pp = tcp_queue_front(q);
    e->next = *pp;
    *pp = e;
    if (!e->next)
        q->tail = e;
}

void tcp_queue_splice(tcp_queue_t *dst, tcp_queue_t *src)
{
    if (!src->head)
        return;
    if (dst->tail)
        dst->tail->next = src->head;
    else
        dst->head = src->head;
    dst->tail = src->tail;
    src->head = src->tail = NULL;
}

void tcp_queue_free(tcp_queue_t *q)
{
    while (q->head) {
        tcp_qent_t *e = q->head;
        q->head = e->next;
        free(e);
    }
    q->tail = NULL;
}

void tcp_conn_dirty(tcp_tp_t *tp, tcp_conn_t *c)
{
    if (c->on_dirty)
        return;
    c->on_dirty = 1;
    c->next_dirty = tp->dirty;
    tp->dirty = c;
}

/* A message or control frame of class cls: on that class's lowest open
 * rail (rail 0 unless it failed), the class's wait queue until one is open. */
void tcp_lane_push(tcp_tp_t *tp, int peer, int cls, tcp_qent_t *e)
{
    tcp_conn_t *c = tcp_lane_primary(&tp->peers[peer], cls);
    if (c) {
        tcp_queue_push(&c->q, e);
        tcp_conn_dirty(tp, c);
    } else {
        tcp_queue_push(&tp->peers[peer].waitq[cls], e);
    }
}

/* Frames not yet begun carry the latest count of frames received on c. */
static size_t iov_fill(tcp_conn_t *c, struct iovec *iov)
{
    size_t n = 0;
    for (tcp_qent_t *e = c->q.head; e && n < TCP_IOV_MAX - 1; e = e->next) {
        size_t off = e->off;
        if (off == 0 && e->kind != TCP_QE_HS) {
            memcpy(e->head + offsetof(tcp_frame_t, ack), &c->rx_frames, sizeof c->rx_frames);
            c->rx_acked = c->rx_frames;
        }
        if (off < e->head_len) {
            iov[n].iov_base = (void *)(e->head + off);
            iov[n++].iov_len = e->head_len - off;
            off = 0;
        } else {
            off -= e->head_len;
        }
        if (e->data_len > off) {
            iov[n].iov_base = (void *)(e->data + off);
            iov[n++].iov_len = e->data_len - off;
        }
    }
    return n;
}

/* Interest in writability only while the socket is full: once it drains,
 * epoll says so (no sendmsg retried in vain on every progress call). */
static void want_out(tcp_tp_t *tp, tcp_conn_t *c, int on)
{
    if (c->want_out != on && tcp_conn_watch(tp, c, EPOLL_CTL_MOD, EPOLLIN | (on ? EPOLLOUT : 0)) == 0)
        c->want_out = on;
}

void tcp_conn_writable_again(tcp_tp_t *tp, tcp_conn_t *c)
{
    c->blocked = 0;
    if (c->q.head)
        tcp_conn_dirty(tp, c);
    else
        want_out(tp, c, 0);
}

/* Writes what the socket takes. Returns 1 if bytes moved, else 0. Entries
 * written are accounted only after the queue is consistent again, since
 * their completion upcalls may queue more. */
int tcp_conn_flush(tcp_tp_t *tp, tcp_conn_t *c)
{
    if (c->flushing || c->blocked || c->fd < 0 || c->state == TCP_C_CONNECTING)
        return 0;
    c->flushing = 1;
    int moved = 0;
    while (c->q.head) {
        struct iovec iov[TCP_IOV_MAX];
        struct msghdr m = { .msg_iov = iov, .msg_iovlen = iov_fill(c, iov) };
        ssize_t w = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                c->flushing = 0;
                tcp_conn_lost(tp, c, errno);
                return moved;
            }
            c->blocked = 1;
            want_out(tp, c, 1);
            break;
        }
        moved = 1;
        tp->stats.bytes_out[c->rail] += (uint64_t)w;
        tcp_queue_t done = { NULL, NULL };
        size_t left = (size_t)w;
        while (left > 0) {
            tcp_qent_t *e = c->q.head;
            size_t rest = e->head_len + e->data_len - e->off;
            if (left < rest) {
                e->off += left;
                break;
            }
            left -= rest;
            c->q.head = e->next;
            if (!c->q.head)
                c->q.tail = NULL;
            tcp_queue_push(&done, e);
        }
        while (done.head) {
            tcp_qent_t *e = done.head;
            done.head = e->next;
            tcp_qent_written(tp, c, e);
        }
    }
    c->flushing = 0;
    if (!c->q.head) {
        want_out(tp, c, 0);
        if (c->state == TCP_C_REJECTING)
            tcp_conn_close(tp, c);
    }
    return moved;
}

int tcp_flush_dirty(tcp_tp_t *tp)
{
    int n = 0;
    tcp_conn_t *list = tp->dirty;
    tp->dirty = NULL;
    while (list) {
        tcp_conn_t *c = list;
        list = c->next_dirty;
        c->on_dirty = 0;
        if (c->in_grave)
            continue;
        n += tcp_conn_flush(tp, c);
        if (c->q.head && !c->in_grave && !c->blocked)
            tcp_conn_dirty(tp, c);
    }
    return n;
}

/* Parses what rbuf holds; returns the number of frames handled. */
static int parse(tcp_tp_t *tp, tcp_conn_t *c)
{
    int n = 0;
    while (!c->in_grave) {
        size_t avail = c->rend - c->rpos;
        if (c->state != TCP_C_OPEN) {
            if (!tcp_conn_handshake(tp, c))
                break;
            n++;
            continue;
        }
        if (c->rx == TCP_RX_DATA) {
            size_t m = avail < c->dst_left ? avail : c->dst_left;
            if (c->dst) {
                memcpy(c->dst, c->rbuf + c->rpos, m);
                c->dst += m;
            }
            c->rpos += m;
            c->dst_left -= m;
            if (c->dst_left > 0)
                break;
            tcp_data_done(tp, c);
            n++;
            continue;
        }
        if (c->rx == TCP_RX_BIG) {
            size_t m = c->big_len - c->big_got;
            m = avail < m ? avail : m;
            memcpy(c->big + c->big_got, c->rbuf + c->rpos, m);
            c->big_got += m;
            c->rpos += m;
            if (c->big_got < c->big_len)
                break;
            tcp_big_done(tp, c);
            n++;
            continue;
        }
        if (avail < sizeof(tcp_frame_t))
            break;
        int used = tcp_frame_begin(tp, c, c->rbuf + c->rpos, avail);
        if (used <= 0)
            break; /* failed, or a frame not all here yet */
        c->rpos += (size_t)used;
        n++;
    }
    return n;
}

/* A receive straight into the destination: the bulk of a DATA body or of a
 * message too large for rbuf. 1 if it was one, else 0. */
static int read_target(tcp_conn_t *c, unsigned char **p, size_t *len)
{
    if (c->rpos != c->rend)
        return 0;
    if (c->rx == TCP_RX_DATA && c->dst && c->dst_left >= DIRECT_MIN) {
        *p = c->dst;
        *len = c->dst_left;
        return 1;
    }
    if (c->rx == TCP_RX_BIG && c->big_len - c->big_got >= DIRECT_MIN) {
        *p = c->big + c->big_got;
        *len = c->big_len - c->big_got;
        return 1;
    }
    return 0;
}

int tcp_conn_read(tcp_tp_t *tp, tcp_conn_t *c)
{
    int events = 0;
    for (int round = 0; round < READ_ROUNDS && !c->in_grave; round++) {
        unsigned char *p;
        size_t len;
        int direct = read_target(c, &p, &len);
        if (!direct) {
            if (c->rpos > 0) { /* keep a partial frame at the front */
                memmove(c->rbuf, c->rbuf + c->rpos, c->rend - c->rpos);
                c->rend -= c->rpos;
                c->rpos = 0;
            }
            p = c->rbuf + c->rend;
            len = TCP_RBUF_SIZE - c->rend;
        }
        ssize_t r = recv(c->fd, p, len, MSG_DONTWAIT);
        if (r == 0) {
            tcp_conn_lost(tp, c, 0);
            return events + 1;
        }
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                tcp_conn_lost(tp, c, errno);
                events++;
            }
            return events;
        }
        tp->stats.bytes_in[c->rail] += (uint64_t)r;
        if (direct && c->rx == TCP_RX_DATA) {
            c->dst += r;
            c->dst_left -= (size_t)r;
            if (c->dst_left == 0) {
                tcp_data_done(tp, c);
                events++;
            }
        } else if (direct) {
            c->big_got += (size_t)r;
            if (c->big_got == c->big_len)
                events += parse(tp, c);
        } else {
            c->rend += (size_t)r;
            events += parse(tp, c);
        }
        if ((size_t)r < len)
            return events; /* drained the socket for now */
    }
    return events;
}
