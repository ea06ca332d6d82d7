/*
 * rig.h — the core's unit test bench: a core (world rank 0) wired to the
 * scripted transport, and the checks every test file uses.
 */
#ifndef CORE_RIG_H
#define CORE_RIG_H

#include <stdio.h>

#include "mock_tp.h"

extern int rig_errors;

#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            rig_errors++;                                                                 \
            fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond);                    \
            fprintf(stderr, __VA_ARGS__);                                                 \
            fputc('\n', stderr);                                                          \
        }                                                                                 \
    } while (0)

typedef struct {
    locus_core_t c;
    mock_tp_t m;
    long free_base;             /* requests on the free list when idle */
} rig_t;

/* A core of `size` ranks over the mock (eager up to eager_max bytes). */
void rig_open(rig_t *t, int size, size_t eager_max);
/* Finalizes the core; checks the mock saw no contract breach. */
void rig_close(rig_t *t);

/* Progresses until a round moves nothing (at most 100 rounds): the last
 * round's result, -1 once the core failed. */
int rig_drain(rig_t *t);

/* A message from world rank src (= its rank in every context). */
void rig_inject(rig_t *t, int src, uint32_t ctx, int tag, uint32_t flags, uint64_t sreq,
                const void *data, size_t len);
/* An ACK of sreq from world rank src. */
void rig_inject_ack(rig_t *t, int src, uint64_t sreq);

locus_req_t *rig_recv(rig_t *t, uint32_t ctx, int rank, int tag, void *buf, size_t len);
locus_req_t *rig_send(rig_t *t, int world, uint32_t ctx, int tag, uint32_t flags,
                      const void *buf, size_t len);
/* Recycles a completed request the test owns. */
void rig_put(rig_t *t, locus_req_t *r);

/* Requests on the core's free list (bounded walk: a cycle counts as -1). */
long rig_free_reqs(rig_t *t);

/* A payload whose bytes say which message it is. */
void rig_fill(void *buf, size_t len, int seed);
int rig_is(const void *buf, size_t len, int seed);

/* The test groups (test_core_*.c). */
void test_match(void);
void test_send(void);
void test_life(void);

#endif
