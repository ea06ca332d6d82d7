/*
 * Progress (socket events, handshake deadlines, the stripe pump, writing),
 * sleeping until a socket is ready, and the goodbye at finalize.
 */
#include "tcp_tp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define EVENTS_MAX 64

/* A closed connection still on the dirty list waits for the list to let
 * go of it (the next flush). */
static void grave_empty(tcp_tp_t *tp)
{
    tcp_conn_t *keep = NULL;
    while (tp->grave) {
        tcp_conn_t *c = tp->grave;
        tp->grave = c->next;
        if (c->on_dirty) {
            c->next = keep;
            keep = c;
            continue;
        }
        tcp_queue_free(&c->q);
        tcp_queue_free(&c->sent);
        free(c->big);
        free(c->rbuf);
        free(c);
    }
    tp->grave = keep;
}

static int events_handle(tcp_tp_t *tp, int timeout_ms)
{
    struct epoll_event ev[EVENTS_MAX];
    int k = epoll_wait(tp->ep, ev, EVENTS_MAX, timeout_ms);
    if (k < 0) {
        if (errno != EINTR)
            tcp_fail(tp, -errno, "epoll_wait: %s", strerror(errno));
        return 0;
    }
    int n = 0;
    for (int i = 0; i < k; i++) {
        if (*(int *)ev[i].data.ptr == TCP_OBJ_RAIL) {
            tcp_accept_all(tp, ev[i].data.ptr);
            n++;
            continue;
        }
        tcp_conn_t *c = ev[i].data.ptr;
        if (c->in_grave || c->fd < 0) /* closed this round, or waiting to dial again */
            continue;
        if (c->state == TCP_C_CONNECTING) {
            tcp_conn_writable(tp, c);
            n++;
            continue;
        }
        if (ev[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))
            n += tcp_conn_read(tp, c);
        if ((ev[i].events & (EPOLLOUT | EPOLLERR)) && !c->in_grave && c->blocked)
            tcp_conn_writable_again(tp, c);
    }
    return n;
}

/* With a few open connections and nothing else to watch, reading each
 * socket directly saves a system call per message: an arrival costs one
 * recv instead of epoll_wait plus recv (a round trip on loopback is a few
 * microseconds, a system call a few hundred nanoseconds). epoll still runs
 * every DIRECT_EPOLL_EVERY rounds for what direct reads do not see: new
 * connections on the rails' listening sockets. Returns the events, or -1
 * when this round must go through epoll. */
#define DIRECT_MAX 4
#define DIRECT_EPOLL_EVERY 16

static int direct_read(tcp_tp_t *tp)
{
    if (tp->handshaking || ++tp->rounds % DIRECT_EPOLL_EVERY == 0)
        return -1;
    tcp_conn_t *open[DIRECT_MAX];
    int k = 0;
    for (tcp_conn_t *c = tp->conns; c; c = c->next) {
        if (c->state != TCP_C_OPEN || c->blocked || c->in_grave || k == DIRECT_MAX)
            return -1;
        open[k++] = c;
    }
    if (k == 0)
        return -1;
    int n = 0;
    for (int i = 0; i < k; i++)   /* a lost connection stays in memory until grave_empty */
        if (!open[i]->in_grave)
            n += tcp_conn_read(tp, open[i]);
    return n;
}

int tcp_tp_progress(locus_tp_t *t)
{
    tcp_tp_t *tp = (tcp_tp_t *)t;
    if (tp->failed)
        return tp->failed;
    int n = direct_read(tp);
    if (n < 0)
        n = events_handle(tp, 0);
    if (tp->handshaking)
        tcp_deadlines(tp);
    if (tp->rest_until_ns)
        tcp_rails_wake(tp);
    if ((tp->keeping || tp->cfg.user_timeout > 0) && (++tp->timer_rounds & 7) == 0)
        tcp_timers(tp); /* acknowledgements owed, stalled rails, silent hosts */
    if (tp->pump_head >= 0)
        n += tcp_pump(tp);
    if (tp->dirty) {
        n += tcp_flush_dirty(tp);
        if (tp->pump_head >= 0) /* written chunks opened the window again */
            n += tcp_pump(tp);
    }
    if (tp->grave)
        grave_empty(tp);
    return tp->failed ? tp->failed : n;
}

int tcp_tp_wait(locus_tp_t *t, int timeout_ms)
{
    tcp_tp_t *tp = (tcp_tp_t *)t;
    if (tp->failed)
        return tp->failed;
    if ((tp->handshaking || tp->rest_until_ns || tp->keeping) && timeout_ms > 100)
        timeout_ms = 100; /* deadlines, resting rails, stalls are checked by progress */
    for (tcp_conn_t *c = tp->dirty; c; c = c->next_dirty)
        if (!c->blocked && !c->in_grave)
            return 1; /* frames to write now: nothing to wait for */
    /* Level-triggered: the events stay pending for progress() to handle;
     * connections with a full socket are registered for writability. */
    struct epoll_event ev;
    int k = epoll_wait(tp->ep, &ev, 1, timeout_ms);
    tp->stats.waits++;
    if (k < 0 && errno != EINTR) {
        tcp_fail(tp, -errno, "epoll_wait: %s", strerror(errno));
        return tp->failed;
    }
    return k > 0;
}

/* ---- finalize ---- */

/* LOCUS_VERBOSE=1: what strangers cost this rank, if anything. */
static void strangers_note(const tcp_tp_t *tp)
{
    const tcp_stats_t *s = &tp->stats;
    if (s->auth_refused + s->auth_timeouts + s->auth_evicted + s->accept_errors + s->rejected +
        s->redials == 0)
        return;
    tcp_note(tp, "strangers: %llu refused without the job key, %llu hellos refused, %llu "
             "closed silent, %llu closed unproven for newer ones; accept ran short %llu "
             "time%s; %llu of our dials closed before the peer's proof",
             (unsigned long long)s->auth_refused, (unsigned long long)s->rejected,
             (unsigned long long)s->auth_timeouts, (unsigned long long)s->auth_evicted,
             (unsigned long long)s->accept_errors, s->accept_errors == 1 ? "" : "s",
             (unsigned long long)s->redials);
}

/* Queues BYE behind whatever each newly open connection carries. */
static void bye_queue(tcp_tp_t *tp)
{
    for (tcp_conn_t *c = tp->conns; c; c = c->next) {
        if (c->state != TCP_C_OPEN || c->bye_sent)
            continue;
        tcp_qent_t *e = tcp_qent_new(0);
        if (!e)
            return;
        tcp_frame_t f = { .type = TCP_F_BYE };
        memcpy(e->head, &f, sizeof f);
        e->head_len = sizeof f;
        tcp_queue_push(&c->q, e);
        tcp_conn_dirty(tp, c);
        c->bye_sent = 1;
    }
}

/* Connections still owing something: frames to write, the peer's BYE to
 * read, or our rail-0 dial to finish because frames wait for it. (Other
 * handshakes carry nothing anyone needs now: a rail that is not up yet,
 * a peer dialling us to send what we will not read.) */
static int bye_pending(const tcp_tp_t *tp)
{
    int n = 0;
    for (const tcp_conn_t *c = tp->conns; c; c = c->next)
        n += (c->state == TCP_C_OPEN && (c->q.head || !c->bye_rcvd)) ||
             ((c->state == TCP_C_CONNECTING || c->state == TCP_C_AUTH_CHAL ||
               c->state == TCP_C_HELLO_WAIT || c->state == TCP_C_RETRY) && c->dialled &&
              !c->redial && tp->peers[c->peer].waitq[c->cls].head);
    return n;
}

/*
 * Handshakes under way are finished (messages may wait for them), then on
 * every open connection: what is queued, then BYE; then read (dropping
 * anything but the peer's BYE) until the peer's BYE came too. Only then
 * close: nothing unread is left in our socket, so the close is a FIN and
 * never a reset that could destroy data still in flight to the peer.
 */
void tcp_shutdown(tcp_tp_t *tp)
{
    tp->draining = 1;
    tcp_redials_stop(tp); /* a lost rail carries nothing finalize needs */
    uint64_t deadline = locus_now_ns() + (uint64_t)tp->cfg.bye_timeout * 1000000000ull;
    for (;;) {
        bye_queue(tp);
        tcp_flush_dirty(tp);
        /* After a failure the job is going down: no waiting on anyone. */
        if (bye_pending(tp) == 0 || locus_now_ns() >= deadline || tp->failed)
            break;
        events_handle(tp, 20);
        if (tp->handshaking)
            tcp_deadlines(tp);
        tcp_timers(tp); /* a rail that stalls now still moves its goodbye on */
        tcp_rails_wake(tp);
        grave_empty(tp);
    }
    strangers_note(tp);
    int left = bye_pending(tp);
    if (left && !tp->failed)
        tcp_note(tp, "finalize: %d connection%s did not finish (goodbye) within %ld s", left,
                 left == 1 ? "" : "s", tp->cfg.bye_timeout);
    for (int p = 0; p < tp->size; p++)
        for (int k = 0; k < TCP_CLASSES; k++)
            if (tp->peers[p].waitq[k].head)
                tcp_note(tp, "finalize: messages to rank %d never left (no connection)", p);
    while (tp->conns)
        tcp_conn_close(tp, tp->conns);
    grave_empty(tp);
}
