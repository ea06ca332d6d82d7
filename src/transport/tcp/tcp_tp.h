/*
 * tcp_tp.h — the TCP transport's private state (not a contract: the
 * contract is ../locus_transport.h; tests also use tcp.h).
 *
 * One listening socket per rail, bound to the rail interface's address.
 * Connections to a peer are made on the first send to it: one per rail
 * (rail i to the peer's rail i), all dialled by the same side. When both
 * sides dial at once the lower rank's dial wins (the higher rank accepts
 * it and drops its own; the lower rank refuses the higher one's with
 * TCP_HELLO_LOST). With LOCUS_QOS on, every rail has one connection per
 * traffic class (latency, normal, bulk: a lane), each marked with its DSCP
 * (tcp_qos.c). Message frames (MSG, RTS) and CTS use rail 0 of their
 * class; the receiver puts MSG and RTS back in the pair's order by their
 * sequence (a frame that overtook an older one on another class waits in
 * the peer's held list). Rendezvous DATA chunks go to whichever open rail of
 * their class has the least queued, so a large message is striped and a
 * faster rail carries more.
 *
 * Rail failover (tcp_failover.c, tcp_ack.c): with two rails or more to a
 * peer, every frame written is kept until the peer acknowledges it (the `ack` of each
 * frame head, or an ACK frame). A connection that fails (an error, a
 * reset, or no acknowledgement from the kernel for LOCUS_TCP_RAIL_TIMEOUT
 * while another rail to that peer answers) is closed; each side tells the
 * other on a surviving lane how many frames it received on it (FAILOVER),
 * and sends again, on the survivors, exactly the frames the other did not
 * get, with what was still queued. The side that dialled dials the lane
 * again in the background, with back-off; once open it carries traffic
 * again. Only when no lane to a peer is left does the job fail.
 *
 * Every connection starts with the job key's challenge-response
 * (locus_auth.h, context "tcp"): the acceptor challenges on accept, the
 * dialler answers and sends its hello behind the answer, the acceptor
 * proves the key in turn ahead of its hello_ack. A connection that has not
 * proven the key is a stranger: closed at its first wrong byte, after
 * LOCUS_AUTH_TIMEOUT_MS of silence, or for a newer one past
 * LOCUS_AUTH_PENDING_MAX; accept() short of descriptors rests the rails
 * (no polling) for 100 ms instead of failing. A dial that the peer closes
 * before its proof (a flood made it close the oldest) is dialled again
 * until LOCUS_TCP_CONNECT_TIMEOUT.
 *
 * Objects are never freed inside progress() while an event may still
 * point at them: a closed connection goes to a graveyard emptied at the
 * end of the round.
 */
#ifndef TCP_TP_H
#define TCP_TP_H

#include "locus_clock.h"
#include "locus_auth.h"
#include "locus_transport.h"
#include "tcp.h"
#include "tcp_wire.h"
#include "tp_ids.h"
#include "tp_qos.h"

#include <net/if.h>
#include <stdint.h>

#define TCP_IOV_MAX 64
#define TCP_RBUF_SIZE (64 * 1024)
#define TCP_HEAD_MAX (sizeof(tcp_frame_t) + LOCUS_TP_HDR_MAX)

/* Traffic classes. NORMAL is 0 so that with QoS off (one class) lane i is
 * rail i, as before classes existed. */
enum { TCP_CLS_NORMAL = 0, TCP_CLS_LATENCY = 1, TCP_CLS_BULK = 2, TCP_CLASSES = 3 };
#define TCP_LANE(cls, rail) ((cls) * TCP_MAX_RAILS + (rail))
#define TCP_LANES (TCP_CLASSES * TCP_MAX_RAILS)

/* The modes of tp_qos.h. */
enum { TCP_QOS_OFF, TCP_QOS_STATIC, TCP_QOS_ADAPTIVE };

typedef struct {
    tp_qos_t s;                      /* the settings (s.mode: TCP_QOS_*) */
    int dscp[TCP_CLASSES];           /* by TCP_CLS_* */
} tcp_qos_cfg_t;

typedef struct {
    long eager_max, chunk_size, sndbuf, rcvbuf, sendq_max;
    long connect_timeout, bye_timeout, user_timeout, max_rails;
    long rail_timeout_ms;            /* stall that abandons a rail for the others (0: off) */
    long auth_timeout_ms, auth_pending_max;
    int verbose;
    tcp_qos_cfg_t qos;
} tcp_cfg_t;

/* epoll's data.ptr points at a rail or a connection: both start with kind. */
enum { TCP_OBJ_RAIL = 1, TCP_OBJ_CONN };

typedef struct {
    int kind;                        /* TCP_OBJ_RAIL */
    int fd;                          /* listening socket */
    int index;
    int resting;                     /* accept() ran short: not polled for a while */
    char ifname[IF_NAMESIZE];
    struct sockaddr_in addr;         /* address and listening port */
} tcp_rail_t;

/* What a queue entry is: a handshake record (before the connection is
 * open), a frame (counted by both sides, kept until acknowledged where the
 * pair has several rails), or an ACK frame (neither). */
enum { TCP_QE_HS = 0, TCP_QE_FRAME, TCP_QE_ACK };

/* One frame (or handshake record) waiting to be written, or written and
 * kept until the peer acknowledges it. */
typedef struct tcp_qent tcp_qent_t;
struct tcp_qent {
    tcp_qent_t *next;
    size_t off;                      /* bytes of head + data already written */
    uint32_t head_len;
    uint8_t kind;                    /* TCP_QE_* */
    uint8_t is_data;                 /* a DATA chunk of sreq (data = its buffer) */
    uint8_t counted;                 /* counted in the peer's queued bytes */
    uint8_t copied;                  /* a FAILOVER whose lane was lost: a copy went again */
    const unsigned char *data;       /* payload: the sender's buffer or the copy below */
    size_t data_len;
    struct tcp_sreq *sreq;
    unsigned char head[TCP_HEAD_MAX];
    /* an eager payload copy may follow */
};

typedef struct {
    tcp_qent_t *head, *tail;
} tcp_queue_t;

enum {
    TCP_C_CONNECTING,                /* non-blocking connect() under way */
    TCP_C_AUTH_CHAL,                 /* dialled, connected, waiting for the challenge */
    TCP_C_HELLO_WAIT,                /* answer and hello sent, waiting for the proof, then the ack */
    TCP_C_RETRY,                     /* dialled, closed before the peer's proof: dial again */
    TCP_C_AUTH_RESP,                 /* accepted, challenge sent, waiting for the answer */
    TCP_C_ACCEPTED,                  /* accepted and proven, waiting for the hello */
    TCP_C_OPEN,
    TCP_C_REJECTING,                 /* writing a refusal, then closed */
    TCP_C_CLOSED
};

enum { TCP_RX_HEAD, TCP_RX_BIG, TCP_RX_DATA };

typedef struct tcp_conn tcp_conn_t;
struct tcp_conn {
    int kind;                        /* TCP_OBJ_CONN */
    int fd;
    int state;                       /* TCP_C_* */
    int peer;                        /* world rank, -1 before the hello */
    int rail;
    int cls;                         /* TCP_CLS_* (the acceptor learns it from the hello) */
    int lane;                        /* TCP_LANE(cls, rail): its slot in the peer's conn[] */
    int dialled;                     /* we dialled it (else accepted) */
    int fallback;                    /* connect stage: 0 bound to the rail, 1 any route */
    int bye_rcvd;                    /* peer said goodbye on it */
    int bye_sent;
    int on_dirty;
    int blocked;                     /* socket full: wait for EPOLLOUT before writing */
    int flushing;                    /* inside tcp_conn_flush (no nesting) */
    int in_grave;
    int want_out;                    /* registered for EPOLLOUT (while blocked) */
    uint64_t deadline_ns;            /* handshake deadline */
    uint64_t give_up_ns;             /* dialled: last moment for another dial (RETRY) */
    uint64_t silent_since_ns;        /* first check that found its kernel retransmitting or
                                        probing, with every check since finding the same */
    int redials;
    int authed;                      /* the key was proven on it, both ways */
    int redial;                      /* dialled again after a failover: failures are not fatal */
    uint16_t gen;                    /* times its lane was dialled before (the hello says) */
    uint64_t redial_since_ns;        /* when its lane was lost (for the note once restored) */
    locus_auth_t auth;
    tcp_conn_t *next;                /* tp->conns */
    tcp_conn_t *next_dirty;          /* tp->dirty */
    tcp_queue_t q;
    uint64_t chunk_queued;           /* DATA bytes in q (the stripe window) */
    /* acknowledgements (pairs with several rails; frames mod 2^32) */
    tcp_queue_t sent;                /* frames written, kept until acknowledged */
    uint32_t tx_frames;              /* frames written on it */
    uint32_t tx_acked;               /* of those, acknowledged by the peer */
    uint32_t rx_frames;              /* frames received on it */
    uint32_t rx_acked;               /* the count we last told the peer */
    int on_acks;                     /* on tp->acks: an acknowledgement owed */
    int ack_aged;                    /* owed since the previous sweep */
    tcp_conn_t *next_ack;
    /* receiving */
    unsigned char *rbuf;
    size_t rpos, rend;
    int rx;                          /* TCP_RX_* */
    tcp_frame_t fr;                  /* frame whose body is being received */
    unsigned char *big;              /* MSG too large for rbuf: assembled here */
    size_t big_len, big_got;
    unsigned char *dst;              /* DATA: where the body goes (NULL: discard) */
    size_t dst_left;
    locus_tp_rndv_t *dst_r;
};

enum {
    TCP_P_NONE,                      /* no connection yet */
    TCP_P_DIALING,                   /* our dial is under way or open */
    TCP_P_LOST,                      /* our dial lost the race: theirs will come */
    TCP_P_INCOMING                   /* we accepted theirs */
};

/* A message frame (MSG or RTS) that arrived ahead of its turn: kept, with
 * its core header and payload, until the older ones came on other lanes. */
typedef struct tcp_held tcp_held_t;
struct tcp_held {
    tcp_held_t *next;                /* by sequence */
    tcp_frame_t f;
    unsigned char *body;             /* core header, then the payload (MSG) */
};

/* A lane that failed: what it carried (frames written and not yet
 * acknowledged, then what was still queued), until the peer says how many
 * of those frames it received (its FAILOVER). */
typedef struct tcp_limbo tcp_limbo_t;
struct tcp_limbo {
    tcp_limbo_t *next;
    int lane;
    uint16_t gen;
    uint32_t base;                   /* frame number of sent's first entry */
    tcp_queue_t sent, unsent;
};

typedef struct {
    int state;                       /* TCP_P_* */
    int nconn;                       /* rails used with this peer */
    int ncls;                        /* traffic classes (1: QoS off) */
    int keep;                        /* several rails: frames kept until acknowledged */
    tcp_conn_t *conn[TCP_LANES];     /* by TCP_LANE(cls, rail) */
    tcp_queue_t waitq[TCP_CLASSES];  /* a class's message frames until a lane is open */
    tcp_limbo_t *limbo;              /* failed lanes waiting for the peer's FAILOVER */
    int orphaned;                    /* no lane open: the traffic waits for a redial */
    int orphan_rail, orphan_err;     /* the last open lane lost, and why (should that fail) */
    char orphan_why[64];
    uint64_t orphan_until_ns;        /* after an outage: a lane must be back by then (0: none) */
    uint64_t outage_ns;              /* when a lane was last lost to silence (0: never) */
    int replacing;                   /* the peer dialled a lane again: its new one is coming */
    uint32_t settled[TCP_LANES];     /* newest generation + 1 of a lane whose loss we settled */
    tcp_held_t *held;                /* message frames ahead of rx_seq */
    uint32_t nheld;
    tp_qos_path_t path;              /* adaptive QoS's view of the path to it */
    uint64_t queued;                 /* bytes of MSG/RTS frames not yet written */
    uint32_t tx_seq, rx_seq;
    uint64_t eager_max;              /* for this pair */
    tcp_card_t *card;                /* fetched when we dial */
    uint32_t outstanding;            /* large messages in flight with it, either way */
    int bye;                         /* it said goodbye */
    struct tcp_sreq *act_head, *act_tail; /* its sends with chunks left to queue, FIFO */
    int next_pump;                   /* next peer with such sends (-1: last) */
    int on_pump;
} tcp_peer_t;

/* Sender side of one large message. */
typedef struct tcp_sreq {
    uint32_t id, busy;
    int peer;
    int cls;                         /* its DATA chunks' class */
    uint32_t rid;
    const unsigned char *buf;
    uint64_t len, want, queued;
    uint64_t written;                /* bytes the peer has (written; acknowledged if kept) */
    void *ctx;
    struct tcp_sreq *next;           /* the peer's FIFO of sends with chunks left */
} tcp_sreq_t;

/* Receiver side of one large message. */
enum { TCP_R_ARRIVED, TCP_R_RECEIVING, TCP_R_DISCARD };
struct locus_tp_rndv {
    uint32_t id, busy;
    int peer;
    int state;
    uint32_t sid;
    uint64_t len, want, got;
    unsigned char *buf;
    void *ctx;
};

typedef struct {
    locus_tp_t base;                 /* must be first */
    locus_tp_upcalls_t up;
    void *core;
    locus_tp_kvs_t kvs;
    int rank, size;
    tcp_cfg_t cfg;
    int nrails;
    tcp_rail_t rails[TCP_MAX_RAILS];
    uint64_t nonce;
    locus_auth_key_t key;            /* the job's (LOCUS_JOB_KEY, settled by boot) */
    int unproven;                    /* accepted connections that have not proven it */
    uint64_t rest_until_ns;          /* rails resting after accept() ran short (0: none) */
    int accept_warned;
    int strangers_noted;             /* refusals told under LOCUS_VERBOSE (a few) */
    uint64_t deadline_next;          /* no handshake deadline is earlier */
    struct in_addr local[32];        /* this host's IPv4 addresses (its netns) */
    int nlocal;
    int ep;                          /* epoll instance */
    tcp_peer_t *peers;               /* [size] */
    tcp_conn_t *conns;               /* every live connection */
    tcp_conn_t *grave;               /* closed this round, freed at its end */
    tcp_conn_t *dirty;               /* connections with frames to write */
    int handshaking;                 /* connections with a deadline */
    unsigned rounds;                 /* progress rounds (epoll every few) */
    tp_ids_t sids, rids;
    int pump_head;                   /* first peer with sends to pump, -1: none */
    int draining;                    /* finalize: read and drop, no upcalls */
    int failed;                      /* negative once a fatal error happened */
    char errmsg[256];
    int ncls;                        /* classes this rank opens with a peer */
    tp_qos_budget_t budget;          /* adaptive QoS: bytes sent, all and raised */
    int keeping;                     /* peers whose frames are kept (stall timers run) */
    int orphans_waiting;             /* peers with orphan_until_ns set */
    uint64_t orphan_next_ns;         /* their deadlines are checked from then */
    unsigned timer_rounds;
    uint64_t ack_next_ns, stall_next_ns, hosts_next_ns;
    tcp_conn_t *acks;                /* connections that owe an acknowledgement */
    tcp_stats_t stats;
} tcp_tp_t;

extern const locus_tp_ops_t tcp_tp_ops;

/* tcp_create.c */
int tcp_cfg_range(const char *name, long v, long lo, long hi, char *err, size_t errlen);
void tcp_fail(tcp_tp_t *tp, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void tcp_note(const tcp_tp_t *tp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* tcp_addr.c: rails (LOCUS_NET_IFACES or the interfaces found) */
int tcp_rails_pick(tcp_tp_t *tp, char *err, size_t errlen);
int tcp_addr_is_local(const tcp_tp_t *tp, struct in_addr a);

/* tcp_conn.c: connections, dialling */
tcp_conn_t *tcp_conn_new(tcp_tp_t *tp, int peer, int cls, int rail, int dialled);
void tcp_conn_state(tcp_tp_t *tp, tcp_conn_t *c, int state); /* handshake states get a deadline */
void tcp_conn_deadline(tcp_tp_t *tp, tcp_conn_t *c, uint64_t ns);
int tcp_conn_handshaking(int state);
int tcp_conn_watch(tcp_tp_t *tp, tcp_conn_t *c, int op, uint32_t events);
int tcp_peer_dial(tcp_tp_t *tp, int peer);
void tcp_conn_writable(tcp_tp_t *tp, tcp_conn_t *c);  /* connect() finished */
void tcp_conn_close(tcp_tp_t *tp, tcp_conn_t *c);
void tcp_conn_lost(tcp_tp_t *tp, tcp_conn_t *c, int err);
void tcp_conn_connect(tcp_tp_t *tp, tcp_conn_t *c);   /* (again) */
void tcp_deadlines(tcp_tp_t *tp);
void tcp_sock_tune(const tcp_tp_t *tp, int fd);

/* tcp_hello.c: accepting, the handshake */
void tcp_accept_all(tcp_tp_t *tp, tcp_rail_t *rail);
void tcp_rails_wake(tcp_tp_t *tp);                     /* rested rails, when their time is up */
void tcp_hello_send(tcp_tp_t *tp, tcp_conn_t *c);
int tcp_conn_handshake(tcp_tp_t *tp, tcp_conn_t *c);   /* hello/ack in rbuf */

/* tcp_io.c: queues, writing, reading */
tcp_qent_t *tcp_qent_new(size_t copy);
void tcp_queue_push(tcp_queue_t *q, tcp_qent_t *e);
void tcp_queue_splice(tcp_queue_t *dst, tcp_queue_t *src);
void tcp_queue_free(tcp_queue_t *q);
void tcp_conn_dirty(tcp_tp_t *tp, tcp_conn_t *c);
int tcp_conn_flush(tcp_tp_t *tp, tcp_conn_t *c);
void tcp_conn_writable_again(tcp_tp_t *tp, tcp_conn_t *c); /* EPOLLOUT after a full socket */
int tcp_flush_dirty(tcp_tp_t *tp);
int tcp_conn_read(tcp_tp_t *tp, tcp_conn_t *c);
void tcp_lane_push(tcp_tp_t *tp, int peer, int cls, tcp_qent_t *e);
tcp_qent_t **tcp_queue_front(tcp_queue_t *q);             /* next to write, after a partial entry */
void tcp_queue_push_front(tcp_queue_t *q, tcp_qent_t *e); /* and the handshake's records */

/* tcp_proto.c: messages and the rendezvous */
int tcp_tp_send(locus_tp_t *t, int dst, const void *hdr, size_t hdrlen,
                const void *data, size_t len, void *send_ctx);
int tcp_tp_rndv_recv(locus_tp_t *t, locus_tp_rndv_t *r, void *buf, size_t len, void *ctx,
                     int hints);
int tcp_frame_begin(tcp_tp_t *tp, tcp_conn_t *c, const unsigned char *p, size_t avail);
void tcp_data_done(tcp_tp_t *tp, tcp_conn_t *c);
size_t tcp_head_make(unsigned char *head, int type, size_t hdrlen, const void *hdr, uint32_t a,
                     uint64_t b, uint64_t c);
void tcp_ctl_send(tcp_tp_t *tp, int peer, int cls, const unsigned char *head, size_t hl);
int tcp_rndv_arrived(tcp_tp_t *tp, int peer, const tcp_frame_t *f, const unsigned char *hdr);
void tcp_qent_written(tcp_tp_t *tp, tcp_conn_t *c, tcp_qent_t *e);
int tcp_pump(tcp_tp_t *tp);

/* tcp_order.c: message frames put back in the pair's order */
int tcp_msg_frame(tcp_tp_t *tp, tcp_conn_t *c, const tcp_frame_t *f, const unsigned char *p,
                  size_t avail);
int tcp_rts_frame(tcp_tp_t *tp, tcp_conn_t *c, const tcp_frame_t *f, const unsigned char *p,
                  size_t avail);
void tcp_big_done(tcp_tp_t *tp, tcp_conn_t *c);
void tcp_held_free(tcp_peer_t *pe);

/* tcp_qos.c: traffic classes */
int tcp_qos_cfg_read(tcp_qos_cfg_t *q, char *err, size_t errlen);
void tcp_qos_mark(const tcp_tp_t *tp, int fd, int cls);
enum { TCP_KIND_MSG, TCP_KIND_CONTROL, TCP_KIND_DATA };
int tcp_qos_class(tcp_tp_t *tp, int peer, int kind, size_t bytes);
void tcp_qos_pong(tcp_tp_t *tp, tcp_conn_t *c, const tcp_frame_t *f);
void tcp_qos_ping(tcp_tp_t *tp, tcp_conn_t *c, const tcp_frame_t *f);
const char *tcp_qos_name(int mode);

/* tcp_ack.c: acknowledgements (pairs with several rails) */
void tcp_peer_keep(tcp_tp_t *tp, tcp_peer_t *pe);      /* nconn known: keep frames if > 1 */
void tcp_rx_count(tcp_tp_t *tp, tcp_conn_t *c);         /* a frame was received whole */
void tcp_ack_apply(tcp_tp_t *tp, tcp_conn_t *c, uint32_t n); /* the peer has c's first n */
void tcp_acks_peer(tcp_tp_t *tp, int peer);             /* acknowledge every lane now */
void tcp_acks_sweep(tcp_tp_t *tp);                      /* those owed a while */
void tcp_sent_keep(tcp_tp_t *tp, tcp_conn_t *c, tcp_qent_t *e); /* written: keep or finish */
int tcp_ack_frame(tcp_tp_t *tp, tcp_conn_t *c, const tcp_frame_t *f);

/* tcp_failover.c: losing a lane, sending its frames again, redials */
tcp_conn_t *tcp_lane_primary(const tcp_peer_t *pe, int cls); /* open lane for message frames */
void tcp_data_confirm(tcp_tp_t *tp, tcp_qent_t *e);     /* the peer has this chunk (proto.c) */
int tcp_lane_fail(tcp_tp_t *tp, tcp_conn_t *c, int err, const char *why);
int tcp_failover_frame(tcp_tp_t *tp, tcp_conn_t *c, const tcp_frame_t *f);
void tcp_redial_again(tcp_tp_t *tp, tcp_conn_t *c, int err);
void tcp_lane_restored(tcp_tp_t *tp, tcp_conn_t *c);
void tcp_timers(tcp_tp_t *tp);                          /* acks owed, stalled lanes, silent hosts */
void tcp_limbo_free(tcp_peer_t *pe);
void tcp_redials_stop(tcp_tp_t *tp);
void tcp_redial_drop(tcp_tp_t *tp, tcp_conn_t *c);

/* tcp_progress.c */
int tcp_tp_progress(locus_tp_t *t);
int tcp_tp_wait(locus_tp_t *t, int timeout_ms);
void tcp_shutdown(tcp_tp_t *tp);

#endif
