/*
 * progress() and finalize()'s flush: one poll() over the listener, the
 * incoming connections and our own connections to peers.
 *
 * Dynamic processes are rare and slow to come, while progress() runs in
 * every idle loop of the core: so it costs nothing without sockets, and
 * polls at most every POLL_GAP_NS while nothing of ours waits to be
 * written.
 */
#include "dyn_tp.h"

#include <errno.h>
#include <linux/sockios.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define POLL_GAP_NS 20000ull
#define DRAIN_POLL_MS 100

/* Room for one pollfd per socket; -1: out of memory. */
static int pfd_room(dyn_tp_t *tp)
{
    int need = 1 + tp->nins + tp->npeers;
    if (need <= tp->cap_pfd)
        return 0;
    struct pollfd *pfd = realloc(tp->pfd, (size_t)need * sizeof *pfd);
    if (!pfd)
        return -1;
    tp->pfd = pfd;
    void **pown = realloc(tp->pown, (size_t)need * sizeof *pown);
    if (!pown)
        return -1;
    tp->pown = pown;
    tp->cap_pfd = need;
    return 0;
}

static void pfd_add(dyn_tp_t *tp, int *n, int fd, short events, void *own)
{
    tp->pfd[*n] = (struct pollfd){ .fd = fd, .events = events };
    tp->pown[*n] = own;
    (*n)++;
}

/* Our connection to p became readable or hung up. Listeners never write,
 * so this is its end: quiet when nothing we sent is still on the way (the
 * peer went away between messages; a later send dials again), a loss
 * otherwise. 1: closed quietly, 0: nothing, -1: fatal. */
static int out_ended(dyn_tp_t *tp, dyn_peer_t *p)
{
    char junk[256];
    ssize_t k = recv(p->fd, junk, sizeof junk, MSG_DONTWAIT);
    if (k > 0 || (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)))
        return 0;
    int err = k < 0 ? errno : 0;
    int unsent = 0; /* bytes in the kernel's queue: unsent or not yet acknowledged */
    if (ioctl(p->fd, SIOCOUTQ, &unsent) != 0)
        unsent = 0;
    size_t queued = p->out.len - p->out.off;
    if (queued == 0 && unsent == 0) {
        dyn_out_close(tp, p);
        return 1;
    }
    char why[160];
    snprintf(why, sizeof why, "%s with %zu bytes not delivered",
             err ? strerror(err) : "closed by the peer", queued + (size_t)unsent);
    dyn_fail(tp, "%s", dyn_peer_lost(tp, p, why));
    return -1;
}

static int out_ready(dyn_tp_t *tp, dyn_peer_t *p, short revents)
{
    int events = 0;
    if (revents & (POLLIN | POLLHUP | POLLERR)) {
        int r = out_ended(tp, p);
        if (r != 0)
            return r;
    }
    if ((revents & POLLOUT) && p->fd >= 0) {
        char why[128];
        int r = dyn_flush(tp, p, why, sizeof why);
        if (r < 0) {
            dyn_fail(tp, "%s", dyn_peer_lost(tp, p, why));
            return -1;
        }
        events += r;
    }
    return events;
}

/* Strangers silent past their time, and closed connections, go. */
static void ins_sweep(dyn_tp_t *tp, uint64_t now)
{
    int k = 0;
    for (int i = 0; i < tp->nins; i++) {
        dyn_in_t *c = tp->ins[i];
        if (!c->dead && c->state == DYN_IN_HELLO && now > c->hello_by_ns)
            dyn_in_close(tp, c);
        if (c->dead)
            dyn_in_free(c);
        else
            tp->ins[k++] = c;
    }
    tp->nins = k;
}

/* One poll() round over every socket (dyn_progress decided it is due). */
static __attribute__((noinline)) int poll_round(dyn_tp_t *tp, uint64_t now)
{
    if (pfd_room(tp) != 0) {
        dyn_fail(tp, "dyn: out of memory");
        return -1;
    }
    /* Listener first, then incoming, then outgoing: the indices say which. */
    int n = 0, nl, ni;
    if (tp->lfd >= 0)
        pfd_add(tp, &n, tp->lfd, POLLIN, NULL);
    nl = n;
    for (int i = 0; i < tp->nins; i++)
        pfd_add(tp, &n, tp->ins[i]->fd, POLLIN, tp->ins[i]);
    ni = n;
    for (int i = 0; i < tp->npeers; i++) {
        dyn_peer_t *p = tp->peers[i];
        if (p->fd >= 0)
            pfd_add(tp, &n, p->fd, POLLIN | (p->out.len > p->out.off ? POLLOUT : 0), p);
    }
    int r = poll(tp->pfd, (nfds_t)n, 0);
    if (r < 0 && errno != EINTR) {
        dyn_fail(tp, "dyn: poll: %s", strerror(errno));
        return -1;
    }
    int events = 0;
    for (int i = 0; i < n && r > 0; i++) {
        short rev = tp->pfd[i].revents;
        if (!rev)
            continue;
        int k;
        if (i < nl) {
            k = dyn_accept(tp);
        } else if (i < ni) {
            k = dyn_in_read(tp, tp->pown[i]);
        } else {
            /* An upcall during this round may have closed (and even
             * re-dialled) p: act only on the socket that was polled. */
            dyn_peer_t *p = tp->pown[i];
            k = p->fd == tp->pfd[i].fd ? out_ready(tp, p, rev) : 0;
        }
        if (k < 0)
            break;
        events += k;
    }
    ins_sweep(tp, now);
    return tp->failed ? -1 : events;
}

/* Kept apart from poll_round: the core's idle loop calls this between
 * every poll of the other transports, and with poll_round inlined each
 * call set up its whole frame only to return (a fifth of an intra-node
 * ping-pong's idle loop, by perf). */
int dyn_progress(locus_tp_t *t)
{
    dyn_tp_t *tp = (dyn_tp_t *)t;
    if (tp->failed)
        return -1;
    if (tp->lfd < 0 && tp->nins == 0 && tp->nout == 0)
        return 0;
    uint64_t now = locus_now_ns();
    if (tp->out_bytes == 0 && now - tp->last_poll_ns < POLL_GAP_NS)
        return 0;
    tp->last_poll_ns = now;
    return poll_round(tp, now);
}

/* ---- finalize ---- */

static void drain_in(dyn_in_t *c)
{
    char junk[16384];
    for (;;) {
        ssize_t k = recv(c->fd, junk, sizeof junk, MSG_DONTWAIT);
        if (k > 0 || (k < 0 && errno == EINTR))
            continue;
        if (k == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
            close(c->fd);
            c->fd = -1;
            c->dead = 1;
        }
        return;
    }
}

void dyn_drain(dyn_tp_t *tp)
{
    uint64_t until = locus_now_ns() + (uint64_t)tp->flush_ms * 1000000u;
    char why[128];
    while (tp->out_bytes > 0 && pfd_room(tp) == 0) {
        int n = 0, ni;
        for (int i = 0; i < tp->nins; i++)
            if (!tp->ins[i]->dead)
                pfd_add(tp, &n, tp->ins[i]->fd, POLLIN, tp->ins[i]);
        ni = n;
        for (int i = 0; i < tp->npeers; i++) {
            dyn_peer_t *p = tp->peers[i];
            if (p->fd >= 0 && p->out.len > p->out.off)
                pfd_add(tp, &n, p->fd, POLLOUT, p);
        }
        uint64_t now = locus_now_ns();
        if (now >= until) {
            for (int i = ni; i < n; i++)
                dyn_peer_lost(tp, tp->pown[i], "finalize gave up writing (LOCUS_DYN_FLUSH_MS)");
            snprintf(tp->err, sizeof tp->err, "dyn: finalize gave up on %d peers' output after "
                     "LOCUS_DYN_FLUSH_MS=%ld ms", n - ni, tp->flush_ms);
            return;
        }
        long left = (long)((until - now + 999999) / 1000000u);
        if (poll(tp->pfd, (nfds_t)n, left < DRAIN_POLL_MS ? (int)left : DRAIN_POLL_MS) < 0 &&
            errno != EINTR)
            return;
        for (int i = 0; i < n; i++) {
            if (!tp->pfd[i].revents)
                continue;
            if (i < ni)
                drain_in(tp->pown[i]);
            else if (dyn_flush(tp, tp->pown[i], why, sizeof why) < 0)
                dyn_peer_lost(tp, tp->pown[i], why);
        }
    }
}
