/*
 * locus_transport.h — the contract between the core (requests, matching,
 * progress) and a transport (self, shm, tcp, ofi).
 *
 * A transport moves opaque messages between world ranks: a small header the
 * core defines (at most LOCUS_TP_HDR_MAX bytes: context id, source, tag,
 * ...) plus a payload. It knows nothing of communicators, tags or matching;
 * it may carry a header packed (ofi packs a 16-byte one as four 32-bit
 * words whose values fit its fields) as long as the same bytes arrive.
 * Between one sender and one receiver, messages are delivered in the order
 * they were sent, exactly once, whatever their size and protocol.
 *
 * Small payloads arrive whole through upcalls.deliver(). Large ones (the
 * transport decides where the line is, e.g. LOCUS_SHM_EAGER_MAX) are
 * announced with upcalls.rndv_arrived(); the core matches the header, and
 * when it has a destination buffer calls ops.rndv_recv(); the transport then
 * moves the data (pipelined copy or single copy) and calls rndv_done() on
 * the receiver and send_done() on the sender.
 *
 * Upcalls run only inside ops.progress() (or inside ops.send()/rndv_recv()
 * of the same transport); the core may call ops from inside an upcall,
 * except progress() itself.
 */
#ifndef LOCUS_TRANSPORT_H
#define LOCUS_TRANSPORT_H

#include <stddef.h>
#include <sys/types.h>

#define LOCUS_TP_HDR_MAX 48

/* Return codes of send(). */
enum {
    LOCUS_TP_DONE = 0,     /* payload copied out: the caller's buffer is free now */
    LOCUS_TP_PENDING = 1,  /* accepted; send_done(send_ctx) will follow */
    LOCUS_TP_AGAIN = 2     /* no room now: call progress() and retry; nothing was sent */
};

/* Hints of rndv_recv(). BULK: collective traffic, where both sides are
 * usually busy moving other messages at the same time, so the path that
 * copies each byte once (and needs nothing of the sender) is the better
 * one where the machine's single copy is fast at all, whatever a lone
 * stream would prefer. */
enum { LOCUS_TP_RECV_BULK = 1, LOCUS_TP_RECV_FANIN = 2 };
/* FANIN: one of many large messages converging on this receiver at once (a
 * gather's root); a transport that can have each sender copy its own into
 * the receiver's buffer spreads the copies over the senders' cores instead
 * of making the receiver's do them all. */

typedef struct locus_tp locus_tp_t;
typedef struct locus_tp_rndv locus_tp_rndv_t; /* owned by the transport */

/* Calls from a transport up into the core. `core` is init's core pointer. */
typedef struct {
    /* A whole message: hdr and data are valid only during the call. */
    void (*deliver)(void *core, int src, const void *hdr, size_t hdrlen,
                    const void *data, size_t len);
    /* A large message of `len` bytes is waiting; keep `rndv` and pass it to
     * ops.rndv_recv() once a buffer is ready (immediately or much later). */
    void (*rndv_arrived)(void *core, int src, const void *hdr, size_t hdrlen,
                         size_t len, locus_tp_rndv_t *rndv);
    /* The data of a rndv_recv() is in place. */
    void (*rndv_done)(void *core, void *recv_ctx);
    /* A PENDING send finished: its buffer may be reused. */
    void (*send_done)(void *core, void *send_ctx);
    /* For a transport that reaches processes outside the job (dyn: ports,
     * spawned children and their parents): a new peer id, past every one
     * in use (the world's ranks first), routed to tp from now on; -1 when
     * out of memory. Ids are never reused. */
    int (*add_peer)(void *core, locus_tp_t *tp);
} locus_tp_upcalls_t;

/* A key that begins with this is node-scoped: put() keeps it on the
 * putter's node, and only ranks of that node may get() it (a shared
 * segment's name); the process manager never sends it to other nodes
 * (the PMI wire's PMI_WIRE_NODE_KEY, the same string). */
#define LOCUS_TP_NODE_KEY "locus.node."

/* Key-value exchange through the process manager (PMI), given by boot. */
typedef struct {
    void *ctx;
    int (*put)(void *ctx, const char *key, const char *val);
    /* owner: the rank that put the key (PMIx keeps values per process). */
    int (*get)(void *ctx, int owner, const char *key, char *val, size_t vallen);
    int (*fence)(void *ctx); /* collective over all ranks of the job */
    /* Collective over the ranks of this node, or over the job where the
     * process manager has no node barrier (so every rank of the job calls
     * it alike): node-scoped puts before it are readable on the node after
     * it. NULL: fence. */
    int (*node_fence)(void *ctx);
    /* Collective over the job: publishes this rank's card for `name` (one
     * line of printable text, "-" when set-up failed, so every rank still
     * takes part) and makes every rank's card of that name readable with
     * card(). How cards travel (every rank gets every card, one rank per
     * node fetches them into shared memory, node roots exchange node blobs,
     * or nothing until a card is first asked for) is the boot layer's
     * choice, LOCUS_ADDR_EXCHANGE; a transport fetches a card only when it
     * first talks to that peer. */
    int (*publish)(void *ctx, const char *name, const char *card);
    int (*card)(void *ctx, const char *name, int rank, char *val, size_t vallen);
    /* After publish() or card() failed: one line saying why. */
    const char *(*error)(void *ctx);
} locus_tp_kvs_t;

typedef struct {
    int rank;                 /* this process's world rank */
    int size;                 /* world size */
    int local_rank;           /* index among the ranks of this node */
    int local_size;
    const int *local_ranks;   /* world rank of each local rank, ascending */
    locus_tp_kvs_t kvs;
    const locus_tp_upcalls_t *up;
    void *core;               /* passed back to every upcall */
    /* The node's resources, decided once by the core (locus_core.h) so that
     * every layer acts on the same answer: the node's ranks outnumber the
     * CPUs they may use. The core yields the CPU in its idle loop; a
     * transport uses this only for protocol choices (e.g. single copy). */
    int oversubscribed;
} locus_tp_init_t;

typedef struct {
    const char *name;
    /* Sends hdr+data to world rank dst. send_ctx comes back in send_done()
     * when the result is LOCUS_TP_PENDING. Negative: a fatal error. */
    int (*send)(locus_tp_t *tp, int dst, const void *hdr, size_t hdrlen,
                const void *data, size_t len, void *send_ctx);
    /* Receives an announced large message into buf (len = the announced
     * size, or less to truncate); rndv_done(recv_ctx) follows. hints:
     * LOCUS_TP_RECV_* bits, which a transport may use to pick its path. */
    int (*rndv_recv)(locus_tp_t *tp, locus_tp_rndv_t *rndv, void *buf,
                     size_t len, void *recv_ctx, int hints);
    /* Makes progress; returns the number of events handled (0: idle), or a
     * negative value on a fatal error (a peer vanished, ...). */
    int (*progress)(locus_tp_t *tp);
    /* Whether this transport reaches world rank `peer`. */
    int (*reaches)(locus_tp_t *tp, int peer);
    /* Releases everything; all traffic must be complete. */
    void (*finalize)(locus_tp_t *tp);
    /* Optional (NULL: not offered). Sleeps until something may be ready for
     * progress() (a socket became readable or writable) or timeout_ms
     * passed; for a core that is idle while ranks outnumber cores. Returns
     * >0 when woken by an event, 0 on timeout, negative on a fatal error. */
    int (*wait)(locus_tp_t *tp, int timeout_ms);
    /* Optional: after progress() or send() failed, one line saying why
     * (which peer, which interface), or NULL. */
    const char *(*last_error)(locus_tp_t *tp);
    /* Optional (NULL: none): a few words on how this transport runs here
     * for LOCUS_VERBOSE=1, e.g. "single copy cma from 1G". */
    void (*describe)(locus_tp_t *tp, char *buf, size_t len);
    /* Optional (NULL: none): where this rank's traffic leaves the node, for
     * --report-bindings and the start-up report: the provider and domains
     * ("tcp;ofi_rxm eth0+eth1"), or the interfaces ("eth0+eth1"). */
    void (*where)(locus_tp_t *tp, char *buf, size_t len);
    /* Optional (NULL: not offered): send() only where it completes at once
     * (a small message with room): LOCUS_TP_DONE, or LOCUS_TP_AGAIN with
     * nothing sent (it would have been PENDING, or no room), or negative
     * on a fatal error. For the core's blocking sends with no request. */
    int (*send_now)(locus_tp_t *tp, int dst, const void *hdr, size_t hdrlen,
                    const void *data, size_t len);
} locus_tp_ops_t;

/* Every transport object starts with its ops, so the core can call
 * tp->ops->send(tp, ...) without knowing the rest. */
struct locus_tp {
    const locus_tp_ops_t *ops;
};

/*
 * Constructors, one per transport. Collective over the job (they may use the
 * kvs exchange and fence). Return 0 and *out, or -1 with a one-line reason.
 * A transport that cannot run here (e.g. shm with local_size 1) returns 0
 * with *out = NULL.
 */
int locus_tp_self_create(const locus_tp_init_t *init, locus_tp_t **out,
                         char *err, size_t errlen);
int locus_tp_shm_create(const locus_tp_init_t *init, locus_tp_t **out,
                        char *err, size_t errlen);
int locus_tp_tcp_create(const locus_tp_init_t *init, locus_tp_t **out,
                        char *err, size_t errlen);
int locus_tp_ofi_create(const locus_tp_init_t *init, locus_tp_t **out,
                        char *err, size_t errlen);
/* The libfabric provider this rank would get first (empty: none), and
 * whether a provider is a software one (tcp, udp, ...) rather than a fabric. */
void locus_ofi_probe(char *prov, size_t provlen);
int locus_ofi_is_software(const char *prov);

/* A domain libfabric offers for the ofi transport (locus info). */
typedef struct {
    char provider[64], domain[64];
    char pci[16];      /* its NIC's PCI address, "" when none is described */
    int software;      /* provider is a software one, not a fabric */
} locus_ofi_domain_t;

/* Up to max of the domains fi_getinfo offers (FI_PROVIDER and
 * LOCUS_OFI_PROVIDER honoured), each once, in libfabric's order of
 * preference; returns how many there are (may exceed max), 0 when none. */
int locus_ofi_domains(locus_ofi_domain_t *out, int max);

#endif
