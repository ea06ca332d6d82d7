/*
 * Moving messages: send (eager fast path, rendezvous announce), rndv_recv
 * (CMA, CMA split between both sides, or pipelined), and progress (ring
 * polling, chunk pump, owed control).
 */
#include "locus_copy.h"
#include "shm_cma.h"
#include "shm_tp.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define PAD8(n) (((size_t)(n) + 7u) & ~(size_t)7u)
#define RING_BUDGET 16 /* messages taken from one ring per progress call */

/* Cell bodies of the control messages (after the 16-byte head). */
/* RTS: aux = sid, the core header follows; chunk: 1 + the chunk of the sender's pool holding
 * the data (0: none), copy_ns: the time that copy took. */
typedef struct { uint64_t len, addr; uint32_t chunk, copy_ns; } shm_rts_t;
typedef struct { uint64_t want; uint32_t rid, split; uint64_t addr, at; } shm_cts_t; /* aux = sid;
    split: 1 = write [0, at) of my buffer (addr) with CMA, then WROTE */
typedef struct { uint64_t off; uint32_t chunk, pad; } shm_chunk_t; /* aux = rid, len = bytes */
/* FIN: aux = sid, len = 1 when the data was read by CMA, no body. WROTE: aux = rid, body an
 * int32_t: 0 or -errno. */

/* Split single copy: from this size, when each rank has its core, the
 * receiver reads the second half while the sender writes the first, two
 * cores copying at once (measured on the 2-vCPU VM with osu_bw: 9-13.5,
 * 15-18, 20-21 and 21-23 GB/s at 64 KiB, 128 KiB, 256 KiB and 1 MiB
 * against 10-13 for one process_vm_readv). */
#define SPLIT_MIN (64u << 10)
#define SPLIT_EXCHANGE_MIN (512u << 10)
/* Rendezvous messages up to this size carry their data in a chunk of the
 * sender's pool, so that a receiver that prefers the pipelined copy takes
 * it at once, two trips sooner: on the 2-vCPU VM osu_latency at 8-32 KiB
 * then fell from 1.6-4.8 us to 0.8-2.2 (32k chunks) while the vCPUs shared
 * a cache; while they did not, the copy-out ran at 2.4 GB/s and the
 * measured choice (shm_path.h) reads by CMA instead. Larger ones are split
 * or pipelined in pieces that overlap. */
#define RTS_DATA_MAX (32u << 10)
/* Eager messages from this size carry their payload in a chunk of the
 * sender's pool, the ring cell only the header: on a Xeon VM osu_latency
 * of 256 B / 1 KiB / 4 KiB took 0.33 / 0.49 / 0.91-0.96 us so against 0.40
 * / 0.59 / 1.2 through the ring's cells (Open MPI 0.37 / 0.71 / 1.33,
 * MPICH 0.47 / 0.63 / 1.05), and osu_bw of 1 / 4 KiB ran at 6.2 / 11 GB/s
 * against 2.5 / 6.5 (why: docs/shm.md). 128 B took 0.32 us either way. */
#define POOLED_EAGER_MIN 129u
/* Collective traffic goes by CMA from this size, where the rule takes CMA
 * at all (cma_wanted). */
#define BULK_CMA_MIN (32u << 10)
/* Messages of a fan-in (LOCUS_TP_RECV_FANIN) from this size, when single
 * copy is the way, are written by their senders: 4 ranks on 2 cores, IMB
 * Gather of 1 / 2 / 4 MiB took 272-294 / 687-825 / 1643-1952 us so
 * against 395-413 / 965-1019 / 1944-2205 read by the root (Open MPI
 * 339-363 / 862-936 / 1933-1998). */
#define FANIN_WRITE_MIN BULK_CMA_MIN

/* A free chunk of my pool, or -1. The search keeps to the first
 * pool_span chunks, so that one message, which holds at most send_ahead
 * of them, runs through the same few (in cache: the pipelined
 * collectives of 2-4 MiB on the EPYC VM ran 10-35 % slower through the
 * whole of a 4 MiB pool than through 1 MiB); when they are all taken
 * (a window of messages) the span doubles, up to the pool, and shrinks
 * back when pipelining starts anew. Chunks come back roughly in order, so
 * a rotating cursor usually finds one at the first look. */
static int pool_find(shm_tp_t *tp)
{
    for (;;) {
        for (uint32_t i = 0; i < tp->pool_span; i++) {
            uint32_t k = tp->pool_next + i;
            if (k >= tp->pool_span)
                k -= tp->pool_span;
            if (atomic_load_explicit(&tp->pool_state[k * 16], memory_order_acquire) ==
                SHM_CHUNK_FREE)
                return (int)k;
        }
        if (tp->pool_span == tp->pool_chunks)
            return -1;
        tp->pool_next = tp->pool_span;
        tp->pool_span = tp->pool_span * 2 < tp->pool_chunks ? tp->pool_span * 2 : tp->pool_chunks;
    }
}

/* Pipelining starts with no other send pipelining: back to the first
 * chunks (pool_find). */
static void pool_span_reset(shm_tp_t *tp)
{
    tp->pool_span = tp->send_ahead ? tp->send_ahead : tp->pool_chunks;
    if (tp->pool_next >= tp->pool_span)
        tp->pool_next = 0;
}

/* Marks chunk k of my pool busy and copies len bytes of data into it; the
 * next search starts after it. */
static void pool_fill(shm_tp_t *tp, int k, const void *data, size_t len)
{
    atomic_store_explicit(&tp->pool_state[k * 16], SHM_CHUNK_BUSY, memory_order_relaxed);
    tp->chunk_owner[k] = 0;
    locus_copy(tp->pool + (uint64_t)k * tp->chunk_size, data, len);
    tp->pool_next = (uint32_t)k + 1 >= tp->pool_span ? 0 : (uint32_t)k + 1;
}

/* The receiver's side of the pool: chunk k of peer p's pool is free again
 * (a store, no message). */
static void peer_chunk_free(shm_peer_t *p, uint32_t k)
{
    atomic_store_explicit(&p->pool_state[k * 16], SHM_CHUNK_FREE, memory_order_release);
}

/* Whether the path to p is chosen by measurement (auto, a core per rank,
 * CMA possible): only then are large transfers timed (shm_path.h). */
static int path_measured(const shm_tp_t *tp, const shm_peer_t *p)
{
    return tp->single_copy == SHM_SC_AUTO && !tp->oversubscribed && p->cma;
}

/* This machine's rule (LOCUS_SHM_CMA_MIN/MAX, from `locus tune`): whether
 * a message of want bytes goes by CMA before, or without, measurement. */
static int cma_by_rule(const shm_tp_t *tp, uint64_t want)
{
    return want >= tp->cma_min && want < tp->cma_max;
}

/* The bit of the size class of a message that may come with its data. */
static uint32_t class_bit(uint64_t len)
{
    int k = len <= RTS_DATA_MAX ? shm_path_class(len) : -1;
    return k < 0 ? 0 : 1u << k;
}

/* Puts a copy of data in a chunk of my pool and names it in rts, unless no
 * chunk is free or the receiver is bound to read by CMA. Such chunks wait
 * until their message is matched, which may be never while the receiver
 * waits for a pipelined message of mine: at most half the pool holds them.
 * Where the receiver chooses its path by measurement (shm_path.h), the
 * search and the copy are timed for it: lines the receiver's core last
 * touched (the chunk's state, its data) cost as much here as its own copy
 * there. */
static void rts_data(shm_tp_t *tp, const shm_peer_t *p, const void *data, size_t len,
                     shm_rts_t *rts)
{
    if (len > RTS_DATA_MAX || len > tp->chunk_size || tp->single_copy == SHM_SC_CMA ||
        (tp->oversubscribed && p->cma && tp->single_copy == SHM_SC_AUTO && cma_by_rule(tp, len)) ||
        tp->data_chunks >= tp->pool_chunks / 2 || (p->reads_cma & class_bit(len)))
        return;
    uint64_t t0 = path_measured(tp, p) ? locus_now_ns() : 0;
    int k = pool_find(tp);
    if (k < 0)
        return;
    pool_fill(tp, k, data, len);
    uint64_t ns = t0 ? locus_now_ns() - t0 : 0;
    rts->copy_ns = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
    rts->chunk = (uint32_t)k + 1;
    tp->stats.rts_data++;
    tp->data_chunks++;
}

/* The receiver answered (CTS: pipelined, or FIN, by_cma: read by CMA): it
 * freed the chunk with the data, and says which path it takes at this
 * size, so that data goes with the announcements only while it copies
 * them out (until its next pipelined answer, after a probe or a change). */
static void rts_data_done(shm_tp_t *tp, shm_peer_t *p, shm_sreq_t *s, int by_cma)
{
    if (s->with_data) {
        s->with_data = 0;
        tp->data_chunks--;
    }
    if (by_cma)
        p->reads_cma |= class_bit(s->len);
    else
        p->reads_cma &= ~class_bit(s->len);
}

/* An eager message with its payload in a free chunk of my pool and its
 * header in one ring cell; 0 when no chunk is free or the ring is full
 * (the caller then tries the ring's cells). The receiver frees the chunk
 * once it has delivered the message, matched or not: no answer comes
 * back, so these chunks never wait on a match as an RTS's data does. */
static int send_pooled(shm_tp_t *tp, shm_peer_t *p, const void *hdr, size_t hdrlen,
                       const void *data, size_t len)
{
    int k = pool_find(tp);
    uint32_t n = shm_ring_cells_for(hdrlen);
    shm_cell_t *c = k >= 0 ? shm_ring_reserve(&p->tx, n) : NULL;
    if (!c)
        return 0;
    pool_fill(tp, k, data, len);
    c->type = SHM_T_MSG_POOLED;
    c->hdrlen = (uint8_t)hdrlen;
    c->len = (uint32_t)len;
    c->aux = (uint32_t)k;
    if (hdrlen)
        memcpy(c->body, hdr, hdrlen);
    shm_ring_commit(&p->tx, c, n);
    p->stalled = 0;
    tp->stats.eager_sent++;
    tp->stats.eager_pooled++;
    return 1;
}

static int send_rndv(shm_tp_t *tp, int l, const void *hdr, size_t hdrlen,
                     const void *data, size_t len, void *ctx)
{
    shm_peer_t *p = &tp->peers[l];
    if (hdrlen > LOCUS_TP_HDR_MAX)
        return -EINVAL;
    uint32_t n = shm_ring_cells_for(sizeof(shm_rts_t) + hdrlen);
    shm_cell_t *c = shm_ring_reserve(&p->tx, n);
    if (!c) {
        p->stalled = 1;
        tp->stats.again++;
        return LOCUS_TP_AGAIN;
    }
    shm_sreq_t *s = tp_ids_get(&tp->sids, sizeof *s);
    if (!s)
        return -ENOMEM;
    s->peer = l;
    s->buf = data;
    s->len = len;
    s->ctx = ctx;
    shm_rts_t rts = { len, (uint64_t)(uintptr_t)data, 0, 0 };
    rts_data(tp, p, data, len, &rts);
    s->with_data = rts.chunk != 0;
    c->type = SHM_T_RTS;
    c->hdrlen = (uint8_t)hdrlen;
    c->len = 0;
    c->aux = s->id;
    memcpy(c->body, &rts, sizeof rts);
    if (hdrlen)
        memcpy(c->body + sizeof rts, hdr, hdrlen);
    shm_ring_commit(&p->tx, c, n);
    p->stalled = 0;
    p->outstanding++;
    p->sending++;
    tp->stats.rndv_sent++;
    return LOCUS_TP_PENDING;
}

/* send_eager's answer for a message too large to go eagerly. */
#define SHM_NOT_EAGER 3

/* An eager send to local rank l: DONE, AGAIN (no room) or SHM_NOT_EAGER. */
static inline int send_eager(shm_tp_t *tp, int l, const void *hdr, size_t hdrlen,
                             const void *data, size_t len)
{
    shm_peer_t *p = &tp->peers[l];
    if (len >= POOLED_EAGER_MIN && len <= p->eager_max && len <= tp->chunk_size &&
        hdrlen <= LOCUS_TP_HDR_MAX && send_pooled(tp, p, hdr, hdrlen, data, len))
        return LOCUS_TP_DONE;
    /* The fast path: header and payload straight into the peer's ring. */
    if (len <= p->inline_max && hdrlen <= LOCUS_TP_HDR_MAX) {
        size_t off = PAD8(hdrlen);
        uint32_t n = shm_ring_cells_for(off + len);
        shm_cell_t *c = shm_ring_reserve(&p->tx, n);
        if (!c) {
            p->stalled = 1;
            tp->stats.again++;
            return LOCUS_TP_AGAIN;
        }
        c->type = SHM_T_MSG;
        c->hdrlen = (uint8_t)hdrlen;
        c->len = (uint32_t)len;
        if (hdrlen)
            memcpy(c->body, hdr, hdrlen);
        if (len)
            memcpy(c->body + off, data, len);
        shm_ring_commit(&p->tx, c, n);
        p->stalled = 0;
        tp->stats.eager_sent++;
        return LOCUS_TP_DONE;
    }
    return SHM_NOT_EAGER;
}

int shm_tp_send(locus_tp_t *t, int dst, const void *hdr, size_t hdrlen,
                const void *data, size_t len, void *ctx)
{
    shm_tp_t *tp = (shm_tp_t *)t;
    if ((unsigned)dst >= (unsigned)tp->size || tp->local_of[dst] < 0)
        return -EINVAL;
    int l = tp->local_of[dst];
    int rc = send_eager(tp, l, hdr, hdrlen, data, len);
    return rc != SHM_NOT_EAGER ? rc : send_rndv(tp, l, hdr, hdrlen, data, len, ctx);
}

int shm_tp_send_now(locus_tp_t *t, int dst, const void *hdr, size_t hdrlen, const void *data,
                    size_t len)
{
    shm_tp_t *tp = (shm_tp_t *)t;
    if ((unsigned)dst >= (unsigned)tp->size || tp->local_of[dst] < 0)
        return -EINVAL;
    int rc = send_eager(tp, tp->local_of[dst], hdr, hdrlen, data, len);
    return rc != SHM_NOT_EAGER ? rc : LOCUS_TP_AGAIN;
}

/* ---- receiver side of large messages ---- */

static void rndv_complete(shm_tp_t *tp, locus_tp_rndv_t *r)
{
    void *ctx = r->ctx;
    if (r->mode != SHM_M_RULE)
        shm_stream_done(&tp->peers[r->peer].stream, r->want, r->by_cma, locus_now_ns());
    tp->peers[r->peer].outstanding--;
    tp_ids_put(&tp->rids, r->id);
    tp->up.rndv_done(tp->core, ctx);
}

/* Puts the CTS or FIN that `r` owes into the ring; 0 when the ring is full. */
static int owed_push(shm_tp_t *tp, locus_tp_rndv_t *r)
{
    shm_peer_t *p = &tp->peers[r->peer];
    shm_cell_t *c = shm_ring_reserve(&p->tx, 1);
    if (!c)
        return 0;
    c->hdrlen = 0;
    c->len = 0;
    c->aux = r->sid;
    if (r->state == SHM_R_OWE_CTS || r->state == SHM_R_OWE_SPLIT) {
        int split = r->state == SHM_R_OWE_SPLIT;
        shm_cts_t cts = { r->want, r->id, (uint32_t)split,
                          split ? (uint64_t)(uintptr_t)r->buf : 0, split ? r->split : 0 };
        c->type = SHM_T_CTS;
        memcpy(c->body, &cts, sizeof cts);
    } else {
        c->type = SHM_T_FIN;
        c->len = (uint32_t)r->by_cma;
    }
    shm_ring_commit(&p->tx, c, 1);
    return 1;
}

/* After the owed message went out: wait for data, or finish. */
static void owed_sent(shm_tp_t *tp, locus_tp_rndv_t *r)
{
    if (r->state == SHM_R_OWE_SPLIT) {
        r->state = SHM_R_SPLIT;
    } else if (r->state == SHM_R_OWE_CTS && r->want > 0) {
        r->state = SHM_R_DATA;
        shm_peer_t *p = &tp->peers[r->peer];
        if (r->mode == SHM_M_LONE && p->pipe_active++ == 0)
            p->pipe_mark = locus_now_ns();
    } else {
        rndv_complete(tp, r);
    }
}

static void owed_add(shm_tp_t *tp, locus_tp_rndv_t *r)
{
    if (owed_push(tp, r)) {
        owed_sent(tp, r);
    } else {
        r->next = tp->owed;
        tp->owed = r;
    }
}

static int owed_flush(shm_tp_t *tp)
{
    locus_tp_rndv_t *list = tp->owed, *next;
    int n = 0;
    tp->owed = NULL; /* upcalls below may add to it */
    for (locus_tp_rndv_t *r = list; r; r = next) {
        next = r->next;
        if (owed_push(tp, r)) {
            owed_sent(tp, r);
            n++;
        } else {
            r->next = tp->owed;
            tp->owed = r;
        }
    }
    return n;
}

/* Collective traffic this large goes by plain CMA, unmeasured, on a
 * machine whose rule (LOCUS_SHM_CMA_MIN, from `locus tune`) takes CMA from
 * there; elsewhere it takes the measured paths like any message: on the
 * EPYC VM, whose calibration says CMA never, 2 ranks' reduce of 32 KiB /
 * 256 KiB / 1 MiB took 3.3 / 21 / 68-76 us so against 5.9-6.1 / 35-36 /
 * 86-89 by plain CMA (Open MPI 5.4 / 34-35 / 137-141), scatter 2.7 / 20-23
 * / 76-77 against 5.1-5.3 / 27 / 96-100. */
static int bulk_cma(const shm_tp_t *tp, uint64_t want, int hints)
{
    return (hints & LOCUS_TP_RECV_BULK) && want >= BULK_CMA_MIN && want >= tp->cma_min;
}

/* auto: CMA from cma_min up to cma_max (this machine's rule, `locus tune`)
 * to begin with, then the path measured faster with this peer at this size
 * (shm_path.h). When ranks outnumber cores, the rule alone: nothing is
 * measured there, and the rule follows the machine (uncalibrated: CMA for
 * every large message, shm_create.c). Where CMA is fast, it wins there by
 * needing only the receiver to run; on the EPYC VM, whose CMA never kept
 * up, the pipeline won instead: 4 ranks on 2 cores, IMB Gather / Alltoall
 * of 1 MiB 172-183 / 918-944 us against 291-294 / 1075-1084 by CMA (Open
 * MPI 371-401 / 1087-1126). */
static int cma_wanted(shm_tp_t *tp, shm_peer_t *p, locus_tp_rndv_t *r, int hints)
{
    uint64_t want = r->want;
    r->mode = SHM_M_RULE;
    if (!p->cma || want == 0)
        return 0;
    if (tp->single_copy != SHM_SC_AUTO)
        return tp->single_copy == SHM_SC_CMA;
    if (tp->oversubscribed)
        return cma_by_rule(tp, want);
    /* Collective traffic: both sides are busy, so the pipelined copy's
     * rate in a lone stream says little, and CMA (one copy, by the
     * receiver alone) is what Open MPI uses too, where this machine's CMA
     * is fast at all (bulk_cma). With the 1 MiB pool of 128 KiB chunks of
     * before, the EPYC VM ran reduce/allreduce/reduce_scatter of 256
     * KiB-4 MiB 1.3-1.9x faster so than by the measured choice; with
     * today's pool the pipeline wins there (bulk_cma). Below 32 KiB, the
     * measured choice, as for any message: 8-16 KiB reduce on 2 ranks took
     * 1.7 and 3.4 us by the pipeline against 3.2 and 4.3 by CMA while the
     * vCPUs shared a cache, and 5.5 and 10 against 3.3 and 4.1 (Open MPI's,
     * by CMA) while they did not. */
    if (bulk_cma(tp, want, hints))
        return 1;
    int rule = cma_by_rule(tp, want);
    if (shm_path_class(want) < 0 || !path_measured(tp, p))
        return rule;
    /* Amid others (a stream, an exchange) a lone message's measure says
     * little, and one message's probe of the other path measures the
     * others' traffic too: osu_bw of 64 KiB on a Xeon VM stayed on the
     * pipeline (18 GB/s) against CMA's 23.5, CMA's probes amid pipelined
     * messages taking 13-16. A stream measures its paths by epochs
     * (shm_path.h); a message amid my own sends takes the path lone ones
     * measured faster. */
    if (shm_stream_match(&p->stream, want, locus_now_ns())) {
        r->mode = SHM_M_STREAM;
        return shm_stream_path(&p->stream, want, shm_path_best(&p->path, want, rule));
    }
    r->mode = p->outstanding == 1 ? SHM_M_LONE : SHM_M_AMID;
    return r->mode == SHM_M_LONE ? shm_path_choose(&p->path, want, rule)
                                 : shm_path_best(&p->path, want, rule);
}

/* A single-copy read from peer p: 0, -ECONNRESET (the transport failed:
 * the peer died), or another -errno after which the caller pipelines. */
static int cma_read_checked(shm_tp_t *tp, shm_peer_t *p, void *buf, uint64_t addr, size_t len)
{
    int rc = shm_cma_read(p->pid, buf, addr, len);
    /* The read went by pid: were the sender dead by now, its pid might
     * belong to another process and the bytes be that one's. Alive after
     * the read means it was the sender during the read. */
    if (rc == 0 && shm_alive_check(&p->alive) != SHM_ALIVE_YES) {
        snprintf(tp->error, sizeof tp->error,
                 "shm: local rank %d (world rank %d) died during a single-copy read from it",
                 (int)(p - tp->peers), p->world);
        return tp->failed = -ECONNRESET;
    }
    /* Refused by the kernel (Yama, seccomp, no CMA): stop trying; other
     * errors fall back for this message only. */
    if (rc == -ENOSYS)
        for (int i = 0; i < tp->local_size; i++)
            tp->peers[i].cma = 0;
    else if (rc == -EPERM)
        p->cma = 0;
    return rc;
}

/* Split single copy, receiver side: once my half and the sender's are
 * accounted for, FIN, or, if either failed, a plain CTS: the sender then
 * pipelines the whole message (its buffer is still there). */
static void split_check(shm_tp_t *tp, locus_tp_rndv_t *r)
{
    int mine = r->halves & (SHM_HALF_MINE | SHM_HALF_MINE_FAILED);
    int theirs = r->halves & (SHM_HALF_THEIRS | SHM_HALF_THEIRS_FAILED);
    if (!mine || !theirs)
        return;
    if (r->halves == (SHM_HALF_MINE | SHM_HALF_THEIRS) && r->split == r->want) {
        /* The sender wrote it all and is done with its buffer: no FIN. */
        tp->stats.cma_recv++;
        tp->stats.written_recv++;
        rndv_complete(tp, r);
        return;
    }
    if (r->halves == (SHM_HALF_MINE | SHM_HALF_THEIRS)) {
        r->state = SHM_R_OWE_FIN;
        tp->stats.cma_recv++;
        tp->stats.split_recv++;
        /* Timed if it stayed alone: a window's other messages, matched
         * while it waited for the sender's half, took their turns in its
         * time (a window of 16 made CMA look 10x slower, and osu_bw went
         * by the pipeline). */
        shm_peer_t *p = &tp->peers[r->peer];
        if (r->split_t0 && p->matched == r->match_no)
            shm_path_record(&p->path, r->want, 1, locus_now_ns() - r->split_t0);
    } else {
        r->state = SHM_R_OWE_CTS;
        r->by_cma = 0;
        tp->stats.cma_fallbacks++;
    }
    owed_add(tp, r);
}

/* Asks the sender to write [0, at) (the CTS goes out first, so it copies
 * while I do), then reads the rest: the second half of a split, nothing of
 * one of many messages converging on me (a gather's root: each sender
 * writes its whole message when it runs, so the copies spread over the
 * senders' cores instead of all running on mine). */
static int split_start(shm_tp_t *tp, shm_peer_t *p, locus_tp_rndv_t *r, uint64_t at)
{
    int mine = at < r->want;
    r->split = at;
    r->split_t0 = mine && r->mode == SHM_M_LONE ? locus_now_ns() : 0;
    r->match_no = p->matched;
    r->halves = 0;
    r->state = SHM_R_OWE_SPLIT;
    owed_add(tp, r);
    int rc = mine ? cma_read_checked(tp, p, r->buf + at, r->addr + at, r->want - at) : 0;
    if (rc == -ECONNRESET)
        return rc;
    r->halves |= rc == 0 ? SHM_HALF_MINE : SHM_HALF_MINE_FAILED;
    split_check(tp, r);
    return 0;
}

/* Messages both ways (an exchange) keep the sender busy with my traffic
 * too: there the halves pay from SPLIT_EXCHANGE_MIN. On a Xeon VM, IMB
 * Sendrecv of 64 KiB took 5-8.5 us split and 3.4-3.6 by the receiver's
 * CMA; of 256 KiB, Sendrecv / Exchange / 2 ranks' Allgather and Alltoall
 * took 11.3 / 22.1 / 16.0 / 16.5 us split against 10.1 / 18.6 / 14.7 /
 * 14.5 (Open MPI 12.6 / 19.7 / 15.2 / 15.7). A stream one way (osu_bw)
 * splits from SPLIT_MIN, as a lone message does: 64 / 128 KiB ran at
 * 29-31.5 / 41-42 GB/s split against 22-24 / 26-27 by the receiver's CMA
 * (Open MPI and MPICH 23-24 / 27-28). */
static int split_pays(const shm_peer_t *p, uint64_t want)
{
    return want >= (p->sending ? SPLIT_EXCHANGE_MIN : SPLIT_MIN);
}

static void chunk_free(shm_peer_t *p, locus_tp_rndv_t *r)
{
    peer_chunk_free(p, r->chunk - 1);
    r->chunk = 0;
}

/* The data came with the announcement: copy it out, free its chunk, FIN.
 * The path's cost is both copies, the sender's and mine. */
static int copy_out(shm_tp_t *tp, shm_peer_t *p, locus_tp_rndv_t *r)
{
    uint64_t t0 = r->mode == SHM_M_LONE ? locus_now_ns() : 0;
    locus_copy(r->buf, p->pool + (uint64_t)(r->chunk - 1) * p->chunk_size, r->want);
    chunk_free(p, r);
    if (t0)
        shm_path_record(&p->path, r->want, 0, locus_now_ns() - t0 + r->copy_ns);
    tp->stats.pipe_recv++;
    r->state = SHM_R_OWE_FIN;
    owed_add(tp, r);
    return 0;
}

int shm_tp_rndv_recv(locus_tp_t *t, locus_tp_rndv_t *r, void *buf, size_t len, void *ctx,
                     int hints)
{
    shm_tp_t *tp = (shm_tp_t *)t;
    if (!r || !r->busy || r->state != SHM_R_ARRIVED)
        return -EINVAL;
    shm_peer_t *p = &tp->peers[r->peer];
    r->buf = buf;
    r->want = len < r->len ? len : r->len;
    r->ctx = ctx;
    r->state = SHM_R_OWE_CTS;
    p->outstanding++;
    p->matched++;
    r->pipe_ns = 0;
    int cma = cma_wanted(tp, p, r, hints);
    r->by_cma = cma; /* until a read fails */
    if (r->chunk) {
        if (!cma)
            return copy_out(tp, p, r);
        chunk_free(p, r);
    }
    if (cma) {
        /* Splitting needs the sender to take its half at once: collective
         * traffic keeps it busy with its own transfers, and the split then
         * ran 2-4x slower than one side copying it all. Forced CMA splits
         * too, so that `locus tune` measures CMA as auto takes it. */
        if (!tp->oversubscribed && split_pays(p, r->want) &&
            !p->no_split && !(hints & LOCUS_TP_RECV_BULK))
            return split_start(tp, p, r, (r->want / 2) & ~(uint64_t)4095);
        if ((hints & LOCUS_TP_RECV_FANIN) && !p->no_split && r->want >= FANIN_WRITE_MIN)
            return split_start(tp, p, r, r->want);
        int measured = r->mode == SHM_M_LONE;
        uint64_t t0 = measured ? locus_now_ns() : 0;
        int rc = cma_read_checked(tp, p, buf, r->addr, r->want);
        if (rc == -ECONNRESET)
            return rc;
        if (rc == 0) {
            r->state = SHM_R_OWE_FIN;
            tp->stats.cma_recv++;
            if (measured)
                shm_path_record(&p->path, r->want, 1, locus_now_ns() - t0);
        } else {
            r->by_cma = 0;
            tp->stats.cma_fallbacks++;
        }
    }
    owed_add(tp, r);
    return 0;
}

/* ---- sender side of large messages ---- */

static void send_complete(shm_tp_t *tp, shm_sreq_t *s)
{
    void *ctx = s->ctx;
    tp->peers[s->peer].outstanding--;
    tp->peers[s->peer].sending--;
    tp_ids_put(&tp->sids, s->id);
    tp->up.send_done(tp->core, ctx);
}

/* Whether `s` holds as many chunks as it may (SHM_SEND_AHEAD_MAX): those
 * its receiver freed, or that another message has taken since, are not
 * held any more. */
static int send_ahead_full(const shm_tp_t *tp, shm_sreq_t *s)
{
    if (!tp->send_ahead)
        return 0;
    while (s->held_n) {
        uint32_t k = s->held[s->held_first];
        if (tp->chunk_owner[k] == s->id + 1 &&
            atomic_load_explicit(&tp->pool_state[k * 16], memory_order_acquire) != SHM_CHUNK_FREE)
            break;
        s->held_first = (s->held_first + 1) % SHM_SEND_AHEAD_MAX;
        s->held_n--;
    }
    return s->held_n >= tp->send_ahead;
}

/* Copies one chunk of `s` into the pool and announces it: 1 done, 0 no
 * chunk free, -1 the peer's ring is full, 2 `s` is as far ahead of its
 * receiver as it may be. */
static int pump_chunk(shm_tp_t *tp, shm_sreq_t *s)
{
    if (send_ahead_full(tp, s))
        return 2;
    int k = pool_find(tp);
    if (k < 0)
        return 0;
    shm_cell_t *c = shm_ring_reserve(&tp->peers[s->peer].tx, 1);
    if (!c)
        return -1;
    uint64_t m = s->want - s->sent;
    if (m > tp->chunk_size)
        m = tp->chunk_size;
    pool_fill(tp, k, s->buf + s->sent, m);
    if (tp->send_ahead) {
        tp->chunk_owner[k] = s->id + 1;
        s->held[(s->held_first + s->held_n++) % SHM_SEND_AHEAD_MAX] = (uint16_t)k;
    }
    shm_chunk_t ch = { s->sent, (uint32_t)k, 0 };
    c->type = SHM_T_CHUNK;
    c->hdrlen = 0;
    c->len = (uint32_t)m;
    c->aux = s->rid;
    memcpy(c->body, &ch, sizeof ch);
    shm_ring_commit(&tp->peers[s->peer].tx, c, 1);
    s->sent += m;
    tp->stats.chunks_sent++;
    return 1;
}

/* Feeds the pipelining sends, one chunk each per round, so that several
 * receivers share the pool fairly. */
static int pump(shm_tp_t *tp)
{
    int n = 0, moved;
    do {
        moved = 0;
        for (shm_sreq_t **pp = &tp->active; *pp;) {
            shm_sreq_t *s = *pp;
            int rc = pump_chunk(tp, s);
            if (rc == 0) {
                tp->stats.pool_full++;
                return n; /* pool exhausted: wait for the receivers */
            }
            if (rc == 1) {
                moved = 1;
                n++;
            } else if (rc == 2) {
                tp->stats.ahead_waits++;
            }
            if (s->sent == s->want) {
                *pp = s->next;
                send_complete(tp, s);
            } else {
                pp = &s->next;
            }
        }
    } while (moved);
    return n;
}

/* Split single copy, sender side: tells the receiver how its write went;
 * 0 when the ring is full (the send then waits on tp->owe_wrote). */
static int wrote_push(shm_tp_t *tp, shm_sreq_t *s)
{
    shm_cell_t *c = shm_ring_reserve(&tp->peers[s->peer].tx, 1);
    if (!c)
        return 0;
    int32_t status = s->wrote;
    c->type = SHM_T_WROTE;
    c->hdrlen = 0;
    c->len = 0;
    c->aux = s->rid;
    memcpy(c->body, &status, sizeof status);
    shm_ring_commit(&tp->peers[s->peer].tx, c, 1);
    return 1;
}

/* After its WROTE went out: a send that wrote the whole message is done
 * (the receiver sends no FIN for it); one whose write failed, or that
 * wrote a half, waits for the receiver's answer. */
static void wrote_sent(shm_tp_t *tp, shm_sreq_t *s)
{
    if (s->wrote == 0 && s->wrote_all)
        send_complete(tp, s);
}

static int owe_wrote_flush(shm_tp_t *tp)
{
    int n = 0;
    for (shm_sreq_t **pp = &tp->owe_wrote; *pp;) {
        shm_sreq_t *s = *pp;
        if (!wrote_push(tp, s))
            break;
        *pp = s->next;
        wrote_sent(tp, s);
        n++;
    }
    return n;
}

/* Writes [0, at) of s into the receiver's buffer at addr; the send then
 * waits for FIN (or a plain CTS, if either half failed). */
static int split_write(shm_tp_t *tp, shm_peer_t *p, shm_sreq_t *s, uint64_t addr, uint64_t at)
{
    if (at > s->want)
        return -EPROTO;
    /* Written by pid: check first that the receiver is the one alive under
     * it (a dead one's pid could be another process's by now). */
    s->wrote = shm_alive_check(&p->alive) == SHM_ALIVE_YES
                   ? shm_cma_write(p->pid, s->buf, addr, (size_t)at) : -ESRCH;
    s->wrote_all = at == s->want;
    if (!wrote_push(tp, s)) { /* any order: each WROTE names its receive */
        s->next = tp->owe_wrote;
        tp->owe_wrote = s;
        return 0;
    }
    wrote_sent(tp, s);
    return 0;
}

/* ---- progress ---- */

static int handle(shm_tp_t *tp, int l, shm_peer_t *p, shm_cell_t *c)
{
    switch (c->type) {
    case SHM_T_MSG:
        tp->up.deliver(tp->core, p->world, c->body, c->hdrlen, c->body + PAD8(c->hdrlen), c->len);
        return 0;
    case SHM_T_MSG_POOLED:
        if (c->aux >= p->pool_chunks || c->len > p->chunk_size)
            return -EPROTO;
        tp->up.deliver(tp->core, p->world, c->body, c->hdrlen,
                       p->pool + (uint64_t)c->aux * p->chunk_size, c->len);
        peer_chunk_free(p, c->aux);
        return 0;
    case SHM_T_RTS: {
        shm_rts_t rts;
        memcpy(&rts, c->body, sizeof rts);
        locus_tp_rndv_t *r = tp_ids_get(&tp->rids, sizeof *r);
        if (!r)
            return -ENOMEM;
        r->peer = l;
        r->state = SHM_R_ARRIVED;
        r->sid = c->aux;
        r->len = rts.len;
        r->addr = rts.addr;
        r->chunk = rts.chunk;
        r->copy_ns = rts.copy_ns;
        if (r->chunk > p->pool_chunks || (r->chunk && rts.len > p->chunk_size))
            return -EPROTO;
        tp->up.rndv_arrived(tp->core, p->world, c->body + sizeof rts, c->hdrlen, rts.len, r);
        return 0;
    }
    case SHM_T_CTS: {
        shm_sreq_t *s = tp_ids_find(&tp->sids, c->aux);
        if (!s || s->peer != l)
            return -EPROTO;
        shm_cts_t cts;
        memcpy(&cts, c->body, sizeof cts);
        rts_data_done(tp, p, s, 0);
        s->rid = cts.rid;
        s->want = cts.want < s->len ? cts.want : s->len;
        if (cts.split)
            return split_write(tp, p, s, cts.addr, cts.at);
        s->held_first = s->held_n = 0;
        if (s->want == 0) {
            send_complete(tp, s);
        } else {
            if (!tp->active)
                pool_span_reset(tp);
            s->next = tp->active;
            tp->active = s;
        }
        return 0;
    }
    case SHM_T_CHUNK: {
        locus_tp_rndv_t *r = tp_ids_find(&tp->rids, c->aux);
        shm_chunk_t ch;
        memcpy(&ch, c->body, sizeof ch);
        if (!r || r->peer != l || r->state != SHM_R_DATA || ch.chunk >= p->pool_chunks ||
            c->len > p->chunk_size || ch.off + c->len > r->want)
            return -EPROTO;
        locus_copy(r->buf + ch.off, p->pool + (uint64_t)ch.chunk * p->chunk_size, c->len);
        /* The pipeline's measure: the time since the peer's previous chunk
         * (of any message) or since the CTS that set it going, so that a
         * window of messages in flight shares the time instead of each
         * counting all of it; a sender that is slow to pump counts too (CMA
         * would not have waited for it). Timed only where it decides. */
        if (p->pipe_active) {
            uint64_t now = locus_now_ns();
            r->pipe_ns += now - p->pipe_mark;
            p->pipe_mark = now;
        }
        peer_chunk_free(p, ch.chunk);
        r->got += c->len;
        if (r->got == r->want) {
            tp->stats.pipe_recv++;
            if (p->pipe_active) {
                p->pipe_active--;
                shm_path_record(&p->path, r->want, 0, r->pipe_ns);
            }
            rndv_complete(tp, r);
        }
        return 0;
    }
    case SHM_T_WROTE: {
        locus_tp_rndv_t *r = tp_ids_find(&tp->rids, c->aux);
        int32_t status;
        memcpy(&status, c->body, sizeof status);
        if (!r || r->peer != l || r->state != SHM_R_SPLIT ||
            (r->halves & (SHM_HALF_THEIRS | SHM_HALF_THEIRS_FAILED)))
            return -EPROTO;
        r->halves |= status == 0 ? SHM_HALF_THEIRS : SHM_HALF_THEIRS_FAILED;
        if (status != 0)
            p->no_split = 1; /* plain CMA reads from now on */
        split_check(tp, r);
        return 0;
    }
    case SHM_T_FIN: {
        shm_sreq_t *s = tp_ids_find(&tp->sids, c->aux);
        if (!s || s->peer != l)
            return -EPROTO;
        rts_data_done(tp, p, s, c->len != 0);
        send_complete(tp, s);
        return 0;
    }
    default:
        return -EPROTO;
    }
}

int shm_tp_progress(locus_tp_t *t)
{
    shm_tp_t *tp = (shm_tp_t *)t;
    if (tp->failed)
        return tp->failed;
    int events = 0;
    for (int l = 0; l < tp->local_size; l++) {
        if (l == tp->local_rank)
            continue;
        shm_peer_t *p = &tp->peers[l];
        shm_cell_t *c;
        for (int budget = RING_BUDGET; budget > 0 && (c = shm_ring_peek(&p->rx)); budget--) {
            int rc = handle(tp, l, p, c);
            shm_ring_release(&p->rx, c);
            if (rc < 0) {
                snprintf(tp->error, sizeof tp->error, "shm: %s from local rank %d (world rank %d)",
                         rc == -ENOMEM ? "out of memory for a large message" :
                         "malformed control message", l, p->world);
                return tp->failed = rc;
            }
            events++;
        }
    }
    if (tp->owed)
        events += owed_flush(tp);
    if (tp->owe_wrote)
        events += owe_wrote_flush(tp);
    if (tp->active)
        events += pump(tp);
    if (events) {
        tp->idle = 0;
        return events;
    }
    return shm_tp_idle(tp);
}
