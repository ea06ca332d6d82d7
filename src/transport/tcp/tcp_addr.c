/*
 * Rails and cards: which interfaces this rank talks through (the placement
 * plan's LOCUS_NET_IFACES, else the interfaces found here), their
 * listening sockets, and the card that tells peers where to dial.
 */
#include "locus_tunables.h"
#include "tcp_tp.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- cards ---- */

int tcp_card_format(const tcp_card_t *c, char *buf, size_t len)
{
    size_t k = (size_t)snprintf(buf, len, "2 %016" PRIx64 " %" PRIu64 " %d %d", c->nonce,
                                c->eager_max, c->ncls, c->nrails);
    for (int i = 0; i < c->nrails && k < len; i++) {
        char ip[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &c->addr[i].sin_addr, ip, sizeof ip);
        k += (size_t)snprintf(buf + k, len - k, " %s:%u", ip, ntohs(c->addr[i].sin_port));
    }
    return k < len ? 0 : -1;
}

/* Digits only (no sign, space or 0x that strtoull would take). */
static int parse_u64(const char **s, int base, uint64_t *out)
{
    const char *p = *s;
    uint64_t v = 0;
    for (; isxdigit((unsigned char)*p); p++) {
        int d = isdigit((unsigned char)*p) ? *p - '0' : (tolower((unsigned char)*p) - 'a' + 10);
        if (d >= base || v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            return -1;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    if (p == *s)
        return -1;
    *out = v;
    *s = p;
    return 0;
}

static int parse_addr(const char **s, struct sockaddr_in *a)
{
    char ip[INET_ADDRSTRLEN];
    const char *colon = strchr(*s, ':');
    if (!colon || (size_t)(colon - *s) >= sizeof ip)
        return -1;
    memcpy(ip, *s, (size_t)(colon - *s));
    ip[colon - *s] = '\0';
    memset(a, 0, sizeof *a);
    a->sin_family = AF_INET;
    if (inet_pton(AF_INET, ip, &a->sin_addr) != 1)
        return -1;
    const char *p = colon + 1;
    uint64_t port;
    if (parse_u64(&p, 10, &port) || port == 0 || port > 65535)
        return -1;
    a->sin_port = htons((uint16_t)port);
    *s = p;
    return 0;
}

int tcp_card_parse(const char *s, tcp_card_t *c, char *err, size_t errlen)
{
    const char *p = s;
    uint64_t ver, n, ncls;
    memset(c, 0, sizeof *c);
    if (parse_u64(&p, 10, &ver) || ver != 2 || *p++ != ' ' || parse_u64(&p, 16, &c->nonce) ||
        *p++ != ' ' || parse_u64(&p, 10, &c->eager_max) || *p++ != ' ' ||
        parse_u64(&p, 10, &ncls) || (ncls != 1 && ncls != TCP_CLASSES) || *p++ != ' ' ||
        parse_u64(&p, 10, &n) || n < 1 || n > TCP_MAX_RAILS || c->eager_max > UINT32_MAX) {
        snprintf(err, errlen, "malformed tcp card '%.80s'", s);
        return -1;
    }
    c->nrails = (int)n;
    c->ncls = (int)ncls;
    for (int i = 0; i < c->nrails; i++)
        if (*p++ != ' ' || parse_addr(&p, &c->addr[i]) != 0) {
            snprintf(err, errlen, "malformed address %d in tcp card '%.80s'", i, s);
            return -1;
        }
    if (*p) {
        snprintf(err, errlen, "trailing bytes in tcp card '%.80s'", s);
        return -1;
    }
    return 0;
}

/* ---- interfaces ---- */

int tcp_addr_is_local(const tcp_tp_t *tp, struct in_addr a)
{
    if ((ntohl(a.s_addr) >> 24) == 127)
        return 1;
    for (int i = 0; i < tp->nlocal; i++)
        if (tp->local[i].s_addr == a.s_addr)
            return 1;
    return 0;
}

/* The first IPv4 address of interface `name`, or NULL. */
static const struct ifaddrs *if_find(const struct ifaddrs *all, const char *name)
{
    for (const struct ifaddrs *i = all; i; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && strcmp(i->ifa_name, name) == 0)
            return i;
    return NULL;
}

static void rail_set(tcp_rail_t *r, const struct ifaddrs *i)
{
    r->fd = -1;
    snprintf(r->ifname, sizeof r->ifname, "%s", i->ifa_name);
    memcpy(&r->addr, i->ifa_addr, sizeof r->addr);
    r->addr.sin_port = 0;
}

/* The plan's list: every name must be an up interface with IPv4. */
static int rails_from_list(tcp_tp_t *tp, const struct ifaddrs *all, const char *list,
                           char *err, size_t errlen)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        if (tp->nrails == TCP_MAX_RAILS) {
            snprintf(err, errlen, "LOCUS_NET_IFACES=%s: more than %d interfaces", list,
                     TCP_MAX_RAILS);
            return -1;
        }
        const struct ifaddrs *i = if_find(all, name);
        if (!i) {
            snprintf(err, errlen, "LOCUS_NET_IFACES=%s: no interface '%s' with an IPv4 "
                     "address here", list, name);
            return -1;
        }
        if (!(i->ifa_flags & IFF_UP)) {
            snprintf(err, errlen, "LOCUS_NET_IFACES=%s: interface '%s' is down", list, name);
            return -1;
        }
        for (int k = 0; k < tp->nrails; k++)
            if (strcmp(tp->rails[k].ifname, name) == 0) {
                snprintf(err, errlen, "LOCUS_NET_IFACES=%s: '%s' listed twice", list, name);
                return -1;
            }
        rail_set(&tp->rails[tp->nrails++], i);
    }
    if (tp->nrails == 0) {
        snprintf(err, errlen, "LOCUS_NET_IFACES=%s: no interface named", list);
        return -1;
    }
    return 0;
}

static int rail_cmp(const void *a, const void *b)
{
    return strverscmp(((const tcp_rail_t *)a)->ifname, ((const tcp_rail_t *)b)->ifname);
}

/* Our own choice: every up, running, non-loopback interface with IPv4, in
 * name order (eth0 before eth1 before eth10) so that rail i is the same
 * interface on every node built alike; loopback when there is none. */
static int rails_found(tcp_tp_t *tp, const struct ifaddrs *all, char *err, size_t errlen)
{
    tcp_rail_t cand[64];
    int n = 0;
    for (const struct ifaddrs *i = all; i && n < 64; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
            (i->ifa_flags & (IFF_UP | IFF_RUNNING | IFF_LOOPBACK)) != (IFF_UP | IFF_RUNNING))
            continue;
        int dup = 0;
        for (int k = 0; k < n; k++)
            dup |= strcmp(cand[k].ifname, i->ifa_name) == 0;
        if (!dup)
            rail_set(&cand[n++], i);
    }
    if (n == 0) {
        for (const struct ifaddrs *i = all; i && n == 0; i = i->ifa_next)
            if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && (i->ifa_flags & IFF_LOOPBACK) &&
                (i->ifa_flags & IFF_UP))
                rail_set(&cand[n++], i);
        if (n == 0) {
            snprintf(err, errlen, "tcp: no up network interface with an IPv4 address");
            return -1;
        }
    }
    qsort(cand, (size_t)n, sizeof cand[0], rail_cmp);
    long want = tp->cfg.max_rails > 0 ? tp->cfg.max_rails : TCP_MAX_RAILS;
    for (int k = 0; k < n && tp->nrails < want && tp->nrails < TCP_MAX_RAILS; k++)
        tp->rails[tp->nrails++] = cand[k];
    return 0;
}

static int rail_listen(tcp_tp_t *tp, tcp_rail_t *r, char *err, size_t errlen)
{
    r->kind = TCP_OBJ_RAIL;
    r->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    socklen_t len = sizeof r->addr;
    if (r->fd < 0 || bind(r->fd, (struct sockaddr *)&r->addr, sizeof r->addr) != 0 ||
        listen(r->fd, SOMAXCONN) != 0 ||
        getsockname(r->fd, (struct sockaddr *)&r->addr, &len) != 0) {
        char ip[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &r->addr.sin_addr, ip, sizeof ip);
        snprintf(err, errlen, "tcp: cannot listen on %s (%s): %s", r->ifname, ip, strerror(errno));
        return -1;
    }
    /* Accepted sockets inherit the buffer sizes (set before the handshake
     * so the window scale is negotiated for them). */
    tcp_sock_tune(tp, r->fd);
    return 0;
}

int tcp_rails_pick(tcp_tp_t *tp, char *err, size_t errlen)
{
    struct ifaddrs *all;
    if (getifaddrs(&all) != 0) {
        snprintf(err, errlen, "tcp: getifaddrs: %s", strerror(errno));
        return -1;
    }
    for (const struct ifaddrs *i = all; i && tp->nlocal < 32; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET)
            tp->local[tp->nlocal++] = ((const struct sockaddr_in *)i->ifa_addr)->sin_addr;
    const char *list = locus_tunable_str("LOCUS_NET_IFACES");
    int rc = *list ? rails_from_list(tp, all, list, err, errlen)
                   : rails_found(tp, all, err, errlen);
    freeifaddrs(all);
    for (int i = 0; i < tp->nrails && rc == 0; i++) {
        tp->rails[i].index = i;
        rc = rail_listen(tp, &tp->rails[i], err, errlen);
    }
    return rc;
}
