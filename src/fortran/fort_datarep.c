/*
 * fort_datarep.c — MPI_Register_datarep from Fortran: the conversion and
 * extent functions are Fortran procedures with Fortran arguments (integer
 * handles, the extra state by reference), so the C library gets
 * trampolines, and the registration's extra_state points to what they
 * call. A representation is registered for the life of the program (MPI
 * has no call to remove one); a refused registration frees its record.
 * MPI_CONVERSION_FN_NULL is a procedure of its own here, as Fortran needs
 * one to name, and stands for C's null conversion.
 */
#include <stdlib.h>

#include "fort_impl.h"

typedef void(fort_conv_fn)(void *userbuf, MPI_Fint *datatype, MPI_Fint *count, void *filebuf,
                           MPI_Offset *position, MPI_Aint *extra, MPI_Fint *ierror);
typedef void(fort_extent_fn)(MPI_Fint *datatype, MPI_Aint *extent, MPI_Aint *extra,
                             MPI_Fint *ierror);

typedef struct fort_datarep {
    fort_conv_fn *read, *write;
    fort_extent_fn *extent;
    MPI_Aint extra;
    struct fort_datarep *next;
} fort_datarep_t;

/* Every registered representation's record: the library drops its table
 * at MPI_Finalize, but a representation outlives it (no call removes
 * one), so the records stay reachable here. */
static fort_datarep_t *registered;

FORT_API void mpi_conversion_fn_null_(void *userbuf, MPI_Fint *datatype, MPI_Fint *count,
                                      void *filebuf, MPI_Offset *position, MPI_Aint *extra,
                                      MPI_Fint *ierror)
{
    (void)userbuf, (void)datatype, (void)count, (void)filebuf, (void)position, (void)extra;
    *ierror = MPI_SUCCESS;
}

static int conv(fort_conv_fn *f, void *userbuf, MPI_Datatype datatype, int count, void *filebuf,
                MPI_Offset position, fort_datarep_t *d)
{
    MPI_Fint t = PMPI_Type_toint(datatype), n = count, ierr = MPI_SUCCESS;
    f(userbuf, &t, &n, filebuf, &position, &d->extra, &ierr);
    return ierr;
}

static int datarep_read(void *userbuf, MPI_Datatype datatype, int count, void *filebuf,
                        MPI_Offset position, void *extra)
{
    fort_datarep_t *d = extra;
    return conv(d->read, userbuf, datatype, count, filebuf, position, d);
}

static int datarep_write(void *userbuf, MPI_Datatype datatype, int count, void *filebuf,
                         MPI_Offset position, void *extra)
{
    fort_datarep_t *d = extra;
    return conv(d->write, userbuf, datatype, count, filebuf, position, d);
}

static int datarep_extent(MPI_Datatype datatype, MPI_Aint *extent, void *extra)
{
    fort_datarep_t *d = extra;
    MPI_Fint t = PMPI_Type_toint(datatype), ierr = MPI_SUCCESS;
    d->extent(&t, extent, &d->extra, &ierr);
    return ierr;
}

#pragma weak PMPI_Register_datarep
FORT_API void pmpi_register_datarep_(const char *datarep, fort_conv_fn *read_fn,
                                     fort_conv_fn *write_fn, fort_extent_fn *extent_fn,
                                     const MPI_Aint *extra_state, MPI_Fint *ierror,
                                     size_t datarep_len)
{
    static const char fn[] = "MPI_Register_datarep";
    if (!PMPI_Register_datarep) {
        *ierror = fort_missing(fn);
        return;
    }
    fort_datarep_t *d = malloc(sizeof *d);
    char *name = fort_str_in(datarep, datarep_len, 0);
    if (!d || !name) {
        free(d);
        free(name);
        *ierror = fort_err(MPI_ERR_NO_MEM, fn, "no memory for the representation");
        return;
    }
    *d = (fort_datarep_t){ read_fn, write_fn, extent_fn, *extra_state, NULL };
    int null_read = read_fn == mpi_conversion_fn_null_;
    int null_write = write_fn == mpi_conversion_fn_null_;
    int rc = PMPI_Register_datarep(name, null_read ? NULL : datarep_read,
                                   null_write ? NULL : datarep_write, datarep_extent, d);
    if (rc != MPI_SUCCESS) {
        free(d);
    } else {
        d->next = registered;
        registered = d;
    }
    free(name);
    *ierror = rc;
}
FORT_WEAK(pmpi_register_datarep_, mpi_register_datarep_)
