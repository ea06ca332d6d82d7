/*
 * attr.c — keyvals and attribute lists (env.h), and the communicator
 * attribute calls (MPI_Comm_create_keyval & co and their MPI-1 names).
 */
#include <stdint.h>
#include <stdlib.h>

#include "env.h"

/* User keyvals start here, clear of the predefined attribute keys. */
#define KEYVAL_FIRST 0x10000

typedef struct {
    int kind;
    int used;                /* 1 while not freed */
    int refs;                /* the keyval itself + attributes using it */
    attr_copy_fn copy;
    attr_delete_fn del;
    void *extra;
} keyval_t;

struct locus_attr {
    int keyval;
    void *val;
    locus_attr_t *next;
};

static struct {
    keyval_t *kv;
    int n, cap;
} keyvals;

static keyval_t *kv_get(int kind, int keyval)
{
    int i = keyval - KEYVAL_FIRST;
    if (i < 0 || i >= keyvals.n || keyvals.kv[i].refs == 0 || keyvals.kv[i].kind != kind)
        return NULL;
    return &keyvals.kv[i];
}

static void kv_unref(keyval_t *k)
{
    if (--k->refs == 0)
        k->used = 0;
}

int locus_keyval_create(int kind, attr_copy_fn copy, attr_delete_fn del, void *extra,
                        int *keyval)
{
    if (!keyval)
        return MPI_ERR_ARG;
    if (keyvals.n == keyvals.cap) {
        int cap = keyvals.cap ? 2 * keyvals.cap : 16;
        keyval_t *n = realloc(keyvals.kv, (size_t)cap * sizeof *n);
        if (!n)
            return MPI_ERR_NO_MEM;
        keyvals.kv = n;
        keyvals.cap = cap;
    }
    keyvals.kv[keyvals.n] = (keyval_t){ kind, 1, 1, copy, del, extra };
    *keyval = KEYVAL_FIRST + keyvals.n++;
    return MPI_SUCCESS;
}

int locus_keyval_free(int kind, int *keyval)
{
    keyval_t *k = keyval ? kv_get(kind, *keyval) : NULL;
    if (!k || !k->used)
        return MPI_ERR_KEYVAL;
    k->used = 0;
    kv_unref(k);
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

int locus_keyval_create_call(int kind, attr_copy_fn copy, attr_delete_fn del, void *extra,
                             int *keyval, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    int rc = locus_keyval_create(kind, copy, del, extra, keyval);
    return rc ? locus_mpi_err(NULL, rc, fn) : MPI_SUCCESS;
}

int locus_keyval_free_call(int kind, int *keyval, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    int rc = locus_keyval_free(kind, keyval);
    return rc ? locus_mpi_err(NULL, rc, fn) : MPI_SUCCESS;
}

static locus_attr_t **attr_find(locus_attr_t **list, int keyval)
{
    for (; *list; list = &(*list)->next)
        if ((*list)->keyval == keyval)
            return list;
    return NULL;
}

/* Runs the delete callback of an attribute (the ABI's 0: none). */
static int attr_delete_cb(const keyval_t *k, void *handle, int keyval, void *val)
{
    if (!k->del)
        return MPI_SUCCESS;
    return k->del(handle, keyval, val, k->extra);
}

int locus_attr_set(locus_attr_t **list, int kind, void *handle, int keyval, void *val)
{
    keyval_t *k = kv_get(kind, keyval);
    if (!k)
        return MPI_ERR_KEYVAL;
    locus_attr_t **at = attr_find(list, keyval);
    if (at) {
        /* Replacing a value deletes the old one first. */
        int rc = attr_delete_cb(k, handle, keyval, (*at)->val);
        if (rc != MPI_SUCCESS)
            return rc;
        (*at)->val = val;
        return MPI_SUCCESS;
    }
    locus_attr_t *a = malloc(sizeof *a);
    if (!a)
        return MPI_ERR_NO_MEM;
    a->keyval = keyval;
    a->val = val;
    a->next = *list;
    *list = a;
    k->refs++;
    return MPI_SUCCESS;
}

int locus_attr_get(locus_attr_t *list, int kind, int keyval, void **val, int *flag)
{
    if (!kv_get(kind, keyval))
        return MPI_ERR_KEYVAL;
    locus_attr_t **at = attr_find(&list, keyval);
    *flag = at != NULL;
    if (at)
        *val = (*at)->val;
    return MPI_SUCCESS;
}

int locus_attr_delete(locus_attr_t **list, int kind, void *handle, int keyval)
{
    keyval_t *k = kv_get(kind, keyval);
    if (!k)
        return MPI_ERR_KEYVAL;
    locus_attr_t **at = attr_find(list, keyval);
    if (!at)
        return MPI_ERR_KEYVAL;
    int rc = attr_delete_cb(k, handle, keyval, (*at)->val);
    if (rc != MPI_SUCCESS)
        return rc;
    locus_attr_t *a = *at;
    *at = a->next;
    free(a);
    kv_unref(k);
    return MPI_SUCCESS;
}

int locus_attr_copy(locus_attr_t *src, int kind, void *old_handle, locus_attr_t **dst)
{
    for (locus_attr_t *a = src; a; a = a->next) {
        keyval_t *k = kv_get(kind, a->keyval);
        if (!k || (uintptr_t)k->copy == 0)
            continue;               /* the ABI's MPI_*_NULL_COPY_FN */
        void *out = a->val;
        int flag = 1;
        if ((uintptr_t)k->copy != 1) {  /* 1 is MPI_*_DUP_FN: the value itself */
            flag = 0;
            int rc = k->copy(old_handle, a->keyval, k->extra, a->val, &out, &flag);
            if (rc != MPI_SUCCESS)
                return rc;
        }
        if (!flag)
            continue;
        locus_attr_t *n = malloc(sizeof *n);
        if (!n)
            return MPI_ERR_NO_MEM;
        n->keyval = a->keyval;
        n->val = out;
        n->next = *dst;
        *dst = n;
        k->refs++;
    }
    return MPI_SUCCESS;
}

int locus_attr_clear(locus_attr_t **list, int kind, void *handle)
{
    int first = MPI_SUCCESS;
    while (*list) {
        locus_attr_t *a = *list;
        keyval_t *k = kv_get(kind, a->keyval);
        int rc = k ? attr_delete_cb(k, handle, a->keyval, a->val) : MPI_SUCCESS;
        if (rc != MPI_SUCCESS && first == MPI_SUCCESS)
            first = rc;
        *list = a->next;
        free(a);
        if (k)
            kv_unref(k);
    }
    return first;
}

/* ---- communicator attributes ---- */

LOCUS_PMPI_WEAK(Comm_create_keyval)
int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy_fn,
                            MPI_Comm_delete_attr_function *delete_fn, int *comm_keyval,
                            void *extra_state)
{
    return locus_keyval_create_call(ATTR_COMM, (attr_copy_fn)copy_fn, (attr_delete_fn)delete_fn,
                                    extra_state, comm_keyval, "MPI_Comm_create_keyval");
}

LOCUS_PMPI_WEAK(Comm_free_keyval)
int PMPI_Comm_free_keyval(int *comm_keyval)
{
    return locus_keyval_free_call(ATTR_COMM, comm_keyval, "MPI_Comm_free_keyval");
}

LOCUS_PMPI_WEAK(Comm_set_attr)
int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
    LOCUS_CHECK_INIT("MPI_Comm_set_attr");
    locus_comm_t *c = locus_comm_of(comm);
    if (!locus_comm_valid(c))
        return locus_mpi_err(c, MPI_ERR_COMM, "MPI_Comm_set_attr");
    int rc = locus_attr_set(&c->attrs, ATTR_COMM, comm, comm_keyval, attribute_val);
    return rc ? locus_mpi_err(c, rc, "MPI_Comm_set_attr") : MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Comm_delete_attr)
int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval)
{
    LOCUS_CHECK_INIT("MPI_Comm_delete_attr");
    locus_comm_t *c = locus_comm_of(comm);
    if (!locus_comm_valid(c))
        return locus_mpi_err(c, MPI_ERR_COMM, "MPI_Comm_delete_attr");
    int rc = locus_attr_delete(&c->attrs, ATTR_COMM, comm, comm_keyval);
    return rc ? locus_mpi_err(c, rc, "MPI_Comm_delete_attr") : MPI_SUCCESS;
}

/* The MPI-1 names (deprecated, still in the ABI). */
LOCUS_PMPI_WEAK(Keyval_create)
int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                       void *extra_state)
{
    return PMPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state);
}

LOCUS_PMPI_WEAK(Keyval_free)
int PMPI_Keyval_free(int *keyval)
{
    return PMPI_Comm_free_keyval(keyval);
}

LOCUS_PMPI_WEAK(Attr_put)
int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    return PMPI_Comm_set_attr(comm, keyval, attribute_val);
}

LOCUS_PMPI_WEAK(Attr_delete)
int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
    return PMPI_Comm_delete_attr(comm, keyval);
}
