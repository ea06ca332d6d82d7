/*
 * The dyn transport between real processes over loopback, each with a
 * fake core (dyn_test.h):
 *  - tunables: malformed values refused with a line naming the variable;
 *  - dials: a dead port is "connection refused" (from connect and from
 *    send), an address that does not answer costs only its share of
 *    LOCUS_DYN_CONNECT_MS before the next is tried;
 *  - two processes, A and B, send each other 200 messages of 0 B to 8 MiB
 *    at once: each arrives exactly once, in order, intact, with its header.
 *    A registers B from B's card; B learns A from A's hello and sends back
 *    through the card the hello carried;
 *  - strangers on B's listener (garbage, a wrong cookie, a wrong cookie
 *    length) are closed, and silent ones past 64 (oldest first), B goes
 *    on; a hello and messages written in tiny pieces are read whole;
 *  - fatal ends, each a failed progress() naming the peer: a header past
 *    LOCUS_TP_HDR_MAX, a connection closed in the middle of a message, a
 *    peer that resets its connection while output to it is queued.
 * Every process gives up after 60 s (alarm): a hang fails the test.
 */
#include "dyn_test.h"

#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NMSG 200
#define NRAW 3   /* messages written by hand in pieces */

static const locus_dyn_name_t name_a = { 1, 0 }, name_b = { 2, 0 }, name_raw = { 99, 5 };

static locus_tp_t *make(dt_core_t *core, locus_dyn_name_t me, char *card)
{
    locus_tp_init_t init;
    char err[256];
    memset(card, 0, LOCUS_DYN_CARD_MAX); /* all of it travels between the processes */
    dt_core_init(core, &init);
    if (locus_tp_dyn_create(&init, me, &core->tp, err, sizeof err) != 0 ||
        locus_dyn_card(core->tp, card, LOCUS_DYN_CARD_MAX, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", dt_who, err);
        exit(1);
    }
    return core->tp;
}

static int child_exit(void)
{
    fprintf(stderr, "%s: %s\n", dt_who, dt_failures ? "FAILED" : "ok");
    return dt_failures ? 1 : 0;
}

static int never(void *arg)
{
    (void)arg;
    return 0;
}

static int io_all(int fd, void *buf, size_t len, int out)
{
    for (size_t off = 0; off < len;) {
        ssize_t k = out ? write(fd, (char *)buf + off, len - off)
                        : read(fd, (char *)buf + off, len - off);
        if (k <= 0)
            return -1;
        off += (size_t)k;
    }
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A loopback port nobody listens on (bound, then closed). */
static int dead_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t sl = sizeof sa;
    bind(fd, (struct sockaddr *)&sa, sizeof sa);
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    close(fd);
    return ntohs(sa.sin_port);
}

/* A loopback listener that accepts nothing (backlog 0); *port its port. */
static int blackhole(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t sl = sizeof sa;
    bind(fd, (struct sockaddr *)&sa, sizeof sa);
    listen(fd, 0);
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    *port = ntohs(sa.sin_port);
    return fd;
}

static int dial_nonblocking(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    connect(fd, (struct sockaddr *)&sa, sizeof sa);
    return fd;
}

/* ---- tunables and dials, in this process ---- */

static void test_tunables(void)
{
    static const char *bad[][2] = { { "LOCUS_DYN_CONNECT_MS", "abc" },
                                    { "LOCUS_DYN_CONNECT_MS", "0" },
                                    { "LOCUS_DYN_FLUSH_MS", "-5" },
                                    { "LOCUS_DYN_FLUSH_MS", "10s" } };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dt_core_t core;
        locus_tp_init_t init;
        char err[256] = "", want[64];
        dt_core_init(&core, &init);
        setenv(bad[i][0], bad[i][1], 1);
        snprintf(want, sizeof want, "%s=%s", bad[i][0], bad[i][1]);
        CHECK(locus_tp_dyn_create(&init, name_a, &core.tp, err, sizeof err) == -1 &&
              strstr(err, want), "%s accepted (err '%s')", want, err);
        unsetenv(bad[i][0]);
    }
}

static void test_dials(void)
{
    dt_core_t core;
    char card[LOCUS_DYN_CARD_MAX], dead[LOCUS_DYN_CARD_MAX], err[320];
    setenv("LOCUS_DYN_CONNECT_MS", "400", 1);
    locus_tp_t *tp = make(&core, name_a, card);
    unsetenv("LOCUS_DYN_CONNECT_MS");
    int port = dead_port();
    snprintf(dead, sizeof dead, "dyn1/%032d/%d/127.0.0.1", 0, port);
    int id = locus_dyn_peer(tp, (locus_dyn_name_t){ 7, 1 }, dead, err, sizeof err);
    CHECK(id == 1, "dead port's id %d (%s)", id, err);
    CHECK(locus_dyn_connect(tp, id, err, sizeof err) == -1 && strstr(err, "refused") &&
          strstr(err, "job 7 rank 1"), "connect to a dead port: '%s'", err);
    CHECK(dt_send(tp, id, 3) < 0 && strstr(tp->ops->last_error(tp), "refused"),
          "send to a dead port: '%s'", tp->ops->last_error(tp));
    CHECK(tp->ops->progress(tp) >= 0, "progress failed after a refused dial");
    /* An address that does not answer: a listener whose queue is full
     * drops the SYNs. It may take only its share of the 400 ms; the next
     * address (127.0.0.2, nobody there) is still tried. */
    int hole = blackhole(&port), fill[3];
    for (int i = 0; i < 3; i++)
        fill[i] = dial_nonblocking(port);
    usleep(20000);
    snprintf(dead, sizeof dead, "dyn1/%032d/%d/127.0.0.1,127.0.0.2", 0, port);
    id = locus_dyn_peer(tp, (locus_dyn_name_t){ 7, 2 }, dead, err, sizeof err);
    double t0 = now_s();
    int r = locus_dyn_connect(tp, id, err, sizeof err);
    double took = now_s() - t0;
    CHECK(r == -1 && strstr(err, "127.0.0.1:") && strstr(err, "timed out") &&
          strstr(err, "127.0.0.2:") && strstr(err, "refused"), "two dead addresses: '%s'", err);
    CHECK(took > 0.1 && took < 1.5, "dial took %.2f s with LOCUS_DYN_CONNECT_MS=400", took);
    for (int i = 0; i < 3; i++)
        close(fill[i]);
    close(hole);
    CHECK(locus_dyn_peer(tp, (locus_dyn_name_t){ 7, 3 }, "dyn1/zz", err, sizeof err) == -1 &&
          strstr(err, "malformed"), "malformed card: '%s'", err);
    CHECK(locus_dyn_peer(tp, (locus_dyn_name_t){ 7, 4 }, NULL, err, sizeof err) == -1,
          "unknown name without card accepted");
    CHECK(core.next_id == 3, "ids handed out: %d", core.next_id - 1);
    char line[200], cookie[33];
    int port2;
    tp->ops->describe(tp, line, sizeof line);
    CHECK(dt_card_split(card, cookie, &port2) == 0 && strstr(line, "listening on port") &&
          !strstr(line, cookie), "describe: '%s'", line);
    tp->ops->finalize(tp);
}

/* ---- fatal ends (child) and the peer that causes them (parent) ---- */

static void fatal_expect(locus_tp_t *tp, const char *what, const char *a, const char *b)
{
    int r = dt_pump(tp, 10000, never, NULL);
    const char *e = tp->ops->last_error(tp);
    CHECK(r == -1 && e && strstr(e, a) && strstr(e, b), "%s: progress %d, error '%s'", what, r,
          e ? e : "(none)");
}

static int fatal_child(int to_parent, int from_parent)
{
    dt_core_t core;
    char card[LOCUS_DYN_CARD_MAX], err[320];
    dt_who = "fatal";
    dt_failures = 0; /* its own, not those the parent had before fork */
    alarm(60);
    locus_tp_t *tp = make(&core, name_b, card);
    io_all(to_parent, card, sizeof card, 1);
    fatal_expect(tp, "long header", "job 99 rank 6", "malformed");
    tp->ops->finalize(tp);

    tp = make(&core, name_b, card);
    io_all(to_parent, card, sizeof card, 1);
    fatal_expect(tp, "cut message", "job 99 rank 7", "middle of a message");
    tp->ops->finalize(tp);

    tp = make(&core, name_b, card);
    io_all(from_parent, card, sizeof card, 0);
    int id = locus_dyn_peer(tp, (locus_dyn_name_t){ 98, 1 }, card, err, sizeof err);
    CHECK(locus_dyn_connect(tp, id, err, sizeof err) == 0, "connect: %s", err);
    CHECK(dt_send(tp, id, 6) == LOCUS_TP_DONE && dt_send(tp, id, 6) == LOCUS_TP_DONE,
          "sends to the silent peer");
    for (int i = 0; i < 100; i++)
        tp->ops->progress(tp);
    io_all(to_parent, "S", 1, 1);
    fatal_expect(tp, "reset", "job 98 rank 1", "lost");
    CHECK(dt_send(tp, id, 1) < 0, "send after the connection was lost");
    tp->ops->finalize(tp);
    return child_exit();
}

static void test_fatal(void)
{
    int up[2], down[2];
    char card[LOCUS_DYN_CARD_MAX] = "", cookie[33];
    int port;
    uint8_t hello[512];
    if (pipe(up) || pipe(down))
        exit(1);
    pid_t pid = fork();
    if (pid == 0)
        exit(fatal_child(up[1], down[0]));
    /* A header past LOCUS_TP_HDR_MAX. */
    io_all(up[0], card, sizeof card, 0);
    dt_card_split(card, cookie, &port);
    int fd = dt_raw_dial(card);
    size_t n = dt_hello(hello, cookie, (locus_dyn_name_t){ 99, 6 }, card);
    uint32_t hdrlen = 1000;
    uint64_t len = 0;
    memcpy(hello + n, &hdrlen, 4), n += 4;
    memcpy(hello + n, &len, 8), n += 8;
    CHECK(fd >= 0 && dt_write_pieces(fd, hello, n, 64, 0) == 0, "long header not written");
    CHECK(dt_wait_closed(fd, 10000), "connection with a long header left open");
    close(fd);
    /* A message cut off by the close. */
    io_all(up[0], card, sizeof card, 0);
    dt_card_split(card, cookie, &port);
    fd = dt_raw_dial(card);
    n = dt_hello(hello, cookie, (locus_dyn_name_t){ 99, 7 }, card);
    hdrlen = 16, len = 100;
    memcpy(hello + n, &hdrlen, 4), n += 4;
    memcpy(hello + n, &len, 8), n += 8;
    memset(hello + n, 1, 30), n += 30;
    CHECK(fd >= 0 && dt_write_pieces(fd, hello, n, 64, 0) == 0, "cut message not written");
    usleep(100000);
    close(fd);
    /* A peer that never reads and then resets. */
    int lfd = socket(AF_INET, SOCK_STREAM, 0), small = 4096;
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t sl = sizeof sa;
    setsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    bind(lfd, (struct sockaddr *)&sa, sizeof sa);
    listen(lfd, 4);
    getsockname(lfd, (struct sockaddr *)&sa, &sl);
    snprintf(card, sizeof card, "dyn1/%032d/%d/127.0.0.1", 0, ntohs(sa.sin_port));
    io_all(down[1], card, sizeof card, 1);
    char s;
    io_all(up[0], &s, 1, 0);
    fd = accept(lfd, NULL, NULL);
    close(fd); /* unread data: the kernel answers with a reset */
    close(lfd);
    int st;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "fatal-path process failed (status %#x)", st);
    close(up[0]), close(up[1]), close(down[0]), close(down[1]);
}

/* ---- A and B ---- */

typedef struct {
    dt_core_t *core;
    int id, sent;
} pair_t;

/* Strangers on B's listener, then NRAW messages from "job 99 rank 5" in
 * pieces, the hello's first bytes one or a few at a time. */
static void strangers(const char *card_b, const char *card_a)
{
    char cookie[33], wrong[33];
    int port;
    uint8_t buf[512];
    dt_card_split(card_b, cookie, &port);
    int fd = dt_raw_dial(card_b);
    CHECK(fd >= 0 && write(fd, "GET / HTTP/1.0\r\n\r\n", 18) == 18 && dt_wait_closed(fd, 5000),
          "garbage not closed");
    close(fd);
    snprintf(wrong, sizeof wrong, "%s", cookie);
    wrong[0] = wrong[0] == 'a' ? 'b' : 'a';
    fd = dt_raw_dial(card_b);
    size_t n = dt_hello(buf, wrong, name_raw, card_a);
    CHECK(fd >= 0 && write(fd, buf, n) == (ssize_t)n && dt_wait_closed(fd, 5000),
          "wrong cookie not closed");
    close(fd);
    fd = dt_raw_dial(card_b);
    n = dt_hello(buf, "abcde", name_raw, card_a);
    CHECK(fd >= 0 && write(fd, buf, n) == (ssize_t)n && dt_wait_closed(fd, 5000),
          "short cookie not closed");
    close(fd);

    /* Silent connections past the cap (64): the oldest are closed first. */
    int silent[70];
    for (int i = 0; i < 70; i++)
        silent[i] = dt_raw_dial(card_b);
    CHECK(dt_wait_closed(silent[0], 5000) && dt_wait_closed(silent[5], 5000),
          "oldest silent connections left open past the cap");
    CHECK(!dt_wait_closed(silent[69], 200), "newest silent connection closed");
    for (int i = 0; i < 70; i++)
        close(silent[i]);

    fd = dt_raw_dial(card_b);
    n = dt_hello(buf, cookie, name_raw, card_a);
    size_t total = n;
    uint8_t *stream = malloc(n);
    memcpy(stream, buf, n);
    for (uint32_t i = 0; i < NRAW; i++) {
        size_t fl;
        uint8_t *f = dt_frame(i, &fl);
        stream = realloc(stream, total + fl);
        memcpy(stream + total, f, fl);
        total += fl;
        free(f);
    }
    CHECK(fd >= 0 && dt_write_pieces(fd, stream, total, 7, 1500) == 0, "pieces not written");
    free(stream);
    close(fd);
}

static int pair_done(void *arg)
{
    pair_t *p = arg;
    return p->sent == NMSG && p->id > 0 && p->core->count[p->id] == NMSG;
}

/* Sends one message per round until all are out, receives meanwhile. */
static void pair_traffic(locus_tp_t *tp, pair_t *p, int *raw_id)
{
    char err[320];
    double until = now_s() + 45;
    while (!pair_done(p) || (raw_id && (*raw_id < 0 || p->core->count[*raw_id] < NRAW))) {
        int r = tp->ops->progress(tp);
        if (r < 0 || now_s() > until) {
            CHECK(0, "progress %d, sent %d, got %u: %s", r, p->sent,
                  p->id > 0 ? p->core->count[p->id] : 0,
                  r < 0 ? tp->ops->last_error(tp) : "timed out");
            return;
        }
        if (p->id < 0)
            p->id = locus_dyn_peer(tp, name_a, NULL, err, sizeof err);
        if (raw_id && *raw_id < 0)
            *raw_id = locus_dyn_peer(tp, name_raw, NULL, err, sizeof err);
        if (p->id > 0 && p->sent < NMSG) {
            r = dt_send(tp, p->id, (uint32_t)p->sent++);
            CHECK(r == LOCUS_TP_DONE, "send %d: %d", p->sent - 1, r);
        }
    }
}

static int proc_a(int sock)
{
    dt_core_t core;
    char card[LOCUS_DYN_CARD_MAX], card_b[LOCUS_DYN_CARD_MAX], err[320], back[LOCUS_DYN_CARD_MAX];
    dt_who = "A";
    dt_failures = 0; /* its own, not those the parent had before fork */
    alarm(60);
    locus_tp_t *tp = make(&core, name_a, card);
    io_all(sock, card, sizeof card, 1);
    io_all(sock, card_b, sizeof card_b, 0);
    strangers(card_b, card);
    pair_t p = { &core, locus_dyn_peer(tp, name_b, card_b, err, sizeof err), 0 };
    CHECK(p.id == 1, "B's id %d: %s", p.id, err);
    CHECK(locus_dyn_peer(tp, name_b, NULL, err, sizeof err) == p.id, "B known again");
    CHECK(tp->ops->reaches(tp, p.id) && !tp->ops->reaches(tp, 999), "reaches");
    CHECK(locus_dyn_connect(tp, p.id, err, sizeof err) == 0, "connect to B: %s", err);
    uint8_t big[LOCUS_TP_HDR_MAX + 1] = { 0 };
    CHECK(tp->ops->send(tp, p.id, big, sizeof big, NULL, 0, NULL) < 0, "header of 49 sent");
    pair_traffic(tp, &p, NULL);
    locus_dyn_name_t nm;
    CHECK(locus_dyn_name(tp, p.id, &nm, back, sizeof back) == 0 && nm.job == 2 && nm.rank == 0 &&
          strcmp(back, card_b) == 0, "B's name and card");
    CHECK(core.bad == 0 && core.next_id == 2, "%d bad messages, %d ids", core.bad,
          core.next_id - 1);
    tp->ops->finalize(tp);
    return child_exit();
}

static int proc_b(int sock)
{
    dt_core_t core;
    char card[LOCUS_DYN_CARD_MAX], card_a[LOCUS_DYN_CARD_MAX], back[LOCUS_DYN_CARD_MAX];
    dt_who = "B";
    dt_failures = 0; /* its own, not those the parent had before fork */
    alarm(60);
    locus_tp_t *tp = make(&core, name_b, card);
    io_all(sock, card, sizeof card, 1);
    io_all(sock, card_a, sizeof card_a, 0);
    pair_t p = { &core, -1, 0 };
    int raw_id = -1;
    pair_traffic(tp, &p, &raw_id);
    locus_dyn_name_t nm;
    CHECK(p.id > 0 && locus_dyn_name(tp, p.id, &nm, back, sizeof back) == 0 && nm.job == 1 &&
          strcmp(back, card_a) == 0, "A's name and card as its hello told");
    CHECK(raw_id > 0 && raw_id != p.id && core.count[raw_id] == NRAW, "pieced messages: %u",
          raw_id > 0 ? core.count[raw_id] : 0);
    CHECK(core.bad == 0 && core.next_id == 3, "%d bad messages, %d ids", core.bad,
          core.next_id - 1);
    tp->ops->finalize(tp);
    return child_exit();
}

static void test_pair(void)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        exit(1);
    pid_t b = fork();
    if (b == 0)
        exit(proc_b(sv[1]));
    pid_t a = fork();
    if (a == 0)
        exit(proc_a(sv[0]));
    close(sv[0]), close(sv[1]);
    int st;
    waitpid(a, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "A failed (status %#x)", st);
    waitpid(b, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "B failed (status %#x)", st);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    alarm(60);
    test_tunables();
    test_dials();
    test_fatal();
    test_pair();
    if (dt_failures) {
        fprintf(stderr, "%d failures\n", dt_failures);
        return 1;
    }
    printf("No Errors\n");
    return 0;
}
