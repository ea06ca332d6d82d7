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

/* ---- error handlers ---- */

/* The entry points of the calls written as locus_<x>_impl here are
 * generated with their checks (MPI initialized, a live window, somewhere
 * to write); errors return to them, which raise them on the window. */

/* The same object as a communicator's handler; locus_win_err calls the
 * function with a window. */
int locus_win_create_errhandler_impl(MPI_Win_errhandler_function *fn,
                                     MPI_Errhandler *errhandler)
{
    return locus_comm_create_errhandler_impl((MPI_Comm_errhandler_function *)(void (*)(void))fn,
                                             errhandler);
}

/* MPI_Win_set/get/call_errhandler are generated whole (the handler is
 * kept on the window's communicator). */

/* ---- attributes ---- */

LOCUS_PMPI_WEAK(Win_create_keyval)
int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *copy_fn,
                           MPI_Win_delete_attr_function *delete_fn, int *keyval, void *extra)
{
    LOCUS_ENTRY_CS();
    return locus_keyval_create_call(ATTR_WIN, (attr_copy_fn)copy_fn, (attr_delete_fn)delete_fn,
                                    extra, keyval, "MPI_Win_create_keyval");
}

LOCUS_PMPI_WEAK(Win_free_keyval)
int PMPI_Win_free_keyval(int *keyval)
{
    LOCUS_ENTRY_CS();
    return locus_keyval_free_call(ATTR_WIN, keyval, "MPI_Win_free_keyval");
}

int locus_win_set_attr_impl(locus_win_t *w, int keyval, void *val)
{
    return locus_attr_set(&w->attrs, ATTR_WIN, locus_win_handle(w), keyval, val);
}

int locus_win_delete_attr_impl(locus_win_t *w, int keyval)
{
    return locus_attr_delete(&w->attrs, ATTR_WIN, locus_win_handle(w), keyval);
}

int locus_win_get_attr_impl(locus_win_t *w, int keyval, void *val, int *flag)
{
    if (!val)
        return MPI_ERR_ARG;
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
            return rc;
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

int locus_win_set_name_impl(locus_win_t *w, const char *name)
{
    if (!name)
        return MPI_ERR_ARG;
    /* MPI truncates a name that is too long. */
    strncpy(w->name, name, sizeof w->name - 1);
    w->name[sizeof w->name - 1] = '\0';
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Win_get_name)
int PMPI_Win_get_name(MPI_Win win, char *name, int *resultlen)
{
    LOCUS_ENTRY_CS();
    if (win == MPI_WIN_NULL && name && resultlen) {
        /* the null handle has a name too (mpi4py asks for it) */
        LOCUS_CHECK_INIT("MPI_Win_get_name");
        strcpy(name, "MPI_WIN_NULL");
        *resultlen = (int)strlen(name);
        return MPI_SUCCESS;
    }
    LOCUS_CHECK_INIT("MPI_Win_get_name");
    locus_win_t *w = locus_win_of(win);
    if (!w)
        return locus_win_err(NULL, MPI_ERR_WIN, "MPI_Win_get_name");
    if (!name || !resultlen)
        return locus_win_err(w, MPI_ERR_ARG, "MPI_Win_get_name");
    strcpy(name, w->name);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

int locus_win_get_group_impl(locus_win_t *w, MPI_Group *group)
{
    return locus_comm_group_impl(w->comm, group);
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

int locus_win_set_info_impl(locus_win_t *w, MPI_Info info)
{
    /* New values replace old ones; hints not named keep theirs. */
    return info == MPI_INFO_NULL ? MPI_SUCCESS : locus_info_update(&w->info, info);
}

int locus_win_get_info_impl(locus_win_t *w, MPI_Info *info_used)
{
    MPI_Info in;
    int err = w->info != MPI_INFO_NULL ? locus_info_dup_impl(w->info, &in)
                                       : locus_info_create_impl(&in);
    if (err != MPI_SUCCESS)
        return MPI_ERR_NO_MEM;
    for (size_t i = 0; i < sizeof hint_defaults / sizeof hint_defaults[0]; i++) {
        char v[8];
        int len = sizeof v, flag = 0;
        locus_info_get_string_impl(in, hint_defaults[i][0], &len, v, &flag);
        if (!flag)
            locus_info_set_impl(in, hint_defaults[i][0], hint_defaults[i][1]);
    }
    *info_used = in;
    return MPI_SUCCESS;
}

/* ---- memory ---- */

LOCUS_PMPI_WEAK(Alloc_mem)
int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    LOCUS_ENTRY_CS();
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
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Free_mem");
    free(base);
    return MPI_SUCCESS;
}
