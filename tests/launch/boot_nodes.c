/*
 * boot_nodes — a rank program for the node-identity tests: the MPI
 * library's boot layer builds its node map (locus_boot_init), then the
 * real shared-memory transport is created from it, and the rank prints
 * which peers shm reaches. Shared memory must reach exactly the other
 * ranks of the rank's own node, as the launcher defines nodes.
 *
 * Prints one line:
 *   boot rank=R size=N node=X nnodes=M local=L/LS from=F locals=a,b shm=c,d
 * and exits 0, or prints "boot_nodes: FAIL: ..." and exits 1.
 */
#include "locus_boot.h"
#include "locus_transport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void list(char *out, size_t cap, const int *v, int n)
{
    size_t k = 0;
    out[0] = '\0';
    for (int i = 0; i < n && k + 16 < cap; i++)
        k += (size_t)snprintf(out + k, cap - k, "%s%d", i ? "," : "", v[i]);
    if (n == 0)
        snprintf(out, cap, "-");
}

int main(void)
{
    locus_boot_t b;
    char err[512];
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (locus_boot_init(&b, err, sizeof err) != 0) {
        printf("boot_nodes: FAIL: %s\n", err);
        return 1;
    }
    /* No traffic flows, so the transport never calls back. */
    static const locus_tp_upcalls_t no_upcalls;
    locus_tp_init_t ti = {
        .rank = b.rank, .size = b.size,
        .local_rank = b.local_rank, .local_size = b.local_size,
        .local_ranks = b.local_ranks,
        .kvs = locus_boot_kvs(&b),
        .up = &no_upcalls,
        .core = NULL,
    };
    locus_tp_t *tp = NULL;
    if (locus_tp_shm_create(&ti, &tp, err, sizeof err) != 0) {
        printf("boot_nodes: FAIL: shm: %s\n", err);
        return 1;
    }
    int *shm = calloc((size_t)b.size, sizeof *shm), nshm = 0;
    for (int p = 0; tp && shm && p < b.size; p++)
        if (tp->ops->reaches(tp, p))
            shm[nshm++] = p;
    char locals[4096], peers[4096];
    list(locals, sizeof locals, b.local_ranks, b.local_size);
    list(peers, sizeof peers, shm, nshm);
    printf("boot rank=%d size=%d node=%d nnodes=%d local=%d/%d from=%d locals=%s shm=%s\n",
           b.rank, b.size, b.node_of[b.rank], b.nnodes, b.local_rank, b.local_size,
           b.mapping_from, locals, peers);
    free(shm);
    /* Everyone has attached and printed before anyone tears down. */
    if (locus_boot_fence(&b) != 0) {
        printf("boot_nodes: FAIL: fence\n");
        return 1;
    }
    if (tp)
        tp->ops->finalize(tp);
    locus_boot_finalize(&b);
    return 0;
}
