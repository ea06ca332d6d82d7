/*
 * The receiving side: connections other processes dial to our listener.
 * Each first proves it holds our card (the hello's cookie) and names its
 * dialler; then it carries that peer's messages, each delivered whole.
 * Bytes arrive in any pieces: small messages are parsed in place in the
 * connection's read buffer, a larger one is read straight into a buffer
 * of its own.
 */
#include "dyn_tp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define ACCEPTS_PER_ROUND 32
#define HELLO_PENDING_MAX 64    /* connections still owing a hello; the oldest goes */
#define HELLO_MS 10000          /* a dialler's hello takes one write: silence is a stranger */
#define READ_BUDGET (16u << 20) /* bytes per connection per round, so others get a turn */

void dyn_in_close(dyn_tp_t *tp, dyn_in_t *c)
{
    (void)tp;
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->dead = 1;
}

void dyn_in_free(dyn_in_t *c)
{
    if (c->fd >= 0)
        close(c->fd);
    free(c->rbuf);
    free(c->body);
    free(c);
}

/* ---- accepting ---- */

/* At most HELLO_PENDING_MAX strangers hold descriptors: a flood of silent
 * connections costs each of them its place, not us the job. */
static void hello_make_room(dyn_tp_t *tp)
{
    dyn_in_t *oldest = NULL;
    int n = 0;
    for (int i = 0; i < tp->nins; i++) {
        dyn_in_t *c = tp->ins[i];
        if (c->dead || c->state != DYN_IN_HELLO)
            continue;
        n++;
        if (!oldest || c->hello_by_ns < oldest->hello_by_ns)
            oldest = c;
    }
    if (n >= HELLO_PENDING_MAX)
        dyn_in_close(tp, oldest);
}

static dyn_in_t *in_new(dyn_tp_t *tp, int fd, const struct sockaddr_in *sa)
{
    if (tp->nins == tp->cap_ins) {
        int cap = tp->cap_ins ? 2 * tp->cap_ins : 8;
        dyn_in_t **n = realloc(tp->ins, (size_t)cap * sizeof *n);
        if (!n)
            return NULL;
        tp->ins = n;
        tp->cap_ins = cap;
    }
    dyn_in_t *c = calloc(1, sizeof *c);
    if (!c || !(c->rbuf = malloc(DYN_RBUF))) {
        free(c);
        return NULL;
    }
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &sa->sin_addr, ip, sizeof ip);
    snprintf(c->addr, sizeof c->addr, "%s:%u", ip, ntohs(sa->sin_port));
    c->fd = fd;
    c->state = DYN_IN_HELLO;
    c->hello_by_ns = locus_now_ns() + HELLO_MS * 1000000ull;
    tp->ins[tp->nins++] = c;
    return c;
}

int dyn_accept(dyn_tp_t *tp)
{
    int n = 0;
    for (int k = 0; k < ACCEPTS_PER_ROUND; k++) {
        struct sockaddr_in sa;
        socklen_t sl = sizeof sa;
        int fd = accept4(tp->lfd, (struct sockaddr *)&sa, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EBADF || errno == EINVAL || errno == ENOTSOCK) {
                dyn_fail(tp, "dyn: accept: %s", strerror(errno));
                return -1;
            }
            /* EAGAIN; or out of descriptors or memory: never the job's
             * death, the backlog keeps the rest for a later round. */
            break;
        }
        hello_make_room(tp);
        if (!in_new(tp, fd, &sa)) {
            close(fd);
            break;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        n++;
    }
    return n;
}

/* ---- the hello ---- */

static int cookie_equal(const char *a, const uint8_t *b)
{
    unsigned diff = 0; /* every byte looked at: no timing tells how much matched */
    for (int i = 0; i < DYN_COOKIE_HEX; i++)
        diff |= (unsigned)((uint8_t)a[i] ^ b[i]);
    return diff == 0;
}

/* 1: the hello was read (c now reads messages), 0: more bytes needed or c
 * was closed as a stranger (c->dead), -1: fatal. */
static int hello_read(dyn_tp_t *tp, dyn_in_t *c)
{
    const uint8_t *p = c->rbuf + c->roff;
    size_t avail = c->rlen - c->roff, k = 0;
    uint16_t cookie_len, card_len;
    locus_dyn_name_t name;
    /* Each field is checked as soon as it is whole: a stranger is closed
     * at its first wrong byte. */
    if (memcmp(p, DYN_MAGIC, avail < DYN_MAGIC_LEN ? avail : DYN_MAGIC_LEN) != 0)
        goto stranger;
    if (avail < (k = DYN_MAGIC_LEN) + 2)
        return 0;
    memcpy(&cookie_len, p + k, 2), k += 2;
    if (cookie_len != DYN_COOKIE_HEX)
        goto stranger;
    if (avail < k + DYN_COOKIE_HEX)
        return 0;
    if (!cookie_equal(tp->cookie, p + k))
        goto stranger;
    k += DYN_COOKIE_HEX;
    if (avail < k + 14)
        return 0;
    memcpy(&name.job, p + k, 8), k += 8;
    memcpy(&name.rank, p + k, 4), k += 4;
    memcpy(&card_len, p + k, 2), k += 2;
    if (card_len == 0 || card_len >= LOCUS_DYN_CARD_MAX)
        goto stranger;
    if (avail < k + card_len)
        return 0;
    char card[LOCUS_DYN_CARD_MAX];
    dyn_card_t where;
    memcpy(card, p + k, card_len), k += card_len;
    card[card_len] = '\0';
    if (dyn_card_parse(card, &where) != 0)
        goto stranger;
    c->roff += k;
    dyn_peer_t *peer = dyn_peer_by_name(tp, name);
    if (!peer && !(peer = dyn_peer_add(tp, name, card, &where))) {
        dyn_fail(tp, "dyn: out of memory adding job %" PRIu64 " rank %d (from %s)", name.job,
                 (int)name.rank, c->addr);
        return -1;
    }
    c->peer = peer;
    c->state = DYN_IN_HEAD;
    return 1;
stranger:
    dyn_in_close(tp, c);
    return 0;
}

/* ---- messages ---- */

static int in_lost(dyn_tp_t *tp, dyn_in_t *c, const char *why)
{
    dyn_fail(tp, "dyn: connection to job %" PRIu64 " rank %d (%s) lost: %s", c->peer->name.job,
             (int)c->peer->name.rank, c->addr, why);
    dyn_in_close(tp, c);
    return -1;
}

static void deliver(dyn_tp_t *tp, dyn_in_t *c, const uint8_t *m)
{
    /* Frames sit at any offset of the stream: the header goes up aligned,
     * as other transports give it. */
    uint64_t hdr[(LOCUS_TP_HDR_MAX + 7) / 8];
    memcpy(hdr, m, c->hdrlen);
    c->state = DYN_IN_HEAD;
    tp->up->deliver(tp->core, c->peer->id, hdr, c->hdrlen, m + c->hdrlen, (size_t)c->len);
}

/* Everything whole in what has been read: messages delivered (the hello
 * counts as one), or -1 on a fatal error. */
static int in_parse(dyn_tp_t *tp, dyn_in_t *c)
{
    int events = 0;
    while (!c->dead) {
        const uint8_t *p = c->rbuf + c->roff;
        size_t avail = c->rlen - c->roff;
        if (c->state == DYN_IN_HELLO) {
            int r = hello_read(tp, c);
            if (r <= 0)
                return r < 0 ? -1 : events;
            events++;
        } else if (c->state == DYN_IN_HEAD) {
            if (avail < DYN_FRAME_HEAD)
                return events;
            memcpy(&c->hdrlen, p, 4);
            memcpy(&c->len, p + 4, 8);
            if (c->hdrlen > LOCUS_TP_HDR_MAX) {
                char why[80];
                snprintf(why, sizeof why, "malformed message (header of %" PRIu32 " bytes)",
                         c->hdrlen);
                return in_lost(tp, c, why);
            }
            if (c->len > SIZE_MAX - LOCUS_TP_HDR_MAX)
                return in_lost(tp, c, "malformed message (length past the address space)");
            c->roff += DYN_FRAME_HEAD;
            c->state = DYN_IN_BODY;
        } else if (c->body) {
            if (c->got < c->hdrlen + c->len)
                return events;
            uint8_t *m = c->body;
            c->body = NULL;
            deliver(tp, c, m);
            free(m);
            events++;
        } else {
            size_t total = c->hdrlen + (size_t)c->len;
            if (avail >= total) {
                c->roff += total;
                deliver(tp, c, p);
                events++;
            } else if (total <= DYN_RBUF) {
                return events; /* fits once the buffer is compacted */
            } else {
                if (!(c->body = malloc(total)))
                    return in_lost(tp, c, "out of memory for a message");
                memcpy(c->body, p, avail);
                c->got = avail;
                c->roff = c->rlen;
            }
        }
    }
    return events;
}

/* The dialler closed (err 0) or the connection failed (errno err): the end
 * of a conversation between messages, a lost message within one. */
static int in_end(dyn_tp_t *tp, dyn_in_t *c, int err)
{
    int between = c->state == DYN_IN_HELLO ||
                  (c->state == DYN_IN_HEAD && c->roff == c->rlen);
    if (between) {
        dyn_in_close(tp, c);
        return 0;
    }
    char why[96];
    if (err)
        snprintf(why, sizeof why, "%s in the middle of a message", strerror(err));
    else
        snprintf(why, sizeof why, "closed in the middle of a message");
    return in_lost(tp, c, why);
}

int dyn_in_read(dyn_tp_t *tp, dyn_in_t *c)
{
    int events = 0;
    size_t budget = READ_BUDGET;
    for (;;) {
        int r = in_parse(tp, c);
        if (r < 0)
            return -1;
        events += r;
        if (c->dead || budget == 0)
            return events;
        uint8_t *dst;
        size_t room;
        if (c->body) {
            dst = c->body + c->got;
            room = c->hdrlen + (size_t)c->len - c->got;
        } else {
            if (c->roff) {
                memmove(c->rbuf, c->rbuf + c->roff, c->rlen - c->roff);
                c->rlen -= c->roff;
                c->roff = 0;
            }
            dst = c->rbuf + c->rlen;
            room = DYN_RBUF - c->rlen;
        }
        if (room > budget)
            room = budget;
        ssize_t k = recv(c->fd, dst, room, MSG_DONTWAIT);
        if (k > 0) {
            if (c->body)
                c->got += (size_t)k;
            else
                c->rlen += (size_t)k;
            budget -= (size_t)k;
            continue;
        }
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return events;
        return in_end(tp, c, k < 0 ? errno : 0) < 0 ? -1 : events;
    }
}
