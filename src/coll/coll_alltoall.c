/*
 * coll_alltoall.c — alltoall, alltoallv and alltoallw, all as the w form
 * (per-peer counts, byte displacements and types): everything posted at
 * once for small blocks (linear), pairwise exchange in p-1 rounds for large
 * ones (one peer at a time keeps the network and memory traffic orderly).
 */
#include <stdlib.h>

#include "coll_priv.h"

/* MPI_IN_PLACE: each peer's block of the receive buffer is packed aside
 * first and sent from there. */
static int pack_aside(locus_coll_sched_t *s, void *rbuf, const size_t *rcounts,
                      const ptrdiff_t *rdispls, locus_dtype_t *const *rdts, int p,
                      char **sbase, size_t *scounts, ptrdiff_t *sdispls)
{
    size_t total = 0;
    for (int i = 0; i < p; i++) {
        sdispls[i] = (ptrdiff_t)total;
        scounts[i] = rcounts[i] * locus_dtype_size(rdts[i]);
        total += scounts[i];
    }
    char *tmp = coll_sched_bytes(s, total);
    if (!tmp)
        return -1;
    locus_dtype_t *bytes = locus_dtype_basic(LOCUS_EL_BYTE);
    for (int i = 0; i < p; i++)
        coll_copy(s, (char *)rbuf + rdispls[i], rcounts[i], rdts[i], tmp + sdispls[i],
                  scounts[i], bytes);
    *sbase = tmp;
    return 0;
}

void coll_build_alltoallw(locus_coll_sched_t *s, const void *sbuf, const size_t *scounts,
                          const ptrdiff_t *sdispls, locus_dtype_t *const *sdts, void *rbuf,
                          const size_t *rcounts, const ptrdiff_t *rdispls,
                          locus_dtype_t *const *rdts, size_t bytes_per_peer,
                          locus_coll_comm_t *c)
{
    int p = c->size, r = c->rank, copy_own = sbuf != LOCUS_COLL_IN_PLACE;
    size_t *pc = NULL;
    ptrdiff_t *pd = NULL;
    locus_dtype_t **pt = NULL;
    if (sbuf == LOCUS_COLL_IN_PLACE) {
        pc = malloc((sizeof *pc + sizeof *pd + sizeof *pt) * (size_t)p);
        if (!pc) {
            s->oom = 1;
            return;
        }
        pd = (ptrdiff_t *)(pc + p);
        pt = (locus_dtype_t **)(pd + p);
        char *base;
        if (pack_aside(s, rbuf, rcounts, rdispls, rdts, p, &base, pc, pd) != 0)
            goto out;
        for (int i = 0; i < p; i++)
            pt[i] = locus_dtype_basic(LOCUS_EL_BYTE);
        sbuf = base;
        scounts = pc;
        sdispls = pd;
        sdts = pt;
    }
    /* My own block is copied once the first messages are posted, so the
     * copy overlaps their transfer. */
    if (copy_own && p == 1)
        coll_copy(s, (const char *)sbuf + sdispls[r], scounts[r], sdts[r],
                  (char *)rbuf + rdispls[r], rcounts[r], rdts[r]);
    if (p > 1) {
        coll_state_t *st = coll_state(c);
        if (!st) {
            s->oom = 1;
            goto out;
        }
        int alg = st->alltoall, tag = coll_tag(c), pow2 = coll_pof2(p) == p;
        /* Pairwise steps wait for both ranks of each pair to run; where
         * ranks outnumber cores every rank takes what has come instead (4
         * ranks on 2 cores, 64 KiB / 256 KiB / 1 MiB / 4 MiB blocks:
         * 28 / 184 / 751 / 3928 us against 34 / 206 / 838 / 5258 pairwise;
         * Open MPI 28-39 / 193-198 / 750-808 / 4143). */
        if (alg == ALG_AUTO)
            alg = bytes_per_peer < st->alltoall_small || c->yield ? ALG_LINEAR : ALG_PAIRWISE;
        for (int i = 1; i < p; i++) {
            /* Linear starts with the neighbours so not everyone hits rank 0
             * first; pairwise pairs ranks up (XOR on powers of two). */
            int dst = alg == ALG_PAIRWISE && pow2 ? r ^ i : (r + i) % p;
            int src = alg == ALG_PAIRWISE && pow2 ? r ^ i : (r - i + p) % p;
            coll_recv(s, c, (char *)rbuf + rdispls[src], rcounts[src], rdts[src], src, tag);
            coll_send(s, c, (const char *)sbuf + sdispls[dst], scounts[dst], sdts[dst], dst, tag);
            if (copy_own && i == 1)
                coll_copy(s, (const char *)sbuf + sdispls[r], scounts[r], sdts[r],
                          (char *)rbuf + rdispls[r], rcounts[r], rdts[r]);
            if (alg == ALG_PAIRWISE)
                coll_fence(s);
        }
        coll_fence(s);
    }
out:
    free(pc);
}
