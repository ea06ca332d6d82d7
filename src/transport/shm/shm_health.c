/*
 * Idle polling: noticing a peer that died (without finalize, or while we
 * wait on it). Yielding the CPU when ranks outnumber cores is the core's
 * business (LOCUS_YIELD), not the transport's.
 */
#include "shm_tp.h"

#include <errno.h>
#include <stdio.h>
#include <time.h>

#define CHECK_EVERY 1024               /* idle polls between clock reads */
#define CHECK_PERIOD_NS 1000000000ull  /* peer liveness checks at most once a second */

static int peers_check(shm_tp_t *tp)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    if (now - tp->last_check_ns < CHECK_PERIOD_NS)
        return 0;
    tp->last_check_ns = now;
    for (int l = 0; l < tp->local_size; l++) {
        shm_peer_t *p = &tp->peers[l];
        if (l == tp->local_rank)
            continue;
        /* Gone without finalize: a crash, fatal for the job. Gone after
         * finalize is fine unless we still wait on it. */
        const shm_seg_hdr_t *h = (const shm_seg_hdr_t *)p->seg;
        int clean = atomic_load_explicit(&h->finalized, memory_order_acquire);
        if (clean && !p->outstanding && !p->stalled)
            continue;
        int how = shm_alive_check(&p->alive);
        if (how == SHM_ALIVE_YES)
            continue;
        /* It may have finalized (and exited) since the first look: the
         * flag was set before its exit, which we have now seen. */
        clean = atomic_load_explicit(&h->finalized, memory_order_acquire);
        if (clean && !p->outstanding && !p->stalled)
            continue;
        /* Its last messages (a FIN, the last chunk) may have reached our
         * ring after this round polled it: take those first. */
        if (shm_ring_peek(&p->rx))
            return 0;
        snprintf(tp->error, sizeof tp->error,
                 "shm: local rank %d (world rank %d) died %s (noticed by its %s)", l, p->world,
                 clean ? "while a transfer with it was in flight" : "without finalize",
                 how == SHM_ALIVE_EXITED ? "pidfd" : "segment lock");
        return tp->failed = -ECONNRESET;
    }
    return 0;
}

int shm_tp_idle(shm_tp_t *tp)
{
    if (++tp->idle % CHECK_EVERY == 0)
        return peers_check(tp);
    return 0;
}

const char *shm_tp_last_error(locus_tp_t *t)
{
    shm_tp_t *tp = (shm_tp_t *)t;
    return tp->error[0] ? tp->error : NULL;
}
