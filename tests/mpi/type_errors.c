/*
 * type_errors.c — the error classes of the datatype calls (as MPICH
 * reports them), returned under MPI_ERRORS_RETURN, and delivered to a user
 * error handler on MPI_COMM_WORLD (the handler of calls without a
 * communicator); nothing is created by a failing constructor, and the
 * library keeps working afterwards.
 */
#include <string.h>

#include "mtest.h"

/* The error class of a return code (an MPI may return codes, not classes). */
static int ecls(int rc)
{
    int c = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

static int handler_calls, handler_class;

static void handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    handler_calls++;
    MPI_Error_class(*code, &handler_class);
}

#define EXPECT(call, cls) CHECK(ecls(call) == (cls), "%s: want %s", #call, #cls)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype t = MPI_DATATYPE_NULL;

    /* Constructors. */
    EXPECT(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
    EXPECT(MPI_Type_contiguous(1, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
    EXPECT(MPI_Type_contiguous(1, MPI_INT, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Type_vector(2, -1, 1, MPI_INT, &t), MPI_ERR_COUNT);
    EXPECT(MPI_Type_vector_c(-2, 1, 1, MPI_INT, &t), MPI_ERR_COUNT);
    EXPECT(MPI_Type_indexed(2, NULL, (int[]){0, 1}, MPI_INT, &t), MPI_ERR_ARG);
    EXPECT(MPI_Type_indexed(2, (int[]){1, -1}, (int[]){0, 1}, MPI_INT, &t), MPI_ERR_COUNT);
    EXPECT(MPI_Type_create_hindexed_block(2, 1, NULL, MPI_INT, &t), MPI_ERR_ARG);
    EXPECT(MPI_Type_create_indexed_block_c(1, -1, (MPI_Count[]){0}, MPI_INT, &t), MPI_ERR_COUNT);
    EXPECT(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 8},
                                  (MPI_Datatype[]){MPI_INT, MPI_DATATYPE_NULL}, &t), MPI_ERR_TYPE);
    EXPECT(MPI_Type_create_struct_c(1, (MPI_Count[]){-3}, (MPI_Count[]){0},
                                    (MPI_Datatype[]){MPI_INT}, &t), MPI_ERR_COUNT);
    EXPECT(MPI_Type_create_resized(MPI_DATATYPE_NULL, 0, 4, &t), MPI_ERR_TYPE);
    /* Subarray and darray. */
    EXPECT(MPI_Type_create_subarray(0, (int[]){4}, (int[]){2}, (int[]){0}, MPI_ORDER_C, MPI_INT,
                                    &t), MPI_ERR_DIMS);
    EXPECT(MPI_Type_create_subarray(1, (int[]){4}, (int[]){5}, (int[]){0}, MPI_ORDER_C, MPI_INT,
                                    &t), MPI_ERR_ARG);
    EXPECT(MPI_Type_create_subarray(1, (int[]){4}, (int[]){2}, (int[]){3}, MPI_ORDER_C, MPI_INT,
                                    &t), MPI_ERR_ARG);
    EXPECT(MPI_Type_create_subarray(1, (int[]){4}, (int[]){2}, (int[]){0}, 7, MPI_INT, &t),
           MPI_ERR_ARG);
    EXPECT(MPI_Type_create_subarray_c(1, (MPI_Count[]){0}, (MPI_Count[]){0}, (MPI_Count[]){0},
                                      MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
    const int B = MPI_DISTRIBUTE_BLOCK, D = MPI_DISTRIBUTE_DFLT_DARG;
    EXPECT(MPI_Type_create_darray(4, 4, 1, (int[]){8}, (int[]){B}, (int[]){D}, (int[]){4},
                                  MPI_ORDER_C, MPI_INT, &t), MPI_ERR_RANK);
    EXPECT(MPI_Type_create_darray(4, 0, 1, (int[]){8}, (int[]){B}, (int[]){D}, (int[]){3},
                                  MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
    EXPECT(MPI_Type_create_darray(2, 0, 1, (int[]){8}, (int[]){MPI_DISTRIBUTE_NONE}, (int[]){D},
                                  (int[]){2}, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
    EXPECT(MPI_Type_create_darray(2, 0, 1, (int[]){8}, (int[]){99}, (int[]){D}, (int[]){2},
                                  MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
    EXPECT(MPI_Type_create_darray(2, 0, 1, (int[]){8}, (int[]){B}, (int[]){0}, (int[]){2},
                                  MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
    EXPECT(MPI_Type_create_darray(2, 0, 1, (int[]){8}, (int[]){B}, (int[]){3}, (int[]){2},
                                  MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);   /* 3*2 < 8 */
    EXPECT(MPI_Type_create_darray(2, 0, 0, (int[]){8}, (int[]){B}, (int[]){D}, (int[]){2},
                                  MPI_ORDER_C, MPI_INT, &t), MPI_ERR_DIMS);
    EXPECT(MPI_Type_create_darray(0, 0, 1, (int[]){8}, (int[]){B}, (int[]){D}, (int[]){1},
                                  MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
    CHECK(t == MPI_DATATYPE_NULL, "a failed constructor left a handle");

    /* Queries, decoding, freeing. */
    int i, ni, na, nd, comb;
    MPI_Aint a;
    EXPECT(MPI_Type_size(MPI_DATATYPE_NULL, &i), MPI_ERR_TYPE);
    EXPECT(MPI_Type_size(MPI_INT, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Type_get_extent(MPI_DATATYPE_NULL, &a, &a), MPI_ERR_TYPE);
    EXPECT(MPI_Type_dup(MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
    EXPECT(MPI_Type_get_true_extent_c(MPI_INT, NULL, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Type_get_envelope(MPI_DATATYPE_NULL, &ni, &na, &nd, &comb), MPI_ERR_TYPE);
    EXPECT(MPI_Type_free((MPI_Datatype[]){MPI_INT}), MPI_ERR_TYPE);
    EXPECT(MPI_Type_free(NULL), MPI_ERR_TYPE);
    EXPECT(MPI_Type_commit((MPI_Datatype[]){MPI_DATATYPE_NULL}), MPI_ERR_TYPE);
    EXPECT(MPI_Get_address(&i, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Type_set_name(MPI_INT, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Type_get_value_index(MPI_DATATYPE_NULL, MPI_INT, &t), MPI_ERR_TYPE);

    /* Packing. */
    char buf[64];
    int pos = 0;
    MPI_Type_contiguous(4, MPI_INT, &t);   /* not committed */
    EXPECT(MPI_Pack(buf, 1, t, buf, 64, &pos, MPI_COMM_WORLD), MPI_ERR_TYPE);
    MPI_Type_commit(&t);
    EXPECT(MPI_Pack(buf, 1, t, buf + 32, 15, &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    EXPECT(MPI_Pack(buf, 1, t, buf + 32, 16, &pos, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT(MPI_Pack(buf, -1, t, buf + 32, 16, &pos, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Pack(buf, 1, t, buf + 32, 16, NULL, MPI_COMM_WORLD), MPI_ERR_ARG);
    EXPECT(MPI_Pack(NULL, 1, t, buf + 32, 16, &pos, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    pos = 4;
    EXPECT(MPI_Unpack(buf, 16, &pos, buf + 32, 1, t, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    CHECK(pos == 4, "position moved by a failed unpack");
    EXPECT(MPI_Pack_size(1, t, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    MPI_Count pc;
    EXPECT(MPI_Pack_size_c(-1, t, MPI_COMM_WORLD, &pc), MPI_ERR_COUNT);
    MPI_Type_free(&t);

    /* Errors reach a user handler on MPI_COMM_WORLD. */
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(handler, &eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    MPI_Type_vector(1, 1, 1, MPI_DATATYPE_NULL, &t);
    CHECK(handler_calls == 1 && handler_class == MPI_ERR_TYPE, "handler: %d calls, class %d",
          handler_calls, handler_class);
    MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &t);
    CHECK(handler_calls == 2 && handler_class == MPI_ERR_ARG, "handler: %d calls, class %d",
          handler_calls, handler_class);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&eh);

    /* Still working. */
    MPI_Type_contiguous(4, MPI_INT, &t);
    MPI_Type_commit(&t);
    int v[4] = {1, 2, 3, 4}, w[4] = {0};
    pos = 0;
    CHECK(MPI_Pack(v, 1, t, buf, 64, &pos, MPI_COMM_WORLD) == MPI_SUCCESS && pos == 16, "pack");
    pos = 0;
    MPI_Unpack(buf, 64, &pos, w, 1, t, MPI_COMM_WORLD);
    CHECK(memcmp(v, w, sizeof v) == 0, "unpack");
    MPI_Type_free(&t);
    return mtest_finish();
}
