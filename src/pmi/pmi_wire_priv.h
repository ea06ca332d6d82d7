/* Internal to src/pmi: what the PMI-1 and PMI-2 codecs share. */
#ifndef PMI_WIRE_PRIV_H
#define PMI_WIRE_PRIV_H
#include "pmi_wire.h"

#include <stdarg.h>
#include <stddef.h>

/* Counts one more byte of a token's key (in_value 0) or value against the
 * limits: PMI_WIRE_OK, or PMI_WIRE_ETOOLONG. */
int pmi_wire_count(int in_value, size_t *klen, size_t *vlen);

/* Appends a parsed token to msg: PMI_WIRE_OK, or PMI_WIRE_ETOOMANY. */
int pmi_wire_add_token(pmi_msg_t *msg, const char *key, const char *val);

/* How one version writes tokens: put appends a key or value (escaping as
 * the version does, refusing bytes it cannot carry, within maxlen and
 * cap); sep goes before each key=val (PMI-1: ' ') or after each token,
 * "cmd=" included (PMI-2: ';'); bare_key: a NULL value writes the key
 * alone (PMI-1) instead of "key=". */
typedef struct {
    int (*put)(char *out, size_t cap, size_t *n, const char *s, size_t maxlen, int is_key);
    char sep;
    int sep_after;
    int bare_key;
} pmi_wire_style_t;

/* Writes "cmd=<cmd>" and the (key, value) pairs of ap up to a NULL key at
 * out[*n], within cap bytes: PMI_WIRE_OK or the first error. */
int pmi_wire_tokens(char *out, size_t cap, size_t *n, const pmi_wire_style_t *st,
                    const char *cmd, va_list ap);

/* Appends c: PMI_WIRE_OK, or PMI_WIRE_ETOOLONG. */
int pmi_wire_char(char *out, size_t cap, size_t *n, char c);
#endif
