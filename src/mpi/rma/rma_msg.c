/*
 * rma_msg.c — the origin side of one-sided operations through messages,
 * for targets an origin cannot reach in memory (another node, CMA
 * refused, LOCUS_RMA_PATH=msg): requests, the replies awaited, lock /
 * unlock / flush round trips and request-based completion. The target
 * serves them in rma_svc.c; the wire format is rma_wire.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rma_wire.h"

int rma_send_owned(locus_win_t *w, int dest, int tag, char *buf, size_t len)
{
    locus_core_t *c = locus_core();
    locus_req_t *r = locus_core_req_get(c);
    if (!r) {
        free(buf);
        return MPI_ERR_NO_MEM;
    }
    int err = locus_p2p_isend(buf, len, rma_bytes(), dest, tag, w->comm, w->comm->ctx_p2p, 0, r);
    if (err != MPI_SUCCESS) {
        free(buf);
        locus_core_req_put(c, r);
        return err;
    }
    if (r->done) {
        free(buf);
        locus_core_req_put(c, r);
    } else {
        r->tmp = buf;     /* the core frees it with the request */
        r->freed = 1;
    }
    return MPI_SUCCESS;
}

static int next_tag(locus_win_t *w)
{
    if (w->next_tag < RMA_TAG_FIRST || w->next_tag >= RMA_TAG_LAST)
        w->next_tag = RMA_TAG_FIRST;
    return w->next_tag++;
}

/* Posts the receive of a reply with rlen data bytes from target. */
static rma_pend_t *pend_new(locus_win_t *w, int target, int tag, size_t rlen)
{
    rma_pend_t *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->cap = sizeof(rma_reply_t) + rlen;
    p->buf = malloc(p->cap);
    p->rreq = locus_core_req_get(locus_core());
    if (!p->buf || !p->rreq) {
        if (p->rreq)
            locus_core_req_put(locus_core(), p->rreq);
        free(p->buf);
        free(p);
        return NULL;
    }
    p->target = target;
    p->rlen = rlen;
    locus_p2p_irecv(p->buf, p->cap, rma_bytes(), target, tag, w->comm, w->comm->ctx_p2p, p->rreq);
    p->next = w->pend;
    w->pend = p;
    w->peers[target].npend++;
    return p;
}

static void pend_free(rma_pend_t *p)
{
    if (p->rdt)
        locus_dtype_release(p->rdt);
    free(p->buf);
    free(p);
}

void rma_pend_sweep(locus_win_t *w)
{
    for (rma_pend_t **pp = &w->pend; *pp;) {
        rma_pend_t *p = *pp;
        if (!p->rreq->done) {
            pp = &p->next;
            continue;
        }
        *pp = p->next;
        const rma_reply_t *rp = (const rma_reply_t *)p->buf;
        if (p->rreq->st_error != MPI_SUCCESS || p->rreq->st_bytes < sizeof *rp)
            p->err = p->rreq->st_error ? p->rreq->st_error : MPI_ERR_INTERN;
        else
            p->err = rp->err;
        if (p->err == MPI_SUCCESS && p->res && p->rlen)
            locus_dtype_unpack(p->res, p->rcount, p->rdt, 0, p->buf + sizeof *rp, p->rlen);
        locus_core_req_put(locus_core(), p->rreq);
        p->rreq = NULL;
        p->done = 1;
        w->peers[p->target].npend--;
        if (p->err != MPI_SUCCESS && !p->for_req && !w->err_deferred)
            w->err_deferred = p->err;
        if (!p->for_req)
            pend_free(p);
    }
}
void rma_pend_drop_all(locus_win_t *w)
{
    rma_pend_sweep(w);
    while (w->pend) {
        rma_pend_t *p = w->pend;
        w->pend = p->next;
        w->peers[p->target].npend--;
        locus_core_abandon(locus_core(), p->rreq);
        p->rreq = NULL;
        p->done = 1;
        p->err = MPI_ERR_RMA_SYNC;
        if (!p->for_req)
            pend_free(p);
    }
}

/* ---- origin side ---------------------------------------------------------- */

int rma_msg_issue(locus_win_t *w, const rma_op_t *o, rma_pend_t **pendp)
{
    rma_run_t *runs = NULL;
    size_t nruns = 0;
    int err = rma_runs_of(o->tcount, o->tdt, &runs, &nruns);
    if (err != MPI_SUCCESS)
        return err;
    static const uint8_t kinds[] = { [RMA_PUT] = MSG_PUT, [RMA_GET] = MSG_GET,
                                     [RMA_ACC] = MSG_ACC, [RMA_GACC] = MSG_GACC,
                                     [RMA_CAS] = MSG_CAS };
    int carries = o->kind == RMA_PUT || o->kind == RMA_ACC || o->kind == RMA_CAS ||
                  (o->kind == RMA_GACC && o->op != LOCUS_OP_NO_OP);
    size_t dlen = !carries ? 0 : o->kind == RMA_CAS ? 2 * o->len : o->len;
    size_t rsz = nruns * sizeof(rma_run_t);
    size_t total = sizeof(rma_msg_t) + rsz + dlen;
    char *buf = malloc(total);
    if (!buf) {
        free(runs);
        return MPI_ERR_NO_MEM;
    }
    rma_msg_t *m = (rma_msg_t *)buf;
    *m = (rma_msg_t){ .kind = kinds[o->kind], .elem = (uint8_t)o->el, .op = (uint8_t)o->op,
                      .addr = o->addr, .nruns = nruns, .len = o->len, .dlen = dlen };
    if (rsz)
        memcpy(buf + sizeof *m, runs, rsz);
    free(runs);
    char *data = buf + sizeof *m + rsz;
    if (carries)
        locus_dtype_pack(o->obuf, o->ocount, o->odt, 0, data, o->len);
    if (o->kind == RMA_CAS)
        locus_dtype_pack(o->cbuf, 1, o->odt, 0, data + o->len, o->len);
    rma_pend_t *p = NULL;
    if (o->kind != RMA_PUT && o->kind != RMA_ACC) {
        m->reply_tag = next_tag(w);
        p = pend_new(w, o->target, m->reply_tag, o->len);
        if (!p) {
            free(buf);
            return MPI_ERR_NO_MEM;
        }
        p->res = o->rbuf;
        p->rcount = o->rcount;
        p->rdt = o->rdt;
        locus_dtype_retain(o->rdt);
        if (pendp) {
            p->for_req = 1;
            *pendp = p;
        }
    }
    err = rma_send_owned(w, o->target, RMA_TAG_REQ, buf, total);
    if (err == MPI_SUCCESS)
        w->peers[o->target].msg_ops++;
    return err;
}

/* Sends a control request; with want_reply waits for the answer. */
static int control(locus_win_t *w, int target, int kind, int lock, int want_reply)
{
    char *buf = malloc(sizeof(rma_msg_t));
    if (!buf)
        return MPI_ERR_NO_MEM;
    rma_msg_t *m = (rma_msg_t *)buf;
    *m = (rma_msg_t){ .kind = (uint8_t)kind, .lock = (uint8_t)lock };
    rma_pend_t *p = NULL;
    if (want_reply) {
        m->reply_tag = next_tag(w);
        if (!(p = pend_new(w, target, m->reply_tag, 0))) {
            free(buf);
            return MPI_ERR_NO_MEM;
        }
        p->for_req = 1;   /* kept until this function has read it */
    }
    int err = rma_send_owned(w, target, RMA_TAG_REQ, buf, sizeof *m);
    while (err == MPI_SUCCESS && p && !p->done) {
        rma_pend_sweep(w);
        if (!p->done)
            err = rma_wait_step();
    }
    if (p && p->done) {
        if (err == MPI_SUCCESS)
            err = p->err;
        pend_free(p);
    }
    return err;
}

int rma_msg_notify(locus_win_t *w, int target, int what)
{
    return control(w, target, what == RMA_CTL_POST ? MSG_POST : MSG_COMPLETE, 0, 0);
}

static int lock_code(int type)
{
    return type == MPI_LOCK_SHARED ? 1 : 2;
}

int rma_msg_lock(locus_win_t *w, int target, int type)
{
    return control(w, target, MSG_LOCK, lock_code(type), 1);
}

int rma_msg_wait_replies(locus_win_t *w, int target)
{
    int err = MPI_SUCCESS;
    for (;;) {
        rma_pend_sweep(w);
        if ((target >= 0 ? w->peers[target].npend : (w->pend != NULL)) == 0)
            break;
        if ((err = rma_wait_step()) != MPI_SUCCESS)
            break;
    }
    return err;
}

int rma_msg_unlock(locus_win_t *w, int target, int type)
{
    int err = rma_msg_wait_replies(w, target);
    if (err == MPI_SUCCESS)
        err = control(w, target, MSG_UNLOCK, lock_code(type), 1);
    if (err == MPI_SUCCESS)
        w->peers[target].msg_ops = 0;
    return err;
}

int rma_msg_flush(locus_win_t *w, int target)
{
    int err = rma_msg_wait_replies(w, target);
    if (err == MPI_SUCCESS && w->peers[target].msg_ops > 0)
        err = control(w, target, MSG_FLUSH, 0, 1);
    if (err == MPI_SUCCESS)
        w->peers[target].msg_ops = 0;
    return err;
}

/* ---- request-based operations ----------------------------------------------- */

static int req_poll(void *state)
{
    rma_pend_t *p = state;
    if (!p)
        return 1;
    if (!p->done)
        return 0;
    return p->err == MPI_SUCCESS ? 1 : -p->err;
}

static void req_state_free(void *state)
{
    if (state)
        pend_free(state);
}

int rma_req_make(locus_win_t *w, rma_pend_t *p, MPI_Request *request)
{
    locus_req_t *r = locus_req_gen_new(w->comm, req_poll, p, req_state_free);
    if (!r) {
        if (p)
            p->for_req = 0;   /* the sweep frees it */
        return MPI_ERR_NO_MEM;
    }
    *request = locus_req_handle(r);
    return MPI_SUCCESS;
}
