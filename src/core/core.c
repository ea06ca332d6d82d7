/* Core set-up, request pool, progress loop and finalization. */
#include "locus_core.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "locus_tunables.h"

#define SLAB_REQS 256

int locus_core_init(locus_core_t *c, int rank, int size, int local_size,
                    char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->rank = rank;
    c->size = size;
    c->peers = calloc((size_t)size, sizeof *c->peers);
    c->pend = calloc((size_t)size, sizeof *c->pend);
    c->pend_mark = calloc((size_t)size, 1);
    if (!c->peers || !c->pend || !c->pend_mark) {
        snprintf(err, errlen, "out of memory for %d peers", size);
        return -1;
    }
    if (locus_tunable_long("LOCUS_POLLS_BEFORE_YIELD", &c->polls_before_yield, err, errlen))
        return -1;
    if (c->polls_before_yield < 1)
        c->polls_before_yield = 1;
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
        return -1;
    }
    return 0;
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

locus_req_t *locus_core_req_get(locus_core_t *c)
{
    locus_req_t *r = c->req_free;
    if (__builtin_expect(!r, 0)) {
        if (c->nslabs == c->capslabs) {
            int cap = c->capslabs ? 2 * c->capslabs : 16;
            void **s = realloc(c->slabs, (size_t)cap * sizeof *s);
            if (!s)
                return NULL;
            c->slabs = s;
            c->capslabs = cap;
        }
        locus_req_t *slab = malloc(SLAB_REQS * sizeof *slab);
        if (!slab)
            return NULL;
        c->slabs[c->nslabs++] = slab;
        for (int i = 0; i < SLAB_REQS; i++) {
            slab[i].next = c->req_free;
            c->req_free = &slab[i];
        }
        r = c->req_free;
    }
    c->req_free = r->next;
    memset(r, 0, sizeof *r);
    return r;
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

static int gen_poll(locus_core_t *c)
{
    int n = 0;
    locus_req_t *r = c->gen_head;
    while (r) {
        locus_req_t *next = r->next;
        int rc = r->poll(r->state);
        if (rc != 0) {
            if (r->prev)
                r->prev->next = r->next;
            else
                c->gen_head = r->next;
            if (r->next)
                r->next->prev = r->prev;
            r->next = r->prev = NULL;
            if (rc < 0)
                r->st_error = -rc;
            if (r->state_free)
                r->state_free(r->state);
            r->state = NULL;
            locus_core_complete(c, r);
            n++;
        }
        r = next;
    }
    return n;
}

int locus_core_flush(locus_core_t *c); /* match.c */

int locus_core_progress(locus_core_t *c)
{
    int n = 0;
    for (int i = 0; i < c->ntp; i++) {
        int k = c->tps[i]->ops->progress(c->tps[i]);
        if (__builtin_expect(k < 0, 0)) {
            if (!c->fatal)
                snprintf(c->fatal_msg, sizeof c->fatal_msg,
                         "transport %s failed (a peer process died?)", c->tps[i]->ops->name);
            c->fatal = 1;
            return -1;
        }
        n += k;
    }
    if (c->npend)
        n += locus_core_flush(c);
    if (c->gen_head)
        n += gen_poll(c);
    return n;
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

void locus_core_finalize(locus_core_t *c)
{
    while (c->npend && !c->fatal)
        if (locus_core_progress(c) == 0)
            locus_core_idle(c);
    for (int i = c->ntp - 1; i >= 0; i--)
        c->tps[i]->ops->finalize(c->tps[i]);
    c->ntp = 0;
    while (c->unexp_head) {
        locus_umsg_t *u = c->unexp_head;
        c->unexp_head = u->next;
        if (u->data != u->inl)
            free(u->data);
        free(u);
    }
    while (c->umsg_free) {
        locus_umsg_t *u = c->umsg_free;
        c->umsg_free = u->next;
        free(u);
    }
    for (int i = 0; i < c->nslabs; i++)
        free(c->slabs[i]);
    free(c->slabs);
    free(c->peers);
    free(c->pend);
    free(c->pend_mark);
    memset(c, 0, sizeof *c);
}
