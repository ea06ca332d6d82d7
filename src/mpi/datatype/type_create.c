/*
 * type_create.c — the classic type constructors (contiguous, vector,
 * hvector, the indexed family, struct, resized): the implementation of
 * each, for its int and large-count (_c) form (generated entry points;
 * fn says which, and the type records it); the layout work is the
 * datatype engine's (src/dtype).
 */
#include <stdlib.h>

#include "datatype.h"

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

int locus_type_contiguous_impl(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype,
                               const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_mdt_t *old = type_obj(oldtype);
    int err = ctor_check(count, old, newtype);
    if (err)
        return TYPE_ERR(err, fn);
    type_args_t a;
    type_args_init(&a, MPI_COMBINER_CONTIGUOUS, locus_fn_large(fn));
    type_args_put(&a, TA_COUNT, count);
    locus_dtype_t *nt = NULL;
    int rc = locus_dtype_contiguous((size_t)count, old->dt, &nt);
    return type_make(rc, nt, &a, 1, &old, newtype, fn);
}

/* Vector (stride in elements, combiner VECTOR) or hvector (bytes). */
static int type_vector(int combiner, MPI_Count count, MPI_Count bl, MPI_Count stride,
                       MPI_Datatype oldtype, MPI_Datatype *newtype, const char *fn)
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
    type_args_init(&a, combiner, locus_fn_large(fn));
    type_args_put(&a, TA_COUNT, count);
    type_args_put(&a, TA_COUNT, bl);
    type_args_put(&a, combiner == MPI_COMBINER_VECTOR ? TA_COUNT : TA_DISP, stride);
    locus_dtype_t *nt = NULL;
    int rc = locus_dtype_hvector((size_t)count, (size_t)bl, bytes, old->dt, &nt);
    return type_make(rc, nt, &a, 1, &old, newtype, fn);
}

int locus_type_vector_impl(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                           MPI_Datatype oldtype, MPI_Datatype *newtype, const char *fn)
{
    return type_vector(MPI_COMBINER_VECTOR, count, blocklength, stride, oldtype, newtype, fn);
}

int locus_type_create_hvector_impl(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                                   MPI_Datatype oldtype, MPI_Datatype *newtype, const char *fn)
{
    return type_vector(MPI_COMBINER_HVECTOR, count, blocklength, stride, oldtype, newtype, fn);
}

/*
 * The indexed family: blocks of bls[i] (or bl for every block, when bls.p
 * is NULL) at displacements displs[i], in elements of old (INDEXED,
 * INDEXED_BLOCK) or bytes (HINDEXED, HINDEXED_BLOCK). Either array is of
 * the form's width (int, or MPI_Count and MPI_Aint).
 */
static int type_indexed(int combiner, MPI_Count count, locus_ivec_t bls, MPI_Count bl,
                        locus_ivec_t displs, MPI_Datatype oldtype, MPI_Datatype *newtype,
                        int with_bls, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    if (count > 0 && with_bls && !bls.p)
        return TYPE_ERR(MPI_ERR_ARG, fn);
    if (!with_bls)
        bls.p = NULL;
    locus_mdt_t *old = type_obj(oldtype);
    int err = ctor_check(count, old, newtype);
    if (!err && !bls.p && !type_count_ok(bl))
        err = MPI_ERR_COUNT;
    if (!err && count > 0 && !displs.p)
        err = MPI_ERR_ARG;
    for (MPI_Count i = 0; !err && bls.p && i < count; i++)
        if (!type_count_ok(locus_ivec_at(bls, (int)i)))
            err = MPI_ERR_COUNT;
    if (err)
        return TYPE_ERR(err, fn);
    int in_bytes = combiner == MPI_COMBINER_HINDEXED || combiner == MPI_COMBINER_HINDEXED_BLOCK;
    size_t *b = malloc(sizeof(size_t) * (size_t)(count + 1));
    ptrdiff_t *d = malloc(sizeof(ptrdiff_t) * (size_t)(count + 1)), ext = type_extent(old);
    type_args_t a;
    type_args_init(&a, combiner, locus_fn_large(fn));
    type_args_put(&a, TA_COUNT, count);
    if (!bls.p)
        type_args_put(&a, TA_COUNT, bl);
    for (MPI_Count i = 0; bls.p && i < count; i++)
        type_args_put(&a, TA_COUNT, locus_ivec_at(bls, (int)i));
    for (MPI_Count i = 0; i < count; i++)
        type_args_put(&a, in_bytes ? TA_DISP : TA_COUNT, locus_ivec_at(displs, (int)i));
    int rc = b && d ? LOCUS_DTYPE_OK : LOCUS_DTYPE_ENOMEM;
    for (MPI_Count i = 0; rc == LOCUS_DTYPE_OK && i < count; i++) {
        b[i] = (size_t)(bls.p ? locus_ivec_at(bls, (int)i) : bl);
        d[i] = locus_ivec_at(displs, (int)i);
        if (!in_bytes && __builtin_mul_overflow(d[i], ext, &d[i]))
            rc = LOCUS_DTYPE_ERANGE;
    }
    locus_dtype_t *nt = NULL;
    if (rc == LOCUS_DTYPE_OK)
        rc = locus_dtype_hindexed((size_t)count, b, d, old->dt, &nt);
    free(b);
    free(d);
    return type_make(rc, nt, &a, 1, &old, newtype, fn);
}

int locus_type_indexed_impl(MPI_Count count, locus_ivec_t array_of_blocklengths,
                            locus_ivec_t array_of_displacements, MPI_Datatype oldtype,
                            MPI_Datatype *newtype, const char *fn)
{
    return type_indexed(MPI_COMBINER_INDEXED, count, array_of_blocklengths, 0,
                        array_of_displacements, oldtype, newtype, 1, fn);
}

/* The byte displacements are MPI_Aint in one form and MPI_Count in the
 * other: both 64 bits wide. */
int locus_type_create_hindexed_impl(MPI_Count count, locus_ivec_t array_of_blocklengths,
                                    const MPI_Count array_of_displacements[],
                                    MPI_Datatype oldtype, MPI_Datatype *newtype, const char *fn)
{
    return type_indexed(MPI_COMBINER_HINDEXED, count, array_of_blocklengths, 0,
                        (locus_ivec_t){ array_of_displacements, 1 }, oldtype, newtype, 1, fn);
}

int locus_type_create_indexed_block_impl(MPI_Count count, MPI_Count blocklength,
                                         locus_ivec_t array_of_displacements,
                                         MPI_Datatype oldtype, MPI_Datatype *newtype,
                                         const char *fn)
{
    return type_indexed(MPI_COMBINER_INDEXED_BLOCK, count, (locus_ivec_t){ 0 }, blocklength,
                        array_of_displacements, oldtype, newtype, 0, fn);
}

int locus_type_create_hindexed_block_impl(MPI_Count count, MPI_Count blocklength,
                                          const MPI_Count array_of_displacements[],
                                          MPI_Datatype oldtype, MPI_Datatype *newtype,
                                          const char *fn)
{
    return type_indexed(MPI_COMBINER_HINDEXED_BLOCK, count, (locus_ivec_t){ 0 }, blocklength,
                        (locus_ivec_t){ array_of_displacements, 1 }, oldtype, newtype, 0, fn);
}

int locus_type_create_struct_impl(MPI_Count count, locus_ivec_t bls, const MPI_Count displs[],
                                  const MPI_Datatype types[], MPI_Datatype *newtype,
                                  const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    if (!type_count_ok(count))
        return TYPE_ERR(MPI_ERR_COUNT, fn);
    if (!newtype || (count > 0 && (!bls.p || !displs || !types)))
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
        else if (!type_count_ok(locus_ivec_at(bls, (int)i)))
            err = MPI_ERR_COUNT;
        else {
            b[i] = (size_t)locus_ivec_at(bls, (int)i);
            d[i] = displs[i];
            t[i] = objs[i]->dt;
        }
    }
    if (err) {
        free(b); free(d); free(t); free(objs);
        return TYPE_ERR(err, fn);
    }
    type_args_t a;
    type_args_init(&a, MPI_COMBINER_STRUCT, locus_fn_large(fn));
    type_args_put(&a, TA_COUNT, count);
    for (size_t i = 0; i < n; i++)
        type_args_put(&a, TA_COUNT, locus_ivec_at(bls, (int)i));
    for (size_t i = 0; i < n; i++)
        type_args_put(&a, TA_DISP, displs[i]);
    locus_dtype_t *nt = NULL;
    int rc = locus_dtype_struct(n, b, d, t, &nt);
    rc = type_make(rc, nt, &a, n, objs, newtype, fn);
    free(b); free(d); free(t); free(objs);
    return rc;
}

int locus_type_create_resized_impl(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent,
                                   MPI_Datatype *newtype, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_mdt_t *old = type_obj(oldtype);
    int err = ctor_check(0, old, newtype);
    if (err)
        return TYPE_ERR(err, fn);
    type_args_t a;
    type_args_init(&a, MPI_COMBINER_RESIZED, locus_fn_large(fn));
    type_args_put(&a, TA_DISP, lb);
    type_args_put(&a, TA_DISP, extent);
    locus_dtype_t *nt = NULL;
    int rc = locus_dtype_resized(old->dt, lb, extent, &nt);
    return type_make(rc, nt, &a, 1, &old, newtype, fn);
}
