/*
 * pmi_wire.h — the PMI-1 wire codec, shared by the proxy (server side, in
 * locusrun) and the MPI library's PMI client (src/boot).
 *
 * A PMI-1 message is one line: "cmd=<name>" then space-separated key=value
 * tokens, ended by '\n'. Limits follow Hydra's: keys up to 64 bytes, values
 * up to 1024, kvs names up to 256. Values are ASCII 33..126 (no spaces).
 *
 * PMI-2 frames (pmi2_*) carry the same messages: a 6-byte decimal length,
 * then "cmd=<name>;key=val;...;". They parse into the same pmi_msg_t.
 *
 * Nothing here does I/O except pmi_reader_fill()/pmi_write_all(); nothing
 * allocates. Every function that can fail returns a negative PMI_WIRE_E*
 * code and never crashes on hostile input.
 */
#ifndef PMI_WIRE_H
#define PMI_WIRE_H

#include <stddef.h>

#define PMI_WIRE_KEYLEN_MAX   64
#define PMI_WIRE_VALLEN_MAX   1024
#define PMI_WIRE_KVSNAME_MAX  256
#define PMI_WIRE_LINE_MAX     (PMI_WIRE_VALLEN_MAX + PMI_WIRE_KVSNAME_MAX + 256)
#define PMI_WIRE_TOKENS_MAX   16

/* PMI-1 keys that begin with this are node-scoped: locusrun's proxy keeps
 * them for its node's ranks and never relays them at a fence (Locus's
 * convention; Hydra treats them as any key). The transports' name for it
 * is LOCUS_TP_NODE_KEY, the same string. */
#define PMI_WIRE_NODE_KEY "locus.node."

/* 1 when key is node-scoped (begins with PMI_WIRE_NODE_KEY). */
int pmi_wire_node_key(const char *key);

enum {
    PMI_WIRE_OK = 0,
    PMI_WIRE_EMALFORMED = -1, /* not "cmd=..." or a bad token */
    PMI_WIRE_ETOOLONG = -2,   /* line, key or value over the limits */
    PMI_WIRE_ETOOMANY = -3,   /* more than PMI_WIRE_TOKENS_MAX tokens */
    PMI_WIRE_EIO = -4,        /* read/write failed */
    PMI_WIRE_EOF = -5,        /* peer closed the connection */
    PMI_WIRE_EAGAIN = -6      /* no complete line buffered yet */
};

typedef struct {
    const char *key;
    const char *val;          /* "" for a bare key */
} pmi_token_t;

/* A parsed message. Keys and values point into `storage`. */
typedef struct {
    const char *cmd;
    int ntokens;
    pmi_token_t tokens[PMI_WIRE_TOKENS_MAX];
    char storage[PMI_WIRE_LINE_MAX + 1];
} pmi_msg_t;

/* Parses one line (with or without its '\n'). Returns PMI_WIRE_OK or a
 * negative code; on error *msg is unspecified. */
int pmi_msg_parse(pmi_msg_t *msg, const char *line, size_t len);

/* Value of `key` in msg, or NULL when absent. */
const char *pmi_msg_get(const pmi_msg_t *msg, const char *key);

/*
 * Formats "cmd=<cmd> k1=v1 k2=v2 ...\n" into out from a NULL-terminated
 * list of key, value string pairs (a NULL value writes a bare key; '\' is
 * escaped so the line parses back to the same bytes). Returns the length
 * written (without NUL), or PMI_WIRE_ETOOLONG / PMI_WIRE_EMALFORMED (a
 * value with a space, newline or non-printable byte), or
 * PMI_WIRE_ETOOMANY.
 */
int pmi_msg_format(char *out, size_t cap, const char *cmd, ...);

/* Buffered line reader over a stream socket. */
typedef struct {
    int fd;
    size_t len;
    int discarding;           /* inside an overlong line: drop to its '\n' */
    int v2;                   /* PMI-2 framing (set after the PMI-1 "init") */
    char buf[2 * PMI_WIRE_LINE_MAX];
} pmi_reader_t;

void pmi_reader_init(pmi_reader_t *r, int fd);

/* Reads what is available (one read(2) call). Returns bytes read (>0),
 * PMI_WIRE_EOF, PMI_WIRE_EAGAIN (EAGAIN on a non-blocking fd) or
 * PMI_WIRE_EIO (PMI_WIRE_ETOOLONG if the buffer is full: drain it with
 * pmi_reader_next() first, which always leaves room). */
int pmi_reader_fill(pmi_reader_t *r);

/* Takes the next complete line out of the buffer and parses it into msg.
 * Returns PMI_WIRE_OK, PMI_WIRE_EAGAIN when no full line is buffered, or a
 * parse error (the bad line is consumed). A line longer than
 * PMI_WIRE_LINE_MAX gives PMI_WIRE_ETOOLONG and is discarded. */
int pmi_reader_next(pmi_reader_t *r, pmi_msg_t *msg);

/* Blocking: fill until a message is parsed. */
int pmi_reader_wait(pmi_reader_t *r, pmi_msg_t *msg);

/* PMI-2: parses one frame's body (after the 6-byte length) into msg. */
int pmi2_msg_parse(pmi_msg_t *msg, const char *body, size_t len);

/* PMI-2: formats the 6-byte length and "cmd=<cmd>;k1=v1;...;" from a
 * NULL-terminated key, value list (a NULL value is written empty).
 * Returns the whole frame's length, or PMI_WIRE_EMALFORMED (a ';' or
 * newline in a key or value, '=' in a key), ETOOLONG or ETOOMANY. */
int pmi2_msg_format(char *out, size_t cap, const char *cmd, ...);

/* PMI-2: pmi_reader_next for frames (pmi_reader_next calls it when
 * r->v2 is set). A header that is not a number loses the buffered bytes
 * and gives PMI_WIRE_EMALFORMED. */
int pmi2_reader_next(pmi_reader_t *r, pmi_msg_t *msg);

/* write(2) until all of buf is written (retries EINTR). */
int pmi_write_all(int fd, const char *buf, size_t len);

/* Short name of a PMI_WIRE_E* code. */
const char *pmi_wire_strerror(int code);

#endif
