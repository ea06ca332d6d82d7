/*
 * Construction and teardown of the dyn transport: tunables, the cookie,
 * the peer table (names and ids), the ops table and error reporting.
 */
#include "dyn_tp.h"
#include "locus_tunables.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#define MS_MAX 3600000L   /* an hour: anything longer is a typo */

void dyn_fail(dyn_tp_t *tp, const char *fmt, ...)
{
    if (tp->failed)
        return; /* the first cause is the one worth telling */
    tp->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tp->err, sizeof tp->err, fmt, ap);
    va_end(ap);
}

/* A LOCUS_DYN_*_MS tunable (locus_tunables.h), bounded. */
static int env_ms(const char *name, long lo, long *out, char *err, size_t errlen)
{
    if (locus_tunable_long(name, out, err, errlen) != 0)
        return -1;
    if (*out < lo || *out > MS_MAX) {
        snprintf(err, errlen, "%s=%ld: expected milliseconds, an integer from %ld to %ld", name,
                 *out, lo, MS_MAX);
        return -1;
    }
    return 0;
}

static int cookie_make(char hex[DYN_COOKIE_HEX + 1])
{
    uint8_t raw[DYN_COOKIE_HEX / 2];
    size_t got = 0;
    while (got < sizeof raw) {
        ssize_t k = getrandom(raw + got, sizeof raw - got, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        got += (size_t)k;
    }
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(hex + 2 * i, 3, "%02x", raw[i]);
    return 0;
}

/* ---- the peer table: ascending ids (add_peer only ever hands out larger
 * ones, so this is an append in practice), found by binary search ---- */

dyn_peer_t *dyn_peer_by_id(const dyn_tp_t *tp, int id)
{
    int lo = 0, hi = tp->npeers - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        int m = tp->peers[mid]->id;
        if (m == id)
            return tp->peers[mid];
        if (m < id)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

dyn_peer_t *dyn_peer_by_name(const dyn_tp_t *tp, locus_dyn_name_t name)
{
    for (int i = 0; i < tp->npeers; i++)
        if (tp->peers[i]->name.job == name.job && tp->peers[i]->name.rank == name.rank)
            return tp->peers[i];
    return NULL;
}

dyn_peer_t *dyn_peer_add(dyn_tp_t *tp, locus_dyn_name_t name, const char *card,
                         const dyn_card_t *where)
{
    /* Room first, so that no id is taken from the core for nothing. */
    if (tp->npeers == tp->cap_peers) {
        int cap = tp->cap_peers ? 2 * tp->cap_peers : 8;
        dyn_peer_t **n = realloc(tp->peers, (size_t)cap * sizeof *n);
        if (!n)
            return NULL;
        tp->peers = n;
        tp->cap_peers = cap;
    }
    dyn_peer_t *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->id = tp->up->add_peer(tp->core, &tp->base);
    if (p->id < 0) {
        free(p);
        return NULL;
    }
    p->name = name;
    p->fd = -1;
    snprintf(p->card, sizeof p->card, "%s", card);
    p->where = *where;
    int at = tp->npeers;
    while (at > 0 && tp->peers[at - 1]->id > p->id)
        at--;
    memmove(tp->peers + at + 1, tp->peers + at, (size_t)(tp->npeers - at) * sizeof *tp->peers);
    tp->peers[at] = p;
    tp->npeers++;
    return p;
}

int locus_dyn_peer(locus_tp_t *t, locus_dyn_name_t name, const char *card, char *err,
                   size_t errlen)
{
    dyn_tp_t *tp = (dyn_tp_t *)t;
    dyn_peer_t *p = dyn_peer_by_name(tp, name);
    if (p)
        return p->id;
    dyn_card_t where;
    if (!card) {
        snprintf(err, errlen, "dyn: job %" PRIu64 " rank %d is not known and has no card",
                 name.job, (int)name.rank);
        return -1;
    }
    if (strlen(card) >= LOCUS_DYN_CARD_MAX || dyn_card_parse(card, &where) != 0) {
        snprintf(err, errlen, "dyn: malformed card '%.80s' for job %" PRIu64 " rank %d", card,
                 name.job, (int)name.rank);
        return -1;
    }
    p = dyn_peer_add(tp, name, card, &where);
    if (!p) {
        snprintf(err, errlen, "dyn: out of memory adding job %" PRIu64 " rank %d", name.job,
                 (int)name.rank);
        return -1;
    }
    return p->id;
}

int locus_dyn_name(locus_tp_t *t, int id, locus_dyn_name_t *name, char *card, size_t len)
{
    const dyn_peer_t *p = dyn_peer_by_id((dyn_tp_t *)t, id);
    if (!p)
        return -1;
    if (name)
        *name = p->name;
    if (card && len)
        snprintf(card, len, "%s", p->card);
    return 0;
}

/* ---- ops ---- */

static int dyn_reaches(locus_tp_t *t, int peer)
{
    return dyn_peer_by_id((dyn_tp_t *)t, peer) != NULL;
}

static const char *dyn_last_error(locus_tp_t *t)
{
    dyn_tp_t *tp = (dyn_tp_t *)t;
    return tp->err[0] ? tp->err : NULL;
}

/* Not the card: its cookie lets anyone in, and this line goes to logs. */
static void dyn_describe(locus_tp_t *t, char *buf, size_t len)
{
    dyn_tp_t *tp = (dyn_tp_t *)t;
    if (tp->lfd >= 0)
        snprintf(buf, len, "dyn: %d peers, listening on port %u", tp->npeers, tp->port);
    else
        snprintf(buf, len, "dyn: %d peers, not listening", tp->npeers);
}

static void dyn_finalize(locus_tp_t *t)
{
    dyn_tp_t *tp = (dyn_tp_t *)t;
    dyn_drain(tp);
    for (int i = 0; i < tp->nins; i++)
        dyn_in_free(tp->ins[i]);
    for (int i = 0; i < tp->npeers; i++) {
        dyn_peer_t *p = tp->peers[i];
        if (p->fd >= 0)
            close(p->fd);
        free(p->out.buf);
        free(p->lost);
        free(p);
    }
    if (tp->lfd >= 0)
        close(tp->lfd);
    free(tp->ins);
    free(tp->peers);
    free(tp->pfd);
    free(tp->pown);
    free(tp);
}

static const locus_tp_ops_t dyn_ops = {
    .name = "dyn", .send = dyn_send, .progress = dyn_progress, .reaches = dyn_reaches,
    .finalize = dyn_finalize, .last_error = dyn_last_error, .describe = dyn_describe,
};

int locus_tp_dyn_create(const locus_tp_init_t *init, locus_dyn_name_t me, locus_tp_t **out,
                        char *err, size_t errlen)
{
    long connect_ms, flush_ms;
    *out = NULL;
    if (env_ms("LOCUS_DYN_CONNECT_MS", 1, &connect_ms, err, errlen) ||
        env_ms("LOCUS_DYN_FLUSH_MS", 0, &flush_ms, err, errlen))
        return -1;
    dyn_tp_t *tp = calloc(1, sizeof *tp);
    if (!tp) {
        snprintf(err, errlen, "dyn: out of memory");
        return -1;
    }
    if (cookie_make(tp->cookie) != 0) {
        snprintf(err, errlen, "dyn: getrandom: %s", strerror(errno));
        free(tp);
        return -1;
    }
    tp->base.ops = &dyn_ops;
    tp->up = init->up;
    tp->core = init->core;
    tp->me = me;
    tp->connect_ms = connect_ms;
    tp->flush_ms = flush_ms;
    tp->lfd = -1;
    *out = &tp->base;
    return 0;
}
