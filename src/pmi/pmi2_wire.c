/*
 * pmi2_wire.c — PMI-2 framing (see pmi_wire.h): a 6-byte decimal length,
 * then "cmd=<name>;key=val;...;". Both justifications of the length are
 * read (MPICH pads left, Slurm right). Inside a value ";;" stands for one
 * ';' as MPICH's old simple2pmi wrote it; the writer refuses ';' instead,
 * since Slurm does not read the doubled form.
 */
#include "pmi_wire.h"
#include "pmi_wire_priv.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define PMI2_HDR 6

/* Splits "k=v;" at s[*pos] in place; ";;" in a value is one ';'. */
static int pmi2_token_take(char *s, size_t len, size_t *pos, const char **key,
                           const char **val)
{
    size_t i = *pos;
    char *out = s + i, *k = out, *v = NULL;
    size_t klen = 0, vlen = 0;
    for (;;) {
        if (i >= len)
            return PMI_WIRE_EMALFORMED; /* every token ends with ';' */
        char c = s[i];
        if (c == ';') {
            if (v != NULL && i + 1 < len && s[i + 1] == ';') {
                i++; /* escaped ';' inside a value */
            } else {
                i++;
                break;
            }
        } else if (c == '=' && v == NULL) {
            *out++ = '\0';
            v = out;
            i++;
            continue;
        } else if (c == '\0' || c == '\n') {
            return PMI_WIRE_EMALFORMED;
        }
        *out++ = c;
        i++;
        if (pmi_wire_count(v != NULL, &klen, &vlen) != PMI_WIRE_OK)
            return PMI_WIRE_ETOOLONG;
    }
    if (klen == 0 || v == NULL)
        return PMI_WIRE_EMALFORMED;
    *out = '\0';
    *key = k;
    *val = v;
    *pos = i;
    return PMI_WIRE_OK;
}

int pmi2_msg_parse(pmi_msg_t *msg, const char *body, size_t len)
{
    if (msg == NULL || body == NULL)
        return PMI_WIRE_EMALFORMED;
    if (len > PMI_WIRE_LINE_MAX)
        return PMI_WIRE_ETOOLONG;
    memcpy(msg->storage, body, len);
    msg->storage[len] = '\0';
    msg->cmd = NULL;
    msg->ntokens = 0;
    if (len < 5 || memcmp(body, "cmd=", 4) != 0)
        return PMI_WIRE_EMALFORMED;
    size_t pos = 0;
    const char *key, *val;
    int rc = pmi2_token_take(msg->storage, len, &pos, &key, &val);
    if (rc != PMI_WIRE_OK)
        return rc;
    if (val[0] == '\0')
        return PMI_WIRE_EMALFORMED;
    msg->cmd = val;
    while (pos < len) {
        rc = pmi2_token_take(msg->storage, len, &pos, &key, &val);
        if (rc != PMI_WIRE_OK || (rc = pmi_wire_add_token(msg, key, val)) != PMI_WIRE_OK)
            return rc;
    }
    return PMI_WIRE_OK;
}

static int pmi2_put(char *out, size_t cap, size_t *n, const char *s, size_t maxlen, int is_key)
{
    size_t used = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == ';' || *p == '\n' || (is_key && *p == '='))
            return PMI_WIRE_EMALFORMED;
        if (++used > maxlen || *n + 1 >= cap)
            return PMI_WIRE_ETOOLONG;
        out[(*n)++] = (char)*p;
    }
    return is_key && used == 0 ? PMI_WIRE_EMALFORMED : PMI_WIRE_OK;
}

int pmi2_msg_format(char *out, size_t cap, const char *cmd, ...)
{
    if (out == NULL || cmd == NULL)
        return PMI_WIRE_EMALFORMED;
    size_t limit = cap < PMI_WIRE_LINE_MAX + PMI2_HDR + 1 ? cap : PMI_WIRE_LINE_MAX + PMI2_HDR + 1;
    if (limit < PMI2_HDR + 6)
        return PMI_WIRE_ETOOLONG;
    static const pmi_wire_style_t v2 = { pmi2_put, ';', 1, 0 };
    size_t n = PMI2_HDR;
    va_list ap;
    va_start(ap, cmd);
    int rc = pmi_wire_tokens(out, limit, &n, &v2, cmd, ap);
    va_end(ap);
    if (rc != PMI_WIRE_OK) {
        out[0] = '\0';
        return rc;
    }
    char hdr[PMI2_HDR + 1];
    snprintf(hdr, sizeof hdr, "%-6zu", n - PMI2_HDR);
    memcpy(out, hdr, PMI2_HDR);
    out[n] = '\0';
    return (int)n;
}

/* The body length in the 6-byte header, or -1 when it is not a number
 * padded with blanks on either side. */
static long pmi2_header_len(const char *h)
{
    long v = 0;
    int digits = 0, after = 0;
    for (int i = 0; i < PMI2_HDR; i++) {
        if (h[i] == ' ') {
            after = digits > 0;
            continue;
        }
        if (h[i] < '0' || h[i] > '9' || after)
            return -1;
        v = v * 10 + (h[i] - '0');
        digits++;
    }
    return digits ? v : -1;
}

int pmi2_reader_next(pmi_reader_t *r, pmi_msg_t *msg)
{
    if (r->len < PMI2_HDR)
        return PMI_WIRE_EAGAIN;
    long n = pmi2_header_len(r->buf);
    if (n < 0) {
        r->len = 0; /* no way to find the next frame: drop what is buffered */
        return PMI_WIRE_EMALFORMED;
    }
    if (n > PMI_WIRE_LINE_MAX) {
        r->len = 0;
        return PMI_WIRE_ETOOLONG;
    }
    if (r->len < PMI2_HDR + (size_t)n)
        return PMI_WIRE_EAGAIN;
    int rc = pmi2_msg_parse(msg, r->buf + PMI2_HDR, (size_t)n);
    memmove(r->buf, r->buf + PMI2_HDR + n, r->len - PMI2_HDR - (size_t)n);
    r->len -= PMI2_HDR + (size_t)n;
    return rc;
}
