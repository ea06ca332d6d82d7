#include "tcp_test.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

uint64_t tt_rng(uint64_t *s)
{
    uint64_t x = (*s += 0x9e3779b97f4a7c15ull);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t word_at(uint64_t seed, size_t i)
{
    return (seed * 0x9e3779b97f4a7c15ull + 1) + (uint64_t)i * 0xff51afd7ed558ccdull;
}

/* Byte i is byte i%8 of word_at(seed, i - i%8), whatever the length, so
 * a truncated receive is checked against the same pattern. */
void tt_fill(unsigned char *b, size_t len, uint64_t seed)
{
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t v = word_at(seed, i);
        memcpy(b + i, &v, 8);
    }
    if (i < len) {
        uint64_t v = word_at(seed, i);
        memcpy(b + i, &v, len - i);
    }
}

size_t tt_check(const unsigned char *b, size_t len, uint64_t seed)
{
    for (size_t i = 0; i < len; i += 8) {
        uint64_t v = word_at(seed, i);
        size_t k = len - i < 8 ? len - i : 8;
        if (memcmp(b + i, &v, k) != 0)
            for (size_t j = 0; j < k; j++)
                if (b[i + j] != ((unsigned char *)&v)[j])
                    return i + j;
    }
    return SIZE_MAX;
}

uint64_t tt_sum(const unsigned char *b, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

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
