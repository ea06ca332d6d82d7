/*
 * win_seg.c — a window's node segment (the slots of the node-local ranks
 * and the memory of the allocated flavors), the passive-target lock words,
 * the accumulate mutex and the published region tables of dynamic windows.
 *
 * The segment is a job-scoped /dev/shm file made with the shm transport's
 * helpers (shm_file.h) by the node's first rank, mapped by the others and
 * unlinked as soon as every rank of the window has it mapped (or gave up),
 * so whatever happens later nothing stays in /dev/shm.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "shm_file.h"
#include "rma.h"

#define SEG_LINE 64
#define SEG_PAGE 4096
/* The tag of the segment-name messages on the window's context (clear of
 * the request tag 0 and of the reply tags). */
#define SEG_TAG 0x40000000

static size_t round_up(size_t v, size_t a)
{
    return (v + a - 1) / a * a;
}

/* Offsets of the local ranks' data from the data area; returns its size. */
static size_t seg_layout(int n, const MPI_Aint *len, int layout, size_t *off)
{
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        if (layout == RMA_LAYOUT_ALIGNED)
            at = round_up(at, SEG_LINE);
        off[i] = at;
        at += (size_t)len[i];
    }
    return at;
}

/* Leader: creates and names the segment; the others get its name by
 * message and map it. Returns the mapping (NULL on failure). */
static void *seg_map(locus_win_t *w, size_t total)
{
    locus_coll_comm_t *cc = &w->comm->coll;
    locus_dtype_t *chars = locus_dtype_basic(LOCUS_EL_CHAR);
    char name[256] = "", what[48], err[256];
    void *base = NULL;
    if (cc->local_rank == 0) {
        snprintf(what, sizeof what, "win.%u", w->comm->ctx_p2p);
        shm_file_name(name, sizeof name, what, 0);
        if (shm_file_create(name, total, &base, err, sizeof err) != 0) {
            snprintf(locus_mpi.detail, sizeof locus_mpi.detail, "%.150s", err);
            name[0] = '\0';
        }
        /* Every local rank gets a name (empty: creation failed), so none
         * is left waiting; the allreduce after this settles the outcome. */
        for (int i = 1; i < cc->local_size; i++) {
            locus_req_t *r = locus_core_req_get(locus_core());
            if (!r)
                return base;
            if (locus_p2p_isend(name, sizeof name, chars, cc->local_ranks[i], SEG_TAG, w->comm,
                                w->comm->ctx_p2p, 0, r) != MPI_SUCCESS) {
                locus_core_req_put(locus_core(), r);
                return base;
            }
            if (locus_p2p_finish(r, NULL) != MPI_SUCCESS)
                return base;
        }
        return base;
    }
    locus_req_t *r = locus_core_req_get(locus_core());
    if (!r)
        return NULL;
    locus_p2p_irecv(name, sizeof name, chars, cc->local_ranks[0], SEG_TAG, w->comm,
                    w->comm->ctx_p2p, r);
    if (locus_p2p_finish(r, NULL) != MPI_SUCCESS || !name[0])
        return NULL;
    size_t got = 0;
    if (shm_file_attach(name, total, &base, &got, err, sizeof err) != 0) {
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail, "%.150s", err);
        return NULL;
    }
    return base;
}

int win_seg_create(locus_win_t *w, const MPI_Aint *data_len, int layout, char **data_of)
{
    locus_coll_comm_t *cc = &w->comm->coll;
    int n = cc->local_size;
    size_t *off = malloc((size_t)n * sizeof *off);
    if (!off)
        return MPI_ERR_NO_MEM;
    size_t data = seg_layout(n, data_len, layout, off);
    size_t head = round_up((size_t)n * sizeof(rma_slot_t), SEG_PAGE);
    size_t total = head + round_up(data, SEG_PAGE);
    void *base = NULL;
    if (n > 1) {
        base = seg_map(w, total);
    } else {
        /* alone on the node: private memory, zero pages given on first touch */
        base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (base == MAP_FAILED)
            base = NULL;
    }
    w->seg_shm = n > 1;
    /* Everyone or no one: a rank that failed makes the window fail on all. */
    int ok = base != NULL, all = 0;
    int err = locus_coll_allreduce(&ok, &all, 1, locus_dtype_basic(LOCUS_EL_INT),
                                   locus_op_predefined(LOCUS_OP_MIN), cc);
    if (w->seg_shm && cc->local_rank == 0 && base) {
        char name[256], what[48];
        snprintf(what, sizeof what, "win.%u", w->comm->ctx_p2p);
        shm_file_name(name, sizeof name, what, 0);
        shm_unlink(name);   /* every rank has it mapped (or gave up) by now */
    }
    if (err != MPI_SUCCESS || !all) {
        if (base)
            munmap(base, total);
        free(off);
        w->seg_shm = 0;
        return err != MPI_SUCCESS ? err : MPI_ERR_NO_MEM;
    }
    w->seg = base;
    w->seg_len = total;
    w->myslot = (rma_slot_t *)base + cc->local_rank;
    for (int i = 0; i < n; i++)
        data_of[i] = (char *)base + head + off[i];
    free(off);
    return MPI_SUCCESS;
}

void win_seg_free(locus_win_t *w)
{
    if (!w->seg)
        return;
    munmap(w->seg, w->seg_len);
    w->seg = NULL;
    w->myslot = NULL;
}

/* ---- locks ---- */

int rma_lock_try(rma_slot_t *s, int type)
{
    unsigned v = atomic_load_explicit(&s->lock, memory_order_relaxed);
    if (type == MPI_LOCK_SHARED) {
        /* A waiting exclusive locker keeps new shared ones out, so a
         * stream of shared epochs cannot starve it. */
        if (v & (RMA_LOCK_EXCL | RMA_LOCK_WAIT))
            return 0;
        return atomic_compare_exchange_strong_explicit(&s->lock, &v, v + 1,
                                                       memory_order_acquire,
                                                       memory_order_relaxed);
    }
    if ((v & ~RMA_LOCK_WAIT) == 0)
        return atomic_compare_exchange_strong_explicit(&s->lock, &v, RMA_LOCK_EXCL,
                                                       memory_order_acquire,
                                                       memory_order_relaxed);
    if (!(v & RMA_LOCK_WAIT))
        atomic_fetch_or_explicit(&s->lock, RMA_LOCK_WAIT, memory_order_relaxed);
    return 0;
}

void rma_lock_release(rma_slot_t *s, int type)
{
    if (type == MPI_LOCK_SHARED)
        atomic_fetch_sub_explicit(&s->lock, 1, memory_order_release);
    else
        atomic_fetch_and_explicit(&s->lock, ~RMA_LOCK_EXCL, memory_order_release);
}

int rma_acc_try(rma_slot_t *s)
{
    unsigned v = 0;
    if (atomic_load_explicit(&s->acc, memory_order_relaxed) != 0)
        return 0;
    return atomic_compare_exchange_strong_explicit(&s->acc, &v, 1, memory_order_acquire,
                                                   memory_order_relaxed);
}

void rma_acc_release(rma_slot_t *s)
{
    atomic_store_explicit(&s->acc, 0, memory_order_release);
}

int rma_lock_take(rma_slot_t *s, int type)
{
    while (!rma_lock_try(s, type)) {
        int err = rma_wait_step();
        if (err != MPI_SUCCESS)
            return err;
    }
    return MPI_SUCCESS;
}

int rma_acc_take(rma_slot_t *s)
{
    /* Held only for one operation's copy: a short spin first. */
    for (int spin = 0; spin < 64; spin++)
        if (rma_acc_try(s))
            return MPI_SUCCESS;
    while (!rma_acc_try(s)) {
        int err = rma_wait_step();
        if (err != MPI_SUCCESS)
            return err;
    }
    return MPI_SUCCESS;
}

/* ---- regions of dynamic windows ---- */

void rma_regions_publish(locus_win_t *w)
{
    rma_slot_t *s = w->myslot;
    /* A sequence lock: readers retry while it is odd or moved. */
    atomic_fetch_add_explicit(&s->reg_seq, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    if (w->nregions > RMA_REG_MAX) {
        s->nreg = RMA_REG_OVERFLOW;
    } else {
        for (int i = 0; i < w->nregions; i++)
            s->reg[i] = w->regions[i];
        s->nreg = (uint32_t)w->nregions;
    }
    atomic_fetch_add_explicit(&s->reg_seq, 1, memory_order_release);
}

/* The region holding byte addr (len 0 regions hold nothing), or -1. */
static int region_at(const rma_region_t *r, int n, uint64_t addr)
{
    for (int i = 0; i < n; i++)
        if (addr >= r[i].base && addr - r[i].base < r[i].len)
            return i;
    return -1;
}

int rma_regions_cover(const rma_region_t *r, int n, uint64_t addr, uint64_t len)
{
    if (len == 0) {
        for (int i = 0; i < n; i++)
            if (addr >= r[i].base && addr - r[i].base <= r[i].len)
                return 1;
        return 0;
    }
    if (addr > UINT64_MAX - len)
        return 0;
    uint64_t end = addr + len;
    /* Walk from region to adjacent region. MPI_Win_attach keeps regions
     * from overlapping, so each step starts a region not used before and n
     * steps suffice; the bound also holds for a table a peer rewrites while
     * we read it (the sequence lock then makes us read again). */
    for (int step = 0; step < n; step++) {
        int i = region_at(r, n, addr);
        if (i < 0)
            return 0;
        uint64_t off = addr - r[i].base;
        if (end - addr <= r[i].len - off)
            return 1;
        addr = r[i].base + r[i].len;
    }
    return 0;
}

int rma_slot_covers(rma_slot_t *s, uint64_t addr, uint64_t len, int *overflow)
{
    for (;;) {
        unsigned seq = atomic_load_explicit(&s->reg_seq, memory_order_acquire);
        if (seq & 1) {
            rma_wait_step();
            continue;
        }
        uint32_t n = s->nreg;
        int hit = n != RMA_REG_OVERFLOW && n <= RMA_REG_MAX &&
                  rma_regions_cover(s->reg, (int)n, addr, len);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&s->reg_seq, memory_order_relaxed) != seq)
            continue;
        *overflow = n == RMA_REG_OVERFLOW;
        return hit;
    }
}
