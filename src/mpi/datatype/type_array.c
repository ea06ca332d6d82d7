/*
 * type_array.c — MPI_Type_create_subarray and MPI_Type_create_darray, int
 * and large-count forms: argument checks with MPI's error classes (as
 * MPICH reports them: MPI_ERR_DIMS for the dimension count, MPI_ERR_RANK
 * for the rank, MPI_ERR_ARG for the rest), then the datatype engine.
 */
#include <stdlib.h>

#include "type.h"

static int order_ok(int order)
{
    return order == MPI_ORDER_C || order == MPI_ORDER_FORTRAN;
}

/* sizes, subsizes, starts: ndims counts each. */
static int type_subarray(int ndims, const MPI_Count *sizes, const MPI_Count *subsizes,
                         const MPI_Count *starts, int order, MPI_Datatype oldtype,
                         MPI_Datatype *newtype, int large, const char *fn)
{
    locus_mdt_t *old = type_obj(oldtype);
    int err = ndims < 1 ? MPI_ERR_DIMS : !old ? MPI_ERR_TYPE
              : !sizes || !subsizes || !starts || !newtype || !order_ok(order) ? MPI_ERR_ARG
              : MPI_SUCCESS;
    for (int d = 0; !err && d < ndims; d++)
        if (sizes[d] < 1 || subsizes[d] < 0 || starts[d] < 0 || subsizes[d] > sizes[d] ||
            starts[d] > sizes[d] - subsizes[d] || !type_count_ok(sizes[d]))
            err = MPI_ERR_ARG;
    if (err)
        return TYPE_ERR(err, fn);
    size_t *s = malloc(3 * sizeof(size_t) * (size_t)ndims);
    if (!s)
        return TYPE_ERR(MPI_ERR_NO_MEM, fn);
    type_args_t a;
    type_args_init(&a, MPI_COMBINER_SUBARRAY, large);
    type_args_put(&a, TA_INT, ndims);
    for (int d = 0; d < ndims; d++) {
        s[d] = (size_t)sizes[d];
        s[ndims + d] = (size_t)subsizes[d];
        s[2 * ndims + d] = (size_t)starts[d];
        type_args_put(&a, TA_COUNT, sizes[d]);
    }
    for (int d = 0; d < ndims; d++)
        type_args_put(&a, TA_COUNT, subsizes[d]);
    for (int d = 0; d < ndims; d++)
        type_args_put(&a, TA_COUNT, starts[d]);
    type_args_put(&a, TA_INT, order);
    locus_dtype_t *nt = NULL;
    int rc = locus_dtype_subarray(ndims, s, s + ndims, s + 2 * ndims, order == MPI_ORDER_FORTRAN,
                                  old->dt, &nt);
    free(s);
    return type_make(rc, nt, &a, 1, &old, newtype, fn);
}

/* ndims ints as MPI_Counts (NULL stays NULL). */
static MPI_Count *counts_of(int ndims, const int *v, int *oom)
{
    if (!v || ndims < 1)
        return NULL;
    MPI_Count *c = malloc(sizeof *c * (size_t)ndims);
    if (!c) {
        *oom = 1;
        return NULL;
    }
    for (int d = 0; d < ndims; d++)
        c[d] = v[d];
    return c;
}

LOCUS_PMPI_WEAK(Type_create_subarray)
int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[],
                              const int array_of_subsizes[], const int array_of_starts[],
                              int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_subarray";
    LOCUS_CHECK_INIT(fn);
    int oom = 0;
    MPI_Count *s = counts_of(ndims, array_of_sizes, &oom);
    MPI_Count *u = counts_of(ndims, array_of_subsizes, &oom);
    MPI_Count *t = counts_of(ndims, array_of_starts, &oom);
    int rc = oom ? TYPE_ERR(MPI_ERR_NO_MEM, fn)
                 : type_subarray(ndims, s, u, t, order, oldtype, newtype, 0, fn);
    free(s);
    free(u);
    free(t);
    return rc;
}

LOCUS_PMPI_WEAK(Type_create_subarray_c)
int PMPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[],
                                const MPI_Count array_of_subsizes[],
                                const MPI_Count array_of_starts[], int order,
                                MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    LOCUS_CHECK_INIT("MPI_Type_create_subarray_c");
    return type_subarray(ndims, array_of_sizes, array_of_subsizes, array_of_starts, order,
                         oldtype, newtype, 1, "MPI_Type_create_subarray_c");
}

static int type_darray(int size, int rank, int ndims, const MPI_Count *gsizes,
                       const int *distribs, const int *dargs, const int *psizes, int order,
                       MPI_Datatype oldtype, MPI_Datatype *newtype, int large, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_mdt_t *old = type_obj(oldtype);
    int err = size < 1 ? MPI_ERR_ARG : rank < 0 || rank >= size ? MPI_ERR_RANK
              : ndims < 1 ? MPI_ERR_DIMS : !old ? MPI_ERR_TYPE
              : !gsizes || !distribs || !dargs || !psizes || !newtype || !order_ok(order)
                  ? MPI_ERR_ARG : MPI_SUCCESS;
    long long grid = 1;
    for (int d = 0; !err && d < ndims; d++) {
        int dist = distribs[d];
        if (gsizes[d] < 1 || !type_count_ok(gsizes[d]) || psizes[d] < 1 ||
            (dist != MPI_DISTRIBUTE_NONE && dist != MPI_DISTRIBUTE_BLOCK &&
             dist != MPI_DISTRIBUTE_CYCLIC) ||
            (dargs[d] != MPI_DISTRIBUTE_DFLT_DARG && dargs[d] < 1) ||
            (dist == MPI_DISTRIBUTE_NONE && psizes[d] != 1))
            err = MPI_ERR_ARG;
        else if ((grid *= psizes[d]) > size)
            err = MPI_ERR_ARG;
    }
    if (!err && grid != size)
        err = MPI_ERR_ARG;
    if (err)
        return TYPE_ERR(err, fn);
    size_t *g = malloc(sizeof(size_t) * (size_t)ndims);
    int *dist = malloc(sizeof(int) * 2 * (size_t)ndims);
    if (!g || !dist) {
        free(g);
        free(dist);
        return TYPE_ERR(MPI_ERR_NO_MEM, fn);
    }
    int *darg = dist + ndims;
    type_args_t a;
    type_args_init(&a, MPI_COMBINER_DARRAY, large);
    type_args_put(&a, TA_INT, size);
    type_args_put(&a, TA_INT, rank);
    type_args_put(&a, TA_INT, ndims);
    for (int d = 0; d < ndims; d++) {
        g[d] = (size_t)gsizes[d];
        dist[d] = distribs[d] == MPI_DISTRIBUTE_NONE ? LOCUS_DIST_NONE
                  : distribs[d] == MPI_DISTRIBUTE_BLOCK ? LOCUS_DIST_BLOCK : LOCUS_DIST_CYCLIC;
        darg[d] = dargs[d] == MPI_DISTRIBUTE_DFLT_DARG ? LOCUS_DARG_DEFAULT : dargs[d];
        type_args_put(&a, TA_COUNT, gsizes[d]);
    }
    for (int d = 0; d < ndims; d++)
        type_args_put(&a, TA_INT, distribs[d]);
    for (int d = 0; d < ndims; d++)
        type_args_put(&a, TA_INT, dargs[d]);
    for (int d = 0; d < ndims; d++)
        type_args_put(&a, TA_INT, psizes[d]);
    type_args_put(&a, TA_INT, order);
    locus_dtype_t *nt = NULL;
    int rc = locus_dtype_darray(size, rank, ndims, g, dist, darg, psizes,
                                order == MPI_ORDER_FORTRAN, old->dt, &nt);
    free(g);
    free(dist);
    return type_make(rc, nt, &a, 1, &old, newtype, fn);
}

LOCUS_PMPI_WEAK(Type_create_darray)
int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                            const int array_of_distribs[], const int array_of_dargs[],
                            const int array_of_psizes[], int order, MPI_Datatype oldtype,
                            MPI_Datatype *newtype)
{
    int oom = 0;
    MPI_Count *g = counts_of(ndims, array_of_gsizes, &oom);
    int rc = oom ? TYPE_ERR(MPI_ERR_NO_MEM, "MPI_Type_create_darray")
                 : type_darray(size, rank, ndims, g, array_of_distribs, array_of_dargs,
                               array_of_psizes, order, oldtype, newtype, 0,
                               "MPI_Type_create_darray");
    free(g);
    return rc;
}

LOCUS_PMPI_WEAK(Type_create_darray_c)
int PMPI_Type_create_darray_c(int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
                              const int array_of_distribs[], const int array_of_dargs[],
                              const int array_of_psizes[], int order, MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    return type_darray(size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs,
                       array_of_psizes, order, oldtype, newtype, 1, "MPI_Type_create_darray_c");
}
