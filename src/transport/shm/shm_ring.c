#include "shm_ring.h"

void shm_ring_init(void *mem, uint32_t ncells)
{
    shm_ring_ctl_t *ctl = mem;
    shm_cell_t *cells = (shm_cell_t *)((char *)mem + SHM_RING_CTL);
    atomic_init(&ctl->head, 0);
    /* seq = i - ncells: a position of the lap before the first, so no cell
     * looks written; touching every line also places the pages here. */
    for (uint32_t i = 0; i < ncells; i++) {
        atomic_init(&cells[i].seq, i - ncells);
        cells[i].type = 0;
        cells[i].ncells = 0;
    }
}

void shm_ring_tx_attach(shm_ring_tx_t *tx, void *mem, uint32_t ncells)
{
    tx->ctl = mem;
    tx->cells = (shm_cell_t *)((char *)mem + SHM_RING_CTL);
    tx->ncells = ncells;
    tx->mask = ncells - 1;
    tx->tail = atomic_load_explicit(&tx->ctl->head, memory_order_acquire);
    tx->head_seen = tx->tail;
}

void shm_ring_rx_attach(shm_ring_rx_t *rx, void *mem, uint32_t ncells)
{
    rx->ctl = mem;
    rx->cells = (shm_cell_t *)((char *)mem + SHM_RING_CTL);
    rx->mask = ncells - 1;
    rx->pos = atomic_load_explicit(&rx->ctl->head, memory_order_acquire);
}
