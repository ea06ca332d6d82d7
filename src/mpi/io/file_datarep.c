/*
 * file_datarep.c — data representations: "native" and "internal" (the
 * packed bytes of memory), "external32" (the datatype engine's portable
 * big-endian encoding, as MPI_Pack_external writes it) and those the
 * program registers with MPI_Register_datarep (its conversion functions
 * called on every access), and the conversion of an access's memory to and
 * from the stream of bytes it has in the file.
 *
 * A user representation gives the file size of each basic type through
 * its extent function; a type's file size is then counted per element, so
 * a type mixing element kinds is refused there (named in the error).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"

enum { REP_NATIVE = 1, REP_EXTERNAL32, REP_USER };

struct io_datarep {
    char name[MPI_MAX_DATAREP_STRING];
    int kind;
    int large;                                   /* the _c conversion functions */
    void (*rd)(void), (*wr)(void);               /* NULL: no conversion */
    MPI_Datarep_extent_function *extent;
    void *state;
    io_datarep_t *next;
};

static io_datarep_t rep_native = { .name = "native", .kind = REP_NATIVE };
static io_datarep_t rep_internal = { .name = "internal", .kind = REP_NATIVE };
static io_datarep_t rep_external32 = { .name = "external32", .kind = REP_EXTERNAL32 };
static io_datarep_t *user_reps;

const io_datarep_t *io_datarep_find(const char *name)
{
    if (!name)
        return NULL;
    io_datarep_t *pre[] = { &rep_native, &rep_internal, &rep_external32 };
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
        if (strcmp(pre[i]->name, name) == 0)
            return pre[i];
    for (io_datarep_t *r = user_reps; r; r = r->next)
        if (strcmp(r->name, name) == 0)
            return r;
    return NULL;
}

const char *io_datarep_name(const io_datarep_t *r)
{
    return r->name;
}

void io_datarep_finalize(void)
{
    while (user_reps) {
        io_datarep_t *r = user_reps;
        user_reps = r->next;
        free(r);
    }
}

/* File bytes of one element of kind el. */
static int elem_file_size(const io_datarep_t *r, locus_elem_t el, MPI_Aint *out)
{
    if (r->kind == REP_NATIVE) {
        *out = (MPI_Aint)locus_elem_size(el);
        return MPI_SUCCESS;
    }
    if (r->kind == REP_EXTERNAL32) {
        *out = (MPI_Aint)locus_elem_external_size(el);
        return MPI_SUCCESS;
    }
    /* the predefined handle of the kind: the user's function wants one */
    MPI_Datatype h = MPI_DATATYPE_NULL;
    for (int i = 0; i < 256 && h == MPI_DATATYPE_NULL; i++) {
        locus_mdt_t *m = &locus_predef_types[i];
        if (m->dt && locus_dtype_elem(m->dt) == el && locus_dtype_size(m->dt) == locus_elem_size(el))
            h = m->handle;
    }
    int err = r->extent(h, out, r->state);
    return err != MPI_SUCCESS ? err : *out < 0 ? MPI_ERR_CONVERSION : MPI_SUCCESS;
}

int io_data_file_size(const io_datarep_t *r, locus_dtype_t *dt, size_t count, uint64_t *bytes)
{
    size_t size = locus_dtype_size(dt);
    if (r->kind == REP_NATIVE || size == 0 || count == 0) {
        *bytes = (uint64_t)count * size;
        return MPI_SUCCESS;
    }
    if (r->kind == REP_EXTERNAL32) {
        *bytes = (uint64_t)count * locus_dtype_external_size(dt);
        return MPI_SUCCESS;
    }
    locus_elem_t el = locus_dtype_elem(dt);
    if (el == LOCUS_EL_MIXED) {
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail,
                 "datarep \"%.100s\": a datatype mixing element kinds", r->name);
        return MPI_ERR_UNSUPPORTED_OPERATION;
    }
    MPI_Aint one;
    int err = elem_file_size(r, el, &one);
    if (err != MPI_SUCCESS)
        return err;
    *bytes = (uint64_t)count * (uint64_t)locus_dtype_count_elements(dt, size) * (uint64_t)one;
    return MPI_SUCCESS;
}

int io_type_file_extent(const io_datarep_t *r, locus_dtype_t *dt, MPI_Aint *extent)
{
    ptrdiff_t lb, ext;
    locus_dtype_extent(dt, &lb, &ext);
    if (r->kind == REP_NATIVE) {
        *extent = ext;
        return MPI_SUCCESS;
    }
    /* A type of one element kind scales with the element's size; a mixed
     * one counts its data (its holes are native, they have no file size). */
    locus_elem_t el = locus_dtype_elem(dt);
    size_t nat = el == LOCUS_EL_MIXED ? 0 : locus_elem_size(el);
    if (nat == 0 || locus_elem_extent(el) != nat) {
        uint64_t b;
        int err = io_data_file_size(r, dt, 1, &b);
        *extent = (MPI_Aint)b;
        return err;
    }
    MPI_Aint one;
    int err = elem_file_size(r, el, &one);
    *extent = (MPI_Aint)(ext / (ptrdiff_t)nat) * one;
    return err;
}

/* Calls a user conversion function on count x dt. */
static int convert(const io_datarep_t *r, int reading, void *userbuf, locus_dtype_t *dt,
                   size_t count, void *filebuf)
{
    MPI_Datatype h = locus_dt_handle(dt);
    if (r->large)
        return ((MPI_Datarep_conversion_function_c *)(reading ? r->rd : r->wr))(
            userbuf, h, (MPI_Count)count, filebuf, 0, r->state);
    if (count > 0x7fffffff)
        return MPI_ERR_COUNT;
    return ((MPI_Datarep_conversion_function *)(reading ? r->rd : r->wr))(
        userbuf, h, (int)count, filebuf, 0, r->state);
}

/* Whether the stream can be the memory itself. */
static int direct(const io_datarep_t *r, locus_dtype_t *dt)
{
    return (r->kind == REP_NATIVE || (r->kind == REP_USER && !r->wr && !r->rd)) &&
           locus_dtype_is_contig(dt);
}

static char *contig_start(const void *buf, locus_dtype_t *dt)
{
    ptrdiff_t tlb, text;
    locus_dtype_true_extent(dt, &tlb, &text);
    return (char *)buf + tlb;
}

int io_pack(const locus_file_t *f, const void *buf, size_t count, locus_dtype_t *dt,
            char **stream, uint64_t *len, int *owned)
{
    const io_datarep_t *r = f->rep;
    int err = io_data_file_size(r, dt, count, len);
    *owned = 0;
    *stream = NULL;
    if (err != MPI_SUCCESS || *len == 0)
        return err;
    if (direct(r, dt)) {
        *stream = contig_start(buf, dt);
        return MPI_SUCCESS;
    }
    char *s = malloc(*len);
    if (!s)
        return MPI_ERR_NO_MEM;
    if (r->kind == REP_EXTERNAL32) {
        int e = locus_dtype_pack_external(buf, count, dt, s);
        err = e == LOCUS_DTYPE_ECONV ? MPI_ERR_CONVERSION : e ? MPI_ERR_NO_MEM : MPI_SUCCESS;
    } else if (r->kind == REP_USER && r->wr) {
        err = convert(r, 0, (void *)buf, dt, count, s);
    } else {
        locus_dtype_pack(buf, count, dt, 0, s, *len);
    }
    if (err != MPI_SUCCESS) {
        free(s);
        return err;
    }
    *stream = s;
    *owned = 1;
    return MPI_SUCCESS;
}

int io_stream_alloc(const locus_file_t *f, void *buf, size_t count, locus_dtype_t *dt,
                    char **stream, uint64_t *len, int *owned)
{
    int err = io_data_file_size(f->rep, dt, count, len);
    *owned = 0;
    *stream = NULL;
    if (err != MPI_SUCCESS || *len == 0)
        return err;
    if (direct(f->rep, dt)) {
        *stream = contig_start(buf, dt);
        return MPI_SUCCESS;
    }
    if (!(*stream = malloc(*len)))
        return MPI_ERR_NO_MEM;
    *owned = 1;
    return MPI_SUCCESS;
}

int io_unpack(const locus_file_t *f, void *buf, size_t count, locus_dtype_t *dt, char *stream,
              int owned, uint64_t got, size_t *mem_bytes)
{
    const io_datarep_t *r = f->rep;
    int err = MPI_SUCCESS;
    *mem_bytes = 0;
    if (!owned) {
        *mem_bytes = got;
        return MPI_SUCCESS;
    }
    if (r->kind == REP_NATIVE || (r->kind == REP_USER && !r->rd)) {
        locus_dtype_unpack(buf, count, dt, 0, stream, got);
        *mem_bytes = got;
    } else {
        /* Converted items are whole ones: the part of one that the end of
         * file cut is not delivered. */
        uint64_t per;
        err = io_data_file_size(r, dt, 1, &per);
        size_t items = err == MPI_SUCCESS && per ? (size_t)(got / per) : 0;
        if (items > count)
            items = count;
        if (items && r->kind == REP_EXTERNAL32)
            err = locus_dtype_unpack_external(stream, buf, items, dt) ? MPI_ERR_NO_MEM
                                                                      : MPI_SUCCESS;
        else if (items)
            err = convert(r, 1, buf, dt, items, stream);
        *mem_bytes = items * locus_dtype_size(dt);
    }
    free(stream);
    return err;
}

/* ---- MPI_Register_datarep ------------------------------------------------------ */

static int register_rep(const char *name, void (*rd)(void), void (*wr)(void),
                        MPI_Datarep_extent_function *extent, void *state, int large,
                        const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    if (!name || !*name || strlen(name) >= MPI_MAX_DATAREP_STRING || !extent)
        return io_err(NULL, MPI_ERR_ARG, fn, "a representation needs a name and an extent function");
    if (io_datarep_find(name))
        return io_err(NULL, MPI_ERR_DUP_DATAREP, fn, "\"%s\" is already defined", name);
    io_datarep_t *r = calloc(1, sizeof *r);
    if (!r)
        return io_err(NULL, MPI_ERR_NO_MEM, fn, NULL);
    snprintf(r->name, sizeof r->name, "%s", name);
    r->kind = REP_USER;
    r->large = large;
    r->rd = rd;
    r->wr = wr;
    r->extent = extent;
    r->state = state;
    r->next = user_reps;
    user_reps = r;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Register_datarep)
int PMPI_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_fn,
                          MPI_Datarep_conversion_function *write_fn,
                          MPI_Datarep_extent_function *extent_fn, void *extra_state)
{
    LOCUS_ENTRY_CS();
    return register_rep(datarep, (void (*)(void))read_fn, (void (*)(void))write_fn, extent_fn,
                        extra_state, 0, "MPI_Register_datarep");
}

LOCUS_PMPI_WEAK(Register_datarep_c)
int PMPI_Register_datarep_c(const char *datarep, MPI_Datarep_conversion_function_c *read_fn,
                            MPI_Datarep_conversion_function_c *write_fn,
                            MPI_Datarep_extent_function *extent_fn, void *extra_state)
{
    LOCUS_ENTRY_CS();
    return register_rep(datarep, (void (*)(void))read_fn, (void (*)(void))write_fn, extent_fn,
                        extra_state, 1, "MPI_Register_datarep_c");
}
