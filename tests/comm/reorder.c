/*
 * reorder = true on an emulated multi-node layout (LOCUS_MPI_NODES): for a
 * Cartesian grid, a graph and a distributed graph, the new communicator
 * holds every process exactly once, its topology is intact (neighbours as
 * the topology says, neighbourhood collectives deliver), and the share of
 * neighbour pairs on the same node is at least that of reorder = false;
 * with argument "strict", strictly greater (a layout where the identity is
 * poor). The node of each rank is found through MPI_Comm_split_type.
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

static int rank, size, strict;

/* node[r] for every rank r of c: the world rank leading r's node. */
static void nodes_of(MPI_Comm c, int *node)
{
    MPI_Comm shm;
    MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm);
    MPI_Group g, w;
    MPI_Comm_group(shm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    int zero = 0, lead;
    MPI_Group_translate_ranks(g, 1, &zero, w, &lead);
    MPI_Allgather(&lead, 1, MPI_INT, node, 1, MPI_INT, c);
    MPI_Group_free(&g);
    MPI_Group_free(&w);
    MPI_Comm_free(&shm);
}

/* Same-node share of (rank, neighbour) pairs over c, and a check that the
 * neighbourhood collective delivers each neighbour's rank. */
static double local_share(MPI_Comm c, const char *what)
{
    int n, r, st, src[64], dst[64], nb = 0;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &r);
    MPI_Topo_test(c, &st);
    if (st == MPI_CART) {
        int nd;
        MPI_Cartdim_get(c, &nd);
        for (int d = 0; d < nd; d++)
            MPI_Cart_shift(c, d, 1, &src[2 * d], &src[2 * d + 1]);
        nb = 2 * nd;
    } else if (st == MPI_GRAPH) {
        MPI_Graph_neighbors_count(c, r, &nb);
        MPI_Graph_neighbors(c, r, 64, src);
    } else {
        int out, w;
        MPI_Dist_graph_neighbors_count(c, &nb, &out, &w);
        MPI_Dist_graph_neighbors(c, 64, src, MPI_UNWEIGHTED, 64, dst, MPI_UNWEIGHTED);
    }
    int *node = malloc(sizeof *node * (size_t)n), got[64];
    nodes_of(c, node);
    int pairs[2] = { 0, 0 }, all[2];
    for (int i = 0; i < nb; i++) {
        got[i] = -1;
        if (src[i] == MPI_PROC_NULL)
            continue;
        pairs[1]++;
        pairs[0] += node[src[i]] == node[r];
    }
    MPI_Neighbor_allgather(&r, 1, MPI_INT, got, 1, MPI_INT, c);
    for (int i = 0; i < nb; i++)
        CHECK(got[i] == (src[i] == MPI_PROC_NULL ? -1 : src[i]), "%s: neighbour %d sent %d",
              what, i, got[i]);
    MPI_Allreduce(pairs, all, 2, MPI_INT, MPI_SUM, c);
    free(node);
    return all[1] ? (double)all[0] / all[1] : 1.0;
}

/* The reordered communicator holds every process once. */
static void check_permutation(MPI_Comm c, const char *what)
{
    MPI_Group g, w;
    MPI_Comm_group(c, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    int res;
    MPI_Group_compare(g, w, &res);
    CHECK(res == MPI_IDENT || res == MPI_SIMILAR, "%s: not a permutation of the world (%d)", what,
          res);
    MPI_Group_free(&g);
    MPI_Group_free(&w);
}

static void compare(MPI_Comm plain, MPI_Comm reord, const char *what)
{
    check_permutation(reord, what);
    double a = local_share(plain, what), b = local_share(reord, what);
    if (rank == 0)
        printf("%s: same-node neighbour pairs %.3f without reorder, %.3f with\n", what, a, b);
    CHECK(b >= a, "%s: reordering lowered the same-node share %.3f -> %.3f", what, a, b);
    if (strict)
        CHECK(b > a, "%s: reordering did not raise the same-node share (%.3f)", what, a);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    strict = argc > 1 && !strcmp(argv[1], "strict");

    /* A 2-D grid, non-periodic, and its reordered twin. */
    int dims[2] = { 0, 0 }, per[2] = { 0, 0 };
    MPI_Dims_create(size, 2, dims);
    MPI_Comm c0, c1;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per, 0, &c0);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per, 1, &c1);
    compare(c0, c1, "cart");
    /* The grid reordered: a rank's coordinates follow its new rank. */
    int r1, co[2];
    MPI_Comm_rank(c1, &r1);
    MPI_Cart_coords(c1, r1, 2, co);
    CHECK(co[0] == r1 / dims[1] && co[1] == r1 % dims[1], "reordered coords");
    MPI_Comm_free(&c0);
    MPI_Comm_free(&c1);

    /* A ring graph. */
    int *index = malloc(sizeof *index * (size_t)size);
    int *edges = malloc(sizeof *edges * (size_t)(2 * size));
    for (int v = 0; v < size; v++) {
        edges[2 * v] = (v + 1) % size;
        edges[2 * v + 1] = (v + size - 1) % size;
        index[v] = 2 * v + 2;
    }
    MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &c0);
    MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 1, &c1);
    compare(c0, c1, "graph");
    MPI_Comm_free(&c0);
    MPI_Comm_free(&c1);

    /* The same ring as an adjacent distributed graph: the process that gets
     * new rank v takes vertex v's edges (v - 1 and v + 1). */
    int src[2] = { (rank + size - 1) % size, (rank + 1) % size };
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 2, src,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c0);
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 2, src,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 1, &c1);
    int nr, s[2], d[2];
    MPI_Comm_rank(c1, &nr);
    MPI_Dist_graph_neighbors(c1, 2, s, MPI_UNWEIGHTED, 2, d, MPI_UNWEIGHTED);
    CHECK(s[0] == (nr + size - 1) % size && s[1] == (nr + 1) % size, "reordered dist graph: %d %d",
          s[0], s[1]);
    compare(c0, c1, "dist graph");
    MPI_Comm_free(&c0);
    MPI_Comm_free(&c1);
    free(index);
    free(edges);
    return mtest_finish();
}
