/* What the transport tells about itself: counters (shm.h) and describe(). */
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
        if (tp->peers[l].eager_max < out->eager_max)
            out->eager_max = tp->peers[l].eager_max;
    }
    out->oversubscribed = tp->oversubscribed;
    out->seg_bytes = tp->seg_len;
}

/* 1G, 128k, 4k, or the plain number when it is no whole multiple. */
static const char *size_str(char *buf, size_t len, uint64_t v)
{
    static const char unit[] = "kMGT";
    int u = -1;
    while (u < 3 && v >= 1024 && v % 1024 == 0) {
        v /= 1024;
        u++;
    }
    if (u < 0)
        snprintf(buf, len, "%llu", (unsigned long long)v);
    else
        snprintf(buf, len, "%llu%c", (unsigned long long)v, unit[u]);
    return buf;
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
    else if (tp->single_copy == SHM_SC_CMA || tp->oversubscribed)
        snprintf(sc, sizeof sc, "single copy cma above eager");
    else
        snprintf(sc, sizeof sc, "single copy cma from %s", size_str(a, sizeof a, tp->cma_min));
    if (cma > 0 && cma < peers)
        snprintf(sc + strlen(sc), sizeof sc - strlen(sc), " (%d of %d peers)", cma, peers);
    snprintf(buf, len, "%s, pipeline %s chunks (%s pool), eager %s, %d local ranks, "
             "oversubscribed: %s, peer death: %s", sc,
             size_str(a, sizeof a, tp->chunk_size),
             size_str(b, sizeof b, (uint64_t)tp->pool_chunks * tp->chunk_size),
             size_str(c, sizeof c, st.eager_max), tp->local_size,
             tp->oversubscribed ? "yes" : "no", means ? means : "none");
}
