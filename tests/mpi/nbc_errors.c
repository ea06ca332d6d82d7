/*
 * A failing step of a nonblocking collective is reported, not swallowed:
 * an Ibcast whose receivers post fewer elements than the root sends
 * completes with MPI_ERR_TRUNCATE where data was cut (MPI_ERRORS_RETURN),
 * and everything still works afterwards (no request left linked in the
 * posted queue or owned by a transport after its schedule failed).
 * Needs >= 2 ranks.
 */
#include <stdlib.h>

#include "mtest.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    for (int n = 8; n <= 80000; n *= 100) {
        int *buf = calloc((size_t)n, sizeof(int));
        MPI_Request rq;
        /* Non-roots expect half: a truncation in the schedule. */
        int rc = MPI_Ibcast(buf, rank == 0 ? n : n / 2, MPI_INT, 0, c, &rq);
        CHECK(rc == MPI_SUCCESS, "Ibcast start returned %d", rc);
        MPI_Status st;
        rc = MPI_Wait(&rq, &st);
        int cls = -1, truncated = 0, any = 0;
        MPI_Error_class(rc, &cls);
        /* A rank that got more than it posted says so; ranks further down
         * the tree get what their parent had (no truncation there). */
        CHECK(cls == MPI_SUCCESS || (rank != 0 && cls == MPI_ERR_TRUNCATE),
              "n=%d: Wait returned class %d", n, cls);
        truncated = cls == MPI_ERR_TRUNCATE;
        MPI_Allreduce(&truncated, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
        CHECK(any, "n=%d: no rank reported MPI_ERR_TRUNCATE", n);
        CHECK(rq == MPI_REQUEST_NULL, "request not freed");
        free(buf);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* A user op failing is out of scope; a mismatch in Iallreduce counts
     * likewise truncates somewhere and must come back as an error there. */
    int v[4] = { rank, rank, rank, rank }, r[4];
    MPI_Request rq;
    MPI_Iallreduce(v, r, rank == 1 ? 2 : 4, MPI_INT, MPI_SUM, c, &rq);
    int rc = MPI_Wait(&rq, MPI_STATUS_IGNORE), any = rc != MPI_SUCCESS, anyall = 0;
    MPI_Allreduce(&any, &anyall, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    CHECK(anyall, "a mismatched Iallreduce reported no error anywhere");
    /* Afterwards the library still moves messages normally, also on c
     * (stale pieces of the failed schedules were drained at the barrier
     * or stay on their own tags). */
    for (int k = 0; k < 3; k++) {
        int x = rank + 1, s = 0;
        MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(s == size * (size + 1) / 2, "allreduce after failures: %d", s);
    }
    MPI_Comm_free(&c);
    return mtest_finish();
}
