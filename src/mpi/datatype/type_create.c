/*
 * type_create.c — the classic type constructors (contiguous, vector,
 * hvector, the indexed family, struct, resized), each in its int and
 * large-count (_c) form over one internal function taking MPI_Count
 * arguments; the layout work is the datatype engine's (src/dtype).
 */
#include <stdlib.h>

#include "type.h"

/* The common checks: count, old type, output. */
static int ctor_check(MPI_Count count, locus_mdt_t *old, const void *out)
{
    if (!type_count_ok(count))
        return MPI_ERR_COUNT;
    if (!old)
        return MPI_ERR_TYPE;
    return out ? MPI_SUCCESS : MPI_ERR_ARG;
}

static ptrdiff_t type_extent(const locus_mdt_t *m)
{
    ptrdiff_t lb, ext;
    locus_dtype_extent(m->dt, &lb, &ext);
    return ext;
}

static int type_contiguous(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype,
                           int large, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_mdt_t *old = type_obj(oldtype);
    int err = ctor_check(count, old, newtype);
    if (err)
        return TYPE_ERR(err, fn);
    type_args_t a;
    type_args_init(&a, MPI_COMBINER_CONTIGUOUS, large);
    type_args_put(&a, TA_COUNT, count);
    locus_dtype_t *nt = NULL;
    int rc = locus_dtype_contiguous((size_t)count, old->dt, &nt);
    return type_make(rc, nt, &a, 1, &old, newtype, fn);
}

LOCUS_PMPI_WEAK(Type_contiguous)
int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return type_contiguous(count, oldtype, newtype, 0, "MPI_Type_contiguous");
}

LOCUS_PMPI_WEAK(Type_contiguous_c)
int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return type_contiguous(count, oldtype, newtype, 1, "MPI_Type_contiguous_c");
}

/* Vector (stride in elements, combiner VECTOR) or hvector (bytes). */
static int type_vector(int combiner, MPI_Count count, MPI_Count bl, MPI_Count stride,
                       MPI_Datatype oldtype, MPI_Datatype *newtype, int large, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_mdt_t *old = type_obj(oldtype);
    int err = ctor_check(count, old, newtype);
    if (!err && !type_count_ok(bl))
        err = MPI_ERR_COUNT;
    if (err)
        return TYPE_ERR(err, fn);
    ptrdiff_t bytes = stride;
    if (combiner == MPI_COMBINER_VECTOR && __builtin_mul_overflow(stride, type_extent(old), &bytes))
        return TYPE_ERR(MPI_ERR_ARG, fn);
    type_args_t a;
    type_args_init(&a, combiner, large);
    type_args_put(&a, TA_COUNT, count);
    type_args_put(&a, TA_COUNT, bl);
    type_args_put(&a, combiner == MPI_COMBINER_VECTOR ? TA_COUNT : TA_DISP, stride);
    locus_dtype_t *nt = NULL;
    int rc = locus_dtype_hvector((size_t)count, (size_t)bl, bytes, old->dt, &nt);
    return type_make(rc, nt, &a, 1, &old, newtype, fn);
}

LOCUS_PMPI_WEAK(Type_vector)
int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    return type_vector(MPI_COMBINER_VECTOR, count, blocklength, stride, oldtype, newtype, 0,
                       "MPI_Type_vector");
}

LOCUS_PMPI_WEAK(Type_vector_c)
int PMPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return type_vector(MPI_COMBINER_VECTOR, count, blocklength, stride, oldtype, newtype, 1,
                       "MPI_Type_vector_c");
}

LOCUS_PMPI_WEAK(Type_create_hvector)
int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride,
                             MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return type_vector(MPI_COMBINER_HVECTOR, count, blocklength, stride, oldtype, newtype, 0,
                       "MPI_Type_create_hvector");
}

LOCUS_PMPI_WEAK(Type_create_hvector_c)
int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                               MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return type_vector(MPI_COMBINER_HVECTOR, count, blocklength, stride, oldtype, newtype, 1,
                       "MPI_Type_create_hvector_c");
}

/*
 * The indexed family: blocks of bls[i] (or bl for every block, when bls
 * is NULL) at displacements displs[i], in elements of old (INDEXED,
 * INDEXED_BLOCK) or bytes (HINDEXED, HINDEXED_BLOCK).
 */
static int type_indexed(int combiner, MPI_Count count, const MPI_Count *bls, MPI_Count bl,
                        const MPI_Count *displs, MPI_Datatype oldtype, MPI_Datatype *newtype,
                        int large, const char *fn)
{
    locus_mdt_t *old = type_obj(oldtype);
    int err = ctor_check(count, old, newtype);
    if (!err && !bls && !type_count_ok(bl))
        err = MPI_ERR_COUNT;
    if (!err && count > 0 && !displs)
        err = MPI_ERR_ARG;
    for (MPI_Count i = 0; !err && bls && i < count; i++)
        if (!type_count_ok(bls[i]))
            err = MPI_ERR_COUNT;
    if (err)
        return TYPE_ERR(err, fn);
    int in_bytes = combiner == MPI_COMBINER_HINDEXED || combiner == MPI_COMBINER_HINDEXED_BLOCK;
    size_t *b = malloc(sizeof(size_t) * (size_t)(count + 1));
    ptrdiff_t *d = malloc(sizeof(ptrdiff_t) * (size_t)(count + 1)), ext = type_extent(old);
    type_args_t a;
    type_args_init(&a, combiner, large);
    type_args_put(&a, TA_COUNT, count);
    if (!bls)
        type_args_put(&a, TA_COUNT, bl);
    for (MPI_Count i = 0; bls && i < count; i++)
        type_args_put(&a, TA_COUNT, bls[i]);
    for (MPI_Count i = 0; i < count; i++)
        type_args_put(&a, in_bytes ? TA_DISP : TA_COUNT, displs[i]);
    int rc = b && d ? LOCUS_DTYPE_OK : LOCUS_DTYPE_ENOMEM;
    for (MPI_Count i = 0; rc == LOCUS_DTYPE_OK && i < count; i++) {
        b[i] = (size_t)(bls ? bls[i] : bl);
        d[i] = displs[i];
        if (!in_bytes && __builtin_mul_overflow(displs[i], ext, &d[i]))
            rc = LOCUS_DTYPE_ERANGE;
    }
    locus_dtype_t *nt = NULL;
    if (rc == LOCUS_DTYPE_OK)
        rc = locus_dtype_hindexed((size_t)count, b, d, old->dt, &nt);
    free(b);
    free(d);
    return type_make(rc, nt, &a, 1, &old, newtype, fn);
}

/* An int or MPI_Aint array, whichever is given, as MPI_Counts (NULL when
 * count <= 0, neither is given or out of memory). */
static MPI_Count *counts_of(int count, const int *iv, const MPI_Aint *av, int *oom)
{
    if (count <= 0 || (!iv && !av))
        return NULL;
    MPI_Count *c = malloc(sizeof *c * (size_t)count);
    if (!c) {
        *oom = 1;
        return NULL;
    }
    for (int i = 0; i < count; i++)
        c[i] = iv ? iv[i] : av[i];
    return c;
}

/* The int forms: convert, check the block-length array, call the common one. */
static int indexed_int(int combiner, int count, const int *bls, int bl, const int *idispls,
                       const MPI_Aint *adispls, MPI_Datatype oldtype, MPI_Datatype *newtype,
                       int with_bls, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    if (count > 0 && with_bls && !bls)
        return TYPE_ERR(MPI_ERR_ARG, fn);
    int oom = 0;
    MPI_Count *b = with_bls ? counts_of(count, bls, NULL, &oom) : NULL;
    MPI_Count *d = counts_of(count, idispls, adispls, &oom);
    int rc = oom ? TYPE_ERR(MPI_ERR_NO_MEM, fn)
                 : type_indexed(combiner, count, with_bls ? (b ? b : (MPI_Count[]){0}) : NULL,
                                bl, d, oldtype, newtype, 0, fn);
    free(b);
    free(d);
    return rc;
}

/* The _c forms: check the block-length array, call the common one. */
static int indexed_c(int combiner, MPI_Count count, const MPI_Count *bls, MPI_Count bl,
                     const MPI_Count *displs, MPI_Datatype oldtype, MPI_Datatype *newtype,
                     int with_bls, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    if (count > 0 && with_bls && !bls)
        return TYPE_ERR(MPI_ERR_ARG, fn);
    return type_indexed(combiner, count, with_bls ? (bls ? bls : (MPI_Count[]){0}) : NULL, bl,
                        displs, oldtype, newtype, 1, fn);
}

LOCUS_PMPI_WEAK(Type_indexed)
int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                      const int array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    return indexed_int(MPI_COMBINER_INDEXED, count, array_of_blocklengths, 0,
                       array_of_displacements, NULL, oldtype, newtype, 1, "MPI_Type_indexed");
}

LOCUS_PMPI_WEAK(Type_indexed_c)
int PMPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                        const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                        MPI_Datatype *newtype)
{
    return indexed_c(MPI_COMBINER_INDEXED, count, array_of_blocklengths, 0,
                     array_of_displacements, oldtype, newtype, 1, "MPI_Type_indexed_c");
}

LOCUS_PMPI_WEAK(Type_create_hindexed)
int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                              const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    return indexed_int(MPI_COMBINER_HINDEXED, count, array_of_blocklengths, 0, NULL,
                       array_of_displacements, oldtype, newtype, 1, "MPI_Type_create_hindexed");
}

LOCUS_PMPI_WEAK(Type_create_hindexed_c)
int PMPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                MPI_Datatype *newtype)
{
    return indexed_c(MPI_COMBINER_HINDEXED, count, array_of_blocklengths, 0,
                     array_of_displacements, oldtype, newtype, 1, "MPI_Type_create_hindexed_c");
}

LOCUS_PMPI_WEAK(Type_create_indexed_block)
int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return indexed_int(MPI_COMBINER_INDEXED_BLOCK, count, NULL, blocklength,
                       array_of_displacements, NULL, oldtype, newtype, 0,
                       "MPI_Type_create_indexed_block");
}

LOCUS_PMPI_WEAK(Type_create_indexed_block_c)
int PMPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength,
                                     const MPI_Count array_of_displacements[],
                                     MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return indexed_c(MPI_COMBINER_INDEXED_BLOCK, count, NULL, blocklength,
                     array_of_displacements, oldtype, newtype, 0,
                     "MPI_Type_create_indexed_block_c");
}

LOCUS_PMPI_WEAK(Type_create_hindexed_block)
int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                    const MPI_Aint array_of_displacements[],
                                    MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return indexed_int(MPI_COMBINER_HINDEXED_BLOCK, count, NULL, blocklength, NULL,
                       array_of_displacements, oldtype, newtype, 0,
                       "MPI_Type_create_hindexed_block");
}

LOCUS_PMPI_WEAK(Type_create_hindexed_block_c)
int PMPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength,
                                      const MPI_Count array_of_displacements[],
                                      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return indexed_c(MPI_COMBINER_HINDEXED_BLOCK, count, NULL, blocklength,
                     array_of_displacements, oldtype, newtype, 0,
                     "MPI_Type_create_hindexed_block_c");
}

static int type_struct(MPI_Count count, const MPI_Count *bls, const MPI_Count *displs,
                       const MPI_Datatype *types, MPI_Datatype *newtype, int large,
                       const char *fn)
{
    if (!type_count_ok(count))
        return TYPE_ERR(MPI_ERR_COUNT, fn);
    if (!newtype || (count > 0 && (!bls || !displs || !types)))
        return TYPE_ERR(MPI_ERR_ARG, fn);
    size_t n = (size_t)count;
    size_t *b = malloc(sizeof *b * (n + 1));
    ptrdiff_t *d = malloc(sizeof *d * (n + 1));
    locus_dtype_t **t = malloc(sizeof *t * (n + 1));
    locus_mdt_t **objs = malloc(sizeof *objs * (n + 1));
    int err = b && d && t && objs ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    for (size_t i = 0; !err && i < n; i++) {
        objs[i] = type_obj(types[i]);
        if (!objs[i])
            err = MPI_ERR_TYPE;
        else if (!type_count_ok(bls[i]))
            err = MPI_ERR_COUNT;
        else {
            b[i] = (size_t)bls[i];
            d[i] = displs[i];
            t[i] = objs[i]->dt;
        }
    }
    if (err) {
        free(b); free(d); free(t); free(objs);
        return TYPE_ERR(err, fn);
    }
    type_args_t a;
    type_args_init(&a, MPI_COMBINER_STRUCT, large);
    type_args_put(&a, TA_COUNT, count);
    for (size_t i = 0; i < n; i++)
        type_args_put(&a, TA_COUNT, bls[i]);
    for (size_t i = 0; i < n; i++)
        type_args_put(&a, TA_DISP, displs[i]);
    locus_dtype_t *nt = NULL;
    int rc = locus_dtype_struct(n, b, d, t, &nt);
    rc = type_make(rc, nt, &a, n, objs, newtype, fn);
    free(b); free(d); free(t); free(objs);
    return rc;
}

LOCUS_PMPI_WEAK(Type_create_struct)
int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                            const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_struct";
    LOCUS_CHECK_INIT(fn);
    if (count > 0 && (!array_of_blocklengths || !array_of_displacements))
        return TYPE_ERR(MPI_ERR_ARG, fn);
    int oom = 0;
    MPI_Count *b = counts_of(count, array_of_blocklengths, NULL, &oom);
    MPI_Count *d = counts_of(count, NULL, array_of_displacements, &oom);
    int rc = oom ? TYPE_ERR(MPI_ERR_NO_MEM, fn)
                 : type_struct(count, b, d, array_of_types, newtype, 0, fn);
    free(b);
    free(d);
    return rc;
}

LOCUS_PMPI_WEAK(Type_create_struct_c)
int PMPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                              const MPI_Count array_of_displacements[],
                              const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    LOCUS_CHECK_INIT("MPI_Type_create_struct_c");
    return type_struct(count, array_of_blocklengths, array_of_displacements, array_of_types,
                       newtype, 1, "MPI_Type_create_struct_c");
}

static int type_resized(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent,
                        MPI_Datatype *newtype, int large, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_mdt_t *old = type_obj(oldtype);
    if (!old)
        return TYPE_ERR(MPI_ERR_TYPE, fn);
    if (!newtype)
        return TYPE_ERR(MPI_ERR_ARG, fn);
    type_args_t a;
    type_args_init(&a, MPI_COMBINER_RESIZED, large);
    type_args_put(&a, TA_DISP, lb);
    type_args_put(&a, TA_DISP, extent);
    locus_dtype_t *nt = NULL;
    int rc = locus_dtype_resized(old->dt, lb, extent, &nt);
    return type_make(rc, nt, &a, 1, &old, newtype, fn);
}

LOCUS_PMPI_WEAK(Type_create_resized)
int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                             MPI_Datatype *newtype)
{
    return type_resized(oldtype, lb, extent, newtype, 0, "MPI_Type_create_resized");
}

LOCUS_PMPI_WEAK(Type_create_resized_c)
int PMPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent,
                               MPI_Datatype *newtype)
{
    return type_resized(oldtype, lb, extent, newtype, 1, "MPI_Type_create_resized_c");
}
