/*
 * shm_path.h — which large-message path, the pipelined copy or CMA single
 * copy, is faster between this rank and one peer, learned from the job's
 * own transfers. The faster path can change while a job runs (on a VM the
 * two ranks' vCPUs move between L3 domains: the pipeline through shared
 * cache then falls from ~15 GB/s to ~3.5 while CMA stays near 12), and
 * differs by message size, so each size class keeps a rate per path; the
 * configured rule (LOCUS_SHM_CMA_MIN, tuned by `locus tune`) decides first,
 * the other path is then tried once, and from there on the other path is
 * used when it is SHM_PATH_MARGIN times faster, the one not in use tried
 * again (two messages, the second one counted) one message in
 * SHM_PATH_EXPLORE to keep its rate current. Private to the shm transport.
 */
#ifndef SHM_PATH_H
#define SHM_PATH_H

#include <stdint.h>

#define SHM_PATH_MIN (8u << 10)    /* smaller messages follow the rule */
#define SHM_PATH_CLASSES 10        /* 8K, 16K, ..., 2M, 4M and up */
#define SHM_PATH_EXPLORE 64
#define SHM_PATH_MARGIN 1.15       /* the other path must be this much faster */
/* ... for messages amid others: lone messages' measures are a rough guide
 * to a stream's (on a Xeon VM a stream of 256 KiB-1 MiB ran 2.5x faster by
 * the split CMA than by the pipeline, lone messages alike by both), but a
 * pipeline that collapsed (vCPUs no longer sharing a cache) is 3-4x slower. */
#define SHM_PATH_STREAM_MARGIN 2.0

typedef struct {
    double rate[SHM_PATH_CLASSES][2];  /* bytes/ns, [pipeline, cma]; 0: not measured */
    uint32_t n[SHM_PATH_CLASSES];      /* choices made in the class */
    uint8_t probe[SHM_PATH_CLASSES];   /* 1 + the path last chosen to probe it:
                                          its next rate replaces the old one */
    uint8_t warm[SHM_PATH_CLASSES];    /* 1: the probe's first message, not counted */
} shm_path_t;

/* The size class of a message of `want` bytes, -1 below SHM_PATH_MIN. */
int shm_path_class(uint64_t want);

/* 1 when a message of `want` bytes should be read by CMA; `rule` is what
 * the configuration says for it. */
int shm_path_choose(shm_path_t *pt, uint64_t want, int rule);

/* The rule, unless the measures so far (of lone messages) found the other
 * path SHM_PATH_STREAM_MARGIN times faster; nothing counted, no probe: for
 * messages amid others with the peer, whose measures would carry the other
 * messages' traffic (they are not recorded). */
int shm_path_best(const shm_path_t *pt, uint64_t want, int rule);

/* A message of `want` bytes took `ns` by the path `cma` says. */
void shm_path_record(shm_path_t *pt, uint64_t want, int cma, uint64_t ns);

uint64_t shm_now_ns(void);

#endif
