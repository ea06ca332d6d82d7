/*
 * dyn_test.h — what the dyn transport's tests share: a fake core that
 * checks every message it is given, messages of known content, and a raw
 * dialler that speaks the wire by hand (strangers, hellos in pieces,
 * malformed frames).
 */
#ifndef DYN_TEST_H
#define DYN_TEST_H

#include <stddef.h>
#include <stdint.h>

#include "locus_dyn.h"

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, dt_who);           \
            fprintf(stderr, __VA_ARGS__);                                         \
            fputc('\n', stderr);                                                  \
            dt_failures++;                                                        \
        }                                                                         \
    } while (0)

extern int dt_failures;
extern const char *dt_who;   /* which process speaks, in failure lines */

#define DT_MAX_IDS 16

/* The core a test's transport talks to: ids from 1 (the test's "world" is
 * size 1), each source's messages checked on arrival. */
typedef struct {
    locus_tp_t *tp;
    int next_id;
    uint32_t count[DT_MAX_IDS];   /* messages delivered per source */
    int bad;                      /* messages that failed a check */
} dt_core_t;

/* init for locus_tp_dyn_create, wired to core. */
void dt_core_init(dt_core_t *core, locus_tp_init_t *init);

/* Message i of a stream: its size, header (16 to 48 bytes) and payload. */
size_t dt_size(uint32_t i);
size_t dt_hdr(uint32_t i, uint8_t *hdr);
void dt_fill(uint32_t i, uint8_t *buf, size_t len);

/* Sends message i to id through tp; the transport's return code. */
int dt_send(locus_tp_t *tp, int id, uint32_t i);

/* Calls progress until done(arg) or ms passed; -1 when progress failed
 * (its return), 0 when done, 1 on timeout. */
int dt_pump(locus_tp_t *tp, int ms, int (*done)(void *), void *arg);

/* ---- the wire by hand ---- */

/* A blocking connection to 127.0.0.1 at the port of card; -1 on failure. */
int dt_raw_dial(const char *card);
/* The cookie (33 bytes with NUL) and port of a card; -1 if malformed. */
int dt_card_split(const char *card, char *cookie, int *port);
/* A hello as the transport writes it; its length. */
size_t dt_hello(uint8_t *buf, const char *cookie, locus_dyn_name_t name, const char *card);
/* Frame of message i (head, header, payload), malloc'ed; its length in *len. */
uint8_t *dt_frame(uint32_t i, size_t *len);
/* Writes all of buf, in pieces of 1..maxpiece bytes with a pause between
 * pieces while the first `slow` bytes go. 0, or -1. */
int dt_write_pieces(int fd, const uint8_t *buf, size_t len, size_t maxpiece, size_t slow);
/* Waits up to ms for fd to be closed by the other side: 1 closed, 0 not. */
int dt_wait_closed(int fd, int ms);

#endif
