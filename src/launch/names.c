/*
 * names.c — the name service behind MPI_Publish_name, MPI_Lookup_name and
 * MPI_Unpublish_name: a table of service -> port kept by the front end of
 * a launch, shared by every job the launch spawns (their locusruns find
 * LOCUS_NAME_SERVER set and start none).
 *
 * It runs on a thread of its own with its own poll loop: a rank's request
 * must never wait on the front end's event loop, nor the loop on a rank.
 * One request per connection, one line, answered and closed:
 *
 *   TOKEN publish SERVICE PORT\n   ok | exists | full
 *   TOKEN lookup SERVICE\n         ok PORT | none
 *   TOKEN unpublish SERVICE\n      ok | none
 *
 * and the slot ledger's requests (slots.c).
 *
 * SERVICE and PORT come %XX-escaped by the client and are kept as they
 * came. The token (random, in the ranks' environment only) keeps other
 * users of the machine out; a wrong one, a malformed or over-long line, or
 * a connection silent for NAMES_WAIT seconds is closed without a word.
 */
#include "frontend.h"
#include "locus_dial.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define NAMES_MAX 4096          /* names the table holds; more: "full" */
#define NAMES_LINE_MAX 4096     /* bytes of a request, its newline included */
#define NAMES_WAIT 5.0          /* seconds a connection may take to ask */
#define NAMES_PENDING_MAX 64    /* connections read at once; more: the oldest is closed */

typedef struct {
    int fd;
    double by;
    size_t len;
    char line[NAMES_LINE_MAX];
} names_conn_t;

typedef struct {
    char *service, *port;
} names_entry_t;

struct names_server {
    int listen_fd;
    int wake[2];               /* a byte on wake[1] ends the thread */
    pthread_t thread;
    char token[LOCUS_AUTH_KEY_HEX + 1];
    names_entry_t *names;      /* [NAMES_MAX] */
    int nnames;
    names_conn_t *conn;        /* [NAMES_PENDING_MAX] */
    int nconn;
    slots_t *slots;            /* the launch's slot ledger (slots.c) */
};

/* Whether a and b are equal, in a time that does not say where they first
 * differ (the token is not guessable byte by byte). */
static int token_ok(const char *a, const char *b)
{
    size_t n = strlen(b);
    if (strlen(a) != n)
        return 0;
    unsigned char d = 0;
    for (size_t i = 0; i < n; i++)
        d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

/* Splits line at blanks into at most max words, each non-empty printable
 * ASCII. The count, or -1 when the line is not such words. */
static int split_words(char *line, char **w, int max)
{
    int n = 0;
    for (char *p = line;;) {
        if (n == max)
            return -1;
        w[n++] = p;
        while (*p > ' ' && *p < 127)
            p++;
        if (p == w[n - 1] || (*p != ' ' && *p != '\0'))
            return -1;
        if (*p == '\0')
            return n;
        *p++ = '\0';
    }
}

static int find(const struct names_server *s, const char *service)
{
    for (int i = 0; i < s->nnames; i++)
        if (strcmp(s->names[i].service, service) == 0)
            return i;
    return -1;
}

/* The answer to one request line (no newline), written into out; NULL:
 * close without one. */
static const char *answer(struct names_server *s, char *line, char *out, size_t outlen)
{
    char *w[6];
    int n = split_words(line, w, 6);
    if (n < 3 || !token_ok(w[0], s->token))
        return NULL;
    const char *ledger = slots_answer(s->slots, w, n, out, outlen);
    if (ledger)
        return ledger;
    int at = find(s, w[2]);
    if (n == 4 && strcmp(w[1], "publish") == 0) {
        if (at >= 0)
            return "exists\n";
        if (s->nnames == NAMES_MAX)
            return "full\n";
        names_entry_t e = { strdup(w[2]), strdup(w[3]) };
        if (!e.service || !e.port) {
            free(e.service);
            free(e.port);
            return "full\n";
        }
        s->names[s->nnames++] = e;
        return "ok\n";
    }
    if (n == 3 && strcmp(w[1], "lookup") == 0) {
        if (at < 0)
            return "none\n";
        snprintf(out, outlen, "ok %s\n", s->names[at].port);
        return out;
    }
    if (n == 3 && strcmp(w[1], "unpublish") == 0) {
        if (at < 0)
            return "none\n";
        free(s->names[at].service);
        free(s->names[at].port);
        s->names[at] = s->names[--s->nnames];
        return "ok\n";
    }
    return NULL;
}

static void conn_drop(struct names_server *s, int i)
{
    close(s->conn[i].fd);
    s->conn[i] = s->conn[--s->nconn];
}

/* Reads what connection i sent; answers and closes it once its line is
 * whole, or closes it when it cannot become a request. */
static void conn_read(struct names_server *s, int i)
{
    names_conn_t *c = &s->conn[i];
    ssize_t got = read(c->fd, c->line + c->len, sizeof c->line - c->len);
    if (got < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (got <= 0) {
        conn_drop(s, i);
        return;
    }
    char *nl = memchr(c->line + c->len, '\n', (size_t)got);
    c->len += (size_t)got;
    if (!nl) {
        if (c->len == sizeof c->line)
            conn_drop(s, i);  /* no request is this long */
        return;
    }
    *nl = '\0';
    char out[NAMES_LINE_MAX + 8];
    const char *reply = strlen(c->line) == (size_t)(nl - c->line)
                            ? answer(s, c->line, out, sizeof out) : NULL;
    /* The client waits for it with an empty send buffer here: one send
     * fits; a client that cannot take it loses only its own answer. */
    if (reply)
        (void)!send(c->fd, reply, strlen(reply), MSG_NOSIGNAL | MSG_DONTWAIT);
    conn_drop(s, i);
}

static void accept_all(struct names_server *s, double now)
{
    int fd;
    while ((fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
        if (s->nconn == NAMES_PENDING_MAX) {
            /* A flood: the oldest goes, so strangers cannot hold every
             * slot and a real client retried later gets in. */
            int old = 0;
            for (int i = 1; i < s->nconn; i++)
                if (s->conn[i].by < s->conn[old].by)
                    old = i;
            conn_drop(s, old);
        }
        names_conn_t *c = &s->conn[s->nconn++];
        c->fd = fd;
        c->by = now + NAMES_WAIT;
        c->len = 0;
    }
}

static void *serve(void *arg)
{
    struct names_server *s = arg;
    struct pollfd fds[2 + NAMES_PENDING_MAX];
    for (;;) {
        double now = launch_now(), next = now + 3600;
        for (int i = s->nconn - 1; i >= 0; i--)
            if (now >= s->conn[i].by)
                conn_drop(s, i);
        fds[0] = (struct pollfd){ .fd = s->wake[0], .events = POLLIN };
        fds[1] = (struct pollfd){ .fd = s->listen_fd, .events = POLLIN };
        for (int i = 0; i < s->nconn; i++) {
            fds[2 + i] = (struct pollfd){ .fd = s->conn[i].fd, .events = POLLIN };
            if (s->conn[i].by < next)
                next = s->conn[i].by;
        }
        int nconn = s->nconn;
        int ms = (int)((next - now) * 1000) + 1;
        if (poll(fds, (nfds_t)(2 + nconn), ms) < 0) {
            if (errno == EINTR)
                continue;
            break;  /* out of memory in the kernel: ranks' lookups fail cleanly */
        }
        if (fds[0].revents)
            break;
        /* Backwards: a dropped connection's slot takes the last one's,
         * which was served already. */
        for (int i = nconn - 1; i >= 0; i--)
            if (fds[2 + i].revents)
                conn_read(s, i);
        if (fds[1].revents)
            accept_all(s, launch_now());
    }
    return NULL;
}

static void server_free(struct names_server *s)
{
    if (s->listen_fd >= 0)
        close(s->listen_fd);
    for (int i = 0; i < 2; i++)
        if (s->wake[i] >= 0)
            close(s->wake[i]);
    while (s->nconn > 0)
        conn_drop(s, s->nconn - 1);
    for (int i = 0; i < s->nnames; i++) {
        free(s->names[i].service);
        free(s->names[i].port);
    }
    free(s->names);
    free(s->conn);
    slots_free(s->slots);
    free(s);
}

names_server_t *names_server_start(slots_t *slots, char *value, size_t len, char *err,
                                   size_t errlen)
{
    struct names_server *s = calloc(1, sizeof *s);
    if (!s) {
        slots_free(slots);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->slots = slots;
    s->wake[0] = s->wake[1] = -1;
    s->names = calloc(NAMES_MAX, sizeof *s->names);
    s->conn = calloc(NAMES_PENDING_MAX, sizeof *s->conn);
    char addrs[2048];
    s->listen_fd = launch_listen_tcp(addrs, sizeof addrs);
    const char *fail = !s->names || !s->conn ? "out of memory"
                       : s->listen_fd < 0 ? "cannot listen on TCP"
                       : pipe2(s->wake, O_CLOEXEC) != 0 ? "pipe"
                       : locus_auth_key_new_hex(s->token, sizeof s->token) != 0 ? "no randomness"
                       : NULL;
    int w = fail ? 0 : snprintf(value, len, "%s@%s", s->token, addrs);
    if (!fail && (w < 0 || (size_t)w >= len)) {
        errno = ENAMETOOLONG;
        fail = "its addresses";
    }
    /* Every signal blocked in the thread: the front end takes its signals
     * through a signalfd in the main thread only. */
    sigset_t all, old;
    sigfillset(&all);
    if (!fail) {
        pthread_sigmask(SIG_SETMASK, &all, &old);
        int rc = pthread_create(&s->thread, NULL, serve, s);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (rc != 0) {
            errno = rc;
            fail = "cannot start its thread";
        }
    }
    if (fail) {
        snprintf(err, errlen, "name service: %s: %s", fail, strerror(errno));
        server_free(s);
        return NULL;
    }
    return s;
}

void names_server_stop(names_server_t *s)
{
    if (!s)
        return;
    (void)!write(s->wake[1], "x", 1);
    pthread_join(s->thread, NULL);
    server_free(s);
}

void names_setup(fe_t *fe)
{
    const char *set = getenv("LOCUS_NAME_SERVER");
    if (set && *set)
        return;  /* a child job's: its parents' name space */
    char value[2200], err[256];
    fe->names = names_server_start(slots_new(fe), value, sizeof value, err, sizeof err);
    if (fe->names)
        setenv("LOCUS_NAME_SERVER", value, 1);
    else  /* the job runs; only the name service's calls fail */
        fprintf(stderr, "locusrun: warning: %s (MPI_Publish_name and MPI_Lookup_name will "
                "fail)\n", err);
}

void names_release(const fe_t *fe)
{
    const char *key = getenv("LOCUS_SLOTS_KEY");
    char reply[64], err[256];
    if (!fe->names && key && *key)
        (void)locus_service_call("release", key, reply, sizeof reply, LOCUS_LEDGER_CONNECT_MS,
                                 err, sizeof err);
}

int launch_name_server_run(void)
{
    /* Blocked before the thread starts (it blocks every signal anyway),
     * taken here by sigwait. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGHUP);
    sigprocmask(SIG_BLOCK, &stop, NULL);
    char value[2200], err[256];
    names_server_t *s = names_server_start(NULL, value, sizeof value, err, sizeof err);
    if (!s) {
        fprintf(stderr, "locusrun: --name-server: %s\n", err);
        return 1;
    }
    printf("LOCUS_NAME_SERVER=%s\n", value);
    fflush(stdout);
    int sig = 0;
    while (sigwait(&stop, &sig) != 0)
        ;
    names_server_stop(s);
    return 0;
}
