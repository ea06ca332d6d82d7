/*
 * Invalid arguments and truncation come back as the right MPI_ERR_* class
 * under MPI_ERRORS_RETURN, and error classes/strings are consistent.
 * Needs >= 2 ranks.
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

static int rank, size;

#define EXPECT(call, cls)                                                          \
    do {                                                                           \
        int rc_ = (call), c_ = -1;                                                 \
        MPI_Error_class(rc_, &c_);                                                 \
        CHECK(c_ == (cls), "%s returned class %d, expected %s", #call, c_, #cls);  \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "default handler %p", (void *)eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    CHECK(eh == MPI_ERRORS_RETURN, "handler not set");
    int v[16] = { 0 }, peer = 1 - (rank & 1);
    if (rank >= 2 * (size / 2))
        peer = MPI_PROC_NULL; /* odd size: the last rank has no partner */
    MPI_Request rq;
    MPI_Status st;

    EXPECT(MPI_Send(v, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT(MPI_Send(v, 1, MPI_INT, -7, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT(MPI_Recv(v, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK);
    EXPECT(MPI_Send(v, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Irecv(v, -2, MPI_INT, 0, 0, MPI_COMM_WORLD, &rq), MPI_ERR_COUNT);
    EXPECT(MPI_Send(v, 1, MPI_INT, 0, -3, MPI_COMM_WORLD), MPI_ERR_TAG);
    EXPECT(MPI_Send(v, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG);
    EXPECT(MPI_Recv(v, 1, MPI_INT, 0, -5, MPI_COMM_WORLD, &st), MPI_ERR_TAG);
    EXPECT(MPI_Send(NULL, 2, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT(MPI_Recv(NULL, 2, MPI_INT, 0, 0, MPI_COMM_WORLD, &st), MPI_ERR_BUFFER);
    EXPECT(MPI_Send(v, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    MPI_Datatype unc;
    MPI_Type_contiguous(2, MPI_INT, &unc);
    EXPECT(MPI_Send(v, 1, unc, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT(MPI_Isend(v, 1, unc, 0, 0, MPI_COMM_WORLD, &rq), MPI_ERR_TYPE);
    MPI_Type_free(&unc);
    EXPECT(MPI_Send(v, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT(MPI_Comm_rank(MPI_COMM_NULL, &v[0]), MPI_ERR_COMM);
    MPI_Comm dup, stale;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    stale = dup;
    MPI_Comm_free(&dup);
    EXPECT(MPI_Send(v, 1, MPI_INT, 0, 0, stale), MPI_ERR_COMM);
    EXPECT(MPI_Comm_free(&dup), MPI_ERR_COMM);

    /* Requests: a stale handle and a null one. */
    MPI_Request copy;
    MPI_Irecv(v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rq);
    copy = rq;
    MPI_Wait(&rq, &st);
    EXPECT(MPI_Wait(&copy, &st), MPI_ERR_REQUEST);
    EXPECT(MPI_Request_free(&rq), MPI_ERR_REQUEST);
    EXPECT(MPI_Cancel(&rq), MPI_ERR_REQUEST);

    /* Truncation, eager and rendezvous, blocking and not. */
    if (peer != MPI_PROC_NULL) {
        int n = 300000; /* 1.2 MB */
        int *big = calloc((size_t)n, sizeof(int));
        for (int i = 0; i < n; i++)
            big[i] = i;
        MPI_Send(big, 10, MPI_INT, peer, 1, MPI_COMM_WORLD);
        MPI_Isend(big, n, MPI_INT, peer, 2, MPI_COMM_WORLD, &rq);
        int small[5] = { 0 }, cnt;
        EXPECT(MPI_Recv(small, 5, MPI_INT, peer, 1, MPI_COMM_WORLD, &st), MPI_ERR_TRUNCATE);
        MPI_Get_count(&st, MPI_INT, &cnt);
        CHECK(small[4] == 4 && cnt <= 5, "eager truncation: %d %d", small[4], cnt);
        int *mid = calloc(1000, sizeof(int));
        MPI_Request rr;
        MPI_Irecv(mid, 1000, MPI_INT, peer, 2, MPI_COMM_WORLD, &rr);
        EXPECT(MPI_Wait(&rr, &st), MPI_ERR_TRUNCATE);
        CHECK(mid[999] == 999, "rendezvous truncation kept %d", mid[999]);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        /* Waitall reports truncation in the statuses. */
        MPI_Request two[2];
        MPI_Status sts[2];
        MPI_Isend(big, 10, MPI_INT, peer, 3, MPI_COMM_WORLD, &two[0]);
        MPI_Irecv(small, 5, MPI_INT, peer, 3, MPI_COMM_WORLD, &two[1]);
        EXPECT(MPI_Waitall(2, two, sts), MPI_ERR_IN_STATUS);
        CHECK(sts[0].MPI_ERROR == MPI_SUCCESS && sts[1].MPI_ERROR == MPI_ERR_TRUNCATE,
              "waitall statuses %d %d", sts[0].MPI_ERROR, sts[1].MPI_ERROR);
        free(mid);
        free(big);
    }

    /* Classes and strings. */
    for (int c = MPI_SUCCESS; c <= MPI_ERR_ABI; c++) {
        char s[MPI_MAX_ERROR_STRING];
        int len = 0, cls = -1;
        MPI_Error_string(c, s, &len);
        MPI_Error_class(c, &cls);
        CHECK(len > 0 && (int)strlen(s) == len && cls == c, "error %d string/class", c);
    }
    char s[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(MPI_ERR_TRUNCATE, s, &len);
    CHECK(strstr(s, "MPI_ERR_TRUNCATE") != NULL, "truncate string '%s'", s);
    /* The handler belongs to the communicator: a dup inherits it. */
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_get_errhandler(dup, &eh);
    CHECK(eh == MPI_ERRORS_RETURN, "dup handler %p", (void *)eh);
    EXPECT(MPI_Send(v, 1, MPI_INT, size, 0, dup), MPI_ERR_RANK);
    MPI_Comm_free(&dup);
    return mtest_finish();
}
