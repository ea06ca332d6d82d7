/*
 * Edge cases of the tcp transport, each with real processes and sockets:
 *  - a bad tunable or interface name on one rank: it fails with a line
 *    naming the problem, the others do not hang, and a send to it says
 *    that it published no address;
 *  - strangers on the listening port: garbage, a forged hello, another
 *    job's key, a replayed answer (refused without the key), hellos with
 *    the key but a wrong nonce, rank or class (refused), silence (closed
 *    after LOCUS_AUTH_TIMEOUT_MS), a flood past LOCUS_AUTH_PENDING_MAX
 *    (oldest closed first): the rank keeps working, counts each;
 *  - a real peer's dial closed among strangers past the cap dials again;
 *  - a rank with another job's key fails at once saying so;
 *  - accept() out of descriptors (EMFILE): a warning and a pause, never
 *    the rank's death;
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
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "locus_auth.h"
#include "stranger.h"
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

static const locus_tp_upcalls_t rup = { r_deliver, r_arrived, r_done, r_sent, NULL };

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


/* A case's rank starts so: its transport made, or a line and 1. */
static int rank_begin(harness_t *h, int rank, rec_t *c)
{
    char err[256];
    my_rank = rank;
    if (create(h, rank, c, err, sizeof err) != 0) {
        fprintf(stderr, "rank %d: %s\n", rank, err);
        return 1;
    }
    return 0;
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
    if (fd < 0 || connect(fd, (struct sockaddr *)to, sizeof *to) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    struct timeval tv = { 10, 0 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

/* Connects as a stranger and reads the rank's challenge; fd or -1. */
static int stranger_dial(const char *card, unsigned char chal[LOCUS_AUTH_CHAL_LEN])
{
    struct sockaddr_in to;
    int fd = raw_connect(card, &to);
    if (fd < 0)
        return -1;
    if (recv(fd, chal, LOCUS_AUTH_CHAL_LEN, MSG_WAITALL) != LOCUS_AUTH_CHAL_LEN) {
        close(fd);
        return -1;
    }
    return fd;
}

static void send_all(int fd, const void *p, size_t len)
{
    CHECK(send(fd, p, len, MSG_NOSIGNAL) == (ssize_t)len, "stranger's send");
}

/* A stranger's hello behind a right or wrong answer to the challenge: the
 * rank's reply ("LAP1" proof, then the hello_ack status, or the refusal
 * alone) into *status: TCP_HELLO_*, 0 closed without a word, 98 refused
 * the answer, 99 anything else. */
static uint32_t stranger_hello(const char *card, const locus_auth_key_t *key,
                               const tcp_hello_t *hl)
{
    unsigned char chal[LOCUS_AUTH_CHAL_LEN], resp[LOCUS_AUTH_RESP_LEN], got[128];
    int fd = stranger_dial(card, chal);
    CHECK(fd >= 0, "cannot connect to rank 0");
    if (fd < 0)
        return 99;
    locus_auth_t a;
    locus_auth_init(&a, key, "tcp");
    CHECK(locus_auth_answer(&a, chal, resp) == 0, "no challenge from rank 0");
    send_all(fd, resp, sizeof resp);
    send_all(fd, hl, sizeof *hl);
    int n = stranger_until_closed(fd, got, sizeof got);
    close(fd);
    if (n == LOCUS_AUTH_PROOF_LEN && locus_auth_confirm(&a, got) == -1)
        return 98;
    if (n != LOCUS_AUTH_PROOF_LEN + (int)sizeof(tcp_hello_ack_t))
        return n == 0 ? 0 : 99;
    CHECK(locus_auth_confirm(&a, got) == 0, "rank 0 did not prove the key to a rightful peer");
    tcp_hello_ack_t ack;
    memcpy(&ack, got + LOCUS_AUTH_PROOF_LEN, sizeof ack);
    return ack.magic == TCP_HELLO_MAGIC ? ack.status : 99;
}

/* Rank 0 stays healthy and counts every stranger: 4 that did not prove the
 * job key (garbage, a forged hello, another job's key, an answer replayed
 * from another connection), 3 that proved it but said impossible things,
 * a silent one, and a flood past LOCUS_AUTH_PENDING_MAX (16 here). */
enum { FLOOD = 100 };

static int stranger_rank(harness_t *h, int rank, void *arg)
{
    (void)arg;
    my_rank = rank;
    rec_t c;
    char err[256];
    if (rank_begin(h, rank, &c) != 0)
        return 1;
    if (rank == 0) { /* the target: keeps progressing, must stay healthy */
        int rc = pump_until(&c, &h->kvs->flags[1], 1, 60);
        CHECK(rc >= 0, "progress failed: %s", c.tp->ops->last_error(c.tp));
        rc = pump_until(&c, &c.ndeliver, 3, 30); /* rank 2's messages still come */
        CHECK(rc >= 0 && c.ndeliver == 3 && !c.order_errors, "rank 2's messages: %d", c.ndeliver);
        pump_until(&c, NULL, 0, 1.0); /* the flood's last ones time out */
        tcp_stats_t st;
        tcp_tp_stats(c.tp, &st);
        CHECK(st.auth_refused == 4, "%llu refused without the key, expected 4",
              (unsigned long long)st.auth_refused);
        CHECK(st.rejected == 3, "%llu refused hellos, expected 3", (unsigned long long)st.rejected);
        CHECK(st.auth_timeouts >= 1, "silent stranger not timed out");
        CHECK(st.auth_evicted >= FLOOD - 16 - 8, "%llu evicted of a flood of %d past a cap of 16",
              (unsigned long long)st.auth_evicted, FLOOD);
        printf("strangers: %llu refused, %llu hellos refused, %llu timed out, %llu evicted\n",
               (unsigned long long)st.auth_refused, (unsigned long long)st.rejected,
               (unsigned long long)st.auth_timeouts, (unsigned long long)st.auth_evicted);
    } else if (rank == 1) { /* the stranger */
        char card[400];
        unsigned char chal[LOCUS_AUTH_CHAL_LEN], chal2[LOCUS_AUTH_CHAL_LEN], got[128];
        unsigned char resp[LOCUS_AUTH_RESP_LEN];
        locus_tp_init_t in;
        harness_init(h, &in, rank, &rup, &c);
        locus_tp_kvs_t kvs = in.kvs;
        CHECK(kvs.get(kvs.ctx, 0, "locus.tcp.0", card, sizeof card) == 0, "no card of rank 0");
        locus_auth_key_t key, wrong;
        CHECK(locus_auth_key_env(&key, err, sizeof err) == 0, "no key: %s", err);
        wrong = key;
        wrong.k[7] ^= 1;
        /* Garbage where the answer should be: closed without a word. */
        int fd = stranger_dial(card, chal);
        char junk[sizeof(tcp_hello_t)];
        memset(junk, 0x5a, sizeof junk);
        send_all(fd, junk, sizeof junk);
        CHECK(stranger_until_closed(fd, got, sizeof got) == 0, "garbage not refused at once");
        close(fd);
        /* A forged hello, right in every field but knowing no key. */
        tcp_card_t cd;
        tcp_card_parse(card, &cd, err, sizeof err);
        tcp_hello_t hl = { .magic = TCP_HELLO_MAGIC, .version = TCP_WIRE_VERSION, .rail = 0,
                           .nconn = 1, .src = 1, .dst = 0, .eager_max = 65536, .cls = 0,
                           .ncls = 1, .src_nonce = 42, .dst_nonce = cd.nonce };
        fd = stranger_dial(card, chal);
        double t0 = tt_now();
        send_all(fd, &hl, sizeof hl);
        CHECK(stranger_until_closed(fd, got, sizeof got) == 0 && tt_now() - t0 < 1,
              "forged hello not refused at once");
        close(fd);
        /* Another job's key: refused, and told so. */
        CHECK(stranger_hello(card, &wrong, &hl) == 98, "answer with a wrong key not refused");
        /* The right answer to one connection's challenge, replayed on another. */
        int fd1 = stranger_dial(card, chal);
        locus_auth_t a;
        locus_auth_init(&a, &key, "tcp");
        CHECK(locus_auth_answer(&a, chal, resp) == 0, "answer");
        fd = stranger_dial(card, chal2);
        send_all(fd, resp, sizeof resp);
        int n = stranger_until_closed(fd, got, sizeof got);
        CHECK(n == LOCUS_AUTH_PROOF_LEN && locus_auth_confirm(&a, got) == -1,
              "replayed answer not refused (%d bytes back)", n);
        close(fd);
        close(fd1);
        /* The key proven, then impossible hellos: refused by the hello's rules. */
        hl.dst_nonce = cd.nonce ^ 1;
        CHECK(stranger_hello(card, &key, &hl) == TCP_HELLO_BAD, "wrong nonce not refused");
        hl.dst_nonce = cd.nonce;
        hl.src = 0; /* claims to be the target itself */
        CHECK(stranger_hello(card, &key, &hl) == TCP_HELLO_BAD, "impossible rank not refused");
        hl.src = 1;
        hl.cls = 3; /* a traffic class that does not exist */
        hl.ncls = 3;
        CHECK(stranger_hello(card, &key, &hl) == TCP_HELLO_BAD, "impossible class not refused");
        /* Silence: closed after LOCUS_AUTH_TIMEOUT_MS (500 ms here). */
        fd = stranger_dial(card, chal);
        t0 = tt_now();
        CHECK(stranger_until_closed(fd, got, sizeof got) == 0 && tt_now() - t0 < 3,
              "silent stranger not dropped (%.1f s)", tt_now() - t0);
        close(fd);
        /* A flood: the oldest unproven are closed for the newest. */
        static int fds[FLOOD];
        struct sockaddr_in to;
        int opened = 0;
        for (int i = 0; i < FLOOD; i++)
            opened += (fds[i] = raw_connect(card, &to)) >= 0;
        CHECK(opened == FLOOD, "flood: %d of %d connected", opened, FLOOD);
        usleep(300000);
        int shut = 0;
        for (int i = 0; i < FLOOD; i++) {
            struct timeval tv = { 0, 1000 };
            if (fds[i] < 0)
                continue;
            setsockopt(fds[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
            shut += stranger_until_closed(fds[i], got, sizeof got) >= 0;
            close(fds[i]);
        }
        CHECK(shut >= FLOOD - 16 - 8, "flood: only %d of %d closed by the rank", shut, FLOOD);
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

/* ---- a real dial closed for newer strangers ---- */

/* Rank 2 dials rank 0 between two halves of a stranger's 100 silent
 * connections, while rank 0 is not accepting: when rank 0 takes them all
 * at once, rank 2's connection is among the oldest unproven past the cap
 * and is closed; rank 2 dials again and its messages arrive. */
static int redial_rank(harness_t *h, int rank, void *arg)
{
    (void)arg;
    rec_t c;
    volatile int *fl = h->kvs->flags;
    if (rank_begin(h, rank, &c) != 0)
        return 1;
    double t0 = tt_now();
    if (rank == 0) {
        fl[0] = 1;
        while (fl[1] < 2 && tt_now() - t0 < 30) /* not accepting meanwhile */
            usleep(1000);
        int rc = pump_until(&c, &c.ndeliver, 3, 30);
        CHECK(rc >= 0 && c.ndeliver == 3 && !c.order_errors, "rank 2's messages: %d (%s)",
              c.ndeliver, rc < 0 ? c.tp->ops->last_error(c.tp) : "");
        tcp_stats_t st;
        tcp_tp_stats(c.tp, &st);
        CHECK(st.auth_evicted >= 1, "nothing evicted");
        fl[3] = 1;
    } else if (rank == 1) {
        char card[400];
        locus_tp_init_t in;
        harness_init(h, &in, rank, &rup, &c);
        CHECK(in.kvs.get(in.kvs.ctx, 0, "locus.tcp.0", card, sizeof card) == 0, "card");
        while (!fl[0] && tt_now() - t0 < 30)
            usleep(1000);
        static int fds[100];
        struct sockaddr_in to;
        for (int i = 0; i < 50; i++)
            fds[i] = raw_connect(card, &to);
        fl[1] = 1;
        while (!fl[2] && tt_now() - t0 < 30)
            usleep(1000);
        for (int i = 50; i < 100; i++)
            fds[i] = raw_connect(card, &to);
        fl[1] = 2;
        while (!fl[3] && tt_now() - t0 < 60)
            usleep(1000);
        for (int i = 0; i < 100; i++)
            if (fds[i] >= 0)
                close(fds[i]);
    } else {
        while (fl[1] < 1 && tt_now() - t0 < 30)
            usleep(1000);
        uint32_t i = 0;
        CHECK(send_retry(&c, 0, &i, sizeof i, "abc", 3) == LOCUS_TP_DONE, "send 0");
        pump_until(&c, NULL, 0, 0.05); /* its connect() done: in rank 0's backlog */
        fl[2] = 1;
        for (i = 1; i < 3; i++)
            CHECK(send_retry(&c, 0, &i, sizeof i, "abc", 3) == LOCUS_TP_DONE, "send %u", i);
        pump_until(&c, &fl[3], 1, 30);
        tcp_stats_t st;
        tcp_tp_stats(c.tp, &st);
        CHECK(st.redials >= 1 && c.tp->ops->progress(c.tp) >= 0, "%llu redials: %s",
              (unsigned long long)st.redials, c.tp->ops->last_error(c.tp) ?
              c.tp->ops->last_error(c.tp) : "healthy");
    }
    harness_barrier(h);
    c.tp->ops->finalize(c.tp);
    return failures != 0;
}

/* ---- another job's key ---- */

/* Rank 1 holds another key: its dial is refused and it fails at once with
 * the reason; rank 0 counts the refusal and carries on. */
static int other_key_rank(harness_t *h, int rank, void *arg)
{
    (void)arg;
    my_rank = rank;
    if (rank == 1)
        setenv("LOCUS_JOB_KEY", "this job's key is another one entirely", 1);
    rec_t c;
    if (rank_begin(h, rank, &c) != 0)
        return 1;
    if (rank == 1) {
        uint32_t w = 0;
        double t0 = tt_now();
        int rc = send_retry(&c, 0, &w, 4, NULL, 0);
        while (rc >= 0 && tt_now() - t0 < 10)
            rc = c.tp->ops->progress(c.tp);
        const char *why = c.tp->ops->last_error(c.tp);
        CHECK(rc < 0 && why && strstr(why, "refused our proof of the job key") &&
              tt_now() - t0 < 2, "another key: %d '%s' after %.1f s", rc, why ? why : "",
              tt_now() - t0);
        h->kvs->flags[1] = 1;
    } else {
        int rc = pump_until(&c, &h->kvs->flags[1], 1, 15);
        tcp_stats_t st;
        tcp_tp_stats(c.tp, &st);
        CHECK(rc >= 0 && st.auth_refused >= 1, "rank 0: %d, %llu refused", rc,
              (unsigned long long)st.auth_refused);
    }
    c.tp->ops->finalize(c.tp);
    return failures != 0;
}

/* ---- out of descriptors ---- */

/* Rank 0 may open only a few more descriptors when a stranger floods it:
 * accept fails with EMFILE, which warns once and rests the rail; rank 0
 * stays healthy and rank 2's messages still arrive afterwards. */
static int emfile_rank(harness_t *h, int rank, void *arg)
{
    (void)arg;
    rec_t c;
    if (rank_begin(h, rank, &c) != 0)
        return 1;
    if (rank == 0) {
        struct rlimit old, low;
        getrlimit(RLIMIT_NOFILE, &old);
        int top = dup(0); /* the lowest free descriptor: everything below is taken */
        close(top);
        low = old;
        low.rlim_cur = (rlim_t)top + 3;
        CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0, "setrlimit: %s", strerror(errno));
        h->kvs->flags[0] = 1;
        int rc = pump_until(&c, &h->kvs->flags[1], 1, 30);
        CHECK(rc >= 0, "progress failed under EMFILE: %s", c.tp->ops->last_error(c.tp));
        rc = pump_until(&c, &c.ndeliver, 3, 30);
        CHECK(rc >= 0 && c.ndeliver == 3, "rank 2's messages after EMFILE: %d (%s)", c.ndeliver,
              rc < 0 ? c.tp->ops->last_error(c.tp) : "");
        h->kvs->flags[2] = 1;
        tcp_stats_t st;
        tcp_tp_stats(c.tp, &st);
        CHECK(st.accept_errors >= 1, "accept never ran short (%llu accepted)",
              (unsigned long long)st.accepts);
        setrlimit(RLIMIT_NOFILE, &old);
    } else if (rank == 1) {
        char card[400];
        locus_tp_init_t in;
        harness_init(h, &in, rank, &rup, &c);
        CHECK(in.kvs.get(in.kvs.ctx, 0, "locus.tcp.0", card, sizeof card) == 0, "card");
        while (!h->kvs->flags[0])
            usleep(1000);
        int fds[30];
        struct sockaddr_in to;
        for (int i = 0; i < 30; i++)
            fds[i] = raw_connect(card, &to);
        usleep(800000);
        for (int i = 0; i < 30; i++)
            if (fds[i] >= 0)
                close(fds[i]);
        h->kvs->flags[1] = 1;
    } else {
        while (!h->kvs->flags[1])
            usleep(1000);
        for (uint32_t i = 0; i < 3; i++)
            CHECK(send_retry(&c, 0, &i, sizeof i, "abc", 3) == LOCUS_TP_DONE, "send %u", i);
        /* Until rank 0 has them: on a loaded machine the dial (a rested
         * rail, an unproven connection closed for a newer one, dialled
         * again) can take longer than a second. */
        pump_until(&c, &h->kvs->flags[2], 1, 30);
    }
    harness_barrier(h);
    c.tp->ops->finalize(c.tp);
    return failures != 0;
}

/* ---- limits ---- */

static int limits_rank(harness_t *h, int rank, void *arg)
{
    (void)arg;
    rec_t c;
    static unsigned char big[70000];
    if (rank_begin(h, rank, &c) != 0)
        return 1;
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
    setenv("LOCUS_AUTH_TIMEOUT_MS", "500", 1);
    setenv("LOCUS_AUTH_PENDING_MAX", "16", 1);
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
        { "LOCUS_JOB_KEY", "", "no job key (LOCUS_JOB_KEY)" },
        { "LOCUS_JOB_KEY", "short", "LOCUS_JOB_KEY is too short" },
        { "LOCUS_AUTH_TIMEOUT_MS", "1", "LOCUS_AUTH_TIMEOUT_MS=1: expected" },
    };
    for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++)
        bad += run(2, bad_config_rank, (void *)cfgs[i], cfgs[i][0]);
    bad += run(3, stranger_rank, NULL, "strangers");
    bad += run(3, redial_rank, NULL, "a real dial closed for newer strangers");
    bad += run(2, other_key_rank, NULL, "another job's key");
    bad += run(3, emfile_rank, NULL, "out of descriptors");
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
