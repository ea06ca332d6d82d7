/*
 * handles.c — the objects behind the predefined handles (set up by the
 * chapters that own them: comm/, datatype/, at MPI_Init), and what the
 * MPI-5 ABI adds around handles: the integer handles Fortran uses
 * (MPI_<Handle>_toint / _fromint) and the ABI's own queries
 * (MPI_Abi_get_version / get_info / the Fortran settings).
 *
 * An integer handle of a predefined handle is its value (below 0x1000);
 * the library's objects get integers from 0x1000 up, in the order they are
 * first asked for, from one registry per handle kind.
 */
#include <stdlib.h>
#include <string.h>

#include "env.h"

locus_comm_t locus_comm_world, locus_comm_self;
locus_group_t locus_group_empty = { .refcount = 1, .size = 0, .rank = MPI_UNDEFINED,
                                    .world_of = NULL };
locus_mdt_t locus_predef_types[256];

typedef struct {
    void **obj;
    int n, cap;
} registry_t;

enum { REG_COMM, REG_TYPE, REG_GROUP, REG_OP, REG_REQUEST, REG_ERRH, REG_INFO, REG_MESSAGE,
       REG_WIN, REG_FILE, REG_SESSION, REG_KINDS };
static registry_t registries[REG_KINDS];

static int reg_toint(int kind, void *h)
{
    uintptr_t v = (uintptr_t)h;
    if (v < LOCUS_PREDEF_LIMIT)
        return (int)v;
    registry_t *r = &registries[kind];
    for (int i = 0; i < r->n; i++)
        if (r->obj[i] == h)
            return (int)LOCUS_PREDEF_LIMIT + i;
    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 64;
        void **o = realloc(r->obj, (size_t)cap * sizeof *o);
        if (!o)
            return -1;
        r->obj = o;
        r->cap = cap;
    }
    r->obj[r->n] = h;
    return (int)LOCUS_PREDEF_LIMIT + r->n++;
}

/* The handle of an integer; an integer never handed out gives NULL (the
 * caller turns it into its kind's null handle). */
static void *reg_fromint(int kind, int i, void *null_handle)
{
    if (i >= 0 && (unsigned)i < LOCUS_PREDEF_LIMIT)
        return (void *)(uintptr_t)i;
    registry_t *r = &registries[kind];
    i -= (int)LOCUS_PREDEF_LIMIT;
    return i >= 0 && i < r->n ? r->obj[i] : null_handle;
}

#define HANDLE_INT(Kind, type, reg, null)                                       \
    LOCUS_PMPI_WEAK(Kind##_toint)                                               \
    int PMPI_##Kind##_toint(type h)                                             \
    {                                                                           \
        LOCUS_ENTRY_CS();                                                       \
        return reg_toint(reg, (void *)h);                                       \
    }                                                                           \
    LOCUS_PMPI_WEAK(Kind##_fromint)                                             \
    type PMPI_##Kind##_fromint(int i)                                           \
    {                                                                           \
        LOCUS_ENTRY_CS();                                                       \
        return (type)reg_fromint(reg, i, (void *)(null));                       \
    }

HANDLE_INT(Comm, MPI_Comm, REG_COMM, MPI_COMM_NULL)
HANDLE_INT(Type, MPI_Datatype, REG_TYPE, MPI_DATATYPE_NULL)
HANDLE_INT(Group, MPI_Group, REG_GROUP, MPI_GROUP_NULL)
HANDLE_INT(Op, MPI_Op, REG_OP, MPI_OP_NULL)
HANDLE_INT(Request, MPI_Request, REG_REQUEST, MPI_REQUEST_NULL)
HANDLE_INT(Errhandler, MPI_Errhandler, REG_ERRH, MPI_ERRHANDLER_NULL)
HANDLE_INT(Info, MPI_Info, REG_INFO, MPI_INFO_NULL)
HANDLE_INT(Message, MPI_Message, REG_MESSAGE, MPI_MESSAGE_NULL)
HANDLE_INT(Win, MPI_Win, REG_WIN, MPI_WIN_NULL)
HANDLE_INT(File, MPI_File, REG_FILE, MPI_FILE_NULL)
HANDLE_INT(Session, MPI_Session, REG_SESSION, MPI_SESSION_NULL)

LOCUS_PMPI_WEAK(Abi_get_version)
int PMPI_Abi_get_version(int *abi_major, int *abi_minor)
{
    LOCUS_ENTRY_CS();
    if (!abi_major || !abi_minor)
        return MPI_ERR_ARG;
    *abi_major = MPI_ABI_VERSION;
    *abi_minor = MPI_ABI_SUBVERSION;
    return MPI_SUCCESS;
}
