/*
 * op.c — MPI_Op handles: the predefined operations (small integers of the
 * ABI) and the user's (MPI_Op_create/MPI_Op_free), as the reduction
 * layer's operation objects.
 */
#include <limits.h>
#include <stdlib.h>

#include "datatype.h"

/* ABI handle value - 0x20 -> the reduction layer's operation id. */
static const signed char op_ids[0x1e] = {
    [0x00] = LOCUS_OP_NULL, [0x01] = LOCUS_OP_SUM, [0x02] = LOCUS_OP_MIN,
    [0x03] = LOCUS_OP_MAX, [0x04] = LOCUS_OP_PROD, [0x05] = -1, [0x06] = -1, [0x07] = -1,
    [0x08] = LOCUS_OP_BAND, [0x09] = LOCUS_OP_BOR, [0x0a] = LOCUS_OP_BXOR,
    [0x0b] = -1, [0x0c] = -1, [0x0d] = -1, [0x0e] = -1, [0x0f] = -1,
    [0x10] = LOCUS_OP_LAND, [0x11] = LOCUS_OP_LOR, [0x12] = LOCUS_OP_LXOR,
    [0x13] = -1, [0x14] = -1, [0x15] = -1, [0x16] = -1, [0x17] = -1,
    [0x18] = LOCUS_OP_MINLOC, [0x19] = LOCUS_OP_MAXLOC, [0x1a] = -1, [0x1b] = -1,
    [0x1c] = LOCUS_OP_REPLACE, [0x1d] = LOCUS_OP_NO_OP,
};

locus_op_t *locus_op_of(MPI_Op h)
{
    uintptr_t v = (uintptr_t)h;
    if (v < LOCUS_PREDEF_LIMIT) {
        if (v <= 0x20 || v >= 0x20 + sizeof op_ids || op_ids[v - 0x20] <= 0)
            return NULL;
        return locus_op_predefined(op_ids[v - 0x20]);
    }
    locus_op_t *op = (locus_op_t *)h;
    return locus_handle_is(op, LOCUS_HK_OP) && op->id == LOCUS_OP_USER && op->refs > 0 ? op : NULL;
}

uint32_t locus_op_predef_mask(const locus_dtype_t *dt)
{
    uint32_t mask = 0;
    for (unsigned bit = 1; bit < sizeof op_ids; bit++)
        if (op_ids[bit] > 0 &&
            locus_op_check(locus_op_predefined(op_ids[bit]), dt) == LOCUS_SUCCESS)
            mask |= 1u << bit;
    return mask;
}

/* The two C flavours of user function (MPI_Op_create, MPI_Op_create_c). */
enum { USER_FN_INT = 0, USER_FN_C = 1 };

/* Calls the user's C function on count elements, in pieces of at most
 * INT_MAX (its length argument is an int), with the datatype's handle. */
static int user_apply(const locus_op_t *op, const void *in, void *inout, size_t count,
                      locus_dtype_t *dt)
{
    ptrdiff_t lb, ext;
    locus_dtype_extent(dt, &lb, &ext);
    MPI_Datatype handle = locus_dt_handle(dt);
    if (op->user_kind == USER_FN_C) { /* MPI_Op_create_c: an MPI_Count length */
        MPI_Count len = (MPI_Count)count;
        ((MPI_User_function_c *)op->user_fn)((void *)in, inout, &len, &handle);
        return MPI_SUCCESS;
    }
    MPI_User_function *fn = (MPI_User_function *)op->user_fn;
    for (size_t done = 0; done < count;) {
        int len = count - done > INT_MAX ? INT_MAX : (int)(count - done);
        fn((char *)in + (ptrdiff_t)done * ext, (char *)inout + (ptrdiff_t)done * ext, &len,
           &handle);
        done += (size_t)len;
    }
    return MPI_SUCCESS;
}

static int op_create(void (*fn)(void), int kind, int commute, MPI_Op *op, const char *name)
{
    LOCUS_CHECK_INIT(name);
    if (!fn || !op)
        return locus_mpi_err(NULL, MPI_ERR_ARG, name);
    locus_op_t *o = locus_op_user_new(commute, user_apply, (void *)fn, kind);
    if (o && locus_handle_enter(o, LOCUS_HK_OP) < 0) {
        locus_op_release(o);
        o = NULL;
    }
    if (!o)
        return locus_mpi_err(NULL, MPI_ERR_NO_MEM, name);
    *op = (MPI_Op)o;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Op_create)
int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    LOCUS_ENTRY_CS();
    return op_create((void (*)(void))user_fn, USER_FN_INT, commute, op, "MPI_Op_create");
}

LOCUS_PMPI_WEAK(Op_create_c)
int PMPI_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
    LOCUS_ENTRY_CS();
    return op_create((void (*)(void))user_fn, USER_FN_C, commute, op, "MPI_Op_create_c");
}

LOCUS_PMPI_WEAK(Op_free)
int PMPI_Op_free(MPI_Op *op)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Op_free");
    /* Predefined operations cannot be freed. */
    if (!op || LOCUS_IS_PREDEF(*op) || !locus_op_of(*op))
        return locus_mpi_err(NULL, MPI_ERR_OP, "MPI_Op_free");
    /* The handle goes now; the op itself after the operations using it. */
    locus_op_t *o = locus_op_of(*op);
    locus_handle_leave(o);
    locus_op_release(o);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

/* Its entry point is generated with the checks (a live operation,
 * somewhere to write). */
int locus_op_commutative_impl(locus_op_t *o, int *commute)
{
    *commute = o->commute;
    return MPI_SUCCESS;
}
