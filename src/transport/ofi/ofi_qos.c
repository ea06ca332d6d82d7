/*
 * Adaptive traffic classes over libfabric (LOCUS_QOS=adaptive, docs/ofi.md):
 * the rule is tp_qos.h's, shared with the tcp transport; here, how the ofi
 * transport probes a path (a PING on the normal endpoint, its PONG at once
 * to the prober's latency endpoint) and which of its messages a congested
 * path raises. Where the raised messages go is ofi_proto.c's buf_post (a
 * buffer of the latency class goes to the peer's latency endpoint).
 */
#include "ofi_tp.h"

int ofi_qos_raise(ofi_tp_t *tp, int dst, int small, size_t bytes)
{
    uint64_t now = locus_now_ns();
    int probe = 0;
    int want = tp_qos_path_use(&tp->peers[dst].path, &tp->cfg.qos, now, &probe, &tp->adaptive) &&
               small && tp->lat_free;
    if (probe && !tp->draining) {
        ofi_wire_t w = { .type = OFI_PING, .src = tp->rank, .seq = OFI_UNORDERED,
                         .id = tp_qos_probe_start(&tp->peers[dst].path, now), .len = now };
        if (ofi_ctl_send(tp, dst, &w, OFI_CTL_NORMAL) != 0)
            return 0; /* the transport failed: the caller checks */
    }
    return tp_qos_raise(&tp->budget, &tp->cfg.qos, want, bytes, now, &tp->adaptive);
}

int ofi_ctl_raised(ofi_tp_t *tp, int dst)
{
    return tp->classes == TP_QOS_ADAPTIVE && ofi_qos_raise(tp, dst, 1, sizeof(ofi_wire_t))
               ? OFI_CTL_RAISED : OFI_CTL_NORMAL;
}

void ofi_probe_arrived(ofi_tp_t *tp, const ofi_wire_t *w)
{
    if (w->type == OFI_PONG) {
        tp_qos_probe_reply(&tp->peers[w->src].path, &tp->cfg.qos, w->id, w->len,
                           locus_now_ns(), &tp->adaptive);
        return;
    }
    /* Answered at once, in the latency class where this rank has one; not
     * once finalizing (the tcp transport's rule too). */
    ofi_wire_t r = { .type = OFI_PONG, .src = tp->rank, .seq = OFI_UNORDERED, .id = w->id,
                     .len = w->len };
    if (!tp->draining)
        ofi_ctl_send(tp, w->src, &r, OFI_CTL_PONG);
}

int ofi_answer_lost(ofi_tp_t *tp, void *ctx)
{
    if (!ctx || *(int *)((char *)ctx + sizeof(struct fi_context)) != OFI_CTX_TX ||
        !((ofi_buf_t *)ctx)->benign)
        return 0;
    tp->tx_in_flight--;
    ofi_tx_put(tp, ctx);
    return 1;
}
