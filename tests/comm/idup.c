/*
 * MPI_Comm_idup(_with_info): overlapped with point-to-point and a
 * nonblocking collective on the parent, several outstanding at once,
 * racing blocking communicator creation on overlapping communicators (the
 * context ids must still all differ: traffic on each must reach only its
 * own receives), on an intercommunicator and on MPI_COMM_SELF; attributes
 * and info hints copied. Needs >= 2 ranks.
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

static int rank, size;

/* A ring shift on c: comm rank r sends tagv + r to r + 1 with tag 0 and
 * checks what r - 1 sent. */
static void ring(MPI_Comm c, int tagv, const char *what)
{
    int r, n, got = -1, v;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    v = tagv + r;
    MPI_Sendrecv(&v, 1, MPI_INT, (r + 1) % n, 0, &got, 1, MPI_INT, (r + n - 1) % n, 0, c,
                 MPI_STATUS_IGNORE);
    CHECK(got == tagv + (r + n - 1) % n, "%s: got %d, expected %d", what, got,
          tagv + (r + n - 1) % n);
}

/* World rank of rank r of c. */
static int world_rank_of(MPI_Comm c, int r)
{
    MPI_Group g, w;
    int out;
    MPI_Comm_group(c, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    MPI_Group_translate_ranks(g, 1, &r, w, &out);
    MPI_Group_free(&g);
    MPI_Group_free(&w);
    return out;
}

/*
 * Several communicators at once, all with the same tag: every rank posts
 * a receive from every other rank on every communicator first, then (after
 * a barrier) sends to each; a payload names its communicator and sender,
 * so messages of two communicators sharing a context id would show up in
 * the wrong receive.
 */
static void isolated(MPI_Comm *cs, int nc, const char *what)
{
    int max = size * nc;
    MPI_Request *q = malloc(sizeof *q * (size_t)(2 * max));
    int *in = malloc(sizeof *in * (size_t)max), *out = malloc(sizeof *out * (size_t)nc);
    int nq = 0;
    for (int k = 0; k < nc; k++) {
        int n;
        MPI_Comm_size(cs[k], &n);
        for (int s = 0; s < n; s++) {
            in[k * size + s] = -1;
            MPI_Irecv(&in[k * size + s], 1, MPI_INT, s, 0, cs[k], &q[nq++]);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < nc; k++) {
        int n;
        MPI_Comm_size(cs[k], &n);
        out[k] = 10000 * (k + 1) + rank;
        for (int d = 0; d < n; d++)
            MPI_Isend(&out[k], 1, MPI_INT, d, 0, cs[k], &q[nq++]);
    }
    MPI_Waitall(nq, q, MPI_STATUSES_IGNORE);
    for (int k = 0; k < nc; k++) {
        int n;
        MPI_Comm_size(cs[k], &n);
        for (int s = 0; s < n; s++) {
            int want = 10000 * (k + 1) + world_rank_of(cs[k], s);
            CHECK(in[k * size + s] == want, "%s: communicator %d, rank %d sent %d, expected %d",
                  what, k, s, in[k * size + s], want);
        }
    }
    free(q);
    free(in);
    free(out);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* An attribute that duplicates copy, and a hint. */
    int key, val = 4242, *pv, flag;
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    MPI_Comm work;
    MPI_Comm_dup(MPI_COMM_WORLD, &work);
    MPI_Comm_set_attr(work, key, &val);
    MPI_Info hint;
    MPI_Info_create(&hint);
    MPI_Info_set(hint, "mpi_assert_no_any_tag", "true");
    MPI_Comm_set_info(work, hint);

    /* 1. Overlap with traffic and a collective on the parent. */
    MPI_Comm d1;
    MPI_Request rq[4];
    int sum = -1, one = 1, tok = rank, got = -1;
    MPI_Comm_idup(work, &d1, &rq[0]);
    /* The handle may be given an error handler before completion (mpi4py
     * does exactly this). */
    CHECK(MPI_Comm_set_errhandler(d1, MPI_ERRORS_RETURN) == MPI_SUCCESS,
          "set_errhandler on a pending idup");
    MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, work, &rq[1]);
    MPI_Irecv(&got, 1, MPI_INT, (rank + size - 1) % size, 9, work, &rq[2]);
    MPI_Isend(&tok, 1, MPI_INT, (rank + 1) % size, 9, work, &rq[3]);
    MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
    CHECK(sum == size, "iallreduce beside idup: %d", sum);
    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(d1, &eh);
    CHECK(eh == MPI_ERRORS_RETURN, "error handler set before completion kept");
    MPI_Errhandler_free(&eh);
    CHECK(got == (rank + size - 1) % size, "traffic beside idup: %d", got);
    int res;
    MPI_Comm_compare(work, d1, &res);
    CHECK(res == MPI_CONGRUENT, "idup compare: %d", res);
    ring(d1, 100, "idup ring");
    MPI_Comm_get_attr(d1, key, &pv, &flag);
    CHECK(flag && *pv == 4242, "idup attribute copied (flag %d)", flag);
    MPI_Info used;
    char v[64];
    int len = sizeof v;
    MPI_Comm_get_info(d1, &used);
    MPI_Info_get_string(used, "mpi_assert_no_any_tag", &len, v, &flag);
    CHECK(flag && !strcmp(v, "true"), "idup keeps the parent's hints (flag %d)", flag);
    MPI_Info_free(&used);

    /* 2. Several at once, then completed in reverse order. */
    MPI_Comm ds[4];
    MPI_Request dq[4];
    for (int k = 0; k < 4; k++)
        MPI_Comm_idup(work, &ds[k], &dq[k]);
    for (int k = 3; k >= 0; k--)
        MPI_Wait(&dq[k], MPI_STATUS_IGNORE);
    MPI_Comm all[6] = { ds[0], ds[1], ds[2], ds[3], d1, work };
    isolated(all, 6, "outstanding idups");

    /* 3. Racing blocking creation on overlapping communicators: halves dup
     * while the idup of the whole is in flight. */
    MPI_Comm half, hdup, d3;
    MPI_Comm_split(work, rank % 2, rank, &half);
    MPI_Request r3;
    MPI_Comm_idup(work, &d3, &r3);
    MPI_Comm_dup(half, &hdup);
    MPI_Wait(&r3, MPI_STATUS_IGNORE);
    MPI_Comm mix[4] = { d3, hdup, half, work };
    isolated(mix, 4, "idup racing dup of halves");

    /* 4. An intercommunicator. */
    MPI_Comm ic, icd;
    MPI_Intercomm_create(half, 0, work, rank % 2 ? 0 : 1, 11, &ic);
    MPI_Request r4;
    MPI_Comm_idup(ic, &icd, &r4);
    int x = rank, y = -1;
    MPI_Bcast(&x, 1, MPI_INT, rank == 0 ? MPI_ROOT : (rank % 2 ? 0 : MPI_PROC_NULL), ic);
    MPI_Wait(&r4, MPI_STATUS_IGNORE);
    MPI_Comm_test_inter(icd, &flag);
    CHECK(flag, "idup of an intercommunicator is one");
    int lr;
    MPI_Comm_rank(icd, &lr);
    if (lr == 0) {
        MPI_Sendrecv(&x, 1, MPI_INT, 0, 1, &y, 1, MPI_INT, 0, 1, icd, MPI_STATUS_IGNORE);
        CHECK(y == 0, "intercomm idup traffic: got %d", y);
    }

    /* 5. With info: the given hints replace the parent's. */
    MPI_Comm d5, s5;
    MPI_Info h5;
    MPI_Info_create(&h5);
    MPI_Info_set(h5, "mpi_assert_exact_length", "true");
    MPI_Request r5[2];
    MPI_Comm_idup_with_info(work, h5, &d5, &r5[0]);
    MPI_Comm_idup(MPI_COMM_SELF, &s5, &r5[1]);
    MPI_Waitall(2, r5, MPI_STATUSES_IGNORE);
    MPI_Comm_get_info(d5, &used);
    len = sizeof v;
    MPI_Info_get_string(used, "mpi_assert_exact_length", &len, v, &flag);
    CHECK(flag && !strcmp(v, "true"), "idup_with_info hint (flag %d)", flag);
    len = sizeof v;
    MPI_Info_get_string(used, "mpi_assert_no_any_tag", &len, v, &flag);
    CHECK(!flag, "idup_with_info dropped the parent's hints");
    MPI_Info_free(&used);
    int ss;
    MPI_Comm_size(s5, &ss);
    CHECK(ss == 1, "idup of MPI_COMM_SELF: size %d", ss);
    ring(d5, 500, "idup_with_info ring");

    MPI_Comm *frees[] = { &d1, &ds[0], &ds[1], &ds[2], &ds[3], &half, &hdup, &d3, &ic, &icd,
                          &d5, &s5, &work };
    for (size_t k = 0; k < sizeof frees / sizeof frees[0]; k++)
        MPI_Comm_free(frees[k]);
    MPI_Info_free(&hint);
    MPI_Info_free(&h5);
    MPI_Comm_free_keyval(&key);
    return mtest_finish();
}
