/*
 * The `weighted` flag of distributed graphs (MPI_Dist_graph_neighbors_count):
 * true whenever weights were given at creation -- MPI_WEIGHTS_EMPTY, or an
 * array with nothing in it because the degree is 0 -- and false only for
 * MPI_UNWEIGHTED (MPI-4.1 section 8.5.5), here for both sides of a vertex.
 * Degree-0 vertices are the case that goes wrong when the flag is derived
 * from the edges or from one side only, so both
 * constructors are tried with every vertex, and with some vertices, of
 * degree 0; with and without reorder. Any number of ranks.
 */
#include "mtest.h"

static int rank, size;

static void check_flag(MPI_Comm dg, int want_in, int want_out, int want_w, const char *what)
{
    int in = -1, out = -1, w = -1;
    MPI_Dist_graph_neighbors_count(dg, &in, &out, &w);
    CHECK(in == want_in && out == want_out && !!w == want_w,
          "%s: in %d out %d weighted %d (want %d %d %d)", what, in, out, w, want_in, want_out,
          want_w);
    MPI_Comm_free(&dg);
}

static void adjacent(int reorder)
{
    MPI_Comm dg;
    int none[1] = { 0 }, w[1] = { 5 };

    /* No edges at all, weights given both ways. */
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, none, MPI_WEIGHTS_EMPTY, 0, none,
                                   MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, reorder, &dg);
    check_flag(dg, 0, 0, 1, "adjacent, WEIGHTS_EMPTY");
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, none, w, 0, none, w, MPI_INFO_NULL,
                                   reorder, &dg);
    check_flag(dg, 0, 0, 1, "adjacent, an array and degree 0");
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, none, MPI_UNWEIGHTED, 0, none,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, reorder, &dg);
    check_flag(dg, 0, 0, 0, "adjacent, UNWEIGHTED");

    /* Only out-edges (a ring one way): indegree 0 with weights for the
     * sources given as MPI_WEIGHTS_EMPTY. */
    int to[1] = { (rank + 1) % size }, tw[1] = { 3 };
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, none, MPI_WEIGHTS_EMPTY, 1, to, tw,
                                   MPI_INFO_NULL, reorder, &dg);
    check_flag(dg, 0, 1, 1, "adjacent, out-edges only");
    /* The same with MPI_UNWEIGHTED for the (absent) sources: the out-edges
     * still have weights. */
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, none, MPI_UNWEIGHTED, 1, to, tw,
                                   MPI_INFO_NULL, reorder, &dg);
    check_flag(dg, 0, 1, 1, "adjacent, UNWEIGHTED sources and weighted out-edges");
    /* Only in-edges: outdegree 0 with its weights given as an array. */
    int from[1] = { (rank + size - 1) % size };
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, from, tw, 0, none, w, MPI_INFO_NULL,
                                   reorder, &dg);
    check_flag(dg, 1, 0, 1, "adjacent, in-edges only");
}

static void general(int reorder)
{
    MPI_Comm dg;
    int none[1] = { 0 }, w[1] = { 5 };

    /* Nobody gives an edge. */
    MPI_Dist_graph_create(MPI_COMM_WORLD, 0, none, none, none, MPI_WEIGHTS_EMPTY,
                          MPI_INFO_NULL, reorder, &dg);
    check_flag(dg, 0, 0, 1, "create, WEIGHTS_EMPTY");
    MPI_Dist_graph_create(MPI_COMM_WORLD, 0, none, none, none, w, MPI_INFO_NULL, reorder, &dg);
    check_flag(dg, 0, 0, 1, "create, an array and no edges");
    int src[1] = { rank }, deg0[1] = { 0 };
    MPI_Dist_graph_create(MPI_COMM_WORLD, 1, src, deg0, none, w, MPI_INFO_NULL, reorder, &dg);
    check_flag(dg, 0, 0, 1, "create, a source of degree 0");
    MPI_Dist_graph_create(MPI_COMM_WORLD, 0, none, none, none, MPI_UNWEIGHTED, MPI_INFO_NULL,
                          reorder, &dg);
    check_flag(dg, 0, 0, 0, "create, UNWEIGHTED");

    /* Rank 0 alone gives the edge 0 -> size-1; the others give nothing
     * (MPI_WEIGHTS_EMPTY): every vertex is weighted, most of degree 0. */
    int dst[1] = { size - 1 }, one[1] = { 1 }, ew[1] = { 9 };
    if (rank == 0)
        MPI_Dist_graph_create(MPI_COMM_WORLD, 1, src, one, dst, ew, MPI_INFO_NULL, reorder, &dg);
    else
        MPI_Dist_graph_create(MPI_COMM_WORLD, 0, none, none, none, MPI_WEIGHTS_EMPTY,
                              MPI_INFO_NULL, reorder, &dg);
    int r;
    MPI_Comm_rank(dg, &r);
    /* With reorder the vertex a process holds is its new rank. */
    int in = (size == 1 || r == size - 1) ? 1 : 0, out = r == 0 ? 1 : 0;
    check_flag(dg, in, out, 1, "create, one edge");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int reorder = 0; reorder < 2; reorder++) {
        adjacent(reorder);
        general(reorder);
    }
    return mtest_finish();
}
