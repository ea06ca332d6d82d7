/*
 * datatype/datatype.h — the datatypes and operations chapter: predefined
 * types (type_predef.c), constructors (type_create.c, type_array.c),
 * decoding (type_decode.c), queries (type_query.c), attributes and names
 * (type_attr.c, type.c), packing (type_pack.c) and reduction operations
 * (op.c). It lies above env/ only. Inside: the datatype object's record of
 * how it was made (its "envelope" and "contents"), and the helpers the
 * constructor, decoding, query and packing files share.
 *
 * A datatype object (locus_mdt_t, mpi_impl.h) owns one engine type and
 * lives as long as it. A derived type keeps its constructor's arguments
 * and its component datatype objects (holding a reference on each
 * component's engine type, so MPI_Type_free of a component never breaks
 * MPI_Type_get_contents); they go when the object goes.
 */
#ifndef LOCUS_MPI_DATATYPE_H
#define LOCUS_MPI_DATATYPE_H

#include "env/env.h"

/* The predefined datatypes, made at MPI_Init and released at MPI_Finalize
 * (type_predef.c). */
int locus_types_init(void);
void locus_types_finalize(void);

/* The operation of an MPI_Op handle (NULL: MPI_OP_NULL, freed or bad). */
locus_op_t *locus_op_of(MPI_Op h);
/* locus_mdt_t.reduce_ops of a predefined type (op.c). */
uint32_t locus_op_predef_mask(const locus_dtype_t *dt);

/* Errors of calls that have no communicator go to MPI_COMM_WORLD's handler. */
#define TYPE_ERR(cls, fn) locus_mpi_err(NULL, (cls), (fn))

struct locus_type_decl {
    int combiner;                  /* MPI_COMBINER_* */
    MPI_Count ni, na, nc, nd;      /* lengths of the four arrays */
    int *ints;
    MPI_Aint *aints;
    MPI_Count *counts;             /* only from the large-count constructors */
    locus_mdt_t **types;           /* components (see above) */
};
typedef struct locus_type_decl locus_type_decl_t;

/*
 * A constructor's arguments, recorded in call order with their kind: an
 * int, an address, or a count/displacement that is an int (TA_COUNT) or
 * an address (TA_DISP) in the int-count call and a large count in the
 * _c call -- which is how MPI_Type_get_contents sorts them.
 */
enum { TA_INT, TA_AINT, TA_COUNT, TA_DISP };
typedef struct {
    int combiner, large;
    size_t n, cap;
    unsigned char *cat;
    MPI_Count *val;
    int oom;
} type_args_t;

void type_args_init(type_args_t *a, int combiner, int large);
void type_args_put(type_args_t *a, int cat, MPI_Count v);
void type_args_free(type_args_t *a);

/*
 * Wraps the engine type dt made by a constructor (rc: the engine's
 * result) in a new datatype object recording args and the nd component
 * objects, and hands its handle to *out. On failure reports through
 * TYPE_ERR(fn) (the engine's EARG as MPI_ERR_ARG, ERANGE as
 * MPI_ERR_ARG too: an extent beyond the address space) and frees dt.
 * Always frees args.
 */
int type_make(int rc, locus_dtype_t *dt, type_args_t *args, size_t nd,
              locus_mdt_t *const *types, MPI_Datatype *out, const char *fn);

/* A record with ni (zeroed) ints and the nd component objects (derived
 * ones referenced), no addresses or counts; NULL when out of memory. */
locus_type_decl_t *type_decl_new(int combiner, size_t ni, size_t nd, locus_mdt_t *const *types);

/* The valid datatype object of a handle (committed or not), NULL else. */
locus_mdt_t *type_obj(MPI_Datatype h);

/* A handle to give back from MPI_Type_get_contents for component m: m
 * itself when predefined, else a new object equivalent to m (same layout,
 * commit state and record). NULL when out of memory. */
MPI_Datatype type_contents_handle(locus_mdt_t *m);

/* The record of m (NULL for a named predefined type). */
static inline const locus_type_decl_t *type_decl(const locus_mdt_t *m)
{
    return m->decl;
}

/* The cached "predefined" types made on demand (type_predef.c): the
 * MPI_Type_create_f90_* types per (combiner, p, r). *out gets the existing
 * or a new one; MPI error class. */
int type_cached_f90(int combiner, int p, int r, MPI_Datatype base, MPI_Datatype *out);

/* An MPI_Count argument as a size_t count (negative: MPI_ERR_COUNT). */
static inline int type_count_ok(MPI_Count c)
{
    return c >= 0 && (unsigned long long)c <= (size_t)PTRDIFF_MAX;
}

#endif
