#include "tcp_test.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double tt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The rank's entry of a `sep`-separated list (round-robin), into out. */
static int entry(const char *list, char sep, int rank, char *out, size_t len)
{
    int n = 1;
    for (const char *p = list; *p; p++)
        n += *p == sep;
    int want = rank % n;
    const char *p = list;
    for (int i = 0; i < want; i++)
        p = strchr(p, sep) + 1;
    const char *end = strchr(p, sep);
    size_t k = end ? (size_t)(end - p) : strlen(p);
    if (k >= len)
        return -1;
    memcpy(out, p, k);
    out[k] = '\0';
    return 0;
}

int tt_enter(int rank, const char *netns, const char *ifaces)
{
    char name[128], path[256];
    if (netns && *netns) {
        if (entry(netns, ',', rank, name, sizeof name) != 0)
            return -1;
        snprintf(path, sizeof path, "/var/run/netns/%s", name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
            fprintf(stderr, "rank %d: cannot enter netns %s: %s\n", rank, name, strerror(errno));
            return -1;
        }
        close(fd);
    }
    if (ifaces && *ifaces) {
        if (entry(ifaces, ';', rank, name, sizeof name) != 0)
            return -1;
        setenv("LOCUS_NET_IFACES", name, 1);
    }
    return 0;
}

uint32_t tt_seq_take(const void *hdr, size_t hdrlen, uint32_t *next, int *bad)
{
    uint32_t seq = 0;
    if (hdrlen == sizeof seq)
        memcpy(&seq, hdr, sizeof seq);
    *bad += hdrlen != sizeof seq || seq != *next;
    *next = seq + 1;
    return seq;
}
