/*
 * Intercommunicators: MPI_Intercomm_create between the even and the odd
 * ranks of MPI_COMM_WORLD (leaders 0 and 1), the queries, point-to-point
 * across (ranks are the remote group's; status names the remote source),
 * MPI_Intercomm_merge with either group low and with equal "high", dup,
 * split and create on the intercommunicator, compare, and the error
 * classes of intercommunicator misuse. Needs >= 2 ranks.
 */
#include <stdlib.h>

#include "mtest.h"

static int rank, size;

static int err_class(int rc)
{
    int c = MPI_SUCCESS;
    MPI_Error_class(rc, &c);
    return c;
}

/* Every member sends its local rank to every remote member and checks
 * what it receives: remote rank i sent i. */
static void cross_traffic(MPI_Comm ic, const char *what)
{
    int lsize, rsize, lrank;
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);
    MPI_Comm_rank(ic, &lrank);
    MPI_Request *reqs = malloc(sizeof *reqs * (size_t)(2 * rsize));
    int *in = malloc(sizeof *in * (size_t)rsize);
    for (int i = 0; i < rsize; i++) {
        in[i] = -1;
        MPI_Irecv(&in[i], 1, MPI_INT, i, 7, ic, &reqs[i]);
    }
    for (int i = 0; i < rsize; i++)
        MPI_Isend(&lrank, 1, MPI_INT, i, 7, ic, &reqs[rsize + i]);
    MPI_Status *st = malloc(sizeof *st * (size_t)(2 * rsize));
    MPI_Waitall(2 * rsize, reqs, st);
    for (int i = 0; i < rsize; i++) {
        CHECK(in[i] == i, "%s: from remote %d got %d", what, i, in[i]);
        CHECK(st[i].MPI_SOURCE == i, "%s: status source %d, expected %d", what,
              st[i].MPI_SOURCE, i);
    }
    /* A wildcard receive names the remote rank too. */
    if (lrank == 0) {
        int v = -1;
        MPI_Status s;
        MPI_Send(&lrank, 1, MPI_INT, 0, 8, ic);
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 8, ic, &s);
        CHECK(s.MPI_SOURCE == 0 && v == 0, "%s: any-source got %d from %d", what, v, s.MPI_SOURCE);
    }
    free(reqs);
    free(in);
    free(st);
}

/* Checks a merged communicator: size, my rank, members in the order the
 * high flags say. */
static void check_merge(MPI_Comm ic, int high, int even_first, const char *what)
{
    MPI_Comm m;
    MPI_Intercomm_merge(ic, high, &m);
    int n, r, neven = (size + 1) / 2;
    MPI_Comm_size(m, &n);
    MPI_Comm_rank(m, &r);
    CHECK(n == size, "%s: merged size %d", what, n);
    int want = rank % 2 == 0 ? (even_first ? rank / 2 : size - neven + rank / 2)
                             : (even_first ? neven + rank / 2 : rank / 2);
    CHECK(r == want, "%s: merged rank %d, expected %d", what, r, want);
    /* The merged communicator carries collectives over everyone. */
    int sum = 0, mine = rank;
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, m);
    CHECK(sum == size * (size - 1) / 2, "%s: allreduce %d", what, sum);
    MPI_Comm_free(&m);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        printf("intercomm needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm half, ic;
    int even = rank % 2 == 0;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, even ? 1 : 0, 42, &ic);

    int flag = 0, n, rn, r;
    MPI_Comm_test_inter(ic, &flag);
    CHECK(flag, "test_inter on an intercommunicator");
    MPI_Comm_test_inter(half, &flag);
    CHECK(!flag, "test_inter on an intracommunicator");
    int neven = (size + 1) / 2, nodd = size / 2;
    MPI_Comm_size(ic, &n);
    MPI_Comm_remote_size(ic, &rn);
    MPI_Comm_rank(ic, &r);
    CHECK(n == (even ? neven : nodd) && rn == (even ? nodd : neven) && r == rank / 2,
          "sizes %d/%d rank %d", n, rn, r);
    /* The remote group lists the other parity's world ranks in order. */
    MPI_Group rg, wg;
    MPI_Comm_remote_group(ic, &rg);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int *idx = malloc(sizeof *idx * (size_t)size), *w = malloc(sizeof *w * (size_t)size);
    for (int i = 0; i < rn; i++)
        idx[i] = i;
    MPI_Group_translate_ranks(rg, rn, idx, wg, w);
    for (int i = 0; i < rn; i++)
        CHECK(w[i] == 2 * i + (even ? 1 : 0), "remote member %d is world %d", i, w[i]);
    MPI_Group_free(&rg);
    MPI_Group lg;
    MPI_Comm_group(ic, &lg);
    int lgs;
    MPI_Group_size(lg, &lgs);
    CHECK(lgs == n, "local group size %d", lgs);
    MPI_Group_free(&lg);

    cross_traffic(ic, "intercomm");

    /* Merge: the group that says high goes last, either way round; with
     * equal flags the group with world rank 0 goes first. */
    check_merge(ic, even ? 0 : 1, 1, "merge even low");
    check_merge(ic, even ? 1 : 0, 0, "merge odd low");
    check_merge(ic, 0, 1, "merge equal");

    /* Dup: congruent, its own context (no cross-talk with ic). */
    MPI_Comm icd;
    MPI_Comm_dup(ic, &icd);
    int res;
    MPI_Comm_compare(ic, icd, &res);
    CHECK(res == MPI_CONGRUENT, "compare dup: %d", res);
    MPI_Comm_compare(ic, half, &res);
    CHECK(res == MPI_UNEQUAL, "compare inter/intra: %d", res);
    MPI_Comm_test_inter(icd, &flag);
    CHECK(flag, "dup of an intercommunicator is one");
    int v = rank, got = -1;
    if (r == 0) {
        MPI_Request q;
        MPI_Irecv(&got, 1, MPI_INT, 0, 3, ic, &q);
        MPI_Send(&v, 1, MPI_INT, 0, 3, icd);   /* must not match the ic receive */
        int done = 0;
        MPI_Test(&q, &done, MPI_STATUS_IGNORE);
        MPI_Recv(&got, 1, MPI_INT, 0, 3, icd, MPI_STATUS_IGNORE);
        CHECK(got == (even ? 1 : 0), "dup traffic: got %d", got);
        MPI_Send(&v, 1, MPI_INT, 0, 3, ic);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        CHECK(got == (even ? 1 : 0), "ic traffic after dup: got %d", got);
    }
    cross_traffic(icd, "dup");

    /* Split: color by (local rank % 2): color 0 pairs local ranks 0, 2, ...
     * of both groups; the key reverses the order. */
    MPI_Comm ics;
    MPI_Comm_split(ic, r % 2, -r, &ics);
    int ls = (n - r % 2 + 1) / 2, rs = (rn - r % 2 + 1) / 2;
    if (rs == 0) {
        CHECK(ics == MPI_COMM_NULL, "split with no remote peer of my color");
    } else {
        int sn, srn, sr;
        MPI_Comm_size(ics, &sn);
        MPI_Comm_remote_size(ics, &srn);
        MPI_Comm_rank(ics, &sr);
        CHECK(sn == ls && srn == rs, "split sizes %d/%d expected %d/%d", sn, srn, ls, rs);
        CHECK(sr == ls - 1 - r / 2, "split rank %d", sr);
        cross_traffic(ics, "split");
        MPI_Comm_free(&ics);
    }
    /* Undefined color: MPI_COMM_NULL, the others still split. */
    MPI_Comm_split(ic, r == 0 ? MPI_UNDEFINED : 1, 0, &ics);
    CHECK((r == 0) == (ics == MPI_COMM_NULL), "split undefined");
    if (ics != MPI_COMM_NULL)
        MPI_Comm_free(&ics);

    /* Create: each side keeps its local rank 0 only. */
    MPI_Group l0;
    MPI_Comm_group(ic, &lg);
    int zero = 0;
    MPI_Group_incl(lg, 1, &zero, &l0);
    MPI_Comm icc;
    MPI_Comm_create(ic, l0, &icc);
    CHECK((r == 0) == (icc != MPI_COMM_NULL), "create: mine %d", icc != MPI_COMM_NULL);
    if (icc != MPI_COMM_NULL) {
        MPI_Comm_remote_size(icc, &rn);
        CHECK(rn == 1, "create: remote size %d", rn);
        cross_traffic(icc, "create");
        MPI_Comm_free(&icc);
    }
    MPI_Group_free(&l0);
    MPI_Group_free(&lg);

    /* Misuse. */
    int rc = MPI_Intercomm_merge(half, 0, &icc);
    CHECK(err_class(rc) == MPI_ERR_COMM, "merge of an intracommunicator: %d", err_class(rc));
    rc = MPI_Comm_remote_size(half, &rn);
    CHECK(err_class(rc) == MPI_ERR_COMM, "remote_size of an intracommunicator: %d", err_class(rc));
    MPI_Group g;
    rc = MPI_Comm_remote_group(half, &g);
    CHECK(err_class(rc) == MPI_ERR_COMM, "remote_group of an intracommunicator");
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    int x = 1, y = 0;
    rc = MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, ic);
    CHECK(err_class(rc) == MPI_ERR_COMM, "scan on an intercommunicator: %d", err_class(rc));
    rc = MPI_Exscan(&x, &y, 1, MPI_INT, MPI_SUM, ic);
    CHECK(err_class(rc) == MPI_ERR_COMM, "exscan on an intercommunicator: %d", err_class(rc));
    rc = MPI_Intercomm_create(ic, 0, MPI_COMM_WORLD, 0, 1, &icc);
    CHECK(err_class(rc) == MPI_ERR_COMM, "intercomm_create from an intercommunicator");
    rc = MPI_Cart_create(ic, 0, NULL, NULL, 0, &icc);
    CHECK(err_class(rc) == MPI_ERR_COMM, "cart_create on an intercommunicator: %d", err_class(rc));
    /* split_type on an intercommunicator: the processes of both groups on
     * my node (here: everyone), or none. */
    rc = MPI_Comm_split_type(ic, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &icc);
    CHECK(rc == MPI_SUCCESS && icc != MPI_COMM_NULL, "split_type shared on an intercommunicator");
    if (icc != MPI_COMM_NULL) {
        int sn, srn;
        MPI_Comm_test_inter(icc, &flag);
        MPI_Comm_size(icc, &sn);
        MPI_Comm_remote_size(icc, &srn);
        CHECK(flag && sn == n && srn == (even ? nodd : neven), "split_type shared: %d/%d", sn,
              srn);
        cross_traffic(icc, "split_type shared");
        MPI_Comm_free(&icc);
    }
    MPI_Comm_split_type(ic, MPI_UNDEFINED, 0, MPI_INFO_NULL, &icc);
    CHECK(icc == MPI_COMM_NULL, "split_type undefined on an intercommunicator");
    rc = MPI_Comm_create_group(ic, wg, 0, &icc);
    CHECK(err_class(rc) == MPI_ERR_COMM, "create_group on an intercommunicator");
    rc = MPI_Intercomm_create(half, n, MPI_COMM_WORLD, 0, 1, &icc);
    CHECK(err_class(rc) == MPI_ERR_RANK, "local leader out of range: %d", err_class(rc));

    MPI_Group_free(&wg);
    MPI_Comm_free(&icd);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&half);
    free(idx);
    free(w);
    return mtest_finish();
}
