/*
 * coll_errors.c — argument errors of the collectives, op and datatype calls
 * come back as the right MPI error class (MPI_ERRORS_RETURN), and the
 * communicator still works afterwards.
 */
#include <mpi.h>
#include <stdio.h>

static int errs;

#define EXPECT(call, cls)                                                      \
    do {                                                                       \
        int rc_ = (call);                                                      \
        int c_ = rc_;                                                          \
        if (rc_ != MPI_SUCCESS)                                                \
            MPI_Error_class(rc_, &c_);                                         \
        if (c_ != (cls)) {                                                     \
            errs++;                                                            \
            fprintf(stderr, "line %d: %s gave class %d, want %d\n", __LINE__, #call, c_, \
                    (cls));                                                    \
        }                                                                      \
    } while (0)

static void noop_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)in; (void)inout; (void)len; (void)dt;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);   /* inherits MPI_ERRORS_RETURN */
    int a[4] = {1, 2, 3, 4}, b[4];
    unsigned char bytes[4] = {0}, bytes2[4];
    double d = 1, d2;

    /* roots */
    EXPECT(MPI_Bcast(a, 1, MPI_INT, p, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT(MPI_Bcast(a, 1, MPI_INT, -1, dup), MPI_ERR_ROOT);
    EXPECT(MPI_Reduce(a, b, 1, MPI_INT, MPI_SUM, p + 3, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT(MPI_Gather(a, 1, MPI_INT, b, 1, MPI_INT, -5, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT(MPI_Scatter(a, 1, MPI_INT, b, 1, MPI_INT, p, MPI_COMM_WORLD), MPI_ERR_ROOT);
    MPI_Request rq;
    EXPECT(MPI_Ibcast(a, 1, MPI_INT, p, MPI_COMM_WORLD, &rq), MPI_ERR_ROOT);

    /* operations */
    EXPECT(MPI_Allreduce(a, b, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT(MPI_Allreduce(bytes, bytes2, 4, MPI_BYTE, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT(MPI_Allreduce(a, b, 2, MPI_INT, MPI_MAXLOC, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT(MPI_Allreduce(&d, &d2, 1, MPI_DOUBLE, MPI_LAND, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT(MPI_Allreduce(&d, &d2, 1, MPI_DOUBLE, MPI_BXOR, dup), MPI_ERR_OP);
    EXPECT(MPI_Reduce(a, b, 1, MPI_INT, MPI_REPLACE, 0, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT(MPI_Scan(a, b, 1, MPI_INT, (MPI_Op)(uintptr_t)0x7e, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT(MPI_Iallreduce(a, b, 1, MPI_FLOAT, MPI_BOR, MPI_COMM_WORLD, &rq), MPI_ERR_OP);
    /* (A freed handle is not checked: using one is erroneous, and the
     * object is gone.) */
    MPI_Op uop, sum = MPI_SUM;
    MPI_Op_create(noop_fn, 1, &uop);
    EXPECT(MPI_Op_free(&uop), MPI_SUCCESS);
    EXPECT(uop == MPI_OP_NULL ? MPI_SUCCESS : MPI_ERR_OP, MPI_SUCCESS);
    EXPECT(MPI_Op_free(&sum), MPI_ERR_OP);
    EXPECT(MPI_Op_free(&uop), MPI_ERR_OP);

    /* communicators */
    EXPECT(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT(MPI_Allreduce(a, b, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT(MPI_Ibarrier(MPI_COMM_NULL, &rq), MPI_ERR_COMM);

    /* counts, types, buffers */
    EXPECT(MPI_Bcast(a, -1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Allreduce(a, b, -2, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Bcast(a, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    MPI_Datatype vec, pred = MPI_INT;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    EXPECT(MPI_Bcast(a, 1, vec, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);   /* not committed */
    EXPECT(MPI_Type_free(&pred), MPI_ERR_TYPE);
    EXPECT(MPI_Type_contiguous(-1, MPI_INT, &vec), MPI_ERR_COUNT);
    EXPECT(MPI_Type_vector(1, 1, 1, MPI_DATATYPE_NULL, &vec), MPI_ERR_TYPE);
    MPI_Type_free(&vec);
    EXPECT(MPI_Allreduce(a, a, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT(MPI_Bcast(NULL, 3, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    char pk[8];
    int pos = 0;
    EXPECT(MPI_Pack(a, 4, MPI_INT, pk, sizeof(pk), &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);

    /* A call without data returns before the collective layer, but only
     * once its arguments are checked. */
    EXPECT(MPI_Reduce(&d, &d2, 0, MPI_DOUBLE, MPI_LAND, 0, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT(MPI_Allreduce(a, b, 0, MPI_INT, MPI_OP_NULL, dup), MPI_ERR_OP);
    EXPECT(MPI_Reduce(a, b, 0, MPI_INT, MPI_SUM, p, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT(MPI_Bcast(a, 0, MPI_INT, -1, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT(MPI_Reduce_scatter_block(a, b, 0, MPI_DATATYPE_NULL, MPI_SUM, MPI_COMM_WORLD),
           MPI_ERR_TYPE);
    int zeros[64] = {0};
    EXPECT(MPI_Reduce_scatter(a, b, zeros, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT(MPI_Gather(a, 0, MPI_INT, b, 0, MPI_INT, p, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT(MPI_Scatter(a, 0, MPI_INT, b, 0, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT(MPI_Allgather(a, 0, MPI_INT, b, 0, MPI_INT, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT(MPI_Alltoall(a, 0, MPI_INT, b, -1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
    /* (the blocking calls without data take a short way: same checks) */
    EXPECT(MPI_Alltoall(a, 0, MPI_INT, b, 0, MPI_DATATYPE_NULL, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT(MPI_Alltoall(a, 0, MPI_DATATYPE_NULL, b, 0, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, 0, MPI_INT, MPI_COMM_WORLD),
           MPI_SUCCESS);   /* in place: the send arguments are ignored */
    EXPECT(MPI_Alltoall(a, 0, MPI_INT, b, 0, MPI_INT, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT(MPI_Allreduce(a, b, 0, MPI_INT, MPI_SUM, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT(MPI_Allreduce(a, b, 0, MPI_DATATYPE_NULL, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT(MPI_Allreduce(a, b, -2, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Reduce(MPI_IN_PLACE, b, 0, MPI_INT, MPI_SUM, (r + 1) % p, MPI_COMM_WORLD),
           p > 1 ? MPI_ERR_BUFFER : MPI_SUCCESS);   /* in place is the root's only */
    EXPECT(MPI_Allgather(a, 0, MPI_DATATYPE_NULL, b, 0, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT(MPI_Allgather(a, 0, MPI_INT, b, -1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Gather(a, 0, MPI_INT, b, 0, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD),
           r == 0 ? MPI_ERR_TYPE : MPI_SUCCESS);   /* the receive side is the root's */
    EXPECT(MPI_Gather(MPI_IN_PLACE, 0, MPI_INT, b, 0, MPI_INT, (r + 1) % p, MPI_COMM_WORLD),
           p > 1 ? MPI_ERR_BUFFER : MPI_SUCCESS);
    EXPECT(MPI_Scatter(a, 0, MPI_INT, MPI_IN_PLACE, 0, MPI_INT, (r + 1) % p, MPI_COMM_WORLD),
           p > 1 ? MPI_ERR_BUFFER : MPI_SUCCESS);
    EXPECT(MPI_Scatter(a, 0, MPI_DATATYPE_NULL, b, 0, MPI_INT, 0, MPI_COMM_WORLD),
           r == 0 ? MPI_ERR_TYPE : MPI_SUCCESS);   /* the send side is the root's */
    EXPECT(MPI_Scatter(a, 0, MPI_INT, b, 0, MPI_INT, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    zeros[p - 1] = 1;   /* one rank's block has data: only MPI_OP_NULL is wrong */
    EXPECT(MPI_Reduce_scatter(a, b, zeros, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
    zeros[p - 1] = -1;
    EXPECT(MPI_Reduce_scatter(a, b, zeros, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    zeros[p - 1] = 0;
    EXPECT(MPI_Reduce_scatter(a, b, zeros, MPI_INT, MPI_SUM, MPI_COMM_NULL), MPI_ERR_COMM);
    /* and a correct one succeeds */
    EXPECT(MPI_Reduce(a, b, 0, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD), MPI_SUCCESS);
    EXPECT(MPI_Reduce_scatter(a, b, zeros, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    EXPECT(MPI_Alltoall(a, 0, MPI_INT, b, 0, MPI_INT, dup), MPI_SUCCESS);

    /* Everything still works after the errors. */
    int one = 1, sumv = 0;
    EXPECT(MPI_Allreduce(&one, &sumv, 1, MPI_INT, MPI_SUM, dup), MPI_SUCCESS);
    if (sumv != p) {
        errs++;
        fprintf(stderr, "allreduce after errors gave %d, want %d\n", sumv, p);
    }
    EXPECT(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
    MPI_Comm_free(&dup);
    int total = 0;
    MPI_Allreduce(&errs, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (r == 0)
        printf(total ? " Found %d errors\n" : " No Errors\n", total);
    MPI_Finalize();
    return total != 0;
}
