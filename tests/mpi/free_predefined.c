/*
 * Freeing a null or predefined handle is an error (MPI_ERRORS_RETURN on
 * MPI_COMM_WORLD), never a silent success, and leaves the handle alone.
 */
#include "mtest.h"

#define EXPECT(call, cls)                                                          \
    do {                                                                           \
        int rc_ = (call), c_ = -1;                                                 \
        MPI_Error_class(rc_, &c_);                                                 \
        CHECK(c_ == (cls), "%s returned class %d, expected %s", #call, c_, #cls);  \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    EXPECT(MPI_Errhandler_free(&eh), MPI_ERR_ARG);
    EXPECT(MPI_Errhandler_free(NULL), MPI_ERR_ARG);
    /* A predefined handler handed out by MPI_Comm_get_errhandler is a
     * reference the program frees: that works and nulls the handle, and
     * the handler itself stays in force. */
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    EXPECT(MPI_Errhandler_free(&eh), MPI_SUCCESS);
    CHECK(eh == MPI_ERRHANDLER_NULL, "freed handle not nulled");
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    CHECK(eh == MPI_ERRORS_RETURN, "WORLD's handler changed");
    MPI_Comm c = MPI_COMM_WORLD;
    EXPECT(MPI_Comm_free(&c), MPI_ERR_COMM);
    c = MPI_COMM_SELF;
    EXPECT(MPI_Comm_free(&c), MPI_ERR_COMM);
    c = MPI_COMM_NULL;
    EXPECT(MPI_Comm_free(&c), MPI_ERR_COMM);
    MPI_Group g = MPI_GROUP_NULL;
    EXPECT(MPI_Group_free(&g), MPI_ERR_GROUP);
    MPI_Datatype t = MPI_INT;
    EXPECT(MPI_Type_free(&t), MPI_ERR_TYPE);
    CHECK(t == MPI_INT, "predefined type handle changed");
    t = MPI_DATATYPE_NULL;
    EXPECT(MPI_Type_free(&t), MPI_ERR_TYPE);
    MPI_Op op = MPI_SUM;
    EXPECT(MPI_Op_free(&op), MPI_ERR_OP);
    CHECK(op == MPI_SUM, "predefined op handle changed");
    op = MPI_OP_NULL;
    EXPECT(MPI_Op_free(&op), MPI_ERR_OP);
    MPI_Request rq = MPI_REQUEST_NULL;
    EXPECT(MPI_Request_free(&rq), MPI_ERR_REQUEST);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return mtest_finish();
}
