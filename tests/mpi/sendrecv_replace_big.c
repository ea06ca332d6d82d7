/*
 * MPI_Sendrecv_replace of more than 2 GiB (a 1 MiB contiguous type, so the
 * count stays small): the length must not be cast to int. Runs on 1 rank
 * (to itself) or 2 (exchange with the partner). Needs about 4.5 GiB per
 * rank; skipped (exit 77, " No Errors" not printed) when memory is short.
 */
#include <stdint.h>
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
    const size_t mib = (size_t)1 << 20;
    const int count = 2049;                      /* 2 GiB + 1 MiB */
    size_t n = (size_t)count * mib;
    long pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    int enough = pages > 0 && (double)pages * (double)psz > 2.6 * (double)n * size, all = 0;
    MPI_Allreduce(&enough, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all) {
        if (rank == 0)
            printf("SKIPPED: not enough free memory for %zu-byte buffers\n", n);
        MPI_Finalize();
        return 77;
    }
    MPI_Datatype mb;
    MPI_Type_contiguous((int)mib, MPI_BYTE, &mb);
    MPI_Type_commit(&mb);
    unsigned char *buf = malloc(n);
    CHECK(buf != NULL, "malloc %zu", n);
    for (size_t i = 0; i < n; i += 4096)
        buf[i] = (unsigned char)(rank * 31 + i / 4096);
    buf[n - 1] = (unsigned char)(rank + 100);
    int peer = size > 1 ? 1 - rank : 0;
    MPI_Status st;
    int rc = MPI_Sendrecv_replace(buf, count, mb, peer, 3, peer, 3, MPI_COMM_WORLD, &st);
    CHECK(rc == MPI_SUCCESS, "rc %d", rc);
    int got = -1;
    MPI_Get_count(&st, mb, &got);
    CHECK(got == count, "count %d", got);
    for (size_t i = 0; i < n; i += 4096)
        if (buf[i] != (unsigned char)(peer * 31 + i / 4096)) {
            CHECK(0, "byte %zu: %d", i, buf[i]);
            break;
        }
    CHECK(buf[n - 1] == (unsigned char)(peer + 100), "last byte %d", buf[n - 1]);
    free(buf);
    MPI_Type_free(&mb);
    return mtest_finish();
}
