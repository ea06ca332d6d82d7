/*
 * type_attr.c — attributes and names on datatypes: copy callbacks run once
 * per attribute on MPI_Type_dup (and their "don't copy" answer is
 * honoured), delete callbacks once on MPI_Type_delete_attr, on replacing
 * a value and on MPI_Type_free, with the right values; the predefined
 * MPI_TYPE_DUP_FN/MPI_TYPE_NULL_COPY_FN; attributes on predefined types;
 * a freed keyval still deletes its attributes; a communicator keyval is
 * MPI_ERR_KEYVAL on a datatype; a failing delete callback's error comes
 * back. Names: set, get, cut at MPI_MAX_OBJECT_NAME - 1, empty by default.
 */
#include <stdint.h>
#include <string.h>

#include "mtest.h"

/* The error class of a return code (an MPI may return codes, not classes). */
static int ecls(int rc)
{
    int c = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

static int copies, deletes;
static intptr_t last_deleted;

static int copy_fn(MPI_Datatype t, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)t; (void)kv;
    copies++;
    CHECK(extra == &copies, "extra state");
    /* Odd values are not copied. */
    *flag = ((intptr_t)in & 1) == 0;
    *(void **)out = (void *)((intptr_t)in + 100);
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Datatype t, int kv, void *val, void *extra)
{
    (void)t; (void)kv; (void)extra;
    deletes++;
    last_deleted = (intptr_t)val;
    return MPI_SUCCESS;
}

static int failing_delete(MPI_Datatype t, int kv, void *val, void *extra)
{
    (void)t; (void)kv; (void)val; (void)extra;
    return MPI_ERR_OTHER;
}

static intptr_t get(MPI_Datatype t, int kv, int *flag)
{
    void *v = NULL;
    CHECK(MPI_Type_get_attr(t, kv, &v, flag) == MPI_SUCCESS, "get_attr");
    return (intptr_t)v;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int kv, kv_dup, kv_null, kv_fail, flag;
    CHECK(MPI_Type_create_keyval(copy_fn, delete_fn, &kv, &copies) == MPI_SUCCESS, "keyval");
    MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &kv_dup, NULL);
    MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, delete_fn, &kv_null, NULL);
    MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, failing_delete, &kv_fail, NULL);

    MPI_Datatype t, d, d2;
    MPI_Type_contiguous(2, MPI_INT, &t);
    CHECK(get(t, kv, &flag) == 0 && !flag, "no attribute yet");
    MPI_Type_set_attr(t, kv, (void *)(intptr_t)42);
    MPI_Type_set_attr(t, kv_dup, (void *)(intptr_t)7);
    MPI_Type_set_attr(t, kv_null, (void *)(intptr_t)9);
    CHECK(get(t, kv, &flag) == 42 && flag, "attribute 42");

    /* Dup: the user's copy callback once; DUP_FN copies; NULL_COPY_FN not. */
    CHECK(MPI_Type_dup(t, &d) == MPI_SUCCESS, "dup");
    CHECK(copies == 1, "copy callback ran %d times", copies);
    CHECK(get(d, kv, &flag) == 142 && flag, "copied value");
    CHECK(get(d, kv_dup, &flag) == 7 && flag, "MPI_TYPE_DUP_FN copies");
    get(d, kv_null, &flag);
    CHECK(!flag, "MPI_TYPE_NULL_COPY_FN does not copy");

    /* A value the copy callback declines (odd). */
    MPI_Type_set_attr(d, kv, (void *)(intptr_t)43);   /* replaces 142: deleted */
    CHECK(deletes == 1 && last_deleted == 142, "replacing deletes the old value");
    MPI_Type_dup(d, &d2);
    CHECK(copies == 2, "copy callback ran %d times", copies);
    get(d2, kv, &flag);
    CHECK(!flag, "declined copy");

    /* Deleting, and deleting what is not there. */
    CHECK(MPI_Type_delete_attr(d, kv) == MPI_SUCCESS && deletes == 2 && last_deleted == 43,
          "delete_attr");
    get(d, kv, &flag);
    CHECK(!flag, "deleted");
    CHECK(ecls(MPI_Type_delete_attr(d, kv)) == MPI_ERR_KEYVAL, "delete of a missing attribute");

    /* Free: every remaining attribute's delete callback, once. */
    deletes = 0;
    MPI_Type_free(&t);   /* kv (42) and kv_null (9) */
    CHECK(deletes == 2, "free ran %d delete callbacks", deletes);
    deletes = 0;
    MPI_Type_free(&d);   /* kv_dup only: no callback */
    MPI_Type_free(&d2);
    CHECK(deletes == 0, "no callbacks for keyvals without one (%d)", deletes);

    /* A freed keyval: no new uses, but its attributes still go properly. */
    MPI_Type_contiguous(1, MPI_INT, &t);
    MPI_Type_set_attr(t, kv, (void *)(intptr_t)8);
    CHECK(MPI_Type_free_keyval(&kv) == MPI_SUCCESS && kv == MPI_KEYVAL_INVALID, "free_keyval");
    deletes = 0;
    MPI_Type_free(&t);
    CHECK(deletes == 1 && last_deleted == 8, "attribute of a freed keyval deleted");

    /* Predefined types carry attributes too. */
    MPI_Type_set_attr(MPI_DOUBLE, kv_dup, (void *)(intptr_t)5);
    CHECK(get(MPI_DOUBLE, kv_dup, &flag) == 5 && flag, "attribute on MPI_DOUBLE");
    get(MPI_FLOAT, kv_dup, &flag);
    CHECK(!flag, "not on MPI_FLOAT");
    MPI_Type_delete_attr(MPI_DOUBLE, kv_dup);

    /* A failing delete callback: its error comes back, the value stays. */
    MPI_Type_set_attr(MPI_INT, kv_fail, (void *)(intptr_t)1);
    CHECK(ecls(MPI_Type_delete_attr(MPI_INT, kv_fail)) == MPI_ERR_OTHER, "failing delete callback");
    get(MPI_INT, kv_fail, &flag);
    CHECK(flag, "value kept after a failed delete");

    /* Keyvals of another kind; bad handles. */
    int ckv;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ckv, NULL);
    CHECK(ecls(MPI_Type_set_attr(MPI_INT, ckv, NULL)) == MPI_ERR_KEYVAL, "communicator keyval");
    CHECK(ecls(MPI_Type_get_attr(MPI_INT, 123456789, &flag, &flag)) == MPI_ERR_KEYVAL, "unknown keyval");
    CHECK(ecls(MPI_Type_set_attr(MPI_DATATYPE_NULL, kv_dup, NULL)) == MPI_ERR_TYPE, "null type");
    CHECK(ecls(MPI_Type_free_keyval(&ckv)) == MPI_ERR_KEYVAL, "type_free_keyval of a comm keyval");
    MPI_Comm_free_keyval(&ckv);
    MPI_Type_free_keyval(&kv_dup);
    MPI_Type_free_keyval(&kv_null);

    /* Names. */
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_Type_vector(2, 1, 2, MPI_INT, &t);
    CHECK(MPI_Type_get_name(t, name, &len) == MPI_SUCCESS && len == 0 && name[0] == 0,
          "a new type has an empty name");
    MPI_Type_set_name(t, "halo");
    MPI_Type_get_name(t, name, &len);
    CHECK(strcmp(name, "halo") == 0 && len == 4, "name set");
    char longname[300];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    MPI_Type_set_name(t, longname);
    MPI_Type_get_name(t, name, &len);
    CHECK(len == MPI_MAX_OBJECT_NAME - 1 && (int)strlen(name) == len, "long name cut to %d", len);
    MPI_Type_free(&t);
    MPI_Type_get_name(MPI_UNSIGNED_LONG_LONG, name, &len);
    CHECK(strcmp(name, "MPI_UNSIGNED_LONG_LONG") == 0, "predefined name %s", name);
    /* The null handle has a name, as in MPICH and Open MPI (mpi4py checks it). */
    CHECK(MPI_Type_get_name(MPI_DATATYPE_NULL, name, &len) == MPI_SUCCESS &&
              strcmp(name, "MPI_DATATYPE_NULL") == 0 && len == 17, "name of null type: %s", name);
    return mtest_finish();
}
