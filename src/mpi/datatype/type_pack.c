/*
 * type_pack.c — MPI_Pack/MPI_Unpack/MPI_Pack_size (the native packed
 * form) and MPI_Pack_external/MPI_Unpack_external/MPI_Pack_external_size
 * (the portable "external32" form): one implementation for the int and
 * large-count forms of each (generated entry points).
 */
#include <limits.h>
#include <string.h>

#include "datatype.h"

/* count * per, or -1 when it overflows an MPI_Count. */
static MPI_Count count_bytes(MPI_Count count, size_t per)
{
    MPI_Count r;
    if (per > (size_t)INT64_MAX || __builtin_mul_overflow(count, (MPI_Count)per, &r))
        return -1;
    return r;
}

/* The packed bytes of one element of a valid type: native or external32. */
static size_t packed_el_size(MPI_Datatype datatype, int external)
{
    locus_dtype_t *dt = locus_dt_of(datatype);
    return external ? locus_dtype_external_size(dt) : locus_dtype_size(dt);
}

/* Checks shared by the pack calls (unpack: inbuf is the packed buffer):
 * count, type (committed), the packed buffer and position, the user's
 * buffer, then room in the packed buffer for the *need bytes. */
static int pack_check(const void *inbuf, MPI_Count count, MPI_Datatype datatype,
                      const void *outbuf, MPI_Count packed_size, const MPI_Count *position,
                      int unpack, int external, MPI_Count *need)
{
    const void *user_buf = unpack ? outbuf : inbuf, *packed = unpack ? inbuf : outbuf;
    if (count < 0)
        return MPI_ERR_COUNT;
    int rc = locus_check_dtype(datatype);
    if (rc == MPI_SUCCESS && (!position || *position < 0 || packed_size < 0 ||
                              (packed_size > 0 && !packed)))
        rc = MPI_ERR_ARG;
    if (rc == MPI_SUCCESS)
        rc = locus_check_buf(user_buf, count > 0, datatype);
    if (rc != MPI_SUCCESS)
        return rc;
    *need = count_bytes(count, packed_el_size(datatype, external));
    if (*need < 0 || *position > packed_size || *need > packed_size - *position)
        return MPI_ERR_TRUNCATE;
    return MPI_SUCCESS;
}

/* Checks shared by the size calls: count, type, output; the packed size
 * into *s. */
static int size_check(MPI_Count count, MPI_Datatype datatype, const void *size, int external,
                      MPI_Count *s)
{
    *s = 0;
    if (count < 0)
        return MPI_ERR_COUNT;
    int rc = locus_check_dtype(datatype);
    if (rc == MPI_SUCCESS && !size)
        rc = MPI_ERR_ARG;
    if (rc != MPI_SUCCESS)
        return rc;
    *s = count_bytes(count, packed_el_size(datatype, external));
    return *s < 0 ? MPI_ERR_COUNT : MPI_SUCCESS;
}

/* ---- native ---- */

static int pack(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf,
                MPI_Count outsize, MPI_Count *position, MPI_Comm comm, int unpack,
                const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *c = locus_comm_of(comm);
    MPI_Count need = 0;
    int rc = locus_check_comm(c);
    if (rc == MPI_SUCCESS)
        rc = pack_check(inbuf, incount, datatype, outbuf, outsize, position, unpack, 0, &need);
    if (rc != MPI_SUCCESS)
        return locus_mpi_err(c, rc, fn);
    locus_dtype_t *dt = locus_dt_of(datatype);
    size_t n = unpack ? locus_dtype_unpack(outbuf, (size_t)incount, dt, 0,
                                           (const char *)inbuf + *position, (size_t)need)
                      : locus_dtype_pack(inbuf, (size_t)incount, dt, 0,
                                         (char *)outbuf + *position, (size_t)need);
    *position += (MPI_Count)n;
    return MPI_SUCCESS;
}

int locus_pack_impl(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf,
                    MPI_Count outsize, MPI_Count *position, MPI_Comm comm, const char *fn)
{
    return pack(inbuf, incount, datatype, outbuf, outsize, position, comm, 0, fn);
}

/* MPI_Unpack's arguments come in another order: packed buffer first. */
int locus_unpack_impl(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                      MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm, const char *fn)
{
    return pack(inbuf, outcount, datatype, outbuf, insize, position, comm, 1, fn);
}

int locus_pack_size_impl(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm,
                         MPI_Count *size, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *c = locus_comm_of(comm);
    MPI_Count s = 0;
    int rc = locus_check_comm(c);
    if (rc == MPI_SUCCESS)
        rc = size_check(incount, datatype, size, 0, &s);
    if (rc != MPI_SUCCESS)
        return locus_mpi_err(c, rc, fn);
    *size = s;
    return MPI_SUCCESS;
}

/* ---- external32 ---- */

/* Only "external32" is defined for the canonical pack calls; any other
 * name is MPI_ERR_UNSUPPORTED_DATAREP (the class MPI gives an unknown
 * data representation). */
static int datarep_check(const char *datarep)
{
    if (!datarep)
        return MPI_ERR_ARG;
    return strcmp(datarep, "external32") == 0 ? MPI_SUCCESS : MPI_ERR_UNSUPPORTED_DATAREP;
}

static int pack_external(const char *datarep, const void *inbuf, MPI_Count incount,
                         MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
                         MPI_Count *position, int unpack, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    MPI_Count need = 0;
    int rc = datarep_check(datarep);
    if (rc == MPI_SUCCESS)
        rc = pack_check(inbuf, incount, datatype, outbuf, outsize, position, unpack, 1, &need);
    if (rc != MPI_SUCCESS)
        return TYPE_ERR(rc, fn);
    locus_dtype_t *dt = locus_dt_of(datatype);
    rc = unpack ? locus_dtype_unpack_external((const char *)inbuf + *position, outbuf,
                                              (size_t)incount, dt)
                : locus_dtype_pack_external(inbuf, (size_t)incount, dt,
                                            (char *)outbuf + *position);
    if (rc != LOCUS_DTYPE_OK)
        return TYPE_ERR(rc == LOCUS_DTYPE_ECONV ? MPI_ERR_CONVERSION : MPI_ERR_NO_MEM, fn);
    *position += need;
    return MPI_SUCCESS;
}

int locus_pack_external_impl(const char datarep[], const void *inbuf, MPI_Count incount,
                             MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
                             MPI_Count *position, const char *fn)
{
    return pack_external(datarep, inbuf, incount, datatype, outbuf, outsize, position, 0, fn);
}

int locus_unpack_external_impl(const char datarep[], const void *inbuf, MPI_Count insize,
                               MPI_Count *position, void *outbuf, MPI_Count outcount,
                               MPI_Datatype datatype, const char *fn)
{
    return pack_external(datarep, inbuf, outcount, datatype, outbuf, insize, position, 1, fn);
}

int locus_pack_external_size_impl(const char datarep[], MPI_Count incount,
                                  MPI_Datatype datatype, MPI_Count *size, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    MPI_Count s = 0;
    int rc = datarep_check(datarep);
    if (rc == MPI_SUCCESS)
        rc = size_check(incount, datatype, size, 1, &s);
    if (rc != MPI_SUCCESS)
        return TYPE_ERR(rc, fn);
    *size = s;
    return MPI_SUCCESS;
}
