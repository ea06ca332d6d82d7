/*
 * Construction and teardown: tunables, the segment exchange through the
 * kvs (create, put, fence, attach, fence, unlink), the CMA probe.
 */
#include "locus_tunables.h"
#include "shm_cma.h"
#include "shm_tp.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    long eager_max, ring_size, chunk_size, pool_size, cma_min, cma_max;
    int single_copy;
    int oversubscribed;            /* the core's answer (locus_tp_init_t) */
} shm_cfg_t;

static int cfg_choice(const char *name, const char *const *words, int n, int *out,
                      char *err, size_t errlen)
{
    const char *v = locus_tunable_str(name);
    for (int i = 0; i < n; i++)
        if (strcmp(v, words[i]) == 0) {
            *out = i;
            return 0;
        }
    snprintf(err, errlen, "%s=%s: expected one of %s|%s|%s", name, v, words[0], words[1], words[2]);
    return -1;
}

static int cfg_read(shm_cfg_t *c, int oversubscribed, int local_size, char *err, size_t errlen)
{
    static const char *const sc[] = { "none", "auto", "cma" }; /* = SHM_SC_* */
    if (locus_tunable_long("LOCUS_SHM_EAGER_MAX", &c->eager_max, err, errlen) ||
        locus_tunable_long("LOCUS_SHM_RING_SIZE", &c->ring_size, err, errlen) ||
        locus_tunable_long("LOCUS_SHM_CHUNK_SIZE", &c->chunk_size, err, errlen) ||
        locus_shm_pool_size(local_size, &c->pool_size, err, errlen) ||
        locus_tunable_long("LOCUS_SHM_CMA_MIN", &c->cma_min, err, errlen) ||
        locus_tunable_long("LOCUS_SHM_CMA_MAX", &c->cma_max, err, errlen) ||
        cfg_choice("LOCUS_SINGLE_COPY", sc, 3, &c->single_copy, err, errlen))
        return -1;
    if (c->ring_size < 1024 || c->ring_size > (4L << 20)) {
        snprintf(err, errlen, "LOCUS_SHM_RING_SIZE=%ld: expected 1k..4M", c->ring_size);
        return -1;
    }
    if (c->chunk_size < 4096 || c->chunk_size > (64L << 20)) {
        snprintf(err, errlen, "LOCUS_SHM_CHUNK_SIZE=%ld: expected 4k..64M", c->chunk_size);
        return -1;
    }
    c->chunk_size = (c->chunk_size + 4095) & ~4095L;
    c->oversubscribed = oversubscribed;
    /* Oversubscribed, the CMA rule alone decides (nothing is measured
     * there). While LOCUS_SHM_CMA_MIN is at its shipped default (neither
     * `locus tune` nor the user set it), that rule is CMA for every large
     * message: CMA needs only the receiver running, the pipeline both sides
     * (the stress test, 8 ranks on 2 cores: 20-35 % faster); the shipped
     * 1G is the rule of ranks with a core each. */
    if (oversubscribed && locus_tunable_source("LOCUS_SHM_CMA_MIN") == LOCUS_TUNABLE_DEFAULT)
        c->cma_min = 0;
    /* The default pool (locus_shm_pool_size) is a whole number of chunks,
     * two at least, whatever the chunk. It is larger for a node of few
     * ranks because a window of messages in flight fills it (osu_bw of 64
     * KiB-1 MiB on the 2-vCPU EPYC VM, pipelined, 29-35 GB/s with 2-4 MiB
     * against 12-24 with 1 MiB, Open MPI's FIFO, whose fragments grow on
     * demand, 19-27), while one message uses only SHM_SEND_AHEAD_BYTES of
     * it; the node's pools together stay within 32 MiB. */
    if (locus_tunable_source("LOCUS_SHM_POOL_SIZE") == LOCUS_TUNABLE_DEFAULT) {
        c->pool_size = c->pool_size / c->chunk_size * c->chunk_size;
        if (c->pool_size < 2 * c->chunk_size)
            c->pool_size = 2 * c->chunk_size;
    }
    if (c->pool_size < 2 * c->chunk_size || c->pool_size / c->chunk_size > 4096) {
        snprintf(err, errlen, "LOCUS_SHM_POOL_SIZE=%ld: expected 2..4096 chunks of %ld bytes",
                 c->pool_size, c->chunk_size);
        return -1;
    }
    return 0;
}

/* Ring cells: the power of two that holds ring_size bytes of cells, scaled
 * down beyond 64 peers so that one process's rings never take more than
 * 64 rings' worth (O(P) per node, like the pool), but not below 4 KiB. */
static uint32_t ring_cells_for(long ring_size, int peers)
{
    uint32_t n = 16;
    while ((long)n * 64 < ring_size)
        n *= 2;
    uint32_t base = n;
    while (n > 64 && (uint64_t)n * (uint64_t)peers > 64ull * base)
        n /= 2;
    return n;
}

/* Maps the pools' pages at start-up, mine for writing and each peer's for
 * reading: the chunks go round the whole pool, and the first touch of
 * each page was a fault on the way of a message (IMB's Bcast of 8 KiB on 2
 * ranks, 200 repetitions: 6.4 us a message; 2.2 with my pool mapped, 1.2
 * with the peer's too, for 0.5-1 ms more of MPI_Init). Not when ranks
 * outnumber cores (large messages mostly go by CMA then, and the messages
 * that use the pool fault its pages in as they come round), and the peers' only
 * up to this many local ranks (beyond, the first messages map them). */
#define PREFAULT_PEERS_MAX 16
static void pool_prefault(void *pool, size_t len, int advice)
{
    if (madvise(pool, len, advice) != 0 && advice == MADV_POPULATE_WRITE)
        memset(pool, 0, len); /* kernels before 5.14; the pages are zero already */
}

/* Creates, formats (first touch: the pages land on this rank's NUMA node)
 * and describes my segment; keeps its file open, locked, while I live. */
static int seg_make(shm_tp_t *tp, const shm_cfg_t *c, char *name, size_t namelen,
                    char *err, size_t errlen)
{
    shm_seg_hdr_t h;
    memset(&h, 0, sizeof h);
    uint32_t cells = ring_cells_for(c->ring_size, tp->local_size - 1);
    shm_seg_layout(&h, (uint32_t)tp->local_size, cells, (uint32_t)(c->pool_size / c->chunk_size),
                   (uint64_t)c->chunk_size);
    tp->chunk_owner = calloc(h.pool_chunks, sizeof *tp->chunk_owner);
    if (!tp->chunk_owner) {
        snprintf(err, errlen, "shm: out of memory");
        return -1;
    }
    void *base = NULL;
    int rc = -1;
    for (int attempt = 0; attempt < 8 && rc != 0; attempt++) {
        shm_seg_name(name, namelen, tp->local_rank, attempt);
        rc = shm_file_create(name, h.total, &base, err, errlen);
        if (rc != 0 && rc != -EEXIST)
            break;
    }
    if (rc != 0)
        return -1;
    tp->seg = base;
    tp->seg_len = h.total;
    for (int i = 0; i < tp->local_size - 1; i++)
        shm_ring_init((char *)base + h.rings_off + (uint64_t)i * shm_ring_bytes(cells), cells);
    tp->pool_state = (_Atomic uint32_t *)((char *)base + h.states_off);
    tp->pool = (unsigned char *)base + h.pool_off;
    tp->pool_chunks = h.pool_chunks;
    tp->chunk_size = h.chunk_size;
    uint64_t ahead = SHM_SEND_AHEAD_BYTES / h.chunk_size;
    tp->send_ahead = ahead < 2 ? 2 : ahead > SHM_SEND_AHEAD_MAX ? SHM_SEND_AHEAD_MAX : (uint32_t)ahead;
    if (tp->send_ahead >= h.pool_chunks)
        tp->send_ahead = 0; /* a pool that small is the only limit */
    tp->pool_span = tp->send_ahead ? tp->send_ahead : h.pool_chunks; /* grows on demand */
    for (uint32_t k = 0; k < h.pool_chunks; k++)
        atomic_init(&tp->pool_state[k * 16], SHM_CHUNK_FREE);
    if (!c->oversubscribed)
        pool_prefault(tp->pool, (size_t)h.pool_chunks * h.chunk_size, MADV_POPULATE_WRITE);

    if (getrandom(&tp->cookie, sizeof tp->cookie, GRND_NONBLOCK) != sizeof tp->cookie)
        tp->cookie = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
    /* The lock that tells peers I live sits on a descriptor of its own: a
     * mapping holds its open file, and one inherited by a forked child
     * would keep the lock after my death. The name is mine until unlinked. */
    tp->seg_fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
    h.magic = SHM_SEG_MAGIC;
    h.local_rank = (uint32_t)tp->local_rank;
    shm_alive_self(&h.owner, tp->seg_fd);
    h.userns = shm_cma_userns();
    h.cookie = tp->cookie;
    h.cookie_addr = (uint64_t)(uintptr_t)&tp->cookie;
    memcpy(base, &h, sizeof h);
    return 0;
}

static int peer_attach(shm_tp_t *tp, const shm_cfg_t *c, int l, const char *val,
                       char *err, size_t errlen)
{
    shm_peer_t *p = &tp->peers[l];
    char name[256];
    unsigned long long size = 0;
    if (strcmp(val, "-") == 0) {
        snprintf(err, errlen, "shm: local rank %d could not set up its segment", l);
        return -1;
    }
    if (sscanf(val, "%255s %llu", name, &size) != 2) {
        snprintf(err, errlen, "shm: bad segment descriptor from local rank %d: '%s'", l, val);
        return -1;
    }
    void *base;
    size_t len;
    int fd;
    if (shm_file_attach_fd(name, SHM_SEG_HDR, &base, &len, &fd, err, errlen) != 0)
        return -1;
    p->seg = base;
    p->seg_len = len;
    const shm_seg_hdr_t *h = base;
    if (h->magic != SHM_SEG_MAGIC || h->local_rank != (uint32_t)l ||
        h->local_size != (uint32_t)tp->local_size || h->total > len || len != size ||
        h->ring_cells < 16 || (h->ring_cells & (h->ring_cells - 1)) ||
        h->pool_off + (uint64_t)h->pool_chunks * h->chunk_size > len) {
        snprintf(err, errlen, "shm: segment %s of local rank %d is not a Locus segment of this job",
                 name, l);
        close(fd);
        return -1;
    }
    /* Between the fences the owner must be alive: watch it from now on (a
     * pidfd verified to be that process, and the lock on its file). */
    char why[128];
    if (shm_alive_watch(&p->alive, &h->owner, fd, why, sizeof why) != 0) {
        snprintf(err, errlen, "shm: local rank %d (pid %lld) died during start-up (%s)", l,
                 (long long)h->owner.pid, why);
        return -1;
    }
    const shm_seg_hdr_t *me = (const shm_seg_hdr_t *)tp->seg;
    uint32_t cells = h->ring_cells;
    /* My ring in its segment, its ring in mine. */
    shm_ring_tx_attach(&p->tx, (char *)base + h->rings_off +
                       shm_seg_ring_slot((uint32_t)l, (uint32_t)tp->local_rank) * shm_ring_bytes(cells),
                       cells);
    shm_ring_rx_attach(&p->rx, tp->seg + me->rings_off +
                       shm_seg_ring_slot((uint32_t)tp->local_rank, (uint32_t)l) * shm_ring_bytes(me->ring_cells),
                       me->ring_cells);
    p->pool_state = (_Atomic uint32_t *)((char *)base + h->states_off);
    p->pool = (unsigned char *)base + h->pool_off;
    p->pool_chunks = h->pool_chunks;
    p->chunk_size = h->chunk_size;
    if (!c->oversubscribed && tp->local_size <= PREFAULT_PEERS_MAX)
        pool_prefault(p->pool, (size_t)p->pool_chunks * p->chunk_size, MADV_POPULATE_READ);
    /* Its pid names it here only within one pid namespace (CMA needs that). */
    p->pid = h->owner.pidns != 0 && h->owner.pidns == me->owner.pidns ? (pid_t)h->owner.pid : 0;
    /* A payload in a pool chunk takes one cell of the ring whatever its
     * size, so only those in the ring are bound to half of it, less
     * heads and a full core header. */
    size_t room = (size_t)(cells / 2) * SHM_CELL_SIZE - SHM_CELL_HEAD - LOCUS_TP_HDR_MAX;
    p->eager_max = (size_t)c->eager_max;
    p->inline_max = p->eager_max < room ? p->eager_max : room;
    return 0;
}

/* Whether single copy works from each peer: same user and pid namespace,
 * and the peer's cookie reads back through process_vm_readv. */
static void cma_probe(shm_tp_t *tp, const shm_cfg_t *c)
{
    const shm_seg_hdr_t *me = (const shm_seg_hdr_t *)tp->seg;
    for (int l = 0; l < tp->local_size; l++) {
        shm_peer_t *p = &tp->peers[l];
        if (l == tp->local_rank || c->single_copy == SHM_SC_NONE)
            continue;
        const shm_seg_hdr_t *h = (const shm_seg_hdr_t *)p->seg;
        p->cma = p->pid > 0 && h->userns == me->userns &&
                 shm_cma_probe(p->pid, h->cookie_addr, h->cookie) == 0;
    }
}

static void tp_destroy(shm_tp_t *tp)
{
    if (tp->peers)
        for (int l = 0; l < tp->local_size; l++) {
            shm_alive_unwatch(&tp->peers[l].alive);
            if (tp->peers[l].seg)
                munmap(tp->peers[l].seg, tp->peers[l].seg_len);
        }
    if (tp->seg)
        munmap(tp->seg, tp->seg_len);
    shm_alive_release(tp->seg_fd);
    tp_ids_free(&tp->rids);
    tp_ids_free(&tp->sids);
    free(tp->peers);
    free(tp->local_of);
    free(tp->chunk_owner);
    free(tp);
}

static void shm_tp_finalize(locus_tp_t *t)
{
    shm_tp_t *tp = (shm_tp_t *)t;
    /* Before the lock goes with tp_destroy: my exit is no crash. */
    atomic_store_explicit(&((shm_seg_hdr_t *)tp->seg)->finalized, 1, memory_order_release);
    tp_destroy(tp);
}

static int shm_tp_reaches(locus_tp_t *t, int peer)
{
    shm_tp_t *tp = (shm_tp_t *)t;
    return (unsigned)peer < (unsigned)tp->size && tp->local_of[peer] >= 0;
}

const locus_tp_ops_t shm_tp_ops = {
    .name = "shm", .send = shm_tp_send, .rndv_recv = shm_tp_rndv_recv,
    .progress = shm_tp_progress, .reaches = shm_tp_reaches, .finalize = shm_tp_finalize,
    .last_error = shm_tp_last_error, .describe = shm_tp_describe, .send_now = shm_tp_send_now,
};

/* Everything up to the first fence that can fail locally. */
static int setup_local(shm_tp_t *tp, const locus_tp_init_t *in, shm_cfg_t *c, char *name,
                       size_t namelen, char *err, size_t errlen)
{
    if (cfg_read(c, in->oversubscribed, in->local_size, err, errlen) != 0)
        return -1;
    tp->peers = calloc((size_t)in->local_size, sizeof *tp->peers);
    for (int l = 0; tp->peers && l < in->local_size; l++)
        tp->peers[l].alive.pidfd = tp->peers[l].alive.segfd = -1; /* not 0: stdin */
    tp->local_of = malloc((size_t)in->size * sizeof *tp->local_of);
    if (!tp->local_of || !tp->peers) {
        snprintf(err, errlen, "shm: out of memory");
        return -1;
    }
    if (in->local_rank < 0 || in->local_rank >= in->local_size ||
        in->local_ranks[in->local_rank] != in->rank) {
        snprintf(err, errlen, "shm: local rank %d of %d does not hold world rank %d",
                 in->local_rank, in->local_size, in->rank);
        return -1;
    }
    for (int i = 0; i < in->size; i++)
        tp->local_of[i] = -1;
    for (int l = 0; l < in->local_size; l++) {
        int w = in->local_ranks[l];
        if (w < 0 || w >= in->size) {
            snprintf(err, errlen, "shm: local rank %d has world rank %d outside 0..%d", l, w,
                     in->size - 1);
            return -1;
        }
        tp->peers[l].world = w;
        if (l != in->local_rank)
            tp->local_of[w] = l;
    }
    if (c->single_copy != SHM_SC_NONE)
        shm_cma_allow_peers();
    return seg_make(tp, c, name, namelen, err, errlen);
}

/* The segment names are node-scoped: a barrier of the node's ranks is
 * enough where the process manager has one. */
static int node_fence(const locus_tp_kvs_t *kvs)
{
    return kvs->node_fence ? kvs->node_fence(kvs->ctx) : kvs->fence(kvs->ctx);
}

int locus_tp_shm_create(const locus_tp_init_t *in, locus_tp_t **out, char *err, size_t errlen)
{
    const locus_tp_kvs_t *kvs = &in->kvs;
    *out = NULL;
    /* Exactly two fences on every path, whatever fails, so that no rank of
     * the node (of the job, without node barriers) waits for one that gave
     * up. */
    if (in->local_size <= 1) {
        if (node_fence(kvs) != 0 || node_fence(kvs) != 0) {
            snprintf(err, errlen, "shm: kvs fence failed");
            return -1;
        }
        return 0;
    }
    shm_tp_t *tp = calloc(1, sizeof *tp);
    if (!tp) {
        snprintf(err, errlen, "shm: out of memory");
        (void)node_fence(kvs);
        (void)node_fence(kvs);
        return -1;
    }
    tp->base.ops = &shm_tp_ops;
    tp->seg_fd = -1;
    tp->up = *in->up;
    tp->core = in->core;
    tp->rank = in->rank;
    tp->size = in->size;
    tp->local_rank = in->local_rank;
    tp->local_size = in->local_size;

    shm_cfg_t cfg;
    char name[256] = "", key[64], val[320];
    int rc = setup_local(tp, in, &cfg, name, sizeof name, err, errlen);
    snprintf(key, sizeof key, LOCUS_TP_NODE_KEY "shm.%d", in->rank);
    if (rc == 0)
        snprintf(val, sizeof val, "%s %zu", name, tp->seg_len);
    else
        snprintf(val, sizeof val, "-");
    if (kvs->put(kvs->ctx, key, val) != 0 && rc == 0) {
        snprintf(err, errlen, "shm: kvs put of %s failed", key);
        rc = -1;
    }
    if (node_fence(kvs) != 0 && rc == 0) {
        snprintf(err, errlen, "shm: kvs fence failed");
        rc = -1;
    }
    for (int l = 0; l < in->local_size && rc == 0; l++) {
        if (l == in->local_rank)
            continue;
        snprintf(key, sizeof key, LOCUS_TP_NODE_KEY "shm.%d", in->local_ranks[l]);
        if (kvs->get(kvs->ctx, in->local_ranks[l], key, val, sizeof val) != 0) {
            snprintf(err, errlen, "shm: kvs get of %s failed", key);
            rc = -1;
            break;
        }
        rc = peer_attach(tp, &cfg, l, val, err, errlen);
    }
    if (node_fence(kvs) != 0 && rc == 0) {
        snprintf(err, errlen, "shm: kvs fence failed");
        rc = -1;
    }
    /* Every local rank has mapped it (or given up): the name can go. */
    if (tp->seg)
        shm_unlink(name);
    if (rc != 0) {
        tp_destroy(tp);
        return -1;
    }
    tp->single_copy = cfg.single_copy;
    tp->cma_min = (uint64_t)cfg.cma_min;
    tp->cma_max = (uint64_t)cfg.cma_max;
    cma_probe(tp, &cfg);
    if (cfg.single_copy == SHM_SC_CMA) {
        for (int l = 0; l < tp->local_size; l++)
            if (l != tp->local_rank && !tp->peers[l].cma) {
                snprintf(err, errlen,
                         "shm: LOCUS_SINGLE_COPY=cma but process_vm_readv from local rank %d is "
                         "not permitted (%s)", l, tp->peers[l].pid ? "ptrace rights, Yama or "
                         "seccomp" : "it runs in another pid namespace");
                tp_destroy(tp);
                return -1;
            }
    }
    tp->oversubscribed = in->oversubscribed;
    *out = &tp->base;
    return 0;
}
