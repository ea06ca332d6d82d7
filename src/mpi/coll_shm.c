/*
 * coll_shm.c — the shared-memory fast path for small collectives on a
 * communicator whose members all share this node: one segment per
 * communicator (made on first use, unlinked at once after everyone has
 * mapped it, so nothing stays in /dev/shm), a sense-reversing barrier on
 * one counter, and bcast/allreduce through per-rank slots.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "coll_mpi.h"
#include "locus_tunables.h"

#define SHM_LINE 64
#define SHM_SLOT_CAP ((size_t)1 << 20)
/* Large broadcasts stream through two chunks of this size. */
#define SHM_CHUNK ((size_t)64 << 10)
/* Larger allreduces go through two sets of size+1 pieces of this size. */
#define SHM_RCHUNK ((size_t)32 << 10)
/* Allreduces up to this size are combined by every rank from all slots. */
#define SHM_RED_ALL ((size_t)1024)

typedef struct {
    _Alignas(SHM_LINE) atomic_uint count;   /* arrivals in the current barrier */
    _Alignas(SHM_LINE) atomic_uint sense;   /* flips when a barrier completes */
} shm_hdr_t;

/*
 * Two sets of `size` slots, used by alternate operations: an operation
 * writes its set before its barrier and reads after it, and nobody can
 * write the same set again (two operations later) before every rank has
 * passed the barrier in between, i.e. finished reading. So one barrier per
 * bcast or allreduce is enough. A large bcast streams through the two
 * chunks the same way, one barrier per chunk, the root filling the next
 * chunk while the others copy out the last one.
 */
struct coll_shm {
    shm_hdr_t *hdr;
    char *slots;          /* 2 * size slots of `slot` bytes */
    char *chunks;         /* 2 chunks of SHM_CHUNK bytes (large bcast) */
    char *red;            /* 2 sets of size+1 SHM_RCHUNK pieces (large allreduce) */
    size_t slot, len;
    int size, rank;
    unsigned sense;       /* my sense for the next barrier */
    unsigned gen;         /* operations so far: picks the slot set */
    int yield;            /* ranks outnumber CPUs: yield while waiting */
};

static char *shm_slot(coll_shm_t *seg, int rank)
{
    return seg->slots + ((size_t)(seg->gen & 1) * (size_t)seg->size + (size_t)rank) * seg->slot;
}

void coll_shm_free(coll_shm_t *seg)
{
    if (!seg)
        return;
    munmap(seg->hdr, seg->len);
    free(seg);
}

/*
 * Spinning is fastest while every rank has a CPU of its own; when ranks
 * outnumber the CPUs they may run on (the union of their affinity masks,
 * so ranks bound one per core do not count as sharing), waiters must give
 * theirs to the late ones. LOCUS_YIELD (always, never) overrides.
 * Collective over comm.
 */
static int shm_oversubscribed(MPI_Comm comm)
{
    const char *y = locus_tunable_str("LOCUS_YIELD");
    if (!strcmp(y, "always"))
        return 1;
    if (!strcmp(y, "never"))
        return 0;
    cpu_set_t mine, all;
    CPU_ZERO(&mine);
    if (sched_getaffinity(0, sizeof(mine), &mine) != 0)
        return 1;
    if (coll_allreduce(&mine, &all, (int)sizeof(mine), MPI_BYTE, MPI_BOR, comm) != MPI_SUCCESS)
        return 1;
    return comm->size > CPU_COUNT(&all);
}

/* The segment's name, under the job's prefix so that locusrun's sweep of
 * /dev/shm/locus.<LOCUS_JOBID>.* removes it should the job die in the
 * moment between creation and unlink: /locus.<job>.coll.<ctx>.<pid>
 * (the creator's pid last, as in the shm transport's names).
 * LOCUS_JOBID is set by locusrun, else by the library at init (the PMI
 * kvs name, or single<pid>). pid + context id is unique on the node while
 * the comm lives, and the name is unlinked before the comm can be freed. */
static void shm_name(char *buf, size_t len, MPI_Comm comm)
{
    char job[256];
    const char *j = locus_tunable_str("LOCUS_JOBID");
    size_t i = 0;
    for (; j && j[i] && i < sizeof(job) - 1; i++) {
        char c = j[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        job[i] = ok ? c : '_';  /* a '/' would make shm_open fail */
    }
    job[i] = '\0';
    if (i == 0)
        snprintf(job, sizeof(job), "single%ld", (long)getpid());
    snprintf(buf, len, "/locus.%s.coll.%u.%ld", job, comm->ctx_coll, (long)getpid());
}

/* Makes the segment: rank 0 creates and names it, the rest map it; all
 * agree (through messages, the fast path being off meanwhile) whether it
 * worked. Collective over comm. */
static coll_shm_t *shm_setup(MPI_Comm comm, coll_state_t *st)
{
    char name[320] = "";
    int fd = -1, ok = 1;
    /* Slots are capped so a large LOCUS_COLL_SHM_MAX cannot ask tmpfs for
     * gigabytes; bigger payloads simply take the message path. */
    size_t want = (size_t)st->shm_max < SHM_SLOT_CAP ? (size_t)st->shm_max : SHM_SLOT_CAP;
    size_t slot = (want + SHM_LINE - 1) / SHM_LINE * SHM_LINE;
    if (slot == 0)
        slot = SHM_LINE;
    size_t len = sizeof(shm_hdr_t) + 2 * (size_t)comm->size * slot + 2 * SHM_CHUNK +
                 2 * ((size_t)comm->size + 1) * SHM_RCHUNK;
    if (comm->rank == 0) {
        shm_name(name, sizeof(name), comm);
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        /* Allocate the pages now: a full /dev/shm fails here, cleanly,
         * instead of with SIGBUS at the first store. */
        if (fd < 0 || ftruncate(fd, (off_t)len) != 0 || posix_fallocate(fd, 0, (off_t)len) != 0) {
            if (fd >= 0) {
                close(fd);
                shm_unlink(name);
                fd = -1;
            }
            name[0] = '\0';
        }
    }
    if (coll_bcast(name, sizeof(name), MPI_CHAR, 0, comm) != MPI_SUCCESS)
        name[0] = '\0';
    if (comm->rank != 0 && name[0])
        fd = shm_open(name, O_RDWR, 0600);
    void *base = MAP_FAILED;
    if (fd >= 0) {
        base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
    }
    ok = base != MAP_FAILED;
    int all = ok;
    if (coll_allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        all = 0;
    int yield = shm_oversubscribed(comm);
    if (comm->rank == 0 && name[0])
        shm_unlink(name);   /* everyone has it mapped (or gave up) by now */
    coll_shm_t *seg = all ? calloc(1, sizeof(*seg)) : NULL;
    if (!seg) {
        if (base != MAP_FAILED)
            munmap(base, len);
        return NULL;
    }
    seg->hdr = base;
    seg->slots = (char *)base + sizeof(shm_hdr_t);
    seg->chunks = seg->slots + 2 * (size_t)comm->size * slot;
    seg->red = seg->chunks + 2 * SHM_CHUNK;
    seg->slot = slot;
    seg->len = len;
    seg->size = comm->size;
    seg->rank = comm->rank;
    seg->sense = 1;
    seg->yield = yield;
    return seg;
}

static coll_shm_t *shm_get(MPI_Comm comm, coll_state_t *st)
{
    if (st->shm_state == 0) {
        st->shm_state = 2;   /* setup runs flat collectives on comm */
        st->shm_seg = shm_setup(comm, st);
        st->shm_state = st->shm_seg ? 1 : -1;
    }
    return st->shm_state == 1 ? st->shm_seg : NULL;
}

/* Centralized sense-reversing barrier. Ends an operation: the next one
 * uses the other slot set. */
static void shm_barrier(coll_shm_t *seg)
{
    unsigned my = seg->sense;
    seg->sense ^= 1u;
    seg->gen++;
    if (atomic_fetch_add_explicit(&seg->hdr->count, 1, memory_order_acq_rel) ==
        (unsigned)seg->size - 1) {
        atomic_store_explicit(&seg->hdr->count, 0, memory_order_relaxed);
        atomic_store_explicit(&seg->hdr->sense, my, memory_order_release);
        return;
    }
    for (unsigned spins = 1;
         atomic_load_explicit(&seg->hdr->sense, memory_order_acquire) != my; spins++) {
        /* Keep other traffic (sends waiting on this rank) moving. */
        if (spins % 64 == 0)
            locus_mpi_progress();
        if (seg->yield && spins % 4 == 0)
            sched_yield();
    }
}

int coll_shm_barrier(MPI_Comm comm, coll_state_t *st)
{
    coll_shm_t *seg = shm_get(comm, st);
    if (!seg)
        return -1;
    shm_barrier(seg);
    return MPI_SUCCESS;
}

int coll_shm_bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                   coll_state_t *st)
{
    size_t n = (size_t)count * locus_dtype_size(dt);
    if (n > (size_t)st->shm_max && n > (size_t)st->shm_bcast_max)
        return -1;
    coll_shm_t *seg = shm_get(comm, st);
    if (!seg)
        return -1;
    if (n <= seg->slot) {
        char *slot = shm_slot(seg, 0);
        if (comm->rank == root)
            locus_dtype_pack(buf, (size_t)count, dt, 0, slot, n);
        shm_barrier(seg);
        if (comm->rank != root)
            locus_dtype_unpack(buf, (size_t)count, dt, 0, slot, n);
        return MPI_SUCCESS;
    }
    /* Pipelined: pack and unpack by stream offset, chunk by chunk. */
    for (size_t off = 0; off < n; off += SHM_CHUNK) {
        char *chunk = seg->chunks + (size_t)(seg->gen & 1) * SHM_CHUNK;
        size_t len = n - off < SHM_CHUNK ? n - off : SHM_CHUNK;
        if (comm->rank == root)
            locus_dtype_pack(buf, (size_t)count, dt, off, chunk, len);
        shm_barrier(seg);
        if (comm->rank != root)
            locus_dtype_unpack(buf, (size_t)count, dt, off, chunk, len);
    }
    return MPI_SUCCESS;
}

/*
 * Larger allreduce, chunk by chunk: everyone drops its piece in its slot;
 * each rank reduces its 1/size share of the chunk over all slots into the
 * output piece; everyone copies the output out. Two barriers per chunk,
 * and the reduction work is spread over all ranks.
 */
static void shm_allreduce_large(coll_shm_t *seg, const char *src, char *dst, size_t n,
                                MPI_Op op, locus_elem_t el)
{
    size_t es = locus_elem_size(el), per = SHM_RCHUNK / es * es, p = (size_t)seg->size;
    for (size_t off = 0; off < n; off += per) {
        size_t len = n - off < per ? n - off : per, nel = len / es;
        char *in = seg->red + (size_t)(seg->gen & 1) * (p + 1) * SHM_RCHUNK;
        memcpy(in + (size_t)seg->rank * SHM_RCHUNK, src + off, len);
        shm_barrier(seg);
        char *out = seg->red + (size_t)(seg->gen & 1) * (p + 1) * SHM_RCHUNK + p * SHM_RCHUNK;
        size_t lo = nel * (size_t)seg->rank / p, hi = nel * ((size_t)seg->rank + 1) / p;
        if (hi > lo) {
            memcpy(out + lo * es, in + lo * es, (hi - lo) * es);
            for (size_t i = 1; i < p; i++)
                locus_op_apply(op, el, in + i * SHM_RCHUNK + lo * es, out + lo * es, hi - lo);
        }
        shm_barrier(seg);
        memcpy(dst + off, out, len);
    }
}

int coll_shm_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                       MPI_Comm comm, coll_state_t *st)
{
    /* Predefined ops on data that is already a C array of its kind. */
    locus_elem_t el = locus_dtype_elem(dt);
    locus_dtype_t *kind = locus_dtype_basic(el);
    size_t n = (size_t)count * locus_dtype_size(dt);
    if (op >= LOCUS_OP_USER_FIRST || !kind ||
        (n > (size_t)st->shm_max && n > (size_t)st->shm_allreduce_max) ||
        !(dt == kind ? locus_dtype_is_contig(kind)
                     : locus_dtype_is_contig(dt) && locus_dtype_is_contig(kind)))
        return -1;
    coll_shm_t *seg = shm_get(comm, st);
    if (!seg)
        return -1;
    ptrdiff_t tlb, text;
    locus_dtype_true_extent(dt, &tlb, &text);
    const char *src = sbuf == MPI_IN_PLACE ? (const char *)rbuf + tlb : (const char *)sbuf + tlb;
    char *dst = (char *)rbuf + tlb;
    /* Past a few cache lines per rank, reading every slot on every rank
     * costs more than a second barrier: split the work (measured on 8
     * ranks of a 16-core Xeon: 4 KiB took 13.8 us combined everywhere,
     * 8 KiB 9.1 us split). */
    if (n > SHM_RED_ALL || n > seg->slot) {
        shm_allreduce_large(seg, src, dst, n, op, el);
        return MPI_SUCCESS;
    }
    size_t nel = n / locus_elem_size(el);
    char *set = shm_slot(seg, 0);
    memcpy(set + (size_t)seg->rank * seg->slot, src, n);
    shm_barrier(seg);
    /* Every rank combines the slots in the same order, so all get the same
     * bits even for floating point. */
    memcpy(dst, set, n);
    for (int i = 1; i < seg->size; i++)
        locus_op_apply(op, el, set + (size_t)i * seg->slot, dst, nel);
    return MPI_SUCCESS;
}
