/* What the transport tells about itself: counters (shm.h) and describe(). */
#include "locus_tunables.h"
#include "shm_tp.h"

#include <stdio.h>
#include <string.h>

void shm_tp_stats(const locus_tp_t *t, shm_stats_t *out)
{
    const shm_tp_t *tp = (const shm_tp_t *)t;
    *out = tp->stats;
    out->cma_enabled = 0;
    out->eager_max = UINT64_MAX;
    for (int l = 0; l < tp->local_size; l++) {
        if (l == tp->local_rank)
            continue;
        out->cma_enabled |= tp->peers[l].cma && tp->single_copy != SHM_SC_NONE;
        /* Past its ring's share, an eager payload needs a chunk of my pool. */
        const shm_peer_t *p = &tp->peers[l];
        size_t pooled = p->eager_max < tp->chunk_size ? p->eager_max : tp->chunk_size;
        size_t eager = pooled > p->inline_max ? pooled : p->inline_max;
        if (eager < out->eager_max)
            out->eager_max = eager;
    }
    out->oversubscribed = tp->oversubscribed;
    out->seg_bytes = tp->seg_len;
}

void shm_tp_describe(locus_tp_t *t, char *buf, size_t len)
{
    const shm_tp_t *tp = (const shm_tp_t *)t;
    shm_stats_t st;
    shm_tp_stats(t, &st);
    int peers = tp->local_size - 1, cma = 0;
    const char *means = NULL;
    for (int l = 0; l < tp->local_size; l++) {
        if (l == tp->local_rank)
            continue;
        cma += tp->peers[l].cma;
        const char *m = shm_alive_means(&tp->peers[l].alive);
        means = !means || strcmp(means, m) == 0 ? m : "mixed";
    }
    char sc[64], a[24], b[24], c[24];
    if (tp->single_copy == SHM_SC_NONE || cma == 0)
        snprintf(sc, sizeof sc, "no single copy%s", tp->single_copy == SHM_SC_NONE ? "" :
                 " (process_vm_readv refused)");
    else if (tp->single_copy == SHM_SC_CMA || tp->cma_min <= st.eager_max)
        snprintf(sc, sizeof sc, "single copy cma above eager");
    else
        snprintf(sc, sizeof sc, "single copy cma from %s",
                 locus_size_str(a, sizeof a, (long)tp->cma_min));
    /* (LOCUS_SHM_CMA_MAX's default, 1024G, is no bound.) */
    if (tp->single_copy == SHM_SC_AUTO && cma > 0 &&
        tp->cma_max < ((uint64_t)1 << 40))
        snprintf(sc + strlen(sc), sizeof sc - strlen(sc), " to %s",
                 locus_size_str(b, sizeof b, (long)tp->cma_max));
    if (cma > 0 && cma < peers)
        snprintf(sc + strlen(sc), sizeof sc - strlen(sc), " (%d of %d peers)", cma, peers);
    snprintf(buf, len, "%s, pipeline %s chunks (%s pool), eager %s, %d local ranks, "
             "oversubscribed: %s, peer death: %s", sc,
             locus_size_str(a, sizeof a, (long)tp->chunk_size),
             locus_size_str(b, sizeof b, (long)(tp->pool_chunks * tp->chunk_size)),
             locus_size_str(c, sizeof c, (long)st.eager_max), tp->local_size,
             tp->oversubscribed ? "yes" : "no", means ? means : "none");
}
