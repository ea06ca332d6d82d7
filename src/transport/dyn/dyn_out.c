/*
 * The sending side: dialling a peer's listener (with the hello that names
 * us), the output queue of each peer, and send(), which only ever copies
 * into that queue and writes what the socket takes at once.
 */
#include "dyn_tp.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* An emptied queue keeps its buffer up to this size; a larger one (after
 * a large message) goes back to the allocator. */
#define KEEP_BUF (256 * 1024)

/* ---- the output queue ---- */

/* Room for n more bytes at the end of b; -1: out of memory (b unchanged). */
static int buf_room(dyn_buf_t *b, size_t n)
{
    if (b->cap - b->len >= n)
        return 0;
    if (b->off) {
        memmove(b->buf, b->buf + b->off, b->len - b->off);
        b->len -= b->off;
        b->off = 0;
        if (b->cap - b->len >= n)
            return 0;
    }
    if (n > SIZE_MAX / 2 - b->len)
        return -1;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len < n)
        cap *= 2;
    uint8_t *nb = realloc(b->buf, cap);
    if (!nb)
        return -1;
    b->buf = nb;
    b->cap = cap;
    return 0;
}

static void buf_copy(dyn_tp_t *tp, dyn_buf_t *b, const void *p, size_t n)
{
    if (n)
        memcpy(b->buf + b->len, p, n);
    b->len += n;
    tp->out_bytes += n;
}

/* Drops what is queued (the connection is gone). */
static void buf_clear(dyn_tp_t *tp, dyn_buf_t *b)
{
    tp->out_bytes -= b->len - b->off;
    free(b->buf);
    memset(b, 0, sizeof *b);
}

int dyn_flush(dyn_tp_t *tp, dyn_peer_t *p, char *err, size_t errlen)
{
    dyn_buf_t *b = &p->out;
    int wrote = 0;
    while (b->off < b->len) {
        ssize_t k = send(p->fd, b->buf + b->off, b->len - b->off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k > 0) {
            b->off += (size_t)k;
            tp->out_bytes -= (size_t)k;
            wrote = 1;
        } else if (k < 0 && errno == EINTR) {
            continue;
        } else if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            break;
        } else {
            snprintf(err, errlen, "write: %s", k < 0 ? strerror(errno) : "no progress");
            return -1;
        }
    }
    if (b->off == b->len) {
        b->off = b->len = 0;
        if (b->cap > KEEP_BUF) {
            free(b->buf);
            b->buf = NULL;
            b->cap = 0;
        }
    }
    return wrote;
}

void dyn_out_close(dyn_tp_t *tp, dyn_peer_t *p)
{
    if (p->fd < 0)
        return;
    close(p->fd);
    p->fd = -1;
    tp->nout--;
    buf_clear(tp, &p->out);
}

const char *dyn_peer_lost(dyn_tp_t *tp, dyn_peer_t *p, const char *why)
{
    char line[sizeof tp->err];
    snprintf(line, sizeof line, "dyn: connection to job %" PRIu64 " rank %d (%s) lost: %s",
             p->name.job, (int)p->name.rank, p->addr, why);
    dyn_out_close(tp, p);
    if (!p->lost)
        p->lost = strdup(line);
    return p->lost ? p->lost : "dyn: connection lost (and out of memory)";
}

/* ---- dialling ---- */

/* strerror's text with a lower-case start, to sit inside a sentence. */
static void reason(char *buf, size_t len, int e)
{
    snprintf(buf, len, "%s", strerror(e));
    if (buf[0])
        buf[0] = (char)tolower((unsigned char)buf[0]);
}

/* One nonblocking connect, waited for at most ms. 0 and *out, or errno. */
static int dial_one(struct in_addr a, uint16_t port, long ms, int *out)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return errno;
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port), .sin_addr = a };
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        if (errno != EINPROGRESS && errno != EINTR) {
            int e = errno;
            close(fd);
            return e;
        }
        uint64_t until = locus_now_ns() + (uint64_t)ms * 1000000u;
        for (;;) {
            uint64_t now = locus_now_ns();
            if (now >= until) {
                close(fd);
                return ETIMEDOUT;
            }
            struct pollfd pf = { .fd = fd, .events = POLLOUT };
            int r = poll(&pf, 1, (int)((until - now + 999999) / 1000000));
            if (r > 0)
                break;
            if (r < 0 && errno != EINTR) {
                int e = errno;
                close(fd);
                return e;
            }
        }
        int e = 0;
        socklen_t el = sizeof e;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) != 0)
            e = errno;
        if (e) {
            close(fd);
            return e;
        }
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    *out = fd;
    return 0;
}

/* The hello: it proves we hold p's card (its cookie) and says who we are
 * and where we listen, so that p can send back without being told. */
static int hello_queue(dyn_tp_t *tp, dyn_peer_t *p)
{
    uint8_t h[DYN_HELLO_MAX];
    size_t k = 0;
    uint16_t cookie_len = DYN_COOKIE_HEX, card_len = (uint16_t)strlen(tp->card);
    memcpy(h + k, DYN_MAGIC, DYN_MAGIC_LEN), k += DYN_MAGIC_LEN;
    memcpy(h + k, &cookie_len, 2), k += 2;
    memcpy(h + k, p->where.cookie, DYN_COOKIE_HEX), k += DYN_COOKIE_HEX;
    memcpy(h + k, &tp->me.job, 8), k += 8;
    memcpy(h + k, &tp->me.rank, 4), k += 4;
    memcpy(h + k, &card_len, 2), k += 2;
    memcpy(h + k, tp->card, card_len), k += card_len;
    if (buf_room(&p->out, k) != 0)
        return -1;
    buf_copy(tp, &p->out, h, k);
    return 0;
}

int dyn_dial(dyn_tp_t *tp, dyn_peer_t *p, char *err, size_t errlen)
{
    if (p->fd >= 0)
        return 0;
    if (p->lost) {
        snprintf(err, errlen, "%s", p->lost);
        return -1;
    }
    /* Our own card goes in the hello: the listener must exist first. */
    if (dyn_listen(tp, err, errlen) != 0)
        return -1;
    uint64_t until = locus_now_ns() + (uint64_t)tp->connect_ms * 1000000u;
    char tried[sizeof tp->err] = "";
    size_t k = 0;
    for (int i = 0; i < p->where.naddr; i++) {
        char ip[INET_ADDRSTRLEN], why[64];
        inet_ntop(AF_INET, &p->where.addr[i], ip, sizeof ip);
        uint64_t now = locus_now_ns();
        int e = ETIMEDOUT, fd = -1;
        /* An address that does not answer gets its share of the time
         * left, so that those after it (loopback last) are still tried. */
        if (now < until) {
            long ms = (long)((until - now) / 1000000u / (uint64_t)(p->where.naddr - i));
            e = dial_one(p->where.addr[i], p->where.port, ms > 0 ? ms : 1, &fd);
        }
        if (e == 0) {
            p->fd = fd;
            tp->nout++;
            snprintf(p->addr, sizeof p->addr, "%s:%u", ip, p->where.port);
            if (hello_queue(tp, p) != 0) {
                dyn_out_close(tp, p);
                snprintf(err, errlen, "dyn: out of memory dialling job %" PRIu64 " rank %d",
                         p->name.job, (int)p->name.rank);
                return -1;
            }
            return 0;
        }
        reason(why, sizeof why, e);
        if (k < sizeof tried)
            k += (size_t)snprintf(tried + k, sizeof tried - k, "%s%s:%u %s", i ? ", " : "", ip,
                                  p->where.port, why);
    }
    snprintf(err, errlen, "dyn: cannot connect to job %" PRIu64 " rank %d: %s", p->name.job,
             (int)p->name.rank, tried);
    return -1;
}

int locus_dyn_connect(locus_tp_t *t, int id, char *err, size_t errlen)
{
    dyn_tp_t *tp = (dyn_tp_t *)t;
    dyn_peer_t *p = dyn_peer_by_id(tp, id);
    if (!p) {
        snprintf(err, errlen, "dyn: %d is not a peer of this transport", id);
        return -1;
    }
    if (dyn_dial(tp, p, err, errlen) != 0)
        return -1;
    char why[128];
    if (dyn_flush(tp, p, why, sizeof why) < 0) {
        snprintf(err, errlen, "%s", dyn_peer_lost(tp, p, why));
        return -1;
    }
    return 0;
}

/* ---- send ---- */

int dyn_send(locus_tp_t *t, int dst, const void *hdr, size_t hdrlen, const void *data,
             size_t len, void *send_ctx)
{
    (void)send_ctx; /* always DONE: the queue holds a copy */
    dyn_tp_t *tp = (dyn_tp_t *)t;
    dyn_peer_t *p = dyn_peer_by_id(tp, dst);
    if (!p) {
        snprintf(tp->err, sizeof tp->err, "dyn: %d is not a peer of this transport", dst);
        return -1;
    }
    if (hdrlen > LOCUS_TP_HDR_MAX) {
        snprintf(tp->err, sizeof tp->err, "dyn: header of %zu bytes (at most %d)", hdrlen,
                 LOCUS_TP_HDR_MAX);
        return -1;
    }
    if (p->fd < 0 && dyn_dial(tp, p, tp->err, sizeof tp->err) != 0)
        return -1;
    uint32_t h32 = (uint32_t)hdrlen;
    uint64_t l64 = (uint64_t)len;
    if (len > SIZE_MAX - DYN_FRAME_HEAD - hdrlen ||
        buf_room(&p->out, DYN_FRAME_HEAD + hdrlen + len) != 0) {
        snprintf(tp->err, sizeof tp->err, "dyn: out of memory queueing %zu bytes to job %" PRIu64
                 " rank %d", len, p->name.job, (int)p->name.rank);
        return -1;
    }
    buf_copy(tp, &p->out, &h32, 4);
    buf_copy(tp, &p->out, &l64, 8);
    buf_copy(tp, &p->out, hdr, hdrlen);
    buf_copy(tp, &p->out, data, len);
    char why[128];
    if (dyn_flush(tp, p, why, sizeof why) < 0) {
        snprintf(tp->err, sizeof tp->err, "%s", dyn_peer_lost(tp, p, why));
        return -1;
    }
    return LOCUS_TP_DONE;
}
