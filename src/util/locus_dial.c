#include "locus_dial.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
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
