/*
 * addr_fabric.c — the node roots' allgather of their node blobs over TCP
 * (LOCUS_ADDR_EXCHANGE=fabric): each root listens, only the roots' small
 * "root cards" go through PMI, and the blobs travel root to root by
 * Bruck's allgather: ceil(log2 N) steps; at step k a root sends what it
 * has (up to 2^k blobs) to the root 2^k before it and receives as many from
 * the root 2^k after it. Every root dials ceil(log2 N) others, so the
 * process manager carries N root cards instead of N blobs (or P cards).
 *
 * A message is one connection: a header (magic, step, sender, count) and
 * `count` blocks (node, length, bytes). Incoming connections are read as
 * they come, whatever step they belong to; a connection that is not one
 * of ours (bad magic, wrong sender, oversized) is dropped.
 */
#include "boot_fabric.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "boot_priv.h"
#include "locus_tunables.h"

#define FABRIC_MAGIC 0x4c4f4346u /* "LOCF" */
enum { HDR = 16, BLK = 8, INCOMING_MAX = 64 };
#define BLOB_MAX (64u << 20) /* no node's blob is near this */

typedef struct {
    int fd;
    unsigned char *buf;
    size_t len, cap;
} conn_t;

struct boot_fabric {
    int listen_fd;
    conn_t in[INCOMING_MAX];
    int nin;
};

static uint32_t get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return ntohl(v);
}

static void put32(unsigned char *p, uint32_t v)
{
    v = htonl(v);
    memcpy(p, &v, 4);
}

/* Whether interface `name` may carry the exchange (LOCUS_NET_IFACES). */
static int iface_allowed(const char *name)
{
    const char *list = locus_tunable_str("LOCUS_NET_IFACES");
    if (!*list)
        return 1;
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

int boot_fabric_listen(boot_fabric_t **out, char *card, size_t cap, char *err, size_t errlen)
{
    boot_fabric_t *f = calloc(1, sizeof *f);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
    socklen_t slen = sizeof sa;
    if (!f || (f->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0 ||
        bind(f->listen_fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
        listen(f->listen_fd, INCOMING_MAX) < 0 ||
        getsockname(f->listen_fd, (struct sockaddr *)&sa, &slen) < 0) {
        snprintf(err, errlen, "address exchange: cannot listen for the roots' allgather: %s",
                 strerror(errno));
        if (f && f->listen_fd > 0)
            close(f->listen_fd);
        free(f);
        return -1;
    }
    /* Every IPv4 address of an interface that is up, not loopback. */
    struct ifaddrs *ifs = NULL, *i;
    size_t n = 0;
    card[0] = '\0';
    if (getifaddrs(&ifs) == 0) {
        for (i = ifs; i; i = i->ifa_next) {
            if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
                !(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK) ||
                !iface_allowed(i->ifa_name))
                continue;
            char ip[INET_ADDRSTRLEN];
            inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, ip, sizeof ip);
            if (n + strlen(ip) + 24 < cap)
                n += (size_t)snprintf(card + n, cap - n, "%s%s", n ? "," : "", ip);
        }
        freeifaddrs(ifs);
    }
    if (n == 0) {
        snprintf(err, errlen, "address exchange: no network interface to reach the other "
                 "nodes' roots (up, IPv4, not loopback%s)",
                 *locus_tunable_str("LOCUS_NET_IFACES") ? ", in LOCUS_NET_IFACES" : "");
        close(f->listen_fd);
        free(f);
        return -1;
    }
    snprintf(card + n, cap - n, ":%u", (unsigned)ntohs(sa.sin_port));
    *out = f;
    return 0;
}

/* Whether addr is one of this machine's own IPv4 addresses: another
 * node's root card can list one too (a docker0 172.17.0.1 on every node),
 * and dialling it would reach this machine, not that root. */
static int is_local_addr(const struct ifaddrs *ifs, struct in_addr addr)
{
    for (const struct ifaddrs *i = ifs; i; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
            ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == addr.s_addr)
            return 1;
    return 0;
}

/* Connects to the first address of a root card "ip,ip:port" that answers
 * before `until`, this machine's own addresses last (they reach another
 * node only when both "nodes" are this machine); the descriptor
 * (non-blocking) or -1. */
static int dial_one(struct sockaddr_in *sa, double until)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)sa, sizeof *sa) == 0)
        return fd;
    struct pollfd pf = { .fd = fd, .events = POLLOUT };
    double left = until - boot_now();
    int soerr = -1;
    socklen_t sl = sizeof soerr;
    if (errno == EINPROGRESS && left > 0 &&
        poll(&pf, 1, (int)(left > 5 ? 5000 : left * 1000) + 1) == 1 &&
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr == 0)
        return fd;
    close(fd);
    return -1;
}

static int dial(const char *card, double until)
{
    const char *colon = strrchr(card, ':');
    if (!colon)
        return -1;
    int port = atoi(colon + 1), fd = -1;
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) != 0)
        ifs = NULL; /* then every address counts as another machine's */
    for (int pass = 0; pass < 2 && fd < 0; pass++) {
        for (const char *p = card; p < colon;) {
            size_t len = strcspn(p, ",:");
            char ip[INET_ADDRSTRLEN];
            struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
            snprintf(ip, sizeof ip, "%.*s", (int)(len < sizeof ip ? len : sizeof ip - 1), p);
            p += len + (p[len] == ',');
            if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1 ||
                is_local_addr(ifs, sa.sin_addr) != pass)
                continue;
            if ((fd = dial_one(&sa, until)) >= 0)
                break;
        }
    }
    if (ifs)
        freeifaddrs(ifs);
    return fd;
}

/* Bytes a message needs in all, once its header and block headers are in
 * buf; 0 while unknown, (size_t)-1 when it is not one of ours. */
static size_t msg_size(const unsigned char *buf, size_t len, int nnodes)
{
    if (len < HDR)
        return 0;
    if (get32(buf) != FABRIC_MAGIC || get32(buf + 12) > (uint32_t)nnodes)
        return (size_t)-1;
    size_t at = HDR;
    for (uint32_t b = 0; b < get32(buf + 12); b++) {
        if (len < at + BLK)
            return 0;
        uint32_t blen = get32(buf + at + 4);
        if (get32(buf + at) >= (uint32_t)nnodes || blen > BLOB_MAX)
            return (size_t)-1;
        at += BLK + blen;
    }
    return at;
}

/* Reads what conn c has; 1 when its message is complete, 0 not yet, -1
 * when it is not ours or broke (the caller drops it). */
static int conn_read(conn_t *c, int nnodes)
{
    for (;;) {
        if (c->cap - c->len < 65536) {
            size_t ncap = c->cap ? 2 * c->cap : 65536;
            unsigned char *nb = realloc(c->buf, ncap);
            if (!nb)
                return -1;
            c->buf = nb;
            c->cap = ncap;
        }
        ssize_t got = read(c->fd, c->buf + c->len, c->cap - c->len);
        if (got < 0 && (errno == EAGAIN || errno == EINTR))
            return 0;
        if (got <= 0)
            break;
        c->len += (size_t)got;
        size_t want = msg_size(c->buf, c->len, nnodes);
        if (want == (size_t)-1 || (want && c->len > want))
            return -1;
    }
    size_t want = msg_size(c->buf, c->len, nnodes); /* at EOF */
    return want && want != (size_t)-1 && c->len == want ? 1 : -1;
}

static void conn_drop(boot_fabric_t *f, int i)
{
    if (f->in[i].fd >= 0)
        close(f->in[i].fd);
    free(f->in[i].buf);
    f->in[i] = f->in[--f->nin];
}

/* Waits for step `step`'s message from `from` while sending out[0..len)
 * on fd (closed when sent); the index of the finished incoming conn. */
static int step_run(boot_fabric_t *f, int fd, const unsigned char *out, size_t len,
                    uint32_t step, uint32_t from, int nnodes, double until)
{
    size_t sent = 0;
    for (;;) {
        for (int i = 0; i < f->nin; i++) {
            conn_t *c = &f->in[i];
            if (c->fd < 0 && c->len >= HDR && get32(c->buf + 4) == step &&
                get32(c->buf + 8) == from && sent == len)
                return i; /* complete (fd closed once read) */
        }
        if (boot_now() > until)
            return -1;
        struct pollfd pf[INCOMING_MAX + 2];
        int np = 0, who[INCOMING_MAX + 2];
        if (sent < len) {
            pf[np] = (struct pollfd){ .fd = fd, .events = POLLOUT };
            who[np++] = -2;
        }
        if (f->nin < INCOMING_MAX) {
            pf[np] = (struct pollfd){ .fd = f->listen_fd, .events = POLLIN };
            who[np++] = -1;
        }
        for (int i = 0; i < f->nin; i++)
            if (f->in[i].fd >= 0) {
                pf[np] = (struct pollfd){ .fd = f->in[i].fd, .events = POLLIN };
                who[np++] = i;
            }
        if (poll(pf, (nfds_t)np, 100) < 0 && errno != EINTR)
            return -1;
        /* Backwards: dropping conn i moves the last conn into its place,
         * one already served (conns are polled in index order, after the
         * listener, which only appends). */
        for (int k = np - 1; k >= 0; k--) {
            if (!pf[k].revents)
                continue;
            if (who[k] == -2) {
                ssize_t w = send(fd, out + sent, len - sent, MSG_NOSIGNAL);
                if (w < 0 && errno != EAGAIN && errno != EINTR)
                    return -1;
                sent += w > 0 ? (size_t)w : 0;
                if (sent == len)
                    shutdown(fd, SHUT_WR);
            } else if (who[k] == -1) {
                int c = accept4(f->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
                if (c >= 0)
                    f->in[f->nin++] = (conn_t){ .fd = c };
            } else {
                int rc = conn_read(&f->in[who[k]], nnodes);
                if (rc < 0) {
                    conn_drop(f, who[k]);
                } else if (rc > 0) {
                    close(f->in[who[k]].fd);
                    f->in[who[k]].fd = -1;
                }
            }
        }
    }
}

int boot_fabric_allgather(boot_fabric_t *f, int me, int nnodes, char **blobs, size_t *lens,
                          int (*root_card)(void *ctx, int node, char *out, size_t cap),
                          void *ctx, double timeout, char *err, size_t errlen)
{
    double until = boot_now() + timeout;
    int have = 1; /* blobs of nodes me, me+1, ..., me+have-1 (mod N) */
    for (uint32_t step = 0; have < nnodes; step++) {
        int dist = 1 << step, cnt = dist < nnodes - have ? dist : nnodes - have;
        int to = ((me - dist) % nnodes + nnodes) % nnodes, from = (me + dist) % nnodes;
        size_t len = HDR;
        for (int j = 0; j < cnt; j++)
            len += BLK + lens[(me + j) % nnodes];
        unsigned char *out = malloc(len);
        char card[512];
        int fd = -1;
        if (out && root_card(ctx, to, card, sizeof card) == 0)
            fd = dial(card, until);
        if (fd < 0) {
            snprintf(err, errlen, "address exchange: node %d's root cannot reach node %d's "
                     "root (%s) for the allgather", me, to, out ? card : "out of memory");
            free(out);
            return -1;
        }
        put32(out, FABRIC_MAGIC);
        put32(out + 4, step);
        put32(out + 8, (uint32_t)me);
        put32(out + 12, (uint32_t)cnt);
        size_t at = HDR;
        for (int j = 0; j < cnt; j++) {
            int node = (me + j) % nnodes;
            put32(out + at, (uint32_t)node);
            put32(out + at + 4, (uint32_t)lens[node]);
            memcpy(out + at + BLK, blobs[node], lens[node]);
            at += BLK + lens[node];
        }
        int i = step_run(f, fd, out, len, step, (uint32_t)from, nnodes, until);
        close(fd);
        free(out);
        if (i < 0) {
            snprintf(err, errlen, "address exchange: node %d's root got no blobs from node "
                     "%d's root within LOCUS_ADDR_TIMEOUT (step %u of the allgather)", me,
                     from, step);
            return -1;
        }
        /* The sender's first cnt blobs: nodes from, from+1, ... */
        conn_t *c = &f->in[i];
        at = HDR;
        for (int j = 0; j < cnt; j++) {
            uint32_t node = get32(c->buf + at), blen = get32(c->buf + at + 4);
            if (node != (uint32_t)((from + j) % nnodes) || blobs[node]) {
                snprintf(err, errlen, "address exchange: node %d's root sent node %u's blob "
                         "out of order", from, node);
                return -1;
            }
            if (!(blobs[node] = malloc(blen + 1)))
                return -1;
            memcpy(blobs[node], c->buf + at + BLK, blen);
            blobs[node][blen] = '\0';
            lens[node] = blen;
            at += BLK + blen;
        }
        conn_drop(f, i);
        have += cnt;
    }
    return 0;
}

void boot_fabric_close(boot_fabric_t *f)
{
    if (!f)
        return;
    while (f->nin > 0)
        conn_drop(f, f->nin - 1); /* an fd of -1 was read and closed already */
    close(f->listen_fd);
    free(f);
}
