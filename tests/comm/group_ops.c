/*
 * Group operations against a reference computed here: union,
 * intersection, difference, range_incl/excl (positive and negative
 * strides), translate_ranks (MPI_PROC_NULL, members missing from the
 * target), and the error classes of bad arguments. Any number of ranks.
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

static int size;

/* The world ranks of g's members, in order (via translate_ranks). */
static int members(MPI_Group g, int *out)
{
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int n;
    MPI_Group_size(g, &n);
    int *r = malloc(sizeof *r * (size_t)(n + 1));
    for (int i = 0; i < n; i++)
        r[i] = i;
    MPI_Group_translate_ranks(g, n, r, world, out);
    MPI_Group_free(&world);
    free(r);
    return n;
}

static void expect_members(MPI_Group g, const int *want, int n, const char *what)
{
    int *got = malloc(sizeof *got * (size_t)(size + 1));
    int m = members(g, got);
    CHECK(m == n, "%s: size %d, expected %d", what, m, n);
    for (int i = 0; i < n && i < m; i++)
        CHECK(got[i] == want[i], "%s: member %d is %d, expected %d", what, i, got[i], want[i]);
    /* My rank in the group is where I appear, or MPI_UNDEFINED. */
    int me, r, at = MPI_UNDEFINED;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    for (int i = 0; i < n; i++)
        if (want[i] == me)
            at = i;
    MPI_Group_rank(g, &r);
    CHECK(r == at, "%s: my rank %d, expected %d", what, r, at);
    free(got);
}

static int has(const int *a, int n, int v)
{
    for (int i = 0; i < n; i++)
        if (a[i] == v)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int n = size;
    size_t cap = sizeof(int) * (size_t)(2 * n + 4);
    int *a = calloc(1, cap), *b = calloc(1, cap), *ref = calloc(1, cap);

    /* A: the even ranks descending; B: ranks 1.. ascending (overlapping). */
    int na = 0, nb = 0;
    for (int r = n - 1; r >= 0; r--)
        if (r % 2 == 0)
            a[na++] = r;
    for (int r = 1; r < n; r++)
        b[nb++] = r;
    MPI_Group ga, gb, g;
    MPI_Group_incl(world, na, a, &ga);
    MPI_Group_incl(world, nb, b, &gb);

    /* Union: A's order, then B's members not in A. */
    int k = 0;
    for (int i = 0; i < na; i++)
        ref[k++] = a[i];
    for (int i = 0; i < nb; i++)
        if (!has(a, na, b[i]))
            ref[k++] = b[i];
    MPI_Group_union(ga, gb, &g);
    expect_members(g, ref, k, "union");
    MPI_Group_free(&g);

    /* Intersection and difference keep A's order. */
    k = 0;
    for (int i = 0; i < na; i++)
        if (has(b, nb, a[i]))
            ref[k++] = a[i];
    MPI_Group_intersection(ga, gb, &g);
    expect_members(g, ref, k, "intersection");
    MPI_Group_free(&g);
    k = 0;
    for (int i = 0; i < na; i++)
        if (!has(b, nb, a[i]))
            ref[k++] = a[i];
    MPI_Group_difference(ga, gb, &g);
    expect_members(g, ref, k, "difference");
    MPI_Group_free(&g);

    /* With the empty group. */
    MPI_Group_union(MPI_GROUP_EMPTY, gb, &g);
    expect_members(g, b, nb, "union with empty");
    MPI_Group_free(&g);
    MPI_Group_intersection(ga, MPI_GROUP_EMPTY, &g);
    int gs = -1;
    MPI_Group_size(g, &gs);
    CHECK(gs == 0, "intersection with empty: size %d", gs);
    MPI_Group_free(&g);

    /* Ranges: (n-1 down to 0 step -2) and (0 .. n-1 step 3). */
    int ranges[2][3] = { { n - 1, 0, -2 }, { 0, n - 1, 3 } };
    k = 0;
    char *seen = calloc((size_t)n + 1, 1);
    int dup = 0;
    for (int r = n - 1; r >= 0; r -= 2) {
        ref[k++] = r;
        seen[r] = 1;
    }
    for (int r = 0; r <= n - 1; r += 3) {
        dup |= seen[r];
        ref[k++] = r;
    }
    /* The two triplets overlap when a rank is named twice: then the call
     * must fail with MPI_ERR_RANK. */
    int rc = MPI_Group_range_incl(world, 2, ranges, &g), cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    if (dup) {
        CHECK(cls == MPI_ERR_RANK, "range_incl with a repeated rank: class %d", cls);
    } else {
        CHECK(rc == MPI_SUCCESS, "range_incl: %d", rc);
        expect_members(g, ref, k, "range_incl");
        MPI_Group_free(&g);
    }
    /* One triplet: every third rank from 0, then the complement. */
    int third[1][3] = { { 0, n - 1, 3 } };
    k = 0;
    for (int r = 0; r < n; r += 3)
        ref[k++] = r;
    MPI_Group_range_incl(world, 1, third, &g);
    expect_members(g, ref, k, "range_incl step 3");
    MPI_Group_free(&g);
    k = 0;
    for (int r = 0; r < n; r++)
        if (r % 3 != 0)
            ref[k++] = r;
    MPI_Group_range_excl(world, 1, third, &g);
    expect_members(g, ref, k, "range_excl step 3");
    MPI_Group_free(&g);

    /* translate_ranks: MPI_PROC_NULL maps to itself; members of A missing
     * from B map to MPI_UNDEFINED. */
    int *in = malloc(sizeof(int) * (size_t)(na + 1)), *out = malloc(sizeof(int) * (size_t)(na + 1));
    for (int i = 0; i < na; i++)
        in[i] = i;
    in[na] = MPI_PROC_NULL;
    MPI_Group_translate_ranks(ga, na + 1, in, gb, out);
    for (int i = 0; i < na; i++) {
        int want = MPI_UNDEFINED;
        for (int j = 0; j < nb; j++)
            if (b[j] == a[i])
                want = j;
        CHECK(out[i] == want, "translate %d: %d, expected %d", i, out[i], want);
    }
    CHECK(out[na] == MPI_PROC_NULL, "translate MPI_PROC_NULL: %d", out[na]);

    /* Error classes. */
    rc = MPI_Group_union(MPI_GROUP_NULL, ga, &g);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_GROUP, "union with MPI_GROUP_NULL: class %d", cls);
    rc = MPI_Group_intersection(ga, gb, NULL);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "intersection into NULL: class %d", cls);
    int zero[1][3] = { { 0, n - 1, 0 } };
    rc = MPI_Group_range_incl(world, 1, zero, &g);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "range with stride 0: class %d", cls);
    int off[1][3] = { { 0, n, 1 } };
    rc = MPI_Group_range_excl(world, 1, off, &g);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "range past the group: class %d", cls);
    int bad = n;
    rc = MPI_Group_translate_ranks(world, 1, &bad, ga, out);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "translate of rank %d: class %d", bad, cls);
    rc = MPI_Group_incl(world, 1, &bad, &g);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "incl of rank %d: class %d", bad, cls);

    MPI_Group_free(&ga);
    MPI_Group_free(&gb);
    MPI_Group_free(&world);
    free(a);
    free(b);
    free(ref);
    free(seen);
    free(in);
    free(out);
    return mtest_finish();
}
