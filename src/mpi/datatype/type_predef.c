/*
 * type_predef.c — the predefined datatypes of the ABI: one MPI datatype
 * object per handle (MPI_INT and MPI_INTEGER are different datatypes with
 * the same layout), each over its own engine type so that an engine type
 * always knows its handle (a user operation is called with it); and the
 * types MPI makes on demand but treats as predefined (never freed): the
 * MPI_Type_create_f90_* types, one per (combiner, p, r).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datatype.h"

typedef struct {
    uint16_t handle;
    locus_elem_t kind;
    const char *name;
} predef_t;

/* Every predefined datatype handle of the ABI, with its element kind. The
 * Fortran kinds without a C type here (MPI_REAL2, MPI_REAL16,
 * MPI_COMPLEX4, MPI_COMPLEX32, MPI_INTEGER16, MPI_LOGICAL16) are full
 * types; their arithmetic needs _Float16/_Float128/__int128 (GCC has them
 * on x86-64), without which reductions on them are MPI_ERR_OP. */
static const predef_t predefs[] = {
    {0x201, LOCUS_EL_AINT, "MPI_AINT"}, {0x202, LOCUS_EL_COUNT, "MPI_COUNT"},
    {0x203, LOCUS_EL_OFFSET, "MPI_OFFSET"}, {0x207, LOCUS_EL_BYTE, "MPI_PACKED"},
    {0x208, LOCUS_EL_SHORT, "MPI_SHORT"}, {0x209, LOCUS_EL_INT, "MPI_INT"},
    {0x20a, LOCUS_EL_LONG, "MPI_LONG"}, {0x20b, LOCUS_EL_LLONG, "MPI_LONG_LONG"},
    {0x20c, LOCUS_EL_USHORT, "MPI_UNSIGNED_SHORT"}, {0x20d, LOCUS_EL_UINT, "MPI_UNSIGNED"},
    {0x20e, LOCUS_EL_ULONG, "MPI_UNSIGNED_LONG"},
    {0x20f, LOCUS_EL_ULLONG, "MPI_UNSIGNED_LONG_LONG"},
    {0x210, LOCUS_EL_FLOAT, "MPI_FLOAT"},
    {0x212, LOCUS_EL_CFLOAT, "MPI_C_FLOAT_COMPLEX"},
    {0x213, LOCUS_EL_CFLOAT, "MPI_CXX_FLOAT_COMPLEX"},
    {0x214, LOCUS_EL_DOUBLE, "MPI_DOUBLE"},
    {0x216, LOCUS_EL_CDOUBLE, "MPI_C_DOUBLE_COMPLEX"},
    {0x217, LOCUS_EL_CDOUBLE, "MPI_CXX_DOUBLE_COMPLEX"},
    {0x218, LOCUS_EL_FLOGICAL4, "MPI_LOGICAL"}, {0x219, LOCUS_EL_INT, "MPI_INTEGER"},
    {0x21a, LOCUS_EL_FLOAT, "MPI_REAL"}, {0x21b, LOCUS_EL_CFLOAT, "MPI_COMPLEX"},
    {0x21c, LOCUS_EL_DOUBLE, "MPI_DOUBLE_PRECISION"},
    {0x21d, LOCUS_EL_CDOUBLE, "MPI_DOUBLE_COMPLEX"},
    {0x21e, LOCUS_EL_CHAR, "MPI_CHARACTER"}, {0x220, LOCUS_EL_LDOUBLE, "MPI_LONG_DOUBLE"},
    {0x224, LOCUS_EL_CLDOUBLE, "MPI_C_LONG_DOUBLE_COMPLEX"},
    {0x225, LOCUS_EL_CLDOUBLE, "MPI_CXX_LONG_DOUBLE_COMPLEX"},
    {0x228, LOCUS_EL_FLOAT_INT, "MPI_FLOAT_INT"}, {0x229, LOCUS_EL_DOUBLE_INT, "MPI_DOUBLE_INT"},
    {0x22a, LOCUS_EL_LONG_INT, "MPI_LONG_INT"}, {0x22b, LOCUS_EL_2INT, "MPI_2INT"},
    {0x22c, LOCUS_EL_SHORT_INT, "MPI_SHORT_INT"},
    {0x22d, LOCUS_EL_LDOUBLE_INT, "MPI_LONG_DOUBLE_INT"},
    {0x230, LOCUS_EL_2FLOAT, "MPI_2REAL"}, {0x231, LOCUS_EL_2DOUBLE, "MPI_2DOUBLE_PRECISION"},
    {0x232, LOCUS_EL_2INT, "MPI_2INTEGER"},
    {0x238, LOCUS_EL_BOOL, "MPI_C_BOOL"}, {0x239, LOCUS_EL_BOOL, "MPI_CXX_BOOL"},
    {0x23c, LOCUS_EL_WCHAR, "MPI_WCHAR"},
    {0x240, LOCUS_EL_INT8, "MPI_INT8_T"}, {0x241, LOCUS_EL_UINT8, "MPI_UINT8_T"},
    {0x243, LOCUS_EL_CHAR, "MPI_CHAR"}, {0x244, LOCUS_EL_SCHAR, "MPI_SIGNED_CHAR"},
    {0x245, LOCUS_EL_UCHAR, "MPI_UNSIGNED_CHAR"}, {0x247, LOCUS_EL_BYTE, "MPI_BYTE"},
    {0x248, LOCUS_EL_INT16, "MPI_INT16_T"}, {0x249, LOCUS_EL_UINT16, "MPI_UINT16_T"},
    {0x250, LOCUS_EL_INT32, "MPI_INT32_T"}, {0x251, LOCUS_EL_UINT32, "MPI_UINT32_T"},
    {0x258, LOCUS_EL_INT64, "MPI_INT64_T"}, {0x259, LOCUS_EL_UINT64, "MPI_UINT64_T"},
    {0x2c0, LOCUS_EL_FLOGICAL1, "MPI_LOGICAL1"}, {0x2c1, LOCUS_EL_INT8, "MPI_INTEGER1"},
    {0x2c8, LOCUS_EL_FLOGICAL2, "MPI_LOGICAL2"}, {0x2c9, LOCUS_EL_INT16, "MPI_INTEGER2"},
    {0x2ca, LOCUS_EL_FLOAT16, "MPI_REAL2"},
    {0x2d0, LOCUS_EL_FLOGICAL4, "MPI_LOGICAL4"}, {0x2d1, LOCUS_EL_INT32, "MPI_INTEGER4"},
    {0x2d2, LOCUS_EL_FLOAT, "MPI_REAL4"}, {0x2d3, LOCUS_EL_CFLOAT16, "MPI_COMPLEX4"},
    {0x2d8, LOCUS_EL_FLOGICAL8, "MPI_LOGICAL8"}, {0x2d9, LOCUS_EL_INT64, "MPI_INTEGER8"},
    {0x2da, LOCUS_EL_DOUBLE, "MPI_REAL8"}, {0x2db, LOCUS_EL_CFLOAT, "MPI_COMPLEX8"},
    {0x2e0, LOCUS_EL_FLOGICAL16, "MPI_LOGICAL16"}, {0x2e1, LOCUS_EL_INT128, "MPI_INTEGER16"},
    {0x2e2, LOCUS_EL_FLOAT128, "MPI_REAL16"}, {0x2e3, LOCUS_EL_CDOUBLE, "MPI_COMPLEX16"},
    {0x2eb, LOCUS_EL_CFLOAT128, "MPI_COMPLEX32"},
};

/* A predefined object over a copy of engine type base (committed). */
static int predef_fill(locus_mdt_t *m, locus_dtype_t *base, MPI_Datatype handle)
{
    if (locus_dtype_dup(base, &m->dt) != LOCUS_DTYPE_OK)
        return MPI_ERR_NO_MEM;
    locus_dtype_commit(m->dt);
    locus_dtype_set_owner(m->dt, m, NULL);
    m->magic = LOCUS_DT_MAGIC;
    m->predefined = 1;
    m->handle = handle;
    m->reduce_ops = locus_op_predef_mask(m->dt);
    return MPI_SUCCESS;
}

static void predef_clear(locus_mdt_t *m)
{
    locus_attr_clear(&m->attrs, ATTR_TYPE, m->handle);
    locus_dtype_set_owner(m->dt, NULL, NULL);
    locus_dtype_release(m->dt);
    free(m->decl);   /* components of on-demand types are predefined: no references */
    memset(m, 0, sizeof *m);
}

/* ---- types made on demand ---- */

typedef struct {
    int combiner, p, r;
    locus_mdt_t *m;
} tcache_ent_t;

static struct {
    pthread_mutex_t lock;
    size_t n, cap;
    tcache_ent_t *e;
} tcache = {PTHREAD_MUTEX_INITIALIZER, 0, 0, NULL};

/* The cached type matching key, made from base with record d when new (d
 * consumed either way). */
static int cache_get(const tcache_ent_t *key, locus_dtype_t *base, locus_type_decl_t *d,
                     MPI_Datatype *out)
{
    pthread_mutex_lock(&tcache.lock);
    int rc = MPI_SUCCESS;
    for (size_t i = 0; i < tcache.n; i++) {
        tcache_ent_t *e = &tcache.e[i];
        if (e->combiner == key->combiner && e->p == key->p && e->r == key->r) {
            *out = e->m->handle;
            goto done;
        }
    }
    rc = MPI_ERR_NO_MEM;
    if (tcache.n == tcache.cap) {
        size_t cap = tcache.cap ? 2 * tcache.cap : 8;
        tcache_ent_t *n = realloc(tcache.e, cap * sizeof *n);
        if (!n)
            goto done;
        tcache.e = n;
        tcache.cap = cap;
    }
    locus_mdt_t *m = d ? calloc(1, sizeof *m) : NULL;
    if (!m || predef_fill(m, base, (MPI_Datatype)m) != MPI_SUCCESS
        || locus_handle_enter(m, LOCUS_HK_DTYPE) < 0) {
        free(m);
        goto done;
    }
    m->decl = d;
    d = NULL;
    tcache.e[tcache.n] = *key;
    tcache.e[tcache.n++].m = m;
    *out = m->handle;
    rc = MPI_SUCCESS;
done:
    pthread_mutex_unlock(&tcache.lock);
    free(d);
    return rc;
}

int type_cached_f90(int combiner, int p, int r, MPI_Datatype base, MPI_Datatype *out)
{
    int ni = combiner == MPI_COMBINER_F90_INTEGER ? 1 : 2;
    locus_type_decl_t *d = type_decl_new(combiner, (size_t)ni, 0, NULL);
    if (d) {
        d->ints[0] = ni == 1 ? r : p;
        if (ni == 2)
            d->ints[1] = r;
    }
    tcache_ent_t key = {combiner, p, r, NULL};
    return cache_get(&key, locus_dt_of(base), d, out);
}

/* ---- init / finalize ---- */

int locus_types_init(void)
{
    for (size_t i = 0; i < sizeof predefs / sizeof predefs[0]; i++) {
        const predef_t *p = &predefs[i];
        locus_mdt_t *m = &locus_predef_types[p->handle - 0x200];
        if (m->dt)
            continue;   /* a second MPI_Init after MPI_Finalize is refused earlier */
        int rc = predef_fill(m, locus_dtype_basic(p->kind), (MPI_Datatype)(uintptr_t)p->handle);
        if (rc != MPI_SUCCESS)
            return rc;
        snprintf(m->name, sizeof m->name, "%s", p->name);
    }
    return MPI_SUCCESS;
}

void locus_types_finalize(void)
{
    pthread_mutex_lock(&tcache.lock);
    for (size_t i = 0; i < tcache.n; i++) {
        predef_clear(tcache.e[i].m);
        locus_handle_leave(tcache.e[i].m);
        free(tcache.e[i].m);
    }
    free(tcache.e);
    tcache.e = NULL;
    tcache.n = tcache.cap = 0;
    pthread_mutex_unlock(&tcache.lock);
    for (size_t i = 0; i < 256; i++)
        if (locus_predef_types[i].dt)
            predef_clear(&locus_predef_types[i]);
}
