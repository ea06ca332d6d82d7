/*
 * shm.h — what the shared-memory transport shows beyond locus_transport.h:
 * counters and a one-line description, for tests, benchmarks and
 * LOCUS_VERBOSE. Constructed with locus_tp_shm_create().
 */
#ifndef SHM_H
#define SHM_H

#include "locus_transport.h"

#include <stdint.h>

typedef struct {
    uint64_t eager_sent;     /* messages sent through the ring in one piece */
    uint64_t eager_pooled;   /* ...of them with the payload in a chunk of my pool */
    uint64_t rndv_sent;      /* large messages announced (RTS) */
    uint64_t rts_data;       /* ...of them with the data in a chunk of my pool */
    uint64_t cma_recv;       /* large messages received by process_vm_readv */
    uint64_t pipe_recv;      /* large messages received through pool chunks */
    uint64_t chunks_sent;
    uint64_t split_recv;     /* ...of them split: the sender wrote the first half */
    uint64_t written_recv;   /* ...of them written whole by the sender (fan-in) */
    uint64_t cma_fallbacks;  /* CMA failed at run time; pipelined instead */
    uint64_t again;          /* sends answered LOCUS_TP_AGAIN (a ring was full) */
    uint64_t pool_full;      /* pipelined sends found no free chunk in my pool */
    uint64_t ahead_waits;    /* ...or held as many as one send may (SHM_SEND_AHEAD_*) */
    int cma_enabled;         /* single copy in use now (for at least one peer) */
    int oversubscribed;      /* the core's answer (locus_tp_init_t): the CMA rule
                              * alone under LOCUS_SINGLE_COPY=auto (untuned:
                              * every large message) */
    uint64_t eager_max;      /* effective eager limit (smallest over peers) */
    uint64_t seg_bytes;      /* this process's segment */
} shm_stats_t;

/* Copies the counters of a transport made by locus_tp_shm_create(). */
void shm_tp_stats(const locus_tp_t *tp, shm_stats_t *out);

/* One line on how it moves data, e.g. "single copy cma from 1G, pipeline
 * 32k chunks (4M pool), eager 4k, 4 local ranks, oversubscribed: no, peer
 * death: pidfd+lock" (truncated to len; the transport's describe op). */
void shm_tp_describe(locus_tp_t *tp, char *buf, size_t len);

#endif
