/*
 * Info hints (MPI_Comm_set_info / get_info: kept, merged, copied by dup,
 * replaced by dup_with_info), MPI_Comm_create_group (only the members
 * call; two overlapping groups with their own tags), MPI_Comm_create with a
 * group outside the communicator, and MPI_Comm_compare. Needs >= 2 ranks.
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

static int rank, size;

static int hint_is(MPI_Comm c, const char *key, const char *want)
{
    MPI_Info info;
    char v[128];
    int len = sizeof v, flag = 0;
    MPI_Comm_get_info(c, &info);
    MPI_Info_get_string(info, key, &len, v, &flag);
    MPI_Info_free(&info);
    return want ? flag && !strcmp(v, want) : !flag;
}

static void ring(MPI_Comm c, const char *what)
{
    int r, n, got = -1;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    MPI_Sendrecv(&r, 1, MPI_INT, (r + 1) % n, 0, &got, 1, MPI_INT, (r + n - 1) % n, 0, c,
                 MPI_STATUS_IGNORE);
    CHECK(got == (r + n - 1) % n, "%s: ring got %d", what, got);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Hints. */
    MPI_Comm c, d, e;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    CHECK(hint_is(c, "mpi_assert_no_any_tag", NULL), "no hints at first");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    MPI_Info_set(info, "locus_note", "first");
    MPI_Comm_set_info(c, info);
    MPI_Info_free(&info);
    CHECK(hint_is(c, "mpi_assert_no_any_tag", "true") && hint_is(c, "locus_note", "first"),
          "hints kept");
    MPI_Info_create(&info);
    MPI_Info_set(info, "locus_note", "second");
    MPI_Comm_set_info(c, info);
    MPI_Info_free(&info);
    CHECK(hint_is(c, "mpi_assert_no_any_tag", "true") && hint_is(c, "locus_note", "second"),
          "set_info merges");
    MPI_Comm_set_info(c, MPI_INFO_NULL);
    CHECK(hint_is(c, "locus_note", "second"), "set_info(MPI_INFO_NULL) changes nothing");
    MPI_Comm_dup(c, &d);
    CHECK(hint_is(d, "locus_note", "second"), "dup copies the hints");
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_allow_overtaking", "true");
    MPI_Comm_dup_with_info(c, info, &e);
    MPI_Info_free(&info);
    CHECK(hint_is(e, "mpi_assert_allow_overtaking", "true") && hint_is(e, "locus_note", NULL),
          "dup_with_info replaces the hints");
    ring(e, "dup_with_info");
    MPI_Comm_free(&e);
    MPI_Comm_dup_with_info(c, MPI_INFO_NULL, &e);
    CHECK(hint_is(e, "locus_note", NULL), "dup_with_info(MPI_INFO_NULL): no hints");
    MPI_Comm_free(&e);
    MPI_Comm_free(&d);

    /* create_group: the even ranks (tag 5), then the first half (tag 6);
     * only members call. */
    MPI_Group world, evens, first;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int range[1][3] = { { 0, size - 1, 2 } };
    MPI_Group_range_incl(world, 1, range, &evens);
    int half = (size + 1) / 2, fr[1][3] = { { 0, half - 1, 1 } };
    MPI_Group_range_incl(world, 1, fr, &first);
    MPI_Comm ge = MPI_COMM_NULL, gf = MPI_COMM_NULL;
    if (rank % 2 == 0)
        MPI_Comm_create_group(MPI_COMM_WORLD, evens, 5, &ge);
    if (rank < half)
        MPI_Comm_create_group(MPI_COMM_WORLD, first, 6, &gf);
    if (ge != MPI_COMM_NULL) {
        int n, r;
        MPI_Comm_size(ge, &n);
        MPI_Comm_rank(ge, &r);
        CHECK(n == (size + 1) / 2 && r == rank / 2, "create_group evens: %d of %d", r, n);
        ring(ge, "create_group evens");
    }
    CHECK((rank % 2 == 0) == (ge != MPI_COMM_NULL), "create_group evens membership");
    CHECK((rank < half) == (gf != MPI_COMM_NULL), "create_group first half membership");
    /* Both rings at once with the same tag (ranks 0 and 2 are in both):
     * the two communicators' contexts keep them apart. */
    MPI_Comm both[2] = { ge, gf };
    MPI_Request q[4];
    int nq = 0, in[2] = { -1, -1 }, out[2], prev[2];
    for (int k = 0; k < 2; k++) {
        if (both[k] == MPI_COMM_NULL)
            continue;
        int r, n;
        MPI_Comm_rank(both[k], &r);
        MPI_Comm_size(both[k], &n);
        out[k] = 100 * (k + 1) + r;
        prev[k] = (r + n - 1) % n;
        MPI_Irecv(&in[k], 1, MPI_INT, prev[k], 0, both[k], &q[nq++]);
        MPI_Isend(&out[k], 1, MPI_INT, (r + 1) % n, 0, both[k], &q[nq++]);
    }
    MPI_Waitall(nq, q, MPI_STATUSES_IGNORE);
    for (int k = 0; k < 2; k++)
        if (both[k] != MPI_COMM_NULL)
            CHECK(in[k] == 100 * (k + 1) + prev[k], "create_group communicator %d got %d", k,
                  in[k]);
    if (gf != MPI_COMM_NULL) {
        ring(gf, "create_group first half");
        MPI_Comm_free(&gf);
    }
    if (ge != MPI_COMM_NULL)
        MPI_Comm_free(&ge);

    /* create from a group with members outside the communicator. */
    MPI_Comm hc, bad;
    MPI_Comm_split(MPI_COMM_WORLD, rank < half, rank, &hc);
    MPI_Comm_set_errhandler(hc, MPI_ERRORS_RETURN);
    int rc = MPI_Comm_create(hc, world, &bad), cls;
    MPI_Error_class(rc, &cls);
    CHECK(size == 1 || cls == MPI_ERR_GROUP, "create with outsiders: class %d", cls);
    rc = MPI_Comm_create_group(hc, world, 1, &bad);
    MPI_Error_class(rc, &cls);
    CHECK(size == 1 || cls == MPI_ERR_GROUP, "create_group with outsiders: class %d", cls);
    rc = MPI_Comm_create_group(hc, MPI_GROUP_NULL, 1, &bad);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_GROUP, "create_group with MPI_GROUP_NULL: class %d", cls);
    int res;
    MPI_Comm_compare(MPI_COMM_WORLD, c, &res);
    CHECK(res == MPI_CONGRUENT, "compare world with its dup: %d", res);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &d);
    MPI_Comm_compare(MPI_COMM_WORLD, d, &res);
    CHECK(res == (size == 1 ? MPI_CONGRUENT : MPI_SIMILAR), "compare reversed: %d", res);
    MPI_Comm_free(&d);
    MPI_Comm_free(&hc);
    MPI_Group_free(&world);
    MPI_Group_free(&evens);
    MPI_Group_free(&first);
    MPI_Comm_free(&c);
    return mtest_finish();
}
