/*
 * shm_tp.h — the shared-memory transport's private state (not a contract:
 * the contract is ../locus_transport.h; tests also use shm.h).
 *
 * Protocols, all through the per-pair rings (shm_ring.h):
 *  - eager (len <= eager limit): one MSG message = head + core header + data;
 *  - rendezvous: RTS {len, sender address, sid} + core header; up to
 *    RTS_DATA_MAX bytes, the data also waits in a chunk of the sender's pool
 *    (the RTS names it). The receiver's core answers with
 *    rndv_recv(); then either
 *      copy-out: the receiver copies the data from that chunk, frees it and
 *           sends FIN {sid}; or
 *      CMA: the receiver reads the sender's buffer (process_vm_readv) and
 *           sends FIN {sid}; or
 *      pipeline: the receiver sends CTS {sid, rid, want}; the sender copies
 *           the data through chunks of its own pool, one CHUNK {rid, chunk,
 *           offset} message each; the receiver copies each chunk out and
 *           marks it free in the sender's pool (a store, no message).
 *    A receive completes only after every control message it owes (CTS,
 *    FIN) is in a ring, so no process can finish while a peer still waits.
 */
#ifndef SHM_TP_H
#define SHM_TP_H

#include "locus_transport.h"
#include "shm.h"
#include "shm_ring.h"
#include "shm_seg.h"
#include "shm_path.h"
#include "tp_ids.h"

#include <stdint.h>

/* Receiver side of one large message. */
struct locus_tp_rndv {
    uint32_t id;
    uint32_t busy;
    int peer;            /* local rank of the sender */
    int state;
    uint32_t sid;        /* sender's request id */
    uint64_t len;        /* announced */
    uint64_t addr;       /* sender's buffer, for CMA */
    uint32_t chunk;      /* 1 + the chunk of the sender's pool that holds the data, or 0 */
    uint32_t copy_ns;    /* the time the sender's copy into that chunk took */
    unsigned char *buf;
    uint64_t want, got;
    uint64_t pipe_ns;    /* pipelined: the time its chunks took to come (shm_path.h) */
    uint64_t split;      /* split single copy: the sender writes [0, split) */
    uint64_t split_t0;   /* ...when it began, 0 if it is not timed */
    uint32_t match_no;   /* the peer's `matched` when it began */
    int halves;          /* SHM_HALF_* seen so far */
    int by_cma;          /* read by CMA (split or not): its FIN says so, and the
                            path measures (shm_path.h) count it so */
    int mode;            /* SHM_M_*: how its path was chosen, how it is measured */
    void *ctx;
    struct locus_tp_rndv *next; /* on the owed-control list */
};

/* Chunks of my pool one pipelined send may fill ahead of its receiver:
 * at most this many, and at most SHM_SEND_AHEAD_BYTES, so that a large
 * message runs through the same few chunks (in cache) however large the
 * pool, while a window of messages fills all of it. 2 at least. */
#define SHM_SEND_AHEAD_MAX 64
#define SHM_SEND_AHEAD_BYTES (1u << 20)

/* Sender side of one large message. */
typedef struct shm_sreq {
    uint32_t id;
    uint32_t busy;
    int peer;            /* local rank of the receiver */
    uint32_t rid;
    const unsigned char *buf;
    uint64_t len, want, sent;
    void *ctx;
    int wrote;           /* split single copy: 0 or the -errno of its write */
    int wrote_all;       /* it wrote the whole message (the receiver's FANIN) */
    int with_data;       /* its RTS came with the data in a chunk of my pool */
    uint32_t held_first, held_n; /* its chunks (held) the receiver may not have freed */
    uint16_t held[SHM_SEND_AHEAD_MAX];
    struct shm_sreq *next; /* on the active (pipelining) list, or owing WROTE */
} shm_sreq_t;

typedef struct {
    int world;
    pid_t pid;                     /* 0 when in another pid namespace */
    shm_ring_tx_t tx;              /* my ring in its segment */
    shm_ring_rx_t rx;              /* its ring in my segment */
    unsigned char *seg;            /* its segment, mapped */
    size_t seg_len;
    _Atomic uint32_t *pool_state;  /* its pool: chunk states (stride 16 words) */
    unsigned char *pool;           /* its pool: chunk data */
    uint64_t chunk_size;
    uint32_t pool_chunks;
    shm_alive_watch_t alive;       /* notices its death (shm_alive.h) */
    size_t eager_max;              /* mine: the largest eager message */
    size_t inline_max;             /* ...with its payload in its ring: capped by the ring */
    uint32_t outstanding;          /* large messages in flight with it */
    uint32_t sending;              /* ...of them mine to it: it is busy receiving */
    uint32_t matched;              /* large receives from it matched so far */
    int stalled;                   /* a send to it got AGAIN */
    int cma;                       /* CMA from it works */
    int no_split;                  /* its write into my buffer failed: no more splits */
    shm_path_t path;               /* which large-message path is faster alone */
    shm_stream_t stream;           /* ...and amid others (shm_path.h) */
    uint64_t pipe_mark;            /* last chunk from it, or the CTS that began a busy stretch */
    uint32_t pipe_active;          /* pipelined receives from it waiting for data */
    uint32_t reads_cma;            /* size classes (shm_path.h) it last read by CMA:
                                      their announcements go without data */
} shm_peer_t;

typedef struct {
    locus_tp_t base;               /* must be first */
    locus_tp_upcalls_t up;
    void *core;
    int rank, size, local_rank, local_size;
    int *local_of;                 /* world rank -> local rank, -1 off node */
    shm_peer_t *peers;             /* by local rank; mine unused */

    unsigned char *seg;            /* my segment */
    size_t seg_len;
    int seg_fd;                    /* kept open: holds my liveness lock */
    _Atomic uint32_t *pool_state;
    unsigned char *pool;
    uint32_t pool_chunks, pool_next;
    uint32_t pool_span;            /* chunks searched for a free one (pool_find) */
    uint32_t *chunk_owner;         /* 1 + the id of the send whose data a chunk holds, or 0 */
    uint32_t send_ahead;           /* SHM_SEND_AHEAD_* for this chunk size; 0: the pool's */
    uint32_t data_chunks;          /* chunks holding data announced with an RTS */
    uint64_t chunk_size;

    int single_copy;               /* SHM_SC_* */
    uint64_t cma_min, cma_max;     /* auto's rule: CMA for sizes in [min, max) */
    uint64_t cookie;               /* read by the peers' CMA probe */

    int oversubscribed;            /* from the core (locus_tp_init_t) */
    long idle;                     /* idle progress calls in a row */
    uint64_t last_check_ns;
    int failed;                    /* negative once a fatal error happened */
    char error[200];               /* why, for last_error() */

    tp_ids_t rids, sids;           /* request ids (../tp_ids.h) */
    locus_tp_rndv_t *owed;         /* receives owing a CTS or FIN */
    shm_sreq_t *active;            /* sends pipelining their data */
    shm_sreq_t *owe_wrote;         /* sends whose WROTE found the ring full */
    shm_stats_t stats;
} shm_tp_t;

enum { SHM_SC_NONE, SHM_SC_AUTO, SHM_SC_CMA };
/* A receive's path: the rule's (not measured), chosen and timed alone,
 * part of a stream, or amid my sends to the peer (the lone measures). */
enum { SHM_M_RULE, SHM_M_LONE, SHM_M_STREAM, SHM_M_AMID };
enum { SHM_R_ARRIVED, SHM_R_OWE_CTS, SHM_R_DATA, SHM_R_OWE_FIN, SHM_R_OWE_SPLIT, SHM_R_SPLIT };
/* Split single copy, halves accounted for: read by me, written by the
 * sender, or failed (then the whole message is pipelined instead). */
enum { SHM_HALF_MINE = 1, SHM_HALF_THEIRS = 2, SHM_HALF_MINE_FAILED = 4,
       SHM_HALF_THEIRS_FAILED = 8 };

extern const locus_tp_ops_t shm_tp_ops;

/* shm_xfer.c */
int shm_tp_send(locus_tp_t *t, int dst, const void *hdr, size_t hdrlen,
                const void *data, size_t len, void *send_ctx);
int shm_tp_send_now(locus_tp_t *t, int dst, const void *hdr, size_t hdrlen, const void *data,
                    size_t len);
int shm_tp_rndv_recv(locus_tp_t *t, locus_tp_rndv_t *r, void *buf, size_t len, void *ctx,
                     int hints);
int shm_tp_progress(locus_tp_t *t);

/* shm_health.c: idle bookkeeping and dead-peer detection (the core, not
 * the transport, yields the CPU when ranks outnumber cores). */
int shm_tp_idle(shm_tp_t *tp);
const char *shm_tp_last_error(locus_tp_t *t);

#endif
