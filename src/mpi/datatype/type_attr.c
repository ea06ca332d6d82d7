/*
 * type_attr.c — what a user attaches to a datatype: its name
 * (MPI_Type_set_name/get_name; the predefined ones start with their MPI
 * names) and cached attributes (keyvals of kind ATTR_TYPE, env/env.h;
 * copied by MPI_Type_dup, deleted by MPI_Type_free).
 */
#include <string.h>

#include "datatype.h"

LOCUS_PMPI_WEAK(Type_set_name)
int PMPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Type_set_name");
    locus_mdt_t *m = type_obj(datatype);
    if (!m)
        return TYPE_ERR(MPI_ERR_TYPE, "MPI_Type_set_name");
    if (!type_name)
        return TYPE_ERR(MPI_ERR_ARG, "MPI_Type_set_name");
    /* Longer names are cut to MPI_MAX_OBJECT_NAME - 1 characters. */
    size_t n = strnlen(type_name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(m->name, type_name, n);
    m->name[n] = '\0';
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Type_get_name)
int PMPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Type_get_name");
    locus_mdt_t *m = type_obj(datatype);
    /* The null handle has a name too (MPICH and Open MPI answer it). */
    if (!m && datatype != MPI_DATATYPE_NULL)
        return TYPE_ERR(MPI_ERR_TYPE, "MPI_Type_get_name");
    if (!type_name || !resultlen)
        return TYPE_ERR(MPI_ERR_ARG, "MPI_Type_get_name");
    const char *name = m ? m->name : "MPI_DATATYPE_NULL";
    size_t n = strlen(name);
    memcpy(type_name, name, n + 1);
    *resultlen = (int)n;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Type_create_keyval)
int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                            MPI_Type_delete_attr_function *type_delete_attr_fn,
                            int *type_keyval, void *extra_state)
{
    LOCUS_ENTRY_CS();
    return locus_keyval_create_call(ATTR_TYPE, (attr_copy_fn)type_copy_attr_fn,
                                    (attr_delete_fn)type_delete_attr_fn, extra_state,
                                    type_keyval, "MPI_Type_create_keyval");
}

LOCUS_PMPI_WEAK(Type_free_keyval)
int PMPI_Type_free_keyval(int *type_keyval)
{
    LOCUS_ENTRY_CS();
    return locus_keyval_free_call(ATTR_TYPE, type_keyval, "MPI_Type_free_keyval");
}

LOCUS_PMPI_WEAK(Type_set_attr)
int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Type_set_attr");
    locus_mdt_t *m = type_obj(datatype);
    if (!m)
        return TYPE_ERR(MPI_ERR_TYPE, "MPI_Type_set_attr");
    int rc = locus_attr_set(&m->attrs, ATTR_TYPE, m->handle, type_keyval, attribute_val);
    return rc ? TYPE_ERR(rc, "MPI_Type_set_attr") : MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Type_get_attr)
int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Type_get_attr");
    locus_mdt_t *m = type_obj(datatype);
    if (!m)
        return TYPE_ERR(MPI_ERR_TYPE, "MPI_Type_get_attr");
    if (!attribute_val || !flag)
        return TYPE_ERR(MPI_ERR_ARG, "MPI_Type_get_attr");
    void *v = NULL;
    int rc = locus_attr_get(m->attrs, ATTR_TYPE, type_keyval, &v, flag);
    if (rc)
        return TYPE_ERR(rc, "MPI_Type_get_attr");
    if (*flag)
        *(void **)attribute_val = v;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Type_delete_attr)
int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Type_delete_attr");
    locus_mdt_t *m = type_obj(datatype);
    if (!m)
        return TYPE_ERR(MPI_ERR_TYPE, "MPI_Type_delete_attr");
    int rc = locus_attr_delete(&m->attrs, ATTR_TYPE, m->handle, type_keyval);
    return rc ? TYPE_ERR(rc, "MPI_Type_delete_attr") : MPI_SUCCESS;
}
