/*
 * Cartesian topologies (MPI_Dims_create is in topo_dims.c): MPI_Cart_create (reorder maps
 * grid neighbours onto the same node / NUMA node: topo_map.c), the
 * queries, MPI_Cart_shift, MPI_Cart_sub and MPI_Cart_map.
 */
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "topo.h"

/* ---- MPI_Cart_create, MPI_Cart_map --------------------------------------------------- */

/* The checks of MPI_Cart_create and MPI_Cart_map: c an intracommunicator,
 * ndims/dims/periods a grid that fits in it (its size to *n). */
static int cart_check(const locus_comm_t *c, int ndims, const int *dims, const int *periods,
                      int *n)
{
    if (c->local)
        return MPI_ERR_COMM;
    if (ndims < 0)
        return MPI_ERR_DIMS;
    if (ndims > 0 && (!dims || !periods))
        return MPI_ERR_ARG;
    long prod = 1;
    for (int d = 0; d < ndims; d++) {
        if (dims[d] <= 0)
            return MPI_ERR_DIMS;
        prod *= dims[d];
        if (prod > c->coll.size)
            return MPI_ERR_ARG;   /* the grid needs more processes (MPICH: "**cartdim") */
    }
    *n = (int)prod;
    return MPI_SUCCESS;
}

static locus_ptopo_t *cart_new(int ndims, const int *dims, const int *periods)
{
    locus_ptopo_t *t = locus_ptopo_new(MPI_CART);
    if (!t)
        return NULL;
    t->ndims = ndims;
    t->dims = malloc(sizeof *t->dims * ((size_t)ndims + 1));
    t->periods = malloc(sizeof *t->periods * ((size_t)ndims + 1));
    if (!t->dims || !t->periods) {
        locus_ptopo_free(t);
        return NULL;
    }
    for (int d = 0; d < ndims; d++) {
        t->dims[d] = dims[d];
        t->periods[d] = periods[d] != 0;
    }
    return t;
}

/* The grid as a graph: every vertex with its neighbours at -1 and +1 in
 * each dimension (off-edge ones left out, repeats kept). */
static int cart_graph(const locus_ptopo_t *t, int n, int **xadj, int **adj)
{
    *xadj = malloc(sizeof **xadj * ((size_t)n + 1));
    *adj = malloc(sizeof **adj * ((size_t)n * 2 * (size_t)t->ndims + 1));
    int *c = malloc(sizeof *c * ((size_t)t->ndims + 1));
    if (!*xadj || !*adj || !c) {
        free(c);
        return MPI_ERR_NO_MEM;
    }
    int k = 0;
    for (int v = 0; v < n; v++) {
        (*xadj)[v] = k;
        for (int d = 0; d < t->ndims; d++) {
            for (int side = -1; side <= 1; side += 2) {
                locus_cart_coords(t, v, c);
                c[d] += side;
                int u = locus_cart_rank(t, c);
                if (u >= 0 && u != v)
                    (*adj)[k++] = u;
            }
        }
    }
    (*xadj)[n] = k;
    free(c);
    return MPI_SUCCESS;
}

/* The member of comm that plays each of the n grid positions. */
static int cart_place(locus_comm_t *comm, const locus_ptopo_t *t, int n, int collective,
                      int *proc_of)
{
    int *xadj = NULL, *adj = NULL;
    int err = cart_graph(t, n, &xadj, &adj);
    if (!err) {
        locus_topo_graph_t g = { n, xadj, adj, NULL };
        err = locus_topo_place(comm, &g, collective, proc_of);
    }
    free(xadj);
    free(adj);
    return err;
}

/* The checks, then the grid (*t) and room for its placement (*proc_of),
 * *n its size. */
static int cart_begin(const locus_comm_t *c, int ndims, const int *dims, const int *periods,
                      int *n, locus_ptopo_t **t, int **proc_of)
{
    *t = NULL;
    *proc_of = NULL;
    int err = cart_check(c, ndims, dims, periods, n);
    if (err)
        return err;
    *t = cart_new(ndims, dims, periods);
    *proc_of = malloc(sizeof **proc_of * ((size_t)*n + 1));
    return *t && *proc_of ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* The entry points of MPI_Cart_create and MPI_Cart_map are generated with
 * their checks (MPI initialized, a live communicator, somewhere to write);
 * they raise what these return on it. */

int locus_cart_create_impl(locus_comm_t *old, int ndims, const int dims[], const int periods[],
                           int reorder, MPI_Comm *comm_cart)
{
    locus_ptopo_t *t;
    int size = 0, *proc_of;
    int err = cart_begin(old, ndims, dims, periods, &size, &t, &proc_of);
    if (!err && reorder)
        err = cart_place(old, t, size, 1, proc_of);
    return locus_topo_create_end(old, err, t, size, proc_of, reorder, comm_cart);
}

int locus_cart_map_impl(locus_comm_t *c, int ndims, const int dims[], const int periods[],
                        int *newrank)
{
    locus_ptopo_t *t;
    int size = 0, *proc_of;
    int err = cart_begin(c, ndims, dims, periods, &size, &t, &proc_of);
    *newrank = MPI_UNDEFINED;
    if (!err && (err = cart_place(c, t, size, 0, proc_of)) == MPI_SUCCESS)
        *newrank = locus_topo_vertex_of(proc_of, size, c->coll.rank);
    locus_ptopo_free(t);
    free(proc_of);
    return err;
}

/* ---- queries ---------------------------------------------------------------------- */

LOCUS_PMPI_WEAK(Cartdim_get)
int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Cartdim_get");
    locus_comm_t *c = locus_comm_of(comm);
    locus_ptopo_t *t = NULL;
    int err = locus_ptopo_get(c, MPI_CART, &t);
    if (!err && !ndims)
        err = MPI_ERR_ARG;
    if (err)
        return locus_mpi_err(c, err, "MPI_Cartdim_get");
    *ndims = t->ndims;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Cart_get)
int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Cart_get");
    locus_comm_t *c = locus_comm_of(comm);
    locus_ptopo_t *t = NULL;
    int err = locus_ptopo_get(c, MPI_CART, &t);
    if (!err && (maxdims < t->ndims || (t->ndims > 0 && (!dims || !periods || !coords))))
        err = MPI_ERR_ARG;
    if (err)
        return locus_mpi_err(c, err, "MPI_Cart_get");
    if (t->ndims > 0) {
        memcpy(dims, t->dims, sizeof *dims * (size_t)t->ndims);
        memcpy(periods, t->periods, sizeof *periods * (size_t)t->ndims);
        locus_cart_coords(t, c->coll.rank, coords);
    }
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Cart_coords)
int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Cart_coords");
    locus_comm_t *c = locus_comm_of(comm);
    locus_ptopo_t *t = NULL;
    int err = locus_ptopo_get(c, MPI_CART, &t);
    if (!err && (rank < 0 || rank >= c->coll.size))
        err = MPI_ERR_RANK;
    if (!err && (maxdims < t->ndims || (t->ndims > 0 && !coords)))
        err = MPI_ERR_ARG;
    if (err)
        return locus_mpi_err(c, err, "MPI_Cart_coords");
    locus_cart_coords(t, rank, coords);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Cart_rank)
int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Cart_rank");
    locus_comm_t *c = locus_comm_of(comm);
    locus_ptopo_t *t = NULL;
    int err = locus_ptopo_get(c, MPI_CART, &t);
    if (!err && (!rank || (t->ndims > 0 && !coords)))
        err = MPI_ERR_ARG;
    /* Off a non-periodic edge is an error, not MPI_PROC_NULL. */
    int r = err ? -1 : locus_cart_rank(t, coords);
    if (!err && r < 0)
        err = MPI_ERR_ARG;
    if (err)
        return locus_mpi_err(c, err, "MPI_Cart_rank");
    *rank = r;
    return MPI_SUCCESS;
}

/* The rank at position pos of dimension dir, x holding the other
 * coordinates: large displacements wrap as often as they need on a
 * periodic dimension; off a non-periodic edge there is no neighbour. */
static int cart_shifted(const locus_ptopo_t *t, int *x, int dir, long pos)
{
    long n = t->dims[dir];
    if (t->periods[dir]) {
        pos %= n;
        if (pos < 0)
            pos += n;
    } else if (pos < 0 || pos >= n) {
        return MPI_PROC_NULL;
    }
    x[dir] = (int)pos;
    return locus_cart_rank(t, x);
}

LOCUS_PMPI_WEAK(Cart_shift)
int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Cart_shift");
    locus_comm_t *c = locus_comm_of(comm);
    locus_ptopo_t *t = NULL;
    int err = locus_ptopo_get(c, MPI_CART, &t);
    if (!err && (direction < 0 || direction >= t->ndims))
        err = MPI_ERR_DIMS;
    if (!err && (!rank_source || !rank_dest))
        err = MPI_ERR_ARG;
    int *x = err ? NULL : malloc(sizeof *x * (size_t)t->ndims);
    if (!err && !x)
        err = MPI_ERR_NO_MEM;
    if (err)
        return locus_mpi_err(c, err, "MPI_Cart_shift");
    locus_cart_coords(t, c->coll.rank, x);
    long at = x[direction];
    *rank_dest = cart_shifted(t, x, direction, at + disp);
    *rank_source = cart_shifted(t, x, direction, at - disp);
    free(x);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Cart_sub)
int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    LOCUS_ENTRY_CS();
    const char *fn = "MPI_Cart_sub";
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *c = locus_comm_of(comm), *n = NULL;
    locus_ptopo_t *t = NULL;
    int err = locus_ptopo_get(c, MPI_CART, &t);
    if (!err && (!newcomm || (t->ndims > 0 && !remain_dims)))
        err = MPI_ERR_ARG;
    if (err)
        return locus_mpi_err(c, err, fn);
    /* Color: my position in the dropped dimensions; key: in the kept ones
     * (so the new ranks run row-major over the kept dimensions). */
    int *x = malloc(sizeof *x * ((size_t)t->ndims + 1));
    int *dims = malloc(sizeof *dims * ((size_t)t->ndims + 1));
    int *periods = malloc(sizeof *periods * ((size_t)t->ndims + 1));
    err = x && dims && periods ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    int color = 0, key = 0, kept = 0;
    if (!err) {
        locus_cart_coords(t, c->coll.rank, x);
        for (int d = 0; d < t->ndims; d++) {
            if (remain_dims[d]) {
                key = key * t->dims[d] + x[d];
                dims[kept] = t->dims[d];
                periods[kept++] = t->periods[d];
            } else {
                color = color * t->dims[d] + x[d];
            }
        }
        err = locus_comm_split(c, color, key, &n);
    }
    if (!err) {
        n->topo = cart_new(kept, dims, periods);
        err = n->topo ? locus_ptopo_nbrs_build(n->topo, n->coll.rank) : MPI_ERR_NO_MEM;
        if (err) {
            locus_comm_discard(n);
            n = NULL;
        }
    }
    free(x);
    free(dims);
    free(periods);
    if (err)
        return locus_mpi_err(c, err, fn);
    *newcomm = locus_comm_handle(n);
    return MPI_SUCCESS;
}
