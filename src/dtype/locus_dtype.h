/*
 * locus_dtype.h — the datatype engine: how typed, possibly non-contiguous
 * data is laid out in memory, how it is packed to and unpacked from a
 * contiguous byte stream, and its portable ("external32") encoding.
 *
 * It knows nothing of MPI handles or communicators; the MPI layer wraps it
 * (an MPI datatype object owns one locus_dtype_t). A type is a list of
 * (displacement, basic element) entries repeated with an extent, stored as
 * contiguous byte blocks repeated by a few nested loops (so pack/unpack are
 * memcpy loops, and a type's memory does not grow with its counts).
 *
 * All constructors return 0 and a new type (reference count 1), or a
 * negative LOCUS_DTYPE_E* code. Counts are size_t, displacements and
 * strides ptrdiff_t bytes throughout (MPI's large-count interface maps
 * straight onto them; the int interface converts).
 */
#ifndef LOCUS_DTYPE_H
#define LOCUS_DTYPE_H

#include <stddef.h>
#include <stdint.h>

enum {
    LOCUS_DTYPE_OK = 0,
    LOCUS_DTYPE_EARG = -1,    /* NULL type, bad dimensions, ... */
    LOCUS_DTYPE_ENOMEM = -2,
    LOCUS_DTYPE_ERANGE = -3,  /* a size, extent or displacement overflows */
    LOCUS_DTYPE_ECONV = -4    /* a value does not fit its external32 size */
};

/*
 * The C types behind the element kinds the C language only has as compiler
 * extensions. Where the compiler lacks one, the kind still exists with the
 * right size and alignment (it can be sent, received, packed and encoded)
 * but has no arithmetic: LOCUS_HAVE_* says which are arithmetic.
 */
#if defined(__FLT16_MAX__)
#define LOCUS_HAVE_FLOAT16 1
typedef _Float16 locus_float16_t;
typedef _Complex _Float16 locus_cfloat16_t;
#else
typedef struct { _Alignas(2) unsigned char b[2]; } locus_float16_t;
typedef struct { _Alignas(2) unsigned char b[4]; } locus_cfloat16_t;
#endif
#if defined(__FLT128_MAX__)
#define LOCUS_HAVE_FLOAT128 1
typedef _Float128 locus_float128_t;
typedef _Complex _Float128 locus_cfloat128_t;
#else
typedef struct { _Alignas(16) unsigned char b[16]; } locus_float128_t;
typedef struct { _Alignas(16) unsigned char b[32]; } locus_cfloat128_t;
#endif
#if defined(__SIZEOF_INT128__)
#define LOCUS_HAVE_INT128 1
typedef __int128 locus_int128_t;
#else
typedef struct { _Alignas(16) unsigned char b[16]; } locus_int128_t;
#endif

/* The basic element kinds, for reductions and for type signatures. */
typedef enum {
    LOCUS_EL_BYTE = 0,  /* MPI_BYTE, MPI_PACKED: no arithmetic */
    /* integers (C and Fortran) */
    LOCUS_EL_CHAR, LOCUS_EL_SCHAR, LOCUS_EL_UCHAR,
    LOCUS_EL_SHORT, LOCUS_EL_USHORT, LOCUS_EL_INT, LOCUS_EL_UINT,
    LOCUS_EL_LONG, LOCUS_EL_ULONG, LOCUS_EL_LLONG, LOCUS_EL_ULLONG,
    LOCUS_EL_INT8, LOCUS_EL_UINT8, LOCUS_EL_INT16, LOCUS_EL_UINT16,
    LOCUS_EL_INT32, LOCUS_EL_UINT32, LOCUS_EL_INT64, LOCUS_EL_UINT64,
    LOCUS_EL_INT128,                        /* MPI_INTEGER16 */
    /* the multi-language integers */
    LOCUS_EL_AINT, LOCUS_EL_OFFSET, LOCUS_EL_COUNT,
    LOCUS_EL_WCHAR,                         /* text: no arithmetic */
    /* floating point */
    LOCUS_EL_FLOAT, LOCUS_EL_DOUBLE, LOCUS_EL_LDOUBLE,
    LOCUS_EL_FLOAT16, LOCUS_EL_FLOAT128,    /* MPI_REAL2, MPI_REAL16 */
    /* complex */
    LOCUS_EL_CFLOAT, LOCUS_EL_CDOUBLE, LOCUS_EL_CLDOUBLE,
    LOCUS_EL_CFLOAT16, LOCUS_EL_CFLOAT128,  /* MPI_COMPLEX4, MPI_COMPLEX32 */
    /* logical: C bool, and Fortran LOGICAL of 1..16 bytes (false is 0) */
    LOCUS_EL_BOOL,
    LOCUS_EL_FLOGICAL1, LOCUS_EL_FLOGICAL2, LOCUS_EL_FLOGICAL4,
    LOCUS_EL_FLOGICAL8, LOCUS_EL_FLOGICAL16,
    /* value-index pair types for MINLOC/MAXLOC: C struct {value; index;} */
    LOCUS_EL_FLOAT_INT, LOCUS_EL_DOUBLE_INT, LOCUS_EL_LONG_INT,
    LOCUS_EL_2INT, LOCUS_EL_SHORT_INT, LOCUS_EL_LDOUBLE_INT,
    LOCUS_EL_2FLOAT, LOCUS_EL_2DOUBLE,      /* MPI_2REAL, MPI_2DOUBLE_PRECISION */
    LOCUS_EL_NKINDS,
    LOCUS_EL_MIXED = -1      /* a derived type mixing kinds */
} locus_elem_t;

/* Element kind classes (what reductions and encodings care about). */
int locus_elem_is_integer(locus_elem_t el);  /* C/Fortran integers, CHAR included */
int locus_elem_is_ml(locus_elem_t el);       /* MPI_AINT, MPI_OFFSET, MPI_COUNT */
int locus_elem_is_float(locus_elem_t el);
int locus_elem_is_complex(locus_elem_t el);
int locus_elem_is_logical(locus_elem_t el);  /* C bool and Fortran LOGICAL */
int locus_elem_is_pair(locus_elem_t el);     /* the value-index pair kinds */

typedef struct locus_dtype locus_dtype_t;

/* The predefined type of one element kind (never freed; refcount ignored),
 * NULL when el is not a kind. */
locus_dtype_t *locus_dtype_basic(locus_elem_t el);
/* Data bytes in / memory extent of one element of a kind (0 when el is not
 * a kind); they differ only for padded pair types such as MPI_SHORT_INT. */
size_t locus_elem_size(locus_elem_t el);
size_t locus_elem_extent(locus_elem_t el);
/* The value and index kinds of a pair kind and the byte offset of the
 * index in the pair; 0 when el is not a pair. */
int locus_elem_pair(locus_elem_t el, locus_elem_t *value, locus_elem_t *index, size_t *ioff);
int locus_dtype_contiguous(size_t count, locus_dtype_t *old, locus_dtype_t **out);
/* stride in bytes (MPI_Type_create_hvector); MPI_Type_vector passes stride*extent. */
int locus_dtype_hvector(size_t count, size_t blocklen, ptrdiff_t stride, locus_dtype_t *old,
                        locus_dtype_t **out);
/* Blocks of blocklens[i] elements at byte displacements displs[i]. */
int locus_dtype_hindexed(size_t count, const size_t *blocklens, const ptrdiff_t *displs,
                         locus_dtype_t *old, locus_dtype_t **out);
int locus_dtype_struct(size_t count, const size_t *blocklens, const ptrdiff_t *displs,
                       locus_dtype_t *const *types, locus_dtype_t **out);
int locus_dtype_resized(locus_dtype_t *old, ptrdiff_t lb, ptrdiff_t extent,
                        locus_dtype_t **out);
/* A new type with the same layout and bounds as old (MPI_Type_dup); the
 * copy is committed when old is. */
int locus_dtype_dup(locus_dtype_t *old, locus_dtype_t **out);

/*
 * MPI_Type_create_subarray: the subarray subsizes[] at starts[] of an
 * ndims-dimensional array sizes[] of old, in C (row-major) or Fortran
 * order; lb 0 and the extent of the whole array. EARG when ndims < 1, a
 * size is 0 or a subarray does not fit.
 */
int locus_dtype_subarray(int ndims, const size_t *sizes, const size_t *subsizes,
                         const size_t *starts, int fortran_order, locus_dtype_t *old,
                         locus_dtype_t **out);

/* Distributions of one dimension of a distributed array. */
enum { LOCUS_DIST_NONE = 0, LOCUS_DIST_BLOCK, LOCUS_DIST_CYCLIC };
#define LOCUS_DARG_DEFAULT (-1)
/*
 * MPI_Type_create_darray: the part of the global array gsizes[] of old
 * that process `rank` of `size` owns on the process grid psizes[] (ranks
 * in row-major order), each dimension distributed by distribs[] with
 * argument dargs[] (LOCUS_DARG_DEFAULT: ceil(gsize/psize) for BLOCK, 1
 * for CYCLIC); lb 0 and the extent of the whole array. EARG on arguments
 * MPI forbids (grid size != size, a NONE dimension over more than one
 * process, a BLOCK too small for its dimension, ...).
 */
int locus_dtype_darray(int size, int rank, int ndims, const size_t *gsizes, const int *distribs,
                       const int *dargs, const int *psizes, int fortran_order,
                       locus_dtype_t *old, locus_dtype_t **out);

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
 * -1 when bytes is not a whole number of them. A complex number is one
 * element, a pair type two. */
long locus_dtype_count_elements(const locus_dtype_t *dt, size_t bytes);
/* The reverse: bytes of packed data holding the first `nelem` basic
 * elements of a stream of dt (MPI_Status_set_elements); -1 when dt has no
 * data and nelem > 0. */
long long locus_dtype_elements_bytes(const locus_dtype_t *dt, size_t nelem);

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

/*
 * External32 (MPI's portable representation): big-endian, IEEE binary
 * floats, fixed sizes per kind (MPI_LONG and MPI_UNSIGNED_LONG 4 bytes,
 * MPI_WCHAR 2, MPI_LONG_DOUBLE a 16-byte binary128, MPI_C_BOOL 1, ...).
 */
/* Bytes of one element of a kind / of the type in external32. */
size_t locus_elem_external_size(locus_elem_t el);
size_t locus_dtype_external_size(const locus_dtype_t *dt);
/* Encodes count elements at buf into out (count * external size bytes).
 * Returns 0, or LOCUS_DTYPE_ECONV when a value does not fit (a long
 * beyond 32 bits, a wchar beyond 16) or LOCUS_DTYPE_ENOMEM. */
int locus_dtype_pack_external(const void *buf, size_t count, const locus_dtype_t *dt,
                              void *out);
/* Decodes count elements from in (count * external size bytes) into buf.
 * Returns 0 or LOCUS_DTYPE_ENOMEM. */
int locus_dtype_unpack_external(const void *in, void *buf, size_t count,
                                const locus_dtype_t *dt);

#endif
