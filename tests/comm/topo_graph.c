/*
 * Graph and distributed-graph topologies against hand-computed results:
 * MPI_Graph_create (a ring with chords, fewer vertices than ranks) and its
 * queries, MPI_Graph_map; MPI_Dist_graph_create_adjacent (order and
 * weights as given, MPI_UNWEIGHTED), MPI_Dist_graph_create (every edge
 * arrives at both ends, whoever gave it), the topology kept by dup, and
 * the error classes. Any number of ranks.
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

static int rank, size;

static int err_class(int rc)
{
    int c = MPI_SUCCESS;
    MPI_Error_class(rc, &c);
    return c;
}

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Sorted copies equal? (a multiset comparison of n pairs, as v*1000+w) */
static int same_edges(const int *v1, const int *w1, const int *v2, const int *w2, int n)
{
    int *a = malloc(sizeof *a * (size_t)(n + 1)), *b = malloc(sizeof *b * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        a[i] = v1[i] * 1000 + (w1 ? w1[i] : 0);
        b[i] = v2[i] * 1000 + (w2 ? w2[i] : 0);
    }
    qsort(a, (size_t)n, sizeof *a, int_cmp);
    qsort(b, (size_t)n, sizeof *b, int_cmp);
    int same = n == 0 || memcmp(a, b, sizeof *a * (size_t)n) == 0;
    free(a);
    free(b);
    return same;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* Graph over nv = size - 1 vertices (at least 1): vertex v links to
     * v + 1 and v - 1 (mod nv), and vertex 0 also to every even vertex. */
    int nv = size > 1 ? size - 1 : 1;
    int *index = malloc(sizeof *index * (size_t)nv);
    int *edges = malloc(sizeof *edges * (size_t)(4 * nv + 4));
    int ne = 0;
    for (int v = 0; v < nv; v++) {
        if (nv > 1) {
            edges[ne++] = (v + 1) % nv;
            edges[ne++] = (v + nv - 1) % nv;
        }
        if (v == 0)
            for (int u = 2; u < nv; u += 2)
                edges[ne++] = u;
        index[v] = ne;
    }
    MPI_Comm g;
    MPI_Graph_create(MPI_COMM_WORLD, nv, index, edges, 0, &g);
    CHECK((rank < nv) == (g != MPI_COMM_NULL), "graph membership");
    if (g != MPI_COMM_NULL) {
        int st, nn, ee, cnt, *nb = malloc(sizeof *nb * (size_t)(ne + 1));
        MPI_Topo_test(g, &st);
        CHECK(st == MPI_GRAPH, "topo_test %d", st);
        MPI_Graphdims_get(g, &nn, &ee);
        CHECK(nn == nv && ee == ne, "graphdims %d %d", nn, ee);
        int *gi = malloc(sizeof *gi * (size_t)nv), *ge = malloc(sizeof *ge * (size_t)(ne + 1));
        MPI_Graph_get(g, nv, ne, gi, ge);
        CHECK(!memcmp(gi, index, sizeof *gi * (size_t)nv) &&
                  (ne == 0 || !memcmp(ge, edges, sizeof *ge * (size_t)ne)),
              "graph_get");
        for (int v = 0; v < nv; v++) {
            int lo = v ? index[v - 1] : 0;
            MPI_Graph_neighbors_count(g, v, &cnt);
            CHECK(cnt == index[v] - lo, "neighbours_count(%d) = %d", v, cnt);
            MPI_Graph_neighbors(g, v, cnt, nb);
            CHECK(cnt == 0 || !memcmp(nb, edges + lo, sizeof *nb * (size_t)cnt),
                  "neighbours(%d)", v);
        }
        CHECK(err_class(MPI_Graph_neighbors_count(g, nv, &cnt)) == MPI_ERR_RANK,
              "neighbours of vertex %d", nv);
        int dims;
        CHECK(err_class(MPI_Cartdim_get(g, &dims)) == MPI_ERR_TOPOLOGY, "cartdim of a graph");
        MPI_Comm gd;
        MPI_Comm_dup(g, &gd);
        MPI_Graphdims_get(gd, &nn, &ee);
        CHECK(nn == nv && ee == ne, "dup keeps the graph");
        MPI_Comm_free(&gd);
        free(gi);
        free(ge);
        free(nb);
        MPI_Comm_free(&g);
    }
    int nr;
    MPI_Graph_map(MPI_COMM_WORLD, nv, index, edges, &nr);
    CHECK(nr == (rank < nv ? rank : MPI_UNDEFINED), "graph_map on one node: %d", nr);
    if (ne > 0) {
        edges[0] = nv;   /* out of range */
        CHECK(err_class(MPI_Graph_create(MPI_COMM_WORLD, nv, index, edges, 0, &g)) == MPI_ERR_ARG,
              "graph with an edge to vertex %d", nv);
    }
    CHECK(err_class(MPI_Graph_create(MPI_COMM_WORLD, size + 1, index, edges, 0, &g)) ==
              MPI_ERR_ARG,
          "graph larger than the communicator");

    /* Adjacent distributed graph: in from r-1 and r+2, out to r+1 and r-2
     * (mod size), weights as given, order as given. */
    int src[2] = { (rank + size - 1) % size, (rank + 2) % size };
    int dst[2] = { (rank + 1) % size, (rank + size - 2) % size };
    int sw[2] = { 10 * src[0] + rank, 10 * src[1] + rank };
    int dw[2] = { 10 * rank + dst[0], 10 * rank + dst[1] };
    MPI_Comm dg;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, sw, 2, dst, dw, MPI_INFO_NULL, 0, &dg);
    int st, in, out, wt;
    MPI_Topo_test(dg, &st);
    CHECK(st == MPI_DIST_GRAPH, "dist topo_test %d", st);
    MPI_Dist_graph_neighbors_count(dg, &in, &out, &wt);
    CHECK(in == 2 && out == 2 && wt, "dist counts %d %d %d", in, out, wt);
    int gs[2], gsw[2], gdd[2], gdw[2];
    MPI_Dist_graph_neighbors(dg, 2, gs, gsw, 2, gdd, gdw);
    CHECK(!memcmp(gs, src, sizeof gs) && !memcmp(gsw, sw, sizeof gsw) &&
              !memcmp(gdd, dst, sizeof gdd) && !memcmp(gdw, dw, sizeof gdw),
          "dist neighbours as given");
    MPI_Comm dgd;
    MPI_Comm_dup(dg, &dgd);
    MPI_Dist_graph_neighbors(dgd, 2, gs, gsw, 2, gdd, gdw);
    CHECK(!memcmp(gs, src, sizeof gs) && !memcmp(gdd, dst, sizeof gdd), "dup keeps the dist graph");
    MPI_Comm_free(&dgd);
    MPI_Comm_free(&dg);
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, MPI_UNWEIGHTED, 0, NULL,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg);
    MPI_Dist_graph_neighbors_count(dg, &in, &out, &wt);
    CHECK(in == 1 && out == 0 && !wt, "unweighted counts %d %d %d", in, out, wt);
    MPI_Comm_free(&dg);

    /* General distributed graph: rank r gives edges r -> r+1 (weight
     * 100 + r) and, for r even, (r+1) -> r (weight 200 + r), on behalf of
     * its neighbour. Each vertex must see exactly its edges. */
    int srcs[2] = { rank, (rank + 1) % size }, degs[2] = { 1, rank % 2 == 0 };
    int dsts[2] = { (rank + 1) % size, rank }, wts[2] = { 100 + rank, 200 + rank };
    MPI_Dist_graph_create(MPI_COMM_WORLD, 2, srcs, degs, dsts, wts, MPI_INFO_NULL, 0, &dg);
    int win[4], wout[4], ein = 0, eout = 0, ew_in[4], ew_out[4];
    /* Expected: out r -> r+1 (100 + r); in r-1 -> r (100 + r-1); and the
     * reverse edges given by even ranks. */
    wout[eout] = (rank + 1) % size;
    ew_out[eout++] = 100 + rank;
    win[ein] = (rank + size - 1) % size;
    ew_in[ein++] = 100 + (rank + size - 1) % size;
    if (rank % 2 == 0) {   /* I gave (r+1) -> r: an in-edge of mine */
        win[ein] = (rank + 1) % size;
        ew_in[ein++] = 200 + rank;
    }
    int prev = (rank + size - 1) % size;
    if (prev % 2 == 0) {   /* prev gave r -> prev: an out-edge of mine */
        wout[eout] = prev;
        ew_out[eout++] = 200 + prev;
    }
    MPI_Dist_graph_neighbors_count(dg, &in, &out, &wt);
    CHECK(in == ein && out == eout && wt, "dist_graph_create counts %d/%d %d/%d", in, ein, out,
          eout);
    if (in == ein && out == eout) {
        int a[4], aw[4], b[4], bw[4];
        MPI_Dist_graph_neighbors(dg, in, a, aw, out, b, bw);
        CHECK(same_edges(a, aw, win, ew_in, in), "dist_graph_create in-edges");
        CHECK(same_edges(b, bw, wout, ew_out, out), "dist_graph_create out-edges");
    }
    MPI_Comm_free(&dg);

    /* Errors. */
    int badsrc = size;
    CHECK(err_class(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &badsrc, MPI_UNWEIGHTED, 0,
                                                   NULL, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                                   &dg)) == MPI_ERR_RANK,
          "dist graph source out of range");
    CHECK(err_class(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, -1, NULL, MPI_UNWEIGHTED, 0,
                                                   NULL, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                                   &dg)) == MPI_ERR_ARG,
          "negative in-degree");
    CHECK(err_class(MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &in, &out, &wt)) ==
              MPI_ERR_TOPOLOGY,
          "dist query without a topology");
    free(index);
    free(edges);
    return mtest_finish();
}
