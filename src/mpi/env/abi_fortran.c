/*
 * abi_fortran.c — the MPI-5 ABI's Fortran settings (MPI-5 21.4.1): a
 * Fortran binding built over the C ABI tells the library the sizes of
 * the default Fortran types and which optional types its compiler has
 * (MPI_Abi_set_fortran_info, once), and the values of .TRUE. and .FALSE.
 * per LOGICAL size (MPI_Abi_set_fortran_booleans, once per size).
 *
 * Locus has no Fortran binding of its own, so until told it assumes
 * gfortran on x86-64: LOGICAL, INTEGER and REAL of 4 bytes, DOUBLE
 * PRECISION of 8, .TRUE. = 1 and .FALSE. = 0 (reported as not set), and
 * an optional type is supported when the library supports its datatype.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "env.h"

static const struct {
    const char *key;
    int deflt;
} size_keys[] = {
    {"mpi_logical_size", 4}, {"mpi_integer_size", 4}, {"mpi_real_size", 4},
    {"mpi_double_precision_size", 8},
};
#define NSIZES 4

static const struct {
    const char *key;
    MPI_Datatype type;
} optional_types[] = {
    {"mpi_logical1_supported", MPI_LOGICAL1}, {"mpi_logical2_supported", MPI_LOGICAL2},
    {"mpi_logical4_supported", MPI_LOGICAL4}, {"mpi_logical8_supported", MPI_LOGICAL8},
    {"mpi_logical16_supported", MPI_LOGICAL16}, {"mpi_integer1_supported", MPI_INTEGER1},
    {"mpi_integer2_supported", MPI_INTEGER2}, {"mpi_integer4_supported", MPI_INTEGER4},
    {"mpi_integer8_supported", MPI_INTEGER8}, {"mpi_integer16_supported", MPI_INTEGER16},
    {"mpi_real2_supported", MPI_REAL2}, {"mpi_real4_supported", MPI_REAL4},
    {"mpi_real8_supported", MPI_REAL8}, {"mpi_real16_supported", MPI_REAL16},
    {"mpi_complex4_supported", MPI_COMPLEX4}, {"mpi_complex8_supported", MPI_COMPLEX8},
    {"mpi_complex16_supported", MPI_COMPLEX16}, {"mpi_complex32_supported", MPI_COMPLEX32},
    {"mpi_double_complex_supported", MPI_DOUBLE_COMPLEX},
};
#define NOPTIONAL ((int)(sizeof optional_types / sizeof optional_types[0]))

/* LOGICAL sizes the booleans may be given for. */
static const int logical_sizes[] = {1, 2, 4, 8, 16};
#define NLOGICAL 5

/* What the program told the library (one per process). */
static struct {
    int info_set;                    /* MPI_Abi_set_fortran_info succeeded */
    int size[NSIZES];
    signed char supported[NOPTIONAL];
    struct {
        int set;
        unsigned char t[16], f[16];
    } booleans[NLOGICAL];
} fortran;

/* Errors before MPI_Init have no handler to go to: returned as they are. */
static int fortran_err(int errclass, const char *fn)
{
    if (locus_mpi_active())
        return locus_mpi_err(NULL, errclass, fn);
    locus_mpi.detail[0] = '\0';
    return errclass;
}

static int logical_slot(int logical_size)
{
    for (int i = 0; i < NLOGICAL; i++)
        if (logical_sizes[i] == logical_size)
            return i;
    return -1;
}

static int type_supported(int i)
{
    if (fortran.info_set)
        return fortran.supported[i];
    return locus_dt_of(optional_types[i].type) != NULL;
}

LOCUS_PMPI_WEAK(Abi_get_fortran_info)
int PMPI_Abi_get_fortran_info(MPI_Info *info)
{
    LOCUS_ENTRY_CS();
    static const char fn[] = "MPI_Abi_get_fortran_info";
    LOCUS_CHECK_INIT(fn);
    if (!info)
        return locus_mpi_err(NULL, MPI_ERR_ARG, fn);
    int rc = locus_info_create_impl(info);
    char v[16];
    for (int i = 0; i < NSIZES && rc == MPI_SUCCESS; i++) {
        snprintf(v, sizeof v, "%d", fortran.info_set ? fortran.size[i] : size_keys[i].deflt);
        rc = locus_info_set_impl(*info, size_keys[i].key, v);
    }
    for (int i = 0; i < NOPTIONAL && rc == MPI_SUCCESS; i++)
        rc = locus_info_set_impl(*info, optional_types[i].key,
                                 type_supported(i) ? "true" : "false");
    if (rc != MPI_SUCCESS) {
        if (*info != MPI_INFO_NULL)
            PMPI_Info_free(info);
        return locus_mpi_err(NULL, rc, fn);
    }
    return MPI_SUCCESS;
}

/* Value of key in info into *out: 0 absent, 1 present, -1 too long. */
static int info_value(MPI_Info info, const char *key, char *out, int size)
{
    int len = size, flag = 0;
    if (locus_info_get_string_impl(info, key, &len, out, &flag) != MPI_SUCCESS || !flag)
        return 0;
    return len > size ? -1 : 1;
}

LOCUS_PMPI_WEAK(Abi_set_fortran_info)
int PMPI_Abi_set_fortran_info(MPI_Info info)
{
    LOCUS_ENTRY_CS();
    static const char fn[] = "MPI_Abi_set_fortran_info";
    LOCUS_CHECK_INIT(fn);
    if (info == MPI_INFO_NULL)
        return locus_mpi_err(NULL, MPI_ERR_INFO, fn);
    /* Only the first call counts (MPI-5 21.4.1). */
    if (fortran.info_set) {
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail,
                 "the Fortran settings were set already");
        return locus_mpi_err(NULL, MPI_ERR_ABI, fn);
    }
    int size[NSIZES];
    signed char supported[NOPTIONAL];
    char v[64];
    /* Everything is checked before anything is kept: a refused call sets nothing. */
    for (int i = 0; i < NSIZES; i++) {
        size[i] = size_keys[i].deflt;
        int got = info_value(info, size_keys[i].key, v, sizeof v);
        char *end = v;
        long n = got > 0 ? strtol(v, &end, 10) : 0;
        if (got < 0 || (got > 0 && (*end || end == v || n < 1 || n > 16 || (n & (n - 1))))) {
            snprintf(locus_mpi.detail, sizeof locus_mpi.detail,
                     "%s must be a size in bytes (1, 2, 4, 8 or 16)", size_keys[i].key);
            return locus_mpi_err(NULL, MPI_ERR_INFO_VALUE, fn);
        }
        if (got > 0)
            size[i] = (int)n;
    }
    for (int i = 0; i < NOPTIONAL; i++) {
        supported[i] = (signed char)(locus_dt_of(optional_types[i].type) != NULL);
        int got = info_value(info, optional_types[i].key, v, sizeof v);
        if (got > 0 && strcasecmp(v, "true") == 0) {
            supported[i] = 1;
        } else if (got > 0 && strcasecmp(v, "false") == 0) {
            supported[i] = 0;
        } else if (got != 0) {
            snprintf(locus_mpi.detail, sizeof locus_mpi.detail, "%s must be true or false",
                     optional_types[i].key);
            return locus_mpi_err(NULL, MPI_ERR_INFO_VALUE, fn);
        }
    }
    memcpy(fortran.size, size, sizeof size);
    memcpy(fortran.supported, supported, sizeof supported);
    fortran.info_set = 1;
    return MPI_SUCCESS;
}

/* The value v as a logical_size-byte integer in this machine's order. */
static void logical_bytes(unsigned char *out, int logical_size, unsigned v)
{
    const union {
        uint16_t u;
        unsigned char b[2];
    } order = {1};
    memset(out, 0, (size_t)logical_size);
    out[order.b[0] ? 0 : logical_size - 1] = (unsigned char)v;
}

LOCUS_PMPI_WEAK(Abi_get_fortran_booleans)
int PMPI_Abi_get_fortran_booleans(int logical_size, void *logical_true, void *logical_false,
                                  int *is_set)
{
    LOCUS_ENTRY_CS();
    static const char fn[] = "MPI_Abi_get_fortran_booleans";
    int slot = logical_slot(logical_size);
    if (slot < 0 || !logical_true || !logical_false || !is_set)
        return fortran_err(MPI_ERR_ARG, fn);
    if (fortran.booleans[slot].set) {
        memcpy(logical_true, fortran.booleans[slot].t, (size_t)logical_size);
        memcpy(logical_false, fortran.booleans[slot].f, (size_t)logical_size);
    } else {
        logical_bytes(logical_true, logical_size, 1);
        logical_bytes(logical_false, logical_size, 0);
    }
    *is_set = fortran.booleans[slot].set;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Abi_set_fortran_booleans)
int PMPI_Abi_set_fortran_booleans(int logical_size, void *logical_true, void *logical_false)
{
    LOCUS_ENTRY_CS();
    static const char fn[] = "MPI_Abi_set_fortran_booleans";
    int slot = logical_slot(logical_size);
    if (slot < 0 || !logical_true || !logical_false ||
        memcmp(logical_true, logical_false, (size_t)logical_size) == 0)
        return fortran_err(MPI_ERR_ARG, fn);
    if (fortran.booleans[slot].set) {
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail,
                 "the booleans of LOGICAL*%d were set already", logical_size);
        return fortran_err(MPI_ERR_ABI, fn);
    }
    memcpy(fortran.booleans[slot].t, logical_true, (size_t)logical_size);
    memcpy(fortran.booleans[slot].f, logical_false, (size_t)logical_size);
    fortran.booleans[slot].set = 1;
    return MPI_SUCCESS;
}
