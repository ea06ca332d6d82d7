/*
 * locus_dtype.h — the datatype engine: how typed, possibly non-contiguous
 * data is laid out in memory, and how it is packed to and unpacked from a
 * contiguous byte stream.
 *
 * It knows nothing of MPI handles or communicators; the MPI layer wraps it
 * (MPI_Datatype is a pointer to a locus_dtype_t). A type is a list of
 * (displacement, basic element) entries repeated with an extent, stored
 * flattened as contiguous byte blocks so pack/unpack are memcpy loops.
 *
 * All constructors return 0 and a new type (reference count 1), or a
 * negative LOCUS_DTYPE_E* code. Byte displacements throughout.
 */
#ifndef LOCUS_DTYPE_H
#define LOCUS_DTYPE_H

#include <stddef.h>
#include <stdint.h>

enum {
    LOCUS_DTYPE_OK = 0,
    LOCUS_DTYPE_EARG = -1,   /* negative count, NULL type, ... */
    LOCUS_DTYPE_ENOMEM = -2
};

/* The basic element kinds, for reductions and for type signatures. */
typedef enum {
    LOCUS_EL_BYTE = 0,  /* MPI_BYTE, MPI_PACKED: no arithmetic */
    LOCUS_EL_CHAR, LOCUS_EL_SCHAR, LOCUS_EL_UCHAR, LOCUS_EL_WCHAR,
    LOCUS_EL_SHORT, LOCUS_EL_USHORT, LOCUS_EL_INT, LOCUS_EL_UINT,
    LOCUS_EL_LONG, LOCUS_EL_ULONG, LOCUS_EL_LLONG, LOCUS_EL_ULLONG,
    LOCUS_EL_INT8, LOCUS_EL_UINT8, LOCUS_EL_INT16, LOCUS_EL_UINT16,
    LOCUS_EL_INT32, LOCUS_EL_UINT32, LOCUS_EL_INT64, LOCUS_EL_UINT64,
    LOCUS_EL_FLOAT, LOCUS_EL_DOUBLE, LOCUS_EL_LDOUBLE, LOCUS_EL_BOOL,
    LOCUS_EL_AINT, LOCUS_EL_OFFSET, LOCUS_EL_COUNT,
    /* pair types for MINLOC/MAXLOC */
    LOCUS_EL_FLOAT_INT, LOCUS_EL_DOUBLE_INT, LOCUS_EL_LONG_INT,
    LOCUS_EL_2INT, LOCUS_EL_SHORT_INT, LOCUS_EL_LDOUBLE_INT,
    LOCUS_EL_NKINDS,
    LOCUS_EL_MIXED = -1      /* a derived type mixing kinds */
} locus_elem_t;

typedef struct locus_dtype locus_dtype_t;

/* The predefined type of one element kind (never freed; refcount ignored). */
locus_dtype_t *locus_dtype_basic(locus_elem_t el);
/* Data bytes in / memory extent of one element of a kind (0 when el is not
 * a kind); they differ only for padded pair types such as MPI_SHORT_INT. */
size_t locus_elem_size(locus_elem_t el);
size_t locus_elem_extent(locus_elem_t el);

int locus_dtype_contiguous(int count, locus_dtype_t *old, locus_dtype_t **out);
/* stride in bytes (MPI_Type_create_hvector); MPI_Type_vector passes stride*extent. */
int locus_dtype_hvector(int count, int blocklen, ptrdiff_t stride, locus_dtype_t *old,
                        locus_dtype_t **out);
int locus_dtype_hindexed(int count, const int *blocklens, const ptrdiff_t *displs,
                         locus_dtype_t *old, locus_dtype_t **out);
int locus_dtype_struct(int count, const int *blocklens, const ptrdiff_t *displs,
                       locus_dtype_t *const *types, locus_dtype_t **out);
int locus_dtype_resized(locus_dtype_t *old, ptrdiff_t lb, ptrdiff_t extent,
                        locus_dtype_t **out);
/* A new type with the same layout and bounds as old (MPI_Type_dup); the
 * copy is committed when old is. */
int locus_dtype_dup(locus_dtype_t *old, locus_dtype_t **out);

void locus_dtype_commit(locus_dtype_t *dt);
int locus_dtype_is_committed(const locus_dtype_t *dt);
int locus_dtype_is_basic(const locus_dtype_t *dt);
/* Adds a reference / drops one (frees at zero; basic types ignore both). */
void locus_dtype_retain(locus_dtype_t *dt);
void locus_dtype_release(locus_dtype_t *dt);
/* The object of the layer above that names this type (the MPI layer's
 * datatype), and a function called when the type is freed so that object
 * goes with it (NULL: none). A type has at most one owner. */
void locus_dtype_set_owner(locus_dtype_t *dt, void *owner, void (*gone)(void *owner));
void *locus_dtype_owner(const locus_dtype_t *dt);

/* Bytes of data in one element of the type (MPI_Type_size). */
size_t locus_dtype_size(const locus_dtype_t *dt);
/* Lower bound and extent (MPI_Type_get_extent), and the true ones. */
void locus_dtype_extent(const locus_dtype_t *dt, ptrdiff_t *lb, ptrdiff_t *extent);
void locus_dtype_true_extent(const locus_dtype_t *dt, ptrdiff_t *lb, ptrdiff_t *extent);
/* 1 when `count` elements occupy size*count contiguous bytes from buf+true_lb
 * (so the data can be sent straight from memory). */
int locus_dtype_is_contig(const locus_dtype_t *dt);
/* The one element kind the type is made of, or LOCUS_EL_MIXED. */
locus_elem_t locus_dtype_elem(const locus_dtype_t *dt);
/* Number of basic elements in `bytes` of packed data (MPI_Get_elements), or
 * -1 when bytes is not a whole number of them. */
long locus_dtype_count_elements(const locus_dtype_t *dt, size_t bytes);

/*
 * Packs `count` elements at buf into out, starting `offset` bytes into the
 * packed stream and writing at most maxlen bytes. Returns bytes written.
 * Packing in pieces (offset advancing) gives the same stream as one call,
 * so large messages can be pipelined.
 */
size_t locus_dtype_pack(const void *buf, size_t count, const locus_dtype_t *dt,
                        size_t offset, void *out, size_t maxlen);
/* The reverse: takes len packed bytes that start `offset` bytes into the
 * stream and scatters them into buf. Returns bytes consumed. */
size_t locus_dtype_unpack(void *buf, size_t count, const locus_dtype_t *dt,
                          size_t offset, const void *in, size_t len);

#endif
