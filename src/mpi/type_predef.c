/*
 * type_predef.c — the predefined datatypes of the ABI: one MPI datatype
 * object per handle (MPI_INT and MPI_INTEGER are different datatypes with
 * the same layout), each over its own engine type so that an engine type
 * always knows its handle (a user operation is called with it).
 */
#include <stdio.h>
#include <string.h>

#include "mpi_impl.h"

locus_mdt_t locus_predef_types[256];

typedef struct {
    uint16_t handle;
    locus_elem_t kind;
    const char *name;
} predef_t;

/* Every predefined handle this library supports, with its element kind.
 * Handles that are not listed (16-byte Fortran reals and integers, 2-byte
 * reals) are not supported: using one is MPI_ERR_TYPE. */
static const predef_t predefs[] = {
    {0x201, LOCUS_EL_AINT, "MPI_AINT"}, {0x202, LOCUS_EL_COUNT, "MPI_COUNT"},
    {0x203, LOCUS_EL_OFFSET, "MPI_OFFSET"}, {0x207, LOCUS_EL_BYTE, "MPI_PACKED"},
    {0x208, LOCUS_EL_SHORT, "MPI_SHORT"}, {0x209, LOCUS_EL_INT, "MPI_INT"},
    {0x20a, LOCUS_EL_LONG, "MPI_LONG"}, {0x20b, LOCUS_EL_LLONG, "MPI_LONG_LONG"},
    {0x20c, LOCUS_EL_USHORT, "MPI_UNSIGNED_SHORT"}, {0x20d, LOCUS_EL_UINT, "MPI_UNSIGNED"},
    {0x20e, LOCUS_EL_ULONG, "MPI_UNSIGNED_LONG"},
    {0x20f, LOCUS_EL_ULLONG, "MPI_UNSIGNED_LONG_LONG"},
    {0x210, LOCUS_EL_FLOAT, "MPI_FLOAT"}, {0x214, LOCUS_EL_DOUBLE, "MPI_DOUBLE"},
    {0x218, LOCUS_EL_INT, "MPI_LOGICAL"}, {0x219, LOCUS_EL_INT, "MPI_INTEGER"},
    {0x21a, LOCUS_EL_FLOAT, "MPI_REAL"}, {0x21c, LOCUS_EL_DOUBLE, "MPI_DOUBLE_PRECISION"},
    {0x21e, LOCUS_EL_CHAR, "MPI_CHARACTER"}, {0x220, LOCUS_EL_LDOUBLE, "MPI_LONG_DOUBLE"},
    {0x228, LOCUS_EL_FLOAT_INT, "MPI_FLOAT_INT"}, {0x229, LOCUS_EL_DOUBLE_INT, "MPI_DOUBLE_INT"},
    {0x22a, LOCUS_EL_LONG_INT, "MPI_LONG_INT"}, {0x22b, LOCUS_EL_2INT, "MPI_2INT"},
    {0x22c, LOCUS_EL_SHORT_INT, "MPI_SHORT_INT"},
    {0x22d, LOCUS_EL_LDOUBLE_INT, "MPI_LONG_DOUBLE_INT"},
    {0x232, LOCUS_EL_2INT, "MPI_2INTEGER"},
    {0x238, LOCUS_EL_BOOL, "MPI_C_BOOL"}, {0x239, LOCUS_EL_BOOL, "MPI_CXX_BOOL"},
    {0x23c, LOCUS_EL_WCHAR, "MPI_WCHAR"},
    {0x240, LOCUS_EL_INT8, "MPI_INT8_T"}, {0x241, LOCUS_EL_UINT8, "MPI_UINT8_T"},
    {0x243, LOCUS_EL_CHAR, "MPI_CHAR"}, {0x244, LOCUS_EL_SCHAR, "MPI_SIGNED_CHAR"},
    {0x245, LOCUS_EL_UCHAR, "MPI_UNSIGNED_CHAR"}, {0x247, LOCUS_EL_BYTE, "MPI_BYTE"},
    {0x248, LOCUS_EL_INT16, "MPI_INT16_T"}, {0x249, LOCUS_EL_UINT16, "MPI_UINT16_T"},
    {0x250, LOCUS_EL_INT32, "MPI_INT32_T"}, {0x251, LOCUS_EL_UINT32, "MPI_UINT32_T"},
    {0x258, LOCUS_EL_INT64, "MPI_INT64_T"}, {0x259, LOCUS_EL_UINT64, "MPI_UINT64_T"},
    {0x2c0, LOCUS_EL_INT8, "MPI_LOGICAL1"}, {0x2c1, LOCUS_EL_INT8, "MPI_INTEGER1"},
    {0x2c8, LOCUS_EL_INT16, "MPI_LOGICAL2"}, {0x2c9, LOCUS_EL_INT16, "MPI_INTEGER2"},
    {0x2d0, LOCUS_EL_INT32, "MPI_LOGICAL4"}, {0x2d1, LOCUS_EL_INT32, "MPI_INTEGER4"},
    {0x2d2, LOCUS_EL_FLOAT, "MPI_REAL4"},
    {0x2d8, LOCUS_EL_INT64, "MPI_LOGICAL8"}, {0x2d9, LOCUS_EL_INT64, "MPI_INTEGER8"},
    {0x2da, LOCUS_EL_DOUBLE, "MPI_REAL8"},
};

int locus_types_init(void)
{
    for (size_t i = 0; i < sizeof predefs / sizeof predefs[0]; i++) {
        const predef_t *p = &predefs[i];
        locus_mdt_t *m = &locus_predef_types[p->handle - 0x200];
        if (m->dt)
            continue;   /* a second MPI_Init after MPI_Finalize is refused earlier */
        if (locus_dtype_dup(locus_dtype_basic(p->kind), &m->dt) != LOCUS_DTYPE_OK)
            return MPI_ERR_NO_MEM;
        locus_dtype_commit(m->dt);
        locus_dtype_set_owner(m->dt, m, NULL);
        m->magic = LOCUS_DT_MAGIC;
        m->predefined = 1;
        m->handle = (MPI_Datatype)(uintptr_t)p->handle;
        snprintf(m->name, sizeof m->name, "%s", p->name);
    }
    return MPI_SUCCESS;
}

void locus_types_finalize(void)
{
    for (size_t i = 0; i < 256; i++) {
        locus_mdt_t *m = &locus_predef_types[i];
        if (m->dt) {
            locus_dtype_set_owner(m->dt, NULL, NULL);
            locus_dtype_release(m->dt);
        }
        memset(m, 0, sizeof *m);
    }
}
