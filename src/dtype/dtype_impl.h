/*
 * dtype_impl.h — the inside of a locus_dtype_t, shared by the files of
 * src/dtype only. Users go through locus_dtype.h.
 *
 * One element of a type is `nrep` repetitions, `rstride` bytes apart, of a
 * unit made of `nblocks` contiguous byte blocks (type-map order, adjacent
 * blocks merged). The repetition level keeps vectors and contiguous runs of
 * non-contiguous types O(1) in memory instead of O(count).
 */
#ifndef LOCUS_DTYPE_IMPL_H
#define LOCUS_DTYPE_IMPL_H

#include "locus_dtype.h"

typedef struct {
    ptrdiff_t off;   /* from the element's origin (buf + e*extent) */
    size_t len;
} locus_dblock_t;

/* A run of `count` basic elements of one kind in the type signature (pair
 * kinds appear as their value and index kinds). */
typedef struct {
    locus_elem_t kind;
    size_t count;
} locus_dsig_t;

struct locus_dtype {
    int refs;
    unsigned char basic;      /* predefined: static, never freed */
    unsigned char committed;
    unsigned char resized;    /* bounds set explicitly somewhere inside */
    locus_elem_t elem;
    size_t size;              /* data bytes per element */
    size_t align;             /* largest basic alignment inside */
    ptrdiff_t lb, extent;
    ptrdiff_t true_lb, true_extent;
    size_t nrep;
    ptrdiff_t rstride;
    size_t nblocks;
    locus_dblock_t *blocks;
    size_t *prefix;           /* nblocks+1 packed offsets within the unit */
    size_t unit_size;         /* data bytes in one unit */
    size_t nsig;
    locus_dsig_t *sig;        /* signature of one unit */
    size_t unit_nbasic;       /* basic elements in one unit */
    void *owner;              /* the layer above's object naming this type */
    void (*owner_gone)(void *owner);
};

#endif
