/*
 * boot_client — runs the MPI library's boot layer (locus_boot_init) against
 * whatever process manager the environment names (PMI_FD or PMI_PORT) and
 * prints what it learned: "ok rank=R size=N nnodes=M local=L/LS", or
 * "error: REASON" with exit status 1.
 */
#include "locus_boot.h"

#include <stdio.h>

int main(void)
{
    locus_boot_t b;
    char err[512];
    if (locus_boot_init(&b, err, sizeof err) != 0) {
        printf("error: %s\n", err);
        return 1;
    }
    printf("ok rank=%d size=%d nnodes=%d local=%d/%d\n", b.rank, b.size, b.nnodes,
           b.local_rank, b.local_size);
    locus_boot_finalize(&b);
    return 0;
}
