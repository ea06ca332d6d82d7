/*
 * Cards and the listener: which of this host's addresses a card offers,
 * the listening socket behind them, and cards taken apart again.
 */
#include "dyn_tp.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define LISTEN_BACKLOG 128
#define CARD_PREFIX "dyn1/"

/* ---- taking a card apart ---- */

static int parse_port(const char **s, uint16_t *port)
{
    const char *p = *s;
    unsigned v = 0;
    int n = 0;
    for (; isdigit((unsigned char)*p) && n < 6; p++, n++)
        v = v * 10 + (unsigned)(*p - '0');
    if (n == 0 || n > 5 || v == 0 || v > 65535)
        return -1;
    *port = (uint16_t)v;
    *s = p;
    return 0;
}

/* One dotted quad, ended by ',' or the end of the card. */
static int parse_ip(const char **s, struct in_addr *a)
{
    char ip[INET_ADDRSTRLEN];
    size_t n = strcspn(*s, ",");
    if (n == 0 || n >= sizeof ip)
        return -1;
    memcpy(ip, *s, n);
    ip[n] = '\0';
    if (inet_pton(AF_INET, ip, a) != 1)
        return -1;
    *s += n;
    return 0;
}

int dyn_card_parse(const char *s, dyn_card_t *c)
{
    memset(c, 0, sizeof *c);
    if (strncmp(s, CARD_PREFIX, strlen(CARD_PREFIX)) != 0)
        return -1;
    const char *p = s + strlen(CARD_PREFIX);
    /* Lower-case only: the cookie is compared as text. */
    for (int i = 0; i < DYN_COOKIE_HEX; i++, p++) {
        if (!isxdigit((unsigned char)*p) || isupper((unsigned char)*p))
            return -1;
        c->cookie[i] = *p;
    }
    if (*p++ != '/' || parse_port(&p, &c->port) != 0 || *p++ != '/')
        return -1;
    for (;;) {
        if (c->naddr == DYN_MAX_ADDRS || parse_ip(&p, &c->addr[c->naddr]) != 0)
            return -1;
        c->naddr++;
        if (*p == '\0')
            return 0;
        if (*p++ != ',')
            return -1;
    }
}

/* ---- this host's addresses ---- */

static void addr_add(struct in_addr *out, int *n, int max, struct in_addr a)
{
    for (int i = 0; i < *n; i++)
        if (out[i].s_addr == a.s_addr)
            return;
    if (*n < max)
        out[(*n)++] = a;
}

/* Whether interface `name` is one of LOCUS_NET_IFACES's comma-separated list. */
static int iface_listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        size_t k = strcspn(p, ",");
        if (k == n && strncmp(p, name, n) == 0)
            return 1;
        p += k;
        if (*p == ',')
            p++;
    }
    return 0;
}

/* Non-loopback addresses of the interfaces that are up and running (only
 * the listed ones when LOCUS_NET_IFACES is set: those the plan chose), then
 * 127.0.0.1, which always works between processes of one host and is the
 * dialler's last resort. */
static int host_addrs(struct in_addr *out, int max)
{
    const char *list = getenv("LOCUS_NET_IFACES");
    struct ifaddrs *all = NULL;
    int n = 0;
    if (getifaddrs(&all) == 0) {
        for (const struct ifaddrs *i = all; i; i = i->ifa_next) {
            if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
                (i->ifa_flags & (IFF_UP | IFF_RUNNING)) != (IFF_UP | IFF_RUNNING) ||
                (i->ifa_flags & IFF_LOOPBACK))
                continue;
            if (list && *list && !iface_listed(list, i->ifa_name))
                continue;
            struct sockaddr_in sin;
            memcpy(&sin, i->ifa_addr, sizeof sin);
            if ((ntohl(sin.sin_addr.s_addr) >> 24) != 127)
                addr_add(out, &n, max - 1, sin.sin_addr);
        }
        freeifaddrs(all);
    }
    struct in_addr lo = { .s_addr = htonl(INADDR_LOOPBACK) };
    addr_add(out, &n, max, lo);
    return n;
}

static int card_format(dyn_tp_t *tp, uint16_t port)
{
    struct in_addr addr[DYN_MAX_ADDRS];
    int n = host_addrs(addr, DYN_MAX_ADDRS);
    size_t len = sizeof tp->card;
    size_t k = (size_t)snprintf(tp->card, len, CARD_PREFIX "%s/%u/", tp->cookie, port);
    for (int i = 0; i < n && k < len; i++) {
        char ip[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &addr[i], ip, sizeof ip);
        k += (size_t)snprintf(tp->card + k, len - k, "%s%s", i ? "," : "", ip);
    }
    return k < len ? 0 : -1;
}

/* ---- the listener ---- */

int dyn_listen(dyn_tp_t *tp, char *err, size_t errlen)
{
    if (tp->lfd >= 0)
        return 0;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "dyn: socket: %s", strerror(errno));
        return -1;
    }
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
    socklen_t sl = sizeof sa;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, LISTEN_BACKLOG) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) {
        snprintf(err, errlen, "dyn: cannot listen on 0.0.0.0: %s", strerror(errno));
        close(fd);
        return -1;
    }
    if (card_format(tp, ntohs(sa.sin_port)) != 0) {
        /* cannot happen: DYN_MAX_ADDRS addresses always fit */
        snprintf(err, errlen, "dyn: card longer than %d bytes", LOCUS_DYN_CARD_MAX);
        close(fd);
        return -1;
    }
    tp->lfd = fd;
    tp->port = ntohs(sa.sin_port);
    return 0;
}

int locus_dyn_card(locus_tp_t *t, char *card, size_t len, char *err, size_t errlen)
{
    dyn_tp_t *tp = (dyn_tp_t *)t;
    if (dyn_listen(tp, err, errlen) != 0)
        return -1;
    if (strlen(tp->card) >= len) {
        snprintf(err, errlen, "dyn: card buffer of %zu bytes too small (%zu needed)", len,
                 strlen(tp->card) + 1);
        return -1;
    }
    memcpy(card, tp->card, strlen(tp->card) + 1);
    return 0;
}
