#include "shm_seg.h"


static uint64_t align_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

void shm_seg_layout(shm_seg_hdr_t *h, uint32_t local_size, uint32_t ring_cells,
                    uint32_t pool_chunks, uint64_t chunk_size)
{
    h->local_size = local_size;
    h->ring_cells = ring_cells;
    h->pool_chunks = pool_chunks;
    h->chunk_size = chunk_size;
    h->rings_off = SHM_SEG_HDR;
    uint64_t rings = (uint64_t)(local_size - 1) * (128 + (uint64_t)ring_cells * 64);
    h->states_off = align_up(h->rings_off + rings, 128);
    h->pool_off = align_up(h->states_off + (uint64_t)pool_chunks * 64, 4096);
    h->total = align_up(h->pool_off + (uint64_t)pool_chunks * chunk_size, 4096);
}
