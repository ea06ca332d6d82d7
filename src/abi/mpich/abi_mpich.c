/*
 * abi_mpich.c — what is MPICH's own in the MPICH-ABI layer: int handles
 * (predefined by table, others Locus's MPI_<Kind>_toint numbers) and its
 * 20-byte status. The rest of the layer is common to the legacy ABIs
 * (../common, ../abi.h).
 */
#include "abi_layer.h"
#include "abi_locus_values.h"

#include <stdlib.h>
#include <string.h>

/* ---- handles ---- */

/* A legacy handle: predefined (by table), else a Locus object's int. */
/* Locus's predefined handles are their own small numbers (the standard
 * ABI's rule): only a user object's number goes through fromint/toint. */
static void *handle_in(int h, void *(*fromint)(int))
{
    int l;
    return abi_predef_in(h, &l) ? (void *)(intptr_t)l : fromint(h);
}

static int handle_out(void *l, int (*toint)(void *))
{
    intptr_t h = (intptr_t)l;
    if ((uintptr_t)l < 0x1000)
        return abi_predef_out((int)h, &h) ? (int)h : (int)(intptr_t)l;
    return toint(l);
}

#define HANDLE_PAIR(kind, type, tf, ff)                                                        \
    void *abi_##kind##_in(type h) { return handle_in((int)h, abi_locus.ff); }                          \
    type abi_##kind##_out(void *l) { return (type)handle_out(l, abi_locus.tf); }
HANDLE_PAIR(comm, MPI_Comm, comm_toint, comm_fromint)
HANDLE_PAIR(dtype, MPI_Datatype, type_toint, type_fromint)
HANDLE_PAIR(group, MPI_Group, group_toint, group_fromint)
HANDLE_PAIR(op, MPI_Op, op_toint, op_fromint)
HANDLE_PAIR(req, MPI_Request, req_toint, req_fromint)
HANDLE_PAIR(errh, MPI_Errhandler, errh_toint, errh_fromint)
HANDLE_PAIR(info, MPI_Info, info_toint, info_fromint)
HANDLE_PAIR(msg, MPI_Message, msg_toint, msg_fromint)
HANDLE_PAIR(win, MPI_Win, win_toint, win_fromint)

/* MPICH's file handle is a pointer (ROMIO's), MPI_FILE_NULL NULL: the int
 * of Locus's object rides in it. */
void *abi_file_in(MPI_File h)
{
    return handle_in((int)(intptr_t)h, abi_locus.file_fromint);
}

MPI_File abi_file_out(void *l)
{
    return (MPI_File)(intptr_t)handle_out(l, abi_locus.file_toint);
}

/* ---- statuses ---- */

int abi_status_ignored(const MPI_Status *s)
{
    return s == MPI_STATUS_IGNORE || s == NULL;
}

int abi_statuses_ignored(const MPI_Status *s)
{
    return s == MPI_STATUSES_IGNORE || s == NULL;
}

/* A status's byte count and cancelled flag, as MPICH keeps them. */
void abi_status_out(const abi_locus_status_t *l, MPI_Status *s)
{
    abi_status_fields_t f;
    abi_status_read(l, &f);
    s->MPI_SOURCE = f.source;
    s->MPI_TAG = f.tag;
    s->MPI_ERROR = f.error;
    s->count_lo = (int)(f.bytes & 0xffffffff);
    s->count_hi_and_cancelled = (int)((f.bytes >> 32) & 0x7fffffff) << 1 | (f.cancelled ? 1 : 0);
}

void abi_status_in(const MPI_Status *s, abi_locus_status_t *l)
{
    abi_status_fields_t f = {
        (MPI_Count)(unsigned)s->count_lo | (MPI_Count)((unsigned)s->count_hi_and_cancelled >> 1) << 32,
        s->count_hi_and_cancelled & 1, s->MPI_SOURCE, s->MPI_TAG, s->MPI_ERROR };
    abi_status_write(&f, l);
}

/* MPICH's MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are the addresses of
 * objects of its library's: these. */
static int unweighted, weights_empty;
int *const MPI_UNWEIGHTED = &unweighted;
int *const MPI_WEIGHTS_EMPTY = &weights_empty;

/* MPI_COMM_DUP_FN and friends: MPICH's header names this function. */
int MPIR_Dup_fn(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)oldcomm, (void)keyval, (void)extra;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}
