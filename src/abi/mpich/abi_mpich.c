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
static void *handle_in(int h, int kind, void *(*fromint)(int))
{
    int l;
    return abi_predef_in(h, kind, &l) ? (void *)(intptr_t)l : fromint(h);
}

static int handle_out(void *l, int (*toint)(void *))
{
    intptr_t h = (intptr_t)l;
    if ((uintptr_t)l < 0x1000)
        return abi_predef_out((int)h, &h) ? (int)h : (int)(intptr_t)l;
    return toint(l);
}

#define HANDLE_PAIR(kind, K, type, tf, ff)                                                     \
    void *abi_##kind##_in(type h) { return handle_in((int)h, ABI_K_##K, abi_locus.ff); }       \
    type abi_##kind##_out(void *l) { return (type)handle_out(l, abi_locus.tf); }
HANDLE_PAIR(comm, COMM, MPI_Comm, comm_toint, comm_fromint)
HANDLE_PAIR(dtype, TYPE, MPI_Datatype, type_toint, type_fromint)
HANDLE_PAIR(group, GROUP, MPI_Group, group_toint, group_fromint)
HANDLE_PAIR(op, OP, MPI_Op, op_toint, op_fromint)
HANDLE_PAIR(req, REQ, MPI_Request, req_toint, req_fromint)
HANDLE_PAIR(errh, ERRH, MPI_Errhandler, errh_toint, errh_fromint)
HANDLE_PAIR(info, INFO, MPI_Info, info_toint, info_fromint)
HANDLE_PAIR(msg, MSG, MPI_Message, msg_toint, msg_fromint)
HANDLE_PAIR(win, WIN, MPI_Win, win_toint, win_fromint)
HANDLE_PAIR(session, SESSION, MPI_Session, session_toint, session_fromint)

/* MPICH's own integers are its handles: to and from Fortran and ints they
 * are casts (its header makes c2f and f2c macros, which old binaries
 * inlined; newer ones call the functions). */
#define DO_PRAGMA(x) _Pragma(#x)
#define INT_HANDLE(Kind, type)                                                                 \
    MPI_Fint PMPI_##Kind##_c2f(type h) { return (MPI_Fint)h; }                                 \
    type PMPI_##Kind##_f2c(MPI_Fint i) { return (type)i; }                                     \
    int PMPI_##Kind##_toint(type h) { return (int)h; }                                         \
    type PMPI_##Kind##_fromint(int i) { return (type)i; }                                      \
    DO_PRAGMA(weak MPI_##Kind##_c2f = PMPI_##Kind##_c2f)                                       \
    DO_PRAGMA(weak MPI_##Kind##_f2c = PMPI_##Kind##_f2c)                                       \
    DO_PRAGMA(weak MPI_##Kind##_toint = PMPI_##Kind##_toint)                                   \
    DO_PRAGMA(weak MPI_##Kind##_fromint = PMPI_##Kind##_fromint)
#undef MPI_Comm_c2f
#undef MPI_Comm_f2c
#undef MPI_Type_c2f
#undef MPI_Type_f2c
#undef MPI_Group_c2f
#undef MPI_Group_f2c
#undef MPI_Info_c2f
#undef MPI_Info_f2c
#undef MPI_Request_c2f
#undef MPI_Request_f2c
#undef MPI_Op_c2f
#undef MPI_Op_f2c
#undef MPI_Errhandler_c2f
#undef MPI_Errhandler_f2c
#undef MPI_Win_c2f
#undef MPI_Win_f2c
#undef MPI_Message_c2f
#undef MPI_Message_f2c
#undef MPI_Session_c2f
#undef MPI_Session_f2c
#undef PMPI_Comm_c2f
#undef PMPI_Comm_f2c
#undef PMPI_Type_c2f
#undef PMPI_Type_f2c
#undef PMPI_Group_c2f
#undef PMPI_Group_f2c
#undef PMPI_Info_c2f
#undef PMPI_Info_f2c
#undef PMPI_Request_c2f
#undef PMPI_Request_f2c
#undef PMPI_Op_c2f
#undef PMPI_Op_f2c
#undef PMPI_Errhandler_c2f
#undef PMPI_Errhandler_f2c
#undef PMPI_Win_c2f
#undef PMPI_Win_f2c
#undef PMPI_Message_c2f
#undef PMPI_Message_f2c
#undef PMPI_Session_c2f
#undef PMPI_Session_f2c
INT_HANDLE(Comm, MPI_Comm)
INT_HANDLE(Type, MPI_Datatype)
INT_HANDLE(Group, MPI_Group)
INT_HANDLE(Info, MPI_Info)
INT_HANDLE(Request, MPI_Request)
INT_HANDLE(Op, MPI_Op)
INT_HANDLE(Errhandler, MPI_Errhandler)
INT_HANDLE(Win, MPI_Win)
INT_HANDLE(Message, MPI_Message)
INT_HANDLE(Session, MPI_Session)

/* A file handle is ROMIO's pointer, whose int rides in it. */
int PMPI_File_toint(MPI_File h) { return (int)(intptr_t)h; }
MPI_File PMPI_File_fromint(int i) { return (MPI_File)(intptr_t)i; }
#pragma weak MPI_File_toint = PMPI_File_toint
#pragma weak MPI_File_fromint = PMPI_File_fromint

/* MPICH's file handle is a pointer (ROMIO's), MPI_FILE_NULL NULL: the int
 * of Locus's object rides in it. */
void *abi_file_in(MPI_File h)
{
    return handle_in((int)(intptr_t)h, ABI_K_FILE, abi_locus.file_fromint);
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
    if (l->error != ABI_STATUS_UNSET)
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
