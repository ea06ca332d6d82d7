/*
 * env/env.h — the environment chapter, the base of the MPI layer: the
 * library's state and the objects behind the predefined handles
 * (handles.c, env_query.c), errors, error codes and error handlers
 * (errh.c, errh_any.c), info objects (info.c), attribute caching
 * (attr.c) and the ABI's queries (handles.c, abi_fortran.c). It calls no
 * other chapter; every other chapter may call it. The base every chapter
 * needs (locus_mpi_err, the argument checks) is declared in mpi_impl.h and
 * implemented here; what follows is the rest.
 *
 * ---- Attributes ------------------------------------------------------------
 * Attribute caching (MPI keyvals) for the objects that carry attributes:
 * communicators, windows and datatypes. One keyval table for all three
 * kinds; each object keeps a list of its attributes.
 *
 * Copy and delete callbacks are the user's, called with the object's
 * handle. The ABI's MPI_*_NULL_COPY_FN / MPI_*_DUP_FN / MPI_*_NULL_DELETE_FN
 * are the function-pointer values 0, 1 and 0: no copy, copy the value, no
 * deletion work. Callbacks may delete the object's other attributes.
 *
 * Values and keyvals from Fortran (mpi_fortran.h): locus_keyval_create_call,
 * locus_attr_set and locus_attr_get take the form the Fortran binding
 * announced (locus_attr_from_fortran); the other functions, and calls
 * the binding did not announce, are C's.
 */
#ifndef LOCUS_MPI_ENV_H
#define LOCUS_MPI_ENV_H

#include "mpi_impl.h"
#include "mpi_fortran.h"

enum { ATTR_COMM, ATTR_WIN, ATTR_TYPE };

/* A copy callback of any kind, as the user gave it (cast on call). */
typedef int (*attr_copy_fn)(void *handle, int keyval, void *extra, void *in, void *out,
                            int *flag);
typedef int (*attr_delete_fn)(void *handle, int keyval, void *val, void *extra);

/* A new keyval for objects of `kind`; *keyval gets it. MPI error class. */
int locus_keyval_create(int kind, attr_copy_fn copy, attr_delete_fn del, void *extra,
                        int *keyval);
/* Marks keyval freed (it goes when no attribute uses it); sets it to
 * MPI_KEYVAL_INVALID. MPI_ERR_KEYVAL when it is not a user keyval of kind. */
int locus_keyval_free(int kind, int *keyval);
/* The two as the MPI calls MPI_{Comm,Win,Type}_{create,free}_keyval: an
 * error is reported as fn on no object (a keyval belongs to none). */
int locus_keyval_create_call(int kind, attr_copy_fn copy, attr_delete_fn del, void *extra,
                             int *keyval, const char *fn);
int locus_keyval_free_call(int kind, int *keyval, const char *fn);

/* Sets / gets / deletes the attribute keyval on the object whose list is
 * *list and handle is `handle` (for the callbacks). MPI error classes;
 * MPI_ERR_KEYVAL for a keyval of another kind or unknown. */
int locus_attr_set(locus_attr_t **list, int kind, void *handle, int keyval, void *val);
int locus_attr_get(locus_attr_t *list, int kind, int keyval, void **val, int *flag);
int locus_attr_delete(locus_attr_t **list, int kind, void *handle, int keyval);

/* The attributes a duplicate of the object gets (copy callbacks run with
 * the old handle); *dst must be empty. */
int locus_attr_copy(locus_attr_t *src, int kind, void *old_handle, locus_attr_t **dst);
/* Deletes every attribute (delete callbacks run), at the object's free. */
int locus_attr_clear(locus_attr_t **list, int kind, void *handle);

/* ---- error handlers (errh.c, errh_any.c) ------------------------------------- */

/* Sets c's error handler (references counted). */
void locus_errh_set(locus_comm_t *c, locus_errh_t *e);
/* References on an error handler (the user's handle is one). */
void locus_errh_hold(locus_errh_t *e);
void locus_errh_drop(locus_errh_t *e);
/* MPI_<object>_set_errhandler on the object whose handler *slot is:
 * MPI_ERR_ARG when h is no handler. */
int locus_errh_set_handle(locus_errh_t **slot, MPI_Errhandler h);
/* MPI_<object>_get_errhandler: a new reference to e for the program. */
int locus_errh_get_handle(locus_errh_t *e, MPI_Errhandler *h);
/* Whether code is an error code or class in use (predefined or added). */
int locus_err_code_known(int code);
/* What an error handler does with an error raised on an object of the
 * given kind (handle points to the object's handle: MPI_Comm or
 * MPI_Session), MPI_ERRORS_ARE_FATAL's line and abort included. e NULL:
 * the process's default (MPI_COMM_WORLD's handler while the runtime runs,
 * else fatal). Returns code. */
enum { ERRH_ON_COMM, ERRH_ON_SESSION };
int locus_errh_raise(locus_errh_t *e, int on, void *handle, int code, const char *fn);
/* The largest error code in use (the MPI_LASTUSEDCODE attribute). */
int locus_err_lastused(void);
/* Removes what MPI_Add_error_* added (MPI_Remove_error_*): what 0 the
 * string of a class or code, 1 a code, 2 a class none of whose codes is
 * left. MPI_SUCCESS, or MPI_ERR_ARG for a predefined or unknown one. */
int locus_err_remove(int code, int what);

/* ---- info (info.c) ------------------------------------------------------------- */

/* The other chapters use their infos through locus_info_<x>_impl
 * (mpi_bindings.h), which return an error class and raise nothing. */
/* Copies src's entries into *dst (made when MPI_INFO_NULL): new values
 * replace old ones, keys src does not name keep theirs. */
int locus_info_update(MPI_Info *dst, MPI_Info src);

/* MPI_INFO_ENV, made at MPI_Init from the program's arguments. */
int locus_info_env_init(int argc, char **argv);
void locus_info_env_finalize(void);

/* ---- threads (env_query.c) -------------------------------------------------------- */

/* The highest level MPI_Init_thread and sessions provide: threads call
 * MPI at once, serialized inside by one lock (LOCUS_ENTRY_CS, mpi_impl.h).
 * The tool interface stays at MPI_THREAD_SERIALIZED: it may run before
 * MPI_Init_thread, when there is no lock to take (LOCUS_MPIT_THREAD_MAX). */
#define LOCUS_THREAD_MAX MPI_THREAD_MULTIPLE
#define LOCUS_MPIT_THREAD_MAX MPI_THREAD_SERIALIZED
/* A level asked for, capped at LOCUS_THREAD_MAX; its MPI_THREAD_* name and
 * back (-1: not a level's name). */
int locus_thread_level_cap(int required);
const char *locus_thread_level_name(int level);
int locus_thread_level_parse(const char *name);

#endif
