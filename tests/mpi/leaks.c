/*
 * Nothing leaks (checked by LeakSanitizer in the sanitizer build): the
 * error path of MPI_Ibsend, and large sends to self that were never
 * received when MPI_Finalize runs.
 */
#include <stdlib.h>

#include "mtest.h"

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* Ibsend without enough buffer: MPI_ERR_BUFFER, nothing kept. */
    static char bbuf[1024];
    MPI_Buffer_attach(bbuf, sizeof bbuf);
    int big[4096] = { 0 };
    MPI_Request rq = MPI_REQUEST_NULL;
    int rc = MPI_Ibsend(big, 4096, MPI_INT, rank, 1, MPI_COMM_WORLD, &rq);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_BUFFER, "Ibsend too big: class %d", cls);
    /* A small one fits and is received. */
    rc = MPI_Ibsend(big, 4, MPI_INT, rank, 2, MPI_COMM_WORLD, &rq);
    CHECK(rc == MPI_SUCCESS, "small Ibsend: %d", rc);
    int got[4];
    MPI_Recv(got, 4, MPI_INT, rank, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    void *b;
    int bs;
    MPI_Buffer_detach(&b, &bs);
    /* Large sends to self never received: freed requests, then Finalize. */
    enum { N = 1 << 18 };
    int *data = malloc(N * sizeof(int));
    for (int k = 0; k < 3; k++) {
        MPI_Isend(data, N, MPI_INT, rank, 100 + k, MPI_COMM_WORLD, &rq);
        MPI_Request_free(&rq);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    int errs = mtest_errs;
    /* mtest_finish finalizes; the unmatched sends are reported, not leaked. */
    int status = mtest_finish();
    free(data);
    (void)errs;
    return status;
}
