/*
 * Zero-size transfers with committed datatypes of size 0 (a contiguous
 * type of 0 elements, a struct with no blocks) are no-ops that succeed:
 * put, get, accumulate, get_accumulate and their request forms, at every
 * target, on a window with memory, on a window of size 0 and on a dynamic
 * window with nothing attached, in fence and lock epochs, whatever the
 * other sides' types (MPI_INT, MPI_DOUBLE with count 0). Fetch_and_op
 * and Compare_and_swap take one predefined element only, so a derived
 * zero-size type stays MPI_ERR_TYPE there; an uncommitted type stays
 * MPI_ERR_TYPE everywhere.
 */
#include <string.h>

#include "mtest.h"

#define N 8

static int rank, size;

/* Every operation with origin and target type z (0 bytes) at target t;
 * the window memory must not change. */
static void zero_ops(MPI_Win win, MPI_Datatype z, int t, const char *what)
{
    int v[N], r[N];
    for (int i = 0; i < N; i++)
        v[i] = r[i] = 7;
    int err = MPI_Put(v, 1, z, t, 0, 1, z, win);
    CHECK(err == MPI_SUCCESS, "%s: put of a 0-byte type at %d: %d", what, t, err);
    err = MPI_Put(v, 0, MPI_INT, t, 0, 3, z, win);
    CHECK(err == MPI_SUCCESS, "%s: put of 0 ints as 3 x 0-byte type at %d: %d", what, t, err);
    err = MPI_Get(r, 2, z, t, 0, 1, z, win);
    CHECK(err == MPI_SUCCESS, "%s: get of a 0-byte type at %d: %d", what, t, err);
    err = MPI_Accumulate(v, 1, z, t, 0, 1, z, MPI_SUM, win);
    CHECK(err == MPI_SUCCESS, "%s: accumulate (sum) of a 0-byte type at %d: %d", what, t, err);
    err = MPI_Accumulate(v, 4, z, t, 0, 4, z, MPI_REPLACE, win);
    CHECK(err == MPI_SUCCESS, "%s: accumulate (replace) of a 0-byte type at %d: %d", what, t,
          err);
    err = MPI_Get_accumulate(v, 1, z, r, 1, z, t, 0, 1, z, MPI_SUM, win);
    CHECK(err == MPI_SUCCESS, "%s: get_accumulate of a 0-byte type at %d: %d", what, t, err);
    err = MPI_Get_accumulate(NULL, 0, z, r, 1, z, t, 0, 1, z, MPI_NO_OP, win);
    CHECK(err == MPI_SUCCESS, "%s: get_accumulate (no_op) of a 0-byte type at %d: %d", what, t,
          err);
    for (int i = 0; i < N; i++)
        CHECK(r[i] == 7, "%s: a 0-byte fetch from %d wrote result[%d]", what, t, i);
}

/* The request forms (in a passive epoch). */
static void zero_rops(MPI_Win win, MPI_Datatype z, int t, const char *what)
{
    int v[N] = { 0 }, r[N] = { 0 };
    MPI_Request req[4];
    int err[4];
    err[0] = MPI_Rput(v, 1, z, t, 0, 1, z, win, &req[0]);
    err[1] = MPI_Rget(r, 1, z, t, 0, 1, z, win, &req[1]);
    err[2] = MPI_Raccumulate(v, 1, z, t, 0, 1, z, MPI_MAX, win, &req[2]);
    err[3] = MPI_Rget_accumulate(v, 1, z, r, 1, z, t, 0, 1, z, MPI_SUM, win, &req[3]);
    for (int i = 0; i < 4; i++) {
        CHECK(err[i] == MPI_SUCCESS, "%s: request op %d with a 0-byte type at %d: %d", what, i,
              t, err[i]);
        if (err[i] != MPI_SUCCESS)
            req[i] = MPI_REQUEST_NULL;
    }
    MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
}

/* 0 bytes on every side, from any mix of types: zero-size ones with
 * counts 1 and 2, int and double ones with count 0. Accumulates of 0
 * bytes have no elements whose kinds could disagree. */
static void mixed_ops(MPI_Win win, MPI_Datatype z, int t)
{
    MPI_Datatype one;
    MPI_Type_contiguous(1, MPI_INT, &one);
    MPI_Type_commit(&one);
    MPI_Datatype ty[4] = { z, one, MPI_INT, MPI_DOUBLE };
    int v[N] = { 0 }, r[N] = { 0 };
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 4; k++) {
                int oc = i ? 0 : 1 + k % 2, rc = j ? 0 : 2 - i % 2, tc = k ? 0 : 1 + j % 2;
                int err[4];
                err[0] = MPI_Put(v, oc, ty[i], t, 0, tc, ty[k], win);
                err[1] = MPI_Get(r, oc, ty[i], t, 0, tc, ty[k], win);
                err[2] = MPI_Accumulate(v, oc, ty[i], t, 0, tc, ty[k], MPI_SUM, win);
                err[3] = MPI_Get_accumulate(v, oc, ty[i], r, rc, ty[j], t, 0, tc, ty[k],
                                            MPI_SUM, win);
                for (int e = 0; e < 4; e++)
                    CHECK(err[e] == MPI_SUCCESS,
                          "op %d of 0 bytes (types %d/%d/%d counts %d/%d/%d) at %d: %d", e, i, j,
                          k, oc, rc, tc, t, err[e]);
            }
    MPI_Type_free(&one);
}

/* Fence and lock epochs over every target of win. */
static void epochs(MPI_Win win, MPI_Datatype z, const char *what)
{
    MPI_Win_fence(0, win);
    for (int t = 0; t < size; t++) {
        zero_ops(win, z, t, what);
        mixed_ops(win, z, t);
    }
    MPI_Win_fence(0, win);
    for (int t = 0; t < size; t++) {
        MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
        zero_ops(win, z, t, what);
        zero_rops(win, z, t, what);
        int err = MPI_Win_unlock(t, win);
        CHECK(err == MPI_SUCCESS, "%s: unlock %d after 0-byte ops: %d", what, t, err);
    }
}

/* The types that must still be refused. */
static void refusals(MPI_Win win, MPI_Datatype z, MPI_Datatype uncommitted)
{
    int v = 1, r = 0, c = 0, cls = MPI_SUCCESS;
    int t = (rank + 1) % size;
    MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
    int err = MPI_Fetch_and_op(&v, &r, z, t, 0, MPI_SUM, win);
    MPI_Error_class(err, &cls);
    CHECK(cls == MPI_ERR_TYPE, "fetch_and_op with a derived type: class %d", cls);
    err = MPI_Compare_and_swap(&v, &c, &r, z, t, 0, win);
    MPI_Error_class(err, &cls);
    CHECK(cls == MPI_ERR_TYPE, "compare_and_swap with a derived type: class %d", cls);
    err = MPI_Put(&v, 1, uncommitted, t, 0, 1, uncommitted, win);
    MPI_Error_class(err, &cls);
    CHECK(cls == MPI_ERR_TYPE, "put with an uncommitted type: class %d", cls);
    err = MPI_Accumulate(&v, 1, uncommitted, t, 0, 1, uncommitted, MPI_SUM, win);
    MPI_Error_class(err, &cls);
    CHECK(cls == MPI_ERR_TYPE, "accumulate with an uncommitted type: class %d", cls);
    MPI_Win_unlock(t, win);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Datatype zc, zs, loose;
    MPI_Type_contiguous(0, MPI_INT, &zc);
    MPI_Type_commit(&zc);
    MPI_Type_create_struct(0, NULL, NULL, NULL, &zs);
    MPI_Type_commit(&zs);
    MPI_Type_contiguous(0, MPI_INT, &loose);   /* never committed */

    int mem[N];
    for (int i = 0; i < N; i++)
        mem[i] = 100 + i;
    MPI_Win win, win0, dyn;
    MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_create(NULL, 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win0);
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Win_set_errhandler(win0, MPI_ERRORS_RETURN);
    MPI_Win_set_errhandler(dyn, MPI_ERRORS_RETURN);

    epochs(win, zc, "contiguous(0)");
    epochs(win, zs, "struct(0)");
    epochs(win0, zc, "size-0 window");
    epochs(dyn, zc, "dynamic window");
    refusals(win, zc, loose);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < N; i++)
        CHECK(mem[i] == 100 + i, "window memory [%d] changed to %d", i, mem[i]);

    MPI_Win_free(&win);
    MPI_Win_free(&win0);
    MPI_Win_free(&dyn);
    MPI_Type_free(&zc);
    MPI_Type_free(&zs);
    MPI_Type_free(&loose);
    return mtest_finish();
}
