/*
 * addr_exchange.c — how the transports' cards (their addresses) reach the
 * ranks that need them: LOCUS_ADDR_EXCHANGE (docs/startup.md). With P
 * ranks on N nodes:
 *
 *   simple  every rank puts its card, fence, every rank gets the P-1 others
 *           into a table of its own: P(P-1) gets, one table per rank.
 *   shm     every rank puts, fence; the node's first rank gets the P-1
 *           others into a table in shared memory that the node's ranks map:
 *           N(P-1) gets, one table per node.
 *   roots   the node's ranks hand their cards to its first rank through
 *           shared memory; it puts them as one blob (in chunks that fit a
 *           PMI value), fence, gets the N-1 other blobs and writes the
 *           node's table: N(N-1) gets times the chunks per blob, N puts.
 *   lazy    every rank puts, fence, and nothing more: a card is fetched
 *           when a transport first asks for it (one get per peer dialled).
 *   fabric  as roots, but only each root's "root card" (where it listens)
 *           goes through PMI: N puts; the blobs travel root to root over
 *           TCP by Bruck's allgather (addr_fabric.c), each root getting the
 *           ceil(log2 N) root cards it dials: N*ceil(log2 N) gets.
 *
 * Every rank fences exactly once in publish, whatever fails, so no rank is
 * left waiting; a rank that has no card publishes "-".
 */
#include "locus_boot.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "boot_fabric.h"
#include "boot_priv.h"
#include "locus_tunables.h"
#include "shm_file.h"

enum {
    ADDR_NAME_MAX = 16,
    ADDR_CARD_MAX = PMI_WIRE_VALLEN_MAX, /* a raw card, NUL included */
    ADDR_ST_WRITING = 0, ADDR_ST_READY = 1, ADDR_ST_FAILED = 2,
};
#define ADDR_MAGIC 0x4c4f435553414444ULL /* "LOCUSADD" */

/* A card table: card r is the NUL-terminated string at (char *)t + off[r]. */
typedef struct {
    uint64_t magic;
    _Atomic uint32_t state;    /* ADDR_ST_*, set last by the writer */
    _Atomic uint32_t attached; /* ranks that mapped it; the last one unlinks */
    uint32_t nranks;
    uint32_t pad;
    char why[192];             /* the writer's reason when FAILED */
    uint64_t off[];            /* [nranks + 1] */
} addr_table_t;

/* The node's gather area (roots): local rank i writes slot i (after the
 * local_size flags), then sets filled[i]. */
typedef struct {
    uint64_t magic;
    _Atomic uint32_t filled[];
} addr_gather_t;

struct boot_addr {
    struct boot_addr *next;
    char name[ADDR_NAME_MAX];
    addr_table_t *table;       /* NULL: lazy */
    size_t bytes;
    int mapped;                /* munmap (a node's file) rather than free */
};

static char addr_err[256];

const char *locus_boot_addr_error(const locus_boot_t *b)
{
    (void)b;
    return addr_err;
}

static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(addr_err, sizeof addr_err, fmt, ap);
    va_end(ap);
    return -1;
}

static double deadline(void)
{
    long s = 60;
    if (locus_tunable_long("LOCUS_ADDR_TIMEOUT", &s, NULL, 0) != 0 || s < 1)
        s = 60;
    return boot_now() + (double)s;
}

/* One step of a bounded wait: yield first, then sleep up to 1 ms, so the
 * rank being waited for gets the CPU when ranks outnumber cores. */
static int wait_step(unsigned *spins, double until)
{
    if (++*spins < 64) {
        sched_yield();
        return 0;
    }
    long ns = *spins < 200 ? 20000 : 1000000;
    struct timespec ts = { 0, ns };
    nanosleep(&ts, NULL);
    return boot_now() > until ? -1 : 0;
}

static size_t table_size(int n, char *const *cards)
{
    size_t bytes = sizeof(addr_table_t) + (size_t)(n + 1) * sizeof(uint64_t);
    for (int r = 0; r < n; r++)
        bytes += strlen(cards[r]) + 1;
    return bytes;
}

/* Fills t (table_size bytes) and marks it ready for readers. */
static void table_fill(addr_table_t *t, int n, char *const *cards)
{
    t->magic = ADDR_MAGIC;
    t->nranks = (uint32_t)n;
    uint64_t at = sizeof(addr_table_t) + (uint64_t)(n + 1) * sizeof(uint64_t);
    for (int r = 0; r < n; r++) {
        size_t len = strlen(cards[r]) + 1;
        t->off[r] = at;
        memcpy((char *)t + at, cards[r], len);
        at += len;
    }
    t->off[n] = at;
    atomic_store_explicit(&t->state, ADDR_ST_READY, memory_order_release);
}

static void node_file(const locus_boot_t *b, const char *kind, const char *name, char *buf,
                      size_t len)
{
    char what[64];
    snprintf(what, sizeof what, "%s-%s-n%d", kind, name, b->node_of[b->rank]);
    shm_file_job_name(buf, len, what);
}

/* Maps the node file `fname` once its creator has sized it, waiting until
 * `until`. NULL (reason set) when it never appeared. */
static void *node_file_wait(const char *fname, size_t min, size_t *size, double until,
                            const char *whose)
{
    char err[256];
    unsigned spins = 0;
    for (;;) {
        void *p;
        if (shm_file_attach(fname, min, &p, size, err, sizeof err) == 0)
            return p;
        if (wait_step(&spins, until) != 0) {
            fail("address exchange: no %s from the node's first rank within "
                 "LOCUS_ADDR_TIMEOUT (%s)", whose, err);
            return NULL;
        }
    }
}

static struct boot_addr *entry_new(locus_boot_t *b, const char *name)
{
    struct boot_addr *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    snprintf(e->name, sizeof e->name, "%s", name);
    e->next = b->addr;
    b->addr = e;
    return e;
}

/* A table only this rank reads. */
static int table_private(locus_boot_t *b, struct boot_addr *e, char *const *cards)
{
    e->bytes = table_size(b->size, cards);
    e->table = calloc(1, e->bytes);
    if (!e->table)
        return fail("address exchange: out of memory for %d cards", b->size);
    table_fill(e->table, b->size, cards);
    b->count[b->phase].table_bytes += (long)e->bytes;
    return 0;
}

/* The node's first rank writes the node's table (cards NULL: failed, with
 * addr_err saying why); the others map it. */
static int table_share(locus_boot_t *b, struct boot_addr *e, char *const *cards)
{
    if (b->local_size == 1)
        return cards ? table_private(b, e, cards) : -1;
    char fname[200];
    node_file(b, "addr", e->name, fname, sizeof fname);
    if (b->local_rank == 0) {
        char err[256];
        int n = cards ? b->size : 0;
        size_t bytes = cards ? table_size(n, cards) : sizeof(addr_table_t) + sizeof(uint64_t);
        void *p;
        if (shm_file_create(fname, bytes, &p, err, sizeof err) != 0)
            return fail("address exchange: %s", err);
        e->table = p;
        e->bytes = bytes;
        e->mapped = 1;
        b->count[b->phase].table_bytes += (long)bytes;
        if (!cards) {
            snprintf(e->table->why, sizeof e->table->why, "%.190s", addr_err);
            atomic_store_explicit(&e->table->state, ADDR_ST_FAILED, memory_order_release);
            return -1;
        }
        table_fill(e->table, n, cards);
        return 0;
    }
    size_t size;
    double until = deadline();
    addr_table_t *t = node_file_wait(fname, sizeof(addr_table_t), &size, until,
                                     "address table");
    if (!t)
        return -1;
    e->table = t;
    e->bytes = size;
    e->mapped = 1;
    unsigned spins = 0;
    uint32_t st;
    while ((st = atomic_load_explicit(&t->state, memory_order_acquire)) == ADDR_ST_WRITING)
        if (wait_step(&spins, until) != 0)
            return fail("address exchange: the node's address table was not written within "
                        "LOCUS_ADDR_TIMEOUT");
    /* Everyone who will read it has it mapped: the name can go. */
    if (atomic_fetch_add(&t->attached, 1) + 1 == (uint32_t)(b->local_size - 1))
        shm_unlink(fname);
    if (st != ADDR_ST_READY || t->magic != ADDR_MAGIC || t->nranks != (uint32_t)b->size)
        return fail("address exchange: %s", st == ADDR_ST_FAILED ? t->why
                                              : "the node's address table is malformed");
    return 0;
}

static int put_card(locus_boot_t *b, const char *name, const char *card)
{
    char key[PMI_WIRE_KEYLEN_MAX];
    snprintf(key, sizeof key, "locus.addr.%s.%d", name, b->rank);
    if (boot_kvs_put(b, key, card) != 0)
        return fail("address exchange: PMI put of %s failed", key);
    return 0;
}

static int get_card(locus_boot_t *b, const char *name, int r, char *val, size_t vallen)
{
    char key[PMI_WIRE_KEYLEN_MAX];
    snprintf(key, sizeof key, "locus.addr.%s.%d", name, r);
    if (boot_kvs_get(b, r, key, val, vallen) != 0)
        return fail("address exchange: PMI get of %s failed", key);
    return 0;
}

static char **cards_new(int n)
{
    return calloc((size_t)n, sizeof(char *));
}

static void cards_free(char **cards, int n)
{
    if (!cards)
        return;
    for (int r = 0; r < n; r++)
        free(cards[r]);
    free(cards);
}

/* Gets every card but this rank's own (mine) through PMI. */
static char **cards_get_all(locus_boot_t *b, const char *name, const char *mine)
{
    char **cards = cards_new(b->size);
    char val[ADDR_CARD_MAX];
    if (!cards) {
        fail("address exchange: out of memory for %d cards", b->size);
        return NULL;
    }
    for (int r = 0; r < b->size; r++) {
        if (r == b->rank)
            cards[r] = strdup(mine);
        else if (get_card(b, name, r, val, sizeof val) == 0)
            cards[r] = strdup(val);
        else
            break;
        if (!cards[r])
            break;
    }
    for (int r = 0; r < b->size; r++)
        if (!cards[r]) {
            if (!addr_err[0])
                fail("address exchange: out of memory");
            cards_free(cards, b->size);
            return NULL;
        }
    return cards;
}

/* ---- roots: the node's cards through shared memory, node blobs by PMI ---- */

static size_t gather_size(int nslots)
{
    return sizeof(addr_gather_t) + (size_t)nslots * (sizeof(_Atomic uint32_t) + ADDR_CARD_MAX);
}

/* nslots from the caller's node map, never from the header: a rank may
 * map the area before its creator has written anything there. */
static char *gather_slot(addr_gather_t *g, int nslots, int i)
{
    return (char *)&g->filled[nslots] + (size_t)i * ADDR_CARD_MAX;
}

/* Local rank > 0: hands its card to the node's first rank. */
static int gather_give(locus_boot_t *b, const char *name, const char *card)
{
    char fname[200];
    size_t size;
    node_file(b, "addrg", name, fname, sizeof fname);
    addr_gather_t *g = node_file_wait(fname, gather_size(b->local_size), &size, deadline(),
                                      "gather area");
    if (!g)
        return -1;
    snprintf(gather_slot(g, b->local_size, b->local_rank), ADDR_CARD_MAX, "%s", card);
    atomic_store_explicit(&g->filled[b->local_rank], 1, memory_order_release);
    munmap(g, size);
    return 0;
}

/* Local rank 0: the node's cards as lines "<rank> <card>\n", or NULL. */
static char *gather_take(locus_boot_t *b, const char *name, const char *card)
{
    char fname[200], err[256];
    size_t size = gather_size(b->local_size), cap = 0;
    void *p = NULL;
    node_file(b, "addrg", name, fname, sizeof fname);
    if (b->local_size > 1 && shm_file_create(fname, size, &p, err, sizeof err) != 0) {
        fail("address exchange: %s", err);
        return NULL;
    }
    addr_gather_t *g = p;
    if (g)
        g->magic = ADDR_MAGIC;
    double until = deadline();
    for (int i = 0; i < b->local_size; i++)
        cap += 16 + (i == 0 ? strlen(card) : ADDR_CARD_MAX);
    char *blob = malloc(cap + 1);
    size_t n = 0;
    for (int i = 0; blob && i < b->local_size; i++) {
        unsigned spins = 0;
        const char *c = card;
        if (i > 0) {
            while (!atomic_load_explicit(&g->filled[i], memory_order_acquire))
                if (wait_step(&spins, until) != 0) {
                    fail("address exchange: rank %d gave no card within LOCUS_ADDR_TIMEOUT",
                         b->local_ranks[i]);
                    free(blob);
                    blob = NULL;
                    break;
                }
            c = gather_slot(g, b->local_size, i);
        }
        if (blob)
            n += (size_t)snprintf(blob + n, cap + 1 - n, "%d %s\n", b->local_ranks[i], c);
    }
    if (g) {
        shm_unlink(fname);
        munmap(g, size);
    }
    if (!blob && !addr_err[0])
        fail("address exchange: out of memory");
    return blob;
}

/* Puts this node's blob, escaped, as "<chunks>/<first chunk>" under
 * locus.addr.NAME.nK and the rest under locus.addr.NAME.nK.I; a node whose
 * gather failed puts "0/". */
static int blob_put(locus_boot_t *b, const char *name, const char *blob)
{
    int node = b->node_of[b->rank];
    size_t raw = blob ? strlen(blob) : 0;
    char *enc = malloc(raw * 3 + 1);
    if (!enc)
        return fail("address exchange: out of memory for the node's blob");
    int elen = blob ? locus_boot_escape(blob, enc, raw * 3 + 1) : 0;
    if (elen < 0) {
        free(enc);
        return fail("address exchange: the node's blob cannot be escaped");
    }
    /* Chunk boundaries never split a %XX; a chunk and its "<count>/"
     * prefix fit the server's longest value. */
    enum { CHUNKS_MAX = 4096 };
    long chunk = 1000;
    if (locus_tunable_long("LOCUS_ADDR_CHUNK", &chunk, NULL, 0) != 0 || chunk < 16)
        chunk = 1000;
    if (chunk > b->vallen_max - 8)
        chunk = b->vallen_max - 8;
    if (chunk > PMI_WIRE_VALLEN_MAX - 8)
        chunk = PMI_WIRE_VALLEN_MAX - 8;
    size_t cuts[CHUNKS_MAX], at = 0;
    int nchunks = 0;
    while (at < (size_t)elen && nchunks < CHUNKS_MAX) {
        size_t end = at + (size_t)chunk < (size_t)elen ? at + (size_t)chunk : (size_t)elen;
        if (end < (size_t)elen) {
            if (enc[end - 1] == '%')
                end -= 1;
            else if (enc[end - 2] == '%')
                end -= 2;
        }
        cuts[nchunks++] = at;
        at = end;
    }
    if (at < (size_t)elen) {
        free(enc);
        return fail("address exchange: the node's blob needs more than %d PMI values",
                    CHUNKS_MAX);
    }
    int rc = 0;
    for (int i = 0; i < (nchunks ? nchunks : 1) && rc == 0; i++) {
        char key[PMI_WIRE_KEYLEN_MAX], val[PMI_WIRE_VALLEN_MAX + 1];
        size_t at = nchunks ? cuts[i] : 0;
        size_t end = i + 1 < nchunks ? cuts[i + 1] : (size_t)elen;
        int k = i == 0 ? snprintf(val, sizeof val, "%d/", nchunks) : 0;
        snprintf(val + k, sizeof val - (size_t)k, "%.*s", (int)(end - at), enc + at);
        if (i == 0)
            snprintf(key, sizeof key, "locus.addr.%s.n%d", name, node);
        else
            snprintf(key, sizeof key, "locus.addr.%s.n%d.%d", name, node, i);
        if (locus_boot_put(b, key, val) != 0)
            rc = fail("address exchange: PMI put of %s failed", key);
    }
    free(enc);
    return rc;
}

/* The first rank of node n: it put the node's blob or root card. */
static int root_of(const locus_boot_t *b, int node)
{
    int r = 0;
    while (b->node_of[r] != node)
        r++;
    return r;
}

/* Files the cards of node `node`'s blob (lines "<rank> <card>", which it
 * cuts up) into cards[]; every rank of that node must be there once. */
static int blob_parse(locus_boot_t *b, int node, char *raw, char **cards)
{
    int got = 0;
    for (char *line = raw, *nl; *line; line = nl + 1) {
        char *sp;
        long r = strtol(line, &sp, 10);
        if (!(nl = strchr(line, '\n')) || *sp != ' ' || r < 0 || r >= b->size ||
            b->node_of[r] != node || cards[r])
            return fail("address exchange: node %d's blob is malformed", node);
        *nl = '\0';
        if (!(cards[r] = strdup(sp + 1)))
            return fail("address exchange: out of memory");
        got++;
    }
    int want = 0;
    for (int r = 0; r < b->size; r++)
        want += b->node_of[r] == node;
    if (got != want)
        return fail("address exchange: node %d's blob holds %d cards, not %d", node, got, want);
    return 0;
}

/* Gets node `node`'s blob and files its cards into cards[]. */
static int blob_get(locus_boot_t *b, const char *name, int node, char **cards)
{
    int root = root_of(b, node);
    char key[PMI_WIRE_KEYLEN_MAX], val[PMI_WIRE_VALLEN_MAX + 1];
    snprintf(key, sizeof key, "locus.addr.%s.n%d", name, node);
    if (locus_boot_get(b, root, key, val, sizeof val) != 0)
        return fail("address exchange: PMI get of %s failed", key);
    char *slash;
    long nchunks = strtol(val, &slash, 10);
    if (*slash != '/' || nchunks < 0 || nchunks > 4096)
        return fail("address exchange: %s is malformed", key);
    if (nchunks == 0)
        return fail("address exchange: node %d's first rank published no cards (its set-up "
                    "failed)", node);
    size_t cap = (size_t)nchunks * (PMI_WIRE_VALLEN_MAX + 1), n = strlen(slash + 1);
    char *enc = malloc(cap), *raw = malloc(cap);
    if (!enc || !raw) {
        free(enc);
        free(raw);
        return fail("address exchange: out of memory");
    }
    memcpy(enc, slash + 1, n + 1);
    int rc = 0;
    for (long i = 1; i < nchunks && rc == 0; i++) {
        snprintf(key, sizeof key, "locus.addr.%s.n%d.%ld", name, node, i);
        if (locus_boot_get(b, root, key, val, sizeof val) != 0) {
            rc = fail("address exchange: PMI get of %s failed", key);
        } else {
            memcpy(enc + n, val, strlen(val) + 1);
            n += strlen(val);
        }
    }
    if (rc == 0 && locus_boot_unescape(enc, raw, cap) < 0)
        rc = fail("address exchange: node %d's blob is malformed", node);
    if (rc == 0)
        rc = blob_parse(b, node, raw, cards);
    free(enc);
    free(raw);
    return rc;
}

static int publish_roots(locus_boot_t *b, struct boot_addr *e, const char *card, int rc)
{
    if (b->local_rank > 0) {
        if (gather_give(b, e->name, card) != 0)
            rc = -1;
        if (locus_boot_fence(b) != 0 && rc == 0)
            rc = fail("address exchange: PMI fence failed");
        /* A rank that could not hand over its card fails now: its root
         * stops waiting at the timeout and fails the node. */
        return rc == 0 ? table_share(b, e, NULL) : -1;
    }
    int node = b->node_of[b->rank];
    char **cards = cards_new(b->size);
    char *blob = gather_take(b, e->name, card);
    if (!cards || !blob)
        rc = cards ? -1 : fail("address exchange: out of memory for %d cards", b->size);
    /* The blob goes out before this node's copy is cut into cards. */
    if (blob_put(b, e->name, rc == 0 ? blob : NULL) != 0)
        rc = -1;
    if (rc == 0 && blob_parse(b, node, blob, cards) != 0)
        rc = -1;
    free(blob);
    if (locus_boot_fence(b) != 0 && rc == 0)
        rc = fail("address exchange: PMI fence failed");
    for (int n = 0; rc == 0 && n < b->nnodes; n++)
        if (n != node && blob_get(b, e->name, n, cards) != 0)
            rc = -1;
    if (table_share(b, e, rc == 0 ? cards : NULL) != 0)
        rc = -1;
    cards_free(cards, b->size);
    return rc;
}

typedef struct {
    locus_boot_t *b;
    const char *name;
} root_ctx_t;

static int root_card_get(void *ctx, int node, char *out, size_t cap)
{
    root_ctx_t *rc = ctx;
    char key[PMI_WIRE_KEYLEN_MAX];
    snprintf(key, sizeof key, "locus.addr.%s.f%d", rc->name, node);
    return boot_kvs_get(rc->b, root_of(rc->b, node), key, out, cap);
}

/* LOCUS_VERBOSE=1: what strangers cost this root's exchange, if anything. */
static void fabric_note(const locus_boot_t *b, const boot_fabric_t *f)
{
    long v = 0;
    boot_fabric_stats_t st;
    boot_fabric_stats(f, &st);
    if (locus_tunable_long("LOCUS_VERBOSE", &v, NULL, 0) != 0 || v <= 0 ||
        st.refused + st.timeouts + st.evicted + st.accept_errors == 0)
        return;
    fprintf(stderr, "locus: rank %d: address exchange: refused %ld connection%s without the "
            "job key, closed %ld silent and %ld unproven for newer ones, accept ran short "
            "%ld time%s\n", b->rank, st.refused, st.refused == 1 ? "" : "s", st.timeouts,
            st.evicted, st.accept_errors, st.accept_errors == 1 ? "" : "s");
}

/* fabric: roots' gather as in roots; the root's card through PMI, the
 * blobs over TCP among the roots. */
static int publish_fabric(locus_boot_t *b, struct boot_addr *e, const char *card, int rc)
{
    if (b->local_rank > 0)
        return publish_roots(b, e, card, rc); /* a non-root's part is the same */
    int node = b->node_of[b->rank], nn = b->nnodes;
    char **cards = cards_new(b->size), **blobs = calloc((size_t)nn, sizeof *blobs);
    size_t *lens = calloc((size_t)nn, sizeof *lens);
    char *blob = gather_take(b, e->name, card), rcard[512] = "-", key[PMI_WIRE_KEYLEN_MAX];
    char err[256];
    boot_fabric_t *f = NULL;
    if (!cards || !blobs || !lens || !blob)
        rc = cards && blobs && lens ? -1 : fail("address exchange: out of memory");
    if (rc == 0 && nn > 1 && boot_fabric_listen(&f, &b->key, rcard, sizeof rcard, err,
                                                  sizeof err) != 0)
        rc = fail("%s", err);
    snprintf(key, sizeof key, "locus.addr.%s.f%d", e->name, node);
    if (nn > 1 && boot_kvs_put(b, key, rc == 0 ? rcard : "-") != 0 && rc == 0)
        rc = fail("address exchange: PMI put of %s failed", key);
    if (locus_boot_fence(b) != 0 && rc == 0)
        rc = fail("address exchange: PMI fence failed");
    if (rc == 0) {
        blobs[node] = blob;
        lens[node] = strlen(blob);
        blob = NULL;
        root_ctx_t ctx = { b, e->name };
        if (nn > 1 && boot_fabric_allgather(f, node, nn, blobs, lens, root_card_get, &ctx,
                                            deadline() - boot_now(), err, sizeof err) != 0)
            rc = fail("%s", err);
    }
    for (int n = 0; rc == 0 && n < nn; n++)
        if (blob_parse(b, n, blobs[n], cards) != 0)
            rc = -1;
    if (f)
        fabric_note(b, f);
    boot_fabric_close(f);
    if (table_share(b, e, rc == 0 ? cards : NULL) != 0)
        rc = -1;
    for (int n = 0; blobs && n < nn; n++)
        free(blobs[n]);
    free(blobs);
    free(lens);
    free(blob);
    cards_free(cards, b->size);
    return rc;
}

/* ---- the strategies ----------------------------------------------------- */

static int valid_name(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n >= ADDR_NAME_MAX)
        return 0;
    for (; *name; name++)
        if (!((*name >= 'a' && *name <= 'z') || (*name >= '0' && *name <= '9')))
            return 0;
    return 1;
}

int locus_boot_publish(locus_boot_t *b, const char *name, const char *card)
{
    addr_err[0] = '\0';
    int rc = 0;
    char enc[PMI_WIRE_VALLEN_MAX + 1];
    if (!valid_name(name))
        return fail("address exchange: bad card name '%s'", name);
    for (struct boot_addr *e = b->addr; e; e = e->next)
        if (strcmp(e->name, name) == 0)
            return fail("address exchange: cards named %s published twice", name);
    struct boot_addr *e = entry_new(b, name);
    if (!e)
        return fail("address exchange: out of memory");
    /* A card that cannot travel becomes "-" so the exchange goes on. */
    if (strchr(card, '\n') || locus_boot_escape(card, enc, sizeof enc) < 0) {
        rc = fail("address exchange: the %s card of rank %d is too long or spans lines", name,
                  b->rank);
        card = "-";
    }
    if (b->singleton) {
        char *one[1] = { (char *)card };
        return table_private(b, e, one) != 0 ? -1 : rc;
    }
    int strategy = b->addr_strategy;
    if (strategy == LOCUS_ADDR_ROOTS)
        return publish_roots(b, e, card, rc);
    if (strategy == LOCUS_ADDR_FABRIC)
        return publish_fabric(b, e, card, rc);
    if (put_card(b, name, card) != 0)
        rc = -1;
    if (locus_boot_fence(b) != 0 && rc == 0)
        rc = fail("address exchange: PMI fence failed");
    if (strategy == LOCUS_ADDR_LAZY)
        return rc;
    if (strategy == LOCUS_ADDR_SIMPLE) {
        char **cards = rc == 0 ? cards_get_all(b, name, card) : NULL;
        if (cards && table_private(b, e, cards) != 0)
            rc = -1;
        cards_free(cards, b->size);
        return cards ? rc : -1;
    }
    /* shm */
    char **cards = NULL;
    if (b->local_rank == 0 && rc == 0 && !(cards = cards_get_all(b, name, card)))
        rc = -1;
    if (table_share(b, e, cards) != 0 && rc == 0)
        rc = -1;
    cards_free(cards, b->size);
    return rc;
}

int locus_boot_card(locus_boot_t *b, const char *name, int rank, char *val, size_t vallen)
{
    addr_err[0] = '\0';
    struct boot_addr *e = b->addr;
    while (e && strcmp(e->name, name) != 0)
        e = e->next;
    if (!e)
        return fail("address exchange: no cards were published under '%s'", name);
    if (rank < 0 || rank >= b->size)
        return fail("address exchange: no rank %d in a job of %d", rank, b->size);
    if (!e->table)
        return get_card(b, name, rank, val, vallen);
    const char *c = (const char *)e->table + e->table->off[rank];
    if (strlen(c) >= vallen)
        return fail("address exchange: rank %d's %s card is too long", rank, name);
    strcpy(val, c);
    return 0;
}

void locus_boot_addr_free(locus_boot_t *b)
{
    while (b->addr) {
        struct boot_addr *e = b->addr;
        b->addr = e->next;
        if (e->mapped)
            munmap(e->table, e->bytes);
        else
            free(e->table);
        free(e);
    }
}
