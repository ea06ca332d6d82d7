/*
 * Cartesian topologies against hand-computed results: MPI_Dims_create
 * factorizations (free and fixed entries), MPI_Cart_create (extra ranks
 * left out, 0 dimensions), coords/rank/get/dim, MPI_Cart_shift at the
 * borders of periodic and non-periodic dimensions and with large
 * displacements, MPI_Cart_sub, MPI_Cart_map, the topology kept by dup,
 * and the error classes (MPI_ERR_TOPOLOGY, MPI_ERR_DIMS, MPI_ERR_ARG,
 * MPI_ERR_RANK). Any number of ranks.
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

static void dims_case(int nnodes, int ndims, const int *in, const int *want)
{
    int d[8];
    memcpy(d, in, sizeof(int) * (size_t)ndims);
    int rc = MPI_Dims_create(nnodes, ndims, d);
    CHECK(rc == MPI_SUCCESS, "Dims_create(%d, %d) failed", nnodes, ndims);
    for (int i = 0; i < ndims; i++)
        CHECK(d[i] == want[i], "Dims_create(%d, %d): dims[%d] = %d, expected %d", nnodes, ndims,
              i, d[i], want[i]);
}

static int wrap(int x, int n)
{
    return ((x % n) + n) % n;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* Dims_create: as even as possible, non-increasing. */
    dims_case(6, 2, (int[]){ 0, 0 }, (int[]){ 3, 2 });
    dims_case(7, 2, (int[]){ 0, 0 }, (int[]){ 7, 1 });
    dims_case(12, 3, (int[]){ 0, 0, 0 }, (int[]){ 3, 2, 2 });
    dims_case(16, 3, (int[]){ 0, 0, 0 }, (int[]){ 4, 2, 2 });
    dims_case(24, 3, (int[]){ 0, 0, 0 }, (int[]){ 4, 3, 2 });
    dims_case(72, 2, (int[]){ 0, 0 }, (int[]){ 9, 8 });
    dims_case(64, 3, (int[]){ 0, 0, 0 }, (int[]){ 4, 4, 4 });
    dims_case(1, 3, (int[]){ 0, 0, 0 }, (int[]){ 1, 1, 1 });
    dims_case(12, 3, (int[]){ 0, 3, 0 }, (int[]){ 2, 3, 2 });
    dims_case(30, 3, (int[]){ 0, 0, 5 }, (int[]){ 3, 2, 5 });
    dims_case(8, 2, (int[]){ 2, 4 }, (int[]){ 2, 4 });
    int d2[2] = { 3, 0 };
    CHECK(err_class(MPI_Dims_create(10, 2, d2)) == MPI_ERR_DIMS, "Dims_create 10 over 3");
    int dn[2] = { -1, 0 };
    CHECK(err_class(MPI_Dims_create(6, 2, dn)) == MPI_ERR_DIMS, "Dims_create negative dim");
    CHECK(err_class(MPI_Dims_create(6, -1, dn)) == MPI_ERR_DIMS, "Dims_create ndims -1");
    int df[2] = { 2, 2 };
    CHECK(err_class(MPI_Dims_create(6, 2, df)) == MPI_ERR_DIMS, "Dims_create fixed 2x2 for 6");

    /* A 2-D grid, periodic in dimension 0 only. */
    int dims[2] = { 0, 0 }, periods[2] = { 1, 0 };
    MPI_Dims_create(size, 2, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    int st;
    MPI_Topo_test(cart, &st);
    CHECK(st == MPI_CART, "topo_test %d", st);
    int nd, gd[2], gp[2], gc[2], c[2], r;
    MPI_Cartdim_get(cart, &nd);
    CHECK(nd == 2, "cartdim %d", nd);
    MPI_Cart_get(cart, 2, gd, gp, gc);
    CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0, "cart_get");
    CHECK(gc[0] == rank / dims[1] && gc[1] == rank % dims[1], "cart_get coords %d,%d", gc[0],
          gc[1]);
    for (int q = 0; q < size; q++) {
        MPI_Cart_coords(cart, q, 2, c);
        CHECK(c[0] == q / dims[1] && c[1] == q % dims[1], "coords of %d: %d,%d", q, c[0], c[1]);
        MPI_Cart_rank(cart, c, &r);
        CHECK(r == q, "rank of coords of %d: %d", q, r);
    }
    /* Periodic dimension wraps in Cart_rank; the other does not. */
    MPI_Cart_rank(cart, (int[]){ -1, 0 }, &r);
    CHECK(r == (dims[0] - 1) * dims[1], "rank of (-1,0): %d", r);
    MPI_Cart_rank(cart, (int[]){ dims[0] + 1, 0 }, &r);
    CHECK(r == wrap(1, dims[0]) * dims[1], "rank of (d0+1,0): %d", r);
    CHECK(err_class(MPI_Cart_rank(cart, (int[]){ 0, dims[1] }, &r)) == MPI_ERR_ARG,
          "rank off the non-periodic edge");

    /* Shifts: periodic dimension 0 (disp 1, 2, -1, d0 + 1), non-periodic 1. */
    int x = rank / dims[1], y = rank % dims[1], src, dst;
    int disps[4] = { 1, 2, -1, dims[0] + 1 };
    for (int k = 0; k < 4; k++) {
        MPI_Cart_shift(cart, 0, disps[k], &src, &dst);
        CHECK(dst == wrap(x + disps[k], dims[0]) * dims[1] + y &&
                  src == wrap(x - disps[k], dims[0]) * dims[1] + y,
              "shift dim 0 by %d: %d -> %d", disps[k], src, dst);
    }
    for (int disp = -2; disp <= 2; disp++) {
        MPI_Cart_shift(cart, 1, disp, &src, &dst);
        int wd = y + disp >= 0 && y + disp < dims[1] ? x * dims[1] + y + disp : MPI_PROC_NULL;
        int ws = y - disp >= 0 && y - disp < dims[1] ? x * dims[1] + y - disp : MPI_PROC_NULL;
        CHECK(dst == wd && src == ws, "shift dim 1 by %d at y=%d: %d -> %d (want %d -> %d)", disp,
              y, src, dst, ws, wd);
    }
    CHECK(err_class(MPI_Cart_shift(cart, 2, 1, &src, &dst)) == MPI_ERR_DIMS,
          "shift in dimension 2");
    CHECK(err_class(MPI_Cart_coords(cart, size, 2, c)) == MPI_ERR_RANK, "coords of rank size");

    /* Dup keeps the topology. */
    MPI_Comm cd;
    MPI_Comm_dup(cart, &cd);
    MPI_Topo_test(cd, &st);
    MPI_Cart_get(cd, 2, gd, gp, gc);
    CHECK(st == MPI_CART && gd[0] == dims[0] && gc[1] == y, "dup keeps the grid");
    MPI_Comm_free(&cd);

    /* Sub: keep dimension 0 (rows of equal y), then nothing. */
    MPI_Comm sub;
    MPI_Cart_sub(cart, (int[]){ 1, 0 }, &sub);
    int sn, sr;
    MPI_Comm_size(sub, &sn);
    MPI_Comm_rank(sub, &sr);
    CHECK(sn == dims[0] && sr == x, "sub keeping dim 0: %d of %d", sr, sn);
    MPI_Cart_get(sub, 1, gd, gp, gc);
    CHECK(gd[0] == dims[0] && gp[0] == 1 && gc[0] == x, "sub grid");
    /* Neighbours in the sub grid are the same processes as in the grid. */
    int s2, d3, s1, d1;
    MPI_Cart_shift(sub, 0, 1, &s2, &d3);
    MPI_Cart_shift(cart, 0, 1, &s1, &d1);
    MPI_Group gs, gcart;
    MPI_Comm_group(sub, &gs);
    MPI_Comm_group(cart, &gcart);
    int tr;
    MPI_Group_translate_ranks(gs, 1, &d3, gcart, &tr);
    CHECK(tr == d1, "sub neighbour %d is cart %d, expected %d", d3, tr, d1);
    MPI_Group_free(&gs);
    MPI_Group_free(&gcart);
    MPI_Comm_free(&sub);
    MPI_Cart_sub(cart, (int[]){ 0, 0 }, &sub);
    MPI_Comm_size(sub, &sn);
    MPI_Cartdim_get(sub, &nd);
    CHECK(sn == 1 && nd == 0, "sub keeping nothing: size %d, %d dims", sn, nd);
    MPI_Comm_free(&sub);

    /* Map without reordering gain (one node): the identity; ranks past
     * the grid: MPI_UNDEFINED. */
    int small[1] = { size > 1 ? size - 1 : 1 }, per1[1] = { 0 }, nr;
    MPI_Cart_map(MPI_COMM_WORLD, 1, small, per1, &nr);
    CHECK(nr == (rank < small[0] ? rank : MPI_UNDEFINED), "cart_map: %d", nr);

    /* A grid smaller than the communicator leaves the last ranks out; a
     * 0-dimensional one keeps rank 0 only. */
    MPI_Comm part;
    MPI_Cart_create(MPI_COMM_WORLD, 1, small, per1, 0, &part);
    CHECK((rank < small[0]) == (part != MPI_COMM_NULL), "grid of %d", small[0]);
    if (part != MPI_COMM_NULL)
        MPI_Comm_free(&part);
    MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &part);
    CHECK((rank == 0) == (part != MPI_COMM_NULL), "0-dimensional grid");
    if (part != MPI_COMM_NULL) {
        MPI_Cartdim_get(part, &nd);
        MPI_Comm_size(part, &sn);
        CHECK(nd == 0 && sn == 1, "0-d grid: %d dims, size %d", nd, sn);
        MPI_Comm_free(&part);
    }

    /* Errors. */
    int big[2] = { size + 1, 1 };
    CHECK(err_class(MPI_Cart_create(MPI_COMM_WORLD, 2, big, periods, 0, &part)) == MPI_ERR_ARG,
          "grid larger than the communicator");
    int zero[2] = { 0, 1 };
    CHECK(err_class(MPI_Cart_create(MPI_COMM_WORLD, 2, zero, periods, 0, &part)) == MPI_ERR_DIMS,
          "grid with a 0 dimension");
    CHECK(err_class(MPI_Cart_create(MPI_COMM_WORLD, -1, dims, periods, 0, &part)) == MPI_ERR_DIMS,
          "ndims -1");
    CHECK(err_class(MPI_Cart_coords(MPI_COMM_WORLD, 0, 2, c)) == MPI_ERR_TOPOLOGY,
          "coords without a topology");
    CHECK(err_class(MPI_Cartdim_get(MPI_COMM_WORLD, &nd)) == MPI_ERR_TOPOLOGY,
          "cartdim without a topology");
    CHECK(err_class(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &src, &dst)) == MPI_ERR_TOPOLOGY,
          "shift without a topology");
    int nn;
    CHECK(err_class(MPI_Graph_neighbors_count(cart, 0, &nn)) == MPI_ERR_TOPOLOGY,
          "graph query on a grid");
    MPI_Topo_test(MPI_COMM_WORLD, &st);
    CHECK(st == MPI_UNDEFINED, "topo_test of world: %d", st);

    MPI_Comm_free(&cart);
    return mtest_finish();
}
