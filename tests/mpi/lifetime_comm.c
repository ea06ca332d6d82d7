/*
 * Communicator lifetimes.
 *  - A nonblocking collective keeps its communicator: Ibcast; Comm_free;
 *    new communicators made (which used to take over the freed struct);
 *    Wait still completes the broadcast on the freed one.
 *  - A message pending on a freed communicator is never delivered to a
 *    later communicator (context ids are not reused while it may still be
 *    in flight): rank 0 sends on A, rank 1 frees A without receiving it;
 *    both make B; a wildcard receive on B must get B's message.
 * Needs >= 2 ranks.
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

static int rank, size;

static void nbc_after_free(void)
{
    enum { N = 4096 };
    int *buf = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++)
        buf[i] = rank == 0 ? i * 3 : -1;
    MPI_Comm c, others[4];
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Request rq;
    MPI_Ibcast(buf, N, MPI_INT, 0, c, &rq);
    MPI_Comm_free(&c);
    CHECK(c == MPI_COMM_NULL, "handle not nulled");
    for (int k = 0; k < 4; k++)
        MPI_Comm_dup(MPI_COMM_WORLD, &others[k]);
    int rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS, "wait returned %d", rc);
    for (int i = 0; i < N; i++)
        if (buf[i] != i * 3) {
            CHECK(0, "element %d: %d", i, buf[i]);
            break;
        }
    /* The new communicators still work on their own. */
    for (int k = 0; k < 4; k++) {
        int v = rank + k, sum = 0;
        MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, others[k]);
        CHECK(sum == size * (size - 1) / 2 + k * size, "comm %d sum %d", k, sum);
        MPI_Comm_free(&others[k]);
    }
    free(buf);
}

static void no_stale_delivery(void)
{
    for (int round = 0; round < 8; round++) {
        MPI_Comm a, b;
        MPI_Comm_dup(MPI_COMM_WORLD, &a);
        int stale = -1000 - round, fresh = 1000 + round, got = 0;
        if (rank == 0) {
            MPI_Request rq;
            MPI_Isend(&stale, 1, MPI_INT, 1, 5, a, &rq);
            MPI_Request_free(&rq);
        }
        /* Rank 1 does not receive it: an erroneous but legal-to-survive
         * program; the message must stay on a's context. */
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Comm_free(&a);
        MPI_Comm_dup(MPI_COMM_WORLD, &b);
        if (rank == 0) {
            MPI_Send(&fresh, 1, MPI_INT, 1, 5, b);
        } else if (rank == 1) {
            MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, b, MPI_STATUS_IGNORE);
            CHECK(got == fresh, "round %d: received %d on the new communicator, expected %d",
                  round, got, fresh);
        }
        MPI_Comm_free(&b);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    nbc_after_free();
    no_stale_delivery();
    return mtest_finish();
}
