/*
 * dtype_impl.h — the inside of a locus_dtype_t, shared by the files of
 * src/dtype only. Users go through locus_dtype.h.
 *
 * One element of a type is a unit made of `nblocks` contiguous byte blocks
 * (type-map order, adjacent blocks merged), repeated by up to
 * LOCUS_DTYPE_MAXLOOPS nested loops: loop l makes loops[l].count copies,
 * loops[l].stride bytes apart, of everything inside it (the innermost,
 * loops[nloops-1], varies fastest). Vectors, contiguous runs, resized and
 * duplicated types and one-block indexed/struct types of any type nest as
 * loops instead of copying their input's blocks once per repetition, so a
 * type's memory does not grow with its counts (a vector of INT_MAX/2
 * elements, resized, is a few hundred bytes, not 24 GB). Only a struct or
 * indexed type of several blocks of non-contiguous types is flattened.
 */
#ifndef LOCUS_DTYPE_IMPL_H
#define LOCUS_DTYPE_IMPL_H

#include "locus_dtype.h"

typedef struct {
    ptrdiff_t off;   /* from the element's origin (buf + e*extent) */
    size_t len;
} locus_dblock_t;

/* One level of repetition. */
typedef struct {
    size_t count;    /* >= 2: loops of one copy are dropped */
    ptrdiff_t stride;
} locus_dloop_t;

/* Deeper nestings unroll their innermost loops into the unit. */
#define LOCUS_DTYPE_MAXLOOPS 12

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
    size_t nrep;              /* copies of the unit: the product of the counts */
    int nloops;
    locus_dloop_t loops[LOCUS_DTYPE_MAXLOOPS];   /* outermost first */
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
