/*
 * op_reduce.c — operation objects and reductions of typed buffers: the
 * predefined kernels straight on the user's memory when it already is an
 * array of the element kind, through packed copies when the layout is
 * derived, and user operations through the function their creator gave.
 */
#include <stdlib.h>

#include "locus_op.h"

#define PREDEF(id) { (id), 1, 1, NULL, NULL, 0 }
static locus_op_t predefined[LOCUS_OP_NPREDEF] = {
    PREDEF(0), PREDEF(1), PREDEF(2), PREDEF(3), PREDEF(4), PREDEF(5), PREDEF(6), PREDEF(7),
    PREDEF(8), PREDEF(9), PREDEF(10), PREDEF(11), PREDEF(12), PREDEF(13), PREDEF(14),
};

locus_op_t *locus_op_predefined(int id)
{
    return id >= 0 && id < LOCUS_OP_NPREDEF ? &predefined[id] : NULL;
}

locus_op_t *locus_op_user_new(int commute, locus_op_user_apply_t apply, void *fn, int kind)
{
    locus_op_t *op = calloc(1, sizeof *op);
    if (!op)
        return NULL;
    op->id = LOCUS_OP_USER;
    op->commute = commute != 0;
    op->refs = 1;
    op->user_apply = apply;
    op->user_fn = fn;
    op->user_kind = kind;
    return op;
}

void locus_op_retain(locus_op_t *op)
{
    if (op && op->id == LOCUS_OP_USER)
        op->refs++;
}

void locus_op_release(locus_op_t *op)
{
    if (op && op->id == LOCUS_OP_USER && --op->refs == 0)
        free(op);
}

int locus_op_check(const locus_op_t *op, const locus_dtype_t *dt)
{
    if (!op)
        return LOCUS_ERR_OP;
    if (op->id == LOCUS_OP_USER)
        return LOCUS_SUCCESS;
    if (op->id <= LOCUS_OP_NULL || op->id > LOCUS_OP_MAXLOC)
        return LOCUS_ERR_OP;
    return locus_op_valid(op->id, locus_dtype_elem(dt)) ? LOCUS_SUCCESS : LOCUS_ERR_OP;
}

int locus_op_reduce(const locus_op_t *op, locus_dtype_t *dt, size_t count, const void *in,
                    void *inout)
{
    if (count == 0 || op->id == LOCUS_OP_NO_OP)
        return LOCUS_SUCCESS;
    if (op->id == LOCUS_OP_USER)
        return op->user_apply(op, in, inout, count, dt);
    locus_elem_t el = locus_dtype_elem(dt);
    size_t esize = locus_elem_size(el);
    if (!esize)
        return LOCUS_ERR_OP;
    size_t bytes = count * locus_dtype_size(dt), n = bytes / esize;
    locus_dtype_t *kind = locus_dtype_basic(el);
    if (dt == kind || (locus_dtype_is_contig(dt) && locus_dtype_is_contig(kind))) {
        /* The user's buffer already is a C array of the kind. */
        ptrdiff_t tlb = 0, text;
        if (dt != kind)
            locus_dtype_true_extent(dt, &tlb, &text);
        return locus_op_apply(op->id, el, (const char *)in + tlb, (char *)inout + tlb, n) == 0
                   ? LOCUS_SUCCESS : LOCUS_ERR_OP;
    }
    /* A derived layout: gather both sides into C arrays of the kind, reduce,
     * scatter the result back. */
    size_t ext = locus_elem_extent(el);
    char *stream = malloc(bytes), *a = malloc(n * ext), *b = malloc(n * ext);
    int rc = LOCUS_ERR_NO_MEM;
    if (stream && a && b) {
        locus_dtype_pack(in, count, dt, 0, stream, bytes);
        locus_dtype_unpack(a, n, kind, 0, stream, bytes);
        locus_dtype_pack(inout, count, dt, 0, stream, bytes);
        locus_dtype_unpack(b, n, kind, 0, stream, bytes);
        rc = locus_op_apply(op->id, el, a, b, n) == 0 ? LOCUS_SUCCESS : LOCUS_ERR_OP;
        locus_dtype_pack(b, n, kind, 0, stream, bytes);
        locus_dtype_unpack(inout, count, dt, 0, stream, bytes);
    }
    free(stream);
    free(a);
    free(b);
    return rc;
}
