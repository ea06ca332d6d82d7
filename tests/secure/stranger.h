/*
 * stranger.h — what the tests of the job key (tcp, the fabric exchange)
 * do as a stranger on a rank's or root's socket. Header-only, for tests.
 */
#ifndef LOCUS_TEST_STRANGER_H
#define LOCUS_TEST_STRANGER_H

#include <errno.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

/* Reads what the peer still says until it closes: the bytes into buf (at
 * most cap), their number, or -1 when it did not close before the socket's
 * receive timeout (SO_RCVTIMEO). */
static inline int stranger_until_closed(int fd, unsigned char *buf, size_t cap)
{
    size_t n = 0;
    for (;;) {
        unsigned char tmp[256];
        ssize_t r = recv(fd, tmp, sizeof tmp, 0);
        if (r == 0 || (r < 0 && errno == ECONNRESET))
            return (int)n;
        if (r < 0)
            return -1;
        for (ssize_t i = 0; i < r && n < cap; i++)
            buf[n++] = tmp[i];
    }
}

#endif
