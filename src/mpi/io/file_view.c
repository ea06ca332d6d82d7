/*
 * file_view.c — file views: MPI_File_set_view / get_view, and where a
 * position of the view lies in the file (io_view_map, MPI_File_get_byte_offset).
 *
 * The filetype is flattened once, when the view is set, into the runs of
 * its data in order (rma/'s decoder: the cost is the number of runs, not
 * the type's span); an access then walks the runs from its position,
 * tile after tile. MPI requires a filetype's displacements to be
 * non-negative and non-decreasing, so the runs are in file order and
 * every access's pieces come out sorted -- what sieving and the two-phase
 * exchange rely on; a filetype that breaks the rule is refused with
 * MPI_ERR_TYPE here rather than mis-read later.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"

void io_view_free(locus_file_t *f)
{
    if (f->etype)
        locus_dtype_release(f->etype);
    if (f->ftype)
        locus_dtype_release(f->ftype);
    f->etype = f->ftype = NULL;
    free(f->runs);
    free(f->run_pos);
    f->runs = NULL;
    f->run_pos = NULL;
    f->nruns = 0;
}

/* The runs of one filetype in the file's representation: native runs
 * scaled by the element's file size (a type of one element kind), or one
 * run for a contiguous type. */
static int runs_in_rep(const io_datarep_t *rep, locus_dtype_t *ft, rma_run_t *runs, size_t n,
                       int64_t *ext)
{
    uint64_t fsz;
    int err = io_data_file_size(rep, ft, 1, &fsz);
    if (err != MPI_SUCCESS)
        return err;
    if (fsz == locus_dtype_size(ft))
        return MPI_SUCCESS; /* same sizes: nothing moves */
    locus_elem_t el = locus_dtype_elem(ft);
    size_t nat = el == LOCUS_EL_MIXED ? 0 : locus_elem_size(el);
    if (n == 1 && runs[0].off == 0 && (int64_t)runs[0].len == *ext) {
        runs[0].len = fsz;
        *ext = (int64_t)fsz;
        return MPI_SUCCESS;
    }
    if (nat == 0 || locus_elem_extent(el) != nat || *ext % (int64_t)nat) {
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail,
                 "datarep \"%s\" with a non-contiguous filetype of mixed or padded elements",
                 io_datarep_name(rep));
        return MPI_ERR_UNSUPPORTED_OPERATION;
    }
    uint64_t one = fsz / ((uint64_t)locus_dtype_size(ft) / nat);
    for (size_t i = 0; i < n; i++) {
        if (runs[i].off % (int64_t)nat || runs[i].len % nat)
            return MPI_ERR_UNSUPPORTED_OPERATION;
        runs[i].off = runs[i].off / (int64_t)nat * (int64_t)one;
        runs[i].len = runs[i].len / nat * one;
    }
    *ext = *ext / (int64_t)nat * (int64_t)one;
    return MPI_SUCCESS;
}

int io_view_set(locus_file_t *f, MPI_Offset disp, locus_dtype_t *etype, locus_dtype_t *ftype,
                const char *datarep)
{
    const io_datarep_t *rep = io_datarep_find(datarep);
    if (!rep) {
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail, "unknown datarep \"%s\"",
                 datarep ? datarep : "(null)");
        return MPI_ERR_UNSUPPORTED_DATAREP;
    }
    uint64_t esize;
    int err = io_data_file_size(rep, etype, 1, &esize);
    if (err != MPI_SUCCESS)
        return err;
    if (esize == 0 || locus_dtype_size(ftype) == 0 ||
        locus_dtype_size(ftype) % locus_dtype_size(etype)) {
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail,
                 "the filetype is not made of whole etypes (or has no data)");
        return MPI_ERR_TYPE;
    }
    rma_run_t *runs = NULL;
    size_t n = 0;
    if ((err = rma_runs_of(1, ftype, &runs, &n)) != MPI_SUCCESS)
        return err;
    ptrdiff_t lb, ext;
    locus_dtype_extent(ftype, &lb, &ext);
    int64_t tile_ext = ext;
    /* Non-negative, non-decreasing, and no tile reaching into the next. */
    for (size_t i = 0; i < n && err == MPI_SUCCESS; i++)
        if (runs[i].off < 0 || (i > 0 && runs[i].off < runs[i - 1].off + (int64_t)runs[i - 1].len))
            err = MPI_ERR_TYPE;
    if (err == MPI_SUCCESS && n > 0 && runs[n - 1].off + (int64_t)runs[n - 1].len > tile_ext)
        err = MPI_ERR_TYPE;
    if (err != MPI_SUCCESS)
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail,
                 "the filetype's displacements are negative or decrease (MPI requires them "
                 "non-negative and monotonically non-decreasing)");
    if (err == MPI_SUCCESS)
        err = runs_in_rep(rep, ftype, runs, n, &tile_ext);
    uint64_t *pos = err == MPI_SUCCESS ? malloc((n + 1) * sizeof *pos) : NULL;
    if (err == MPI_SUCCESS && !pos)
        err = MPI_ERR_NO_MEM;
    if (err != MPI_SUCCESS) {
        free(runs);
        return err;
    }
    pos[0] = 0;
    for (size_t i = 0; i < n; i++)
        pos[i + 1] = pos[i] + runs[i].len;
    locus_dtype_retain(etype);
    locus_dtype_retain(ftype);
    io_view_free(f);
    f->disp = disp;
    f->etype = etype;
    f->ftype = ftype;
    f->rep = rep;
    f->esize = (size_t)esize;
    f->runs = runs;
    f->nruns = n;
    f->run_pos = pos;
    f->tile_data = pos[n];
    f->tile_ext = tile_ext;
    f->dense = n == 1 && runs[0].off == 0 && (int64_t)runs[0].len == tile_ext;
    f->fp = 0;
    return MPI_SUCCESS;
}

/* Appends a piece, merging it with the last one when adjacent. */
static int piece_add(rma_run_t **v, size_t *n, size_t *cap, int64_t off, uint64_t len)
{
    if (*n > 0 && (*v)[*n - 1].off + (int64_t)(*v)[*n - 1].len == off) {
        (*v)[*n - 1].len += len;
        return MPI_SUCCESS;
    }
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 16;
        rma_run_t *nv = realloc(*v, c * sizeof *nv);
        if (!nv)
            return MPI_ERR_NO_MEM;
        *v = nv;
        *cap = c;
    }
    (*v)[(*n)++] = (rma_run_t){ off, len };
    return MPI_SUCCESS;
}

int io_view_map(const locus_file_t *f, uint64_t pos, uint64_t len, rma_run_t **pieces,
                size_t *npieces)
{
    rma_run_t *v = NULL;
    size_t n = 0, cap = 0;
    *pieces = NULL;
    *npieces = 0;
    if (len == 0)
        return MPI_SUCCESS;
    if (f->dense) {
        if (piece_add(&v, &n, &cap, f->disp + (int64_t)pos, len) != MPI_SUCCESS)
            return MPI_ERR_NO_MEM;
        *pieces = v;
        *npieces = n;
        return MPI_SUCCESS;
    }
    uint64_t tile = pos / f->tile_data, in = pos % f->tile_data;
    /* the run holding byte `in` of the tile: binary search */
    size_t lo = 0, hi = f->nruns;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (f->run_pos[mid] <= in)
            lo = mid;
        else
            hi = mid;
    }
    size_t k = lo;
    uint64_t skip = in - f->run_pos[k];
    while (len > 0) {
        uint64_t take = f->runs[k].len - skip;
        if (take > len)
            take = len;
        int64_t off = f->disp + (int64_t)tile * f->tile_ext + f->runs[k].off + (int64_t)skip;
        if (piece_add(&v, &n, &cap, off, take) != MPI_SUCCESS) {
            free(v);
            return MPI_ERR_NO_MEM;
        }
        len -= take;
        skip = 0;
        if (++k == f->nruns) {
            k = 0;
            tile++;
        }
    }
    *pieces = v;
    *npieces = n;
    return MPI_SUCCESS;
}

MPI_Offset io_view_etypes_before(const locus_file_t *f, MPI_Offset off)
{
    /* data bytes of the view that lie before file byte off */
    int64_t rel = off - f->disp;
    if (rel <= 0)
        return 0;
    uint64_t data;
    if (f->dense) {
        data = (uint64_t)rel;
    } else {
        int64_t tile = rel / f->tile_ext, in = rel % f->tile_ext;
        data = (uint64_t)tile * f->tile_data;
        for (size_t k = 0; k < f->nruns && f->runs[k].off < in; k++) {
            int64_t end = f->runs[k].off + (int64_t)f->runs[k].len;
            data += (uint64_t)((end < in ? end : in) - f->runs[k].off);
        }
    }
    return (MPI_Offset)((data + f->esize - 1) / f->esize);
}

/* ---- the calls ----------------------------------------------------------------- */

LOCUS_PMPI_WEAK(File_set_view)
int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                       const char *datarep, MPI_Info info)
{
    LOCUS_ENTRY_CS();
    static const char fn[] = "MPI_File_set_view";
    IO_FILE(f, fh, fn);
    locus_dtype_t *et = locus_dt_of(etype), *ft = locus_dt_of(filetype);
    int err = MPI_SUCCESS;
    const char *why = NULL;
    if (f->split)
        err = MPI_ERR_OTHER, why = "a split collective is active";
    else if (locus_check_dtype(etype) || locus_check_dtype(filetype))
        err = MPI_ERR_TYPE, why = "etype or filetype is not a committed datatype";
    else if (disp == MPI_DISPLACEMENT_CURRENT && !(f->amode & MPI_MODE_SEQUENTIAL))
        err = MPI_ERR_ARG, why = "MPI_DISPLACEMENT_CURRENT needs MPI_MODE_SEQUENTIAL";
    else if (disp < 0 && disp != MPI_DISPLACEMENT_CURRENT)
        err = MPI_ERR_ARG, why = "negative displacement";
    if (err == MPI_SUCCESS && disp == MPI_DISPLACEMENT_CURRENT) {
        /* the byte the shared pointer is at, in the current view */
        MPI_Offset sh;
        rma_run_t *p = NULL;
        size_t n = 0;
        err = io_shared_fetch_add(f, 0, &sh);
        if (err == MPI_SUCCESS)
            err = io_view_map(f, (uint64_t)sh * f->esize, 1, &p, &n);
        disp = err == MPI_SUCCESS ? p[0].off : 0;
        free(p);
    }
    if (err == MPI_SUCCESS)
        err = io_view_set(f, disp, et, ft, datarep);
    if (err != MPI_SUCCESS && !why)
        why = locus_mpi.detail[0] ? locus_mpi.detail : NULL;
    char text[sizeof locus_mpi.detail];
    snprintf(text, sizeof text, "%s", why ? why : "");
    /* Collective: the shared pointer goes back to 0 once everyone has the
     * view (MPI-4.1 14.3). */
    err = io_agree(f, err);
    if (err == MPI_SUCCESS) {
        /* collective whatever the info: some rank may have given one */
        io_hints_parse(&f->hints, info);
        err = io_agree(f, io_hints_agree(f));
    }
    if (err == MPI_SUCCESS && f->comm->coll.rank == 0)
        err = io_shared_set(f, 0);
    if (err == MPI_SUCCESS)
        err = io_agree(f, err);
    return io_err(f, err, fn, "%s", text[0] ? text : "setting the view failed on some rank");
}

LOCUS_PMPI_WEAK(File_get_view)
int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype,
                       MPI_Datatype *filetype, char *datarep)
{
    LOCUS_ENTRY_CS();
    IO_FILE(f, fh, "MPI_File_get_view");
    if (!disp || !etype || !filetype || !datarep)
        return io_err(f, MPI_ERR_ARG, "MPI_File_get_view", "an output argument is NULL");
    *disp = f->disp;
    /* Derived types come back as new handles the program frees
     * (MPI_Type_get_contents' rule): duplicates. */
    locus_dtype_t *t[2] = { f->etype, f->ftype };
    MPI_Datatype *out[2] = { etype, filetype };
    for (int i = 0; i < 2; i++) {
        MPI_Datatype h = locus_dt_handle(t[i]);
        if (locus_mdt_of(h) && locus_mdt_of(h)->predefined) {
            *out[i] = h;
        } else {
            int err = PMPI_Type_dup(h, out[i]);
            if (err == MPI_SUCCESS)
                err = PMPI_Type_commit(out[i]);
            if (err != MPI_SUCCESS)
                return io_err(f, err, "MPI_File_get_view", "duplicating a view type failed");
        }
    }
    snprintf(datarep, MPI_MAX_DATAREP_STRING, "%s", io_datarep_name(f->rep));
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(File_get_byte_offset)
int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    LOCUS_ENTRY_CS();
    IO_FILE(f, fh, "MPI_File_get_byte_offset");
    if (!disp || offset < 0)
        return io_err(f, MPI_ERR_ARG, "MPI_File_get_byte_offset", "negative offset or NULL");
    rma_run_t *p;
    size_t n;
    /* The byte where the etype at offset starts: map one byte there. */
    int err = io_view_map(f, (uint64_t)offset * f->esize, 1, &p, &n);
    if (err != MPI_SUCCESS)
        return io_err(f, err, "MPI_File_get_byte_offset", NULL);
    *disp = p[0].off;
    free(p);
    return MPI_SUCCESS;
}

static int type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent, const char *fn)
{
    IO_FILE(f, fh, fn);
    locus_dtype_t *dt = locus_dt_of(datatype);
    if (!dt)
        return io_err(f, MPI_ERR_TYPE, fn, "not a datatype");
    if (!extent)
        return io_err(f, MPI_ERR_ARG, fn, "extent is NULL");
    return io_err(f, io_type_file_extent(f->rep, dt, extent), fn, NULL);
}

LOCUS_PMPI_WEAK(File_get_type_extent)
int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent)
{
    LOCUS_ENTRY_CS();
    return type_extent(fh, datatype, extent, "MPI_File_get_type_extent");
}

LOCUS_PMPI_WEAK(File_get_type_extent_c)
int PMPI_File_get_type_extent_c(MPI_File fh, MPI_Datatype datatype, MPI_Count *extent)
{
    LOCUS_ENTRY_CS();
    MPI_Aint e = 0;
    int err = type_extent(fh, datatype, &e, "MPI_File_get_type_extent_c");
    if (err == MPI_SUCCESS && extent)
        *extent = e;
    return err;
}
