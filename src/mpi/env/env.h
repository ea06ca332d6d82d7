/*
 * attr.h — attribute caching (MPI keyvals) for the objects that carry
 * attributes: communicators, windows and datatypes. One keyval table for
 * all three kinds; each object keeps a list of its attributes.
 *
 * Copy and delete callbacks are the user's, called with the object's
 * handle. The ABI's MPI_*_NULL_COPY_FN / MPI_*_DUP_FN / MPI_*_NULL_DELETE_FN
 * are the function-pointer values 0, 1 and 0: no copy, copy the value, no
 * deletion work.
 */
#ifndef LOCUS_ATTR_H
#define LOCUS_ATTR_H

#include "mpi_impl.h"

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

#endif
