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

#include "locus_clock.h"

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

/* ---- streams ----
 * Receives from the peer that follow one another closely (one still in
 * flight, or the last done under SHM_STREAM_GAP_NS ago: osu_bw's window,
 * a halo exchange's messages) form a stream, and there a lone message's
 * measure says little: each message shares the cores with the others.
 * A stream's path is chosen by epochs instead: at least SHM_STREAM_EPOCH
 * receives of one size class by one path, the rate being their bytes over
 * the time the stream was busy (short pauses included: they are part of
 * the stream's cost). An epoch begins and ends only while nothing is in
 * flight, so two paths never share one's time. The faster path is kept,
 * the other tried for one epoch in SHM_STREAM_EXPLORE, or in
 * SHM_STREAM_EXPLORE_FAR while its last try was SHM_STREAM_FAR times
 * slower. Before a class has measures, the caller's guess goes first (the
 * lone messages' measures, shm_path_best), the other path next.
 * Streams that never pause keep the path their first epoch took.
 * A try of CMA while the pipeline is in use is short: its first
 * SHM_STREAM_PROBE_BYTES (at least SHM_STREAM_PROBE_MIN receives, at most
 * SHM_STREAM_EPOCH) take it and the rest of the window the pipeline, and
 * it ends when the last of those is done: CMA reads at the match, so they
 * are served before the others' chunks. A whole window of the slower path
 * cost osu_bw 10 % on the Zen 5 VM: at 64 KiB CMA ran at 13 GB/s against
 * the pipeline's 50, and its one window of 20 took 3.8 windows' time. A
 * try of the pipeline keeps its whole window: the CMA reads of the
 * window's others, done at their matches, would fall within its time. */
#define SHM_STREAM_GAP_NS 50000ull
#define SHM_STREAM_EPOCH 16
#define SHM_STREAM_EXPLORE 8
#define SHM_STREAM_EXPLORE_FAR 32
#define SHM_STREAM_FAR 1.5
#define SHM_STREAM_PROBE_BYTES (256u << 10)
#define SHM_STREAM_PROBE_MIN 4

typedef struct {
    double rate[SHM_PATH_CLASSES][2];  /* bytes/ns, [pipeline, cma]; 0: not measured */
    uint32_t epochs[SHM_PATH_CLASSES]; /* epochs measured in the class */
    uint8_t far[SHM_PATH_CLASSES];     /* 1: the path not in use was far behind */
    int cls;                           /* 1 + the class of the epoch under way; 0: none */
    int cma;                           /* the epoch's path */
    int probe;                         /* 1: it tries the path not in use */
    uint32_t quota;                    /* ...with this many receives; 0: the whole epoch */
    uint32_t assigned;                 /* the epoch's receives given its path */
    uint32_t inflight;                 /* measured receives from the peer in flight */
    uint32_t counted;                  /* the epoch's receives done */
    uint64_t bytes, ns;                /* ...their bytes, the epoch's busy time */
    uint64_t mark;                     /* when the busy stretch began */
    uint64_t last_done;                /* when the last receive finished, 0: never */
} shm_stream_t;

/* A measured receive of `want` bytes was matched at `now`: 1 when it
 * belongs to a stream (then shm_stream_path gives its path). */
int shm_stream_match(shm_stream_t *st, uint64_t want, uint64_t now);

/* The path (1: CMA) of a stream receive of `want` bytes, just matched;
 * `guess`: what to begin with while the class has no measures. */
int shm_stream_path(shm_stream_t *st, uint64_t want, int guess);

/* A measured receive of `want` bytes (of the stream or not) finished at
 * `now`, read by CMA when `cma`. */
void shm_stream_done(shm_stream_t *st, uint64_t want, int cma, uint64_t now);


#endif
