/*
 * A datatype's memory does not grow with its count: MPI_Type_vector of
 * about INT_MAX/2 ints, resized (the case that once made a 24 GB type map
 * and met the OOM killer), duplicated, repeated by contiguous and hvector,
 * wrapped in one-block indexed and struct types, and a vector of vectors --
 * each built, queried, committed and freed within a few hundred MB of
 * address space (RLIMIT_AS, so that a type that does grow fails here with
 * MPI_ERR_NO_MEM instead of taking the machine down), and with the
 * resident size growing by less than 32 MB. Sizes and extents are checked
 * through the large-count queries; small versions of the same nestings are
 * packed against the plain loop.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "mtest.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* A field of /proc/self/status in kB, or -1. */
static long status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0 && line[n] == ':')
            v = strtol(line + n + 1, NULL, 10);
    if (f)
        fclose(f);
    return v;
}

/* Queries, commit and free of a type made by the caller (rc its return
 * code); size and extent must be as given. */
static void check_type(const char *what, int rc, MPI_Datatype *t, MPI_Count size,
                       MPI_Count extent)
{
    CHECK(rc == MPI_SUCCESS, "%s: rc %d", what, rc);
    if (rc != MPI_SUCCESS)
        return;
    MPI_Count sz = -1, lb = -1, ext = -1;
    MPI_Type_size_c(*t, &sz);
    MPI_Type_get_extent_c(*t, &lb, &ext);
    CHECK(sz == size && ext == extent, "%s: size %lld extent %lld, want %lld %lld", what,
          (long long)sz, (long long)ext, (long long)size, (long long)extent);
    CHECK(MPI_Type_commit(t) == MPI_SUCCESS, "%s: commit", what);
}

static void huge(void)
{
    const MPI_Count n = INT_MAX / 2;
    const MPI_Count vsize = n * 4, vext = ((n - 1) * 2 + 1) * 4;
    MPI_Datatype vec, res, dup, cont, hvec, idx, st, vv, sub;
    long rss0 = status_kb("VmRSS");

    int rc = MPI_Type_vector((int)n, 1, 2, MPI_INT, &vec);
    check_type("vector", rc, &vec, vsize, vext);
    if (rc != MPI_SUCCESS)
        return;
    rc = MPI_Type_create_resized(vec, 0, 8, &res);
    check_type("resized(vector)", rc, &res, vsize, 8);
    if (rc == MPI_SUCCESS) {
        MPI_Count tlb = -1, text = -1;
        MPI_Type_get_true_extent_c(res, &tlb, &text);
        CHECK(tlb == 0 && text == vext, "resized true extent %lld %lld", (long long)tlb,
              (long long)text);
        rc = MPI_Type_dup(res, &dup);
        check_type("dup(resized)", rc, &dup, vsize, 8);
        if (rc == MPI_SUCCESS)
            MPI_Type_free(&dup);
        MPI_Type_free(&res);
    }
    rc = MPI_Type_contiguous(3, vec, &cont);
    check_type("contiguous(3, vector)", rc, &cont, 3 * vsize, 3 * vext);
    if (rc == MPI_SUCCESS)
        MPI_Type_free(&cont);
    rc = MPI_Type_create_hvector(2, 1, vext + 4, vec, &hvec);
    check_type("hvector(2, vector)", rc, &hvec, 2 * vsize, 2 * vext + 4);
    if (rc == MPI_SUCCESS)
        MPI_Type_free(&hvec);
    int bl = 1, disp = 3;
    rc = MPI_Type_indexed(1, &bl, &disp, vec, &idx);
    check_type("indexed(1 block of vector)", rc, &idx, vsize, vext);
    if (rc == MPI_SUCCESS)
        MPI_Type_free(&idx);
    MPI_Aint sdisp = 16;
    rc = MPI_Type_create_struct(1, &bl, &sdisp, &vec, &st);
    check_type("struct(vector)", rc, &st, vsize, vext);
    if (rc == MPI_SUCCESS)
        MPI_Type_free(&st);
    MPI_Type_free(&vec);

    /* A vector of vectors: 2^15 x 2^15 ints every other one, and a subarray
     * (one block per dimension) of a large 2-D array. */
    MPI_Datatype row;
    rc = MPI_Type_vector(1 << 15, 1, 2, MPI_INT, &row);
    if (rc == MPI_SUCCESS) {
        MPI_Aint rext = (((MPI_Aint)1 << 15) * 2 - 1) * 4;
        rc = MPI_Type_create_hvector(1 << 15, 1, rext + 4, row, &vv);
        check_type("vector(vector)", rc, &vv, (MPI_Count)1 << 32, ((1 << 15) - 1) * (rext + 4) + rext);
        if (rc == MPI_SUCCESS)
            MPI_Type_free(&vv);
        MPI_Type_free(&row);
    }
    int sizes[2] = { 1 << 16, 1 << 16 }, subs[2] = { 1 << 15, 1 << 15 }, starts[2] = { 5, 7 };
    rc = MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &sub);
    check_type("subarray", rc, &sub, (MPI_Count)1 << 32, (MPI_Count)1 << 34);
    if (rc == MPI_SUCCESS)
        MPI_Type_free(&sub);

    long grown = status_kb("VmRSS") - rss0;
    CHECK(rss0 < 0 || grown < 32 * 1024, "resident size grew by %ld kB", grown);
}

/* The same nestings, small, packed against the plain loop over the ints
 * they select. */
static void small(void)
{
    enum { N = 7, R = 3 };
    int buf[4 * N * R + 64], out[N * R * 2], want[N * R * 2];
    for (int i = 0; i < (int)(sizeof buf / sizeof *buf); i++)
        buf[i] = i;
    MPI_Datatype vec, res, cont, vv;
    MPI_Type_vector(N, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, 4, &res);   /* overlapping: starts one int apart */
    MPI_Type_contiguous(R, res, &cont);
    MPI_Type_commit(&cont);
    int pos = 0;
    MPI_Pack(buf, 1, cont, out, sizeof out, &pos, MPI_COMM_SELF);
    for (int r = 0, k = 0; r < R; r++)
        for (int i = 0; i < N; i++)
            want[k++] = r + 2 * i;
    CHECK(pos == N * R * 4 && !memcmp(out, want, (size_t)pos), "contiguous(resized(vector))");
    MPI_Type_create_hvector(R, 1, (2 * N + 1) * 4, vec, &vv);
    MPI_Type_commit(&vv);
    pos = 0;
    MPI_Pack(buf, 2, vv, out, sizeof out, &pos, MPI_COMM_SELF);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(vv, &lb, &ext);
    for (int e = 0, k = 0; e < 2; e++)
        for (int r = 0; r < R; r++)
            for (int i = 0; i < N; i++)
                want[k++] = (int)(e * ext / 4) + r * (2 * N + 1) + 2 * i;
    CHECK(pos == 2 * N * R * 4 && !memcmp(out, want, (size_t)pos), "hvector(vector) x 2");
    int back[4 * N * R + 64];
    memset(back, -1, sizeof back);
    int upos = 0;
    MPI_Unpack(out, pos, &upos, back, 2, vv, MPI_COMM_SELF);
    int ok = upos == pos;
    for (int k = 0; k < 2 * N * R; k++)
        ok &= back[want[k]] == want[k];
    CHECK(ok, "unpack of hvector(vector) x 2");
    MPI_Type_free(&vv);
    MPI_Type_free(&cont);
    MPI_Type_free(&res);
    MPI_Type_free(&vec);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
#ifndef UNDER_ASAN
    /* A few hundred MB beyond what the process maps now (ASan's shadow
     * makes the address-space limit meaningless there; RSS still counts). */
    long vm = status_kb("VmSize");
    struct rlimit rl;
    if (vm > 0 && getrlimit(RLIMIT_AS, &rl) == 0) {
        rlim_t want = (rlim_t)(vm + 384 * 1024) * 1024;
        if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want) {
            rl.rlim_cur = want;
            CHECK(setrlimit(RLIMIT_AS, &rl) == 0, "setrlimit");
        }
    }
#endif
    small();
    huge();
    return mtest_finish();
}
