/*
 * type_decode.c — what a datatype is made of: MPI_Type_get_envelope and
 * MPI_Type_get_contents (and their large-count forms) for every combiner;
 * and the calls that find predefined types: MPI_Type_match_size,
 * MPI_Type_create_f90_integer/real/complex, MPI_Type_get_value_index.
 */
#include "datatype.h"

/* The record of a valid type (NULL for a named one); *err on a bad handle. */
static const locus_type_decl_t *decl_or_named(MPI_Datatype h, int *err)
{
    locus_mdt_t *m = type_obj(h);
    *err = m ? MPI_SUCCESS : MPI_ERR_TYPE;
    return m ? type_decl(m) : NULL;
}

static int get_envelope(MPI_Datatype datatype, MPI_Count *ni, MPI_Count *na, MPI_Count *nc,
                        MPI_Count *nd, int *combiner, const char *fn)
{
    int err;
    const locus_type_decl_t *d = decl_or_named(datatype, &err);
    if (err)
        return TYPE_ERR(err, fn);
    if (!ni || !na || !nd || !combiner)
        return TYPE_ERR(MPI_ERR_ARG, fn);
    *combiner = d ? d->combiner : MPI_COMBINER_NAMED;
    *ni = d ? d->ni : 0;
    *na = d ? d->na : 0;
    *nc = d ? d->nc : 0;
    *nd = d ? d->nd : 0;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Type_get_envelope_c)
int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers,
                             MPI_Count *num_addresses, MPI_Count *num_large_counts,
                             MPI_Count *num_datatypes, int *combiner)
{
    LOCUS_ENTRY_CS();
    static const char fn[] = "MPI_Type_get_envelope_c";
    LOCUS_CHECK_INIT(fn);
    if (!num_large_counts)
        return TYPE_ERR(MPI_ERR_ARG, fn);
    return get_envelope(datatype, num_integers, num_addresses, num_large_counts, num_datatypes,
                        combiner, fn);
}

LOCUS_PMPI_WEAK(Type_get_envelope)
int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                           int *num_datatypes, int *combiner)
{
    LOCUS_ENTRY_CS();
    static const char fn[] = "MPI_Type_get_envelope";
    LOCUS_CHECK_INIT(fn);
    MPI_Count ni, na, nc, nd;
    int c, rc = get_envelope(datatype, &ni, &na, &nc, &nd, &c, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    /* A type made by a large-count constructor can only be decoded by the
     * large-count calls (as MPICH does). */
    if (nc > 0 || ni > INT32_MAX || na > INT32_MAX || nd > INT32_MAX)
        return TYPE_ERR(MPI_ERR_TYPE, fn);
    if (!num_integers || !num_addresses || !num_datatypes || !combiner)
        return TYPE_ERR(MPI_ERR_ARG, fn);
    *num_integers = (int)ni;
    *num_addresses = (int)na;
    *num_datatypes = (int)nd;
    *combiner = c;
    return MPI_SUCCESS;
}

static int get_contents(MPI_Datatype datatype, MPI_Count max_i, MPI_Count max_a,
                        MPI_Count max_c, MPI_Count max_d, int *ints, MPI_Aint *aints,
                        MPI_Count *counts, MPI_Datatype *types, const char *fn)
{
    int err;
    const locus_type_decl_t *d = decl_or_named(datatype, &err);
    if (!err && !d)
        err = MPI_ERR_TYPE;   /* a named type has no contents */
    if (err)
        return TYPE_ERR(err, fn);
    if (max_i < d->ni || max_a < d->na || max_c < d->nc || max_d < d->nd ||
        (d->ni && !ints) || (d->na && !aints) || (d->nc && !counts) || (d->nd && !types))
        return TYPE_ERR(MPI_ERR_ARG, fn);
    for (MPI_Count i = 0; i < d->nd; i++) {
        types[i] = type_contents_handle(d->types[i]);
        if (types[i] == MPI_DATATYPE_NULL) {
            while (i-- > 0)
                if (!d->types[i]->predefined)
                    PMPI_Type_free(&types[i]);
            return TYPE_ERR(MPI_ERR_NO_MEM, fn);
        }
    }
    for (MPI_Count i = 0; i < d->ni; i++)
        ints[i] = d->ints[i];
    for (MPI_Count i = 0; i < d->na; i++)
        aints[i] = d->aints[i];
    for (MPI_Count i = 0; i < d->nc; i++)
        counts[i] = d->counts[i];
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Type_get_contents)
int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                           int max_datatypes, int array_of_integers[],
                           MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
    LOCUS_ENTRY_CS();
    static const char fn[] = "MPI_Type_get_contents";
    LOCUS_CHECK_INIT(fn);
    locus_mdt_t *m = type_obj(datatype);
    if (m && type_decl(m) && type_decl(m)->nc > 0)
        return TYPE_ERR(MPI_ERR_TYPE, fn);   /* use MPI_Type_get_contents_c */
    return get_contents(datatype, max_integers, max_addresses, 0, max_datatypes,
                        array_of_integers, array_of_addresses, NULL, array_of_datatypes, fn);
}

LOCUS_PMPI_WEAK(Type_get_contents_c)
int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers,
                             MPI_Count max_addresses, MPI_Count max_large_counts,
                             MPI_Count max_datatypes, int array_of_integers[],
                             MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[],
                             MPI_Datatype array_of_datatypes[])
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Type_get_contents_c");
    return get_contents(datatype, max_integers, max_addresses, max_large_counts, max_datatypes,
                        array_of_integers, array_of_addresses, array_of_large_counts,
                        array_of_datatypes, "MPI_Type_get_contents_c");
}

/* ---- finding predefined types ---- */

LOCUS_PMPI_WEAK(Type_match_size)
int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    LOCUS_ENTRY_CS();
    static const char fn[] = "MPI_Type_match_size";
    LOCUS_CHECK_INIT(fn);
    /* The Fortran sized types (what the call is for, and what MPICH
     * returns when it has Fortran). */
    static const struct { int cls, size; MPI_Datatype t; } table[] = {
        {MPI_TYPECLASS_INTEGER, 1, MPI_INTEGER1}, {MPI_TYPECLASS_INTEGER, 2, MPI_INTEGER2},
        {MPI_TYPECLASS_INTEGER, 4, MPI_INTEGER4}, {MPI_TYPECLASS_INTEGER, 8, MPI_INTEGER8},
        {MPI_TYPECLASS_INTEGER, 16, MPI_INTEGER16},
        {MPI_TYPECLASS_REAL, 2, MPI_REAL2}, {MPI_TYPECLASS_REAL, 4, MPI_REAL4},
        {MPI_TYPECLASS_REAL, 8, MPI_REAL8}, {MPI_TYPECLASS_REAL, 16, MPI_REAL16},
        {MPI_TYPECLASS_COMPLEX, 4, MPI_COMPLEX4}, {MPI_TYPECLASS_COMPLEX, 8, MPI_COMPLEX8},
        {MPI_TYPECLASS_COMPLEX, 16, MPI_COMPLEX16}, {MPI_TYPECLASS_COMPLEX, 32, MPI_COMPLEX32},
    };
    if (!datatype)
        return TYPE_ERR(MPI_ERR_ARG, fn);
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].cls == typeclass && table[i].size == size) {
            *datatype = table[i].t;
            return MPI_SUCCESS;
        }
    return TYPE_ERR(MPI_ERR_ARG, fn);
}

/* The Fortran kinds a SELECTED_*_KIND(p, r) can name, smallest first
 * (gfortran's precision and range for each). */
typedef struct {
    int p, r;
    MPI_Datatype real, cplx;
} fkind_t;
static const fkind_t real_kinds[] = {
    {6, 37, MPI_REAL4, MPI_COMPLEX8},
    {15, 307, MPI_REAL8, MPI_COMPLEX16},
    {33, 4931, MPI_REAL16, MPI_COMPLEX32},
};

static int f90_real(int combiner, int p, int r, MPI_Datatype *newtype, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    if (!newtype || (p == MPI_UNDEFINED && r == MPI_UNDEFINED))
        return TYPE_ERR(MPI_ERR_ARG, fn);
    for (size_t i = 0; i < sizeof real_kinds / sizeof real_kinds[0]; i++) {
        const fkind_t *k = &real_kinds[i];
        if ((p == MPI_UNDEFINED || p <= k->p) && (r == MPI_UNDEFINED || r <= k->r)) {
            MPI_Datatype base = combiner == MPI_COMBINER_F90_REAL ? k->real : k->cplx;
            int rc = type_cached_f90(combiner, p, r, base, newtype);
            return rc ? TYPE_ERR(rc, fn) : MPI_SUCCESS;
        }
    }
    return TYPE_ERR(MPI_ERR_ARG, fn);   /* no such kind */
}

LOCUS_PMPI_WEAK(Type_create_f90_real)
int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    LOCUS_ENTRY_CS();
    return f90_real(MPI_COMBINER_F90_REAL, p, r, newtype, "MPI_Type_create_f90_real");
}

LOCUS_PMPI_WEAK(Type_create_f90_complex)
int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    LOCUS_ENTRY_CS();
    return f90_real(MPI_COMBINER_F90_COMPLEX, p, r, newtype, "MPI_Type_create_f90_complex");
}

LOCUS_PMPI_WEAK(Type_create_f90_integer)
int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    LOCUS_ENTRY_CS();
    static const char fn[] = "MPI_Type_create_f90_integer";
    LOCUS_CHECK_INIT(fn);
    static const struct { int r; MPI_Datatype t; } kinds[] = {
        {2, MPI_INTEGER1}, {4, MPI_INTEGER2}, {9, MPI_INTEGER4}, {18, MPI_INTEGER8},
        {38, MPI_INTEGER16},
    };
    if (!newtype || r == MPI_UNDEFINED)
        return TYPE_ERR(MPI_ERR_ARG, fn);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (r <= kinds[i].r) {
            int rc = type_cached_f90(MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r, kinds[i].t,
                                     newtype);
            return rc ? TYPE_ERR(rc, fn) : MPI_SUCCESS;
        }
    return TYPE_ERR(MPI_ERR_ARG, fn);
}

LOCUS_PMPI_WEAK(Type_get_value_index)
int PMPI_Type_get_value_index(MPI_Datatype value_type, MPI_Datatype index_type,
                              MPI_Datatype *pair_type)
{
    LOCUS_ENTRY_CS();
    static const char fn[] = "MPI_Type_get_value_index";
    LOCUS_CHECK_INIT(fn);
    locus_mdt_t *v = type_obj(value_type), *x = type_obj(index_type);
    if (!v || !x)
        return TYPE_ERR(MPI_ERR_TYPE, fn);
    if (!pair_type)
        return TYPE_ERR(MPI_ERR_ARG, fn);
    /* The named pair types first: C's with an int index, Fortran's pairs
     * of one type. */
    static const struct { MPI_Datatype v, i, pair; } named[] = {
        {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT}, {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
        {MPI_LONG, MPI_INT, MPI_LONG_INT}, {MPI_INT, MPI_INT, MPI_2INT},
        {MPI_SHORT, MPI_INT, MPI_SHORT_INT}, {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
        {MPI_REAL, MPI_REAL, MPI_2REAL},
        {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION},
        {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER},
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (named[i].v == v->handle && named[i].i == x->handle) {
            *pair_type = named[i].pair;
            return MPI_SUCCESS;
        }
    /* No other pair is predefined: MPI_DATATYPE_NULL, as in MPICH and Open
     * MPI (the caller builds a struct type if it needs one). */
    *pair_type = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}
