/*
 * type.c — the MPI datatype calls: thin wrappers that check arguments and
 * hand the layout work to the datatype engine (src/dtype). A user's
 * datatype is an MPI object owning one engine type; it lives as long as
 * that type (pending operations hold references on it), so MPI_Type_free
 * invalidates the handle and drops the user's reference only.
 */
#include <limits.h>
#include <stdlib.h>

#include "mpi_impl.h"

/* Errors of calls that have no communicator go to MPI_COMM_WORLD's handler. */
#define TYPE_ERR(cls, fn) locus_mpi_err(NULL, (cls), (fn))

static ptrdiff_t type_extent(locus_dtype_t *dt)
{
    ptrdiff_t lb, ext;
    locus_dtype_extent(dt, &lb, &ext);
    return ext;
}

/* The engine type went: its MPI object goes with it. */
static void mdt_gone(void *owner)
{
    free(owner);
}

/* Wraps a new engine type (rc: the engine constructor's result) in an MPI
 * object and hands its handle to *out. */
static int type_new(int rc, locus_dtype_t *dt, MPI_Datatype *out, const char *fn)
{
    if (rc != LOCUS_DTYPE_OK)
        return TYPE_ERR(rc == LOCUS_DTYPE_ENOMEM ? MPI_ERR_NO_MEM : MPI_ERR_ARG, fn);
    locus_mdt_t *m = calloc(1, sizeof *m);
    if (!m) {
        locus_dtype_release(dt);
        return TYPE_ERR(MPI_ERR_NO_MEM, fn);
    }
    m->magic = LOCUS_DT_MAGIC;
    m->dt = dt;
    m->handle = (MPI_Datatype)m;
    locus_dtype_set_owner(dt, m, mdt_gone);
    *out = m->handle;
    return MPI_SUCCESS;
}

/* The engine type of a constructor's old type, committed or not. */
static locus_dtype_t *old_of(MPI_Datatype h)
{
    locus_mdt_t *m = locus_mdt_of(h);
    return m && m->magic == LOCUS_DT_MAGIC ? m->dt : NULL;
}

LOCUS_PMPI_WEAK(Type_contiguous)
int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_contiguous";
    LOCUS_CHECK_INIT(fn);
    locus_dtype_t *old = old_of(oldtype), *nt = NULL;
    if (count < 0)
        return TYPE_ERR(MPI_ERR_COUNT, fn);
    if (!old)
        return TYPE_ERR(MPI_ERR_TYPE, fn);
    if (!newtype)
        return TYPE_ERR(MPI_ERR_ARG, fn);
    int rc = locus_dtype_contiguous(count, old, &nt);
    return type_new(rc, nt, newtype, fn);
}

LOCUS_PMPI_WEAK(Type_vector)
int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_vector";
    LOCUS_CHECK_INIT(fn);
    locus_dtype_t *old = old_of(oldtype), *nt = NULL;
    if (count < 0 || blocklength < 0)
        return TYPE_ERR(MPI_ERR_COUNT, fn);
    if (!old)
        return TYPE_ERR(MPI_ERR_TYPE, fn);
    if (!newtype)
        return TYPE_ERR(MPI_ERR_ARG, fn);
    int rc = locus_dtype_hvector(count, blocklength,
                                        (ptrdiff_t)stride * type_extent(old), old, &nt);
    return type_new(rc, nt, newtype, fn);
}

LOCUS_PMPI_WEAK(Type_create_hvector)
int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride,
                             MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_hvector";
    LOCUS_CHECK_INIT(fn);
    locus_dtype_t *old = old_of(oldtype), *nt = NULL;
    if (count < 0 || blocklength < 0)
        return TYPE_ERR(MPI_ERR_COUNT, fn);
    if (!old)
        return TYPE_ERR(MPI_ERR_TYPE, fn);
    if (!newtype)
        return TYPE_ERR(MPI_ERR_ARG, fn);
    int rc = locus_dtype_hvector(count, blocklength, stride, old, &nt);
    return type_new(rc, nt, newtype, fn);
}

/* Indexed flavours: displacements in elements (scale = extent) or bytes. */
static int type_indexed(int count, const int *bls, int bl, const int *idispls,
                        const MPI_Aint *adispls, MPI_Datatype oldtype, MPI_Datatype *newtype,
                        const char *fn)
{
    locus_dtype_t *old = old_of(oldtype), *nt = NULL;
    if (count < 0 || (bls == NULL && bl < 0))
        return TYPE_ERR(MPI_ERR_COUNT, fn);
    if (!old)
        return TYPE_ERR(MPI_ERR_TYPE, fn);
    if (!newtype || (count > 0 && ((!bls && bl < 0) || (!idispls && !adispls))))
        return TYPE_ERR(MPI_ERR_ARG, fn);
    int *b = malloc(sizeof(int) * (size_t)(count + 1));
    ptrdiff_t *d = malloc(sizeof(ptrdiff_t) * (size_t)(count + 1));
    if (!b || !d) {
        free(b);
        free(d);
        return TYPE_ERR(MPI_ERR_NO_MEM, fn);
    }
    ptrdiff_t ext = type_extent(old);
    for (int i = 0; i < count; i++) {
        b[i] = bls ? bls[i] : bl;
        d[i] = idispls ? (ptrdiff_t)idispls[i] * ext : adispls[i];
        if (b[i] < 0) {
            free(b);
            free(d);
            return TYPE_ERR(MPI_ERR_COUNT, fn);
        }
    }
    int rc = locus_dtype_hindexed(count, b, d, old, &nt);
    free(b);
    free(d);
    return type_new(rc, nt, newtype, fn);
}

LOCUS_PMPI_WEAK(Type_indexed)
int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                      const int array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    LOCUS_CHECK_INIT("MPI_Type_indexed");
    if (count > 0 && !array_of_blocklengths)
        return TYPE_ERR(MPI_ERR_ARG, "MPI_Type_indexed");
    return type_indexed(count, array_of_blocklengths, 0, array_of_displacements, NULL, oldtype,
                        newtype, "MPI_Type_indexed");
}

LOCUS_PMPI_WEAK(Type_create_hindexed)
int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                              const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    LOCUS_CHECK_INIT("MPI_Type_create_hindexed");
    if (count > 0 && !array_of_blocklengths)
        return TYPE_ERR(MPI_ERR_ARG, "MPI_Type_create_hindexed");
    return type_indexed(count, array_of_blocklengths, 0, NULL, array_of_displacements, oldtype,
                        newtype, "MPI_Type_create_hindexed");
}

LOCUS_PMPI_WEAK(Type_create_indexed_block)
int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    LOCUS_CHECK_INIT("MPI_Type_create_indexed_block");
    return type_indexed(count, NULL, blocklength, array_of_displacements, NULL, oldtype, newtype,
                        "MPI_Type_create_indexed_block");
}

LOCUS_PMPI_WEAK(Type_create_struct)
int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                            const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_struct";
    LOCUS_CHECK_INIT(fn);
    if (count < 0)
        return TYPE_ERR(MPI_ERR_COUNT, fn);
    if (!newtype || (count > 0 && (!array_of_blocklengths || !array_of_displacements ||
                                   !array_of_types)))
        return TYPE_ERR(MPI_ERR_ARG, fn);
    ptrdiff_t *d = malloc(sizeof(ptrdiff_t) * (size_t)(count + 1));
    locus_dtype_t **t = malloc(sizeof(*t) * (size_t)(count + 1)), *nt = NULL;
    if (!d || !t) {
        free(d);
        free(t);
        return TYPE_ERR(MPI_ERR_NO_MEM, fn);
    }
    for (int i = 0; i < count; i++) {
        d[i] = array_of_displacements[i];
        t[i] = old_of(array_of_types[i]);
        if (array_of_blocklengths[i] < 0 || !t[i]) {
            free(d);
            free(t);
            return TYPE_ERR(t[i] ? MPI_ERR_COUNT : MPI_ERR_TYPE, fn);
        }
    }
    int rc = locus_dtype_struct(count, array_of_blocklengths, d, t, &nt);
    free(d);
    free(t);
    return type_new(rc, nt, newtype, fn);
}

LOCUS_PMPI_WEAK(Type_create_resized)
int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                             MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_resized";
    LOCUS_CHECK_INIT(fn);
    locus_dtype_t *old = old_of(oldtype), *nt = NULL;
    if (!old)
        return TYPE_ERR(MPI_ERR_TYPE, fn);
    if (!newtype)
        return TYPE_ERR(MPI_ERR_ARG, fn);
    int rc = locus_dtype_resized(old, lb, extent, &nt);
    return type_new(rc, nt, newtype, fn);
}

LOCUS_PMPI_WEAK(Type_dup)
int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_dup";
    LOCUS_CHECK_INIT(fn);
    locus_dtype_t *old = old_of(oldtype), *nt = NULL;
    if (!old)
        return TYPE_ERR(MPI_ERR_TYPE, fn);
    if (!newtype)
        return TYPE_ERR(MPI_ERR_ARG, fn);
    int rc = locus_dtype_dup(old, &nt);
    return type_new(rc, nt, newtype, fn);
}

LOCUS_PMPI_WEAK(Type_commit)
int PMPI_Type_commit(MPI_Datatype *datatype)
{
    LOCUS_CHECK_INIT("MPI_Type_commit");
    locus_dtype_t *dt = datatype ? old_of(*datatype) : NULL;
    if (!dt)
        return TYPE_ERR(MPI_ERR_TYPE, "MPI_Type_commit");
    locus_dtype_commit(dt);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Type_free)
int PMPI_Type_free(MPI_Datatype *datatype)
{
    LOCUS_CHECK_INIT("MPI_Type_free");
    locus_mdt_t *m = datatype ? locus_mdt_of(*datatype) : NULL;
    /* Predefined types cannot be freed. */
    if (!m || m->magic != LOCUS_DT_MAGIC || m->predefined)
        return TYPE_ERR(MPI_ERR_TYPE, "MPI_Type_free");
    /* Operations still using the type hold their own references (pending
     * receives, nonblocking collectives); the object goes after the last. */
    m->magic = 0;
    *datatype = MPI_DATATYPE_NULL;
    locus_dtype_release(m->dt);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Type_size)
int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    LOCUS_CHECK_INIT("MPI_Type_size");
    locus_dtype_t *dt = old_of(datatype);
    if (!dt)
        return TYPE_ERR(MPI_ERR_TYPE, "MPI_Type_size");
    if (!size)
        return TYPE_ERR(MPI_ERR_ARG, "MPI_Type_size");
    size_t s = locus_dtype_size(dt);
    *size = s > INT_MAX ? MPI_UNDEFINED : (int)s;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Type_get_extent)
int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    LOCUS_CHECK_INIT("MPI_Type_get_extent");
    locus_dtype_t *dt = old_of(datatype);
    if (!dt)
        return TYPE_ERR(MPI_ERR_TYPE, "MPI_Type_get_extent");
    if (!lb || !extent)
        return TYPE_ERR(MPI_ERR_ARG, "MPI_Type_get_extent");
    ptrdiff_t l, e;
    locus_dtype_extent(dt, &l, &e);
    *lb = l;
    *extent = e;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Type_get_true_extent)
int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
    LOCUS_CHECK_INIT("MPI_Type_get_true_extent");
    locus_dtype_t *dt = old_of(datatype);
    if (!dt)
        return TYPE_ERR(MPI_ERR_TYPE, "MPI_Type_get_true_extent");
    if (!true_lb || !true_extent)
        return TYPE_ERR(MPI_ERR_ARG, "MPI_Type_get_true_extent");
    ptrdiff_t l, e;
    locus_dtype_true_extent(dt, &l, &e);
    *true_lb = l;
    *true_extent = e;
    return MPI_SUCCESS;
}

/* Checks shared by MPI_Pack and MPI_Unpack: the packed buffer and position. */
static int pack_check(locus_comm_t *c, int count, MPI_Datatype datatype, const void *user_buf,
                      const void *packed, int packed_size, const int *position)
{
    int rc = locus_check_comm(c);
    if (rc == MPI_SUCCESS)
        rc = locus_check_count(count);
    if (rc == MPI_SUCCESS)
        rc = locus_check_dtype(datatype);
    if (rc == MPI_SUCCESS && (!position || *position < 0 || packed_size < 0 ||
                              (packed_size > 0 && !packed)))
        rc = MPI_ERR_ARG;
    if (rc == MPI_SUCCESS)
        rc = locus_check_buf(user_buf, count, datatype);
    return rc;
}

LOCUS_PMPI_WEAK(Pack)
int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
              int *position, MPI_Comm comm)
{
    static const char fn[] = "MPI_Pack";
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *c = locus_comm_of(comm);
    int rc = pack_check(c, incount, datatype, inbuf, outbuf, outsize, position);
    if (rc != MPI_SUCCESS)
        return locus_mpi_err(c, rc, fn);
    locus_dtype_t *dt = locus_dt_of(datatype);
    size_t need = (size_t)incount * locus_dtype_size(dt);
    if ((size_t)*position + need > (size_t)outsize)
        return locus_mpi_err(c, MPI_ERR_TRUNCATE, fn);
    *position += (int)locus_dtype_pack(inbuf, (size_t)incount, dt, 0, (char *)outbuf + *position,
                                       need);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Unpack)
int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                MPI_Datatype datatype, MPI_Comm comm)
{
    static const char fn[] = "MPI_Unpack";
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *c = locus_comm_of(comm);
    int rc = pack_check(c, outcount, datatype, outbuf, inbuf, insize, position);
    if (rc != MPI_SUCCESS)
        return locus_mpi_err(c, rc, fn);
    locus_dtype_t *dt = locus_dt_of(datatype);
    size_t need = (size_t)outcount * locus_dtype_size(dt);
    if ((size_t)*position + need > (size_t)insize)
        return locus_mpi_err(c, MPI_ERR_TRUNCATE, fn);
    *position += (int)locus_dtype_unpack(outbuf, (size_t)outcount, dt, 0,
                                         (const char *)inbuf + *position, need);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Pack_size)
int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    static const char fn[] = "MPI_Pack_size";
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *c = locus_comm_of(comm);
    int rc = locus_check_comm(c);
    if (rc == MPI_SUCCESS)
        rc = locus_check_count(incount);
    if (rc == MPI_SUCCESS)
        rc = locus_check_dtype(datatype);
    if (rc == MPI_SUCCESS && !size)
        rc = MPI_ERR_ARG;
    if (rc != MPI_SUCCESS)
        return locus_mpi_err(c, rc, fn);
    size_t s = (size_t)incount * locus_dtype_size(locus_dt_of(datatype));
    *size = s > INT_MAX ? MPI_UNDEFINED : (int)s;
    return MPI_SUCCESS;
}
