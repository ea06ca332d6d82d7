/*
 * type_large_pack.c — MPI_Pack_c/MPI_Unpack_c and the external32 pair
 * with a count beyond INT_MAX (2^31 + 16 bytes through MPI_BYTE, then the
 * same bytes as 2^29 + 4 ints through external32): positions and data
 * must not pass through an int. Needs about 4.5 GiB; skipped (exit 77)
 * when the machine has less free.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const MPI_Count n = ((MPI_Count)1 << 31) + 16;
    long pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || (double)pages * (double)psz < 2.3 * (double)n) {
        printf("SKIPPED: not enough free memory for two %lld-byte buffers\n", (long long)n);
        MPI_Finalize();
        return 77;
    }
    unsigned char *a = malloc((size_t)n), *b = malloc((size_t)n);
    CHECK(a && b, "malloc");
    for (MPI_Count i = 0; i < n; i += 4096)
        a[i] = (unsigned char)(i / 4096 * 7);
    a[n - 1] = 0x5a;
    MPI_Count pos = 0;
    CHECK(MPI_Pack_c(a, n, MPI_BYTE, b, n, &pos, MPI_COMM_SELF) == MPI_SUCCESS && pos == n,
          "pack_c of 2^31+16 bytes: position %lld", (long long)pos);
    CHECK(b[n - 1] == 0x5a && b[4096] == 7, "packed bytes");
    memset(a, 0, (size_t)n);
    pos = 0;
    CHECK(MPI_Unpack_c(b, n, &pos, a, n, MPI_BYTE, MPI_COMM_SELF) == MPI_SUCCESS && pos == n,
          "unpack_c");
    CHECK(a[n - 1] == 0x5a && a[(n - 1) / 4096 * 4096] == (unsigned char)((n - 1) / 4096 * 7),
          "unpacked bytes");
    /* external32: ints 1, 2, 3, ... come out big-endian. */
    MPI_Count ni = n / 4;
    int32_t *ints = (int32_t *)a;
    for (MPI_Count i = 0; i < ni; i++)
        ints[i] = (int32_t)i;
    pos = 0;
    CHECK(MPI_Pack_external_c("external32", a, ni, MPI_INT, b, n, &pos) == MPI_SUCCESS &&
          pos == 4 * ni, "pack_external_c");
    MPI_Count last = (ni - 1) * 4;
    CHECK(b[last + 3] == (unsigned char)(ni - 1) && b[last] == (unsigned char)((ni - 1) >> 24),
          "big-endian ints");
    memset(a, 0, (size_t)n);
    pos = 0;
    CHECK(MPI_Unpack_external_c("external32", b, n, &pos, a, ni, MPI_INT) == MPI_SUCCESS &&
          pos == 4 * ni && ints[ni - 1] == (int32_t)(ni - 1) && ints[12345] == 12345,
          "unpack_external_c");
    free(a);
    free(b);
    return mtest_finish();
}
