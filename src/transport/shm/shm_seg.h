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
 * every local process has mapped it (see shm_create.c), so nothing stays in
 * /dev/shm after a crash. The owner keeps the file open with a lock on its
 * byte 0 while it lives (shm_alive.h).
 */
#ifndef SHM_SEG_H
#define SHM_SEG_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "shm_alive.h"
#include "shm_file.h"

#define SHM_SEG_MAGIC 0x324d48535355434cULL /* "LCUSSHM2" */
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
    shm_alive_id_t owner;   /* pid and identity, for CMA and the liveness watch */
    uint64_t userns;        /* inode of /proc/self/ns/user: CMA only within one */
    uint64_t cookie;        /* random; CMA probe reads it from cookie_addr */
    uint64_t cookie_addr;
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

/* Segment name for this process: /locus.<jobid>.<localrank>.<pid>[.<k>]
 * (shm_file_name with the local rank). */
static inline void shm_seg_name(char *buf, size_t len, int local_rank, int attempt)
{
    char what[16];
    snprintf(what, sizeof what, "%d", local_rank);
    shm_file_name(buf, len, what, attempt);
}

#endif
