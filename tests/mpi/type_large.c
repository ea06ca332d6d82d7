/*
 * type_large.c — large counts without large memory: types whose size is
 * beyond INT_MAX (the int queries say MPI_UNDEFINED, the _c and _x ones
 * the value), and types whose extent, strides and displacements are
 * beyond 4 GiB over sparse memory (mmap'ed without reserve: only the
 * touched pages exist), sent between ranks and packed, with counts and
 * element counts read back through the large-count calls.
 */
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "mtest.h"

/* The error class of a return code (an MPI may return codes, not classes). */
static int ecls(int rc)
{
    int c = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

#define GIB ((MPI_Count)1 << 30)

static char *sparse(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* A type of 2^31 + 5 bytes. */
    MPI_Datatype big;
    MPI_Count n = 2 * GIB + 5, c, lb, ext;
    CHECK(MPI_Type_contiguous_c(n, MPI_BYTE, &big) == MPI_SUCCESS, "contiguous_c");
    MPI_Type_commit(&big);
    int s = 0;
    CHECK(MPI_Type_size(big, &s) == MPI_SUCCESS && s == MPI_UNDEFINED, "int size %d", s);
    CHECK(MPI_Type_size_c(big, &c) == MPI_SUCCESS && c == n, "size_c");
    CHECK(MPI_Type_size_x(big, &c) == MPI_SUCCESS && c == n, "size_x");
    CHECK(MPI_Type_get_extent_c(big, &lb, &ext) == MPI_SUCCESS && lb == 0 && ext == n, "extent_c");
    CHECK(MPI_Type_get_extent_x(big, &lb, &ext) == MPI_SUCCESS && ext == n, "extent_x");
    CHECK(MPI_Type_get_true_extent_x(big, &lb, &ext) == MPI_SUCCESS && ext == n, "true_extent_x");
    CHECK(MPI_Pack_size(1, big, MPI_COMM_WORLD, &s) == MPI_SUCCESS && s == MPI_UNDEFINED,
          "int pack size %d", s);
    CHECK(MPI_Pack_size_c(3, big, MPI_COMM_WORLD, &c) == MPI_SUCCESS && c == 3 * n, "pack_size_c");
    MPI_Aint es;
    CHECK(MPI_Pack_external_size("external32", 2, big, &es) == MPI_SUCCESS && es == 2 * n,
          "external size");
    /* Counts from a status holding more than INT_MAX bytes. */
    MPI_Status st;
    MPI_Status_set_elements_c(&st, MPI_BYTE, 2 * n);
    int ic = 0;
    CHECK(MPI_Get_count_c(&st, big, &c) == MPI_SUCCESS && c == 2, "get_count_c");
    CHECK(MPI_Get_count(&st, MPI_BYTE, &ic) == MPI_SUCCESS && ic == MPI_UNDEFINED, "int count");
    CHECK(MPI_Get_elements_x(&st, big, &c) == MPI_SUCCESS && c == 2 * n, "get_elements_x");
    /* A vector of the big type: size over 8 GiB, still O(1) to build. */
    MPI_Datatype vb;
    CHECK(MPI_Type_vector_c(4, 1, 2, big, &vb) == MPI_SUCCESS, "vector of big");
    MPI_Type_size_c(vb, &c);
    MPI_Type_get_extent_c(vb, &lb, &ext);
    CHECK(c == 4 * n && ext == 7 * n, "vector of big: size %lld extent %lld", (long long)c,
          (long long)ext);
    MPI_Type_free(&vb);
    MPI_Type_free(&big);

    /* Sparse: ints at 0, 5 GiB - 4 and 12 GiB + 8 (strides and
     * displacements beyond 32 bits), sent around a ring. */
    size_t span = (size_t)(13 * GIB);
    char *src = sparse(span), *dst = sparse(span);
    CHECK(src && dst, "sparse mappings");
    if (src && dst) {
        MPI_Count disp[3] = {0, 5 * GIB - 4, 12 * GIB + 8};
        MPI_Datatype h, v;
        CHECK(MPI_Type_create_hindexed_block_c(3, 1, disp, MPI_INT, &h) == MPI_SUCCESS, "hib_c");
        MPI_Type_commit(&h);
        MPI_Type_get_extent_c(h, &lb, &ext);
        CHECK(lb == 0 && ext == 12 * GIB + 12, "sparse extent %lld", (long long)ext);
        for (int i = 0; i < 3; i++)
            memcpy(src + disp[i], &(int){rank * 10 + i}, sizeof(int));
        int from = (rank + size - 1) % size, to = (rank + 1) % size;
        CHECK(MPI_Sendrecv(src, 1, h, to, 3, dst, 1, h, from, 3, MPI_COMM_WORLD, &st) ==
              MPI_SUCCESS, "sendrecv of the sparse type");
        for (int i = 0; i < 3; i++) {
            int got;
            memcpy(&got, dst + disp[i], sizeof got);
            CHECK(got == from * 10 + i, "sparse element %d: %d", i, got);
        }
        CHECK(MPI_Get_elements_c(&st, h, &c) == MPI_SUCCESS && c == 3, "elements %lld",
              (long long)c);
        /* A vector with a stride of 2^31 + 1 ints (8 GiB + 4 bytes). */
        CHECK(MPI_Type_vector_c(2, 1, 2 * GIB + 1, MPI_INT, &v) == MPI_SUCCESS, "vector_c");
        MPI_Type_commit(&v);
        memcpy(src + 8 * GIB + 4, &(int){77}, sizeof(int));
        int packed[2] = {0, 0};
        MPI_Count pos = 0;
        CHECK(MPI_Pack_c(src, 1, v, packed, sizeof packed, &pos, MPI_COMM_SELF) == MPI_SUCCESS &&
              pos == 8 && packed[0] == rank * 10 && packed[1] == 77, "pack_c of the strided type");
        pos = 0;
        packed[0] = -1;
        CHECK(MPI_Unpack_c(packed, 8, &pos, dst, 1, v, MPI_COMM_SELF) == MPI_SUCCESS,
              "unpack_c");
        int back;
        memcpy(&back, dst + 8 * GIB + 4, sizeof back);
        CHECK(back == 77, "unpacked at 8 GiB + 4: %d", back);
        MPI_Type_free(&v);
        MPI_Type_free(&h);
        /* An int-count type cannot describe it: the int constructor's
         * element displacement overflows nothing, but its stride in bytes
         * must still be right for large multiples. */
        MPI_Datatype iv;
        MPI_Type_vector(2, 1, INT_MAX, MPI_INT, &iv);
        MPI_Type_get_extent_c(iv, &lb, &ext);
        CHECK(ext == (MPI_Count)INT_MAX * 4 + 4, "int vector extent %lld", (long long)ext);
        MPI_Type_free(&iv);
    }
    if (src)
        munmap(src, span);
    if (dst)
        munmap(dst, span);

    /* Overflow: an extent beyond the address space is refused. */
    MPI_Datatype bad = MPI_DATATYPE_NULL;
    CHECK(ecls(MPI_Type_contiguous_c((MPI_Count)1 << 62, MPI_DOUBLE, &bad)) == MPI_ERR_ARG &&
          bad == MPI_DATATYPE_NULL, "contiguous_c of 2^62 doubles");
    CHECK(ecls(MPI_Type_contiguous_c(-1, MPI_DOUBLE, &bad)) == MPI_ERR_COUNT, "negative count");
    return mtest_finish();
}
