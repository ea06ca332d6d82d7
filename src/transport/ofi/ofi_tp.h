/*
 * ofi_tp.h — inside the libfabric transport (contract: ../locus_transport.h).
 *
 * One reliable-datagram endpoint (FI_EP_RDM) per rank, on the domain of the
 * NIC the placement plan gave it. Every message starts with an ofi_wire_t:
 * EAGER carries the core's header and the payload; a large payload is
 * announced by RTS (its registered address and key) and pulled by the
 * receiver with RMA reads, which a FIN then reports to the sender; on a
 * provider without FI_RMA the receiver posts a tagged receive instead and
 * answers CTS, and the sender sends the payload under that tag. PUSH
 * announces a payload the sender sends at once under a tag of its own;
 * the receiver posts a tagged receive for it as soon as the announcement
 * is in turn: into the destination when the core has matched it, else into
 * a buffer of its own, copied out when the core matches (no round trip
 * before the data moves, the provider's tag matching lands it); pushes to a
 * peer that still has pushes in flight wait for the next progress call and
 * go as one BATCH of announcements, their payloads behind it. A per-pair
 * sequence number puts messages back in the order they were sent whatever
 * the provider's completion order. Peers' addresses come from their cards
 * (the boot layer's address exchange), inserted into the address vector
 * the first time a rank talks to that peer.
 */
#ifndef OFI_TP_H
#define OFI_TP_H

#include "locus_transport.h"
#include "locus_clock.h"
#include "tp_ids.h"
#include "tp_qos.h"

/* libfabric's entry points, through the loader (ofi_lib.c says why). */
#ifndef OFI_LIB_REAL
#define fi_getinfo ofi_lib_getinfo
#define fi_freeinfo ofi_lib_freeinfo
#define fi_dupinfo ofi_lib_dupinfo
#define fi_fabric ofi_lib_fabric
#define fi_strerror ofi_lib_strerror
#endif
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <stddef.h>
#include <stdint.h>

/* The libfabric API version asked for. */
#define OFI_API FI_VERSION(1, 9)

/* PING and PONG: adaptive mode's probes (tp_qos.h), id the probe's and
 * len the time it left, echoed. */
enum { OFI_EAGER = 1, OFI_RTS, OFI_CTS, OFI_FIN, OFI_PUSH, OFI_BATCH, OFI_PING, OFI_PONG };

/* A pushed payload's tag: this bit, the sender's rank, and a count of its
 * pushes to that peer, so that no two payloads in flight (one may wait in
 * the provider long after its send completed) share a tag. A CTS's tag,
 * receiver-chosen, never has the bit. */
#define OFI_PUSH_TAG (1ULL << 63)

/* Rails: domains (NICs) a rank opens, an endpoint on each; control and
 * eager messages go on rail 0, a large message's reads are striped over
 * every rail both sides have (LOCUS_OFI_RAILS). */
#define OFI_RAILS_MAX 4

/* Eager payloads up to this are copied into a send bounce buffer (a copy
 * costs less than registering and tracking the caller's buffer); larger
 * eager ones are sent from the caller's buffer, heads and payload as one
 * message. */
#define OFI_COPY_MAX 16384

/* The tag of those larger eager messages: the receiver takes them into a
 * few big buffers posted by this tag, the others into its many small ones
 * (order is restored by sequence number as for every message). No tag of
 * a tagged rendezvous (rank << 32 | id) has this bit below 2^30 ranks. */
#define OFI_EAGER_TAG (1ULL << 62)

/* A compact message (ofi_compact.c): a plain eager message whose heads
 * travel in its tag and remote CQ data rather than in front of its
 * payload, so that a payload of the provider's inline or inject size goes
 * as one (shm: 128 and 4096 bytes). Tag: both bits above, the core
 * header's first word (30 bits) and its third (32). Data: the sender's
 * world rank (21 bits), the header's second word (21 bits) and the low 22
 * bits of the sequence number. A header whose words do not fit, or whose
 * fourth is not 0, goes the ordinary way. The receiver's compact buffers
 * are posted by the two bits alone. */
#define OFI_COMPACT_TAG (3ULL << 62)
#define OFI_COMPACT_IGNORE ((1ULL << 62) - 1)
#define OFI_COMPACT_RANKS (1u << 21)

/* The sequence number of what is matched by id, not by order (CTS, FIN,
 * BATCH, probes). */
#define OFI_UNORDERED UINT32_MAX

/* Adaptive classes: receive and send buffers on the latency class's
 * endpoint, each. What a congested path raises is small (control, eager
 * messages to LOCUS_QOS_SMALL) and bounded by the budget; a raise that
 * finds no send buffer free stays normal. */
#define OFI_LAT_BUFS 16

/* The largest receive buffer a card may claim (a bound for sanity: %zu
 * reads "-1" as SIZE_MAX). */
#define OFI_CARD_BUF_MAX (1UL << 30)

/* The head of every message. */
typedef struct {
    uint8_t type, hdrlen;
    uint16_t rails;   /* RTS: the keys that follow, one per rail; PUSH: the rail
                       * its payload comes on */
    int32_t src;      /* sender's world rank */
    uint32_t seq;     /* per ordered pair, from 0 */
    uint32_t id;      /* RTS/CTS/FIN: the sender's request id; BATCH: its records */
    uint64_t len;     /* EAGER: payload bytes; RTS: the whole message's; BATCH: the
                       * bytes of its records (each a PUSH head and its core
                       * header), which follow */
    uint64_t addr[OFI_RAILS_MAX]; /* RTS: the payload's remote address on each rail
                                   * (from its registration's start without
                                   * FI_MR_VIRT_ADDR) */
    uint64_t key[OFI_RAILS_MAX]; /* RTS: its key on each rail; CTS: [0] the tag to send
                                  * the payload under; PUSH: [0] the tag it comes under */
} ofi_wire_t;

/* An EAGER message carries only the head up to len (its payload is what
 * follows the core's header): 16 bytes where the whole head takes 88, so
 * that small messages stay within what a provider sends inline or by
 * inject (shm: 32-byte payloads and more went at 0.75x the rate). */
#define OFI_WIRE_SHORT offsetof(ofi_wire_t, len)

/* What a completion's context is (every context starts with fi_context). */
enum { OFI_CTX_RX = 1, OFI_CTX_TX, OFI_CTX_READ, OFI_CTX_TRECV, OFI_CTX_TSEND };

typedef struct ofi_buf {
    struct fi_context fctx;
    int kind;          /* OFI_CTX_RX or OFI_CTX_TX */
    int big;           /* a big receive buffer (posted by OFI_EAGER_TAG) */
    int compact;       /* a compact receive buffer (by OFI_COMPACT_TAG) */
    int lat;           /* adaptive mode's latency class: posted on, or sent from,
                        * rail 0's lep (buffers of their own, registered there) */
    int raised;        /* sent from it: a message the budget counted as raised
                        * (a probe's answer is not) */
    int benign;        /* sent from it: a probe's answer, whose loss (its prober
                        * gone at finalize) fails nothing */
    struct ofi_buf *next;
    void *mem;         /* bufsize or bigsize; registered when mr_local */
    void *desc;
    int dst;           /* a control message waiting for room: to whom, */
    size_t len;        /* how long */
} ofi_buf_t;

/* A registration (ofi_mr.c): cached by address and length where allowed. */
typedef struct ofi_reg {
    struct fid_mr *mr;
    int rail;            /* whose domain it is in */
    void *desc;
    uint64_t key, raddr; /* what a peer needs to read it */
    uintptr_t base;
    size_t len;
    int refs;
    uint64_t used;       /* LRU stamp */
    struct ofi_reg *next;
} ofi_reg_t;

/* A large send waiting for the receiver's FIN (or CTS). */
typedef struct {
    uint32_t id, busy;
    struct fi_context fctx; /* the tagged send's, without FI_RMA */
    int kind;               /* OFI_CTX_TSEND */
    int dst;
    const void *data;
    size_t len;
    ofi_reg_t *reg[OFI_RAILS_MAX]; /* on each rail (the tagged send: [0]) */
    void *send_ctx;
    uint64_t tag;           /* the CTS's (or PUSH's), while the tagged send waits for room */
    size_t tlen;
    int rail;               /* PUSH: the rail its payload goes on */
    void *next_pending;     /* on tsend_backlog */
    struct ofi_buf *heads;  /* EAGER from the caller's buffer: the bounce buffer
                             * holding its heads, sent with it as one message */
    int pushed;             /* its payload is pushed (counts in the peer's pushes_out) */
    void *next_batched;     /* the next send of the peer's batch */
} ofi_send_t;

/* A large receive: the reads (or the tagged receive) under way. */
typedef struct locus_tp_rndv {
    uint32_t id, busy;
    struct fi_context fctx; /* the tagged receive's */
    int kind;               /* OFI_CTX_TRECV */
    int src;
    uint32_t send_id;
    uint64_t len, raddr[OFI_RAILS_MAX], rkey[OFI_RAILS_MAX];
    int rails;              /* the rails its reads may use */
    int keyed;              /* an RTS with the payload's keys (its sender has RMA) */
    void *buf;
    size_t want;            /* bytes the core takes (len or less) */
    size_t reads_left;
    ofi_reg_t *reg[OFI_RAILS_MAX]; /* the buffer's, where FI_MR_LOCAL wants them */
    void *recv_ctx;
    size_t issued;          /* bytes whose reads are posted */
    struct locus_tp_rndv *next_pending; /* on read_backlog */
    int queued;
    /* PUSH: the payload's tag; matched once the core gave a buffer; its
     * own buffer (scratch) while unmatched or truncated, landed when the
     * payload is in it; posted when its tagged receive is. */
    int pushed, matched, landed, posted;
    int rail;               /* the rail it comes on */
    uint64_t tag;
    void *scratch;
} ofi_rndv_t;

/* One RMA read of a large receive (several when it exceeds the chunk). */
typedef struct {
    struct fi_context fctx;
    int kind; /* OFI_CTX_READ */
    uint32_t rndv_id;
} ofi_read_t;

/* A message that came ahead of its turn, kept until the ones before it. */
typedef struct ofi_held {
    struct ofi_held *next;
    uint32_t seq;
    size_t len;
    unsigned char msg[];
} ofi_held_t;

typedef struct {
    fi_addr_t addr[OFI_RAILS_MAX]; /* on each rail both sides have */
    fi_addr_t daddr[OFI_RAILS_MAX]; /* its data endpoints' (addr without static classes) */
    fi_addr_t laddr;   /* its latency-class endpoint's on rail 0 (addr[0] but in
                        * adaptive mode) */
    tp_qos_path_t path; /* adaptive mode: the path to it */
    int rails;
    int known;         /* inserted into the address vectors */
    int dead;          /* its card said it has no ofi */
    size_t compact_below; /* messages shorter than this go to it compact (its
                           * card's size and this rank's own, plus 1); 0: none */
    size_t rx_small, rx_big; /* its receive buffers' bytes (its card): the most an
                              * untagged message or batch to it, and a big eager
                              * one (0: it posts none), may take */
    uint32_t tx_seq, rx_seq;
    uint32_t pushes;   /* payloads pushed to it: their tags */
    ofi_held_t *held;  /* by seq, ascending */
    int pushes_out;    /* pushed payloads to it the provider has not completed */
    struct ofi_buf *batch; /* announcements (PUSH) waiting as one BATCH message */
    int nbatch;
    ofi_send_t *batch_head, *batch_tail; /* their sends, whose payloads follow it */
    int listed;        /* in the transport's list of peers with a batch */
} ofi_peer_t;

typedef struct {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    struct fid_ep *dep; /* large messages' data: ep, or with static classes
                         * an endpoint of the bulk class (same queue and vector) */
    struct fid_ep *lep; /* adaptive classes, rail 0: the latency class's endpoint
                         * (ep is the normal class's); NULL otherwise */
    int wait_fd;       /* the completion queue's, or -1 */
    ofi_reg_t *regs;   /* its registration cache */
    int nregs;
} ofi_rail_t;

typedef struct {
    long eager_max, rx_bufs, rx_big_bufs, rx_compact_bufs, tx_bufs, chunk, rails;
    int rma;           /* -1 auto, 0 off, 1 on */
    int mr_cache;      /* -1 auto, 0 off, 1 on */
    int inject;        /* -1 auto, 0 off, 1 on */
    int push;          /* -1 auto, 0 off, 1 on */
    int batch;         /* -1 auto, 0 off, 1 on */
    int compact;       /* -1 auto, 0 off, 1 on */
    long stripe_min;   /* with rails: from this size reads in shares, not PUSH */
    long push_max;     /* -1: auto */
    int verbose;
    tp_qos_t qos;      /* LOCUS_QOS: static gives each rail a bulk endpoint, adaptive
                        * rail 0 a latency one */
    int tclass_dscp;   /* LOCUS_OFI_TCLASS: 1 dscp, 0 labels */
} ofi_cfg_t;

typedef struct {
    locus_tp_t base;
    ofi_cfg_t cfg;
    int rank, size;
    const locus_tp_upcalls_t *up;
    void *core;
    locus_tp_kvs_t kvs;

    struct fi_info *info;   /* rail 0's entry (owned by info_all) */
    struct fi_info *info_all;
    const char *domain_why; /* how rail 0's domain was chosen */
    ofi_rail_t rail[OFI_RAILS_MAX];
    int nrails;
    uint64_t mr_mode;       /* what the provider asks for */
    int has_rma;
    int push;               /* large messages up to max_msg by PUSH */
    int batch;              /* pushes behind pushes in flight go in batches */
    size_t max_msg, inject;
    int classes;            /* cfg.qos's mode, TP_QOS_* */
    uint32_t tclass_ep, tclass_ep2; /* what ep and the second endpoint (dep: static,
                                     * lep: adaptive) asked for */
    size_t eager_max;       /* cfg's, or LOCUS_QOS_SMALL with static classes */
    size_t push_max;        /* larger messages are read, not pushed; 0: no bound */
    int compact;            /* plain eager messages sent compact (ofi_compact.c)... */
    size_t compact_max;     /* ...to this size */

    size_t bufsize;         /* a send bounce buffer and a small receive buffer: wire
                             * head + core header + copy_max (at least a batch
                             * of one announcement) */
    size_t bigsize;         /* a big receive buffer: the heads + eager_max */
    int nrx;                /* receive buffers: small, compact, big */
    size_t copy_max;        /* eager payloads copied into a bounce buffer; larger
                             * ones (to eager_max) go from the caller's buffer */
    ofi_buf_t *rx, *tx;     /* arrays */
    ofi_buf_t *tx_free;
    int nlat;               /* adaptive: receive and send buffers on lep, each */
    ofi_buf_t *lat, *lat_free; /* nlat receive buffers, then nlat send ones */
    struct fid_mr *lat_mr;  /* their registration (mr_local), bound to lep */
    void *lat_mem;
    tp_qos_budget_t budget; /* adaptive: the raised bytes' budget */
    tp_qos_count_t adaptive;
    long lat_received;      /* messages that came in the latency class's buffers */
    int draining;           /* finalize: probes neither sent nor answered */
    int tx_in_flight;
    struct fid_mr *buf_mr;  /* the bounce buffers' registration (mr_local) */
    void *buf_mem;

    ofi_peer_t *peers;
    tp_ids_t sends, rndvs;
    ofi_read_t *reads;      /* a pool of read contexts */
    ofi_read_t **reads_free;
    int nreads_free, nreads;

    ofi_buf_t *ctl_head, *ctl_tail; /* control messages waiting for room */
    ofi_buf_t *rx_backlog;          /* receive buffers the provider had no room for */
    ofi_rndv_t *read_backlog;       /* receives with reads still to post */
    ofi_send_t *tsend_backlog;      /* tagged sends waiting for room */
    int *batched;                   /* peers with a batch, to send at progress */
    int nbatched;
    long pushed, pushed_batched;    /* payloads pushed, those announced in a batch */
    long pushes_early;              /* payloads received before the core matched them */
    long compact_sent;              /* messages sent compact */

    uint64_t clock;
    long reg_hits, reg_misses;

    int failed;
    char errmsg[256];
    char desc[512];
} ofi_tp_t;

/* A send bounce buffer, or NULL when all are in flight; and back. */
static inline ofi_buf_t *ofi_tx_get(ofi_tp_t *tp)
{
    ofi_buf_t *b = tp->tx_free;
    if (b) {
        tp->tx_free = b->next;
        b->benign = 0;
    }
    return b;
}

/* A send buffer of the latency class, or NULL when all are in flight;
 * raised: what it will carry counts in the budget. */
static inline ofi_buf_t *ofi_lat_get(ofi_tp_t *tp, int raised)
{
    ofi_buf_t *b = tp->lat_free;
    if (b) {
        tp->lat_free = b->next;
        b->raised = raised;
        b->benign = 0;
    }
    return b;
}

static inline void ofi_tx_put(ofi_tp_t *tp, ofi_buf_t *b)
{
    ofi_buf_t **list = b->lat ? &tp->lat_free : &tp->tx_free;
    b->next = *list;
    *list = b;
}

/* ofi_create.c */
void ofi_fail(ofi_tp_t *tp, int code, const char *fmt, ...);
/* fi_getinfo's hints: a reliable-datagram endpoint, tagged messages, RMA
 * reads when with_rma, every mr_mode bit the transport honours, the
 * provider LOCUS_OFI_PROVIDER names. NULL when out of memory. */
struct fi_info *ofi_hints_make(int with_rma);
/* The peer's address in the address vectors, inserted from its card the
 * first time; 0, or -1 with the transport failed. The check is inline
 * because every send makes it, and the insertion's stack frame (its card,
 * 3 KiB) cost a send 5% when set up each time. */
int ofi_peer_insert(ofi_tp_t *tp, int peer);
static inline int ofi_peer_addr(ofi_tp_t *tp, int peer)
{
    return tp->peers[peer].known ? 0 : ofi_peer_insert(tp, peer);
}

/* ofi_mr.c: a registration of [buf, buf+len) for `access` (FI_READ,
 * FI_REMOTE_READ, ...), honouring the provider's mr_mode bits; released
 * with ofi_reg_put (kept in the cache where allowed). */
ofi_reg_t *ofi_reg_get(ofi_tp_t *tp, int rail, const void *buf, size_t len, uint64_t access);
/* (ofi_reg_get's are for large messages' data: bound to the rail's dep.) */
void ofi_reg_put(ofi_tp_t *tp, ofi_reg_t *r);
void ofi_reg_flush(ofi_tp_t *tp);
int ofi_mr_open(ofi_tp_t *tp, int rail, struct fid_ep *ep, void *buf, size_t len,
                uint64_t access, struct fid_mr **mr);

/* ofi_proto.c */
int ofi_send(locus_tp_t *t, int dst, const void *hdr, size_t hdrlen, const void *data,
             size_t len, void *send_ctx);
int ofi_rndv_recv(locus_tp_t *t, locus_tp_rndv_t *rndv, void *buf, size_t len, void *recv_ctx,
                  int hints);
int ofi_progress(locus_tp_t *t);
/* Posts a receive buffer, or keeps it for progress to post when the
 * provider has no room now: 0, or a fatal error. */
int ofi_rx_post(ofi_tp_t *tp, ofi_buf_t *b);
/* Ordered messages from p: after the one whose turn it was, the next turn
 * and the held messages now in turn; a message ahead of its turn kept (in
 * the EAGER, RTS or PUSH form: head, then body), 0 or -1 with the
 * transport failed. */
void ofi_turn_next(ofi_tp_t *tp, ofi_peer_t *p);
int ofi_hold(ofi_tp_t *tp, ofi_peer_t *p, uint32_t seq, const void *head, size_t headlen,
             const void *body, size_t bodylen);

/* A control message (CTS, FIN, a probe or its answer), from progress or
 * from a send (a probe): sent now, or kept until there is room (never a
 * LOCUS_TP_AGAIN: the protocol needs it sent). In the latency class where
 * lat asks (OFI_CTL_RAISED: counted so by the budget, OFI_CTL_PONG: a
 * probe's answer) and a buffer of it is free. 0, or -1 with the transport
 * failed. */
enum { OFI_CTL_NORMAL, OFI_CTL_RAISED, OFI_CTL_PONG };
int ofi_ctl_send(ofi_tp_t *tp, int dst, const ofi_wire_t *w, int lat);

/* ofi_qos.c: adaptive classes (tp_qos.h's rule) */
/* Whether a message of `bytes` on the wire to dst goes in the latency
 * class; `small` where it is a control message or an eager one of
 * LOCUS_QOS_SMALL at most. Probes the path now and then; counts every
 * byte (a send that then does not go takes them back: tp_qos_unsent). */
int ofi_qos_raise(ofi_tp_t *tp, int dst, int small, size_t bytes);
/* The class of a CTS or FIN to dst: OFI_CTL_RAISED or OFI_CTL_NORMAL. */
int ofi_ctl_raised(ofi_tp_t *tp, int dst);
/* A PING (answered) or a PONG (the probe's round trip) from w->src. */
void ofi_probe_arrived(ofi_tp_t *tp, const ofi_wire_t *w);
/* An error completion whose context is a probe's answer: its prober left
 * (its probe rode on its last messages before MPI_Finalize); nothing
 * waits for it, its buffer comes back: 1. Else 0. */
int ofi_answer_lost(ofi_tp_t *tp, void *ctx);

/* ofi_compact.c */
/* Sends a plain eager message compact: LOCUS_TP_DONE, LOCUS_TP_AGAIN, a
 * negative error, or OFI_NOT_COMPACT (its header does not fit: nothing
 * was sent). */
#define OFI_NOT_COMPACT 3
int ofi_compact_send(ofi_tp_t *tp, int dst, const void *hdr, size_t hdrlen, const void *data,
                     size_t len);
/* A header's four words, the sender's world rank and its sequence number
 * as a compact message's tag and data: 1, or 0 where they do not fit. */
int ofi_compact_pack(const uint32_t w[4], int rank, uint32_t seq, uint64_t *tag, uint64_t *data);
/* And back: the words, the rank and the sequence number's low bits. */
void ofi_compact_unpack(uint64_t tag, uint64_t data, uint32_t w[4], uint32_t *rank,
                        uint32_t *seq_low);
/* A compact message landed in b (the completion e). */
void ofi_compact_arrived(ofi_tp_t *tp, ofi_buf_t *b, const struct fi_cq_tagged_entry *e);

#endif
