/*
 * ctl.c — the front end <-> proxy control protocol (framing only), plus the
 * small helpers both roles share.
 *
 * Words are percent-encoded so that arguments, environment values and raw
 * stdio bytes (spaces, newlines, NULs) travel in one text line that also
 * survives an ssh channel.
 */
#include "launch.h"
#include "locus_tunables.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A line holds at most a stdio chunk, percent-encoded, plus headers. */
#define CTL_LINE_MAX (3 * CTL_IO_CHUNK + 4096)

void ctl_reader_init(ctl_reader_t *r, int fd)
{
    r->fd = fd;
    r->buf = NULL;
    r->len = r->off = 0;
    r->cap = 0;
}

void ctl_reader_free(ctl_reader_t *r)
{
    free(r->buf);
    r->buf = NULL;
    r->len = r->off = r->cap = 0;
}

void ctl_msg_free(ctl_msg_t *m)
{
    free(m->data);
    m->data = NULL;
    m->cap = 0;
    m->nwords = 0;
}

long ctl_reader_fill(ctl_reader_t *r)
{
    /* Lines handed out before are consumed now (ctl_reader_line's
     * pointers stay valid until this call). */
    if (r->off > 0) {
        memmove(r->buf, r->buf + r->off, r->len - r->off);
        r->len -= r->off;
        r->off = 0;
    }
    if (r->cap - r->len < 65536) {
        size_t ncap = r->cap ? r->cap * 2 : 131072;
        char *nb = realloc(r->buf, ncap);
        if (nb == NULL)
            return -1;
        r->buf = nb;
        r->cap = ncap;
    }
    for (;;) {
        ssize_t n = read(r->fd, r->buf + r->len, r->cap - r->len);
        if (n >= 0) {
            r->len += (size_t)n;
            return (long)n;
        }
        if (errno != EINTR)
            return -1;
    }
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int ctl_reader_line(ctl_reader_t *r, const char **line, size_t *len)
{
    char *start = r->buf + r->off;
    size_t avail = r->len - r->off;
    char *nl = avail ? memchr(start, '\n', avail) : NULL;
    if (nl == NULL) {
        if (avail > CTL_LINE_MAX) {
            r->len = r->off = 0;   /* a peer that never ends its line: drop it */
            return -1;
        }
        return 0;
    }
    *line = start;
    *len = (size_t)(nl - start);
    r->off += *len + 1;
    return 1;
}

int ctl_decode(const char *line, size_t linelen, ctl_msg_t *m)
{
    if (m->cap < linelen + CTL_WORDS_MAX + 1) {
        char *nd = realloc(m->data, linelen + CTL_WORDS_MAX + 1);
        if (nd == NULL)
            return -1;
        m->data = nd;
        m->cap = linelen + CTL_WORDS_MAX + 1;
    }
    m->nwords = 0;
    char *o = m->data;
    for (size_t i = 0; i <= linelen;) {
        if (m->nwords == CTL_WORDS_MAX)
            return -1;
        char *w = o;
        while (i < linelen && line[i] != ' ') {
            char c = line[i++];
            if (c == '%') {
                int hi = i < linelen ? hexval(line[i]) : -1;
                int lo = i + 1 < linelen ? hexval(line[i + 1]) : -1;
                if (hi < 0 || lo < 0)
                    return -1;
                c = (char)(hi * 16 + lo);
                i += 2;
            }
            *o++ = c;
        }
        m->words[m->nwords] = w;
        m->lens[m->nwords] = (size_t)(o - w);
        m->nwords++;
        *o++ = '\0';
        i++;  /* past the space or the end */
    }
    return m->nwords == 0 || m->lens[0] == 0 ? -1 : 1;
}

int ctl_reader_next(ctl_reader_t *r, ctl_msg_t *m)
{
    const char *line;
    size_t len;
    int rc = ctl_reader_line(r, &line, &len);
    return rc <= 0 ? rc : ctl_decode(line, len, m);
}

int ctl_line_via(const char *line, size_t len, long *node, const char **rest, size_t *restlen)
{
    if (len < 4 || memcmp(line, "via ", 4) != 0)
        return 0;
    long v = 0;
    size_t i = 4;
    while (i < len && line[i] >= '0' && line[i] <= '9' && v < 100000000)
        v = v * 10 + (line[i++] - '0');
    if (i == 4 || i + 1 >= len || line[i] != ' ')
        return -1;
    *node = v;
    *rest = line + i + 1;
    *restlen = len - i - 1;
    return 1;
}

/* "via NODE " before a routed line, "" for node < 0. */
static size_t via_prefix(char *out, long node)
{
    return node < 0 ? 0 : (size_t)snprintf(out, 32, "via %ld ", node);
}

static int write_full(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
        if (n < 0 && errno == ENOTSOCK)
            n = write(fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                struct pollfd p = { .fd = fd, .events = POLLOUT };
                poll(&p, 1, 1000);
                continue;
            }
            return -1;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Bytes needed to encode a message (upper bound). */
static size_t ctl_encoded_max(const char *verb, int n, const char *const *words,
                              const size_t *lens)
{
    size_t need = strlen(verb) + 2;
    for (int i = 0; i < n; i++)
        need += 3 * (lens ? lens[i] : strlen(words[i])) + 1;
    return need;
}

/* Encodes a message into line (room for ctl_encoded_max); returns its length. */
static size_t ctl_encode(char *line, const char *verb, int n, const char *const *words,
                         const size_t *lens)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t k = strlen(verb);
    memcpy(line, verb, k);
    for (int i = 0; i < n; i++) {
        size_t len = lens ? lens[i] : strlen(words[i]);
        line[k++] = ' ';
        for (size_t j = 0; j < len; j++) {
            unsigned char c = (unsigned char)words[i][j];
            if (c <= 32 || c > 126 || c == '%') {
                line[k++] = '%';
                line[k++] = hex[c >> 4];
                line[k++] = hex[c & 15];
            } else {
                line[k++] = (char)c;
            }
        }
    }
    line[k++] = '\n';
    return k;
}

int ctl_send(int fd, const char *verb, int n, const char *const *words,
             const size_t *lens)
{
    size_t need = ctl_encoded_max(verb, n, words, lens);
    char stackbuf[4096];
    char *line = need <= sizeof stackbuf ? stackbuf : malloc(need);
    if (line == NULL)
        return -1;
    size_t k = ctl_encode(line, verb, n, words, lens);
    int rc = write_full(fd, line, k);
    if (line != stackbuf)
        free(line);
    return rc;
}

/* Collects a NULL-terminated word list. */
static int ctl_words(va_list ap, const char **words)
{
    int n = 0;
    for (const char *w; n < CTL_WORDS_MAX && (w = va_arg(ap, const char *));)
        words[n++] = w;
    return n;
}

/* ctl_sendl and ctl_queuel: the words after verb to fd, or else to q. */
static int ctl_words_out(int fd, ctl_outq_t *q, const char *verb, va_list ap)
{
    const char *words[CTL_WORDS_MAX];
    int n = ctl_words(ap, words);
    return q ? ctl_queue(q, verb, n, words, NULL) : ctl_send(fd, verb, n, words, NULL);
}

int ctl_sendl(int fd, const char *verb, ...)
{
    va_list ap;
    va_start(ap, verb);
    int rc = ctl_words_out(fd, NULL, verb, ap);
    va_end(ap);
    return rc;
}

/* Room for need more bytes in q: 0, or -1 when out of memory. */
static int outq_reserve(ctl_outq_t *q, size_t need)
{
    if (q->cap - q->len >= need)
        return 0;
    size_t ncap = q->cap ? q->cap : 4096;
    while (ncap - q->len < need)
        ncap *= 2;
    char *nb = realloc(q->buf, ncap);
    if (nb == NULL)
        return -1;
    q->buf = nb;
    q->cap = ncap;
    return 0;
}

int ctl_queue(ctl_outq_t *q, const char *verb, int n, const char *const *words,
              const size_t *lens)
{
    if (outq_reserve(q, ctl_encoded_max(verb, n, words, lens)) < 0)
        return -1;
    q->len += ctl_encode(q->buf + q->len, verb, n, words, lens);
    return 0;
}

int ctl_queuel(ctl_outq_t *q, const char *verb, ...)
{
    va_list ap;
    va_start(ap, verb);
    int rc = ctl_words_out(-1, q, verb, ap);
    va_end(ap);
    return rc;
}

/* "via NODE " (or nothing), line, newline into out (plen + len + 1 bytes
 * of room, plen from via_prefix): the bytes written. */
static size_t raw_put(char *out, const char *pre, size_t plen, const char *line, size_t len)
{
    memcpy(out, pre, plen);
    memcpy(out + plen, line, len);
    out[plen + len] = '\n';
    return plen + len + 1;
}

int ctl_queue_raw(ctl_outq_t *q, long via, const char *line, size_t len)
{
    char pre[32];
    size_t plen = via_prefix(pre, via);
    if (outq_reserve(q, plen + len + 1) < 0)
        return -1;
    q->len += raw_put(q->buf + q->len, pre, plen, line, len);
    return 0;
}

int ctl_send_raw(int fd, long via, const char *line, size_t len)
{
    /* Every line an inner proxy relays up passes here: no allocation for
     * one of up to 4 KiB (pairs, fences, most lines of output). */
    char pre[32], stackbuf[4096];
    size_t plen = via_prefix(pre, via), need = plen + len + 1;
    char *buf = need <= sizeof stackbuf ? stackbuf : malloc(need);
    if (buf == NULL)
        return -1;
    int rc = write_full(fd, buf, raw_put(buf, pre, plen, line, len));
    if (buf != stackbuf)
        free(buf);
    return rc;
}

int ctl_outq_route(ctl_outq_t *to, long via, ctl_outq_t *from)
{
    size_t off = 0;
    while (off < from->len) {
        char *nl = memchr(from->buf + off, '\n', from->len - off);
        size_t len = nl ? (size_t)(nl - (from->buf + off)) : from->len - off;
        if (ctl_queue_raw(to, via, from->buf + off, len) < 0)
            return -1;
        off += len + 1;
    }
    from->len = 0;
    return 0;
}

int ctl_outq_flush(ctl_outq_t *q, int fd)
{
    size_t off = 0;
    int rc = 0;
    while (off < q->len) {
        ssize_t n = send(fd, q->buf + off, q->len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        rc = -1;  /* the peer is gone: what is queued can never go */
        off = q->len;
    }
    memmove(q->buf, q->buf + off, q->len - off);
    q->len -= off;
    return rc;
}

void ctl_outq_free(ctl_outq_t *q)
{
    free(q->buf);
    q->buf = NULL;
    q->len = q->cap = 0;
}

long ctl_word_long(const ctl_msg_t *m, int i, int *ok)
{
    *ok = 0;
    if (i >= m->nwords || m->lens[i] == 0)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(m->words[i], &end, 10);
    if (errno != 0 || *end != '\0')
        return -1;
    *ok = 1;
    return v;
}

const char *launch_signame(int sig)
{
    static const struct { int sig; const char *name; } names[] = {
        { SIGHUP, "SIGHUP" }, { SIGINT, "SIGINT" }, { SIGQUIT, "SIGQUIT" },
        { SIGILL, "SIGILL" }, { SIGTRAP, "SIGTRAP" }, { SIGABRT, "SIGABRT" },
        { SIGBUS, "SIGBUS" }, { SIGFPE, "SIGFPE" }, { SIGKILL, "SIGKILL" },
        { SIGUSR1, "SIGUSR1" }, { SIGSEGV, "SIGSEGV" }, { SIGUSR2, "SIGUSR2" },
        { SIGPIPE, "SIGPIPE" }, { SIGALRM, "SIGALRM" }, { SIGTERM, "SIGTERM" },
        { SIGCHLD, "SIGCHLD" }, { SIGCONT, "SIGCONT" }, { SIGSTOP, "SIGSTOP" },
        { SIGTSTP, "SIGTSTP" }, { SIGXCPU, "SIGXCPU" }, { SIGXFSZ, "SIGXFSZ" },
        { SIGSYS, "SIGSYS" },
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].sig == sig)
            return names[i].name;
    return "SIG?";
}

double launch_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int launch_startup_report_on(void)
{
    const char *r = locus_tunable_str("LOCUS_STARTUP_REPORT");
    return !strcmp(r, "1") || !strcmp(r, "yes") || !strcmp(r, "json");
}

const char *launch_tmpdir(void)
{
    const char *t = getenv("TMPDIR");
    return t && t[0] == '/' && strlen(t) < 200 ? t : "/tmp";
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

int launch_rmtree(const char *path)
{
    return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The PMIx servers' directories of the job (locusrun --mpi pmix). */
static int pmix_dirs_cleanup(const char *jobid)
{
    char prefix[128];
    int plen = snprintf(prefix, sizeof prefix, "locus-pmix.%s.", jobid);
    DIR *d = opendir(launch_tmpdir());
    if (d == NULL || plen <= 0 || (size_t)plen >= sizeof prefix) {
        if (d)
            closedir(d);
        return 0;
    }
    int removed = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char path[512];
        if (strncmp(e->d_name, prefix, (size_t)plen) != 0 ||
            snprintf(path, sizeof path, "%s/%s", launch_tmpdir(), e->d_name) >= (int)sizeof path)
            continue;
        removed += launch_rmtree(path) == 0;
    }
    closedir(d);
    return removed;
}

int launch_shm_cleanup(const char *jobid)
{
    char prefix[128];
    int plen = snprintf(prefix, sizeof prefix, "locus.%s.", jobid);
    if (plen <= 0 || (size_t)plen >= sizeof prefix || jobid[0] == '\0')
        return 0;
    DIR *d = opendir("/dev/shm");
    if (d == NULL)
        return 0;
    int removed = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strncmp(e->d_name, prefix, (size_t)plen) != 0)
            continue;
        char path[512];
        if (unlinkat(dirfd(d), e->d_name, 0) == 0)
            removed++;
        else if (errno == EISDIR &&
                 snprintf(path, sizeof path, "/dev/shm/%s", e->d_name) < (int)sizeof path &&
                 launch_rmtree(path) == 0)
            removed++; /* a directory: Open MPI's segments under --mpi pmix */
    }
    closedir(d);
    return removed + pmix_dirs_cleanup(jobid);
}
