/*
 * type.c — datatype objects: made around an engine type with the record
 * of their constructor's arguments (datatype.h), committed, freed,
 * duplicated (attributes copied), and cloned for MPI_Type_get_contents.
 */
#include <stdlib.h>
#include <string.h>

#include "datatype.h"

/* ---- recorded constructor arguments ---- */

void type_args_init(type_args_t *a, int combiner, int large)
{
    *a = (type_args_t){.combiner = combiner, .large = large};
}

void type_args_put(type_args_t *a, int cat, MPI_Count v)
{
    if (a->oom)
        return;
    if (a->n == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 8;
        unsigned char *c = realloc(a->cat, cap);
        MPI_Count *vv = c ? realloc(a->val, cap * sizeof *vv) : NULL;
        if (c)
            a->cat = c;
        if (!c || !vv) {
            a->oom = 1;
            return;
        }
        a->val = vv;
        a->cap = cap;
    }
    a->cat[a->n] = (unsigned char)cat;
    a->val[a->n++] = v;
}

void type_args_free(type_args_t *a)
{
    free(a->cat);
    free(a->val);
    a->cat = NULL;
    a->val = NULL;
}

/* Where a recorded value goes: 0 ints, 1 addresses, 2 large counts. */
static int args_slot(const type_args_t *a, int cat)
{
    if (cat == TA_INT)
        return 0;
    if (cat == TA_AINT)
        return 1;
    if (a->large)
        return 2;
    return cat == TA_COUNT ? 0 : 1;
}

static void decl_free(locus_type_decl_t *d)
{
    if (!d)
        return;
    for (MPI_Count i = 0; i < d->nd; i++)
        if (d->types[i] && !d->types[i]->predefined)
            locus_dtype_release(d->types[i]->dt);
    free(d);
}

/* One allocation holding the record and its four arrays. */
static locus_type_decl_t *decl_alloc(int combiner, size_t ni, size_t na, size_t nc, size_t nd)
{
    size_t sz = sizeof(locus_type_decl_t) + na * sizeof(MPI_Aint) + nc * sizeof(MPI_Count) +
                nd * sizeof(locus_mdt_t *) + ni * sizeof(int);
    locus_type_decl_t *d = calloc(1, sz);
    if (!d)
        return NULL;
    d->combiner = combiner;
    d->ni = (MPI_Count)ni;
    d->na = (MPI_Count)na;
    d->nc = (MPI_Count)nc;
    d->nd = (MPI_Count)nd;
    char *p = (char *)(d + 1);
    d->aints = (MPI_Aint *)p;
    p += na * sizeof(MPI_Aint);
    d->counts = (MPI_Count *)p;
    p += nc * sizeof(MPI_Count);
    d->types = (locus_mdt_t **)p;
    p += nd * sizeof(locus_mdt_t *);
    d->ints = (int *)p;
    return d;
}

/* Components are referenced (derived ones through their engine type). */
static void decl_set_types(locus_type_decl_t *d, size_t nd, locus_mdt_t *const *types)
{
    for (size_t i = 0; i < nd; i++) {
        d->types[i] = types[i];
        if (!types[i]->predefined)
            locus_dtype_retain(types[i]->dt);
    }
}

locus_type_decl_t *type_decl_new(int combiner, size_t ni, size_t nd, locus_mdt_t *const *types)
{
    locus_type_decl_t *d = decl_alloc(combiner, ni, 0, 0, nd);
    if (d)
        decl_set_types(d, nd, types);
    return d;
}

static locus_type_decl_t *decl_of_args(const type_args_t *a, size_t nd,
                                       locus_mdt_t *const *types)
{
    size_t n[3] = {0, 0, 0};
    for (size_t i = 0; i < a->n; i++)
        n[args_slot(a, a->cat[i])]++;
    locus_type_decl_t *d = decl_alloc(a->combiner, n[0], n[1], n[2], nd);
    if (!d)
        return NULL;
    size_t k[3] = {0, 0, 0};
    for (size_t i = 0; i < a->n; i++) {
        int s = args_slot(a, a->cat[i]);
        if (s == 0)
            d->ints[k[0]++] = (int)a->val[i];
        else if (s == 1)
            d->aints[k[1]++] = (MPI_Aint)a->val[i];
        else
            d->counts[k[2]++] = a->val[i];
    }
    decl_set_types(d, nd, types);
    return d;
}

static locus_type_decl_t *decl_copy(const locus_type_decl_t *s)
{
    locus_type_decl_t *d = decl_alloc(s->combiner, (size_t)s->ni, (size_t)s->na, (size_t)s->nc,
                                      (size_t)s->nd);
    if (!d)
        return NULL;
    memcpy(d->ints, s->ints, (size_t)s->ni * sizeof(int));
    memcpy(d->aints, s->aints, (size_t)s->na * sizeof(MPI_Aint));
    memcpy(d->counts, s->counts, (size_t)s->nc * sizeof(MPI_Count));
    decl_set_types(d, (size_t)s->nd, s->types);
    return d;
}

/* ---- datatype objects ---- */

/* The engine type went: its MPI object goes with it. */
static void mdt_gone(void *owner)
{
    locus_mdt_t *m = owner;
    locus_handle_leave(m);
    decl_free(m->decl);
    free(m);
}

locus_mdt_t *type_obj(MPI_Datatype h)
{
    locus_mdt_t *m = locus_mdt_of(h);
    return m && m->magic == LOCUS_DT_MAGIC ? m : NULL;
}

/* A new object around engine type dt with record d (both consumed). */
static locus_mdt_t *obj_new(locus_dtype_t *dt, locus_type_decl_t *d)
{
    locus_mdt_t *m = d ? calloc(1, sizeof *m) : NULL;
    if (m && locus_handle_enter(m, LOCUS_HK_DTYPE) < 0) {
        free(m);
        m = NULL;
    }
    if (!m) {
        decl_free(d);
        locus_dtype_release(dt);
        return NULL;
    }
    m->magic = LOCUS_DT_MAGIC;
    m->dt = dt;
    m->decl = d;
    m->handle = (MPI_Datatype)m;
    locus_dtype_set_owner(dt, m, mdt_gone);
    return m;
}

int type_make(int rc, locus_dtype_t *dt, type_args_t *args, size_t nd,
              locus_mdt_t *const *types, MPI_Datatype *out, const char *fn)
{
    if (rc == LOCUS_DTYPE_OK && args->oom) {
        locus_dtype_release(dt);
        rc = LOCUS_DTYPE_ENOMEM;
    }
    if (rc != LOCUS_DTYPE_OK) {
        type_args_free(args);
        return TYPE_ERR(rc == LOCUS_DTYPE_ENOMEM ? MPI_ERR_NO_MEM : MPI_ERR_ARG, fn);
    }
    locus_mdt_t *m = obj_new(dt, decl_of_args(args, nd, types));
    type_args_free(args);
    if (!m)
        return TYPE_ERR(MPI_ERR_NO_MEM, fn);
    *out = m->handle;
    return MPI_SUCCESS;
}

MPI_Datatype type_contents_handle(locus_mdt_t *m)
{
    if (m->predefined)
        return m->handle;
    locus_dtype_t *dt;
    if (locus_dtype_dup(m->dt, &dt) != LOCUS_DTYPE_OK)
        return MPI_DATATYPE_NULL;
    locus_mdt_t *c = obj_new(dt, decl_copy(m->decl));
    if (!c)
        return MPI_DATATYPE_NULL;
    memcpy(c->name, m->name, sizeof c->name);
    return c->handle;
}

LOCUS_PMPI_WEAK(Type_commit)
int PMPI_Type_commit(MPI_Datatype *datatype)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Type_commit");
    locus_mdt_t *m = datatype ? type_obj(*datatype) : NULL;
    if (!m)
        return TYPE_ERR(MPI_ERR_TYPE, "MPI_Type_commit");
    locus_dtype_commit(m->dt);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Type_free)
int PMPI_Type_free(MPI_Datatype *datatype)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Type_free");
    locus_mdt_t *m = datatype ? type_obj(*datatype) : NULL;
    /* Predefined types (the f90 and value-index ones included) stay. */
    if (!m || m->predefined)
        return TYPE_ERR(MPI_ERR_TYPE, "MPI_Type_free");
    int rc = locus_attr_clear(&m->attrs, ATTR_TYPE, m->handle);
    /* Operations still using the type hold their own references (pending
     * receives, nonblocking collectives); the object goes after the last. */
    m->magic = 0;
    *datatype = MPI_DATATYPE_NULL;
    locus_dtype_release(m->dt);
    return rc ? TYPE_ERR(rc, "MPI_Type_free") : MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Type_dup)
int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    LOCUS_ENTRY_CS();
    static const char fn[] = "MPI_Type_dup";
    LOCUS_CHECK_INIT(fn);
    locus_mdt_t *old = type_obj(oldtype);
    if (!old)
        return TYPE_ERR(MPI_ERR_TYPE, fn);
    if (!newtype)
        return TYPE_ERR(MPI_ERR_ARG, fn);
    locus_dtype_t *nt = NULL;
    type_args_t a;
    type_args_init(&a, MPI_COMBINER_DUP, 0);
    MPI_Datatype h;
    int rc = locus_dtype_dup(old->dt, &nt);
    rc = type_make(rc, nt, &a, 1, &old, &h, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    /* The attributes come along, through their copy callbacks. */
    locus_mdt_t *m = type_obj(h);
    rc = locus_attr_copy(old->attrs, ATTR_TYPE, old->handle, &m->attrs);
    if (rc != MPI_SUCCESS) {
        locus_attr_clear(&m->attrs, ATTR_TYPE, h);
        m->magic = 0;
        locus_dtype_release(m->dt);
        return TYPE_ERR(rc, fn);
    }
    *newtype = h;
    return MPI_SUCCESS;
}
