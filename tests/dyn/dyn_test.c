/*
 * The dyn tests' shared parts (dyn_test.h). Payloads are a function of the
 * message index, so a receiver checks each byte without being told it.
 */
#include "dyn_test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int dt_failures;
const char *dt_who = "main";

#define HDR_MAGIC 0x44594e54u /* "DYNT" */

/* ---- messages of known content ---- */

size_t dt_size(uint32_t i)
{
    static const size_t fixed[] = { 0, 1, 70000, 48, 65536, 65535, 8u << 20, 7, 65537, 1u << 20 };
    if (i < sizeof fixed / sizeof fixed[0])
        return fixed[i];
    if (i % 40 == 39)
        return (8u << 20) - i * 1237u;          /* just under 8 MiB */
    if (i % 10 == 5)
        return 100000 + (i * 9973u) % 1500000;  /* tens of kB to 1.6 MB */
    return (i * 2654435761u) % 5000;            /* small */
}

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

void dt_fill(uint32_t i, uint8_t *buf, size_t len)
{
    uint64_t seed = mix(i), w;
    size_t k = 0;
    for (; k + 8 <= len; k += 8) {
        w = seed ^ (k * 0x100000001b3ull);
        memcpy(buf + k, &w, 8);
    }
    w = mix(seed + k);
    memcpy(buf + k, &w, len - k);
}

size_t dt_hdr(uint32_t i, uint8_t *hdr)
{
    size_t hdrlen = 16 + i % 33;
    uint32_t magic = HDR_MAGIC;
    uint64_t len = dt_size(i);
    memcpy(hdr, &magic, 4);
    memcpy(hdr + 4, &i, 4);
    memcpy(hdr + 8, &len, 8);
    for (size_t k = 16; k < hdrlen; k++)
        hdr[k] = (uint8_t)(i * 7 + k);
    return hdrlen;
}

int dt_send(locus_tp_t *tp, int id, uint32_t i)
{
    uint8_t hdr[LOCUS_TP_HDR_MAX];
    size_t hdrlen = dt_hdr(i, hdr), len = dt_size(i);
    uint8_t *data = malloc(len ? len : 1);
    dt_fill(i, data, len);
    int r = tp->ops->send(tp, id, hdr, hdrlen, data, len, NULL);
    free(data);
    return r;
}

/* ---- the fake core ---- */

static void core_deliver(void *core, int src, const void *hdr, size_t hdrlen, const void *data,
                         size_t len)
{
    dt_core_t *c = core;
    uint8_t want[LOCUS_TP_HDR_MAX];
    if (src < 1 || src >= DT_MAX_IDS) {
        CHECK(0, "message from unknown id %d", src);
        c->bad++;
        return;
    }
    uint32_t i = c->count[src]++;
    size_t wantlen = dt_hdr(i, want);
    if (hdrlen != wantlen || memcmp(hdr, want, hdrlen) != 0) {
        uint32_t got = 0;
        if (hdrlen >= 8)
            memcpy(&got, (const uint8_t *)hdr + 4, 4);
        CHECK(0, "from id %d: message %u expected, header of %zu bytes says %u", src, i, hdrlen,
              got);
        c->bad++;
        return;
    }
    if (len != dt_size(i)) {
        CHECK(0, "from id %d: message %u: %zu bytes, %zu expected", src, i, len, dt_size(i));
        c->bad++;
        return;
    }
    uint8_t *ref = malloc(len ? len : 1);
    dt_fill(i, ref, len);
    if (len && memcmp(ref, data, len) != 0) {
        CHECK(0, "from id %d: message %u (%zu bytes): payload differs", src, i, len);
        c->bad++;
    }
    free(ref);
}

static int core_add_peer(void *core, locus_tp_t *tp)
{
    dt_core_t *c = core;
    (void)tp;
    return c->next_id++;
}

static const locus_tp_upcalls_t dt_up = { .deliver = core_deliver, .add_peer = core_add_peer };

void dt_core_init(dt_core_t *core, locus_tp_init_t *init)
{
    memset(core, 0, sizeof *core);
    core->next_id = 1;
    memset(init, 0, sizeof *init);
    init->size = 1;
    init->local_size = 1;
    init->up = &dt_up;
    init->core = core;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int dt_pump(locus_tp_t *tp, int ms, int (*done)(void *), void *arg)
{
    uint64_t until = now_ms() + (uint64_t)ms;
    while (!done(arg)) {
        int r = tp->ops->progress(tp);
        if (r < 0)
            return -1;
        if (now_ms() > until)
            return 1;
        if (r == 0)
            usleep(50);
    }
    return 0;
}

/* ---- the wire by hand ---- */

int dt_card_split(const char *card, char *cookie, int *port)
{
    if (strncmp(card, "dyn1/", 5) != 0 || strlen(card) < 5 + 32 + 3 || card[37] != '/')
        return -1;
    memcpy(cookie, card + 5, 32);
    cookie[32] = '\0';
    *port = atoi(card + 38);
    return *port > 0 ? 0 : -1;
}

int dt_raw_dial(const char *card)
{
    char cookie[33];
    int port;
    if (dt_card_split(card, cookie, &port) != 0)
        return -1;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

size_t dt_hello(uint8_t *buf, const char *cookie, locus_dyn_name_t name, const char *card)
{
    size_t k = 0;
    uint16_t cl = (uint16_t)strlen(cookie), dl = (uint16_t)strlen(card);
    memcpy(buf + k, "LDYN1", 5), k += 5;
    memcpy(buf + k, &cl, 2), k += 2;
    memcpy(buf + k, cookie, cl), k += cl;
    memcpy(buf + k, &name.job, 8), k += 8;
    memcpy(buf + k, &name.rank, 4), k += 4;
    memcpy(buf + k, &dl, 2), k += 2;
    memcpy(buf + k, card, dl), k += dl;
    return k;
}

uint8_t *dt_frame(uint32_t i, size_t *len)
{
    uint8_t hdr[LOCUS_TP_HDR_MAX];
    uint32_t hdrlen = (uint32_t)dt_hdr(i, hdr);
    uint64_t n = dt_size(i);
    uint8_t *f = malloc(12 + hdrlen + n);
    memcpy(f, &hdrlen, 4);
    memcpy(f + 4, &n, 8);
    memcpy(f + 12, hdr, hdrlen);
    dt_fill(i, f + 12 + hdrlen, n);
    *len = 12 + hdrlen + n;
    return f;
}

int dt_write_pieces(int fd, const uint8_t *buf, size_t len, size_t maxpiece, size_t slow)
{
    size_t off = 0;
    unsigned r = 12345;
    while (off < len) {
        r = r * 1103515245u + 12345u;
        size_t n = 1 + (r >> 16) % maxpiece;
        if (off >= slow)
            n = len - off;
        if (n > len - off)
            n = len - off;
        ssize_t k = send(fd, buf + off, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        off += (size_t)k;
        if (off < slow)
            usleep(200);
    }
    return 0;
}

int dt_wait_closed(int fd, int ms)
{
    uint64_t until = now_ms() + (uint64_t)ms;
    for (;;) {
        uint64_t now = now_ms();
        if (now >= until)
            return 0;
        struct pollfd pf = { .fd = fd, .events = POLLIN };
        if (poll(&pf, 1, (int)(until - now)) <= 0)
            continue;
        char junk[256];
        ssize_t k = recv(fd, junk, sizeof junk, MSG_DONTWAIT);
        if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR))
            return 1;
    }
}
