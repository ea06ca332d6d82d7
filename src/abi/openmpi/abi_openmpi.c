/*
 * abi_openmpi.c — what is Open MPI's own in its ABI layer: handles that
 * are pointers (a predefined one the address of an object this library
 * exports, or of an executable's copy of it: the table is filled at load,
 * through the dynamic symbols), its 24-byte status, and the predefined
 * attribute callbacks it exports as functions (OMPI_C_MPI_*_FN).
 */
#include "abi_layer.h"
#include "abi_locus_values.h"

#include <stdint.h>
#include <string.h>

/* ---- handles ---- */

/* A predefined handle by its object's address, else Locus's own pointer
 * (Locus's user objects are pointers too, never one of these objects). */
static void *handle_in(const void *h, int kind)
{
    int l;
    return abi_predef_in((intptr_t)h, kind, &l) ? (void *)(intptr_t)l : (void *)h;
}

static void *handle_out(void *l)
{
    intptr_t h = (intptr_t)l;
    if ((uintptr_t)l < 0x1000)
        abi_predef_out((int)(intptr_t)l, &h);
    return (void *)h;
}

#define HANDLE_PAIR(kind, K, type)                                                             \
    void *abi_##kind##_in(type h) { return handle_in((const void *)h, ABI_K_##K); }            \
    type abi_##kind##_out(void *l) { return (type)handle_out(l); }
HANDLE_PAIR(comm, COMM, MPI_Comm)
HANDLE_PAIR(dtype, TYPE, MPI_Datatype)
HANDLE_PAIR(group, GROUP, MPI_Group)
HANDLE_PAIR(op, OP, MPI_Op)
HANDLE_PAIR(req, REQ, MPI_Request)
HANDLE_PAIR(errh, ERRH, MPI_Errhandler)
HANDLE_PAIR(info, INFO, MPI_Info)
HANDLE_PAIR(msg, MSG, MPI_Message)
HANDLE_PAIR(win, WIN, MPI_Win)
HANDLE_PAIR(file, FILE, MPI_File)
HANDLE_PAIR(session, SESSION, MPI_Session)

/* An int for a handle is its Fortran integer, both ways. */
#define DO_PRAGMA(x) _Pragma(#x)
#define TOINT(Kind, type)                                                                      \
    int PMPI_##Kind##_toint(type h) { return (int)PMPI_##Kind##_c2f(h); }                      \
    type PMPI_##Kind##_fromint(int i) { return PMPI_##Kind##_f2c((MPI_Fint)i); }               \
    DO_PRAGMA(weak MPI_##Kind##_toint = PMPI_##Kind##_toint)                                   \
    DO_PRAGMA(weak MPI_##Kind##_fromint = PMPI_##Kind##_fromint)
MPI_Fint PMPI_Session_c2f(MPI_Session);
MPI_Session PMPI_Session_f2c(MPI_Fint);
TOINT(Comm, MPI_Comm)
TOINT(Type, MPI_Datatype)
TOINT(Group, MPI_Group)
TOINT(Info, MPI_Info)
TOINT(Request, MPI_Request)
TOINT(Op, MPI_Op)
TOINT(Errhandler, MPI_Errhandler)
TOINT(Win, MPI_Win)
TOINT(Message, MPI_Message)
TOINT(Session, MPI_Session)
TOINT(File, MPI_File)

/* ---- statuses ---- */

int abi_status_ignored(const MPI_Status *s)
{
    return s == MPI_STATUS_IGNORE;
}

int abi_statuses_ignored(const MPI_Status *s)
{
    return s == MPI_STATUSES_IGNORE;
}

/* Open MPI keeps the count in bytes (_ucount) and the cancelled flag. */
void abi_status_out(const abi_locus_status_t *l, MPI_Status *s)
{
    abi_status_fields_t f;
    abi_status_read(l, &f);
    s->MPI_SOURCE = f.source;
    s->MPI_TAG = f.tag;
    if (l->error != ABI_STATUS_UNSET)
        s->MPI_ERROR = f.error;
    s->_cancelled = f.cancelled;
    s->_ucount = (size_t)f.bytes;
}

void abi_status_in(const MPI_Status *s, abi_locus_status_t *l)
{
    abi_status_fields_t f = { (MPI_Count)s->_ucount, s->_cancelled, s->MPI_SOURCE, s->MPI_TAG,
                              s->MPI_ERROR };
    abi_status_write(&f, l);
}

/* Fortran's MPI_F_STATUS(ES)_IGNORE, which Open MPI exports as data. */
MPI_Fint *MPI_F_STATUS_IGNORE = NULL;
MPI_Fint *MPI_F_STATUSES_IGNORE = NULL;

/* ---- the predefined attribute callbacks ---- */

static int dup_fn(void *in, void *out, int *flag)
{
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

#define ATTR_FNS(KIND, type)                                                                   \
    int OMPI_C_MPI_##KIND##_NULL_COPY_FN(type o, int k, void *e, void *in, void *out, int *f)  \
    {                                                                                          \
        (void)o, (void)k, (void)e, (void)in, (void)out;                                        \
        *f = 0;                                                                                \
        return MPI_SUCCESS;                                                                    \
    }                                                                                          \
    int OMPI_C_MPI_##KIND##_DUP_FN(type o, int k, void *e, void *in, void *out, int *f)        \
    {                                                                                          \
        (void)o, (void)k, (void)e;                                                             \
        return dup_fn(in, out, f);                                                             \
    }                                                                                          \
    int OMPI_C_MPI_##KIND##_NULL_DELETE_FN(type o, int k, void *v, void *e)                    \
    {                                                                                          \
        (void)o, (void)k, (void)v, (void)e;                                                    \
        return MPI_SUCCESS;                                                                    \
    }
ATTR_FNS(COMM, MPI_Comm)
ATTR_FNS(TYPE, MPI_Datatype)
ATTR_FNS(WIN, MPI_Win)

/* MPI-1's names of the communicator ones. */
int OMPI_C_MPI_NULL_COPY_FN(MPI_Comm o, int k, void *e, void *in, void *out, int *f)
{
    return OMPI_C_MPI_COMM_NULL_COPY_FN(o, k, e, in, out, f);
}

int OMPI_C_MPI_DUP_FN(MPI_Comm o, int k, void *e, void *in, void *out, int *f)
{
    return OMPI_C_MPI_COMM_DUP_FN(o, k, e, in, out, f);
}

int OMPI_C_MPI_NULL_DELETE_FN(MPI_Comm o, int k, void *v, void *e)
{
    return OMPI_C_MPI_COMM_NULL_DELETE_FN(o, k, v, e);
}
