/*
 * Edge cases of the tcp transport, each with real processes and sockets:
 *  - a bad tunable or interface name on one rank: it fails with a line
 *    naming the problem, the others do not hang, and a send to it says
 *    that it published no address;
 *  - strangers on the listening port (garbage, a hello with the wrong
 *    nonce, silence): refused or timed out, the rank keeps working;
 *  - limits: sends to self / out of range / oversized headers refused,
 *    eager limit and one byte more (deliver vs rendezvous), 0-byte
 *    rendezvous receive;
 *  - both ranks dialling each other at once, over one and two rails, many
 *    times: every message arrives once, in order;
 *  - a send to a rank that already said goodbye fails, it does not hang;
 *  - wait() sleeps its time when nothing comes and wakes on a message.
 */
#include "shm_harness.h"
#include "tcp.h"
#include "tcp_test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcp_wire.h"

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "%s:%d: rank %d: ", __FILE__, \
    __LINE__, my_rank); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); failures++; } } while (0)

static int failures, my_rank;

typedef struct {
    locus_tp_t *tp;
    int ndeliver, nrndv, ndone, nsent;
    uint32_t next[HARNESS_MAX_PROCS];  /* expected first header word per source */
    int order_errors;
    locus_tp_rndv_t *rv[16];           /* announced large messages, in order */
    int nrv;
    size_t rndv_len;
} rec_t;

static void r_deliver(void *core, int src, const void *hdr, size_t hdrlen, const void *data,
                      size_t len)
{
    rec_t *c = core;
    uint32_t w;
    (void)data, (void)len;
    c->ndeliver++;
    if (hdrlen >= 4) {
        memcpy(&w, hdr, 4);
        c->order_errors += w != c->next[src]++;
    }
}

static void r_arrived(void *core, int src, const void *hdr, size_t hdrlen, size_t len,
                      locus_tp_rndv_t *r)
{
    rec_t *c = core;
    uint32_t w;
    c->nrndv++;
    if (c->nrv < 16)
        c->rv[c->nrv++] = r;
    c->rndv_len = len;
    if (hdrlen >= 4) {
        memcpy(&w, hdr, 4);
        c->order_errors += w != c->next[src]++;
    }
}

static void r_done(void *core, void *ctx)
{
    (void)ctx;
    ((rec_t *)core)->ndone++;
}

static void r_sent(void *core, void *ctx)
{
    (void)ctx;
    ((rec_t *)core)->nsent++;
}

static const locus_tp_upcalls_t rup = { r_deliver, r_arrived, r_done, r_sent };

static int create(harness_t *h, int rank, rec_t *c, char *err, size_t errlen)
{
    locus_tp_init_t in;
    memset(c, 0, sizeof *c);
    harness_init(h, &in, rank, &rup, c);
    return locus_tp_tcp_create(&in, &c->tp, err, errlen);
}

/* Progresses until *flag reaches want or `secs` pass; returns progress's
 * last result (negative on failure). */
static int pump_until(rec_t *c, const volatile int *flag, int want, double secs)
{
    double t0 = tt_now();
    int rc = 0;
    while ((!flag || *flag < want) && tt_now() - t0 < secs)
        if ((rc = c->tp->ops->progress(c->tp)) < 0)
            return rc;
    return rc;
}

static int send_retry(rec_t *c, int dst, const void *hdr, size_t hdrlen, const void *data,
                      size_t len)
{
    double t0 = tt_now();
    int rc;
    while ((rc = c->tp->ops->send(c->tp, dst, hdr, hdrlen, data, len, NULL)) == LOCUS_TP_AGAIN &&
           tt_now() - t0 < 30)
        if (c->tp->ops->progress(c->tp) < 0)
            return -1;
    return rc;
}

/* ---- a bad tunable / interface on rank 1 ---- */

static int bad_config_rank(harness_t *h, int rank, void *arg)
{
    const char *const *env = arg; /* {name, value, expected text} */
    my_rank = rank;
    if (rank == 1)
        setenv(env[0], env[1], 1);
    rec_t c;
    char err[256] = "";
    int rc = create(h, rank, &c, err, sizeof err);
    if (rank == 1) {
        CHECK(rc != 0 && strstr(err, env[2]), "%s=%s: create gave %d '%s'", env[0], env[1], rc,
              err);
        return failures != 0;
    }
    CHECK(rc == 0, "create: %s", err);
    if (rc != 0)
        return 1;
    char hdr[16] = "x";
    rc = c.tp->ops->send(c.tp, 1, hdr, sizeof hdr, NULL, 0, NULL);
    const char *why = c.tp->ops->last_error(c.tp);
    CHECK(rc < 0 && why && strstr(why, "rank 1 published no tcp address"),
          "send to the failed rank: %d '%s'", rc, why ? why : "");
    c.tp->ops->finalize(c.tp);
    return failures != 0;
}

/* ---- strangers on the listening port ---- */

static int raw_connect(const char *card_text, struct sockaddr_in *to)
{
    tcp_card_t card;
    char err[200];
    if (tcp_card_parse(card_text, &card, err, sizeof err) != 0)
        return -1;
    *to = card.addr[0];
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)to, sizeof *to) != 0)
        return -1;
    struct timeval tv = { 10, 0 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

/* What the rank answers: an ack status, or 0 for a close without one. */
static uint32_t raw_answer(int fd)
{
    tcp_hello_ack_t a;
    ssize_t n = recv(fd, &a, sizeof a, MSG_WAITALL);
    char more;
    if (n != (ssize_t)sizeof a)
        return 0;
    CHECK(recv(fd, &more, 1, 0) == 0, "no close after a refusal");
    return a.magic == TCP_HELLO_MAGIC ? a.status : 99;
}

static int stranger_rank(harness_t *h, int rank, void *arg)
{
    (void)arg;
    my_rank = rank;
    rec_t c;
    char err[256];
    if (create(h, rank, &c, err, sizeof err) != 0) {
        fprintf(stderr, "rank %d: %s\n", rank, err);
        return 1;
    }
    if (rank == 0) { /* the target: keeps progressing, must stay healthy */
        int rc = pump_until(&c, &h->kvs->flags[1], 1, 60);
        CHECK(rc >= 0, "progress failed: %s", c.tp->ops->last_error(c.tp));
        rc = pump_until(&c, &c.ndeliver, 3, 30); /* rank 2's messages still come */
        CHECK(rc >= 0 && c.ndeliver == 3 && !c.order_errors, "rank 2's messages: %d", c.ndeliver);
        tcp_stats_t st;
        tcp_tp_stats(c.tp, &st);
        CHECK(st.rejected == 4, "%llu refused hellos, expected 4", (unsigned long long)st.rejected);
    } else if (rank == 1) { /* the stranger */
        char card[400];
        struct sockaddr_in to;
        locus_tp_init_t in;
        harness_init(h, &in, rank, &rup, &c);
        locus_tp_kvs_t kvs = in.kvs;
        CHECK(kvs.get(kvs.ctx, 0, "locus.tcp.0", card, sizeof card) == 0, "no card of rank 0");
        int fd = raw_connect(card, &to);
        CHECK(fd >= 0, "cannot connect to rank 0");
        char junk[sizeof(tcp_hello_t)];
        memset(junk, 0x5a, sizeof junk);
        CHECK(write(fd, junk, sizeof junk) == (ssize_t)sizeof junk, "write");
        CHECK(raw_answer(fd) == TCP_HELLO_BAD, "garbage hello not refused");
        close(fd);
        tcp_card_t cd;
        tcp_card_parse(card, &cd, err, sizeof err);
        tcp_hello_t hl = { .magic = TCP_HELLO_MAGIC, .version = TCP_WIRE_VERSION, .rail = 0,
                           .nconn = 1, .src = 1, .dst = 0, .eager_max = 65536, .cls = 0,
                           .ncls = 1, .src_nonce = 42, .dst_nonce = cd.nonce ^ 1 };
        fd = raw_connect(card, &to);
        CHECK(write(fd, &hl, sizeof hl) == (ssize_t)sizeof hl, "write");
        CHECK(raw_answer(fd) == TCP_HELLO_BAD, "hello with a wrong nonce not refused");
        close(fd);
        hl.dst_nonce = cd.nonce;
        hl.src = 0; /* claims to be the target itself */
        fd = raw_connect(card, &to);
        CHECK(write(fd, &hl, sizeof hl) == (ssize_t)sizeof hl, "write");
        CHECK(raw_answer(fd) == TCP_HELLO_BAD, "hello from an impossible rank not refused");
        close(fd);
        hl.src = 1;
        hl.cls = 3; /* a traffic class that does not exist */
        hl.ncls = 3;
        fd = raw_connect(card, &to);
        CHECK(write(fd, &hl, sizeof hl) == (ssize_t)sizeof hl, "write");
        CHECK(raw_answer(fd) == TCP_HELLO_BAD, "hello with an impossible class not refused");
        close(fd);
        /* Silence: dropped after LOCUS_TCP_CONNECT_TIMEOUT (1 s here). */
        fd = raw_connect(card, &to);
        double t0 = tt_now();
        CHECK(raw_answer(fd) == 0 && tt_now() - t0 < 8, "silent stranger not dropped");
        close(fd);
        h->kvs->flags[1] = 1;
    } else { /* a real peer, after the strangers */
        while (!h->kvs->flags[1])
            usleep(1000);
        for (uint32_t i = 0; i < 3; i++)
            CHECK(send_retry(&c, 0, &i, sizeof i, "abc", 3) == LOCUS_TP_DONE, "send %u", i);
        pump_until(&c, NULL, 0, 0.5);
    }
    harness_barrier(h);
    c.tp->ops->finalize(c.tp);
    return failures != 0;
}

/* ---- limits ---- */

static int limits_rank(harness_t *h, int rank, void *arg)
{
    (void)arg;
    my_rank = rank;
    rec_t c;
    char err[256];
    static unsigned char big[70000];
    if (create(h, rank, &c, err, sizeof err) != 0) {
        fprintf(stderr, "rank %d: %s\n", rank, err);
        return 1;
    }
    tcp_stats_t st;
    tcp_tp_stats(c.tp, &st);
    size_t em = st.eager_max;
    uint32_t hdr[13] = { 0 };
    if (rank == 0) {
        CHECK(c.tp->ops->send(c.tp, 0, hdr, 16, NULL, 0, NULL) == -EINVAL, "send to self");
        CHECK(c.tp->ops->send(c.tp, 2, hdr, 16, NULL, 0, NULL) == -EINVAL, "send out of range");
        CHECK(c.tp->ops->send(c.tp, -1, hdr, 16, NULL, 0, NULL) == -EINVAL, "send to -1");
        CHECK(c.tp->ops->send(c.tp, 1, hdr, LOCUS_TP_HDR_MAX + 1, NULL, 0, NULL) == -EINVAL,
              "oversized header");
        CHECK(!c.tp->ops->reaches(c.tp, 0) && c.tp->ops->reaches(c.tp, 1) &&
              !c.tp->ops->reaches(c.tp, 2), "reaches");
        harness_fill(big, sizeof big, 7);
        hdr[0] = 0;
        CHECK(send_retry(&c, 1, hdr, LOCUS_TP_HDR_MAX, big, em) == LOCUS_TP_DONE, "eager max");
        hdr[0] = 1;
        CHECK(send_retry(&c, 1, hdr, 4, big, em + 1) == LOCUS_TP_PENDING, "eager max + 1");
        hdr[0] = 2;
        CHECK(send_retry(&c, 1, hdr, 0, NULL, 0) == LOCUS_TP_DONE, "empty");
        hdr[0] = 2;
        CHECK(send_retry(&c, 1, hdr, 4, big, em + 1) == LOCUS_TP_PENDING, "eager max + 1");
        pump_until(&c, &c.nsent, 2, 30);
        CHECK(c.nsent == 2, "%d sends done, expected 2", c.nsent);
    } else {
        static unsigned char got[70000];
        pump_until(&c, &c.nrndv, 2, 30);
        pump_until(&c, &c.ndeliver, 2, 30);
        CHECK(c.ndeliver == 2 && c.nrndv == 2, "%d delivered, %d rndv", c.ndeliver, c.nrndv);
        CHECK(c.rndv_len == em + 1, "announced %zu bytes", c.rndv_len);
        CHECK(!c.order_errors, "order");
        c.tp->ops->rndv_recv(c.tp, c.rv[0], got, em + 1, NULL, 0);
        pump_until(&c, &c.ndone, 1, 30);
        CHECK(c.ndone == 1 && harness_check(got, em + 1, 7) == SIZE_MAX, "rendezvous data");
        c.tp->ops->rndv_recv(c.tp, c.rv[1], got, 0, NULL, 0); /* truncated to nothing */
        CHECK(c.ndone == 2, "0-byte receive not done at once");
        CHECK(c.tp->ops->rndv_recv(c.tp, c.rv[1], got, 0, NULL, 0) == -EINVAL, "second rndv_recv");
    }
    harness_barrier(h);
    c.tp->ops->finalize(c.tp);
    return failures != 0;
}

/* ---- simultaneous dials ---- */

static int race_rank(harness_t *h, int rank, void *arg)
{
    const char *ifaces = arg;
    my_rank = rank;
    if (ifaces)
        setenv("LOCUS_NET_IFACES", ifaces, 1);
    long races = 0;
    for (int round = 0; round < 15 && !failures; round++) {
        rec_t c;
        char err[256];
        if (create(h, rank, &c, err, sizeof err) != 0) {
            fprintf(stderr, "rank %d: %s\n", rank, err);
            return 1;
        }
        /* No barrier: everyone dials everyone at once. */
        static unsigned char big[300000], rbuf[16][300000];
        for (uint32_t i = 0; i < 6; i++)
            for (int p = 0; p < h->nprocs; p++)
                if (p != rank)
                    CHECK(send_retry(&c, p, &i, 4, big, i == 3 ? sizeof big : i) >= 0, "send");
        int want = 5 * (h->nprocs - 1);
        pump_until(&c, &c.ndeliver, want, 30);
        CHECK(c.ndeliver == want && !c.order_errors,
              "round %d: %d delivered of %d, %d out of order", round, c.ndeliver, want,
              c.order_errors);
        for (int k = 0; k < c.nrv; k++)
            c.tp->ops->rndv_recv(c.tp, c.rv[k], rbuf[k], sizeof rbuf[k], NULL, 0);
        pump_until(&c, &c.ndone, h->nprocs - 1, 30);
        pump_until(&c, &c.nsent, h->nprocs - 1, 30);
        tcp_stats_t st;
        tcp_tp_stats(c.tp, &st);
        races += (long)st.lost_races;
        harness_barrier(h);
        c.tp->ops->finalize(c.tp);
    }
    printf("rank %d: %ld dial races lost over 15 rounds (%s)\n", rank, races,
           ifaces ? ifaces : "default rails");
    return failures != 0;
}

/* ---- goodbye ---- */

static int bye_rank(harness_t *h, int rank, void *arg)
{
    (void)arg;
    my_rank = rank;
    rec_t c;
    char err[256];
    if (create(h, rank, &c, err, sizeof err) != 0)
        return 1;
    uint32_t w = 0;
    if (rank == 1) {
        CHECK(send_retry(&c, 0, &w, 4, NULL, 0) == LOCUS_TP_DONE, "send");
        c.tp->ops->finalize(c.tp); /* says goodbye, waits for rank 0's */
        return failures != 0;
    }
    pump_until(&c, &c.ndeliver, 1, 30);
    pump_until(&c, NULL, 0, 0.5); /* its goodbye arrives meanwhile */
    CHECK(c.tp->ops->progress(c.tp) >= 0, "a goodbye is not a failure");
    int rc = c.tp->ops->send(c.tp, 1, &w, 4, NULL, 0, NULL);
    const char *why = c.tp->ops->last_error(c.tp);
    CHECK(rc < 0 && why && strstr(why, "finalized"), "send after goodbye: %d %s", rc,
          why ? why : "");
    c.tp->ops->finalize(c.tp);
    return failures != 0;
}

/* ---- sleeping in wait() ---- */

static int wait_rank(harness_t *h, int rank, void *arg)
{
    (void)arg;
    my_rank = rank;
    rec_t c;
    char err[256];
    if (create(h, rank, &c, err, sizeof err) != 0)
        return 1;
    uint32_t w = 0;
    if (rank == 0) {
        CHECK(send_retry(&c, 1, &w, 4, NULL, 0) == LOCUS_TP_DONE, "send");
        pump_until(&c, &h->kvs->flags[1], 1, 30); /* connected, first one in */
        usleep(300000);
        w = 1;
        CHECK(send_retry(&c, 1, &w, 4, NULL, 0) == LOCUS_TP_DONE, "send");
        pump_until(&c, &h->kvs->flags[1], 2, 30);
    } else {
        pump_until(&c, &c.ndeliver, 1, 30);
        h->kvs->flags[1] = 1;
        double t0 = tt_now();
        int rc = c.tp->ops->wait(c.tp, 100); /* nothing comes in 100 ms */
        double idle = tt_now() - t0;
        CHECK(rc == 0 && idle > 0.08 && c.ndeliver == 1, "idle wait: %d after %.3f s", rc, idle);
        t0 = tt_now();
        while (c.ndeliver < 2 && tt_now() - t0 < 10) {
            rc = c.tp->ops->wait(c.tp, 5000);
            CHECK(rc >= 0, "wait: %d", rc);
            c.tp->ops->progress(c.tp);
        }
        double woke = tt_now() - t0;
        CHECK(c.ndeliver == 2 && woke < 2.0, "woken after %.3f s with %d messages", woke,
              c.ndeliver);
        tcp_stats_t st;
        tcp_tp_stats(c.tp, &st);
        CHECK(st.waits >= 2, "%llu waits counted", (unsigned long long)st.waits);
        h->kvs->flags[1] = 2;
    }
    harness_barrier(h);
    c.tp->ops->finalize(c.tp);
    return failures != 0;
}

static const char *second_iface(void)
{
    static char name[IF_NAMESIZE + 4];
    struct ifaddrs *all, *i;
    if (getifaddrs(&all) != 0)
        return NULL;
    for (i = all; i; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && !(i->ifa_flags & IFF_LOOPBACK) &&
            (i->ifa_flags & IFF_UP))
            break;
    if (i)
        snprintf(name, sizeof name, "lo,%s", i->ifa_name);
    freeifaddrs(all);
    return i ? name : NULL;
}

static int run(int n, int (*fn)(harness_t *, int, void *), void *arg, const char *what)
{
    harness_t h;
    if (harness_open(&h, n) != 0)
        return 1;
    int failed = harness_run(&h, fn, arg, 90);
    harness_close(&h);
    if (failed)
        fprintf(stderr, "FAILED: %s\n", what);
    return failed != 0;
}

int main(void)
{
    int bad = 0;
    setenv("LOCUS_NET_IFACES", "lo", 1);
    setenv("LOCUS_TCP_CONNECT_TIMEOUT", "1", 1);
    const char *cfgs[][3] = {
        { "LOCUS_TCP_EAGER_MAX", "lots", "LOCUS_TCP_EAGER_MAX=lots" },
        { "LOCUS_TCP_CHUNK_SIZE", "1", "LOCUS_TCP_CHUNK_SIZE=1: expected" },
        { "LOCUS_TCP_RAILS", "9", "LOCUS_TCP_RAILS=9: expected" },
        { "LOCUS_NET_IFACES", "nosuch0", "no interface 'nosuch0'" },
        { "LOCUS_NET_IFACES", "lo,lo", "'lo' listed twice" },
        { "LOCUS_NET_IFACES", ",", "no interface named" },
        { "LOCUS_QOS", "fast", "LOCUS_QOS=fast: expected off, static or adaptive" },
        { "LOCUS_QOS_DSCP", "46,0", "LOCUS_QOS_DSCP=46,0: expected three DSCP values" },
        { "LOCUS_QOS_DSCP", "46,0,64", "LOCUS_QOS_DSCP=46,0,64: expected three DSCP values" },
        { "LOCUS_QOS_SHARE", "101", "LOCUS_QOS_SHARE=101: expected 0..100" },
    };
    for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++)
        bad += run(2, bad_config_rank, (void *)cfgs[i], cfgs[i][0]);
    bad += run(3, stranger_rank, NULL, "strangers");
    bad += run(2, limits_rank, NULL, "limits");
    bad += run(4, race_rank, NULL, "simultaneous dials, one rail");
    const char *two = second_iface();
    if (two)
        bad += run(3, race_rank, (void *)two, "simultaneous dials, two rails");
    else
        printf("no second interface: two-rail dial race skipped\n");
    bad += run(2, bye_rank, NULL, "goodbye");
    bad += run(2, wait_rank, NULL, "wait");
    if (bad) {
        fprintf(stderr, "FAILED: %d part(s)\n", bad);
        return 1;
    }
    printf("No Errors\n");
    return 0;
}
