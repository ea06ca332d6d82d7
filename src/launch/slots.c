/*
 * slots.c — the launch's slot ledger, kept by the front end that started
 * the first job beside its name service (names.c serves the requests):
 * which hosts of the launch's host list have slots left, and which PUs of
 * a host the jobs of the launch are bound to. A job MPI_Comm_spawn starts
 * asks it where to run (its slots then count as used until it ends), and
 * each of its proxies asks which PUs of its node are free before it plans,
 * so children run on free slots and free cores, as Open MPI's do.
 *
 *   TOKEN place KEY N\n            ok HOST:K,HOST:K... | ok - (no host list:
 *                                  run where the spawning rank is)
 *   TOKEN take KEY HOST ALLOWED NEED\n
 *                                  ok LIST   (ALLOWED less what other jobs
 *                                  hold on HOST, at least NEED PUs; held for
 *                                  KEY until it claims)
 *                                  wait      (enough once another job's
 *                                  hold becomes its claim: ask again)
 *                                  ok -      (not enough)
 *   TOKEN claim KEY HOST LIST|-\n  ok               (what KEY is bound to there)
 *   TOKEN release KEY\n            ok               (KEY's job ended)
 *
 * KEY names a job (its slots key, or its job id); lists are hwloc's
 * ("0-3,8"). Slots beyond the free ones go round the hosts (the child job
 * runs oversubscribed, as its locusrun is told it may). A child job's
 * locusrun releases at its end, and the spawning rank again when it reaps
 * that locusrun; a job whose both are killed leaves its entries: later
 * children avoid those slots, which costs placement, never correctness.
 */
#include "frontend.h"

#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS_ENTRIES_MAX 4096  /* uses and claims each; more: "full" */
#define SLOTS_KEY_MAX 64

typedef struct {
    char *name;
    long slots, used;
} slot_host_t;

typedef struct {
    char key[SLOTS_KEY_MAX];
    int host;
    long n;
} slot_use_t;

typedef struct {
    char key[SLOTS_KEY_MAX];
    char *host;
    hwloc_bitmap_t pus;
    int held;                  /* a take's, until the claim */
} slot_claim_t;

struct slots {
    int nhosts, next;          /* next: where the next oversubscribed rank goes */
    slot_host_t *hosts;
    int nuses, nclaims;
    slot_use_t *uses;          /* [SLOTS_ENTRIES_MAX] */
    slot_claim_t *claims;      /* [SLOTS_ENTRIES_MAX] */
};

slots_t *slots_new(const fe_t *fe)
{
    const launch_opts_t *o = fe->o;
    slots_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->uses = calloc(SLOTS_ENTRIES_MAX, sizeof *s->uses);
    s->claims = calloc(SLOTS_ENTRIES_MAX, sizeof *s->claims);
    s->hosts = calloc((size_t)o->hosts.n + 1, sizeof *s->hosts);
    if (!s->uses || !s->claims || !s->hosts) {
        slots_free(s);
        return NULL;
    }
    /* Without a host list a child job runs where its spawning rank is:
     * only the PUs are the ledger's then. */
    for (int h = 0; h < o->hosts.n; h++) {
        s->hosts[h].name = strdup(o->hosts.hosts[h].name);
        s->hosts[h].slots = o->hosts.hosts[h].slots;
        if (!s->hosts[h].name) {
            slots_free(s);
            return NULL;
        }
        s->nhosts++;
    }
    for (int i = 0; i < fe->layout.nnodes && s->nhosts > 0; i++)
        s->hosts[fe->layout.node_host[i]].used += fe->layout.node_nranks[i];
    return s;
}

void slots_free(slots_t *s)
{
    if (!s)
        return;
    for (int h = 0; h < s->nhosts; h++)
        free(s->hosts[h].name);
    for (int i = 0; s->claims && i < s->nclaims; i++) {
        free(s->claims[i].host);
        hwloc_bitmap_free(s->claims[i].pus);
    }
    free(s->hosts);
    free(s->uses);
    free(s->claims);
    free(s);
}

/* KEY's claim on host, or -1. */
static int claim_find(const slots_t *s, const char *key, const char *host)
{
    for (int i = 0; i < s->nclaims; i++)
        if (!strcmp(s->claims[i].key, key) && !strcmp(s->claims[i].host, host))
            return i;
    return -1;
}

static void claim_drop(slots_t *s, int i)
{
    free(s->claims[i].host);
    hwloc_bitmap_free(s->claims[i].pus);
    s->claims[i] = s->claims[--s->nclaims];
}

/* Sets KEY's claim on host to pus (taken over; NULL drops the claim),
 * held (a take's) or claimed. 0, or -1 when the ledger is full or out of
 * memory. */
static int claim_set(slots_t *s, const char *key, const char *host, hwloc_bitmap_t pus,
                     int held)
{
    int i = claim_find(s, key, host);
    if (i >= 0)
        claim_drop(s, i);
    if (!pus)
        return 0;
    char *h = s->nclaims < SLOTS_ENTRIES_MAX ? strdup(host) : NULL;
    if (!h) {
        hwloc_bitmap_free(pus);
        return -1;
    }
    slot_claim_t *c = &s->claims[s->nclaims++];
    snprintf(c->key, sizeof c->key, "%s", key);
    c->host = h;
    c->pus = pus;
    c->held = held;
    return 0;
}

/* "ok LIST\n" into out, or NULL when it does not fit. */
static const char *answer_list(hwloc_const_bitmap_t set, char *out, size_t outlen)
{
    int n = snprintf(out, outlen, "ok ");
    int w = hwloc_bitmap_list_snprintf(out + n, outlen - (size_t)n - 1, set);
    if (w < 0 || (size_t)(n + w) + 2 > outlen)
        return NULL;
    strcat(out, "\n");
    return out;
}

/* ALLOWED less what other keys have on host (held ones too, or not). */
static hwloc_bitmap_t free_of(const slots_t *s, const char *key, const char *host,
                              const char *allowed, int with_held)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set || hwloc_bitmap_list_sscanf(set, allowed) < 0) {
        hwloc_bitmap_free(set);
        return NULL;
    }
    for (int i = 0; i < s->nclaims; i++)
        if ((with_held || !s->claims[i].held) && strcmp(s->claims[i].key, key) &&
            !strcmp(s->claims[i].host, host))
            hwloc_bitmap_andnot(set, set, s->claims[i].pus);
    return set;
}

static const char *take(slots_t *s, char **w, char *out, size_t outlen)
{
    const char *key = w[2], *host = w[3], *allowed = w[4];
    char *end;
    long need = strtol(w[5], &end, 10);
    if (*end || need < 1)
        return NULL;
    hwloc_bitmap_t free_pus = free_of(s, key, host, allowed, 1), firm = NULL;
    if (!free_pus)
        return NULL;
    const char *reply = "ok -\n";
    if (hwloc_bitmap_weight(free_pus) >= need) {
        reply = answer_list(free_pus, out, outlen);
    } else if ((firm = free_of(s, key, host, allowed, 0)) != NULL &&
               hwloc_bitmap_weight(firm) >= need) {
        reply = "wait\n"; /* another job's hold will shrink to its claim */
    }
    hwloc_bitmap_free(firm);
    if (!reply)
        reply = "ok -\n"; /* a list too long to say: the whole node */
    /* Held for KEY until it claims what it bound: a job planning beside
     * it meanwhile waits. */
    hwloc_bitmap_t held = reply == out ? free_pus : NULL;
    if (!held)
        hwloc_bitmap_free(free_pus);
    if (claim_set(s, key, host, held, 1) < 0)
        return "full\n";
    return reply;
}

static const char *claim(slots_t *s, const char *key, const char *host, const char *list)
{
    hwloc_bitmap_t pus = NULL;
    if (strcmp(list, "-")) {
        pus = hwloc_bitmap_alloc();
        if (!pus || hwloc_bitmap_list_sscanf(pus, list) < 0) {
            hwloc_bitmap_free(pus);
            return NULL;
        }
    }
    return claim_set(s, key, host, pus, 0) < 0 ? "full\n" : "ok\n";
}

/* Free slots first, host by host; the rest round the hosts. */
static const char *place(slots_t *s, const char *key, const char *count, char *out,
                         size_t outlen)
{
    char *end;
    long n = strtol(count, &end, 10);
    if (*end || n < 1 || n > 10000000)
        return NULL;
    if (s->nhosts == 0)
        return "ok -\n";
    long *k = calloc((size_t)s->nhosts, sizeof *k), left = n;
    if (!k)
        return "full\n";
    for (int h = 0; h < s->nhosts && left > 0; h++) {
        long f = s->hosts[h].slots - s->hosts[h].used;
        if (f > 0) {
            k[h] = f < left ? f : left;
            left -= k[h];
        }
    }
    /* The rest round the hosts from where the last spawn's rest ended, so
     * no host takes every spawn's extra ranks. */
    for (; left > 0; s->next = (s->next + 1) % s->nhosts, left--)
        k[s->next]++;
    int used = 0, len = snprintf(out, outlen, "ok");
    for (int h = 0; h < s->nhosts && len > 0 && (size_t)len < outlen; h++)
        if (k[h] > 0) {
            len += snprintf(out + len, outlen - (size_t)len, "%s%s:%ld", used ? "," : " ",
                            s->hosts[h].name, k[h]);
            used++;
        }
    const char *reply = out;
    if (len <= 0 || (size_t)len + 2 > outlen || s->nuses + used > SLOTS_ENTRIES_MAX)
        reply = "ok -\n";  /* too many hosts to say: where the spawning rank is */
    else {
        strcat(out, "\n");
        for (int h = 0; h < s->nhosts; h++)
            if (k[h] > 0) {
                slot_use_t *u = &s->uses[s->nuses++];
                snprintf(u->key, sizeof u->key, "%s", key);
                u->host = h;
                u->n = k[h];
                s->hosts[h].used += k[h];
            }
    }
    free(k);
    return reply;
}

static const char *release(slots_t *s, const char *key)
{
    for (int i = s->nuses - 1; i >= 0; i--)
        if (!strcmp(s->uses[i].key, key)) {
            s->hosts[s->uses[i].host].used -= s->uses[i].n;
            s->uses[i] = s->uses[--s->nuses];
        }
    for (int i = s->nclaims - 1; i >= 0; i--)
        if (!strcmp(s->claims[i].key, key))
            claim_drop(s, i);
    return "ok\n";
}

const char *slots_answer(slots_t *s, char **w, int n, char *out, size_t outlen)
{
    if (!s || n < 3 || strlen(w[2]) >= SLOTS_KEY_MAX)
        return NULL;
    if (n == 4 && !strcmp(w[1], "place"))
        return place(s, w[2], w[3], out, outlen);
    if (n == 6 && !strcmp(w[1], "take"))
        return take(s, w, out, outlen);
    if (n == 5 && !strcmp(w[1], "claim"))
        return claim(s, w[2], w[3], w[4]);
    if (n == 3 && !strcmp(w[1], "release"))
        return release(s, w[2]);
    return NULL;
}
