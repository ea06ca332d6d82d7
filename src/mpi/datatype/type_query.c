/*
 * type_query.c — sizes and bounds of datatypes (int, large-count and the
 * deprecated _x forms over one implementation each), and the address
 * calls (MPI_Get_address, MPI_Aint_add, MPI_Aint_diff).
 */
#include <limits.h>

#include "type.h"

/* The engine type of a datatype query, or NULL with *err set. */
static locus_dtype_t *query_type(MPI_Datatype h, const void *out1, const void *out2, int *err)
{
    locus_mdt_t *m = type_obj(h);
    *err = !m ? MPI_ERR_TYPE : !out1 || !out2 ? MPI_ERR_ARG : MPI_SUCCESS;
    return *err ? NULL : m->dt;
}

static int type_size(MPI_Datatype datatype, MPI_Count *size, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    int err;
    locus_dtype_t *dt = query_type(datatype, size, size, &err);
    if (!dt)
        return TYPE_ERR(err, fn);
    *size = (MPI_Count)locus_dtype_size(dt);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Type_size)
int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    MPI_Count s = 0;
    int rc = type_size(datatype, size ? &s : NULL, "MPI_Type_size");
    if (rc == MPI_SUCCESS)
        *size = s > INT_MAX ? MPI_UNDEFINED : (int)s;
    return rc;
}

LOCUS_PMPI_WEAK(Type_size_c)
int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size)
{
    return type_size(datatype, size, "MPI_Type_size_c");
}

LOCUS_PMPI_WEAK(Type_size_x)
int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    return type_size(datatype, size, "MPI_Type_size_x");
}

/* Bounds (true: the data's own) as MPI_Counts. */
static int type_bounds(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent, int true_bounds,
                       const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    int err;
    locus_dtype_t *dt = query_type(datatype, lb, extent, &err);
    if (!dt)
        return TYPE_ERR(err, fn);
    ptrdiff_t l, e;
    if (true_bounds)
        locus_dtype_true_extent(dt, &l, &e);
    else
        locus_dtype_extent(dt, &l, &e);
    *lb = l;
    *extent = e;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Type_get_extent)
int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    MPI_Count l = 0, e = 0;
    int rc = type_bounds(datatype, lb ? &l : NULL, extent ? &e : NULL, 0, "MPI_Type_get_extent");
    if (rc == MPI_SUCCESS) {
        *lb = (MPI_Aint)l;
        *extent = (MPI_Aint)e;
    }
    return rc;
}

LOCUS_PMPI_WEAK(Type_get_extent_c)
int PMPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    return type_bounds(datatype, lb, extent, 0, "MPI_Type_get_extent_c");
}

LOCUS_PMPI_WEAK(Type_get_extent_x)
int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    return type_bounds(datatype, lb, extent, 0, "MPI_Type_get_extent_x");
}

LOCUS_PMPI_WEAK(Type_get_true_extent)
int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
    MPI_Count l = 0, e = 0;
    int rc = type_bounds(datatype, true_lb ? &l : NULL, true_extent ? &e : NULL, 1,
                         "MPI_Type_get_true_extent");
    if (rc == MPI_SUCCESS) {
        *true_lb = (MPI_Aint)l;
        *true_extent = (MPI_Aint)e;
    }
    return rc;
}

LOCUS_PMPI_WEAK(Type_get_true_extent_c)
int PMPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count *true_lb,
                                MPI_Count *true_extent)
{
    return type_bounds(datatype, true_lb, true_extent, 1, "MPI_Type_get_true_extent_c");
}

LOCUS_PMPI_WEAK(Type_get_true_extent_x)
int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb,
                                MPI_Count *true_extent)
{
    return type_bounds(datatype, true_lb, true_extent, 1, "MPI_Type_get_true_extent_x");
}

/* ---- addresses ---- */

LOCUS_PMPI_WEAK(Get_address)
int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    LOCUS_CHECK_INIT("MPI_Get_address");
    if (!address)
        return TYPE_ERR(MPI_ERR_ARG, "MPI_Get_address");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}

/* Address arithmetic wraps like the machine's addresses do (no undefined
 * signed overflow). */
LOCUS_PMPI_WEAK(Aint_add)
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}

LOCUS_PMPI_WEAK(Aint_diff)
MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}
