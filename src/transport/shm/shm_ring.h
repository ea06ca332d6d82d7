/*
 * shm_ring.h — the per-pair single-producer/single-consumer receive ring.
 *
 * A ring is an array of 64-byte cells (a power of two of them) preceded by
 * one consumer-written control line. A message takes consecutive cells: the
 * first starts with a 16-byte shm_cell_t head, the rest of the message
 * (transport header, core header, payload) follows contiguously, so a reader
 * can hand out one pointer. A message never wraps: when it does not fit
 * before the end, the producer writes a SKIP cell that covers the tail.
 *
 * Synchronisation (C11 acquire/release, no locks, no syscalls):
 *  - the producer fills the cells, then stores the first cell's `seq` with
 *    release. `seq` is the message's absolute cell position, so the consumer
 *    polls only the cell it expects next (one line, usually in its cache)
 *    and never a shared index;
 *  - the consumer publishes how far it has read (`head`, release) on its own
 *    line; the producer reads it (acquire) only when its cached copy says the
 *    ring is full, so the line does not bounce on every message.
 *  - Every cell's seq word holds a position of the current or the previous
 *    lap, never a future one: the ring is initialised that way, and the
 *    consumer re-stamps the cells after the first of each message or skip it
 *    releases (their seq word held payload bytes, or nothing for a lap,
 *    which could otherwise look like a future position).
 *
 * Memory: shm_ring_bytes(n) = 128 + 64 n. The consumer calls shm_ring_init()
 * on memory it owns, so the pages land on its NUMA node (first touch).
 */
#ifndef SHM_RING_H
#define SHM_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define SHM_CELL_SIZE 64u
#define SHM_CELL_HEAD 16u
#define SHM_RING_CTL 128u /* two lines: adjacent-line prefetch must not pair it with a cell */

/* Cell types; SKIP is internal to the ring. */
enum { SHM_T_SKIP = 1, SHM_T_MSG, SHM_T_RTS, SHM_T_CTS, SHM_T_CHUNK, SHM_T_FIN, SHM_T_TEST,
       SHM_T_WROTE, SHM_T_MSG_POOLED };

typedef struct shm_cell {
    _Alignas(64) _Atomic uint32_t seq; /* absolute position of this message; written last */
    uint8_t type;
    uint8_t hdrlen;    /* core header bytes (MSG, RTS) */
    uint16_t ncells;   /* cells this message takes, this one included */
    uint32_t len;      /* payload bytes (MSG), chunk bytes (CHUNK) */
    uint32_t aux;      /* request id of the side that reads the cell */
    unsigned char body[SHM_CELL_SIZE - SHM_CELL_HEAD];
} shm_cell_t;

_Static_assert(sizeof(shm_cell_t) == SHM_CELL_SIZE, "cell must be one cache line");

typedef struct {
    _Alignas(64) _Atomic uint32_t head; /* consumer: cells released so far */
} shm_ring_ctl_t;

/* Producer's private view. */
typedef struct {
    shm_cell_t *cells;
    shm_ring_ctl_t *ctl;
    uint32_t ncells, mask;
    uint32_t tail;      /* next position to write */
    uint32_t head_seen; /* last value read from ctl->head */
} shm_ring_tx_t;

/* Consumer's private view. */
typedef struct {
    shm_cell_t *cells;
    shm_ring_ctl_t *ctl;
    uint32_t mask;
    uint32_t pos;       /* position of the next message */
} shm_ring_rx_t;

/* Bytes a ring of `ncells` cells (a power of two, 4..65536) occupies. */
static inline size_t shm_ring_bytes(uint32_t ncells)
{
    return SHM_RING_CTL + (size_t)ncells * SHM_CELL_SIZE;
}

/* Formats an empty ring at `mem` (64-byte aligned). Called by the consumer. */
void shm_ring_init(void *mem, uint32_t ncells);

/* Views of a formatted ring at `mem`, for its one producer / one consumer. */
void shm_ring_tx_attach(shm_ring_tx_t *tx, void *mem, uint32_t ncells);
void shm_ring_rx_attach(shm_ring_rx_t *rx, void *mem, uint32_t ncells);

/*
 * Reserves `n` consecutive cells (1 <= n <= ncells/2) for one message and
 * returns the first, or NULL when the ring has no room now (nothing changed
 * that the consumer could see as a message). The caller fills type, hdrlen,
 * len, aux and the bytes after the 16-byte head, then calls
 * shm_ring_commit() before any other reserve.
 */
static inline shm_cell_t *shm_ring_reserve(shm_ring_tx_t *tx, uint32_t n)
{
    uint32_t idx = tx->tail & tx->mask;
    uint32_t skip = idx + n > tx->ncells ? tx->ncells - idx : 0;
    if (tx->tail + skip + n - tx->head_seen > tx->ncells) {
        tx->head_seen = atomic_load_explicit(&tx->ctl->head, memory_order_acquire);
        if (tx->tail + skip + n - tx->head_seen > tx->ncells)
            return NULL;
    }
    if (skip) {
        shm_cell_t *s = &tx->cells[idx];
        s->type = SHM_T_SKIP;
        s->ncells = (uint16_t)skip;
        atomic_store_explicit(&s->seq, tx->tail, memory_order_release);
        tx->tail += skip;
        idx = 0;
    }
    return &tx->cells[idx];
}

/* Makes the reserved message of `n` cells starting at `c` visible. */
static inline void shm_ring_commit(shm_ring_tx_t *tx, shm_cell_t *c, uint32_t n)
{
    c->ncells = (uint16_t)n;
    atomic_store_explicit(&c->seq, tx->tail, memory_order_release);
    tx->tail += n;
}

/* Cells needed for a message of `bytes` bytes after the 16-byte head. */
static inline uint32_t shm_ring_cells_for(size_t bytes)
{
    return (uint32_t)((SHM_CELL_HEAD + bytes + SHM_CELL_SIZE - 1) / SHM_CELL_SIZE);
}

/* Gives the cells of the message `c` (from shm_ring_peek) back to the producer. */
static inline void shm_ring_release(shm_ring_rx_t *rx, shm_cell_t *c)
{
    uint32_t n = c->ncells;
    for (uint32_t i = 1; i < n; i++)
        atomic_store_explicit(&rx->cells[(rx->pos + i) & rx->mask].seq, rx->pos + i,
                              memory_order_relaxed);
    rx->pos += n;
    atomic_store_explicit(&rx->ctl->head, rx->pos, memory_order_release);
}

/*
 * The next message, or NULL when none is there. The message stays valid
 * (and the producer cannot reuse its cells) until shm_ring_release().
 */
static inline shm_cell_t *shm_ring_peek(shm_ring_rx_t *rx)
{
    for (;;) {
        shm_cell_t *c = &rx->cells[rx->pos & rx->mask];
        if (atomic_load_explicit(&c->seq, memory_order_acquire) != rx->pos)
            return NULL;
        if (c->type != SHM_T_SKIP)
            return c;
        shm_ring_release(rx, c);
    }
}

#endif
