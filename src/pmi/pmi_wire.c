/*
 * pmi_wire.c — PMI-1 line codec (see pmi_wire.h for the contract).
 *
 * Parsing follows MPICH's parse_v1: the line must start with "cmd=", tokens
 * are separated by blanks, the first '=' splits key from value and '\'
 * escapes the next byte. The writer escapes '\' so that anything it emits
 * parses back to the same bytes. Every length is checked before a byte is
 * copied, so hostile input can only produce an error code.
 */
#include "pmi_wire.h"
#include "pmi_wire_priv.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* Token bytes are printable ASCII without the blank (33..126). */
static int is_token_byte(unsigned char c)
{
    return c >= 33 && c <= 126;
}

int pmi_wire_add_token(pmi_msg_t *msg, const char *key, const char *val)
{
    if (msg->ntokens == PMI_WIRE_TOKENS_MAX)
        return PMI_WIRE_ETOOMANY;
    msg->tokens[msg->ntokens].key = key;
    msg->tokens[msg->ntokens].val = val;
    msg->ntokens++;
    return PMI_WIRE_OK;
}

int pmi_wire_count(int in_value, size_t *klen, size_t *vlen)
{
    if (in_value)
        return ++*vlen > PMI_WIRE_VALLEN_MAX ? PMI_WIRE_ETOOLONG : PMI_WIRE_OK;
    return ++*klen > PMI_WIRE_KEYLEN_MAX ? PMI_WIRE_ETOOLONG : PMI_WIRE_OK;
}

/*
 * Splits one token at *pos (in place, in msg->storage) into key and value,
 * resolving escapes. Returns PMI_WIRE_OK and advances *pos past the token.
 */
static int token_take(char *s, size_t len, size_t *pos, const char **key,
                      const char **val)
{
    size_t i = *pos;
    char *out = s + i;   /* unescaped bytes are written behind the reader */
    char *k = out;
    char *v = NULL;
    size_t klen = 0, vlen = 0;

    while (i < len && !is_blank(s[i])) {
        unsigned char c = (unsigned char)s[i];
        if (!is_token_byte(c))
            return PMI_WIRE_EMALFORMED;
        if (c == '=' && v == NULL) {
            *out++ = '\0';
            v = out;
            i++;
            continue;
        }
        if (c == '\\') {
            if (i + 1 >= len || !is_token_byte((unsigned char)s[i + 1]))
                return PMI_WIRE_EMALFORMED;
            i++;
            c = (unsigned char)s[i];
            /* An escaped '=' would put '=' inside a key, which no writer
             * can reproduce; refuse it rather than mis-split later. */
            if (c == '=' && v == NULL)
                return PMI_WIRE_EMALFORMED;
        }
        *out++ = (char)c;
        i++;
        if (pmi_wire_count(v != NULL, &klen, &vlen) != PMI_WIRE_OK)
            return PMI_WIRE_ETOOLONG;
    }
    if (klen == 0)
        return PMI_WIRE_EMALFORMED;
    /* `out` never passes the separator it stopped at (escapes only shrink),
     * so terminating here cannot clobber the next token. */
    if (i < len) {
        s[i] = '\0';
        i++;
    }
    *out = '\0';
    *key = k;
    *val = v ? v : out;  /* bare key: the empty string just written */
    *pos = i;
    return PMI_WIRE_OK;
}

int pmi_msg_parse(pmi_msg_t *msg, const char *line, size_t len)
{
    if (msg == NULL || line == NULL)
        return PMI_WIRE_EMALFORMED;
    if (len > 0 && line[len - 1] == '\n')
        len--;
    if (len > PMI_WIRE_LINE_MAX)
        return PMI_WIRE_ETOOLONG;
    if (memchr(line, '\n', len) != NULL || memchr(line, '\0', len) != NULL)
        return PMI_WIRE_EMALFORMED;
    memcpy(msg->storage, line, len);
    msg->storage[len] = '\0';
    msg->cmd = NULL;
    msg->ntokens = 0;

    char *s = msg->storage;
    size_t pos = 0;
    while (pos < len && is_blank(s[pos]))
        pos++;
    if (len - pos < 4 || memcmp(s + pos, "cmd=", 4) != 0)
        return PMI_WIRE_EMALFORMED;

    const char *key, *val;
    int rc = token_take(s, len, &pos, &key, &val);
    if (rc != PMI_WIRE_OK)
        return rc;
    if (val[0] == '\0' || strchr(val, '=') != NULL)
        return PMI_WIRE_EMALFORMED;
    if (strlen(val) > PMI_WIRE_KEYLEN_MAX)
        return PMI_WIRE_ETOOLONG;
    msg->cmd = val;

    for (;;) {
        while (pos < len && is_blank(s[pos]))
            pos++;
        if (pos >= len)
            break;
        rc = token_take(s, len, &pos, &key, &val);
        if (rc != PMI_WIRE_OK || (rc = pmi_wire_add_token(msg, key, val)) != PMI_WIRE_OK)
            return rc;
    }
    return PMI_WIRE_OK;
}

const char *pmi_msg_get(const pmi_msg_t *msg, const char *key)
{
    if (msg == NULL || key == NULL)
        return NULL;
    for (int i = 0; i < msg->ntokens && i < PMI_WIRE_TOKENS_MAX; i++)
        if (strcmp(msg->tokens[i].key, key) == 0)
            return msg->tokens[i].val;
    return NULL;
}

/* Appends s to out, escaping '\'. Fails on bytes a token cannot carry. */
static int format_put(char *out, size_t cap, size_t *n, const char *s,
                      size_t maxlen, int is_key)
{
    size_t used = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (!is_token_byte(*p) || (is_key && *p == '='))
            return PMI_WIRE_EMALFORMED;
        if (++used > maxlen)
            return PMI_WIRE_ETOOLONG;
        size_t need = (*p == '\\') ? 2 : 1;
        if (*n + need >= cap)
            return PMI_WIRE_ETOOLONG;
        if (*p == '\\')
            out[(*n)++] = '\\';
        out[(*n)++] = (char)*p;
    }
    if (is_key && used == 0)
        return PMI_WIRE_EMALFORMED;
    return PMI_WIRE_OK;
}

int pmi_wire_char(char *out, size_t cap, size_t *n, char c)
{
    if (*n + 1 >= cap)
        return PMI_WIRE_ETOOLONG;
    out[(*n)++] = c;
    return PMI_WIRE_OK;
}

int pmi_wire_tokens(char *out, size_t cap, size_t *n, const pmi_wire_style_t *st,
                    const char *cmd, va_list ap)
{
    if (*n + 4 >= cap)
        return PMI_WIRE_ETOOLONG;
    memcpy(out + *n, "cmd=", 4);
    *n += 4;
    int rc = st->put(out, cap, n, cmd, PMI_WIRE_KEYLEN_MAX, 1);
    if (rc == PMI_WIRE_OK && st->sep_after)
        rc = pmi_wire_char(out, cap, n, st->sep);
    for (int ntok = 0; rc == PMI_WIRE_OK;) {
        const char *key = va_arg(ap, const char *);
        if (key == NULL)
            break;
        const char *val = va_arg(ap, const char *);
        if (++ntok > PMI_WIRE_TOKENS_MAX)
            return PMI_WIRE_ETOOMANY;
        if (!st->sep_after)
            rc = pmi_wire_char(out, cap, n, st->sep);
        if (rc == PMI_WIRE_OK)
            rc = st->put(out, cap, n, key, PMI_WIRE_KEYLEN_MAX, 1);
        if (rc == PMI_WIRE_OK && (val != NULL || !st->bare_key)) {
            rc = pmi_wire_char(out, cap, n, '=');
            if (rc == PMI_WIRE_OK)
                rc = st->put(out, cap, n, val ? val : "", PMI_WIRE_VALLEN_MAX, 0);
        }
        if (rc == PMI_WIRE_OK && st->sep_after)
            rc = pmi_wire_char(out, cap, n, st->sep);
    }
    return rc;
}

int pmi_msg_format(char *out, size_t cap, const char *cmd, ...)
{
    static const pmi_wire_style_t v1 = { format_put, ' ', 0, 1 };
    if (out == NULL || cap == 0 || cmd == NULL)
        return PMI_WIRE_EMALFORMED;
    size_t n = 0;
    size_t limit = cap < PMI_WIRE_LINE_MAX + 2 ? cap : PMI_WIRE_LINE_MAX + 2;
    out[0] = '\0';
    if (limit < 5)
        return PMI_WIRE_ETOOLONG;
    va_list ap;
    va_start(ap, cmd);
    int rc = pmi_wire_tokens(out, limit, &n, &v1, cmd, ap);
    va_end(ap);
    if (rc == PMI_WIRE_OK)
        rc = pmi_wire_char(out, limit, &n, '\n');
    if (rc != PMI_WIRE_OK) {
        out[0] = '\0';
        return rc;
    }
    out[n] = '\0';
    return (int)n;
}

void pmi_reader_init(pmi_reader_t *r, int fd)
{
    r->fd = fd;
    r->len = 0;
    r->discarding = 0;
    r->v2 = 0;
}

int pmi_reader_fill(pmi_reader_t *r)
{
    size_t space = sizeof r->buf - r->len;
    if (space == 0)
        return PMI_WIRE_ETOOLONG;  /* caller must drain with pmi_reader_next */
    for (;;) {
        ssize_t got = read(r->fd, r->buf + r->len, space);
        if (got > 0) {
            r->len += (size_t)got;
            return (int)got;
        }
        if (got == 0)
            return PMI_WIRE_EOF;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return PMI_WIRE_EAGAIN;
        if (errno == ECONNRESET)
            return PMI_WIRE_EOF;
        return PMI_WIRE_EIO;
    }
}

static void reader_consume(pmi_reader_t *r, size_t n)
{
    memmove(r->buf, r->buf + n, r->len - n);
    r->len -= n;
}

int pmi_reader_next(pmi_reader_t *r, pmi_msg_t *msg)
{
    if (r->v2)
        return pmi2_reader_next(r, msg);
    char *nl = memchr(r->buf, '\n', r->len);
    if (nl == NULL) {
        if (r->discarding) {
            r->len = 0;
            return PMI_WIRE_EAGAIN;
        }
        if (r->len > PMI_WIRE_LINE_MAX) {
            /* Report the overlong line once, then drop its bytes as they
             * come until its newline, so the stream resynchronises. */
            r->len = 0;
            r->discarding = 1;
            return PMI_WIRE_ETOOLONG;
        }
        return PMI_WIRE_EAGAIN;
    }
    size_t linelen = (size_t)(nl - r->buf);
    if (r->discarding) {
        r->discarding = 0;
        reader_consume(r, linelen + 1);
        return pmi_reader_next(r, msg);
    }
    int rc = linelen > PMI_WIRE_LINE_MAX ? PMI_WIRE_ETOOLONG
                                         : pmi_msg_parse(msg, r->buf, linelen);
    reader_consume(r, linelen + 1);
    return rc;
}

int pmi_reader_wait(pmi_reader_t *r, pmi_msg_t *msg)
{
    for (;;) {
        int rc = pmi_reader_next(r, msg);
        if (rc != PMI_WIRE_EAGAIN)
            return rc;
        rc = pmi_reader_fill(r);
        if (rc == PMI_WIRE_EAGAIN) {
            struct pollfd p = { .fd = r->fd, .events = POLLIN };
            if (poll(&p, 1, -1) < 0 && errno != EINTR)
                return PMI_WIRE_EIO;
            continue;
        }
        if (rc < 0)
            return rc;
    }
}

int pmi_write_all(int fd, const char *buf, size_t len)
{
    int use_send = 1;
    while (len > 0) {
        /* send(MSG_NOSIGNAL) so a vanished peer is an error, not SIGPIPE. */
        ssize_t n = use_send ? send(fd, buf, len, MSG_NOSIGNAL)
                             : write(fd, buf, len);
        if (n < 0 && use_send && errno == ENOTSOCK) {
            use_send = 0;
            continue;
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                struct pollfd p = { .fd = fd, .events = POLLOUT };
                if (poll(&p, 1, 1000) < 0 && errno != EINTR)
                    return PMI_WIRE_EIO;
                continue;
            }
            return PMI_WIRE_EIO;
        }
        buf += n;
        len -= (size_t)n;
    }
    return PMI_WIRE_OK;
}

const char *pmi_wire_strerror(int code)
{
    switch (code) {
    case PMI_WIRE_OK: return "ok";
    case PMI_WIRE_EMALFORMED: return "malformed message";
    case PMI_WIRE_ETOOLONG: return "message, key or value too long";
    case PMI_WIRE_ETOOMANY: return "too many tokens";
    case PMI_WIRE_EIO: return "I/O error";
    case PMI_WIRE_EOF: return "connection closed";
    case PMI_WIRE_EAGAIN: return "no complete message yet";
    default: return "unknown PMI wire error";
    }
}

int pmi_wire_node_key(const char *key)
{
    return strncmp(key, PMI_WIRE_NODE_KEY, sizeof PMI_WIRE_NODE_KEY - 1) == 0;
}
