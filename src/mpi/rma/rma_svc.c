/*
 * rma_svc.c — the target side of the message path: every window has a
 * service, a generalized request the progress engine polls on every round,
 * whatever MPI call the target is in (a wait, a test, a probe, a
 * collective, an RMA call). It receives the requests that arrived and
 * applies them in arrival order, so an unlock or a flush, answered last,
 * means everything before it from that origin is done. Accumulates take
 * the target's accumulate mutex and lock requests its lock word, the same
 * ones node-local origins take directly.
 *
 * The limit: a target that makes no MPI call serves nobody meanwhile.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rma_wire.h"

/* A request that arrived at the target. */
typedef struct rma_in {
    struct rma_in *next;
    locus_req_t *req;
    int src;
    size_t len;
    char *buf;
} rma_in_t;

struct rma_svc {
    locus_win_t *w;           /* NULL once the window is freed */
    rma_in_t *head, *tail;    /* in arrival order */
    rma_in_t *locks;          /* lock requests not granted yet, in order */
    int *err_of;              /* [nranks] error to report at the next ack */
};

/* Sends a reply carrying err and len bytes of data (NULL: none). */
static void reply(locus_win_t *w, int dest, int tag, int err, const void *data, size_t len)
{
    if (err != MPI_SUCCESS || !data)
        len = 0;
    char *buf = malloc(sizeof(rma_reply_t) + len);
    if (!buf)
        return;   /* the origin's wait fails with the job, not silently */
    *(rma_reply_t *)buf = (rma_reply_t){ err, 0 };
    if (len)
        memcpy(buf + sizeof(rma_reply_t), data, len);
    rma_send_owned(w, dest, tag, buf, sizeof(rma_reply_t) + len);
}

/* A request is well formed: sizes add up, the data matches the kind. */
static int msg_ok(const rma_in_t *in)
{
    const rma_msg_t *m = (const rma_msg_t *)in->buf;
    if (in->len < sizeof *m || m->kind == 0 || m->kind >= MSG_KINDS ||
        m->nruns > (in->len - sizeof *m) / sizeof(rma_run_t) ||
        m->dlen != in->len - sizeof *m - m->nruns * sizeof(rma_run_t))
        return 0;
    uint64_t sum = 0;
    const rma_run_t *runs = (const rma_run_t *)(in->buf + sizeof *m);
    for (uint64_t i = 0; i < m->nruns; i++)
        sum += runs[i].len;
    switch (m->kind) {
    case MSG_PUT: case MSG_ACC:
        return sum >= m->len && m->dlen == m->len;
    case MSG_GET:
        return sum >= m->len && m->dlen == 0;
    case MSG_GACC:
        return sum >= m->len && (m->dlen == m->len || (m->op == LOCUS_OP_NO_OP && !m->dlen));
    case MSG_CAS:
        return sum >= m->len && m->dlen == 2 * m->len;
    }
    return 1;
}

/* Checks a request's runs against my window: MPI error class. */
static int runs_check(locus_win_t *w, const rma_msg_t *m, const rma_run_t *runs)
{
    for (uint64_t i = 0; i < m->nruns; i++) {
        uint64_t at = m->addr + (uint64_t)runs[i].off, len = runs[i].len;
        if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
            if (!rma_regions_cover(w->regions, w->nregions, at, len))
                return MPI_ERR_RMA_RANGE;
        } else if (at > (uint64_t)w->size || len > (uint64_t)w->size - at) {
            return MPI_ERR_RMA_RANGE;
        }
    }
    return MPI_SUCCESS;
}

/* Notes an error of a request without reply, for the next acknowledgement. */
static void note_err(rma_svc_t *s, int src, int err)
{
    if (err != MPI_SUCCESS && !s->err_of[src])
        s->err_of[src] = err;
}

/* A read-modify-write under my accumulate mutex; 0 when it is busy. */
static int serve_atomic(rma_svc_t *s, int src, const rma_msg_t *m, const rma_target_t *t,
                        const char *data, int err)
{
    locus_win_t *w = s->w;
    if (err == MPI_SUCCESS && m->kind != MSG_CAS && rma_op_elem(m->op, (locus_elem_t)m->elem) < 0)
        err = MPI_ERR_OP;
    int held = err == MPI_SUCCESS;
    if (held && !rma_acc_try(w->myslot))
        return 0;
    char *old = NULL, *cur = NULL;
    if (err == MPI_SUCCESS) {
        old = malloc(t->len + 1);
        cur = malloc(t->len + 1);
        if (!old || !cur)
            err = MPI_ERR_NO_MEM;
    }
    if (err == MPI_SUCCESS) {
        rma_target_read(t, old);
        if (m->kind == MSG_CAS) {
            if (memcmp(old, data + t->len, t->len) == 0)
                rma_target_write(t, data);
        } else if (m->op != LOCUS_OP_NO_OP) {
            memcpy(cur, old, t->len);
            int el = rma_op_elem(m->op, (locus_elem_t)m->elem);
            err = rma_apply(m->op, (locus_elem_t)el, data, cur, t->len);
            if (err == MPI_SUCCESS)
                rma_target_write(t, cur);
        }
    }
    if (held)
        rma_acc_release(w->myslot);
    if (m->reply_tag)
        reply(w, src, m->reply_tag, err, old, t->len);
    else
        note_err(s, src, err);
    free(old);
    free(cur);
    return 1;
}

/* Applies one request: 1 done, 0 retry later (mutex busy), -1 a lock
 * that cannot be granted yet. */
static int serve(rma_svc_t *s, rma_in_t *in)
{
    locus_win_t *w = s->w;
    const rma_msg_t *m = (const rma_msg_t *)in->buf;
    int src = in->src;
    if (!msg_ok(in)) {
        fprintf(stderr, "locus: rank %d: malformed one-sided request from window rank %d "
                "(%zu bytes): refused\n", w->rank, src, in->len);
        if (in->len >= sizeof *m && m->reply_tag > 0)
            reply(w, src, m->reply_tag, MPI_ERR_INTERN, NULL, 0);
        else
            note_err(s, src, MPI_ERR_INTERN);
        return 1;
    }
    const rma_run_t *runs = (const rma_run_t *)(in->buf + sizeof *m);
    const char *data = in->buf + sizeof *m + m->nruns * sizeof *runs;
    uintptr_t base = w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : (uintptr_t)w->base;
    rma_target_t t = { .base = (char *)(base + m->addr), .runs = runs, .nruns = m->nruns,
                       .len = m->len };
    int err = m->kind <= MSG_CAS ? runs_check(w, m, runs) : MPI_SUCCESS;
    int type = m->lock == 1 ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE;
    switch (m->kind) {
    case MSG_PUT:
        if (err == MPI_SUCCESS)
            rma_target_write(&t, data);
        note_err(s, src, err);
        return 1;
    case MSG_GET: {
        char *buf = err == MPI_SUCCESS ? malloc(t.len + 1) : NULL;
        if (err == MPI_SUCCESS && !buf)
            err = MPI_ERR_NO_MEM;
        if (buf)
            rma_target_read(&t, buf);
        reply(w, src, m->reply_tag, err, buf, t.len);
        free(buf);
        return 1;
    }
    case MSG_ACC:
    case MSG_GACC:
    case MSG_CAS:
        return serve_atomic(s, src, m, &t, data, err);
    case MSG_LOCK:
        if (!rma_lock_try(w->myslot, type))
            return -1;
        reply(w, src, m->reply_tag, MPI_SUCCESS, NULL, 0);
        return 1;
    case MSG_UNLOCK:
    case MSG_FLUSH:
        /* Everything this origin sent before is applied: acknowledge,
         * with the first error its operations met. */
        if (m->kind == MSG_UNLOCK)
            rma_lock_release(w->myslot, type);
        reply(w, src, m->reply_tag, s->err_of[src], NULL, 0);
        s->err_of[src] = MPI_SUCCESS;
        return 1;
    case MSG_POST:
        w->peers[src].posted++;
        return 1;
    case MSG_COMPLETE:
        w->peers[src].completed++;
        return 1;
    }
    return 1;
}

static void in_free(rma_in_t *in)
{
    if (in->req)
        locus_core_req_put(locus_core(), in->req);
    free(in->buf);
    free(in);
}

/* Receives the requests that have arrived. */
static void svc_take(rma_svc_t *s)
{
    locus_win_t *w = s->w;
    int src, tag;
    size_t bytes;
    while (locus_core_iprobe(locus_core(), w->comm->ctx_p2p, LOCUS_ANY, RMA_TAG_REQ, &src, &tag,
                             &bytes)) {
        rma_in_t *in = calloc(1, sizeof *in);
        char *buf = malloc(bytes ? bytes : 1);
        locus_req_t *r = locus_core_req_get(locus_core());
        if (!in || !buf || !r) {
            free(in);
            free(buf);
            if (r)
                locus_core_req_put(locus_core(), r);
            return;   /* out of memory: left for a later round */
        }
        in->req = r;
        in->src = src;
        in->len = bytes;
        in->buf = buf;
        locus_p2p_irecv(buf, bytes, rma_bytes(), src, RMA_TAG_REQ, w->comm, w->comm->ctx_p2p, r);
        if (s->tail)
            s->tail->next = in;
        else
            s->head = in;
        s->tail = in;
    }
}

static int svc_poll(void *state)
{
    rma_svc_t *s = state;
    if (!s->w)
        return 1;
    svc_take(s);
    /* Lock requests that waited first, in their order. */
    for (rma_in_t **pp = &s->locks; *pp;) {
        rma_in_t *in = *pp;
        if (serve(s, in) < 0) {
            pp = &in->next;
            continue;
        }
        *pp = in->next;
        in_free(in);
    }
    while (s->head && s->head->req->done) {
        rma_in_t *in = s->head;
        int rc = serve(s, in);
        if (rc == 0)
            break;   /* the mutex is busy: keep the order, retry next round */
        s->head = in->next;
        if (!s->head)
            s->tail = NULL;
        in->next = NULL;
        if (rc < 0) {
            /* A lock that cannot be granted yet waits aside, so the
             * holder's unlock behind it still gets through. */
            locus_core_req_put(locus_core(), in->req);
            in->req = NULL;
            rma_in_t **pp = &s->locks;
            while (*pp)
                pp = &(*pp)->next;
            *pp = in;
        } else {
            in_free(in);
        }
    }
    rma_pend_sweep(s->w);
    return 0;
}

static void svc_state_free(void *state)
{
    rma_svc_t *s = state;
    free(s->err_of);
    free(s);
}

int rma_svc_start(locus_win_t *w)
{
    rma_svc_t *s = calloc(1, sizeof *s);
    if (!s || !(s->err_of = calloc((size_t)w->nranks, sizeof *s->err_of))) {
        free(s);
        return MPI_ERR_NO_MEM;
    }
    s->w = w;
    locus_req_t *r = locus_req_gen_new(w->comm, svc_poll, s, svc_state_free);
    if (!r) {
        svc_state_free(s);
        return MPI_ERR_NO_MEM;
    }
    r->freed = 1;   /* nobody waits for it: recycled when it ends */
    w->svc = s;
    return MPI_SUCCESS;
}

void rma_svc_stop(locus_win_t *w)
{
    rma_svc_t *s = w->svc;
    if (!s)
        return;
    /* Whatever an erroneous program left behind is given up. */
    rma_pend_drop_all(w);
    for (rma_in_t *lists[2] = { s->head, s->locks }, **l = lists; l < lists + 2; l++) {
        while (*l) {
            rma_in_t *in = *l;
            *l = in->next;
            if (in->req && !in->req->done) {
                locus_core_abandon(locus_core(), in->req);
                in->req = NULL;
            }
            in_free(in);
        }
    }
    s->head = s->tail = s->locks = NULL;
    s->w = NULL;   /* its next poll ends the service request */
    w->svc = NULL;
}
