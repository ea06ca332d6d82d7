/*
 * win_attr.c — what a window carries besides memory: attributes (the
 * predefined MPI_WIN_BASE & co and user keyvals through env/env.h), its
 * name, its hints, its group and its error handler; and MPI_Alloc_mem /
 * MPI_Free_mem.
 *
 * A window's error handler is kept on its private communicator (the
 * reference counting of errh.c applies unchanged); a user handler is
 * called with the window's handle.
 */
#include <stdlib.h>
#include <string.h>

#include "rma.h"

int locus_win_err(locus_win_t *w, int errclass, const char *fn)
{
    if (errclass == MPI_SUCCESS)
        return MPI_SUCCESS;
    if (!w)
        return locus_mpi_err(NULL, errclass, fn);
    locus_errh_t *e = w->comm->errh;
    if (e && e->kind == ERRH_USER) {
        MPI_Win h = locus_win_handle(w);
        int code = errclass;
        locus_mpi.detail[0] = '\0';
        /* Made by MPI_Win_create_errhandler: a window handler's type. */
        ((MPI_Win_errhandler_function *)(void (*)(void))e->comm_fn)(&h, &code, fn);
        return errclass;
    }
    return locus_mpi_err(w->comm, errclass, fn);
}

static locus_win_t *win_arg(MPI_Win h, const char *fn, int *err)
{
    LOCUS_CHECK_INIT(fn);
    locus_win_t *w = locus_win_of(h);
    *err = w ? MPI_SUCCESS : locus_win_err(NULL, MPI_ERR_WIN, fn);
    return w;
}

/* ---- error handlers ---- */

LOCUS_PMPI_WEAK(Win_create_errhandler)
int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    LOCUS_CHECK_INIT("MPI_Win_create_errhandler");
    if (!fn || !errhandler)
        return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_Win_create_errhandler");
    /* The same object as a communicator's handler; locus_win_err calls
     * the function with a window. */
    return PMPI_Comm_create_errhandler(
        (MPI_Comm_errhandler_function *)(void (*)(void))fn, errhandler);
}

LOCUS_PMPI_WEAK(Win_set_errhandler)
int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    int err;
    locus_win_t *w = win_arg(win, "MPI_Win_set_errhandler", &err);
    if (!w)
        return err;
    locus_errh_t *e = locus_errh_of(errhandler);
    if (!e)
        return locus_win_err(w, MPI_ERR_ARG, "MPI_Win_set_errhandler");
    locus_errh_set(w->comm, e);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Win_get_errhandler)
int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    int err;
    locus_win_t *w = win_arg(win, "MPI_Win_get_errhandler", &err);
    if (!w)
        return err;
    if (!errhandler)
        return locus_win_err(w, MPI_ERR_ARG, "MPI_Win_get_errhandler");
    /* A new reference for the caller, as for a communicator. */
    return PMPI_Comm_get_errhandler(locus_comm_handle(w->comm), errhandler);
}

LOCUS_PMPI_WEAK(Win_call_errhandler)
int PMPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    int err;
    locus_win_t *w = win_arg(win, "MPI_Win_call_errhandler", &err);
    if (!w)
        return err;
    int cls;
    if (PMPI_Error_class(errorcode, &cls) != MPI_SUCCESS)
        return locus_win_err(w, MPI_ERR_ARG, "MPI_Win_call_errhandler");
    locus_win_err(w, errorcode, "MPI_Win_call_errhandler");
    return MPI_SUCCESS;
}

/* ---- attributes ---- */

LOCUS_PMPI_WEAK(Win_create_keyval)
int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *copy_fn,
                           MPI_Win_delete_attr_function *delete_fn, int *keyval, void *extra)
{
    return locus_keyval_create_call(ATTR_WIN, (attr_copy_fn)copy_fn, (attr_delete_fn)delete_fn,
                                    extra, keyval, "MPI_Win_create_keyval");
}

LOCUS_PMPI_WEAK(Win_free_keyval)
int PMPI_Win_free_keyval(int *keyval)
{
    return locus_keyval_free_call(ATTR_WIN, keyval, "MPI_Win_free_keyval");
}

LOCUS_PMPI_WEAK(Win_set_attr)
int PMPI_Win_set_attr(MPI_Win win, int keyval, void *val)
{
    int err;
    locus_win_t *w = win_arg(win, "MPI_Win_set_attr", &err);
    if (!w)
        return err;
    int rc = locus_attr_set(&w->attrs, ATTR_WIN, win, keyval, val);
    return rc ? locus_win_err(w, rc, "MPI_Win_set_attr") : MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Win_delete_attr)
int PMPI_Win_delete_attr(MPI_Win win, int keyval)
{
    int err;
    locus_win_t *w = win_arg(win, "MPI_Win_delete_attr", &err);
    if (!w)
        return err;
    int rc = locus_attr_delete(&w->attrs, ATTR_WIN, win, keyval);
    return rc ? locus_win_err(w, rc, "MPI_Win_delete_attr") : MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Win_get_attr)
int PMPI_Win_get_attr(MPI_Win win, int keyval, void *val, int *flag)
{
    int err;
    locus_win_t *w = win_arg(win, "MPI_Win_get_attr", &err);
    if (!w)
        return err;
    if (!val || !flag)
        return locus_win_err(w, MPI_ERR_ARG, "MPI_Win_get_attr");
    /* The predefined ones: the base itself, pointers to the others. */
    void *v = NULL;
    switch (keyval) {
    case MPI_WIN_BASE: v = w->base; break;
    case MPI_WIN_SIZE: v = &w->attr_size; break;
    case MPI_WIN_DISP_UNIT: v = &w->attr_disp_unit; break;
    case MPI_WIN_CREATE_FLAVOR: v = &w->attr_flavor; break;
    case MPI_WIN_MODEL: v = &w->attr_model; break;
    default: {
        int rc = locus_attr_get(w->attrs, ATTR_WIN, keyval, &v, flag);
        if (rc != MPI_SUCCESS)
            return locus_win_err(w, rc, "MPI_Win_get_attr");
        if (*flag)
            *(void **)val = v;
        return MPI_SUCCESS;
    }
    }
    *(void **)val = v;
    *flag = 1;
    return MPI_SUCCESS;
}

/* ---- name, group, hints ---- */

LOCUS_PMPI_WEAK(Win_set_name)
int PMPI_Win_set_name(MPI_Win win, const char *name)
{
    int err;
    locus_win_t *w = win_arg(win, "MPI_Win_set_name", &err);
    if (!w)
        return err;
    if (!name)
        return locus_win_err(w, MPI_ERR_ARG, "MPI_Win_set_name");
    /* MPI truncates a name that is too long. */
    strncpy(w->name, name, sizeof w->name - 1);
    w->name[sizeof w->name - 1] = '\0';
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Win_get_name)
int PMPI_Win_get_name(MPI_Win win, char *name, int *resultlen)
{
    if (win == MPI_WIN_NULL && name && resultlen) {
        /* the null handle has a name too (mpi4py asks for it) */
        LOCUS_CHECK_INIT("MPI_Win_get_name");
        strcpy(name, "MPI_WIN_NULL");
        *resultlen = (int)strlen(name);
        return MPI_SUCCESS;
    }
    int err;
    locus_win_t *w = win_arg(win, "MPI_Win_get_name", &err);
    if (!w)
        return err;
    if (!name || !resultlen)
        return locus_win_err(w, MPI_ERR_ARG, "MPI_Win_get_name");
    strcpy(name, w->name);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Win_get_group)
int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    int err;
    locus_win_t *w = win_arg(win, "MPI_Win_get_group", &err);
    if (!w)
        return err;
    if (!group)
        return locus_win_err(w, MPI_ERR_ARG, "MPI_Win_get_group");
    err = locus_comm_group_impl(w->comm, group);
    return err ? locus_win_err(w, err, "MPI_Win_get_group") : MPI_SUCCESS;
}

/* The hints Locus reports when the program set none. */
static const char *const hint_defaults[][2] = {
    { "no_locks", "false" },
    { "accumulate_ordering", "rar,raw,war,waw" },
    { "accumulate_ops", "same_op_no_op" },
    { "same_size", "false" },
    { "same_disp_unit", "false" },
    { "alloc_shared_noncontig", "false" },
};

LOCUS_PMPI_WEAK(Win_set_info)
int PMPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    int err;
    locus_win_t *w = win_arg(win, "MPI_Win_set_info", &err);
    if (!w)
        return err;
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    int n = 0;
    if (PMPI_Info_get_nkeys(info, &n) != MPI_SUCCESS)
        return locus_win_err(w, MPI_ERR_INFO, "MPI_Win_set_info");
    if (w->info == MPI_INFO_NULL && PMPI_Info_create(&w->info) != MPI_SUCCESS)
        return locus_win_err(w, MPI_ERR_NO_MEM, "MPI_Win_set_info");
    /* New values replace old ones; hints not named keep theirs. */
    for (int i = 0; i < n; i++) {
        char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
        int len = sizeof val, flag = 0;
        if (PMPI_Info_get_nthkey(info, i, key) == MPI_SUCCESS &&
            PMPI_Info_get_string(info, key, &len, val, &flag) == MPI_SUCCESS && flag)
            PMPI_Info_set(w->info, key, val);
    }
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Win_get_info)
int PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    int err;
    locus_win_t *w = win_arg(win, "MPI_Win_get_info", &err);
    if (!w)
        return err;
    if (!info_used)
        return locus_win_err(w, MPI_ERR_ARG, "MPI_Win_get_info");
    MPI_Info in;
    err = w->info != MPI_INFO_NULL ? PMPI_Info_dup(w->info, &in) : PMPI_Info_create(&in);
    if (err != MPI_SUCCESS)
        return locus_win_err(w, MPI_ERR_NO_MEM, "MPI_Win_get_info");
    for (size_t i = 0; i < sizeof hint_defaults / sizeof hint_defaults[0]; i++) {
        char v[8];
        int len = sizeof v, flag = 0;
        PMPI_Info_get_string(in, hint_defaults[i][0], &len, v, &flag);
        if (!flag)
            PMPI_Info_set(in, hint_defaults[i][0], hint_defaults[i][1]);
    }
    *info_used = in;
    return MPI_SUCCESS;
}

/* ---- memory ---- */

LOCUS_PMPI_WEAK(Alloc_mem)
int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    LOCUS_CHECK_INIT("MPI_Alloc_mem");
    (void)info;   /* no hints are interpreted */
    if (!baseptr)
        return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_Alloc_mem");
    if (size < 0)
        return locus_mpi_err(NULL, MPI_ERR_SIZE, "MPI_Alloc_mem");
    void *p = NULL;
    /* Cache-line aligned; size 0 still gives a pointer MPI_Free_mem takes. */
    if (posix_memalign(&p, 64, size ? (size_t)size : 1) != 0)
        return locus_mpi_err(NULL, MPI_ERR_NO_MEM, "MPI_Alloc_mem");
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Free_mem)
int PMPI_Free_mem(void *base)
{
    LOCUS_CHECK_INIT("MPI_Free_mem");
    free(base);
    return MPI_SUCCESS;
}
