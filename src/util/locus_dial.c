#include "locus_dial.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int locus_dial_ipv4(const char *addr, int timeout_ms)
{
    char ip[INET_ADDRSTRLEN];
    int port;
    const char *colon = strrchr(addr, ':');
    if (!colon || (size_t)(colon - addr) >= sizeof ip || sscanf(colon + 1, "%d", &port) != 1 ||
        port <= 0 || port > 65535)
        return -1;
    memcpy(ip, addr, (size_t)(colon - addr));
    ip[colon - addr] = '\0';
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1)
        return -1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    struct pollfd p = { .fd = fd, .events = POLLOUT };
    int err = 0;
    socklen_t el = sizeof err;
    if (poll(&p, 1, timeout_ms) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0 ||
        err != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* ---- the launch's service (LOCUS_NAME_SERVER) ---- */

#define SERVICE_REPLY_MS 5000     /* the server closes a silent client after 5 s too */

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int locus_service_call(const char *verb, const char *args, char *reply, size_t len,
                       int connect_ms, char *err, size_t errlen)
{
    const char *env = getenv("LOCUS_NAME_SERVER");
    const char *at = env ? strchr(env, '@') : NULL;
    if (!env || !*env) {
        snprintf(err, errlen, "no name service: LOCUS_NAME_SERVER is not set (not started by "
                 "locusrun)");
        return -1;
    }
    if (!at || at == env || !at[1]) {
        snprintf(err, errlen, "LOCUS_NAME_SERVER=%.40s: expected TOKEN@ip:port,...", env);
        return -1;
    }
    char line[LOCUS_SERVICE_LINE_MAX + 1];
    int n = snprintf(line, sizeof line, "%.*s %s %s\n", (int)(at - env), env, verb, args);
    if (n < 0 || n > LOCUS_SERVICE_LINE_MAX) {
        snprintf(err, errlen, "service name and port too long for the name service "
                 "(%d bytes escaped at most)", LOCUS_SERVICE_LINE_MAX);
        return -1;
    }
    char *list = strdup(at + 1);
    int fd = -1;
    for (char *save = NULL, *a = list ? strtok_r(list, ",", &save) : NULL; a && fd < 0;
         a = strtok_r(NULL, ",", &save))
        fd = locus_dial_ipv4(a, connect_ms);
    free(list);
    if (fd < 0) {
        snprintf(err, errlen, "cannot reach the name service at %.100s", at + 1);
        return -1;
    }
    size_t got = 0;
    int ok = send(fd, line, (size_t)n, MSG_NOSIGNAL) == n;
    long by = now_ms() + SERVICE_REPLY_MS;
    while (ok && (got == 0 || reply[got - 1] != '\n')) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        long left = by - now_ms();
        if (got + 1 >= len || left <= 0 || poll(&p, 1, (int)left) < 0) {
            ok = 0;
            break;
        }
        ssize_t r = read(fd, reply + got, len - 1 - got);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
            ok = 0;
        else if (r > 0)
            got += (size_t)r;
    }
    close(fd);
    if (!ok) {
        snprintf(err, errlen, "the name service gave no answer (a wrong token in "
                 "LOCUS_NAME_SERVER, or its job ended)");
        return -1;
    }
    reply[got - 1] = '\0';
    return 0;
}
