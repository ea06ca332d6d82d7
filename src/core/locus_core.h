/*
 * locus_core.h — requests, matching and progress: the layer between the MPI
 * API and the transports.
 *
 * The core moves contiguous byte buffers between world ranks, tagged with a
 * wire header (context id, source rank in the communicator, tag, flags).
 * It matches arriving messages against posted receives in MPI order (first
 * posted, first arrived: per sender and context, messages never overtake),
 * keeps unexpected ones, implements the synchronous-send acknowledgement
 * and queues sends the transport has no room for. It knows nothing of
 * communicators beyond their context ids; non-contiguous receives are
 * unpacked through the datatype engine on completion. Matching is binned
 * by context and source (core_priv.h): its cost does not grow with what
 * waits on other communicators or from other sources.
 *
 * Not thread-safe by itself: one thread at a time calls in, and no state
 * is per thread. Under MPI_THREAD_MULTIPLE the API layer serializes the
 * callers with one critical section (locus_cs.h, named in cs), which the
 * wait loops hand over in locus_core_idle while they have nothing to do.
 */
#ifndef LOCUS_CORE_H
#define LOCUS_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "locus_cs.h"
#include "locus_dtype.h"
#include "locus_err.h"
#include "locus_transport.h"

#define LOCUS_ANY (-1)          /* wildcard source / tag in locus_core_irecv */

/* Header flags. */
enum {
    LOCUS_HDR_SYNC = 1,         /* synchronous send: ack sreq when matched */
    LOCUS_HDR_ACK = 2,          /* the ack itself (no payload, no matching) */
    LOCUS_HDR_CANCEL = 4,       /* withdraw synchronous send sreq (ctx, src: its
                                   header's) if it is still unmatched */
    LOCUS_HDR_CANCEL_REPLY = 8, /* the answer: tag 1 withdrawn, 0 matched */
    LOCUS_HDR_CONTROL = LOCUS_HDR_ACK | LOCUS_HDR_CANCEL | LOCUS_HDR_CANCEL_REPLY
};

/* Wire header. Plain messages send only the first LOCUS_HDR_SHORT bytes. */
typedef struct {
    uint32_t ctx;
    int32_t src;                /* sender's rank in the communicator */
    int32_t tag;
    uint32_t flags;
    uint64_t sreq;              /* SYNC/ACK: names the sender's request (opaque
                                   to the receiver, checked when acked) */
} locus_hdr_t;
#define LOCUS_HDR_SHORT 16

enum { LOCUS_REQ_SEND = 1, LOCUS_REQ_RECV, LOCUS_REQ_GEN, LOCUS_REQ_CTRL };

typedef struct locus_req locus_req_t;
struct locus_req {
    locus_req_t *next, *prev;   /* posted queue / pending sends / free list */
    uint8_t kind;
    volatile uint8_t done;
    uint8_t freed;              /* released by the user: recycle when done */
    uint8_t tp_busy;            /* the transport still owns the buffer (a send,
                                   or a receive in rendezvous) */
    uint8_t ack_wait;           /* ssend: waiting for the receiver's ack */
    uint8_t queued;             /* send: in a peer's pending queue */
    uint8_t sending;            /* send: started, not complete (in nsend) */
    uint8_t posted : 1;         /* recv: in the posted queue */
    uint8_t cancel_wait : 1;    /* ssend: waiting for the answer to a cancel
                                   (bits: the request stays 3 cache lines) */
    uint8_t bulk : 1;           /* recv: collective traffic (LOCUS_TP_RECV_BULK) */
    uint8_t fanin : 1;          /* recv: one of many into this rank (LOCUS_TP_RECV_FANIN) */
    /* send */
    int world;                  /* destination world rank */
    uint32_t id;                /* the core's: place in the pool (names the
                                   request in a synchronous send's ack); kept
                                   across recycling */
    locus_hdr_t hdr;
    uint32_t hdrlen;
    uint32_t ctx;               /* recv: context id */
    const void *sbuf;
    /* recv */
    int rank, tag;              /* wanted source (comm rank) / tag or LOCUS_ANY */
    uint64_t seq;               /* post order, across the matching queues */
    void *rbuf;
    size_t len;                 /* send: bytes; recv: capacity in bytes */
    void *ubuf;                 /* non-contiguous recv: unpack here... */
    size_t ucount;              /* ...ucount elements of udt */
    locus_dtype_t *udt;         /* held (a reference) until the receive completes */
    void *tmp;                  /* owned buffer, freed on completion */
    /* completion status (st_error: a LOCUS_ERR_* code) */
    int st_source, st_tag, st_error, st_cancelled;
    size_t st_bytes;
    void *comm;                 /* owner (the API layer's communicator), or NULL;
                                   see locus_core_t.owner_release */
    /* generalized request */
    int (*poll)(void *state);
    void *state;
    void (*state_free)(void *state);
};

/* Matching state, private to the core (core_priv.h). */
typedef struct locus_umsg locus_umsg_t;   /* a message that arrived unexpected */
typedef struct locus_bin locus_bin_t;     /* one context's queues */

typedef struct {
    locus_tp_t *tp;             /* the transport that reaches this rank */
    locus_req_t *pq_head, *pq_tail; /* sends waiting for room, in order */
    uint64_t sent_msgs, sent_bytes; /* sends started to this rank, acks included
                                       (MPI_T counters, summed per transport) */
} locus_peer_t;

#define LOCUS_CORE_MAX_TP 5 /* self, shm, ofi, tcp, dyn */

typedef struct {
    int rank, size;             /* size: peer ids in use, the world's ranks
                                   first, then processes of other jobs
                                   (locus_core_add_peer) */
    int cap;                    /* room in peers, pend and pend_mark */
    locus_peer_t *peers;        /* [size] */
    locus_tp_t *tps[LOCUS_CORE_MAX_TP];
    int ntp;
    /* Matching: posted receives and unexpected messages binned by context
     * id (an open hash table), within a context by source. */
    locus_bin_t **bins;         /* [bins_mask + 1], NULL: free slot */
    uint32_t bins_mask;
    int nbins;
    int bins_sweep_at;          /* drop empty bins when nbins reaches this */
    locus_bin_t *bin_last;      /* the context matched last: the fast path */
    uint64_t post_seq;          /* last posted receive's seq */
    long nposted, nunexp;       /* receives posted, messages unexpected */
    uint32_t sync_seq;          /* synchronous sends started, names acks */
    locus_req_t *req_free;      /* free list */
    locus_umsg_t *umsg_free;    /* free list of small unexpected slots */
    int *pend;                  /* world ranks with queued sends */
    int npend;
    long nsend;                 /* sends started and not complete, freed ones too */
    char *pend_mark;            /* [size] 1 when in pend */
    locus_req_t *gen_head;      /* active generalized requests */
    locus_req_t *gen_cursor;    /* the next one a poll round visits */
    int gen_polling;            /* inside a poll round: no nested round */
    void **slabs;               /* request slabs, freed at finalize */
    void **slabs_by_addr;       /* the same, by address (finding a request's slab) */
    int nslabs, capslabs;
    /* The node's resources, decided once here and passed down to the
     * transports (locus_tp_init_t) and the collectives. */
    int oversubscribed;         /* the node's ranks outnumber the CPUs they may use */
    int yield;                  /* back off with sched_yield when idle */
    const char *yield_why;      /* "oversubscribed", "LOCUS_YIELD=never", ... */
    int local_size;             /* ranks on this node */
    int node_ncpus;             /* CPUs they may share, 0 unknown */
    const char *node_ncpus_from; /* "LOCUS_NODE_NCPUS", "CPUs online", ... */
    long polls_before_yield;
    long settle_ms;             /* LOCUS_SETTLE_MS: locus_core_settle's bound */
    long idle;
    long sleep_after_ns;        /* LOCUS_IDLE_SLEEP_AFTER_US, 0: never */
    long sleep_ns;              /* LOCUS_IDLE_SLEEP_US */
    int64_t idle_since_ns;      /* the first yield since the last event, 0: none */
    int fatal;                  /* a transport failed, or the core (out of
                                   memory, a malformed wire header) */
    char fatal_msg[200];
    /* Called when a request that names an owner (r->comm) is recycled, so
     * the layer above can drop the reference the request held. */
    void (*owner_release)(void *owner);
    /* MPI_THREAD_MULTIPLE: the critical section the callers hold, which
     * an idle wait releases so that other threads get in (they may be the
     * ones to send what it waits for); NULL otherwise (set after init). */
    locus_cs_t *cs;
    /* What the transports cannot see, checked by the layer above (a child
     * job that failed, dynproc/): called from progress at most every
     * 50 ms while set; non-zero fails the core with the line it wrote. */
    int (*watch)(void *arg, char *why, size_t len);
    void *watch_arg;
    int64_t watch_next_ns;
} locus_core_t;

/* Upcalls to register with every transport (core pointer: the locus_core_t). */
extern const locus_tp_upcalls_t locus_core_upcalls;

/*
 * Sets up the core for world rank/size. local_size: ranks on this node.
 * Makes the node-resource decision: c->oversubscribed (the node's ranks
 * outnumber the CPUs locus_core_node_ncpus finds) and c->yield (idle
 * polling yields: by that, unless LOCUS_YIELD says always/never;
 * c->yield_why says why). Returns 0, or -1 with a reason in err.
 */
int locus_core_init(locus_core_t *c, int rank, int size, int local_size,
                    char *err, size_t errlen);

/*
 * How many CPUs the ranks of this node may run on together: locusrun's
 * LOCUS_NODE_NCPUS (the union of the local ranks' bindings) when set, else
 * the CPUs online bounded by the cgroup's cpuset (under Hydra or alone).
 * *source names which. Returns 0 when unknown. Used by locus_core_init.
 */
int locus_core_node_ncpus(const char **source);

/* Routes every peer that tp reaches and that has no transport yet to tp. */
int locus_core_add_tp(locus_core_t *c, locus_tp_t *tp);

/* A peer outside the world (a process of another job), reached by tp: its
 * id (c->size before the call), or -1 when out of memory. The upcall
 * add_peer of locus_core_upcalls. */
int locus_core_add_peer(locus_core_t *c, locus_tp_t *tp);

/* Waits until no send is queued (unless the core failed), frees the state
 * of generalized requests still active, finalizes the transports and
 * frees everything, including what requests never completed still held
 * (packed copies, datatype references). */
void locus_core_finalize(locus_core_t *c);

/*
 * For MPI_Finalize, after the last fence (every rank has completed its
 * receives): takes the acknowledgements still on their way (over a network
 * an ack can trail the fence), for at most settle_ms, then gives up on
 * what is left. Returns how many sends were never received (and
 * completes the queued ones with an error).
 */
long locus_core_settle(locus_core_t *c);

/* A zeroed request from the free list (NULL when out of memory). */
locus_req_t *locus_core_req_get(locus_core_t *c);
/* Recycles a request (must be complete or never started). */
void locus_core_req_put(locus_core_t *c, locus_req_t *r);
/* 1 when p is a request of c's in use (not on the free list), found from
 * its address alone: a pointer that is not one is never read. */
int locus_core_req_known(const locus_core_t *c, const void *p);
/*
 * Gives up on a request whose wait failed (or that its owner no longer
 * wants): a posted receive leaves the posted queue, a queued send its
 * peer's queue, a generalized request the active list (its state is
 * freed), and the request is recycled now; one a transport still owns (a
 * send in flight, a receive in rendezvous) or an unacknowledged
 * synchronous send is recycled when that ends. The caller must not touch
 * r afterwards.
 */
void locus_core_abandon(locus_core_t *c, locus_req_t *r);

/*
 * Starts a send prepared in r (kind, world, hdr, hdrlen, sbuf, len; for
 * SYNC flags also sets hdr.sreq itself). r->done is set when the buffer
 * may be reused (and, for SYNC, the receiver matched it). Returns 0, or -1
 * when no transport reaches r->world.
 */
int locus_core_isend(locus_core_t *c, locus_req_t *r);

/*
 * A send with no request, for a blocking send whose buffer the transport
 * can take at once (a small message, room in the transport): 1 when it is
 * gone and the buffer is free; 0 when it cannot go now (sends to world
 * queued ahead of it, no transport, a large message, no room, an error),
 * and then nothing was sent: the caller sends it with a request.
 */
int locus_core_send_now(locus_core_t *c, int world, const locus_hdr_t *h, size_t hdrlen,
                        const void *buf, size_t len);

/* Starts a receive prepared in r (ctx, rank, tag, rbuf, len, optionally
 * ubuf/ucount/udt): matches the unexpected queue or posts it. A udt is
 * retained until the receive completes, so the caller may free its own
 * reference at once (MPI_Type_free while a receive is pending). */
void locus_core_irecv(locus_core_t *c, locus_req_t *r);

/* Looks for an unexpected message matching (ctx, rank, tag) without
 * receiving it: 1 and its source/tag/bytes, or 0. */
int locus_core_iprobe(locus_core_t *c, uint32_t ctx, int rank, int tag,
                      int *src, int *tagout, size_t *bytes);

/* Matched probe (MPI_Improbe): takes the unexpected message matching
 * (ctx, rank, tag) out of matching, so that no other receive gets it, and
 * returns it with its source/tag/bytes; NULL when none has arrived. The
 * message is then received only by locus_core_imrecv. */
locus_umsg_t *locus_core_improbe(locus_core_t *c, uint32_t ctx, int rank, int tag,
                                 int *src, int *tagout, size_t *bytes);
/* Receives u (from locus_core_improbe) into r, prepared as for
 * locus_core_irecv (its ctx, rank and tag are not used). */
void locus_core_imrecv(locus_core_t *c, locus_req_t *r, locus_umsg_t *u);

/* MPI_Cancel. A receive is cancelled while it is not matched; a send while
 * it waits in this rank's queue, or, a synchronous one, while the receiver
 * has not matched it (the receiver is asked; the request completes when
 * it answers, cancelled or not). Sends that have left otherwise complete
 * normally (the standard allows it). Returns 1 if cancelled now, 0 if too
 * late or the answer is pending. */
int locus_core_cancel(locus_core_t *c, locus_req_t *r);

/* Registers a generalized request (r->poll set); see mpi_impl.h. */
void locus_core_gen_add(locus_core_t *c, locus_req_t *r);

/* Marks r complete (used by the API for PROC_NULL and friends). */
void locus_core_complete(locus_core_t *c, locus_req_t *r);

/* One round of progress: every transport, queued sends, generalized
 * requests (not in a round started from inside a poll). Returns the number
 * of events, or -1 once the core failed (c->fatal; it stays failed). */
int locus_core_progress(locus_core_t *c);

/* Called by wait loops after a round with no event: spins, or yields the
 * CPU every polls_before_yield rounds when ranks outnumber cores; a rank
 * that has yielded for sleep_after_ns without an event (any round of
 * progress with one resets it) sleeps sleep_ns instead of yielding, since
 * sched_yield keeps a waiting rank runnable: it would still take its
 * share of the CPUs from the ranks (and jobs) that have work. */
static inline void locus_core_idle(locus_core_t *c);
void locus_core_idle_yield(locus_core_t *c);
/* The same with c->cs set: a wait holding the critical section lets the
 * threads blocked on it in, around a yield or the nap the rule above
 * chooses; with nobody blocked on it, it keeps it and idles as above. */
void locus_core_idle_cs(locus_core_t *c);

/* Progresses until r->done (or the core failed: returns -1). */
int locus_core_wait(locus_core_t *c, locus_req_t *r);

static inline void locus_core_idle(locus_core_t *c)
{
    if (__builtin_expect(c->cs != NULL, 0)) {
        locus_core_idle_cs(c);
        return;
    }
    if (c->yield && ++c->idle >= c->polls_before_yield) {
        c->idle = 0;
        locus_core_idle_yield(c);
    }
}

#endif
