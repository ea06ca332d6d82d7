/*
 * tcp.h — what the TCP transport shows beyond locus_transport.h: counters
 * for tests and benchmarks, and the address card codec (so tests can feed
 * it bad input). Constructed with locus_tp_tcp_create().
 */
#ifndef TCP_H
#define TCP_H

#include "locus_transport.h"
#include "tp_qos.h"

#include <netinet/in.h>
#include <stdint.h>

#define TCP_MAX_RAILS 8

typedef struct {
    uint64_t eager_sent;          /* messages sent in one frame */
    uint64_t rndv_sent;           /* large messages announced (RTS) */
    uint64_t rndv_recv;           /* large messages received */
    uint64_t chunks_sent;         /* DATA frames, all rails */
    uint64_t again;               /* sends answered LOCUS_TP_AGAIN */
    uint64_t dials, accepts;      /* connections started / accepted */
    uint64_t lost_races;          /* own dials dropped: both sides dialled at once */
    uint64_t fallbacks;           /* rails connected through any route */
    uint64_t rejected;            /* incoming connections refused (bad hello, after the key) */
    uint64_t auth_refused;        /* incoming connections that did not prove the job key:
                                     a forged hello, a wrong answer, another job's key */
    uint64_t auth_timeouts;       /* closed silent: no proof within LOCUS_AUTH_TIMEOUT_MS */
    uint64_t auth_evicted;        /* unproven, closed for a newer one (LOCUS_AUTH_PENDING_MAX) */
    uint64_t accept_errors;       /* accept() short of descriptors or memory: rails rested */
    uint64_t redials;             /* our dials closed before the peer's proof, dialled again */
    uint64_t waits;               /* wait() calls that slept */
    uint64_t bytes_out[TCP_MAX_RAILS]; /* payload + frame bytes written per rail */
    uint64_t bytes_in[TCP_MAX_RAILS];
    int nrails;
    uint64_t eager_max;
    uint64_t queued_max;          /* most bytes ever queued for one peer */
    /* traffic classes (LOCUS_QOS), indexed normal, latency, bulk */
    int qos;                      /* 0 off, 1 static, 2 adaptive */
    uint64_t cls_frames[3];       /* frames sent per class (DATA: per message) */
    uint64_t cls_bytes[3];        /* bytes sent per class */
    tp_qos_count_t adaptive;      /* adaptive: raises, refusals, probes, congestion */
    uint64_t held;                /* message frames that came ahead of their turn */
    uint64_t held_max;            /* most held at once for one peer */
    /* rail failover (pairs with several rails) */
    uint64_t failovers;           /* connections given up for the other rails (per lane) */
    uint64_t stalls;              /* of those, found stalled (no acknowledgement) */
    uint64_t restored;            /* lanes open again after a failover */
    uint64_t resent;              /* frames sent again on another lane */
    uint64_t acks;                /* ACK frames sent (most acknowledgements ride on frames) */
} tcp_stats_t;

/* Copies the counters of a transport made by locus_tp_tcp_create(). */
void tcp_tp_stats(const locus_tp_t *tp, tcp_stats_t *out);

/* The marks on this rank's connection to peer for class cls (0 normal,
 * 1 latency, 2 bulk) on rail 0, read back from the socket: IP_TOS and
 * SO_PRIORITY. Returns 0, or -1 when that connection is not open. */
int tcp_tp_lane_marks(const locus_tp_t *tp, int peer, int cls, int *tos, int *prio);

/* For tests: resets (RST) this rank's connections to peer on rail `rail`,
 * as a failed network would, and handles it as the transport handles a
 * lost connection: its frames move to the other rails (or, with none
 * left, the transport fails). Returns the number of connections cut. */
int tcp_tp_test_cut(locus_tp_t *tp, int peer, int rail);

/* For tests: gives up this rank's connections to peer on rail `rail` as a
 * stall does (no acknowledgement for LOCUS_TCP_RAIL_TIMEOUT): closed, not
 * reset, their frames moved to the other rails. Returns the number given
 * up. */
int tcp_tp_test_stall(locus_tp_t *tp, int peer, int rail);

/* A rank's card, as published in the kvs under "locus.tcp.<rank>". */
typedef struct {
    uint64_t nonce;
    uint64_t eager_max;
    int ncls;       /* traffic classes it opens (1: QoS off): a pair opens the fewer */
    int nrails;
    struct sockaddr_in addr[TCP_MAX_RAILS];
} tcp_card_t;

/* Formats a card into buf; returns 0, or -1 when buf is too small. */
int tcp_card_format(const tcp_card_t *c, char *buf, size_t len);

/* Parses a card; returns 0, or -1 with a one-line reason in err. */
int tcp_card_parse(const char *s, tcp_card_t *c, char *err, size_t errlen);

#endif
