/*
 * Memory registration, honouring every mode bit the provider asked for:
 * FI_MR_PROV_KEY (the provider picks the key: read it back), FI_MR_VIRT_ADDR
 * (a peer addresses the memory by its virtual address, else from 0),
 * FI_MR_ENDPOINT (bound to the endpoint and enabled before use),
 * FI_MR_LOCAL (local buffers too: the caller passes fi_mr_desc),
 * FI_MR_ALLOCATED (only allocated memory: the core's buffers are).
 *
 * A registration cache per rail keeps up to OFI_REG_CACHE of them by
 * address and length (LOCUS_OFI_MR_CACHE, "auto": on for software providers, which
 * pin nothing, off for fabrics, whose pinned pages would outlive a free()
 * of the memory without a memory hook to tell).
 */
#include "ofi_tp.h"

#include <stdlib.h>

#define OFI_REG_CACHE 64

int ofi_mr_open(ofi_tp_t *tp, int rail, struct fid_ep *ep, void *buf, size_t len,
                uint64_t access, struct fid_mr **mr)
{
    static uint64_t next_key = 1; /* unique per process; the provider's with PROV_KEY */
    int rc = fi_mr_reg(tp->rail[rail].domain, buf, len, access, 0,
                       (tp->mr_mode & FI_MR_PROV_KEY) ? 0 : next_key++, 0, mr, NULL);
    if (rc != 0)
        return rc;
    if (tp->mr_mode & FI_MR_ENDPOINT) {
        rc = fi_mr_bind(*mr, &ep->fid, 0);
        if (rc == 0)
            rc = fi_mr_enable(*mr);
        if (rc != 0) {
            fi_close(&(*mr)->fid);
            *mr = NULL;
        }
    }
    return rc;
}

static void reg_close(ofi_reg_t *r)
{
    if (r->mr)
        fi_close(&r->mr->fid);
    free(r);
}

/* Drops a rail's unused cached registrations, oldest first, down to `keep`. */
static void cache_trim(ofi_rail_t *rl, int keep)
{
    while (rl->nregs > keep) {
        ofi_reg_t **oldest = NULL;
        for (ofi_reg_t **p = &rl->regs; *p; p = &(*p)->next)
            if ((*p)->refs == 0 && (!oldest || (*p)->used < (*oldest)->used))
                oldest = p;
        if (!oldest)
            return;
        ofi_reg_t *r = *oldest;
        *oldest = r->next;
        rl->nregs--;
        reg_close(r);
    }
}

ofi_reg_t *ofi_reg_get(ofi_tp_t *tp, int rail, const void *buf, size_t len, uint64_t access)
{
    ofi_rail_t *rl = &tp->rail[rail];
    uintptr_t a = (uintptr_t)buf;
    if (tp->cfg.mr_cache)
        for (ofi_reg_t *r = rl->regs; r; r = r->next)
            if (r->base <= a && a + len <= r->base + r->len) {
                r->refs++;
                r->used = ++tp->clock;
                tp->reg_hits++;
                return r;
            }
    tp->reg_misses++;
    ofi_reg_t *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    /* Cached ones take every access this transport uses, so one serves
     * the sender's and the receiver's side alike. */
    uint64_t acc = tp->cfg.mr_cache ? (FI_SEND | FI_RECV | (tp->has_rma ? FI_READ |
                                                                         FI_REMOTE_READ : 0))
                                    : access;
    if (ofi_mr_open(tp, rail, tp->rail[rail].dep, (void *)buf, len, acc, &r->mr) != 0) {
        free(r);
        return NULL;
    }
    r->desc = fi_mr_desc(r->mr);
    r->key = fi_mr_key(r->mr);
    r->raddr = (tp->mr_mode & FI_MR_VIRT_ADDR) ? (uint64_t)a : 0;
    r->rail = rail;
    r->base = a;
    r->len = len;
    r->refs = 1;
    r->used = ++tp->clock;
    if (tp->cfg.mr_cache) {
        cache_trim(rl, OFI_REG_CACHE - 1);
        r->next = rl->regs;
        rl->regs = r;
        rl->nregs++;
    }
    return r;
}

void ofi_reg_put(ofi_tp_t *tp, ofi_reg_t *r)
{
    if (!r)
        return;
    if (!tp->cfg.mr_cache) {
        reg_close(r);
        return;
    }
    r->refs--;
}

void ofi_reg_flush(ofi_tp_t *tp)
{
    for (int k = 0; k < tp->nrails; k++) {
        ofi_rail_t *rl = &tp->rail[k];
        while (rl->regs) {
            ofi_reg_t *r = rl->regs;
            rl->regs = r->next;
            reg_close(r);
        }
        rl->nregs = 0;
    }
}
