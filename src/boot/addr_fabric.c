/*
 * addr_fabric.c — the node roots' allgather of their node blobs over TCP
 * (LOCUS_ADDR_EXCHANGE=fabric): each root listens, only the roots' small
 * "root cards" go through PMI, and the blobs travel root to root by
 * Bruck's allgather: ceil(log2 N) steps; at step k a root sends what it
 * has (up to 2^k blobs) to the root 2^k before it and receives as many from
 * the root 2^k after it. Every root dials ceil(log2 N) others, so the
 * process manager carries N root cards instead of N blobs (or P cards).
 *
 * A message is one connection: first the job key's challenge-response
 * (locus_auth.h: the listener challenges, the dialler answers, the
 * listener proves the key in turn, and only then does the dialler send),
 * then a header (magic, step, sender, count) and `count` blocks (node,
 * length, bytes). Incoming connections are read as they come, whatever
 * step they belong to. A stranger costs nothing: bytes that are no answer
 * to our challenge close its connection at once, silence closes it after
 * LOCUS_AUTH_TIMEOUT_MS, and past LOCUS_AUTH_PENDING_MAX unproven ones the
 * oldest is closed for the newest, so silent connections cannot fill the
 * slots the roots need. The listeners are bound to the addresses the card
 * advertises, never to all interfaces.
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
#include <time.h>
#include <unistd.h>

#include "boot_priv.h"
#include "locus_tunables.h"

#define FABRIC_MAGIC 0x4c4f4346u /* "LOCF" */
#define AUTH_CONTEXT "fabric"
/* Roots that send to one root hold a slot each until their step is read
 * (at most ceil(log2 N) <= 32); the rest is what strangers may take. */
enum { HDR = 16, BLK = 8, INCOMING_MAX = 96, UNPROVEN_MAX = 64, LISTEN_MAX = 8,
       ACCEPTS_PER_ROUND = 32 };
#define BLOB_MAX (64u << 20) /* no node's blob is near this */
#define ACCEPT_REST 0.1      /* seconds listeners rest after accept ran short */

enum { IN_AUTH, IN_MSG }; /* an incoming connection: proving the key, then its message */

typedef struct {
    int fd;                          /* -1 once its message was read whole */
    int phase;                       /* IN_* */
    double since;                    /* accepted (the oldest unproven goes first) */
    locus_auth_t auth;
    unsigned char resp[LOCUS_AUTH_RESP_LEN];
    size_t rlen;
    unsigned char *buf;
    size_t len, cap;
} conn_t;

struct boot_fabric {
    int lfd[LISTEN_MAX];
    int nl;
    locus_auth_key_t key;
    double auth_timeout;             /* seconds */
    int unproven_max;
    double rest_until;               /* accept ran short of descriptors: listeners rest */
    int warned;
    conn_t in[INCOMING_MAX];
    int nin;
    boot_fabric_stats_t st;
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

/* The addresses to advertise: every IPv4 address of an interface that is
 * up, not loopback, allowed; no address twice. Returns how many. */
static int addrs_find(struct in_addr *out, int max)
{
    struct ifaddrs *ifs = NULL;
    int n = 0;
    if (getifaddrs(&ifs) != 0)
        return 0;
    for (struct ifaddrs *i = ifs; i && n < max; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
            (i->ifa_flags & IFF_LOOPBACK) || !iface_allowed(i->ifa_name))
            continue;
        struct in_addr a = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
        int dup = 0;
        for (int k = 0; k < n; k++)
            dup |= out[k].s_addr == a.s_addr;
        if (!dup)
            out[n++] = a;
    }
    freeifaddrs(ifs);
    return n;
}

static void listeners_close(boot_fabric_t *f)
{
    for (int i = 0; i < f->nl; i++)
        close(f->lfd[i]);
    f->nl = 0;
}

/* One listener per address, all on the port the first one got (the card
 * names one port). Another process may hold that port on a later address:
 * then all again on a new port. 0, or -1 with errno. */
static int listeners_open(boot_fabric_t *f, const struct in_addr *addr, int n, uint16_t *port)
{
    int err = 0;
    for (int attempt = 0; attempt < 8; attempt++) {
        uint16_t p = 0;
        for (int i = 0; i < n; i++) {
            struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr = addr[i],
                                      .sin_port = htons(p) };
            socklen_t sl = sizeof sa;
            int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
            if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
                listen(fd, SOMAXCONN) != 0 ||
                (i == 0 && getsockname(fd, (struct sockaddr *)&sa, &sl) != 0)) {
                err = errno;
                if (fd >= 0)
                    close(fd);
                break;
            }
            f->lfd[f->nl++] = fd;
            if (i == 0)
                p = ntohs(sa.sin_port);
        }
        if (f->nl == n) {
            *port = p;
            return 0;
        }
        listeners_close(f);
        if (err != EADDRINUSE)
            break;
    }
    errno = err;
    return -1;
}

int boot_fabric_listen(boot_fabric_t **out, const locus_auth_key_t *key, char *card, size_t cap,
                       char *err, size_t errlen)
{
    struct in_addr addr[LISTEN_MAX];
    long ms = 2000, pend = 64;
    boot_fabric_t *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, errlen, "address exchange: out of memory");
        return -1;
    }
    if (locus_tunable_long("LOCUS_AUTH_TIMEOUT_MS", &ms, err, errlen) != 0 ||
        locus_tunable_long("LOCUS_AUTH_PENDING_MAX", &pend, err, errlen) != 0) {
        free(f);
        return -1;
    }
    f->key = *key;
    f->auth_timeout = (ms < 10 ? 10 : ms) * 1e-3;
    f->unproven_max = pend < 1 ? 1 : pend > UNPROVEN_MAX ? UNPROVEN_MAX : (int)pend;
    int n = addrs_find(addr, LISTEN_MAX);
    if (n == 0) {
        snprintf(err, errlen, "address exchange: no network interface to reach the other "
                 "nodes' roots (up, IPv4, not loopback%s)",
                 *locus_tunable_str("LOCUS_NET_IFACES") ? ", in LOCUS_NET_IFACES" : "");
        free(f);
        return -1;
    }
    uint16_t port = 0;
    if (listeners_open(f, addr, n, &port) != 0) {
        snprintf(err, errlen, "address exchange: cannot listen for the roots' allgather: %s",
                 strerror(errno));
        free(f);
        return -1;
    }
    size_t k = 0;
    card[0] = '\0';
    for (int i = 0; i < n && k + INET_ADDRSTRLEN + 8 < cap; i++) {
        char ip[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &addr[i], ip, sizeof ip);
        k += (size_t)snprintf(card + k, cap - k, "%s%s", k ? "," : "", ip);
    }
    snprintf(card + k, cap - k, ":%u", (unsigned)port);
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

/* One non-blocking connect to sa, waited for until `until` (5 s at
 * most): the descriptor or -1. */
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

/* Connects to the first address of a root card "ip,ip:port" that answers
 * before `until`, this machine's own addresses last (they reach another
 * node only when both "nodes" are this machine); the descriptor
 * (non-blocking) or -1. */
static int dial_once(const char *card, double until)
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

/* dial_once, again with back-off until `until`: a root that does not
 * answer yet, or whose address does not resolve to a link-layer one in
 * time (unanswered ARP when every node starts at once, or a neighbour
 * table that is full). */
static int dial(const char *card, double until)
{
    for (double wait = 0.02;; wait = wait < 0.5 ? 2 * wait : 1.0) {
        int fd = dial_once(card, until);
        if (fd >= 0 || boot_now() + wait >= until)
            return fd;
        struct timespec ts = { 0, (long)(wait * 1e9) };
        nanosleep(&ts, NULL);
    }
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

/* ---- admitting connections ---- */

/* The key's proof on an incoming connection: 1 proven (its message
 * follows), 0 not yet, -1 refused or gone (the caller drops it). */
static int conn_auth(boot_fabric_t *f, conn_t *c)
{
    ssize_t got = read(c->fd, c->resp + c->rlen, sizeof c->resp - c->rlen);
    if (got < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (got <= 0)
        return -1; /* left before proving anything: not counted as refused */
    c->rlen += (size_t)got;
    if (!locus_auth_prefix_ok(LOCUS_AUTH_MSG_RESP, c->resp, c->rlen)) {
        f->st.refused++; /* a forged blob, or anything else not Locus's */
        return -1;
    }
    if (c->rlen < sizeof c->resp)
        return 0;
    unsigned char proof[LOCUS_AUTH_PROOF_LEN];
    int ok = locus_auth_check(&c->auth, c->resp, proof) == 0;
    /* Sent either way: the dialler learns at once that its key differs. A
     * fresh connection's buffer takes 36 bytes, or the peer is no root. */
    if (send(c->fd, proof, sizeof proof, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof proof ||
        !ok) {
        f->st.refused += !ok;
        return -1;
    }
    c->phase = IN_MSG;
    return 1;
}

/* The oldest connection that has not proven the key, or -1. */
static int oldest_unproven(const boot_fabric_t *f, int *count)
{
    int best = -1;
    *count = 0;
    for (int i = 0; i < f->nin; i++)
        if (f->in[i].phase == IN_AUTH) {
            ++*count;
            if (best < 0 || f->in[i].since < f->in[best].since)
                best = i;
        }
    return best;
}

/* Makes room for one more connection: the oldest unproven goes when the
 * slots are full or the unproven are at their cap. 0, or -1 when every
 * slot is a root's (then the newcomer waits in the backlog). */
static int room_make(boot_fabric_t *f)
{
    int n, old = oldest_unproven(f, &n);
    if (f->nin < INCOMING_MAX && n < f->unproven_max)
        return 0;
    if (old < 0)
        return -1;
    conn_drop(f, old);
    f->st.evicted++;
    return 0;
}

static void accept_short(boot_fabric_t *f, int err)
{
    f->st.accept_errors++;
    f->rest_until = boot_now() + ACCEPT_REST;
    if (!f->warned) {
        f->warned = 1;
        /* The one word of this layer on stderr: a job that survived a flood
         * should say so once, not die and not stay silent. */
        fprintf(stderr, "locus: warning: address exchange: accept: %s; pausing new "
                        "connections for %.0f ms (raise the open-files limit, ulimit -n)\n",
                strerror(err), ACCEPT_REST * 1e3);
    }
    int n, old = oldest_unproven(f, &n);
    if (old >= 0) { /* a descriptor back for whoever comes next */
        conn_drop(f, old);
        f->st.evicted++;
    }
}

/* Accepts what listener lfd has (a bounded number): each gets a challenge. */
static void listener_accept(boot_fabric_t *f, int lfd)
{
    for (int k = 0; k < ACCEPTS_PER_ROUND; k++) {
        if (room_make(f) != 0)
            return;
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                accept_short(f, errno);
            return; /* EAGAIN, or a connection that failed before we took it */
        }
        conn_t *c = &f->in[f->nin];
        *c = (conn_t){ .fd = fd, .phase = IN_AUTH, .since = boot_now() };
        locus_auth_init(&c->auth, &f->key, AUTH_CONTEXT);
        unsigned char chal[LOCUS_AUTH_CHAL_LEN];
        if (locus_auth_challenge(&c->auth, chal) != 0 ||
            send(fd, chal, sizeof chal, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof chal) {
            close(fd);
            continue;
        }
        f->nin++;
    }
}

/* Closes the connections that stayed silent past LOCUS_AUTH_TIMEOUT_MS. */
static void unproven_expire(boot_fabric_t *f)
{
    double now = boot_now();
    for (int i = f->nin - 1; i >= 0; i--)
        if (f->in[i].phase == IN_AUTH && now - f->in[i].since > f->auth_timeout) {
            conn_drop(f, i);
            f->st.timeouts++;
        }
}

/* ---- our message to one root ---- */

enum { OUT_CHAL, OUT_PROOF, OUT_SEND, OUT_SENT, OUT_REDIAL };

typedef struct {
    int fd;
    int phase;                       /* OUT_* */
    const char *card;                /* the root's, to dial it again */
    int node;
    locus_auth_t auth;
    unsigned char in[LOCUS_AUTH_CHAL_LEN]; /* its challenge, then its proof (as long) */
    size_t inlen;
    double redial_at;
    const unsigned char *msg;
    size_t len, sent;
} out_t;

_Static_assert(LOCUS_AUTH_CHAL_LEN == LOCUS_AUTH_PROOF_LEN, "one buffer for both");

/* The root closed before proving the key: it may have closed us for a
 * newer unproven connection while strangers flood it. Dial again soon. */
static void out_redial(out_t *o)
{
    close(o->fd);
    o->fd = -1;
    o->phase = OUT_REDIAL;
    o->redial_at = boot_now() + 0.02;
}

/* Reads the root's challenge or proof; 0 on, -1 failed (err says why). */
static int out_read(out_t *o, char *err, size_t errlen)
{
    ssize_t got = read(o->fd, o->in + o->inlen, sizeof o->in - o->inlen);
    if (got < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (got <= 0) {
        out_redial(o);
        return 0;
    }
    o->inlen += (size_t)got;
    int msg = o->phase == OUT_CHAL ? LOCUS_AUTH_MSG_CHAL : LOCUS_AUTH_MSG_PROOF;
    if (!locus_auth_prefix_ok(msg, o->in, o->inlen)) {
        snprintf(err, errlen, "address exchange: node %d's root card (%s) leads to something "
                 "that is not a Locus root", o->node, o->card);
        return -1;
    }
    if (o->inlen < sizeof o->in)
        return 0;
    o->inlen = 0;
    if (o->phase == OUT_CHAL) {
        unsigned char resp[LOCUS_AUTH_RESP_LEN];
        if (locus_auth_answer(&o->auth, o->in, resp) != 0 ||
            send(o->fd, resp, sizeof resp, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof resp) {
            out_redial(o);
            return 0;
        }
        o->phase = OUT_PROOF;
        return 0;
    }
    int rc = locus_auth_confirm(&o->auth, o->in);
    if (rc == -1) {
        snprintf(err, errlen, "address exchange: node %d's root refused our proof of the job "
                 "key: its LOCUS_JOB_KEY differs from this node's", o->node);
        return -1;
    }
    if (rc != 0) {
        snprintf(err, errlen, "address exchange: node %d's root card (%s) leads to a listener "
                 "that does not hold the job key: not a root of this job", o->node, o->card);
        return -1;
    }
    o->phase = OUT_SEND;
    return 0;
}

/* Sends what the socket takes of the message, once the root proved the key. */
static int out_write(out_t *o)
{
    ssize_t w = send(o->fd, o->msg + o->sent, o->len - o->sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0 && errno != EAGAIN && errno != EINTR)
        return -1;
    o->sent += w > 0 ? (size_t)w : 0;
    if (o->sent == o->len) {
        shutdown(o->fd, SHUT_WR);
        o->phase = OUT_SENT;
    }
    return 0;
}

/* ---- one step ---- */

/* Waits for step `step`'s message from `from` while sending ours through
 * o; the index of the finished incoming conn, or -1 (err set when more
 * than the time can be said). */
static int step_run(boot_fabric_t *f, out_t *o, uint32_t step, uint32_t from, int nnodes,
                    double until, char *err, size_t errlen)
{
    for (;;) {
        for (int i = 0; i < f->nin; i++) {
            conn_t *c = &f->in[i];
            if (c->fd < 0 && c->len >= HDR && get32(c->buf + 4) == step &&
                get32(c->buf + 8) == from && o->phase == OUT_SENT)
                return i; /* complete (fd closed once read) */
        }
        double now = boot_now();
        if (now > until)
            return -1;
        if (o->phase == OUT_REDIAL && now >= o->redial_at) {
            o->fd = dial(o->card, until);
            if (o->fd < 0)
                return -1;
            locus_auth_init(&o->auth, &f->key, AUTH_CONTEXT);
            o->phase = OUT_CHAL;
            o->inlen = 0;
        }
        struct pollfd pf[INCOMING_MAX + LISTEN_MAX + 1];
        int np = 0, who[INCOMING_MAX + LISTEN_MAX + 1];
        if (o->fd >= 0 && o->phase != OUT_SENT) {
            pf[np] = (struct pollfd){ .fd = o->fd,
                                      .events = o->phase == OUT_SEND ? POLLOUT : POLLIN };
            who[np++] = -1;
        }
        int first_conn = np;
        for (int i = 0; i < f->nin; i++)
            if (f->in[i].fd >= 0) {
                pf[np] = (struct pollfd){ .fd = f->in[i].fd, .events = POLLIN };
                who[np++] = i;
            }
        int first_listener = np;
        if (now >= f->rest_until)
            for (int i = 0; i < f->nl; i++) {
                pf[np] = (struct pollfd){ .fd = f->lfd[i], .events = POLLIN };
                who[np++] = -2 - i;
            }
        if (poll(pf, (nfds_t)np, 50) < 0 && errno != EINTR)
            return -1;
        /* Connections backwards: dropping conn i moves the last conn into
         * its place, one already served (they are polled in index order).
         * The listeners come after, as accepting may drop (evict) too. */
        for (int k = first_listener - 1; k >= first_conn; k--) {
            if (!pf[k].revents)
                continue;
            conn_t *c = &f->in[who[k]];
            /* A proven dialler sends only once our proof reached it: its
             * message comes in a later round. */
            int rc = c->phase == IN_AUTH ? (conn_auth(f, c) < 0 ? -1 : 0) : conn_read(c, nnodes);
            if (rc < 0) {
                conn_drop(f, who[k]);
            } else if (rc > 0) {
                close(c->fd);
                c->fd = -1;
            }
        }
        if (first_conn > 0 && pf[0].revents) {
            int rc = o->phase == OUT_SEND ? out_write(o) : out_read(o, err, errlen);
            if (rc < 0)
                return -1;
        }
        for (int k = first_listener; k < np; k++)
            if (pf[k].revents)
                listener_accept(f, f->lfd[-2 - who[k]]);
        unproven_expire(f);
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
        out_t o = { .fd = -1, .phase = OUT_CHAL, .card = card, .node = to, .msg = out,
                    .len = len };
        locus_auth_init(&o.auth, &f->key, AUTH_CONTEXT);
        if (out && root_card(ctx, to, card, sizeof card) == 0)
            o.fd = dial(card, until);
        if (o.fd < 0) {
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
        err[0] = '\0';
        int i = step_run(f, &o, step, (uint32_t)from, nnodes, until, err, errlen);
        if (o.fd >= 0)
            close(o.fd);
        free(out);
        if (i < 0) {
            if (!err[0])
                snprintf(err, errlen, "address exchange: node %d's root got no blobs from "
                         "node %d's root within LOCUS_ADDR_TIMEOUT (step %u of the "
                         "allgather)", me, from, step);
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

void boot_fabric_stats(const boot_fabric_t *f, boot_fabric_stats_t *out)
{
    *out = f->st;
}

void boot_fabric_close(boot_fabric_t *f)
{
    if (!f)
        return;
    while (f->nin > 0)
        conn_drop(f, f->nin - 1); /* an fd of -1 was read and closed already */
    listeners_close(f);
    explicit_bzero(&f->key, sizeof f->key);
    free(f);
}
