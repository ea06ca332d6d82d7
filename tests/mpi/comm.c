/*
 * Communicators and groups: dup, split (colors, keys, MPI_UNDEFINED),
 * split_type SHARED, create from a group, compare, names, attributes,
 * the group calls, and traffic on the new communicators. Needs >= 2 ranks.
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

static int rank, size;

/* A ring exchange on comm proves it carries traffic with its own ranks. */
static void ring_check(MPI_Comm comm, const char *what)
{
    int r, n, v, w = -1;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    v = r;
    MPI_Sendrecv(&v, 1, MPI_INT, (r + 1) % n, 1, &w, 1, MPI_INT, (r + n - 1) % n, 1, comm,
                 MPI_STATUS_IGNORE);
    CHECK(w == (r + n - 1) % n, "%s: ring got %d", what, w);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int res, r, n;

    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_compare(MPI_COMM_WORLD, dup, &res);
    CHECK(res == MPI_CONGRUENT, "dup compare %d", res);
    MPI_Comm_compare(dup, dup, &res);
    CHECK(res == MPI_IDENT, "self compare %d", res);
    ring_check(dup, "dup");

    /* Split into even/odd, reversed key order. */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
    MPI_Comm_rank(half, &r);
    MPI_Comm_size(half, &n);
    int expect_n = (size + 1 - rank % 2) / 2;
    CHECK(n == expect_n, "split size %d expected %d", n, expect_n);
    CHECK(r == n - 1 - rank / 2, "split rank %d (world %d)", r, rank);
    ring_check(half, "split");
    MPI_Comm_compare(half, MPI_COMM_WORLD, &res);
    CHECK(size == 1 ? res == MPI_CONGRUENT : res == MPI_UNEQUAL, "split compare %d", res);

    /* Color MPI_UNDEFINED gives MPI_COMM_NULL. */
    MPI_Comm none;
    MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, 0, &none);
    CHECK((rank == 0) == (none == MPI_COMM_NULL), "undefined color");
    if (none != MPI_COMM_NULL) {
        MPI_Comm_size(none, &n);
        CHECK(n == size - 1, "split without 0: size %d", n);
        if (n > 0)
            ring_check(none, "split-undefined");
        MPI_Comm_free(&none);
    }

    /* SHARED: everyone here is on this node. */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &n);
    MPI_Comm_rank(node, &r);
    CHECK(n == size && r == rank, "split_type shared %d/%d", r, n);
    ring_check(node, "shared");

    /* Groups. */
    MPI_Group world_g, rev_g, odd_g, empty_g;
    MPI_Comm_group(MPI_COMM_WORLD, &world_g);
    MPI_Group_size(world_g, &n);
    MPI_Group_rank(world_g, &r);
    CHECK(n == size && r == rank, "group size/rank %d/%d", n, r);
    int *ranks = malloc(sizeof(int) * (size_t)size), *tr = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++)
        ranks[i] = size - 1 - i;
    MPI_Group_incl(world_g, size, ranks, &rev_g);
    MPI_Group_rank(rev_g, &r);
    CHECK(r == size - 1 - rank, "reversed group rank %d", r);
    MPI_Group_compare(world_g, rev_g, &res);
    CHECK(res == (size == 1 ? MPI_IDENT : MPI_SIMILAR), "group compare %d", res);
    MPI_Group_translate_ranks(rev_g, size, ranks, world_g, tr);
    for (int i = 0; i < size; i++)
        CHECK(tr[i] == i, "translate %d -> %d", ranks[i], tr[i]);
    int evens[1] = { 0 };
    MPI_Group_excl(world_g, 1, evens, &odd_g);
    MPI_Group_size(odd_g, &n);
    MPI_Group_rank(odd_g, &r);
    CHECK(n == size - 1 && r == (rank == 0 ? MPI_UNDEFINED : rank - 1), "excl %d/%d", r, n);
    int zero = 0, t;
    MPI_Group_translate_ranks(world_g, 1, &zero, odd_g, &t);
    CHECK(t == MPI_UNDEFINED, "translate of an excluded rank %d", t);
    MPI_Group_incl(world_g, 0, NULL, &empty_g);
    MPI_Group_size(empty_g, &n);
    CHECK(n == 0, "empty group size %d", n);

    /* Comm_create from the reversed group: ranks are reversed. */
    MPI_Comm rev;
    MPI_Comm_create(MPI_COMM_WORLD, rev_g, &rev);
    MPI_Comm_rank(rev, &r);
    CHECK(r == size - 1 - rank, "created comm rank %d", r);
    MPI_Comm_compare(rev, MPI_COMM_WORLD, &res);
    CHECK(res == (size == 1 ? MPI_CONGRUENT : MPI_SIMILAR), "created compare %d", res);
    ring_check(rev, "create");
    MPI_Comm sub;
    MPI_Comm_create(MPI_COMM_WORLD, odd_g, &sub);
    CHECK((rank == 0) == (sub == MPI_COMM_NULL), "create: non-member gets a comm");
    if (sub != MPI_COMM_NULL && size > 1) {
        ring_check(sub, "create-sub");
        MPI_Comm_free(&sub);
    }

    /* Names and attributes. */
    char name[MPI_MAX_OBJECT_NAME];
    int len, flag, *val;
    MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14, "world name '%s'", name);
    MPI_Comm_set_name(dup, "my dup");
    MPI_Comm_get_name(dup, name, &len);
    CHECK(strcmp(name, "my dup") == 0, "dup name '%s'", name);
    MPI_Comm_get_attr(dup, MPI_TAG_UB, &val, &flag);
    CHECK(flag && *val >= 32767, "tag ub");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &val, &flag);
    CHECK(flag && (*val == 0 || *val == 1), "wtime is global");

    /* Many dup/free cycles must not run out of context ids. */
    for (int i = 0; i < 300; i++) {
        MPI_Comm c;
        MPI_Comm_dup(dup, &c);
        MPI_Comm_free(&c);
    }
    ring_check(dup, "after dup cycles");

    MPI_Group_free(&world_g);
    MPI_Group_free(&rev_g);
    MPI_Group_free(&odd_g);
    MPI_Group_free(&empty_g);
    CHECK(world_g == MPI_GROUP_NULL, "group_free");
    MPI_Comm_free(&rev);
    MPI_Comm_free(&node);
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    free(ranks);
    free(tr);
    return mtest_finish();
}
