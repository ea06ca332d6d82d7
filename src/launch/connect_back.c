/*
 * connect_back.c — one srun for the whole job inside a Slurm allocation
 * (Hydra's way): srun starts the proxies of all the job's other nodes at
 * once, and since one srun's stdio cannot carry a control stream per node,
 * each proxy connects back to the front end over TCP.
 *
 * The front end listens on an ephemeral port of every address; the
 * proxies get its IPv4 addresses and a one-time launch token in the
 * environment (LOCUS_FRONTEND, LOCUS_LAUNCH_TOKEN; both removed before
 * any rank starts), try the addresses in turn and open with
 * "locus-proxy TOKEN NODE\n". A connection that says anything else, names
 * a node that is not waiting, or is silent for CB_HELLO_WAIT seconds is
 * closed; the stranger learns nothing (the job's key only travels on the
 * control stream, after this line). From then on the socket is the
 * node's control stream, exactly as a socketpair through ssh would be.
 */
#include "frontend.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "locus_auth.h"
#include "locus_dial.h"

#define CB_HELLO_WAIT 5.0      /* seconds a connection may take to say who it is */
#define CB_CONNECT_WAIT_MS 3000 /* per address, on the proxy's side */
#define CB_LINE_MAX 512

/* ---- front end ------------------------------------------------------------ */

/* Whether a and b (n bytes each) are equal, in a time that does not say
 * where they first differ. */
static int same_bytes(const char *a, const char *b, size_t n)
{
    unsigned char d = 0;
    for (size_t i = 0; i < n; i++)
        d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

int launch_listen_tcp(char *addrs, size_t len)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
    socklen_t sl = sizeof sa;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 128) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    /* Every IPv4 address of an interface that is up, loopback last: the
     * other side tries them in this order, and from another node the
     * loopback address would reach the wrong machine. */
    struct ifaddrs *ifs = NULL;
    size_t k = 0;
    addrs[0] = '\0';
    if (getifaddrs(&ifs) == 0) {
        for (int pass = 0; pass < 2; pass++)
            for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
                if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
                    !!(i->ifa_flags & IFF_LOOPBACK) != pass)
                    continue;
                char ip[INET_ADDRSTRLEN];
                inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, ip, sizeof ip);
                int w = snprintf(addrs + k, len - k, "%s%s:%d", k ? "," : "", ip,
                                 ntohs(sa.sin_port));
                if (w < 0 || (size_t)w >= len - k)
                    break;
                k += (size_t)w;
            }
        freeifaddrs(ifs);
    }
    if (k == 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int cb_listen(fe_t *fe, char *addrs, size_t len)
{
    int fd = launch_listen_tcp(addrs, len);
    if (fd < 0)
        return -1;
    if (locus_auth_key_new_hex(fe->cb_token, sizeof fe->cb_token) != 0) {
        close(fd);
        return -1;
    }
    fe->cb_listen = fd;
    return 0;
}

int cb_fds(fe_t *fe, struct pollfd *fds)
{
    int n = 0;
    if (fe->cb_listen >= 0)
        fds[n++] = (struct pollfd){ .fd = fe->cb_listen, .events = POLLIN };
    for (int i = 0; i < fe->cb_npending; i++)
        fds[n++] = (struct pollfd){ .fd = fe->cb_pending[i].fd, .events = POLLIN };
    return n;
}

static void pending_drop(fe_t *fe, int i)
{
    close(fe->cb_pending[i].fd);
    fe->cb_pending[i] = fe->cb_pending[--fe->cb_npending];
}

/* The waiting link of node `name`, or NULL. */
static fe_link_t *waiting_link(fe_t *fe, const char *name)
{
    for (int i = 0; i < fe->nlinks; i++) {
        fe_link_t *l = &fe->links[i];
        if (l->awaiting && !l->lost_reported && !strcmp(l->host, name))
            return l;
    }
    return NULL;
}

/* Reads what pending connection i sent; hands it to its link once whole.
 * Byte by byte up to the newline: the proxy's control stream follows at
 * once, and is its link's to read. */
static void pending_read(fe_t *fe, int i)
{
    cb_pending_t *p = &fe->cb_pending[i];
    char c = 0;
    ssize_t got = 0;
    while (p->len < sizeof p->line - 1 && (got = read(p->fd, &c, 1)) == 1 && c != '\n')
        p->line[p->len++] = c;
    if (c != '\n') {
        if (p->len >= sizeof p->line - 1 || got == 0 || (errno != EAGAIN && errno != EINTR))
            pending_drop(fe, i);
        return;
    }
    p->line[p->len] = '\0';
    char token[CB_LINE_MAX], node[CB_LINE_MAX];
    fe_link_t *l = NULL;
    /* The token compared in constant time: its bytes are not guessable
     * one by one from how fast a wrong one is refused. */
    if (sscanf(p->line, "locus-proxy %511s %511s", token, node) == 2 &&
        strlen(token) == strlen(fe->cb_token) &&
        same_bytes(token, fe->cb_token, strlen(token)))
        l = waiting_link(fe, node);
    if (!l) {
        pending_drop(fe, i);
        return;
    }
    l->fd = p->fd;
    l->awaiting = 0;
    ctl_reader_init(&l->rd, l->fd);
    fe->cb_pending[i] = fe->cb_pending[--fe->cb_npending];
}

void cb_ready(fe_t *fe, const struct pollfd *fds, int n)
{
    for (int k = 0; k < n; k++) {
        if (!fds[k].revents)
            continue;
        if (fds[k].fd == fe->cb_listen) {
            int c;
            while ((c = accept4(fe->cb_listen, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
                if (fe->cb_npending == CB_PENDING_MAX) {
                    close(c);   /* a flood: the real proxies retry nothing, but */
                    continue;   /* strangers cannot hold every slot for long */
                }
                fe->cb_pending[fe->cb_npending++] =
                    (cb_pending_t){ .fd = c, .by = launch_now() + CB_HELLO_WAIT };
            }
            continue;
        }
        for (int i = 0; i < fe->cb_npending; i++)
            if (fe->cb_pending[i].fd == fds[k].fd) {
                pending_read(fe, i);
                break;
            }
    }
    /* Once every link has its stream, nobody else may connect. */
    int waiting = 0;
    for (int i = 0; i < fe->nlinks; i++)
        waiting |= fe->links[i].awaiting && !fe->links[i].lost_reported;
    if (!waiting)
        cb_close(fe);
}

void cb_expire(fe_t *fe, double now)
{
    for (int i = 0; i < fe->cb_npending; i++)
        if (now >= fe->cb_pending[i].by)
            pending_drop(fe, i--);
}

void cb_close(fe_t *fe)
{
    if (fe->cb_listen >= 0)
        close(fe->cb_listen);
    fe->cb_listen = -1;
    while (fe->cb_npending > 0)
        pending_drop(fe, fe->cb_npending - 1);
}

/* ---- proxy ------------------------------------------------------------------ */


int launch_proxy_connect(void)
{
    const char *addrs = getenv("LOCUS_FRONTEND"), *token = getenv("LOCUS_LAUNCH_TOKEN");
    const char *node = getenv("SLURMD_NODENAME");
    char host[256];
    if (!node || !*node) {
        if (gethostname(host, sizeof host) != 0)
            snprintf(host, sizeof host, "localhost");
        host[sizeof host - 1] = '\0';
        node = host;
    }
    if (!addrs || !token || !*token || strchr(token, ' ') || strchr(node, ' ')) {
        fprintf(stderr, "locusrun --proxy-connect: LOCUS_FRONTEND and LOCUS_LAUNCH_TOKEN "
                "must be set (locusrun sets them for srun)\n");
        return 1;
    }
    char line[CB_LINE_MAX + 2 * 256];
    int len = snprintf(line, sizeof line, "locus-proxy %s %s\n", token, node);
    char *list = strdup(addrs);
    int fd = -1;
    for (char *save = NULL, *a = list ? strtok_r(list, ",", &save) : NULL; a && fd < 0;
         a = strtok_r(NULL, ",", &save))
        fd = locus_dial_ipv4(a, CB_CONNECT_WAIT_MS);
    if (fd < 0) {
        fprintf(stderr, "locusrun --proxy-connect on %s: cannot reach the front end at %s\n",
                node, addrs);
        free(list);
        return 1;
    }
    free(list);
    /* The control stream reads and writes blocking from here on. */
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    if (len < 0 || (size_t)len >= sizeof line || write(fd, line, (size_t)len) != len) {
        fprintf(stderr, "locusrun --proxy-connect on %s: cannot talk to the front end\n", node);
        close(fd);
        return 1;
    }
    /* Neither goes further: ranks must not be able to speak for the proxy. */
    unsetenv("LOCUS_LAUNCH_TOKEN");
    unsetenv("LOCUS_FRONTEND");
    return launch_proxy_run(fd, fd);
}
