/*
 * type_array.c — MPI_Type_create_subarray and MPI_Type_create_darray, one
 * implementation for the int and large-count forms: argument checks with
 * MPI's error classes (as MPICH reports them: MPI_ERR_DIMS for the
 * dimension count, MPI_ERR_RANK for the rank, MPI_ERR_ARG for the rest),
 * then the datatype engine.
 */
#include <stdlib.h>

#include "datatype.h"

static int order_ok(int order)
{
    return order == MPI_ORDER_C || order == MPI_ORDER_FORTRAN;
}

/* sizes, subsizes, starts: ndims counts each, of either width. */
int locus_type_create_subarray_impl(int ndims, locus_ivec_t sizes_v, locus_ivec_t subsizes_v,
                                    locus_ivec_t starts_v, int order, MPI_Datatype oldtype,
                                    MPI_Datatype *newtype, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_mdt_t *old = type_obj(oldtype);
    int err = ndims < 1 ? MPI_ERR_DIMS : !old ? MPI_ERR_TYPE
              : !sizes_v.p || !subsizes_v.p || !starts_v.p || !newtype || !order_ok(order)
                  ? MPI_ERR_ARG : MPI_SUCCESS;
    MPI_Count *sizes = err ? NULL : malloc(3 * sizeof *sizes * (size_t)ndims);
    if (!err && !sizes)
        err = MPI_ERR_NO_MEM;
    MPI_Count *subsizes = sizes + ndims, *starts = sizes + 2 * ndims;
    for (int d = 0; !err && d < ndims; d++) {
        sizes[d] = locus_ivec_at(sizes_v, d);
        subsizes[d] = locus_ivec_at(subsizes_v, d);
        starts[d] = locus_ivec_at(starts_v, d);
        if (sizes[d] < 1 || subsizes[d] < 0 || starts[d] < 0 || subsizes[d] > sizes[d] ||
            starts[d] > sizes[d] - subsizes[d] || !type_count_ok(sizes[d]))
            err = MPI_ERR_ARG;
    }
    size_t *s = err ? NULL : malloc(3 * sizeof(size_t) * (size_t)ndims);
    if (!err && !s)
        err = MPI_ERR_NO_MEM;
    if (err) {
        free(sizes);
        return TYPE_ERR(err, fn);
    }
    type_args_t a;
    type_args_init(&a, MPI_COMBINER_SUBARRAY, locus_fn_large(fn));
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
    free(sizes);
    return type_make(rc, nt, &a, 1, &old, newtype, fn);
}

int locus_type_create_darray_impl(int size, int rank, int ndims, locus_ivec_t gsizes,
                                  const int distribs[], const int dargs[], const int psizes[],
                                  int order, MPI_Datatype oldtype, MPI_Datatype *newtype,
                                  const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_mdt_t *old = type_obj(oldtype);
    int err = size < 1 ? MPI_ERR_ARG : rank < 0 || rank >= size ? MPI_ERR_RANK
              : ndims < 1 ? MPI_ERR_DIMS : !old ? MPI_ERR_TYPE
              : !gsizes.p || !distribs || !dargs || !psizes || !newtype || !order_ok(order)
                  ? MPI_ERR_ARG : MPI_SUCCESS;
    long long grid = 1;
    for (int d = 0; !err && d < ndims; d++) {
        int dist = distribs[d];
        MPI_Count gsize = locus_ivec_at(gsizes, d);
        if (gsize < 1 || !type_count_ok(gsize) || psizes[d] < 1 ||
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
    type_args_init(&a, MPI_COMBINER_DARRAY, locus_fn_large(fn));
    type_args_put(&a, TA_INT, size);
    type_args_put(&a, TA_INT, rank);
    type_args_put(&a, TA_INT, ndims);
    for (int d = 0; d < ndims; d++) {
        g[d] = (size_t)locus_ivec_at(gsizes, d);
        dist[d] = distribs[d] == MPI_DISTRIBUTE_NONE ? LOCUS_DIST_NONE
                  : distribs[d] == MPI_DISTRIBUTE_BLOCK ? LOCUS_DIST_BLOCK : LOCUS_DIST_CYCLIC;
        darg[d] = dargs[d] == MPI_DISTRIBUTE_DFLT_DARG ? LOCUS_DARG_DEFAULT : dargs[d];
        type_args_put(&a, TA_COUNT, locus_ivec_at(gsizes, d));
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
