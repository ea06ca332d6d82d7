/*
 * dyn_tp.h — the dyn transport's insides, shared by its files: the peer
 * table, incoming connections, output buffers, cards and the wire.
 */
#ifndef DYN_TP_H
#define DYN_TP_H

#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>

#include "locus_clock.h"
#include "locus_dyn.h"

#define DYN_MAGIC "LDYN1"
#define DYN_MAGIC_LEN 5
#define DYN_COOKIE_HEX 32    /* 16 random bytes */
#define DYN_MAX_ADDRS 12     /* what fits in a card */
#define DYN_ADDR_STR 24      /* "255.255.255.255:65535" */
#define DYN_FRAME_HEAD 12    /* uint32 hdrlen, uint64 len */
/* Hello: magic, u16 cookie length, cookie, u64 job, i32 rank, u16 card
 * length, card (no NUL). A longer one is no hello of ours. */
#define DYN_HELLO_MAX (DYN_MAGIC_LEN + 2 + DYN_COOKIE_HEX + 12 + 2 + LOCUS_DYN_CARD_MAX)
#define DYN_RBUF (64 * 1024) /* per incoming connection; larger messages get their own */

/* A card taken apart. */
typedef struct {
    char cookie[DYN_COOKIE_HEX + 1];
    uint16_t port;
    int naddr;
    struct in_addr addr[DYN_MAX_ADDRS];
} dyn_card_t;

/* Bytes queued for a socket: [off, len) of buf are still to be written. */
typedef struct {
    uint8_t *buf;
    size_t off, len, cap;
} dyn_buf_t;

/* A process we may send to, and that may send to us. */
typedef struct {
    int id;                         /* the core's peer id */
    locus_dyn_name_t name;
    char card[LOCUS_DYN_CARD_MAX];
    dyn_card_t where;
    int fd;                         /* our connection to its listener; -1: not dialled */
    char addr[DYN_ADDR_STR];        /* the address fd reached */
    dyn_buf_t out;
    char *lost;                     /* why its connection died (sends then fail), or NULL */
} dyn_peer_t;

typedef enum { DYN_IN_HELLO, DYN_IN_HEAD, DYN_IN_BODY } dyn_in_state_t;

/* A connection some process dialled to our listener: it only reads. */
typedef struct {
    int fd;
    dyn_in_state_t state;
    dyn_peer_t *peer;               /* who, once its hello was read */
    char addr[DYN_ADDR_STR];        /* where it came from */
    uint64_t hello_by_ns;           /* closed when still silent then */
    uint8_t *rbuf;                  /* DYN_RBUF bytes; [roff, rlen) unparsed */
    size_t roff, rlen;
    uint32_t hdrlen;                /* the message being read (DYN_IN_BODY) */
    uint64_t len;
    uint8_t *body;                  /* its own buffer, once it outgrew rbuf */
    size_t got;
    int dead;                       /* closed; freed at the end of the round */
} dyn_in_t;

typedef struct {
    locus_tp_t base;
    const locus_tp_upcalls_t *up;
    void *core;
    locus_dyn_name_t me;
    long connect_ms, flush_ms;
    char cookie[DYN_COOKIE_HEX + 1];
    int lfd;                        /* listener; -1 until the first card */
    uint16_t port;                  /* its port */
    char card[LOCUS_DYN_CARD_MAX];
    dyn_peer_t **peers;             /* ascending id */
    int npeers, cap_peers;
    int nout;                       /* peers with an open fd */
    size_t out_bytes;               /* queued over all peers */
    dyn_in_t **ins;
    int nins, cap_ins;
    struct pollfd *pfd;             /* progress()'s scratch, and what each entry is */
    void **pown;
    int cap_pfd;
    uint64_t last_poll_ns;
    int failed;                     /* progress() failed for good; err says why */
    char err[512];
} dyn_tp_t;

/* dyn_create.c */
void dyn_fail(dyn_tp_t *tp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
dyn_peer_t *dyn_peer_by_id(const dyn_tp_t *tp, int id);
dyn_peer_t *dyn_peer_by_name(const dyn_tp_t *tp, locus_dyn_name_t name);
/* A new peer (add_peer upcall) with a card already checked; NULL: out of memory. */
dyn_peer_t *dyn_peer_add(dyn_tp_t *tp, locus_dyn_name_t name, const char *card,
                         const dyn_card_t *where);

/* dyn_card.c */
int dyn_card_parse(const char *s, dyn_card_t *c);
int dyn_listen(dyn_tp_t *tp, char *err, size_t errlen);

/* dyn_out.c */
/* Writes what is queued to p until the socket is full. 1: wrote some, 0:
 * nothing, -1: the connection failed (err says why). */
int dyn_flush(dyn_tp_t *tp, dyn_peer_t *p, char *err, size_t errlen);
/* Closes p's connection quietly (it went away with nothing owed). */
void dyn_out_close(dyn_tp_t *tp, dyn_peer_t *p);
/* Closes p's connection for good, dropping its queue; later sends to p
 * fail. Returns the line saying so ("dyn: connection to job J rank R
 * (addr) lost: why"). */
const char *dyn_peer_lost(dyn_tp_t *tp, dyn_peer_t *p, const char *why);
/* Dials p unless connected (blocking, within connect_ms) and queues the
 * hello. 0, or -1 with the addresses tried and their answers in err. */
int dyn_dial(dyn_tp_t *tp, dyn_peer_t *p, char *err, size_t errlen);
int dyn_send(locus_tp_t *tp, int dst, const void *hdr, size_t hdrlen, const void *data,
             size_t len, void *send_ctx);

/* dyn_in.c */
int dyn_accept(dyn_tp_t *tp);
/* Reads what c has; returns events (messages delivered, hello read), or -1
 * on a fatal error (tp->err says why). */
int dyn_in_read(dyn_tp_t *tp, dyn_in_t *c);
void dyn_in_close(dyn_tp_t *tp, dyn_in_t *c);
void dyn_in_free(dyn_in_t *c);

/* dyn_progress.c */
int dyn_progress(locus_tp_t *tp);
/* finalize(): writes what is queued, within flush_ms, reading (and
 * dropping) what comes in meanwhile so that two peers flushing to each
 * other cannot both stall on full sockets. */
void dyn_drain(dyn_tp_t *tp);

#endif
