/*
 * coll_shm.c — the shared-memory fast path for small collectives on a
 * communicator whose members all share this node: one segment per
 * communicator (made on first use with the shm transport's file helpers,
 * unlinked at once after everyone has mapped it, so nothing stays in
 * /dev/shm), a sense-reversing barrier on one counter, flag records for
 * the operations where every rank waits for every other, rooted records
 * for those where data flows from or to one rank, and per-rank slots for
 * the rest.
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "coll_priv.h"
#include "locus_copy.h"
#include "locus_tunables.h"
#include "shm_file.h"

#define SHM_LINE 64
/* Large broadcasts stream through two chunks of this size. */
#define SHM_CHUNK ((size_t)64 << 10)
/* Larger allreduces go through two sets of size+1 pieces of this size. */
#define SHM_RCHUNK ((size_t)32 << 10)
/* Allreduces up to this size are combined by every rank from all slots. */
#define SHM_RED_ALL ((size_t)1024)
/* Spins between two progress calls while waiting at the barrier. */
#define SHM_SPINS_PER_PROGRESS 64
/* An oversubscribed node's waits yield every this many polls, but one
 * for a rank running apart from my CPUs polls up to SHM_SPINS_APART_MAX
 * first (shm_wait_turn). */
#define SHM_SPINS_YIELD 4u
#define SHM_SPINS_APART_MAX 1024u
/* Per rank, two records of this size (a sequence word, then data) for
 * the operations where every rank waits for every other: barrier and
 * small allreduce and allgather. */
#define SHM_FLAG_REC 256
/* The data starts 16 bytes in: aligned for every element kind (long
 * double, __int128 and complex ones need 16; vectorised kernels rely on
 * it), and still 48 bytes of it on the sequence word's cache line. */
#define SHM_FLAG_OFF 16
#define SHM_FLAG_DATA (SHM_FLAG_REC - SHM_FLAG_OFF)
/* Rooted records per rank: how many rooted operations a rank may run
 * ahead of the slowest before it waits. On an oversubscribed node more,
 * up to this many bytes of records per rank: a rank that waits there
 * gives its core away, and one that runs ahead spares its readers a
 * switch per record (4 ranks on 2 cores, IMB Reduce_scatter of 4 B,
 * where one rank owns the element: 0.8-1.0 us with 15 records of 4 KiB,
 * 1.4-2.7 with 4; gather and bcast of 4 KiB, 1.6-1.9 us with 15 records
 * of 8 KiB, 2.2-3.8 with 7). */
#define SHM_ROOTED_DEPTH 4
#define SHM_ROOTED_OVERSUB_BYTES ((size_t)128 << 10)

typedef struct {
    _Alignas(SHM_LINE) atomic_uint count;   /* arrivals in the current barrier */
    _Alignas(SHM_LINE) atomic_uint sense;   /* flips when a barrier completes */
} shm_hdr_t;

/*
 * Two sets of `size` slots, used by alternate operations: an operation
 * writes its set before its barrier and reads after it, and nobody can
 * write the same set again (two operations later) before every rank has
 * passed the barrier in between, i.e. finished reading. So one barrier per
 * bcast or allreduce is enough. A scatter through the slots has no
 * barrier: its readers wait for the root's rooted record and note the
 * operation in their done lines, so the next writer of a set whose last
 * step was such a scatter, or came right after one, waits for those
 * lines instead (sets_claim). A large bcast streams through the two
 * chunks the same way, one barrier per chunk, the root filling the next
 * chunk while the others copy out the last one.
 */
struct coll_shm {
    shm_hdr_t *hdr;
    char *slots;          /* 2 * size slots of `slot` bytes */
    char *chunks;         /* 2 chunks of SHM_CHUNK bytes (large bcast) */
    char *red;            /* 2 sets of size+1 SHM_RCHUNK pieces (large allreduce) */
    char *flags;          /* 2 records of SHM_FLAG_REC bytes per rank */
    char *rooted;         /* rdepth records of `rrec` bytes per rank */
    char *rdone;          /* per rank, one line: the last rooted operation it finished,
                             then what it is doing (rank_state) */
    uint64_t fseq;        /* flag operations so far */
    uint64_t rseq;        /* rooted operations so far */
    uint64_t rfree;       /* every rank had finished this rooted operation when I last looked */
    size_t slot, rrec, len;
    size_t rcap;          /* data bytes of a rooted record */
    size_t rdepth;        /* rooted records per rank */
    int size, rank;
    unsigned sense;       /* my sense for the next barrier */
    unsigned gen;         /* operations so far: picks the slot set */
    uint64_t set_q[2];    /* per set: the rooted operation that last used it
                             with no barrier after (a scatter), or 0 */
    int yield;            /* the node is oversubscribed: yield while waiting */
    int grown;            /* rank 0 found it so and grew the slots past rcap */
    unsigned char *apart; /* per rank: bound to CPUs none of which are mine (ranks_apart) */
    const locus_coll_p2p_t *p2p;
};

int coll_shm_ranks_apart(const coll_shm_t *seg)
{
    int n = 0;
    for (int i = 0; seg->apart && i < seg->size; i++)
        n += seg->apart[i];
    return n;
}

static char *shm_slot(coll_shm_t *seg, int rank)
{
    return seg->slots + ((size_t)(seg->gen & 1) * (size_t)seg->size + (size_t)rank) * seg->slot;
}

/* On to the other set; q: the rooted operation that used this one with
 * no barrier after it, or 0. */
static void gen_next(coll_shm_t *seg, uint64_t q)
{
    seg->set_q[seg->gen & 1] = q;
    seg->gen++;
}

void coll_shm_free(coll_shm_t *seg)
{
    if (!seg)
        return;
    munmap(seg->hdr, seg->len);
    free(seg->apart);
    free(seg);
}

/* bytes, capped at what a slot may hold: a large LOCUS_COLL_SHM_MAX must
 * not ask tmpfs for gigabytes; bigger payloads take the message path. */
static size_t shm_limit(size_t bytes)
{
    return bytes < COLL_SHM_SLOT_CAP ? bytes : COLL_SHM_SLOT_CAP;
}

static size_t shm_lines(size_t bytes)
{
    size_t n = (bytes + SHM_LINE - 1) / SHM_LINE * SHM_LINE;
    return n ? n : SHM_LINE;
}

/* Bytes of a segment for size ranks. */
static size_t shm_len(int size, size_t slot, size_t rcap, size_t rdepth)
{
    size_t p = (size_t)size, rrec = shm_lines(SHM_FLAG_OFF + rcap);
    return sizeof(shm_hdr_t) + 2 * p * slot + 2 * SHM_CHUNK + 2 * (p + 1) * SHM_RCHUNK +
           2 * p * SHM_FLAG_REC + p * (rdepth * rrec + SHM_LINE);
}

/* The slots on an oversubscribed node while LOCUS_COLL_SHM_OVERSUB_MAX
 * is not set: its 1 MiB where both sets of them take at most this much
 * (tmpfs reserves the segment whole: 4 ranks get 1 MiB slots, 16 get 256
 * KiB), never less than 64 KiB. */
#define SHM_OVERSUB_SLOTS_BYTES ((size_t)8 << 20)
#define SHM_OVERSUB_SLOT_MIN ((size_t)64 << 10)

static size_t oversub_slot(const coll_state_t *st, int size)
{
    size_t want = shm_limit(st->shm_oversub_max);
    if (locus_tunable_source("LOCUS_COLL_SHM_OVERSUB_MAX") != LOCUS_TUNABLE_DEFAULT)
        return want;
    size_t share = SHM_OVERSUB_SLOTS_BYTES / (2 * (size_t)size);
    share = share < SHM_OVERSUB_SLOT_MIN ? SHM_OVERSUB_SLOT_MIN : share;
    return want < share ? want : share;
}

/*
 * Per rank, whether it is bound to CPUs none of which I may run on: on an
 * oversubscribed node a wait for it polls longer (shm_wait_turn). apart
 * (zeroed) back, or NULL (freed) where no rank is. cpus: room for
 * everyone's mask; all ranks had both. A rank whose mask is unknown
 * counts as on every CPU. Collective over c.
 */
static unsigned char *ranks_apart(locus_coll_comm_t *c, cpu_set_t *cpus, unsigned char *apart)
{
    cpu_set_t mine, both;
    if (sched_getaffinity(0, sizeof mine, &mine) != 0)
        memset(&mine, 0xff, sizeof mine);
    locus_dtype_t *bytes = locus_dtype_basic(LOCUS_EL_BYTE);
    int any = 0;
    if (locus_coll_allgather(&mine, sizeof mine, bytes, cpus, sizeof mine, bytes, c) ==
        LOCUS_SUCCESS)
        for (int i = 0; i < c->size; i++) {
            CPU_AND(&both, &mine, &cpus[i]);
            apart[i] = CPU_COUNT(&both) == 0;
            any |= apart[i];
        }
    if (!any) {
        free(apart);
        return NULL;
    }
    return apart;
}

/* Makes the segment: rank 0 sizes, creates and names it, the rest map it
 * with rank 0's sizes (so all agree on its layout, and on whether the
 * slots grew); all agree (through messages, the fast path being off
 * meanwhile) whether it worked. Collective over c. */
static coll_shm_t *shm_setup(locus_coll_comm_t *c, coll_state_t *st)
{
    char what[32], err[256];
    /* Rooted records hold LOCUS_COLL_SHM_MAX bytes, and so do the slots,
     * but on an oversubscribed node those grow to
     * LOCUS_COLL_SHM_OVERSUB_MAX (coll_shm_usable, COLL_SHM_SLOT). */
    struct { char name[320]; uint64_t slot, rcap, rdepth; } plan = { "", 0, 0, 0 };
    void *base = NULL;
    if (c->rank == 0) {
        plan.rcap = shm_lines(shm_limit(st->shm_max));
        plan.slot = plan.rcap;
        plan.rdepth = SHM_ROOTED_DEPTH;
        if (c->yield && oversub_slot(st, c->size) > plan.slot)
            plan.slot = shm_lines(oversub_slot(st, c->size));
        size_t rrec = shm_lines(SHM_FLAG_OFF + plan.rcap);
        if (c->yield && SHM_ROOTED_OVERSUB_BYTES / rrec > plan.rdepth)
            plan.rdepth = SHM_ROOTED_OVERSUB_BYTES / rrec;
        snprintf(what, sizeof what, "coll.%u", c->id);
        shm_file_name(plan.name, sizeof plan.name, what, 0);
        if (shm_file_create(plan.name, shm_len(c->size, plan.slot, plan.rcap, plan.rdepth),
                            &base, err, sizeof err) != 0)
            plan.name[0] = '\0';
    }
    locus_dtype_t *bytes = locus_dtype_basic(LOCUS_EL_BYTE);
    if (locus_coll_bcast(&plan, sizeof plan, bytes, 0, c) != LOCUS_SUCCESS)
        plan.name[0] = '\0';
    size_t slot = plan.slot, rcap = plan.rcap, rrec = shm_lines(SHM_FLAG_OFF + rcap);
    size_t len = shm_len(c->size, slot, rcap, plan.rdepth);
    size_t got = 0;
    if (c->rank != 0 && plan.name[0] &&
        shm_file_attach(plan.name, len, &base, &got, err, sizeof err) != 0)
        base = NULL;
    /* Allocated before everyone agrees, so all ranks take ranks_apart's
     * allgather or none. */
    cpu_set_t *cpus = c->yield ? malloc(sizeof *cpus * (size_t)c->size) : NULL;
    unsigned char *apart = c->yield ? calloc((size_t)c->size, 1) : NULL;
    int ok = base != NULL && (!c->yield || (cpus && apart)), all = 0;
    if (locus_coll_allreduce(&ok, &all, 1, locus_dtype_basic(LOCUS_EL_INT),
                             locus_op_predefined(LOCUS_OP_MIN), c) != LOCUS_SUCCESS)
        all = 0;
    if (c->rank == 0 && plan.name[0])
        shm_unlink(plan.name);   /* everyone has it mapped (or gave up) by now */
    if (all && c->yield)
        apart = ranks_apart(c, cpus, apart);
    free(cpus);
    coll_shm_t *seg = all ? calloc(1, sizeof(*seg)) : NULL;
    if (!seg) {
        if (base)
            munmap(base, len);
        free(apart);
        return NULL;
    }
    seg->apart = apart;
    seg->hdr = base;
    seg->slots = (char *)base + sizeof(shm_hdr_t);
    seg->chunks = seg->slots + 2 * (size_t)c->size * slot;
    seg->red = seg->chunks + 2 * SHM_CHUNK;
    seg->flags = seg->red + 2 * ((size_t)c->size + 1) * SHM_RCHUNK;
    seg->rooted = seg->flags + 2 * (size_t)c->size * SHM_FLAG_REC;
    seg->rdone = seg->rooted + (size_t)c->size * plan.rdepth * rrec;
    seg->slot = slot;
    seg->rrec = rrec;
    seg->rcap = rcap;
    seg->rdepth = plan.rdepth;
    seg->len = len;
    seg->size = c->size;
    seg->rank = c->rank;
    seg->sense = 1;
    seg->yield = c->yield;
    seg->grown = slot > rcap;
    seg->p2p = c->p2p;
    return seg;
}

int coll_shm_usable(const locus_coll_sched_t *s, locus_coll_comm_t *c, coll_state_t *st,
                    int alg, size_t bytes, size_t op_max)
{
    if (!s->blocking || !(alg == ALG_SHM || (alg == ALG_AUTO && st->shm)))
        return 0;
    if (!coll_is_node_local(c) || c->size < 2 || c->no_shm)
        return 0;
    /* Made at the first operation that may take the path, whatever its
     * size: the slots' size is agreed there, so every member judges the
     * size against the same limit. */
    if (st->shm_state == 0) {
        st->shm_state = 2;   /* setup runs flat collectives on c */
        st->shm_seg = shm_setup(c, st);
        st->shm_state = st->shm_seg ? 1 : -1;
    }
    if (st->shm_state != 1)
        return 0;
    if (op_max == COLL_SHM_SLOT)
        op_max = st->shm_seg->slot;
    else if (op_max == COLL_SHM_GROWN)
        op_max = st->shm_seg->grown ? SIZE_MAX : 0;
    return bytes <= shm_limit(st->shm_max) || bytes <= op_max;
}

int coll_shm_reduce_usable(const locus_coll_sched_t *s, locus_coll_comm_t *c, coll_state_t *st,
                           int alg, size_t bytes, size_t max)
{
    return coll_shm_usable(s, c, st, alg, bytes, max) ||
           (st->shm_allreduce_max && coll_shm_usable(s, c, st, alg, bytes, COLL_SHM_GROWN));
}

/* What a rank of an oversubscribed node with ranks apart is doing, kept
 * in its done line (written around yields only): RANK_RUNS, RANK_YIELDS,
 * or waiting for rank k (RANK_WAITS + k) or for any (RANK_WAITS_ANY, a
 * barrier). */
enum { RANK_RUNS, RANK_YIELDS, RANK_WAITS_ANY, RANK_WAITS };

static _Atomic int *rank_state(const coll_shm_t *seg, int rank)
{
    return (_Atomic int *)(void *)(seg->rdone + (size_t)rank * SHM_LINE + 8);
}

static void note_state(const coll_shm_t *seg, int state)
{
    atomic_store_explicit(rank_state(seg, seg->rank), state, memory_order_relaxed);
}

/* Whether my wait for rank should poll on rather than yield: it is bound
 * apart from my CPUs and neither yields nor waits for another rank, so it
 * runs beside me and what it owes me may be a cache line's trip away,
 * while my yield would hand my core to a rank sharing it, for a switch
 * there and one back. */
static int rank_coming(const coll_shm_t *seg, int rank)
{
    if (rank < 0 || !seg->apart[rank])
        return 0;
    int st = atomic_load_explicit(rank_state(seg, rank), memory_order_relaxed);
    return st == RANK_RUNS || st == RANK_WAITS + seg->rank;
}

/* One turn of a wait for rank (-1: any) on the segment: every so often it
 * keeps other traffic moving (sends waiting on this rank) and notices a
 * dead peer through the transports (-1), and on an oversubscribed node it
 * yields, unless that rank is coming. A wait that took turns ends with
 * wait_end. */
static int shm_wait_turn(const coll_shm_t *seg, unsigned spins, int rank)
{
    if (spins % SHM_SPINS_PER_PROGRESS == 0 && seg->p2p->progress() < 0)
        return -1;
    if (!seg->yield || spins % SHM_SPINS_YIELD)
        return 0;
    if (!seg->apart) {
        sched_yield();
        return 0;
    }
    int waiting = rank < 0 ? RANK_WAITS_ANY : RANK_WAITS + rank;
    if (spins == SHM_SPINS_YIELD)
        note_state(seg, waiting);
    if (spins < SHM_SPINS_APART_MAX && rank_coming(seg, rank))
        return 0;
    note_state(seg, RANK_YIELDS);
    sched_yield();
    note_state(seg, waiting);
    return 0;
}

static void wait_end(const coll_shm_t *seg, unsigned spins)
{
    if (seg->apart && spins >= SHM_SPINS_YIELD)
        note_state(seg, RANK_RUNS);
}

/* Centralized sense-reversing barrier. Ends an operation: the next one
 * uses the other slot set. While waiting it keeps other traffic moving
 * (sends waiting on this rank) and notices a dead peer through the
 * transports, which ends the wait with an error instead of a hang. */
static int shm_barrier(coll_shm_t *seg)
{
    unsigned my = seg->sense;
    seg->sense ^= 1u;
    gen_next(seg, 0);
    if (atomic_fetch_add_explicit(&seg->hdr->count, 1, memory_order_acq_rel) ==
        (unsigned)seg->size - 1) {
        atomic_store_explicit(&seg->hdr->count, 0, memory_order_relaxed);
        atomic_store_explicit(&seg->hdr->sense, my, memory_order_release);
        return LOCUS_SUCCESS;
    }
    unsigned spins = 0;
    while (atomic_load_explicit(&seg->hdr->sense, memory_order_acquire) != my)
        if (shm_wait_turn(seg, ++spins, -1) < 0)
            return LOCUS_ERR_OTHER;
    wait_end(seg, spins);
    return LOCUS_SUCCESS;
}

/*
 * Flag operations: each rank publishes a record (data, then its sequence
 * number with release order) and reads everyone's. A small payload shares
 * the sequence word's cache line, so on 2 ranks an allreduce costs one
 * line each way instead of the barrier's three hand-offs. A record is
 * rewritten two flag operations later; by then every rank has read it,
 * because in each of these operations every rank waits for every other's
 * record, which it writes only after reading the previous operation's.
 * (So only operations with that all-to-all dependency may use them.)
 */
static char *flag_rec(const coll_shm_t *seg, int rank, uint64_t q)
{
    return seg->flags + ((size_t)rank * 2 + (size_t)(q & 1)) * SHM_FLAG_REC;
}

/* Starts the next flag operation: its number in *q, and my record's data
 * area, to fill before flag_publish. */
static char *flag_open(coll_shm_t *seg, uint64_t *q)
{
    *q = ++seg->fseq;
    return flag_rec(seg, seg->rank, *q) + SHM_FLAG_OFF;
}

/* A record (flag or rooted): its sequence word, then its data from
 * SHM_FLAG_OFF. Publishing stores operation q's number with release
 * order, after the data. */
static void rec_publish(char *rec, uint64_t q)
{
    atomic_store_explicit((_Atomic uint64_t *)(void *)rec, q, memory_order_release);
}

/* The record's data once operation q is published in it; NULL if the
 * job died. */
static const char *rec_wait(const coll_shm_t *seg, char *rec, uint64_t q, int rank)
{
    _Atomic uint64_t *w = (_Atomic uint64_t *)(void *)rec;
    unsigned spins = 0;
    while (atomic_load_explicit(w, memory_order_acquire) != q)
        if (shm_wait_turn(seg, ++spins, rank) < 0)
            return NULL;
    wait_end(seg, spins);
    return rec + SHM_FLAG_OFF;
}

static void flag_publish(coll_shm_t *seg, uint64_t q)
{
    rec_publish(flag_rec(seg, seg->rank, q), q);
}

static const char *flag_wait(coll_shm_t *seg, int rank, uint64_t q)
{
    return rec_wait(seg, flag_rec(seg, rank, q), q, rank);
}

/*
 * Rooted operations (bcast, scatter, and gather and reduce to a root):
 * only the root's record matters to the others, or only theirs to the
 * root, so nobody waits for a barrier. Each writer fills its own record
 * (rdepth of them per rank, used in turn) and publishes the
 * operation's number in it; every rank notes in its done line when it
 * has finished an operation. A record is rewritten rdepth
 * operations later, once every rank's done line has reached the one in
 * between, i.e. every reader is through with it; a rank so far ahead
 * waits there.
 */
static char *rooted_rec(const coll_shm_t *seg, int rank, uint64_t q)
{
    return seg->rooted +
           ((size_t)rank * seg->rdepth + (size_t)(q % seg->rdepth)) * seg->rrec;
}

static _Atomic uint64_t *rooted_done(const coll_shm_t *seg, int rank)
{
    return (_Atomic uint64_t *)(void *)(seg->rdone + (size_t)rank * SHM_LINE);
}

/* Waits until every rank has finished rooted operation `need`: 0, or -1
 * if the job died. The lowest done line seen is kept, so a rank in step
 * with the others looks at them once every few operations, not every
 * time. */
static int rooted_wait_done(coll_shm_t *seg, uint64_t need)
{
    int behind = -1;
    unsigned spins = 0;
    while (seg->rfree < need) {
        uint64_t low = UINT64_MAX;
        for (int i = 0; i < seg->size; i++) {
            uint64_t d = atomic_load_explicit(rooted_done(seg, i), memory_order_acquire);
            behind = d < low ? i : behind;
            low = d < low ? d : low;
        }
        seg->rfree = low;
        if (low < need && shm_wait_turn(seg, ++spins, behind) < 0)
            return -1;
    }
    wait_end(seg, spins);
    return 0;
}

/* My record's data area for rooted operation q, once every rank has
 * finished the operation that last used it; NULL if the job died. */
static char *rooted_claim(coll_shm_t *seg, uint64_t q)
{
    if (rooted_wait_done(seg, q > seg->rdepth ? q - seg->rdepth : 0) < 0)
        return NULL;
    return rooted_rec(seg, seg->rank, q) + SHM_FLAG_OFF;
}

/* The slot set this operation writes (and its chunks and pieces), once
 * nobody may still read it: where the last step had no barrier (a
 * scatter), everyone's done line must show the scatter that used the set
 * before, or if that step had a barrier, the last one. NULL if the job
 * died. */
static char *sets_claim(coll_shm_t *seg)
{
    uint64_t last = seg->set_q[(seg->gen + 1) & 1], before = seg->set_q[seg->gen & 1];
    if (last && rooted_wait_done(seg, before ? before : last) < 0)
        return NULL;
    return shm_slot(seg, 0);
}

static void rooted_publish(coll_shm_t *seg, uint64_t q)
{
    rec_publish(rooted_rec(seg, seg->rank, q), q);
}

static const char *rooted_wait(coll_shm_t *seg, int rank, uint64_t q)
{
    return rec_wait(seg, rooted_rec(seg, rank, q), q, rank);
}

static int rooted_finish(coll_shm_t *seg, uint64_t q)
{
    atomic_store_explicit(rooted_done(seg, seg->rank), q, memory_order_release);
    return LOCUS_SUCCESS;
}

int coll_shm_barrier(locus_coll_comm_t *c)
{
    coll_shm_t *seg = c->state->shm_seg;
    uint64_t q;
    flag_open(seg, &q);
    flag_publish(seg, q);
    for (int i = 0; i < seg->size; i++)
        if (i != seg->rank && !flag_wait(seg, i, q))
            return LOCUS_ERR_OTHER;
    return LOCUS_SUCCESS;
}

int coll_shm_bcast(void *buf, size_t count, locus_dtype_t *dt, int root, locus_coll_comm_t *c)
{
    coll_shm_t *seg = c->state->shm_seg;
    size_t n = count * locus_dtype_size(dt);
    int rc = LOCUS_SUCCESS;
    if (n <= seg->rcap) {
        uint64_t q = ++seg->rseq;
        if (c->rank == root) {
            char *rec = rooted_claim(seg, q);
            if (!rec)
                return LOCUS_ERR_OTHER;
            locus_dtype_pack(buf, count, dt, 0, rec, n);
            rooted_publish(seg, q);
            return rooted_finish(seg, q);
        }
        const char *rec = rooted_wait(seg, root, q);
        if (!rec)
            return LOCUS_ERR_OTHER;
        locus_dtype_unpack(buf, count, dt, 0, rec, n);
        return rooted_finish(seg, q);
    }
    /* Pipelined: pack and unpack by stream offset, chunk by chunk. */
    if (!sets_claim(seg))
        return LOCUS_ERR_OTHER;
    for (size_t off = 0; off < n && rc == LOCUS_SUCCESS; off += SHM_CHUNK) {
        char *chunk = seg->chunks + (size_t)(seg->gen & 1) * SHM_CHUNK;
        size_t len = n - off < SHM_CHUNK ? n - off : SHM_CHUNK;
        if (c->rank == root)
            locus_dtype_pack(buf, count, dt, off, chunk, len);
        rc = shm_barrier(seg);
        if (rc == LOCUS_SUCCESS && c->rank != root)
            locus_dtype_unpack(buf, count, dt, off, chunk, len);
    }
    return rc;
}

/*
 * Larger allreduce, chunk by chunk: everyone drops its piece in its slot;
 * each rank reduces its 1/size share of the chunk over all slots into the
 * output piece; everyone copies the output out. Two barriers per chunk,
 * and the reduction work is spread over all ranks.
 */
static int shm_allreduce_large(coll_shm_t *seg, const char *src, char *dst, size_t n, int op,
                               locus_elem_t el, int root)
{
    size_t es = locus_elem_size(el), per = SHM_RCHUNK / es * es, p = (size_t)seg->size;
    if (!sets_claim(seg))
        return LOCUS_ERR_OTHER;
    for (size_t off = 0; off < n; off += per) {
        size_t len = n - off < per ? n - off : per, nel = len / es;
        char *in = seg->red + (size_t)(seg->gen & 1) * (p + 1) * SHM_RCHUNK;
        locus_copy(in + (size_t)seg->rank * SHM_RCHUNK, src + off, len);
        if (shm_barrier(seg) != LOCUS_SUCCESS)
            return LOCUS_ERR_OTHER;
        char *out = seg->red + (size_t)(seg->gen & 1) * (p + 1) * SHM_RCHUNK + p * SHM_RCHUNK;
        size_t lo = nel * (size_t)seg->rank / p, hi = nel * ((size_t)seg->rank + 1) / p;
        if (hi > lo) {
            locus_copy(out + lo * es, in + lo * es, (hi - lo) * es);
            for (size_t i = 1; i < p; i++)
                locus_op_apply(op, el, in + i * SHM_RCHUNK + lo * es, out + lo * es, hi - lo);
        }
        if (shm_barrier(seg) != LOCUS_SUCCESS)
            return LOCUS_ERR_OTHER;
        if (root < 0 || root == seg->rank)
            locus_copy(dst + off, out, len);
    }
    return LOCUS_SUCCESS;
}

/*
 * Reduce, allreduce or reduce_scatter on an oversubscribed node (larger
 * slots), a slot's worth at a time: everyone copies its piece into its
 * slot; rank i combines share i of all slots, in rank order, into slot 0;
 * everyone copies out of slot 0 what it keeps of the result, bytes
 * [keep_lo, keep_hi) of the n, to dst (an allreduce all, a reduce's root
 * all and the others nothing, a reduce_scatter its block). Two barriers a
 * slot, where the pieces of shm_allreduce_large take two per 32 KiB. The
 * next piece takes the other set of slots: slower ranks may still be
 * copying out of this one. dst may be src (in place): a result byte is
 * written in the piece of its input byte or a later one, after that
 * piece's copy in.
 */
static int shm_allreduce_slots(coll_shm_t *seg, const char *src, char *dst, size_t n, int op,
                               locus_elem_t el, size_t keep_lo, size_t keep_hi)
{
    size_t es = locus_elem_size(el), per = seg->slot / es * es, p = (size_t)seg->size;
    for (size_t off = 0; off < n; off += per) {
        size_t len = n - off < per ? n - off : per, nel = len / es;
        char *set = sets_claim(seg);
        if (!set)
            return LOCUS_ERR_OTHER;
        locus_copy(set + (size_t)seg->rank * seg->slot, src + off, len);
        if (shm_barrier(seg) != LOCUS_SUCCESS)
            return LOCUS_ERR_OTHER;
        size_t first = nel * (size_t)seg->rank / p, last = nel * ((size_t)seg->rank + 1) / p;
        for (size_t i = 1; i < p && last > first; i++)
            locus_op_apply(op, el, set + i * seg->slot + first * es, set + first * es,
                           last - first);
        if (shm_barrier(seg) != LOCUS_SUCCESS)
            return LOCUS_ERR_OTHER;
        size_t lo = off > keep_lo ? off : keep_lo, hi = off + len < keep_hi ? off + len : keep_hi;
        if (lo < hi)
            locus_copy(dst + (lo - keep_lo), set + (lo - off), hi - lo);
        gen_next(seg, 0);
    }
    return LOCUS_SUCCESS;
}

/* Reduce to root through rooted records: the others publish their data
 * and go on; root combines, starting from its own (predefined ops
 * commute, and src may be dst when in place). */
static int shm_reduce_rooted(coll_shm_t *seg, const char *src, char *dst, size_t n, int op,
                             locus_elem_t el, int root)
{
    uint64_t q = ++seg->rseq;
    if (seg->rank != root) {
        char *rec = rooted_claim(seg, q);
        if (!rec)
            return LOCUS_ERR_OTHER;
        locus_copy(rec, src, n);
        rooted_publish(seg, q);
        return rooted_finish(seg, q);
    }
    if (src != dst)
        locus_copy(dst, src, n);
    for (int i = 0; i < seg->size; i++) {
        const char *x = i == root ? NULL : rooted_wait(seg, i, q);
        if (i != root && !x)
            return LOCUS_ERR_OTHER;
        if (x)
            locus_op_apply(op, el, x, dst, n / locus_elem_size(el));
    }
    return rooted_finish(seg, q);
}

int coll_shm_reduce_scatter(const void *sbuf, void *rbuf, size_t total, size_t at, size_t count,
                            locus_dtype_t *dt, locus_op_t *op, locus_coll_comm_t *c)
{
    /* Everyone publishes its whole vector (a rooted record, or past one
     * my slot: on an oversubscribed node, whose slots are larger); each
     * rank with a block combines just that block from the others'. With
     * records, ranks without a block go on at once. The slots cost a
     * barrier, still far less than a ring's p-1 hand-offs there (4 ranks
     * on 2 cores, IMB Reduce_scatter of 32 / 64 KiB: 8.7-8.8 / 13.8-15.4
     * us against 37-53 / 44-53 by the ring, Open MPI 30-41 / 41-53). */
    coll_shm_t *seg = c->state->shm_seg;
    locus_elem_t el = locus_dtype_elem(dt);
    size_t n = total * locus_dtype_size(dt), per = locus_dtype_size(dt) / locus_elem_size(el);
    ptrdiff_t tlb, text;
    locus_dtype_true_extent(dt, &tlb, &text);
    const char *src = (const char *)(sbuf == LOCUS_COLL_IN_PLACE ? rbuf : sbuf) + tlb;
    size_t off = at * locus_dtype_size(dt), len = count * locus_dtype_size(dt);
    /* Past a slot (grown ones), a slot's worth at a time, each rank
     * keeping its block (4 ranks on 2 cores, 2 MiB: 656-814 us as an
     * allreduce then a copy, 1237-1248 by the ring, Open MPI 751-794). */
    if (n > seg->slot)
        return shm_allreduce_slots(seg, src, (char *)rbuf + tlb, n, op->id, el, off, off + len);
    int me = seg->rank, rooted = n <= seg->rcap;
    uint64_t q = 0;
    char *set = rooted ? NULL : sets_claim(seg);   /* before the barrier moves on */
    char *mine = rooted ? rooted_claim(seg, q = ++seg->rseq)
                 : set  ? set + (size_t)me * seg->slot
                        : NULL;
    if (!mine)
        return LOCUS_ERR_OTHER;
    locus_copy(mine, src, n);
    if (rooted)
        rooted_publish(seg, q);
    else if (shm_barrier(seg) != LOCUS_SUCCESS)
        return LOCUS_ERR_OTHER;
    if (len) {
        char *dst = (char *)rbuf + tlb;
        locus_copy(dst, mine + off, len);   /* from my copy: in place, src overlaps dst */
        for (int i = 0; i < seg->size; i++) {
            const char *x = i == me ? NULL : rooted ? rooted_wait(seg, i, q)
                                                    : set + (size_t)i * seg->slot;
            if (i != me && !x)
                return LOCUS_ERR_OTHER;
            if (x)
                locus_op_apply(op->id, el, x + off, dst, count * per);
        }
    }
    return rooted ? rooted_finish(seg, q) : LOCUS_SUCCESS;
}

int coll_shm_reduces(locus_dtype_t *dt, const locus_op_t *op)
{
    /* Predefined ops on data that is already a C array of its kind. */
    locus_elem_t el = locus_dtype_elem(dt);
    locus_dtype_t *kind = locus_dtype_basic(el);
    if (op->id == LOCUS_OP_USER || !kind)
        return 0;
    return dt == kind ? locus_dtype_is_contig(kind)
                      : locus_dtype_is_contig(dt) && locus_dtype_is_contig(kind);
}

int coll_shm_reduce(const void *sbuf, void *rbuf, size_t count, locus_dtype_t *dt,
                    locus_op_t *op, int root, locus_coll_comm_t *c)
{
    coll_shm_t *seg = c->state->shm_seg;
    locus_elem_t el = locus_dtype_elem(dt);
    size_t n = count * locus_dtype_size(dt);
    ptrdiff_t tlb, text;
    locus_dtype_true_extent(dt, &tlb, &text);
    const char *src = sbuf == LOCUS_COLL_IN_PLACE ? (const char *)rbuf + tlb
                                                  : (const char *)sbuf + tlb;
    char *dst = (char *)rbuf + tlb;
    if (root >= 0 && n <= seg->rcap)
        return shm_reduce_rooted(seg, src, dst, n, op->id, el, root);
    /* Past a few cache lines per rank, reading every slot on every rank
     * costs more than a second barrier: split the work (measured on 8
     * ranks of a 16-core Xeon: 4 KiB took 13.8 us combined everywhere,
     * 8 KiB 9.1 us split). */
    if (n > SHM_RED_ALL && seg->grown)
        return shm_allreduce_slots(seg, src, dst, n, op->id, el, 0,
                                   root < 0 || root == seg->rank ? n : 0);
    if (n > SHM_RED_ALL || n > seg->slot)
        return shm_allreduce_large(seg, src, dst, n, op->id, el, root);
    size_t nel = n / locus_elem_size(el);
    if (root < 0 && n <= SHM_FLAG_DATA) {
        uint64_t q;
        locus_copy(flag_open(seg, &q), src, n);
        flag_publish(seg, q);
        for (int i = 0; i < seg->size; i++) {
            const char *x = flag_wait(seg, i, q);
            if (!x)
                return LOCUS_ERR_OTHER;
            if (i == 0)
                locus_copy(dst, x, n);
            else
                locus_op_apply(op->id, el, x, dst, nel);
        }
        return LOCUS_SUCCESS;
    }
    char *set = sets_claim(seg);
    if (!set)
        return LOCUS_ERR_OTHER;
    locus_copy(set + (size_t)seg->rank * seg->slot, src, n);
    if (shm_barrier(seg) != LOCUS_SUCCESS)
        return LOCUS_ERR_OTHER;
    if (root >= 0 && root != seg->rank)
        return LOCUS_SUCCESS;
    /* Every rank combines the slots in the same order, so all get the same
     * bits even for floating point. */
    locus_copy(dst, set, n);
    for (int i = 1; i < seg->size; i++)
        locus_op_apply(op->id, el, set + (size_t)i * seg->slot, dst, nel);
    return LOCUS_SUCCESS;
}

/* Block i of a typed buffer with count elements per block. */
static char *block_at(const void *buf, size_t count, locus_dtype_t *dt, int i)
{
    return coll_at(buf, dt, (ptrdiff_t)i * (ptrdiff_t)count);
}

int coll_shm_gather(const void *sbuf, size_t scount, locus_dtype_t *sdt, void *rbuf,
                    size_t rcount, locus_dtype_t *rdt, int root, locus_coll_comm_t *c)
{
    coll_shm_t *seg = c->state->shm_seg;
    int me = seg->rank, in_place = sbuf == LOCUS_COLL_IN_PLACE;
    size_t rn = rcount * locus_dtype_size(rdt);
    /* My block, packed where the others read it: a rooted record (gather),
     * a flag record (small allgather) or my slot. A gather's block size
     * comes from the root's receive side there and from the send side
     * elsewhere (the others' receive arguments are not significant), so
     * all decide alike. */
    size_t nb = root >= 0 && me != root ? scount * locus_dtype_size(sdt) : rn;
    int rooted = root >= 0 && nb <= seg->rcap, flags = root < 0 && rn <= SHM_FLAG_DATA;
    char *set = rooted || flags ? NULL : sets_claim(seg);   /* before the barrier moves on */
    if (!rooted && !flags && !set)
        return LOCUS_ERR_OTHER;
    /* A gather's root never packs its own block: nobody reads it, so it
     * goes straight from sbuf to rbuf (2 ranks, 4 KiB: 0.44-0.46 us
     * against 0.52-0.68). */
    int direct = root == me;
    uint64_t q = rooted ? ++seg->rseq : 0;
    char *mine = direct  ? NULL
                 : rooted ? rooted_claim(seg, q)
                 : flags  ? flag_open(seg, &q)
                          : set + (size_t)me * seg->slot;
    if (!direct && !mine)
        return LOCUS_ERR_OTHER;
    if (!direct && in_place)
        locus_dtype_pack(block_at(rbuf, rcount, rdt, me), rcount, rdt, 0, mine, rn);
    else if (!direct)
        locus_dtype_pack(sbuf, scount, sdt, 0, mine, scount * locus_dtype_size(sdt));
    if (rooted && !direct)
        rooted_publish(seg, q);
    else if (flags)
        flag_publish(seg, q);
    else if (!rooted && shm_barrier(seg) != LOCUS_SUCCESS)
        return LOCUS_ERR_OTHER;
    if (root >= 0 && root != me)
        return rooted ? rooted_finish(seg, q) : LOCUS_SUCCESS;
    /* The root's own copy while the others' records fill (through the
     * slots, after the barrier: nobody waits on it there). */
    int rc = LOCUS_SUCCESS;
    if (direct && !in_place)
        rc = locus_coll_local_copy(sbuf, scount, sdt, block_at(rbuf, rcount, rdt, me), rcount,
                                   rdt);
    for (int i = 0; i < seg->size && rc == LOCUS_SUCCESS; i++) {
        if (i == me && (in_place || direct))
            continue;
        const char *x = rooted ? rooted_wait(seg, i, q)
                        : flags ? flag_wait(seg, i, q)
                                : set + (size_t)i * seg->slot;
        if (!x)
            return LOCUS_ERR_OTHER;
        locus_dtype_unpack(block_at(rbuf, rcount, rdt, i), rcount, rdt, 0, x, rn);
    }
    if (rooted)
        rooted_finish(seg, q);
    return rc;
}

int coll_shm_alltoall(const void *sbuf, size_t scount, locus_dtype_t *sdt, void *rbuf,
                      size_t rcount, locus_dtype_t *rdt, locus_coll_comm_t *c)
{
    coll_shm_t *seg = c->state->shm_seg;
    int me = seg->rank, p = seg->size, in_place = sbuf == LOCUS_COLL_IN_PLACE;
    size_t nb = rcount * locus_dtype_size(rdt), all = nb * (size_t)p;
    /* My p blocks, packed in destination order: from rbuf when in place. */
    const void *from = in_place ? rbuf : sbuf;
    size_t fcount = in_place ? rcount : scount;
    locus_dtype_t *fdt = in_place ? rdt : sdt;
    uint64_t q = 0;
    int flags = all <= SHM_FLAG_DATA;
    char *set = flags ? NULL : sets_claim(seg);
    char *mine = flags ? flag_open(seg, &q) : set ? set + (size_t)me * seg->slot : NULL;
    if (!mine)
        return LOCUS_ERR_OTHER;
    for (int i = 0; i < p; i++)
        locus_dtype_pack(block_at(from, fcount, fdt, i), fcount, fdt, 0, mine + i * nb, nb);
    if (flags)
        flag_publish(seg, q);
    else if (shm_barrier(seg) != LOCUS_SUCCESS)
        return LOCUS_ERR_OTHER;
    for (int i = 0; i < p; i++) {
        const char *x = flags ? flag_wait(seg, i, q) : set + (size_t)i * seg->slot;
        if (!x)
            return LOCUS_ERR_OTHER;
        locus_dtype_unpack(block_at(rbuf, rcount, rdt, i), rcount, rdt, 0, x + (size_t)me * nb,
                           nb);
    }
    return LOCUS_SUCCESS;
}

/* Where rank i's block sits in a scatter's rooted record: the root's own
 * is not there, so the others' close up behind the sequence word (2
 * ranks, 64 B: the block shares its cache line, one line less to move). */
static size_t scatter_at(int i, int root)
{
    return (size_t)(i - (i > root));
}

int coll_shm_scatter(const void *sbuf, size_t scount, locus_dtype_t *sdt, void *rbuf,
                     size_t rcount, locus_dtype_t *rdt, int root, locus_coll_comm_t *c)
{
    coll_shm_t *seg = c->state->shm_seg;
    int me = seg->rank, p = seg->size, in_place = rbuf == LOCUS_COLL_IN_PLACE;
    size_t nb = rcount * locus_dtype_size(rdt);
    /* The others' blocks in the root's rooted record when they fit one
     * slot together (root's nb, from its send side, is the same bytes),
     * else in their slots. Either way the others wait for the root's
     * record alone, no barrier: through the slots the set's next writer
     * waits for their done lines instead (sets_claim). */
    if (me == root)
        nb = scount * locus_dtype_size(sdt);
    int rooted = nb * (size_t)(p - 1) <= seg->rcap;
    uint64_t q = ++seg->rseq;
    char *set = NULL;
    if (!rooted) {
        set = me == root ? sets_claim(seg) : shm_slot(seg, 0);
        if (!set)
            return LOCUS_ERR_OTHER;
        gen_next(seg, q);
    }
    if (me == root) {
        char *rec = rooted_claim(seg, q);
        if (!rec)
            return LOCUS_ERR_OTHER;
        for (int i = 0; i < p; i++)
            if (i != me)
                locus_dtype_pack(block_at(sbuf, scount, sdt, i), scount, sdt, 0,
                                 rooted ? rec + scatter_at(i, root) * nb
                                        : set + (size_t)i * seg->slot,
                                 nb);
        rooted_publish(seg, q);
        /* My own block straight to rbuf once the others may copy out (4
         * ranks on 2 cores, 64 KiB through the slots: a quarter of the
         * root's copying before they may start). */
        int rc = in_place ? LOCUS_SUCCESS
                          : locus_coll_local_copy(block_at(sbuf, scount, sdt, me), scount, sdt,
                                                  rbuf, rcount, rdt);
        rooted_finish(seg, q);
        return rc;
    }
    const char *rec = rooted_wait(seg, root, q);
    if (!rec)
        return LOCUS_ERR_OTHER;
    locus_dtype_unpack(rbuf, rcount, rdt, 0,
                       rooted ? rec + scatter_at(me, root) * nb : set + (size_t)me * seg->slot,
                       nb);
    return rooted_finish(seg, q);
}
