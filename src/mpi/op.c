/*
 * op.c — MPI_Op_create/MPI_Op_free and the one function every reduction
 * goes through, locus_op_reduce(), which dispatches to the predefined loops
 * of the reduction engine or to the user's function.
 */
#include <stdlib.h>
#include <string.h>

#include "coll_mpi.h"

/* MPI_Op is an int handle, so user operations live in a process-wide table
 * indexed by op - LOCUS_OP_USER_FIRST: the handle design leaves no object to
 * hang them on. */
typedef struct {
    MPI_User_function *fn;
    int commute;
} user_op_t;

static struct {
    user_op_t *ops;
    int n, cap;
} user_ops;

static user_op_t *user_op_get(MPI_Op op)
{
    int i = op - LOCUS_OP_USER_FIRST;
    if (i < 0 || i >= user_ops.n || !user_ops.ops[i].fn)
        return NULL;
    return &user_ops.ops[i];
}

LOCUS_PMPI_WEAK(Op_create)
int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    LOCUS_CHECK_INIT("MPI_Op_create");
    if (!user_fn || !op)
        return locus_mpi_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Op_create");
    int i;
    for (i = 0; i < user_ops.n; i++)
        if (!user_ops.ops[i].fn)
            break;
    if (i == user_ops.n) {
        if (user_ops.n == user_ops.cap) {
            int cap = user_ops.cap ? 2 * user_ops.cap : 8;
            user_op_t *n = realloc(user_ops.ops, (size_t)cap * sizeof(*n));
            if (!n)
                return locus_mpi_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Op_create");
            user_ops.ops = n;
            user_ops.cap = cap;
        }
        user_ops.n++;
    }
    user_ops.ops[i].fn = user_fn;
    user_ops.ops[i].commute = commute != 0;
    *op = LOCUS_OP_USER_FIRST + i;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Op_free)
int PMPI_Op_free(MPI_Op *op)
{
    LOCUS_CHECK_INIT("MPI_Op_free");
    if (!op || !user_op_get(*op))
        return locus_mpi_err(MPI_COMM_NULL, MPI_ERR_OP, "MPI_Op_free");
    user_ops.ops[*op - LOCUS_OP_USER_FIRST].fn = NULL;
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

int locus_op_check(MPI_Op op, MPI_Datatype dt)
{
    if (op >= LOCUS_OP_USER_FIRST)
        return user_op_get(op) ? MPI_SUCCESS : MPI_ERR_OP;
    /* REPLACE and NO_OP belong to one-sided accumulates, not collectives. */
    if (op <= MPI_OP_NULL || op > MPI_MAXLOC)
        return MPI_ERR_OP;
    return locus_op_valid(op, locus_dtype_elem(dt)) ? MPI_SUCCESS : MPI_ERR_OP;
}

int locus_op_commutes(MPI_Op op)
{
    user_op_t *u = user_op_get(op);
    return u ? u->commute : 1;
}

int locus_op_reduce(MPI_Op op, MPI_Datatype dt, int count, const void *in, void *inout)
{
    if (count <= 0)
        return MPI_SUCCESS;
    user_op_t *u = user_op_get(op);
    if (u) {
        int len = count;
        MPI_Datatype t = dt;
        u->fn((void *)in, inout, &len, &t);
        return MPI_SUCCESS;
    }
    locus_elem_t el = locus_dtype_elem(dt);
    size_t esize = locus_elem_size(el);
    if (!esize)
        return MPI_ERR_OP;
    size_t n = (size_t)count * locus_dtype_size(dt) / esize;
    locus_dtype_t *kind = locus_dtype_basic(el);
    if (dt == kind || (locus_dtype_is_contig(dt) && locus_dtype_is_contig(kind))) {
        /* The user's buffer already is a C array of the kind. */
        ptrdiff_t tlb, text;
        locus_dtype_true_extent(dt, &tlb, &text);
        if (dt == kind)
            tlb = 0;
        return locus_op_apply(op, el, (const char *)in + tlb, (char *)inout + tlb, n) == 0
                   ? MPI_SUCCESS : MPI_ERR_OP;
    }
    /* A derived layout: gather both sides into C arrays of the kind, reduce,
     * scatter the result back. */
    size_t ext = locus_elem_extent(el), bytes = (size_t)count * locus_dtype_size(dt);
    char *stream = malloc(bytes), *a = malloc(n * ext), *b = malloc(n * ext);
    int rc = MPI_ERR_NO_MEM;
    if (stream && a && b) {
        locus_dtype_pack(in, (size_t)count, dt, 0, stream, bytes);
        locus_dtype_unpack(a, n, kind, 0, stream, bytes);
        locus_dtype_pack(inout, (size_t)count, dt, 0, stream, bytes);
        locus_dtype_unpack(b, n, kind, 0, stream, bytes);
        rc = locus_op_apply(op, el, a, b, n) == 0 ? MPI_SUCCESS : MPI_ERR_OP;
        locus_dtype_pack(b, n, kind, 0, stream, bytes);
        locus_dtype_unpack(inout, (size_t)count, dt, 0, stream, bytes);
    }
    free(stream);
    free(a);
    free(b);
    return rc;
}
