/*
 * Compact messages (ofi_tp.h, OFI_COMPACT_TAG): a plain eager message's
 * heads packed into its tag and remote CQ data, so that the payload goes
 * alone. On shm, whose commands carry 128 bytes inline and whose inject
 * takes 4 KiB, Locus's 32 bytes of heads in front of a payload made a
 * 128-byte message leave the inline path and a 4 KiB one be pushed, where
 * MPICH (whose header travels in the tag) sent one of each. A payload
 * within the inject size goes straight from the caller's buffer.
 *
 * The core's header stays opaque here: its 16 bytes are read as four
 * words, packed when their values fit the fields and unpacked to the same
 * bytes; any other header goes the ordinary way.
 */
#include "ofi_tp.h"

#include <errno.h>
#include <string.h>

#define CTX_BITS 30
#define SEQ_BITS 22
#define SRC_SHIFT 43 /* the sender's world rank above the word and the sequence */
#define WORD_SHIFT SEQ_BITS

typedef uint32_t __attribute__((aligned(1), may_alias)) word_t;

int ofi_compact_pack(const uint32_t w[4], int rank, uint32_t seq, uint64_t *tag, uint64_t *data)
{
    if (w[3] != 0 || w[0] >= 1u << CTX_BITS || w[1] >= OFI_COMPACT_RANKS ||
        (uint32_t)rank >= OFI_COMPACT_RANKS)
        return 0;
    *tag = OFI_COMPACT_TAG | (uint64_t)w[0] << 32 | w[2];
    *data = (uint64_t)(uint32_t)rank << SRC_SHIFT | (uint64_t)w[1] << WORD_SHIFT |
            (seq & ((1u << SEQ_BITS) - 1));
    return 1;
}

void ofi_compact_unpack(uint64_t tag, uint64_t data, uint32_t w[4], uint32_t *rank,
                        uint32_t *seq_low)
{
    w[0] = (uint32_t)(tag >> 32) & ((1u << CTX_BITS) - 1);
    w[1] = (uint32_t)(data >> WORD_SHIFT) & (OFI_COMPACT_RANKS - 1);
    w[2] = (uint32_t)tag;
    w[3] = 0;
    *rank = (uint32_t)(data >> SRC_SHIFT);
    *seq_low = (uint32_t)data & ((1u << SEQ_BITS) - 1);
}

int ofi_compact_send(ofi_tp_t *tp, int dst, const void *hdr, size_t hdrlen, const void *data,
                     size_t len)
{
    uint32_t w[4];
    if (hdrlen != sizeof w)
        return OFI_NOT_COMPACT;
    /* Word by word: the core has just stored them so, and a wider load
     * across two of those stores waits for both to reach the cache (a
     * 16-byte copy here took 10% of a 512-byte stream's time in perf). */
    const volatile word_t *hw = hdr; /* volatile: loads the compiler may not merge */
    for (int i = 0; i < 4; i++)
        w[i] = hw[i];
    ofi_peer_t *p = &tp->peers[dst];
    uint64_t tag, cqd;
    if (!ofi_compact_pack(w, tp->rank, p->tx_seq, &tag, &cqd))
        return OFI_NOT_COMPACT;
    int rc;
    if (tp->inject && len <= tp->inject) {
        rc = (int)fi_tinjectdata(tp->rail[0].ep, data, len, cqd, p->addr[0], tag);
    } else {
        ofi_buf_t *b = ofi_tx_get(tp);
        if (!b)
            return LOCUS_TP_AGAIN;
        if (len)
            memcpy(b->mem, data, len);
        rc = (int)fi_tsenddata(tp->rail[0].ep, b->mem, len, b->desc, cqd, p->addr[0], tag,
                               &b->fctx);
        if (rc == 0)
            tp->tx_in_flight++;
        else
            ofi_tx_put(tp, b);
    }
    if (rc == -FI_EAGAIN)
        return LOCUS_TP_AGAIN;
    if (rc != 0) {
        ofi_fail(tp, rc, "sending to rank %d: %s", dst, fi_strerror(-rc));
        return tp->failed;
    }
    p->tx_seq++;
    tp->compact_sent++;
    return LOCUS_TP_DONE;
}

void ofi_compact_arrived(ofi_tp_t *tp, ofi_buf_t *b, const struct fi_cq_tagged_entry *e)
{
    uint32_t w[4], src, low;
    ofi_compact_unpack(e->tag, e->data, w, &src, &low);
    if (!(e->flags & FI_REMOTE_CQ_DATA) || src >= (uint32_t)tp->size ||
        src == (uint32_t)tp->rank || e->len > tp->bufsize) {
        ofi_fail(tp, -EPROTO, "a malformed compact message (%zu bytes, data 0x%llx)", e->len,
                 (unsigned long long)e->data);
        return;
    }
    ofi_peer_t *p = &tp->peers[src];
    /* The full sequence number: the low bits are how far ahead of the
     * peer's turn it is (a message is never 2^21 turns ahead). */
    uint32_t ahead = (low - p->rx_seq) & ((1u << SEQ_BITS) - 1);
    if (ahead >= 1u << (SEQ_BITS - 1)) {
        ofi_fail(tp, -EPROTO, "rank %u sent a message %u turns behind this rank's count", src,
                 (1u << SEQ_BITS) - ahead);
        return;
    }
    if (ahead == 0) {
        tp->up->deliver(tp->core, (int)src, w, sizeof w, b->mem, e->len);
        ofi_turn_next(tp, p);
        return;
    }
    /* Ahead of its turn: held in the EAGER form, as it would have come. */
    unsigned char head[OFI_WIRE_SHORT + sizeof w];
    ofi_wire_t hw = { .type = OFI_EAGER, .hdrlen = sizeof w, .src = (int32_t)src,
                      .seq = p->rx_seq + ahead };
    memcpy(head, &hw, OFI_WIRE_SHORT);
    memcpy(head + OFI_WIRE_SHORT, w, sizeof w);
    ofi_hold(tp, p, hw.seq, head, sizeof head, b->mem, e->len);
}
