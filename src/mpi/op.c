/*
 * op.c — MPI_Op handles: the predefined operations and the user's
 * (MPI_Op_create/MPI_Op_free), as the reduction layer's operation objects.
 */
#include <limits.h>
#include <stdlib.h>

#include "mpi_impl.h"

/* MPI_Op is an int handle: user operations live in a process-wide table
 * indexed by op - LOCUS_OP_USER (the slot drops its reference at
 * MPI_Op_free; a pending operation keeps its own). */
static struct {
    locus_op_t **ops;
    int n, cap;
} user_ops;

locus_op_t *locus_op_get(MPI_Op op)
{
    if (op >= LOCUS_OP_USER) {
        int i = op - LOCUS_OP_USER;
        return i < user_ops.n ? user_ops.ops[i] : NULL;
    }
    return op > MPI_OP_NULL ? locus_op_predefined(op) : NULL;
}

/* Calls the user's C function on count elements, in pieces of at most
 * INT_MAX (its length argument is an int). */
static int user_apply(const locus_op_t *op, const void *in, void *inout, size_t count,
                      locus_dtype_t *dt)
{
    MPI_User_function *fn = (MPI_User_function *)op->user_fn;
    ptrdiff_t lb, ext;
    locus_dtype_extent(dt, &lb, &ext);
    MPI_Datatype handle = dt;
    for (size_t done = 0; done < count;) {
        int len = count - done > INT_MAX ? INT_MAX : (int)(count - done);
        fn((char *)in + (ptrdiff_t)done * ext, (char *)inout + (ptrdiff_t)done * ext, &len,
           &handle);
        done += (size_t)len;
    }
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Op_create)
int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    LOCUS_CHECK_INIT("MPI_Op_create");
    if (!user_fn || !op)
        return locus_mpi_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Op_create");
    int i;
    for (i = 0; i < user_ops.n; i++)
        if (!user_ops.ops[i])
            break;
    if (i == user_ops.n) {
        if (user_ops.n == user_ops.cap) {
            int cap = user_ops.cap ? 2 * user_ops.cap : 8;
            locus_op_t **n = realloc(user_ops.ops, (size_t)cap * sizeof(*n));
            if (!n)
                return locus_mpi_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Op_create");
            user_ops.ops = n;
            user_ops.cap = cap;
        }
        user_ops.ops[user_ops.n++] = NULL;
    }
    locus_op_t *o = locus_op_user_new(commute, user_apply, (void *)user_fn, 0);
    if (!o)
        return locus_mpi_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Op_create");
    user_ops.ops[i] = o;
    *op = LOCUS_OP_USER + i;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Op_free)
int PMPI_Op_free(MPI_Op *op)
{
    LOCUS_CHECK_INIT("MPI_Op_free");
    if (!op || *op < LOCUS_OP_USER || !locus_op_get(*op))
        return locus_mpi_err(MPI_COMM_NULL, MPI_ERR_OP, "MPI_Op_free");
    int i = *op - LOCUS_OP_USER;
    locus_op_release(user_ops.ops[i]);
    user_ops.ops[i] = NULL;
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}
