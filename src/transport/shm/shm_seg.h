/*
 * shm_seg.h — one shared-memory segment per process: its layout and life.
 *
 * Each local process creates one segment, /dev/shm/locus.<jobid>.<localrank>.<pid>
 * (mode 0600), and initialises all of it itself, so the pages land on its
 * NUMA node (first touch). It holds what that process polls or writes most:
 *
 *   [header, 4 KiB] [P-1 receive rings, one per local sender]
 *   [pool: chunk state lines] [pool: chunk data]
 *
 * Receive rings are polled by the owner; the pool is written by the owner
 * (its large sends) and its chunk states are polled by the owner, which
 * gets them back from the receivers. The segment is unlinked as soon as
 * every local process has mapped it (see shm_tp.c), so nothing stays in
 * /dev/shm after a crash.
 */
#ifndef SHM_SEG_H
#define SHM_SEG_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SHM_SEG_MAGIC 0x314d48535355434cULL /* "LCUSSHM1" */
#define SHM_SEG_HDR 4096u
#define SHM_CHUNK_FREE 0u
#define SHM_CHUNK_BUSY 1u

/* The header at the start of every segment, written once by its owner
 * before the first fence and read-only afterwards (but `finalized`). */
typedef struct {
    uint64_t magic;
    uint32_t local_rank, local_size;
    uint32_t ring_cells;    /* cells of each receive ring */
    uint32_t pool_chunks;
    uint64_t chunk_size;
    uint64_t rings_off, states_off, pool_off, total;
    int64_t pid;
    uint64_t userns;        /* inode of /proc/self/ns/user: CMA only within one */
    uint64_t pidns;         /* inode of /proc/self/ns/pid: pids comparable only within one */
    uint64_t cookie;        /* random; CMA probe reads it from cookie_addr */
    uint64_t cookie_addr;
    cpu_set_t cpus;         /* owner's affinity, to detect oversubscription */
    _Atomic uint32_t finalized; /* set by the owner in finalize(): its exit is no crash */
} shm_seg_hdr_t;

_Static_assert(sizeof(shm_seg_hdr_t) <= SHM_SEG_HDR, "segment header too large");

/* Fills the size fields of `h` for the given geometry (the rest is left). */
void shm_seg_layout(shm_seg_hdr_t *h, uint32_t local_size, uint32_t ring_cells,
                    uint32_t pool_chunks, uint64_t chunk_size);

/* Index of the ring that sender `from` (a local rank) uses in the segment of
 * local rank `owner` (from != owner). */
static inline uint32_t shm_seg_ring_slot(uint32_t owner, uint32_t from)
{
    return from < owner ? from : from - 1;
}

/*
 * Creates the segment `name` ("/locus...."), `size` bytes, mode 0600, and
 * maps it. posix_fallocate() reserves the pages now, so a full /dev/shm is
 * an error here rather than a SIGBUS later. Returns 0, or -1 (-EEXIST when
 * the name is taken) with a reason.
 */
int shm_seg_create(const char *name, size_t size, void **base, char *err, size_t errlen);

/* Maps the existing segment `name`; sets *base and *size. 0, or -1 with a reason. */
int shm_seg_attach(const char *name, void **base, size_t *size, char *err, size_t errlen);

/* Segment name for this process: /locus.<jobid>.<localrank>.<pid>[.<k>].
 * jobid is LOCUS_JOBID (set by locusrun, which removes /dev/shm/locus.<jobid>.*
 * after the job; characters outside [A-Za-z0-9._-] become '_'), or
 * "pid<pid>" when it is not set. The pid (and k, when a name is taken) keep
 * names unique even for two transports in one process. */
void shm_seg_name(char *buf, size_t len, int local_rank, int attempt);

#endif
