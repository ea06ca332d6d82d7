/*
 * type_query.c — sizes and bounds of datatypes (one implementation each
 * for the int, large-count and deprecated _x forms, whose entry points are
 * generated), and the address
 * calls (MPI_Get_address, MPI_Aint_add, MPI_Aint_diff).
 */
#include "datatype.h"

/* The engine type of a datatype query, or NULL with *err set. */
static locus_dtype_t *query_type(MPI_Datatype h, const void *out1, const void *out2, int *err)
{
    locus_mdt_t *m = type_obj(h);
    *err = !m ? MPI_ERR_TYPE : !out1 || !out2 ? MPI_ERR_ARG : MPI_SUCCESS;
    return *err ? NULL : m->dt;
}

int locus_type_size_impl(MPI_Datatype datatype, MPI_Count *size, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    int err;
    locus_dtype_t *dt = query_type(datatype, size, size, &err);
    if (!dt)
        return TYPE_ERR(err, fn);
    *size = (MPI_Count)locus_dtype_size(dt);
    return MPI_SUCCESS;
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

int locus_type_get_extent_impl(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent,
                               const char *fn)
{
    return type_bounds(datatype, lb, extent, 0, fn);
}

int locus_type_get_true_extent_impl(MPI_Datatype datatype, MPI_Count *true_lb,
                                    MPI_Count *true_extent, const char *fn)
{
    return type_bounds(datatype, true_lb, true_extent, 1, fn);
}

/* ---- addresses ---- */

LOCUS_PMPI_WEAK(Get_address)
int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    LOCUS_ENTRY_CS();
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
    LOCUS_ENTRY_CS();
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}

LOCUS_PMPI_WEAK(Aint_diff)
MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    LOCUS_ENTRY_CS();
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}
