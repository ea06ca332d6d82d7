/* mock_tp.c — the scripted transport of mock_tp.h. */
#include "mock_tp.h"

#include <stdlib.h>
#include <string.h>

struct mock_owned {
    mock_owned_t *next;
    void *send_ctx;
};

static mock_msg_t *msg_new(int peer, const void *hdr, size_t hdrlen, const void *data,
                           size_t len)
{
    mock_msg_t *x = calloc(1, sizeof *x);
    if (!x)
        abort();
    x->peer = peer;
    x->hdrlen = hdrlen;
    memcpy(&x->hdr, hdr, hdrlen < sizeof x->hdr ? hdrlen : sizeof x->hdr);
    x->len = len;
    if (len) {
        if (!(x->data = malloc(len)))
            abort();
        memcpy(x->data, data, len);
    }
    return x;
}

void mock_msg_free(mock_msg_t *x)
{
    if (x) {
        free(x->data);
        free(x);
    }
}

static void list_free(mock_msg_t *x)
{
    while (x) {
        mock_msg_t *n = x->next;
        mock_msg_free(x);
        x = n;
    }
}

static int mock_send(locus_tp_t *tp, int dst, const void *hdr, size_t hdrlen, const void *data,
                     size_t len, void *send_ctx)
{
    mock_tp_t *m = (mock_tp_t *)tp;
    if (m->finalized || dst < 0 || dst >= m->size || hdrlen > LOCUS_TP_HDR_MAX)
        m->violations++;
    if (m->fail_send)
        return -1;
    if (m->again || (dst >= 0 && dst < 64 && m->again_to[dst])) {
        m->agains++;
        return LOCUS_TP_AGAIN;
    }

    mock_msg_t *x = msg_new(dst, hdr, hdrlen, data, len);
    if (m->out_tail)
        m->out_tail->next = x;
    else
        m->out_head = x;
    m->out_tail = x;
    m->sends++;
    if (len <= m->eager_max)
        return LOCUS_TP_DONE;
    mock_owned_t *o = calloc(1, sizeof *o), **pp = &m->owned;
    if (!o)
        abort();
    o->send_ctx = send_ctx;
    while (*pp)
        pp = &(*pp)->next;
    *pp = o;
    return LOCUS_TP_PENDING;
}

static int mock_rndv_recv(locus_tp_t *tp, locus_tp_rndv_t *rndv, void *buf, size_t len,
                          void *recv_ctx, int hints)
{
    (void)hints;
    mock_tp_t *m = (mock_tp_t *)tp;
    mock_msg_t *x = (mock_msg_t *)(void *)rndv;
    if (x->claimed || len > x->len)
        m->violations++;
    if (m->fail_rndv_recv)
        return -1;
    x->claimed = 1;
    x->dst = buf;
    x->dlen = len;
    x->recv_ctx = recv_ctx;
    return 0;
}

/* Moves the data of every claimed rendezvous (unless held). */
static int rndv_progress(mock_tp_t *m)
{
    int n = 0;
    mock_msg_t **pp = &m->rndv_head;
    while (*pp && !m->hold_rndv) {
        mock_msg_t *x = *pp;
        if (!x->claimed) {
            pp = &x->next;
            continue;
        }
        *pp = x->next;
        if (x->dlen)
            memcpy(x->dst, x->data, x->dlen);
        m->up->rndv_done(m->core, x->recv_ctx);
        mock_msg_free(x);
        n++;
    }
    return n;
}

static int mock_progress(locus_tp_t *tp)
{
    mock_tp_t *m = (mock_tp_t *)tp;
    if (m->finalized)
        m->violations++;
    if (m->fail_progress)
        return -1;
    if (m->quiet_rounds > 0) {
        m->quiet_rounds--;
        return 0;
    }
    int n = 0;
    mock_msg_t *x;
    while ((x = m->in_head)) {
        m->in_head = x->next;
        if (!m->in_head)
            m->in_tail = NULL;
        x->next = NULL;
        n++;
        if (x->len <= m->eager_max) {
            m->up->deliver(m->core, x->peer, &x->hdr, x->hdrlen, x->data, x->len);
            mock_msg_free(x);
            continue;
        }
        mock_msg_t **pp = &m->rndv_head;
        while (*pp)
            pp = &(*pp)->next;
        *pp = x;
        m->up->rndv_arrived(m->core, x->peer, &x->hdr, x->hdrlen, x->len,
                            (locus_tp_rndv_t *)(void *)x);
    }
    n += rndv_progress(m);
    while (m->owned && !m->hold_sends) {
        mock_owned_t *o = m->owned;
        m->owned = o->next;
        m->up->send_done(m->core, o->send_ctx);
        free(o);
        n++;
    }
    return n;
}

static int mock_reaches(locus_tp_t *tp, int peer)
{
    return peer >= 0 && peer < ((mock_tp_t *)tp)->size;
}

static void mock_finalize(locus_tp_t *tp)
{
    mock_tp_t *m = (mock_tp_t *)tp;
    list_free(m->in_head);
    list_free(m->rndv_head);
    list_free(m->out_head);
    while (m->owned) {
        mock_owned_t *o = m->owned;
        m->owned = o->next;
        free(o);
    }
    m->in_head = m->in_tail = m->rndv_head = m->out_head = m->out_tail = NULL;
    m->finalized = 1;
}

static const char *mock_last_error(locus_tp_t *tp)
{
    return ((mock_tp_t *)tp)->fail_progress ? "mock: told to fail" : NULL;
}

/* send() where it completes at once; AGAIN for what would be PENDING. */
static int mock_send_now(locus_tp_t *tp, int dst, const void *hdr, size_t hdrlen,
                         const void *data, size_t len)
{
    mock_tp_t *m = (mock_tp_t *)tp;
    if (len > m->eager_max) {
        m->agains++;
        return LOCUS_TP_AGAIN;
    }
    return mock_send(tp, dst, hdr, hdrlen, data, len, NULL);
}

static const locus_tp_ops_t mock_ops = {
    .name = "mock",
    .send = mock_send,
    .rndv_recv = mock_rndv_recv,
    .progress = mock_progress,
    .reaches = mock_reaches,
    .finalize = mock_finalize,
    .last_error = mock_last_error,
    .send_now = mock_send_now,
};

int mock_attach(mock_tp_t *m, locus_core_t *c, int size, size_t eager_max)
{
    memset(m, 0, sizeof *m);
    m->base.ops = &mock_ops;
    m->up = &locus_core_upcalls;
    m->core = c;
    m->size = size;
    m->eager_max = eager_max;
    return locus_core_add_tp(c, &m->base);
}

void mock_inject(mock_tp_t *m, int src, const locus_hdr_t *h, size_t hdrlen,
                 const void *data, size_t len)
{
    mock_msg_t *x = msg_new(src, h, hdrlen, data, len);
    if (m->in_tail)
        m->in_tail->next = x;
    else
        m->in_head = x;
    m->in_tail = x;
}

mock_msg_t *mock_out_pop(mock_tp_t *m)
{
    mock_msg_t *x = m->out_head;
    if (x) {
        m->out_head = x->next;
        if (!m->out_head)
            m->out_tail = NULL;
        x->next = NULL;
    }
    return x;
}

int mock_out_count(const mock_tp_t *m)
{
    int n = 0;
    for (const mock_msg_t *x = m->out_head; x; x = x->next)
        n++;
    return n;
}

int mock_owned_count(const mock_tp_t *m)
{
    int n = 0;
    for (const mock_owned_t *o = m->owned; o; o = o->next)
        n++;
    return n;
}
