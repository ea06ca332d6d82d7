/*
 * Neighbourhood collectives with data checks: on a 2-D periodic grid, a
 * non-periodic one (MPI_PROC_NULL neighbours leave their blocks alone), a
 * periodic dimension of size 2 and of size 1 (both neighbours are the
 * same process: the block sent towards +1 must arrive as the one from -1),
 * a graph and an asymmetric distributed graph; allgather(v),
 * alltoall(v,w); blocking, nonblocking, persistent (started three times)
 * and `_c`; the error classes. Any number of ranks.
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

static int rank, size;

/* My neighbours in the order of the neighbourhood collectives. */
static int nbrs(MPI_Comm c, int *src, int *dst, int max)
{
    int st;
    MPI_Topo_test(c, &st);
    if (st == MPI_CART) {
        int nd;
        MPI_Cartdim_get(c, &nd);
        for (int d = 0; d < nd; d++) {
            MPI_Cart_shift(c, d, 1, &src[2 * d], &src[2 * d + 1]);
            dst[2 * d] = src[2 * d];
            dst[2 * d + 1] = src[2 * d + 1];
        }
        return 2 * nd;
    }
    if (st == MPI_GRAPH) {
        int r, n;
        MPI_Comm_rank(c, &r);
        MPI_Graph_neighbors_count(c, r, &n);
        MPI_Graph_neighbors(c, r, max, src);
        memcpy(dst, src, sizeof *src * (size_t)n);
        return n;
    }
    int in, out, w;
    MPI_Dist_graph_neighbors_count(c, &in, &out, &w);
    MPI_Dist_graph_neighbors(c, max, src, MPI_UNWEIGHTED, max, dst, MPI_UNWEIGHTED);
    return in;   /* the tests below use in == out */
}

/* Cartesian alltoall: block 2d goes to -1, 2d+1 to +1, each tagged with
 * my rank and the block index; what arrives from -1 must be what that
 * neighbour sent towards +1. how: 0 blocking, 1 nonblocking, 2 persistent. */
static void cart_alltoall(MPI_Comm c, int how, const char *what)
{
    int r, nd, src[16], dst[16];
    MPI_Comm_rank(c, &r);
    MPI_Cartdim_get(c, &nd);
    nbrs(c, src, dst, 16);
    int sb[16], rb[16];
    MPI_Request q;
    if (how == 2)
        MPI_Neighbor_alltoall_init(sb, 1, MPI_INT, rb, 1, MPI_INT, c, MPI_INFO_NULL, &q);
    for (int round = 0; round < (how == 2 ? 3 : 1); round++) {
        for (int j = 0; j < 2 * nd; j++) {
            sb[j] = 1000 * round + 10 * r + j;
            rb[j] = -1;
        }
        if (how == 0) {
            MPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, c);
        } else {
            if (how == 1)
                MPI_Ineighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, c, &q);
            else
                MPI_Start(&q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        }
        for (int j = 0; j < 2 * nd; j++) {
            int want = src[j] == MPI_PROC_NULL ? -1 : 1000 * round + 10 * src[j] + (j ^ 1);
            CHECK(rb[j] == want, "%s (how %d round %d): block %d = %d, expected %d", what, how,
                  round, j, rb[j], want);
        }
    }
    if (how == 2)
        MPI_Request_free(&q);
}

/* allgather: every neighbour's rank in the source order. */
static void any_allgather(MPI_Comm c, const char *what)
{
    int r, src[64], dst[64];
    MPI_Comm_rank(c, &r);
    int n = nbrs(c, src, dst, 64);
    int rb[64], rbc[64];
    for (int i = 0; i < n; i++)
        rb[i] = rbc[i] = -1;
    MPI_Neighbor_allgather(&r, 1, MPI_INT, rb, 1, MPI_INT, c);
    MPI_Neighbor_allgather_c(&r, 1, MPI_INT, rbc, 1, MPI_INT, c);
    for (int i = 0; i < n; i++) {
        int want = src[i] == MPI_PROC_NULL ? -1 : src[i];
        CHECK(rb[i] == want && rbc[i] == want, "%s allgather[%d] = %d/%d, expected %d", what, i,
              rb[i], rbc[i], want);
    }
    /* allgatherv: i + 1 copies from neighbour i, blocks reversed with gaps. */
    int cnt[64], dsp[64], big[512], mine[64];
    for (int k = 0; k < 64; k++)
        mine[k] = r;
    int at = 0;
    for (int i = n - 1; i >= 0; i--) {
        cnt[i] = 1;
        dsp[i] = at;
        at += 2;
    }
    for (int k = 0; k < 512; k++)
        big[k] = -1;
    MPI_Request q;
    MPI_Ineighbor_allgatherv(mine, 1, MPI_INT, big, cnt, dsp, MPI_INT, c, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    for (int i = 0; i < n; i++) {
        int want = src[i] == MPI_PROC_NULL ? -1 : src[i];
        CHECK(big[dsp[i]] == want && big[dsp[i] + 1] == -1, "%s allgatherv[%d] = %d", what, i,
              big[dsp[i]]);
    }
}

/* alltoallv and alltoallw on a topology whose edges pair up one to one
 * (same neighbour list in and out): to neighbour j, j + 1 ints of value
 * 100 * rank + j; the w form sends doubles. */
static void any_alltoallv(MPI_Comm c, const char *what)
{
    int r, src[64], dst[64];
    MPI_Comm_rank(c, &r);
    int n = nbrs(c, src, dst, 64);
    int sc[64], sd[64], rc[64], rd[64], sb[2048], rb[2048];
    int at = 0;
    for (int j = 0; j < n; j++) {
        sc[j] = j + 1;
        sd[j] = at;
        for (int k = 0; k <= j; k++)
            sb[at + k] = 100 * r + j;
        at += j + 1;
    }
    /* From source i I get as many as it sends on its edge to me: its
     * index for me in its own list, which for these topologies is the
     * position of the matching edge; the test topologies list each
     * neighbour once, so count = (index of me in src's list) + 1. */
    at = 0;
    for (int i = 0; i < n; i++) {
        int their[64], d2[64];
        (void)d2;
        int k = -1;
        if (src[i] != MPI_PROC_NULL) {
            /* Ask the source's list through the topology queries. */
            int st;
            MPI_Topo_test(c, &st);
            if (st == MPI_GRAPH) {
                int nn;
                MPI_Graph_neighbors_count(c, src[i], &nn);
                MPI_Graph_neighbors(c, src[i], 64, their);
                for (int t = 0; t < nn; t++)
                    if (their[t] == r)
                        k = t;
            }
        }
        rc[i] = k + 1;
        rd[i] = at;
        at += k + 2;
    }
    for (int k = 0; k < 2048; k++)
        rb[k] = -1;
    MPI_Neighbor_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, c);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < rc[i]; k++)
            CHECK(rb[rd[i] + k] == 100 * src[i] + rc[i] - 1, "%s alltoallv %d[%d] = %d", what, i,
                  k, rb[rd[i] + k]);
    /* w: one double per edge, byte displacements in reverse. */
    double ws[64], wr[64];
    int one[64];
    MPI_Aint wsd[64], wrd[64];
    MPI_Datatype t[64];
    for (int j = 0; j < n; j++) {
        ws[j] = r + 0.25 * j;
        wr[j] = -1;
        one[j] = 1;
        wsd[j] = (MPI_Aint)(sizeof(double) * (size_t)j);
        wrd[j] = (MPI_Aint)(sizeof(double) * (size_t)(n - 1 - j));
        t[j] = MPI_DOUBLE;
    }
    MPI_Neighbor_alltoallw(ws, one, wsd, t, wr, one, wrd, t, c);
    for (int i = 0; i < n; i++) {
        if (src[i] == MPI_PROC_NULL)
            continue;
        int k = rc[i] - 1;
        CHECK(wr[n - 1 - i] == src[i] + 0.25 * k, "%s alltoallw[%d] = %g", what, i, wr[n - 1 - i]);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* 2-D grids, periodic and not. */
    int dims[2] = { 0, 0 };
    MPI_Dims_create(size, 2, dims);
    for (int per = 0; per < 2; per++) {
        MPI_Comm c;
        MPI_Cart_create(MPI_COMM_WORLD, 2, dims, (int[]){ per, per }, 0, &c);
        const char *what = per ? "periodic grid" : "open grid";
        for (int how = 0; how < 3; how++)
            cart_alltoall(c, how, what);
        any_allgather(c, what);
        MPI_Comm_free(&c);
    }
    /* A periodic ring of 2 (when there are 2 ranks) and of 1. */
    MPI_Comm ring;
    int two = size >= 2 ? 2 : 1;
    MPI_Cart_create(MPI_COMM_WORLD, 1, &two, (int[]){ 1 }, 0, &ring);
    if (ring != MPI_COMM_NULL) {
        cart_alltoall(ring, 0, "ring of 2");
        cart_alltoall(ring, 2, "ring of 2");
        MPI_Comm_free(&ring);
    }
    MPI_Comm self;
    MPI_Cart_create(MPI_COMM_SELF, 2, (int[]){ 1, 1 }, (int[]){ 1, 1 }, 0, &self);
    cart_alltoall(self, 1, "self torus");
    MPI_Comm_free(&self);

    /* A ring graph (each vertex: next, then previous), size >= 3. */
    if (size >= 3) {
        int *index = malloc(sizeof *index * (size_t)size);
        int *edges = malloc(sizeof *edges * (size_t)(2 * size));
        for (int v = 0; v < size; v++) {
            edges[2 * v] = (v + 1) % size;
            edges[2 * v + 1] = (v + size - 1) % size;
            index[v] = 2 * v + 2;
        }
        MPI_Comm g;
        MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g);
        any_allgather(g, "graph ring");
        any_alltoallv(g, "graph ring");
        MPI_Comm_free(&g);
        free(index);
        free(edges);
    }

    /* Asymmetric distributed graph: in from r-1 and r-3, out to r+1 and
     * r+3 (mod size); the data on edge (r -> r+k) is 7 * r + k. */
    int src[2] = { (rank + size - 1) % size, (rank + 3 * size - 3) % size };
    int dst[2] = { (rank + 1) % size, (rank + 3) % size };
    MPI_Comm dg;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 2, dst, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &dg);
    int sb[2] = { 7 * rank + 1, 7 * rank + 3 }, rb[2] = { -1, -1 };
    MPI_Request q;
    MPI_Neighbor_alltoall_init(sb, 1, MPI_INT, rb, 1, MPI_INT, dg, MPI_INFO_NULL, &q);
    for (int round = 0; round < 2; round++) {
        MPI_Start(&q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        /* Edges between the same pair (size 2: r+1 == r+3) pair in order. */
        CHECK(rb[0] == 7 * src[0] + 1 && rb[1] == 7 * src[1] + 3,
              "dist alltoall round %d: %d %d", round, rb[0], rb[1]);
        rb[0] = rb[1] = -1;
    }
    MPI_Request_free(&q);
    MPI_Count cc[2] = { 1, 1 };
    MPI_Aint cd[2] = { 0, 1 };
    MPI_Neighbor_alltoallv_c(sb, cc, cd, MPI_INT, rb, cc, cd, MPI_INT, dg);
    CHECK(rb[0] == 7 * src[0] + 1 && rb[1] == 7 * src[1] + 3, "dist alltoallv_c: %d %d", rb[0],
          rb[1]);
    MPI_Comm_free(&dg);

    /* Errors. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Neighbor_allgather(sb, 1, MPI_INT, rb, 1, MPI_INT, MPI_COMM_WORLD), cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TOPOLOGY, "neighbour collective without a topology: %d", cls);
    return mtest_finish();
}
