/*
 * Counts beyond INT_MAX through the large-count interface: MPI_Send_c /
 * MPI_Recv_c of 2^31 + 4099 bytes (MPI_Get_count_c gives the count back,
 * MPI_Get_count says MPI_UNDEFINED), MPI_Bcast_c of as many, and
 * MPI_Alltoallw_c with a byte displacement past 2 GiB. Two ranks (1: to
 * itself). Needs about 2.2 GiB per buffer, two per rank; skipped (exit
 * 77) when memory is short.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtest.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const MPI_Count n = (MPI_Count)INT_MAX + 4100;
    long pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    int enough = pages > 0 && (double)pages * (double)psz > 2.3 * (double)n * size, all = 0;
    MPI_Allreduce(&enough, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all) {
        if (rank == 0)
            printf("SKIPPED: not enough free memory for %lld-byte buffers\n", (long long)n);
        MPI_Finalize();
        return 77;
    }
    unsigned char *a = malloc((size_t)n), *b = malloc((size_t)n);
    CHECK(a && b, "malloc");
    for (MPI_Count i = 0; i < n; i += 4096)
        a[i] = (unsigned char)(rank * 13 + i / 4096);
    a[n - 1] = (unsigned char)(rank + 200);
    int peer = size > 1 ? 1 - rank : 0;
    if (rank < 2) {
        MPI_Request rq;
        MPI_Status st;
        MPI_Irecv_c(b, n, MPI_UNSIGNED_CHAR, peer, 1, MPI_COMM_WORLD, &rq);
        MPI_Send_c(a, n, MPI_UNSIGNED_CHAR, peer, 1, MPI_COMM_WORLD);
        MPI_Wait(&rq, &st);
        MPI_Count got = -1;
        int got_int = 0;
        MPI_Get_count_c(&st, MPI_UNSIGNED_CHAR, &got);
        MPI_Get_count(&st, MPI_UNSIGNED_CHAR, &got_int);
        CHECK(got == n && got_int == MPI_UNDEFINED, "count %lld / %d", (long long)got, got_int);
        int bad = 0;
        for (MPI_Count i = 0; i < n && bad < 5; i += 4096)
            bad += b[i] != (unsigned char)(peer * 13 + i / 4096);
        CHECK(bad == 0 && b[n - 1] == (unsigned char)(peer + 200), "Send_c data wrong");
    }
    /* Bcast_c from the last rank: everyone ends with its pattern. */
    MPI_Bcast_c(a, n, MPI_UNSIGNED_CHAR, size - 1, MPI_COMM_WORLD);
    int bad = 0;
    for (MPI_Count i = 0; i < n && bad < 5; i += 4096)
        bad += a[i] != (unsigned char)((size - 1) * 13 + i / 4096);
    CHECK(bad == 0 && a[n - 1] == (unsigned char)(size - 1 + 200), "Bcast_c data wrong");
    /* Alltoallw_c: 8 bytes to each rank, landing past 2 GiB. */
    MPI_Count *cnt = malloc(size * sizeof *cnt);
    MPI_Aint *sd = malloc(size * sizeof *sd), *rd = malloc(size * sizeof *rd);
    MPI_Datatype *ty = malloc(size * sizeof *ty);
    for (int q = 0; q < size; q++) {
        cnt[q] = 8;
        sd[q] = 8 * q;
        rd[q] = (MPI_Aint)INT_MAX + 64 + 8 * q;
        ty[q] = MPI_BYTE;
        memset(a + 8 * q, rank * 16 + q, 8);
    }
    MPI_Alltoallw_c(a, cnt, sd, ty, b, cnt, rd, ty, MPI_COMM_WORLD);
    bad = 0;
    for (int q = 0; q < size; q++)
        for (int i = 0; i < 8; i++)
            bad += b[rd[q] + i] != (unsigned char)(q * 16 + rank);
    CHECK(bad == 0, "Alltoallw_c past 2 GiB: %d wrong", bad);
    free(cnt);
    free(sd);
    free(rd);
    free(ty);
    free(a);
    free(b);
    return mtest_finish();
}
