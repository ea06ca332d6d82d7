/* Core set-up, request pool, progress loop and finalization. */
#include "core_priv.h"

#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "locus_tunables.h"

#define SLAB_REQS 256

/* The send and receive fast paths touch a request from end to end: keep it
 * three whole cache lines (slabs are line-aligned). */
_Static_assert(sizeof(void *) != 8 || sizeof(locus_req_t) == 192,
               "locus_req_t is no longer 3 cache lines: repack it");

int locus_core_init(locus_core_t *c, int rank, int size, int local_size,
                    char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->rank = rank;
    c->size = c->cap = size;
    c->peers = calloc((size_t)size, sizeof *c->peers);
    c->pend = calloc((size_t)size, sizeof *c->pend);
    c->pend_mark = calloc((size_t)size, 1);
    if (!c->peers || !c->pend || !c->pend_mark) {
        snprintf(err, errlen, "out of memory for %d peers", size);
        goto fail;
    }
    if (locus_tunable_long("LOCUS_POLLS_BEFORE_YIELD", &c->polls_before_yield, err, errlen))
        goto fail;
    if (c->polls_before_yield < 1)
        c->polls_before_yield = 1;
    if (locus_tunable_long("LOCUS_SETTLE_MS", &c->settle_ms, err, errlen))
        goto fail;
    long after_us, sleep_us;
    if (locus_tunable_long("LOCUS_IDLE_SLEEP_AFTER_US", &after_us, err, errlen) ||
        locus_tunable_long("LOCUS_IDLE_SLEEP_US", &sleep_us, err, errlen))
        goto fail;
    c->sleep_after_ns = after_us > 0 ? after_us * 1000 : 0;
    c->sleep_ns = sleep_us < 1 ? 1000 : sleep_us >= 1000000 ? 999999999 : sleep_us * 1000;
    const char *y = locus_tunable_str("LOCUS_YIELD");
    c->local_size = local_size;
    c->node_ncpus = locus_core_node_ncpus(&c->node_ncpus_from);
    /* Like Open MPI's yield_when_idle, decided per node: only when the
     * node's ranks outnumber the CPUs they may run on together (one rank
     * bound per core does not share); an unknown count counts as sharing. */
    c->oversubscribed = c->node_ncpus <= 0 || local_size > c->node_ncpus;
    if (strcmp(y, "always") == 0) {
        c->yield = 1;
        c->yield_why = "LOCUS_YIELD=always";
    } else if (strcmp(y, "never") == 0) {
        c->yield = 0;
        c->yield_why = "LOCUS_YIELD=never";
    } else if (strcmp(y, "auto") == 0) {
        c->yield = c->oversubscribed;
        c->yield_why = c->yield ? "oversubscribed" : "not oversubscribed";
    } else {
        snprintf(err, errlen, "LOCUS_YIELD=%s: expected auto, always or never", y);
        goto fail;
    }
    return 0;
fail:
    free(c->peers);
    free(c->pend);
    free(c->pend_mark);
    memset(c, 0, sizeof *c);
    return -1;
}

void locus_core_fatal(locus_core_t *c, const char *fmt, ...)
{
    if (c->fatal)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->fatal_msg, sizeof c->fatal_msg, fmt, ap);
    va_end(ap);
    c->fatal = 1;
}

int locus_core_add_tp(locus_core_t *c, locus_tp_t *tp)
{
    if (c->ntp == LOCUS_CORE_MAX_TP)
        return -1;
    c->tps[c->ntp++] = tp;
    for (int p = 0; p < c->size; p++)
        if (!c->peers[p].tp && tp->ops->reaches(tp, p))
            c->peers[p].tp = tp;
    return 0;
}

int locus_core_add_peer(locus_core_t *c, locus_tp_t *tp)
{
    if (c->size == c->cap) {
        int cap = c->cap < 8 ? 16 : 2 * c->cap;
        locus_peer_t *peers = realloc(c->peers, (size_t)cap * sizeof *peers);
        if (peers)
            c->peers = peers;
        int *pend = realloc(c->pend, (size_t)cap * sizeof *pend);
        if (pend)
            c->pend = pend;
        char *mark = realloc(c->pend_mark, (size_t)cap);
        if (mark)
            c->pend_mark = mark;
        if (!peers || !pend || !mark)
            return -1;
        memset(c->peers + c->cap, 0, (size_t)(cap - c->cap) * sizeof *peers);
        memset(c->pend_mark + c->cap, 0, (size_t)(cap - c->cap));
        c->cap = cap;
    }
    c->peers[c->size].tp = tp;
    return c->size++;
}

/* A new slab of zeroed requests, numbered on from the last. */
static int slab_add(locus_core_t *c)
{
    if (c->nslabs == c->capslabs) {
        int cap = c->capslabs ? 2 * c->capslabs : 16;
        void **s = realloc(c->slabs, (size_t)cap * sizeof *s);
        if (!s)
            return -1;
        c->slabs = s;
        void **a = realloc(c->slabs_by_addr, (size_t)cap * sizeof *a);
        if (!a)
            return -1;
        c->slabs_by_addr = a;
        c->capslabs = cap;
    }
    /* Cache-line aligned: a request (192 bytes on LP64) spans 3 lines. */
    locus_req_t *slab = aligned_alloc(64, SLAB_REQS * sizeof *slab);
    if (!slab)
        return -1;
    memset(slab, 0, SLAB_REQS * sizeof *slab);
    for (int i = SLAB_REQS - 1; i >= 0; i--) {
        slab[i].id = (uint32_t)c->nslabs * SLAB_REQS + (uint32_t)i;
        slab[i].next = c->req_free;
        c->req_free = &slab[i];
    }
    int k = c->nslabs;
    while (k > 0 && (uintptr_t)c->slabs_by_addr[k - 1] > (uintptr_t)slab) {
        c->slabs_by_addr[k] = c->slabs_by_addr[k - 1];
        k--;
    }
    c->slabs_by_addr[k] = slab;
    c->slabs[c->nslabs++] = slab;
    return 0;
}

/* Zeroes a request of a slab (64-byte aligned) in 16-byte stores. GCC
 * makes memset, and a plain loop of stores, a `rep stos` here, whose
 * start-up was 14% of an 8-byte ping-pong (two requests a message). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
static void req_zero(locus_req_t *r)
{
    typedef uint64_t zero16_t __attribute__((vector_size(16), may_alias));
    _Static_assert(sizeof *r % sizeof(zero16_t) == 0, "a request is whole 16-byte words");
    zero16_t *w = (zero16_t *)(void *)r;
    for (size_t i = 0; i < sizeof *r / sizeof *w; i++)
        w[i] = (zero16_t){ 0, 0 };
}

locus_req_t *locus_core_req_get(locus_core_t *c)
{
    if (__builtin_expect(!c->req_free, 0) && slab_add(c))
        return NULL;
    locus_req_t *r = c->req_free;
    c->req_free = r->next;
    uint32_t id = r->id;
    req_zero(r);
    r->id = id;
    return r;
}

int locus_core_req_known(const locus_core_t *c, const void *p)
{
    /* The last slab starting at or below p, by binary search: every MPI_Wait
     * and MPI_Test asks, for each request it is given. */
    uintptr_t a = (uintptr_t)p;
    int lo = 0, hi = c->nslabs - 1, s = -1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if ((uintptr_t)c->slabs_by_addr[mid] <= a) {
            s = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    if (s < 0)
        return 0;
    uintptr_t base = (uintptr_t)c->slabs_by_addr[s];
    return a < base + SLAB_REQS * sizeof(locus_req_t) && (a - base) % sizeof(locus_req_t) == 0
           && ((const locus_req_t *)p)->kind != 0;
}

locus_req_t *locus_core_req_by_id(locus_core_t *c, uint32_t id)
{
    if (id / SLAB_REQS >= (uint32_t)c->nslabs)
        return NULL;
    return (locus_req_t *)c->slabs[id / SLAB_REQS] + id % SLAB_REQS;
}

void locus_core_req_put(locus_core_t *c, locus_req_t *r)
{
    if (r->comm && c->owner_release)
        c->owner_release(r->comm);
    r->comm = NULL;
    r->kind = 0;
    r->next = c->req_free;
    c->req_free = r;
}

void locus_core_gen_add(locus_core_t *c, locus_req_t *r)
{
    r->prev = NULL;
    r->next = c->gen_head;
    if (c->gen_head)
        c->gen_head->prev = r;
    c->gen_head = r;
}

void locus_core_gen_unlink(locus_core_t *c, locus_req_t *r)
{
    if (c->gen_cursor == r)
        c->gen_cursor = r->next;
    if (r->prev)
        r->prev->next = r->next;
    else
        c->gen_head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    r->next = r->prev = NULL;
}

/* Polls every generalized request once. A poll may start operations,
 * progress (a blocking step) or abandon other requests: the cursor is
 * moved past any request unlinked meanwhile, and a nested progress round
 * skips this (it would poll a request from inside its own poll). */
static int gen_poll(locus_core_t *c)
{
    int n = 0;
    c->gen_polling = 1;
    for (locus_req_t *r = c->gen_head; r; r = c->gen_cursor) {
        c->gen_cursor = r->next;
        int rc = r->poll(r->state);
        if (rc == 0)
            continue;
        locus_core_gen_unlink(c, r);
        if (rc < 0)
            r->st_error = -rc;
        if (r->state_free)
            r->state_free(r->state);
        r->state = NULL;
        locus_core_complete(c, r);
        n++;
    }
    c->gen_cursor = NULL;
    c->gen_polling = 0;
    return n;
}

static void core_watch(locus_core_t *c)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    if (ns < c->watch_next_ns)
        return;
    c->watch_next_ns = ns + 50 * 1000000;
    char why[160] = "";
    if (c->watch(c->watch_arg, why, sizeof why) != 0)
        locus_core_fatal(c, "%s", why);
}

int locus_core_progress(locus_core_t *c)
{
    /* Failed for good: whatever a wait waits for may be lost. */
    if (__builtin_expect(c->fatal, 0))
        return -1;
    int n = 0;
    for (int i = 0; i < c->ntp; i++) {
        int k = c->tps[i]->ops->progress(c->tps[i]);
        if (__builtin_expect(k < 0, 0)) {
            locus_tp_t *tp = c->tps[i];
            const char *why = tp->ops->last_error ? tp->ops->last_error(tp) : NULL;
            locus_core_fatal(c, "transport %s failed: %s", tp->ops->name,
                             why ? why : "a peer process died?");
            return -1;
        }
        n += k;
    }
    if (c->npend)
        n += locus_core_flush(c);
    if (c->gen_head && !c->gen_polling)
        n += gen_poll(c);
    if (__builtin_expect(c->watch != NULL, 0))
        core_watch(c);
    if (n > 0)
        c->idle_since_ns = 0;
    return __builtin_expect(c->fatal, 0) ? -1 : n;
}

/* How this idle round backs off: 0 yields, else nanoseconds to sleep
 * (the rule of locus_core_idle). Decided apart from the back-off itself,
 * which a wait under MPI_THREAD_MULTIPLE makes without the lock. */
static long idle_nap_ns(locus_core_t *c)
{
    if (!c->sleep_after_ns)
        return 0;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t t = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    if (!c->idle_since_ns) {
        c->idle_since_ns = t;
        return 0;
    }
    return t - c->idle_since_ns >= c->sleep_after_ns ? c->sleep_ns : 0;
}

static void idle_nap(void *arg)
{
    long ns = *(const long *)arg;
    if (ns) {
        struct timespec nap = { 0, ns };
        nanosleep(&nap, NULL);
    } else {
        sched_yield();
    }
}

void locus_core_idle_yield(locus_core_t *c)
{
    long ns = idle_nap_ns(c);
    idle_nap(&ns);
}

void locus_core_idle_cs(locus_core_t *c)
{
    long ns = 0;
    int nap = c->yield && ++c->idle >= c->polls_before_yield;
    if (nap) {
        c->idle = 0;
        ns = idle_nap_ns(c);
    }
    /* A thread blocked on the lock may be the one to send what this wait
     * is for: hand it over, with at least a yield so that it gets it. */
    if (locus_cs_contended(c->cs))
        locus_cs_yield(c->cs, idle_nap, &ns);
    else if (nap)
        idle_nap(&ns);
}

int locus_core_wait(locus_core_t *c, locus_req_t *r)
{
    while (!r->done) {
        int n = locus_core_progress(c);
        if (n < 0)
            return -1;
        if (n == 0)
            locus_core_idle(c);
        else
            c->idle = 0;
    }
    return 0;
}

/* What the requests never completed still hold: packed send buffers,
 * rendezvous staging, datatype references. Runs after the transports are
 * gone, so nothing else points into those buffers any more. */
static void reqs_release(locus_core_t *c)
{
    for (int k = 0; k < c->nslabs; k++) {
        locus_req_t *slab = c->slabs[k];
        for (int i = 0; i < SLAB_REQS; i++) {
            locus_req_t *r = &slab[i];
            if (!r->kind || r->done)
                continue;
            free(r->tmp);
            r->tmp = NULL;
            if (r->udt)
                locus_dtype_release(r->udt);
            r->udt = NULL;
        }
    }
}

void locus_core_finalize(locus_core_t *c)
{
    while (c->npend && !c->fatal)
        if (locus_core_progress(c) == 0)
            locus_core_idle(c);
    /* Generalized requests nobody waited for: their state may hold core
     * requests, which it abandons while the queues still exist. */
    while (c->gen_head) {
        locus_req_t *r = c->gen_head;
        locus_core_gen_unlink(c, r);
        if (r->state_free)
            r->state_free(r->state);
        r->state = NULL;
    }
    for (int i = c->ntp - 1; i >= 0; i--)
        c->tps[i]->ops->finalize(c->tps[i]);
    c->ntp = 0;
    reqs_release(c);
    locus_bins_free(c);
    while (c->umsg_free) {
        locus_umsg_t *u = c->umsg_free;
        c->umsg_free = u->next;
        free(u);
    }
    for (int i = 0; i < c->nslabs; i++)
        free(c->slabs[i]);
    free(c->slabs);
    free(c->slabs_by_addr);
    free(c->peers);
    free(c->pend);
    free(c->pend_mark);
    memset(c, 0, sizeof *c);
}
