/*
 * The protocol over one RDM endpoint (ofi_tp.h): eager messages through
 * bounce buffers, large ones announced (RTS) and pulled by RMA reads
 * (FIN back), or without FI_RMA sent under a tag the receiver posted
 * (CTS), or pushed under a tag of the sender's right behind their
 * announcement (PUSH); completions handled in progress(); per-pair order
 * restored by sequence numbers. Operations the provider has no room for
 * (-FI_EAGAIN) wait on backlogs that progress() retries.
 */
#include "ofi_tp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int ofi_rx_post(ofi_tp_t *tp, ofi_buf_t *b)
{
    int rc = b->big ? (int)fi_trecv(tp->rail[0].ep, b->mem, tp->bigsize, b->desc, FI_ADDR_UNSPEC,
                                    OFI_EAGER_TAG, 0, &b->fctx)
             : b->compact
                 ? (int)fi_trecv(tp->rail[0].ep, b->mem, tp->bufsize, b->desc, FI_ADDR_UNSPEC,
                                 OFI_COMPACT_TAG, OFI_COMPACT_IGNORE, &b->fctx)
                 : (int)fi_recv(b->lat ? tp->rail[0].lep : tp->rail[0].ep, b->mem, tp->bufsize,
                                b->desc, FI_ADDR_UNSPEC, &b->fctx);
    if (rc == -FI_EAGAIN) {
        /* ofi_rxd's receive queue can be momentarily full. */
        b->next = tp->rx_backlog;
        tp->rx_backlog = b;
        return 0;
    }
    return rc;
}

static void rx_backlog_post(ofi_tp_t *tp)
{
    ofi_buf_t *list = tp->rx_backlog;
    tp->rx_backlog = NULL;
    while (list && !tp->failed) {
        ofi_buf_t *b = list;
        list = b->next;
        int rc = ofi_rx_post(tp, b);
        if (rc != 0)
            ofi_fail(tp, rc, "posting a receive: %s", fi_strerror(-rc));
    }
}

static int buf_post(ofi_tp_t *tp, ofi_buf_t *b, int dst, size_t len);

/* A raised message the latency class has no room for now (ofi_rxm: its
 * connection still being made) goes normal at once, in a buffer of the
 * normal class: a class is a preference, never a wait. */
static int lat_fallback(ofi_tp_t *tp, ofi_buf_t *b, int dst, size_t len)
{
    ofi_buf_t *nb = ofi_tx_get(tp);
    if (!nb)
        return -FI_EAGAIN;
    memcpy(nb->mem, b->mem, len);
    nb->benign = b->benign;
    int rc = buf_post(tp, nb, dst, len);
    if (rc != 0) {
        ofi_tx_put(tp, nb);
        return rc;
    }
    if (b->raised)
        tp_qos_lowered(&tp->budget, len, &tp->adaptive);
    ofi_tx_put(tp, b);
    return 0;
}

/* Posts a filled bounce buffer (one of the latency class's: to the peer's
 * latency-class endpoint): 0 (b is the provider's, or back in its pool),
 * -FI_EAGAIN (b still ours), or an error. */
static int buf_post(ofi_tp_t *tp, ofi_buf_t *b, int dst, size_t len)
{
    struct fid_ep *ep = b->lat ? tp->rail[0].lep : tp->rail[0].ep;
    fi_addr_t to = b->lat ? tp->peers[dst].laddr : tp->peers[dst].addr[0];
    int rc;
    /* A probe's answer is sent with a completion: an error of it must
     * come back to its buffer to be let go (an injected one's would not). */
    if (len <= tp->inject && !b->benign) {
        rc = (int)fi_inject(ep, b->mem, len, to);
        if (rc == 0)
            ofi_tx_put(tp, b); /* injected: the buffer is free at once */
    } else {
        rc = (int)fi_send(ep, b->mem, len, b->desc, to, &b->fctx);
        if (rc == 0)
            tp->tx_in_flight++;
    }
    return rc == -FI_EAGAIN && b->lat ? lat_fallback(tp, b, dst, len) : rc;
}

int ofi_ctl_send(ofi_tp_t *tp, int dst, const ofi_wire_t *w, int lat)
{
    if (ofi_peer_addr(tp, dst) != 0)
        return -1;
    ofi_buf_t *b = lat ? ofi_lat_get(tp, lat == OFI_CTL_RAISED) : NULL;
    if (!b)
        b = ofi_tx_get(tp);
    if (!b) {
        b = malloc(sizeof *b + sizeof *w); /* out of bounce buffers: one of its own */
        if (!b) {
            ofi_fail(tp, -ENOMEM, "out of memory for a control message to rank %d", dst);
            return -1;
        }
        *b = (ofi_buf_t){ .kind = -1, .mem = b + 1 };
    }
    b->benign = lat == OFI_CTL_PONG;
    memcpy(b->mem, w, sizeof *w);
    b->dst = dst;
    b->len = sizeof *w;
    b->next = NULL;
    int rc = b->kind == -1 ? -FI_EAGAIN : buf_post(tp, b, dst, sizeof *w);
    if (rc == -FI_EAGAIN) {
        if (tp->ctl_tail)
            tp->ctl_tail->next = b;
        else
            tp->ctl_head = b;
        tp->ctl_tail = b;
        return 0;
    }
    if (rc != 0) {
        ofi_fail(tp, rc, "sending to rank %d: %s", dst, fi_strerror(-rc));
        return -1;
    }
    return 0;
}

/* Control messages kept for room, in order. */
static void ctl_flush(ofi_tp_t *tp)
{
    while (tp->ctl_head && !tp->failed) {
        ofi_buf_t *b = tp->ctl_head;
        if (b->kind == -1) {
            /* Its own memory: into a bounce buffer once one is free. */
            ofi_buf_t *t = ofi_tx_get(tp);
            if (!t)
                return;
            memcpy(t->mem, b->mem, b->len);
            t->benign = b->benign;
            t->dst = b->dst;
            t->len = b->len;
            t->next = b->next;
            if (tp->ctl_tail == b)
                tp->ctl_tail = t;
            tp->ctl_head = t;
            free(b);
            b = t;
        }
        ofi_buf_t *next = b->next; /* b may be back in its pool once posted */
        int rc = buf_post(tp, b, b->dst, b->len);
        if (rc == -FI_EAGAIN)
            return;
        tp->ctl_head = next;
        if (!tp->ctl_head)
            tp->ctl_tail = NULL;
        if (rc != 0)
            ofi_fail(tp, rc, "sending to rank %d: %s", b->dst, fi_strerror(-rc));
    }
}

/* A large message goes by PUSH unless the provider's tagged path is not
 * trusted (LOCUS_OFI_PUSH), the provider cannot take it in one send, or
 * it is big enough to be read in shares over several rails. */
static int push_fits(ofi_tp_t *tp, const ofi_peer_t *p, size_t len)
{
    return tp->push && (!tp->max_msg || len <= tp->max_msg) &&
           (!tp->push_max || len <= tp->push_max) &&
           (p->rails <= 1 || len < (size_t)tp->cfg.stripe_min);
}

/* A tagged send of s's payload (s->tag, s->tlen): posted now, or kept on
 * the backlog until the provider has room. */
static void tsend_post(ofi_tp_t *tp, ofi_send_t *s)
{
    int k = s->rail;
    int rc = (int)fi_tsend(tp->rail[k].dep, s->data, s->tlen, s->reg[k] ? s->reg[k]->desc : NULL,
                           tp->peers[s->dst].daddr[k], s->tag, &s->fctx);
    if (rc == -FI_EAGAIN) {
        s->next_pending = tp->tsend_backlog;
        tp->tsend_backlog = s;
    } else if (rc != 0) {
        ofi_fail(tp, rc, "sending %zu bytes to rank %d: %s", s->tlen, s->dst, fi_strerror(-rc));
    }
}

/* A large message's announcement in w: PUSH (its payload's tag and rail)
 * or RTS (its registration on every rail both sides have, for the
 * receiver's reads). 0, or -1 when the payload could not be registered. */
static int large_announce(ofi_tp_t *tp, ofi_peer_t *p, ofi_send_t *s, ofi_wire_t *w)
{
    memset(w->addr, 0, sizeof w->addr);
    memset(w->key, 0, sizeof w->key);
    w->id = s->id;
    if (push_fits(tp, p, s->len)) {
        w->type = OFI_PUSH;
        s->tag = w->key[0] = OFI_PUSH_TAG | (uint64_t)(uint32_t)tp->rank << 32 | p->pushes;
        s->tlen = s->len;
        /* Round the rails both sides have: a window of them uses every one. */
        s->rail = w->rails = (uint16_t)(p->rails > 1 ? p->pushes % (uint32_t)p->rails : 0);
        int k = s->rail;
        if ((tp->mr_mode & FI_MR_LOCAL) &&
            !(s->reg[k] = ofi_reg_get(tp, k, s->data, s->len, FI_SEND)))
            return -1;
        return 0;
    }
    w->type = OFI_RTS;
    /* A rail that refuses the registration is left out of the reads. */
    for (int r = 0; tp->has_rma && r < p->rails; r++) {
        s->reg[r] = ofi_reg_get(tp, r, s->data, s->len, FI_REMOTE_READ);
        if (!s->reg[r])
            break;
        /* By virtual address (FI_MR_VIRT_ADDR), else from the
         * registration's start. */
        w->addr[r] = (tp->mr_mode & FI_MR_VIRT_ADDR)
                         ? (uint64_t)(uintptr_t)s->data
                         : (uint64_t)((uintptr_t)s->data - s->reg[r]->base);
        w->key[r] = s->reg[r]->key;
        w->rails = (uint16_t)(r + 1);
    }
    return tp->has_rma && w->rails == 0 ? -1 : 0;
}

/* An eager message from the caller's buffer: its heads (in b) and payload
 * as one message, to the receiver's big buffers; 0, -FI_EAGAIN, or an
 * error. */
static int heads_data_post(ofi_tp_t *tp, ofi_buf_t *b, ofi_send_t *s, size_t heads)
{
    struct iovec iov[2] = { { b->mem, heads }, { (void *)s->data, s->len } };
    void *desc[2] = { b->desc, s->reg[0] ? s->reg[0]->desc : NULL };
    int rc = (int)fi_tsendv(tp->rail[0].ep, iov, desc, 2, tp->peers[s->dst].addr[0],
                            OFI_EAGER_TAG, &s->fctx);
    if (rc == 0) {
        s->heads = b;
        tp->tx_in_flight++;
    }
    return rc;
}

/* s's payload under its tag, right behind its announcement. */
static void push_payload_post(ofi_tp_t *tp, ofi_peer_t *p, ofi_send_t *s)
{
    s->pushed = 1;
    p->pushes_out++;
    tsend_post(tp, s);
}

/* ---- batches of announcements ---- */

/* A push to a peer whose earlier pushes are still in flight waits, with
 * the others that follow it, for the next progress call: their
 * announcements then go as one BATCH message, their payloads right behind
 * it. Where every message costs a system call (tcp) a window of pushes
 * then costs one announcement, not one each; the first push of a window
 * still goes at once. */

/* Sends dst's batch, then the payloads it announces: 0, -FI_EAGAIN (the
 * batch kept), or -1 with the transport failed. */
static int batch_send(ofi_tp_t *tp, int dst)
{
    ofi_peer_t *p = &tp->peers[dst];
    ofi_buf_t *b = p->batch;
    ofi_wire_t w = { .type = OFI_BATCH, .src = tp->rank, .seq = OFI_UNORDERED,
                     .id = (uint32_t)p->nbatch, .len = b->len - sizeof w };
    memcpy(b->mem, &w, sizeof w);
    int rc = buf_post(tp, b, dst, b->len);
    if (rc == -FI_EAGAIN)
        return rc;
    if (rc != 0) {
        ofi_fail(tp, rc, "sending to rank %d: %s", dst, fi_strerror(-rc));
        return -1;
    }
    tp->pushed_batched += p->nbatch;
    p->batch = NULL;
    p->nbatch = 0;
    ofi_send_t *s = p->batch_head;
    p->batch_head = p->batch_tail = NULL;
    while (s) {
        ofi_send_t *next = s->next_batched;
        push_payload_post(tp, p, s);
        s = next;
    }
    return 0;
}

/* Every batch waiting (from progress); those without room stay listed. */
static void batches_send(ofi_tp_t *tp)
{
    int kept = 0;
    for (int i = 0; i < tp->nbatched; i++) {
        int dst = tp->batched[i];
        if (!tp->failed && tp->peers[dst].batch && batch_send(tp, dst) == -FI_EAGAIN)
            tp->batched[kept++] = dst;
        else
            tp->peers[dst].listed = 0;
    }
    tp->nbatched = kept;
}

/* Adds the announcement w (with the core's header) of s to dst's batch,
 * in b when it starts one (else b goes back). A batch fits one small
 * receive buffer, which is as large as a send bounce buffer: a full one
 * is sent first. 0, -FI_EAGAIN (b still the caller's), or -1 with the
 * transport failed. */
static int batch_add(ofi_tp_t *tp, int dst, ofi_buf_t *b, const ofi_wire_t *w,
                     const void *hdr, size_t hdrlen, ofi_send_t *s)
{
    ofi_peer_t *p = &tp->peers[dst];
    size_t reclen = sizeof *w + hdrlen;
    size_t room = tp->bufsize < p->rx_small ? tp->bufsize : p->rx_small;
    if (p->batch && p->batch->len + reclen > room) {
        int rc = batch_send(tp, dst);
        if (rc != 0)
            return rc;
    }
    if (!p->batch) {
        p->batch = b;
        b->len = sizeof *w;
        if (!p->listed) {
            p->listed = 1;
            tp->batched[tp->nbatched++] = dst;
        }
    } else {
        ofi_tx_put(tp, b);
    }
    char *at = (char *)p->batch->mem + p->batch->len;
    memcpy(at, w, sizeof *w);
    memcpy(at + sizeof *w, hdr, hdrlen);
    p->batch->len += reclen;
    p->nbatch++;
    if (p->batch_tail)
        p->batch_tail->next_batched = s;
    else
        p->batch_head = s;
    p->batch_tail = s;
    return 0;
}

/* An ordered message on its own: its heads w and hdr into b, the payload
 * copied there (small eager), from the caller's buffer (eager above
 * copy_max) or, pushed, right behind it. 0, -FI_EAGAIN, or an error. */
static int ordered_post(ofi_tp_t *tp, int dst, ofi_buf_t *b, const ofi_wire_t *w,
                        const void *hdr, ofi_send_t *s)
{
    size_t head = w->type == OFI_EAGER ? OFI_WIRE_SHORT : sizeof *w;
    memcpy(b->mem, w, head);
    memcpy((char *)b->mem + head, hdr, w->hdrlen);
    size_t heads = head + w->hdrlen;
    int rc = w->type != OFI_EAGER ? buf_post(tp, b, dst, heads)
             : s                  ? heads_data_post(tp, b, s, heads)
                                  : buf_post(tp, b, dst, heads + w->len);
    if (rc == 0 && w->type == OFI_PUSH)
        push_payload_post(tp, &tp->peers[dst], s);
    return rc;
}

/* A send that did not go: its bounce buffer, registrations and id back. */
static void send_undo(ofi_tp_t *tp, ofi_buf_t *b, ofi_send_t *s)
{
    ofi_tx_put(tp, b);
    if (!s)
        return;
    for (int r = 0; r < OFI_RAILS_MAX; r++)
        ofi_reg_put(tp, s->reg[r]);
    tp_ids_put(&tp->sends, s->id);
}

int ofi_send(locus_tp_t *t, int dst, const void *hdr, size_t hdrlen, const void *data,
             size_t len, void *send_ctx)
{
    ofi_tp_t *tp = (ofi_tp_t *)t;
    if (tp->failed)
        return tp->failed;
    if (ofi_peer_addr(tp, dst) != 0)
        return tp->failed;
    ofi_peer_t *p = &tp->peers[dst];
    /* Eager within what this rank sends so and what the peer's buffers
     * take: its small ones for a copied payload, its big ones for one from
     * the caller's buffer (the peer's tunables may differ from these). */
    size_t wire = OFI_WIRE_SHORT + hdrlen + len;
    int copied = len <= tp->copy_max;
    int eager = len <= tp->eager_max && wire <= (copied ? p->rx_small : p->rx_big);
    /* Adaptive classes: a copied eager message within LOCUS_QOS_SMALL, not
     * behind a batch, goes in the latency class on a congested path, with
     * its heads in front (compact ones land in the normal class's tagged
     * buffers). Announcements stay normal, as their payloads do. */
    int adaptive = tp->classes == TP_QOS_ADAPTIVE;
    int lat = adaptive &&
              ofi_qos_raise(tp, dst, eager && copied && len <= (size_t)tp->cfg.qos.small && !p->batch,
                        wire);
    if (tp->failed) /* its probe could not be sent */
        return tp->failed;
    /* Behind a batch waiting to go, the ordinary way (which sends it first). */
    if (len < p->compact_below && !p->batch && !lat) {
        int rc = ofi_compact_send(tp, dst, hdr, hdrlen, data, len);
        if (rc != OFI_NOT_COMPACT) {
            if (rc == LOCUS_TP_AGAIN && adaptive)
                tp_qos_unsent(&tp->budget, 0, wire, &tp->adaptive);
            return rc;
        }
    }
    /* No room: the core calls progress and retries (never progress from
     * here: send may be called from inside an upcall); the class is chosen
     * again then. */
    ofi_buf_t *b = lat ? ofi_lat_get(tp, 1) : ofi_tx_get(tp);
    if (!b) {
        if (adaptive)
            tp_qos_unsent(&tp->budget, 0, wire, &tp->adaptive);
        return LOCUS_TP_AGAIN;
    }
    /* Only the head an EAGER message sends is set here (large_announce
     * clears the rest): zeroing all 88 bytes was a `rep stos`, 13% of a
     * 128-byte message's sending time in perf. */
    ofi_wire_t w;
    w.type = 0;
    w.hdrlen = (uint8_t)hdrlen;
    w.rails = 0;
    w.src = tp->rank;
    w.seq = p->tx_seq;
    w.id = 0;
    w.len = len;
    ofi_send_t *s = NULL;
    if (!eager || !copied) {
        /* Sent from the caller's buffer (or announced): done when the provider says so. */
        s = tp_ids_get(&tp->sends, sizeof *s);
        if (!s) {
            ofi_tx_put(tp, b);
            ofi_fail(tp, -ENOMEM, "out of memory for a send to rank %d", dst);
            return tp->failed;
        }
        s->kind = OFI_CTX_TSEND;
        s->dst = dst;
        s->data = data;
        s->len = len;
        s->send_ctx = send_ctx;
        s->heads = NULL;
        s->pushed = 0;
        s->next_batched = NULL;
        memset(s->reg, 0, sizeof s->reg);
    }
    if (eager) {
        w.type = OFI_EAGER;
        if (s && (tp->mr_mode & FI_MR_LOCAL) &&
            !(s->reg[0] = ofi_reg_get(tp, 0, data, len, FI_SEND))) {
            send_undo(tp, b, s);
            ofi_fail(tp, -ENOMEM, "registering %zu bytes for rank %d", len, dst);
            return tp->failed;
        }
        if (!s && len) /* data may be NULL then (a control message of the core's) */
            memcpy((char *)b->mem + OFI_WIRE_SHORT + hdrlen, data, len);
    } else if (large_announce(tp, p, s, &w) != 0) {
        send_undo(tp, b, s);
        ofi_fail(tp, -ENOMEM, "registering %zu bytes for rank %d", len, dst);
        return tp->failed;
    }
    /* A push behind pushes in flight joins the peer's batch; anything else
     * goes behind that batch. */
    int batched = w.type == OFI_PUSH && tp->batch && (p->pushes_out > 0 || p->batch);
    int rc = !batched && p->batch ? batch_send(tp, dst) : 0;
    if (rc == 0)
        rc = batched ? batch_add(tp, dst, b, &w, hdr, hdrlen, s)
                     : ordered_post(tp, dst, b, &w, hdr, s);
    if (rc == -FI_EAGAIN) {
        send_undo(tp, b, s);
        if (adaptive)
            tp_qos_unsent(&tp->budget, lat, wire, &tp->adaptive);
        return LOCUS_TP_AGAIN;
    }
    if (rc != 0) {
        if (!tp->failed)
            ofi_fail(tp, rc, "sending to rank %d: %s", dst, fi_strerror(-rc));
        return tp->failed;
    }
    p->tx_seq++;
    if (w.type == OFI_PUSH) {
        p->pushes++;
        tp->pushed++;
    }
    return s ? LOCUS_TP_PENDING : LOCUS_TP_DONE;
}

/* ---- the receiving side of a large message ---- */

static void rndv_finish(ofi_tp_t *tp, ofi_rndv_t *r)
{
    for (int k = 0; k < OFI_RAILS_MAX; k++) {
        ofi_reg_put(tp, r->reg[k]);
        r->reg[k] = NULL;
    }
    void *ctx = r->recv_ctx;
    tp_ids_put(&tp->rndvs, r->id);
    tp->up->rndv_done(tp->core, ctx);
}

/* Posts the reads of r that fit: 0, or -1 with the transport failed.
 * Pieces go round the rails (an even share each, at most the chunk). */
static int reads_post(ofi_tp_t *tp, ofi_rndv_t *r)
{
    size_t piece = (size_t)tp->cfg.chunk;
    size_t share = (r->want + (size_t)r->rails - 1) / (size_t)r->rails;
    if (share < piece)
        piece = share < 65536 ? 65536 : share;
    if (tp->max_msg && piece > tp->max_msg)
        piece = tp->max_msg;
    while (r->issued < r->want) {
        if (tp->nreads_free == 0)
            break;
        size_t n = r->want - r->issued < piece ? r->want - r->issued : piece;
        int k = (int)((r->issued / piece) % (size_t)r->rails);
        ofi_read_t *rd = tp->reads_free[--tp->nreads_free];
        rd->rndv_id = r->id;
        int rc = (int)fi_read(tp->rail[k].dep, (char *)r->buf + r->issued, n,
                              r->reg[k] ? r->reg[k]->desc : NULL, tp->peers[r->src].daddr[k],
                              r->raddr[k] + r->issued, r->rkey[k], &rd->fctx);
        if (rc == -FI_EAGAIN) {
            tp->reads_free[tp->nreads_free++] = rd;
            break;
        }
        if (rc != 0) {
            tp->reads_free[tp->nreads_free++] = rd;
            ofi_fail(tp, rc, "reading %zu bytes from rank %d: %s", n, r->src, fi_strerror(-rc));
            return -1;
        }
        r->issued += n;
        r->reads_left++;
    }
    if (r->issued < r->want && !r->queued) {
        r->queued = 1;
        r->next_pending = (locus_tp_rndv_t *)tp->read_backlog;
        tp->read_backlog = r;
    }
    return 0;
}

/* ---- the receiving side of a pushed message ---- */

/* Posts r's tagged receive: into the core's buffer when it has matched
 * with room for the whole payload, else into a buffer of r's own (an
 * unmatched payload must not wait in the provider: a provider that keeps
 * it on its connection would stall what comes behind it). 0, or -1 with
 * the transport failed; on a full queue r waits on the backlog. */
static int push_post(ofi_tp_t *tp, ofi_rndv_t *r)
{
    if (!r->scratch && (!r->matched || r->want < r->len)) {
        if (!(r->scratch = malloc(r->len))) {
            ofi_fail(tp, -ENOMEM, "out of memory for %zu bytes from rank %d", (size_t)r->len,
                     r->src);
            return -1;
        }
        tp->pushes_early += !r->matched;
    }
    void *into = r->scratch ? r->scratch : r->buf;
    int k = r->rail;
    if ((tp->mr_mode & FI_MR_LOCAL) && !r->reg[k] &&
        !(r->reg[k] = ofi_reg_get(tp, k, into, r->len, FI_RECV))) {
        ofi_fail(tp, -ENOMEM, "registering %zu bytes from rank %d", (size_t)r->len, r->src);
        return -1;
    }
    int rc = (int)fi_trecv(tp->rail[k].dep, into, r->len, r->reg[k] ? r->reg[k]->desc : NULL,
                           FI_ADDR_UNSPEC, r->tag, 0, &r->fctx);
    if (rc == -FI_EAGAIN) {
        if (!r->queued) {
            r->queued = 1;
            r->next_pending = tp->read_backlog;
            tp->read_backlog = r;
        }
        return 0;
    }
    if (rc != 0) {
        ofi_fail(tp, rc, "posting a receive from rank %d: %s", r->src, fi_strerror(-rc));
        return -1;
    }
    r->posted = 1;
    return 0;
}

/* Matched and landed: out of r's own buffer, if it has one, and done. */
static void push_finish(ofi_tp_t *tp, ofi_rndv_t *r)
{
    if (r->scratch) {
        if (r->want)
            memcpy(r->buf, r->scratch, r->want);
        ofi_reg_put(tp, r->reg[r->rail]);
        r->reg[r->rail] = NULL;
        free(r->scratch);
        r->scratch = NULL;
    }
    rndv_finish(tp, r);
}

static int push_recv(ofi_tp_t *tp, ofi_rndv_t *r)
{
    r->matched = 1;
    if (r->landed)
        push_finish(tp, r);
    else if (!r->posted && !r->queued)
        push_post(tp, r);
    /* else its own buffer is under way: copied out when it lands */
    return tp->failed;
}

int ofi_rndv_recv(locus_tp_t *t, locus_tp_rndv_t *rndv, void *buf, size_t len, void *recv_ctx,
                  int hints)
{
    (void)hints;
    ofi_tp_t *tp = (ofi_tp_t *)t;
    ofi_rndv_t *r = rndv;
    if (tp->failed)
        return tp->failed;
    r->buf = buf;
    r->want = len < r->len ? len : r->len;
    r->recv_ctx = recv_ctx;
    if (r->pushed)
        return push_recv(tp, r);
    r->issued = 0;
    r->reads_left = 0;
    r->queued = 0;
    if (ofi_peer_addr(tp, r->src) != 0)
        return tp->failed;
    if (r->rails > tp->peers[r->src].rails)
        r->rails = tp->peers[r->src].rails;
    if (r->rails < 1)
        r->rails = 1;
    /* Read where both sides have RMA: an RTS without keys comes from a
     * sender without it (LOCUS_OFI_RMA differs between them). */
    int reads = tp->has_rma && r->keyed;
    int local = (tp->mr_mode & FI_MR_LOCAL) && r->want > 0;
    for (int k = 0; local && k < (reads ? r->rails : 1); k++)
        if (!(r->reg[k] = ofi_reg_get(tp, k, buf, r->want, reads ? FI_READ : FI_RECV))) {
            ofi_fail(tp, -ENOMEM, "registering %zu bytes from rank %d", r->want, r->src);
            return tp->failed;
        }
    if (!reads) {
        /* Tagged rendezvous: the payload comes under a tag of its own. */
        uint64_t tag = (uint64_t)(uint32_t)r->src << 32 | r->id;
        int rc = r->want == 0 ? 0
                              : (int)fi_trecv(tp->rail[0].dep, buf, r->want,
                                              r->reg[0] ? r->reg[0]->desc : NULL, FI_ADDR_UNSPEC,
                                              tag, 0, &r->fctx);
        if (rc != 0) {
            ofi_fail(tp, rc, "posting a receive from rank %d: %s", r->src, fi_strerror(-rc));
            return tp->failed;
        }
        ofi_wire_t w = { .type = OFI_CTS, .src = tp->rank, .seq = OFI_UNORDERED, .id = r->send_id,
                         .len = r->want, .key = { tag } };
        if (ofi_ctl_send(tp, r->src, &w, ofi_ctl_raised(tp, r->src)) != 0)
            return tp->failed;
        if (r->want == 0)
            rndv_finish(tp, r);
        return 0;
    }
    if (r->want == 0) {
        ofi_wire_t w = { .type = OFI_FIN, .src = tp->rank, .seq = OFI_UNORDERED, .id = r->send_id };
        if (ofi_ctl_send(tp, r->src, &w, ofi_ctl_raised(tp, r->src)) != 0)
            return tp->failed;
        rndv_finish(tp, r);
        return 0;
    }
    return reads_post(tp, r) == 0 ? 0 : tp->failed;
}

static void read_done(ofi_tp_t *tp, ofi_read_t *rd)
{
    ofi_rndv_t *r = tp_ids_find(&tp->rndvs, rd->rndv_id);
    tp->reads_free[tp->nreads_free++] = rd;
    if (!r) {
        ofi_fail(tp, -EPROTO, "a read completed for no receive (id %u)", rd->rndv_id);
        return;
    }
    if (--r->reads_left > 0 || r->issued < r->want)
        return;
    ofi_wire_t w = { .type = OFI_FIN, .src = tp->rank, .seq = OFI_UNORDERED, .id = r->send_id };
    if (ofi_ctl_send(tp, r->src, &w, ofi_ctl_raised(tp, r->src)) == 0)
        rndv_finish(tp, r);
}

static void backlogs_retry(ofi_tp_t *tp)
{
    ctl_flush(tp);
    ofi_rndv_t *list = tp->read_backlog;
    tp->read_backlog = NULL;
    while (list && !tp->failed) {
        ofi_rndv_t *r = list;
        list = (ofi_rndv_t *)r->next_pending;
        r->queued = 0;
        if (r->pushed)
            push_post(tp, r);
        else
            reads_post(tp, r);
    }
    ofi_send_t *sl = tp->tsend_backlog;
    tp->tsend_backlog = NULL;
    while (sl && !tp->failed) {
        ofi_send_t *s = sl;
        sl = s->next_pending;
        tsend_post(tp, s);
    }
}

/* ---- arrivals ---- */

static void sender_finished(ofi_tp_t *tp, ofi_send_t *s)
{
    if (s->pushed)
        tp->peers[s->dst].pushes_out--;
    if (s->heads) {
        tp->tx_in_flight--;
        ofi_tx_put(tp, s->heads);
    }
    for (int r = 0; r < OFI_RAILS_MAX; r++)
        ofi_reg_put(tp, s->reg[r]);
    void *ctx = s->send_ctx;
    tp_ids_put(&tp->sends, s->id);
    tp->up->send_done(tp->core, ctx);
}

/* The receiver's CTS: the payload goes under its tag (no FI_RMA). */
static void cts_arrived(ofi_tp_t *tp, const ofi_wire_t *w)
{
    ofi_send_t *s = tp_ids_find(&tp->sends, w->id);
    if (!s || s->dst != w->src) {
        ofi_fail(tp, -EPROTO, "rank %d answered a send this rank did not make (id %u)", w->src,
                 w->id);
        return;
    }
    s->tag = w->key[0];
    s->tlen = w->len < s->len ? (size_t)w->len : s->len;
    if (s->tlen == 0) {
        sender_finished(tp, s);
        return;
    }
    if ((tp->mr_mode & FI_MR_LOCAL) && !s->reg[0] &&
        !(s->reg[0] = ofi_reg_get(tp, 0, s->data, s->tlen, FI_SEND))) {
        ofi_fail(tp, -ENOMEM, "registering %zu bytes for rank %d", s->tlen, s->dst);
        return;
    }
    tsend_post(tp, s);
}

/* The head of a message of len bytes into w (of an EAGER one only the
 * short head, and len: what follows it and the core's header); the bytes
 * the head takes, 0 when it does not fit. Whatever the type says, the
 * caller checks (message_arrived, before any message is used or held). */
static size_t wire_read(ofi_wire_t *w, const unsigned char *msg, size_t len)
{
    if (len < OFI_WIRE_SHORT)
        return 0;
    memcpy(w, msg, OFI_WIRE_SHORT);
    if (w->type == OFI_EAGER) {
        /* 0 where the core's header would not fit: the caller refuses it. */
        w->len = len - OFI_WIRE_SHORT >= w->hdrlen ? len - OFI_WIRE_SHORT - w->hdrlen : 0;
        return OFI_WIRE_SHORT;
    }
    if (len < sizeof *w)
        return 0;
    memcpy(w, msg, sizeof *w);
    return sizeof *w;
}

/* An ordered message (EAGER, RTS, PUSH) whose turn it is. */
static void ordered_handle(ofi_tp_t *tp, const unsigned char *msg, size_t len)
{
    ofi_wire_t w;
    const unsigned char *hdr = msg + wire_read(&w, msg, len);
    if (w.type == OFI_EAGER) {
        tp->up->deliver(tp->core, w.src, hdr, w.hdrlen, hdr + w.hdrlen, (size_t)w.len);
        return;
    }
    ofi_rndv_t *r = tp_ids_get(&tp->rndvs, sizeof *r);
    if (!r) {
        ofi_fail(tp, -ENOMEM, "out of memory for a receive from rank %d", w.src);
        return;
    }
    r->kind = OFI_CTX_TRECV;
    r->pushed = w.type == OFI_PUSH;
    r->rail = r->pushed ? w.rails : 0;
    r->tag = w.key[0];
    r->src = w.src;
    r->send_id = w.id;
    r->len = w.len;
    r->rails = w.rails > 0 && w.rails <= OFI_RAILS_MAX ? w.rails : 1;
    r->keyed = w.type == OFI_RTS && w.rails > 0;
    for (int k = 0; k < OFI_RAILS_MAX; k++) {
        r->raddr[k] = w.addr[k];
        r->rkey[k] = w.key[k];
        r->reg[k] = NULL;
    }
    tp->up->rndv_arrived(tp->core, w.src, hdr, w.hdrlen, (size_t)w.len, r);
    if (r->pushed && !r->matched && !tp->failed)
        push_post(tp, r); /* not matched inside the upcall: into its own buffer */
}

static void batch_arrived(ofi_tp_t *tp, const ofi_wire_t *w, const unsigned char *msg,
                          size_t len);

static void message_arrived(ofi_tp_t *tp, const unsigned char *msg, size_t len)
{
    ofi_wire_t w;
    size_t head = wire_read(&w, msg, len);
    if (!head) {
        ofi_fail(tp, -EPROTO, "a message of %zu bytes, shorter than its head", len);
        return;
    }
    if (w.src < 0 || w.src >= tp->size || w.hdrlen > LOCUS_TP_HDR_MAX ||
        head + w.hdrlen > len || (w.type == OFI_BATCH && head + w.len != len)) {
        ofi_fail(tp, -EPROTO, "a malformed message (type %d from %d, %zu bytes)", w.type, w.src,
                 len);
        return;
    }
    if (w.type == OFI_FIN) {
        ofi_send_t *s = tp_ids_find(&tp->sends, w.id);
        if (!s || s->dst != w.src)
            ofi_fail(tp, -EPROTO, "rank %d finished a send this rank did not make", w.src);
        else
            sender_finished(tp, s);
        return;
    }
    if (w.type == OFI_CTS) {
        cts_arrived(tp, &w);
        return;
    }
    if (w.type == OFI_BATCH) {
        batch_arrived(tp, &w, msg, len);
        return;
    }
    if (w.type == OFI_PING || w.type == OFI_PONG) {
        ofi_probe_arrived(tp, &w);
        return;
    }
    if (w.type != OFI_EAGER && w.type != OFI_RTS && w.type != OFI_PUSH) {
        ofi_fail(tp, -EPROTO, "a message of unknown type %d from rank %d", w.type, w.src);
        return;
    }
    if (w.type == OFI_PUSH &&
        ((w.key[0] >> 32) != (OFI_PUSH_TAG >> 32 | (uint32_t)w.src) || w.len == 0 ||
         w.rails >= tp->nrails)) {
        ofi_fail(tp, -EPROTO, "a malformed announcement from rank %d (tag 0x%llx)", w.src,
                 (unsigned long long)w.key[0]);
        return;
    }
    ofi_peer_t *p = &tp->peers[w.src];
    if (w.seq != p->rx_seq) {
        ofi_hold(tp, p, w.seq, msg, len, NULL, 0);
        return;
    }
    ordered_handle(tp, msg, len);
    ofi_turn_next(tp, p);
}

int ofi_hold(ofi_tp_t *tp, ofi_peer_t *p, uint32_t seq, const void *head, size_t headlen,
             const void *body, size_t bodylen)
{
    ofi_held_t *h = malloc(sizeof *h + headlen + bodylen);
    if (!h) {
        ofi_fail(tp, -ENOMEM, "out of memory holding a message from rank %d",
                 (int)(p - tp->peers));
        return -1;
    }
    h->seq = seq;
    h->len = headlen + bodylen;
    memcpy(h->msg, head, headlen);
    if (bodylen)
        memcpy(h->msg + headlen, body, bodylen);
    ofi_held_t **at = &p->held;
    while (*at && (int32_t)((*at)->seq - seq) < 0)
        at = &(*at)->next;
    h->next = *at;
    *at = h;
    return 0;
}

void ofi_turn_next(ofi_tp_t *tp, ofi_peer_t *p)
{
    p->rx_seq++;
    while (p->held && p->held->seq == p->rx_seq && !tp->failed) {
        ofi_held_t *h = p->held;
        p->held = h->next;
        ordered_handle(tp, h->msg, h->len);
        p->rx_seq++;
        free(h);
    }
}

/* A BATCH: each of its records (a PUSH head and the core's header) as if
 * it had come alone. */
static void batch_arrived(ofi_tp_t *tp, const ofi_wire_t *w, const unsigned char *msg,
                          size_t len)
{
    size_t off = sizeof *w;
    for (uint32_t i = 0; i < w->id && !tp->failed; i++) {
        ofi_wire_t r;
        size_t reclen = wire_read(&r, msg + off, len - off);
        if (reclen)
            reclen += r.hdrlen;
        if (!reclen || r.type != OFI_PUSH || r.src != w->src || off + reclen > len) {
            ofi_fail(tp, -EPROTO, "a malformed batch from rank %d (record %u of %u)", w->src, i,
                     w->id);
            return;
        }
        message_arrived(tp, msg + off, reclen);
        off += reclen;
    }
    if (!tp->failed && off != len)
        ofi_fail(tp, -EPROTO, "a batch from rank %d with %zu bytes past its %u records", w->src,
                 len - off, w->id);
}

static void completion(ofi_tp_t *tp, const struct fi_cq_tagged_entry *e)
{
    int kind = *(int *)((char *)e->op_context + sizeof(struct fi_context));
    switch (kind) {
    case OFI_CTX_RX: {
        ofi_buf_t *b = e->op_context;
        tp->lat_received += b->lat;
        if (b->compact)
            ofi_compact_arrived(tp, b, e);
        else
            message_arrived(tp, b->mem, e->len);
        int rc = ofi_rx_post(tp, b);
        if (rc != 0 && !tp->failed)
            ofi_fail(tp, rc, "posting a receive: %s", fi_strerror(-rc));
        break;
    }
    case OFI_CTX_TX:
        tp->tx_in_flight--;
        ofi_tx_put(tp, e->op_context);
        break;
    case OFI_CTX_READ:
        read_done(tp, e->op_context);
        break;
    case OFI_CTX_TRECV: {
        ofi_rndv_t *r = (ofi_rndv_t *)((char *)e->op_context - offsetof(ofi_rndv_t, fctx));
        if (!r->pushed) {
            rndv_finish(tp, r);
            break;
        }
        r->landed = 1;
        if (r->matched)
            push_finish(tp, r);
        break;
    }
    case OFI_CTX_TSEND:
        sender_finished(tp, (ofi_send_t *)((char *)e->op_context - offsetof(ofi_send_t, fctx)));
        break;
    default:
        ofi_fail(tp, -EPROTO, "a completion of unknown kind %d", kind);
    }
}

static int cq_drain(ofi_tp_t *tp, struct fid_cq *cq);

int ofi_progress(locus_tp_t *t)
{
    ofi_tp_t *tp = (ofi_tp_t *)t;
    if (tp->failed)
        return tp->failed;
    int events = 0;
    for (int rail = 0; rail < tp->nrails && !tp->failed; rail++) {
        struct fid_cq *cq = tp->rail[rail].cq;
        events += cq_drain(tp, cq);
    }
    if (tp->nbatched)
        batches_send(tp);
    if (tp->rx_backlog)
        rx_backlog_post(tp);
    if (tp->ctl_head || tp->read_backlog || tp->tsend_backlog)
        backlogs_retry(tp);
    return tp->failed ? tp->failed : events;
}

/* Every completion a queue has now: how many, or the transport failed. */
static int cq_drain(ofi_tp_t *tp, struct fid_cq *cq)
{
    int events = 0;
    for (;;) {
        struct fi_cq_tagged_entry e[16];
        ssize_t k = fi_cq_read(cq, e, 16);
        if (k == -FI_EAGAIN)
            break;
        if (k == -FI_EAVAIL) {
            struct fi_cq_err_entry err = { 0 };
            char buf[128];
            fi_cq_readerr(cq, &err, 0);
            if (ofi_answer_lost(tp, err.op_context)) {
                events++;
                continue;
            }
            ofi_fail(tp, -EIO, "a completion failed: %s (%s)", fi_strerror(err.err),
                     fi_cq_strerror(cq, err.prov_errno, err.err_data, buf, sizeof buf));
            return 0;
        }
        if (k < 0) {
            ofi_fail(tp, (int)k, "reading completions: %s", fi_strerror((int)-k));
            return 0;
        }
        for (ssize_t i = 0; i < k && !tp->failed; i++)
            completion(tp, &e[i]);
        events += (int)k;
        if (k < 16 || tp->failed)
            break;
    }
    return events;
}
