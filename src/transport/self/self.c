/*
 * The self transport: messages a rank sends to itself.
 *
 * Small messages are delivered inside send() (the contract allows upcalls
 * there). Large ones go through the rendezvous path so the data is copied
 * once, straight from the sender's buffer into the receive buffer, and an
 * unexpected large message costs no copy at all until it is matched.
 */
#include <stdlib.h>
#include <string.h>

#include "locus_copy.h"
#include "locus_transport.h"

#define SELF_EAGER_MAX 65536

struct locus_tp_rndv {
    const void *data;
    void *send_ctx;
    struct locus_tp_rndv *prev, *next;  /* announced, not yet received */
};

typedef struct {
    locus_tp_t base;
    int rank;
    const locus_tp_upcalls_t *up;
    void *core;
    locus_tp_rndv_t *pending;   /* freed at finalize if never received */
} self_tp_t;

static int self_send(locus_tp_t *tp, int dst, const void *hdr, size_t hdrlen,
                     const void *data, size_t len, void *send_ctx)
{
    self_tp_t *s = (self_tp_t *)tp;
    if (dst != s->rank)
        return -1;
    if (len <= SELF_EAGER_MAX) {
        s->up->deliver(s->core, dst, hdr, hdrlen, data, len);
        return LOCUS_TP_DONE;
    }
    locus_tp_rndv_t *rv = malloc(sizeof *rv);
    if (!rv)
        return -1;
    rv->data = data;
    rv->send_ctx = send_ctx;
    rv->prev = NULL;
    rv->next = s->pending;
    if (s->pending)
        s->pending->prev = rv;
    s->pending = rv;
    s->up->rndv_arrived(s->core, dst, hdr, hdrlen, len, rv);
    return LOCUS_TP_PENDING;
}

static int self_rndv_recv(locus_tp_t *tp, locus_tp_rndv_t *rv, void *buf, size_t len,
                          void *recv_ctx, int hints)
{
    (void)hints;
    self_tp_t *s = (self_tp_t *)tp;
    if (len)
        locus_copy(buf, rv->data, len);
    void *send_ctx = rv->send_ctx;
    if (rv->prev)
        rv->prev->next = rv->next;
    else
        s->pending = rv->next;
    if (rv->next)
        rv->next->prev = rv->prev;
    free(rv);
    s->up->rndv_done(s->core, recv_ctx);
    s->up->send_done(s->core, send_ctx);
    return 0;
}

static int self_progress(locus_tp_t *tp)
{
    (void)tp;
    return 0;
}

static int self_reaches(locus_tp_t *tp, int peer)
{
    return peer == ((self_tp_t *)tp)->rank;
}

static void self_finalize(locus_tp_t *tp)
{
    self_tp_t *s = (self_tp_t *)tp;
    while (s->pending) {
        locus_tp_rndv_t *rv = s->pending;
        s->pending = rv->next;
        free(rv);
    }
    free(tp);
}

static const locus_tp_ops_t self_ops = {
    .name = "self", .send = self_send, .rndv_recv = self_rndv_recv, .progress = self_progress,
    .reaches = self_reaches, .finalize = self_finalize,
};

int locus_tp_self_create(const locus_tp_init_t *init, locus_tp_t **out,
                         char *err, size_t errlen)
{
    self_tp_t *s = calloc(1, sizeof *s);
    if (!s) {
        if (errlen)
            strncpy(err, "self transport: out of memory", errlen - 1);
        return -1;
    }
    s->base.ops = &self_ops;
    s->rank = init->rank;
    s->up = init->up;
    s->core = init->core;
    *out = &s->base;
    return 0;
}
