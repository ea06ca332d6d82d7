/*
 * attr.c — keyvals and attribute lists (env.h), and the communicator
 * attribute calls (MPI_Comm_create_keyval & co and their MPI-1 names).
 *
 * Delete callbacks may call MPI, attribute calls on the same object
 * included (a library's clean-up deleting its other attributes): an
 * attribute stays on its list, marked busy, while its delete callback
 * runs, and is unlinked from wherever it then is. A busy attribute is gone
 * to every call but its own deletion (MPI_*_get_attr says it is absent, a
 * second MPI_*_delete_attr has nothing left to do), so two callbacks that
 * delete each other's attributes each run once. Callbacks may also create
 * keyvals, which moves the keyval table: keyvals are found by number again
 * after every callback.
 *
 * Values carry the language that set them (mpi_fortran.h, MPI-4.1
 * 19.3.7): C's pointer, or the Fortran integer, which C reads through a
 * pointer to the attribute's own copy of it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"

/* User keyvals start here, clear of the predefined attribute keys. */
#define KEYVAL_FIRST 0x10000

typedef struct {
    int kind;
    int used;                /* 1 while not freed */
    int refs;                /* the keyval itself + attributes using it */
    int form;                /* LOCUS_ATTR_FORM_C: C callbacks; else Fortran
                                ones, taking and giving integers of this form */
    attr_copy_fn copy;
    attr_delete_fn del;
    void *extra;
} keyval_t;

struct locus_attr {
    int keyval;
    int form;                /* who set it: LOCUS_ATTR_FORM_* */
    int busy;                /* its delete callback is running */
    union {                  /* by form: C's pointer, or Fortran's integer */
        void *ptr;
        MPI_Aint aint;
        MPI_Fint fint;
    } val;
    locus_attr_t *next;
};

static struct {
    keyval_t *kv;
    int n, cap;
} keyvals;

/* The form the Fortran binding announced for this thread's next call. */
static _Thread_local int next_form;

void locus_attr_from_fortran(int form)
{
    next_form = form;
}

static int form_take(void)
{
    int f = next_form;
    next_form = LOCUS_ATTR_FORM_C;
    return f;
}

static keyval_t *kv_get(int kind, int keyval)
{
    int i = keyval - KEYVAL_FIRST;
    if (i < 0 || i >= keyvals.n || keyvals.kv[i].refs == 0 || keyvals.kv[i].kind != kind)
        return NULL;
    return &keyvals.kv[i];
}

/* The keyval of an attribute that exists (it holds a reference). */
static keyval_t *kv_of(const locus_attr_t *a)
{
    return &keyvals.kv[a->keyval - KEYVAL_FIRST];
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
    keyvals.kv[keyvals.n] = (keyval_t){ kind, 1, 1, LOCUS_ATTR_FORM_C, copy, del, extra };
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
    int form = form_take();
    LOCUS_CHECK_INIT(fn);
    int rc = locus_keyval_create(kind, copy, del, extra, keyval);
    if (rc)
        return locus_mpi_err(NULL, rc, fn);
    keyvals.kv[*keyval - KEYVAL_FIRST].form = form;
    return MPI_SUCCESS;
}

int locus_keyval_free_call(int kind, int *keyval, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    int rc = locus_keyval_free(kind, keyval);
    return rc ? locus_mpi_err(NULL, rc, fn) : MPI_SUCCESS;
}

/* ---- values in either language ---- */

/* Stores v, a value of the given form (a Fortran integer comes in the
 * pointer's bits). */
static void val_store(locus_attr_t *a, int form, void *v)
{
    memset(&a->val, 0, sizeof a->val);
    a->form = form;
    if (form == LOCUS_ATTR_FORM_AINT)
        a->val.aint = (MPI_Aint)(intptr_t)v;
    else if (form == LOCUS_ATTR_FORM_FINT)
        a->val.fint = (MPI_Fint)(intptr_t)v;
    else
        a->val.ptr = v;
}

/* The value as C sees it: a Fortran integer by address (MPI-4.1 19.3.7). */
static void *val_c(locus_attr_t *a)
{
    return a->form == LOCUS_ATTR_FORM_C ? a->val.ptr : (void *)&a->val;
}

/* The value as Fortran sees it, in the pointer's bits: a C pointer's
 * address, an MPI-1 INTEGER sign-extended. */
static void *val_fortran(const locus_attr_t *a)
{
    if (a->form == LOCUS_ATTR_FORM_AINT)
        return (void *)(intptr_t)a->val.aint;
    if (a->form == LOCUS_ATTR_FORM_FINT)
        return (void *)(intptr_t)a->val.fint;
    return a->val.ptr;
}

/* What keyval k's callbacks get. */
static void *val_for(const keyval_t *k, locus_attr_t *a)
{
    return k->form == LOCUS_ATTR_FORM_C ? val_c(a) : val_fortran(a);
}

/* ---- lists ---- */

/* The live (not busy) attribute keyval of a list, or NULL. */
static locus_attr_t *attr_find(locus_attr_t *list, int keyval)
{
    for (; list; list = list->next)
        if (list->keyval == keyval && !list->busy)
            return list;
    return NULL;
}

/* A user's callback and its arguments, for a call outside the lock. */
typedef struct {
    keyval_t *k;
    locus_attr_t *a;
    void *handle, *out;
    int copy, flag, rc;
} attr_call_t;

static void attr_call_run(void *arg)
{
    attr_call_t *c = arg;
    if (c->copy)
        c->rc = c->k->copy(c->handle, c->a->keyval, c->k->extra, val_for(c->k, c->a), &c->out,
                           &c->flag);
    else
        c->rc = c->k->del(c->handle, c->a->keyval, val_for(c->k, c->a), c->k->extra);
}

/* Runs a copy or delete callback with a marked busy (another thread's
 * delete of it fails meanwhile) and, under MPI_THREAD_MULTIPLE, without
 * the MPI lock: the callback may wait for a lock of the program's that a
 * thread waiting to enter MPI holds (mpi4py's take Python's GIL). */
static void attr_call(attr_call_t *c)
{
    c->a->busy = 1;
    if (locus_mpi.cs_on)
        locus_cs_yield(&locus_mpi.cs, attr_call_run, c);
    else
        attr_call_run(c);
    c->a->busy = 0;
}

/* Runs a's delete callback (the ABI's 0: none). */
static int attr_delete_cb(void *handle, locus_attr_t *a)
{
    keyval_t *k = kv_of(a);
    if (!k->del)
        return MPI_SUCCESS;
    attr_call_t c = { .k = k, .a = a, .handle = handle };
    attr_call(&c);
    return c.rc;
}

/* Unlinks a from the list it is on now and frees it. */
static void attr_drop(locus_attr_t **list, locus_attr_t *a)
{
    for (; *list; list = &(*list)->next)
        if (*list == a) {
            *list = a->next;
            break;
        }
    kv_unref(kv_of(a));
    free(a);
}

/* Deletes a (callback first): MPI_SUCCESS, or the callback's error with a
 * left in place. */
static int attr_remove(locus_attr_t **list, void *handle, locus_attr_t *a)
{
    int rc = attr_delete_cb(handle, a);
    if (rc == MPI_SUCCESS)
        attr_drop(list, a);
    return rc;
}

int locus_attr_set(locus_attr_t **list, int kind, void *handle, int keyval, void *val)
{
    int form = form_take();
    keyval_t *k = kv_get(kind, keyval);
    if (!k)
        return MPI_ERR_KEYVAL;
    /* Replacing a value deletes the old one first. The keyval is held:
     * that deletion may drop its last attribute. */
    k->refs++;
    int rc = MPI_SUCCESS;
    locus_attr_t *a;
    while (rc == MPI_SUCCESS && (a = attr_find(*list, keyval)))
        rc = attr_remove(list, handle, a);
    if (rc == MPI_SUCCESS) {
        a = malloc(sizeof *a);
        if (a) {
            a->keyval = keyval;
            a->busy = 0;
            val_store(a, form, val);
            a->next = *list;
            *list = a;
            keyvals.kv[keyval - KEYVAL_FIRST].refs++;
        } else {
            rc = MPI_ERR_NO_MEM;
        }
    }
    kv_unref(&keyvals.kv[keyval - KEYVAL_FIRST]);
    return rc;
}

int locus_attr_get(locus_attr_t *list, int kind, int keyval, void **val, int *flag)
{
    int fortran = form_take() != LOCUS_ATTR_FORM_C;
    if (!kv_get(kind, keyval))
        return MPI_ERR_KEYVAL;
    locus_attr_t *a = attr_find(list, keyval);
    *flag = a != NULL;
    if (a)
        *val = fortran ? val_fortran(a) : val_c(a);
    return MPI_SUCCESS;
}

int locus_attr_delete(locus_attr_t **list, int kind, void *handle, int keyval)
{
    if (!kv_get(kind, keyval))
        return MPI_ERR_KEYVAL;
    locus_attr_t *a = attr_find(*list, keyval);
    if (a)
        return attr_remove(list, handle, a);
    /* Being deleted already (a callback deleting the attribute whose
     * deletion called it, directly or through others): done. */
    for (a = *list; a; a = a->next)
        if (a->keyval == keyval)
            return MPI_SUCCESS;
    return MPI_ERR_KEYVAL;
}

int locus_attr_copy(locus_attr_t *src, int kind, void *old_handle, locus_attr_t **dst)
{
    for (locus_attr_t *a = src; a; a = a->next) {
        keyval_t *k = kv_get(kind, a->keyval);
        if (!k || (uintptr_t)k->copy == 0 || a->busy)
            continue;               /* the ABI's MPI_*_NULL_COPY_FN */
        locus_attr_t n = *a;        /* 1 is MPI_*_DUP_FN: the value itself */
        if ((uintptr_t)k->copy != 1) {
            attr_call_t c = { .k = k, .a = a, .handle = old_handle, .copy = 1 };
            attr_call(&c);
            if (c.rc != MPI_SUCCESS)
                return c.rc;
            if (!c.flag)
                continue;
            /* The callback's language: a C pointer, or a Fortran integer. */
            val_store(&n, kv_of(a)->form, c.out);
        }
        locus_attr_t *c = malloc(sizeof *c);
        if (!c)
            return MPI_ERR_NO_MEM;
        *c = n;
        c->next = *dst;
        *dst = c;
        kv_of(a)->refs++;
    }
    return MPI_SUCCESS;
}

int locus_attr_clear(locus_attr_t **list, int kind, void *handle)
{
    (void)kind;
    int first = MPI_SUCCESS;
    /* Newest first; a callback may delete the attributes after it, or set
     * new ones, so the list is read again each time. The object goes: an
     * attribute whose callback fails goes too. */
    for (;;) {
        locus_attr_t *a = *list;
        while (a && a->busy)
            a = a->next;
        if (!a)
            break;
        int rc = attr_delete_cb(handle, a);
        if (rc != MPI_SUCCESS && first == MPI_SUCCESS)
            first = rc;
        attr_drop(list, a);
    }
    return first;
}
/* ---- communicator attributes ---- */

LOCUS_PMPI_WEAK(Comm_create_keyval)
int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy_fn,
                            MPI_Comm_delete_attr_function *delete_fn, int *comm_keyval,
                            void *extra_state)
{
    LOCUS_ENTRY_CS();
    return locus_keyval_create_call(ATTR_COMM, (attr_copy_fn)copy_fn, (attr_delete_fn)delete_fn,
                                    extra_state, comm_keyval, "MPI_Comm_create_keyval");
}

LOCUS_PMPI_WEAK(Comm_free_keyval)
int PMPI_Comm_free_keyval(int *comm_keyval)
{
    LOCUS_ENTRY_CS();
    return locus_keyval_free_call(ATTR_COMM, comm_keyval, "MPI_Comm_free_keyval");
}

LOCUS_PMPI_WEAK(Comm_set_attr)
int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
    LOCUS_ENTRY_CS();
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
    LOCUS_ENTRY_CS();
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
    LOCUS_ENTRY_CS();
    return PMPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state);
}

LOCUS_PMPI_WEAK(Keyval_free)
int PMPI_Keyval_free(int *keyval)
{
    LOCUS_ENTRY_CS();
    return PMPI_Comm_free_keyval(keyval);
}

LOCUS_PMPI_WEAK(Attr_put)
int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    LOCUS_ENTRY_CS();
    return PMPI_Comm_set_attr(comm, keyval, attribute_val);
}

LOCUS_PMPI_WEAK(Attr_delete)
int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
    LOCUS_ENTRY_CS();
    return PMPI_Comm_delete_attr(comm, keyval);
}
