/*
 * MPI_Cancel of sends. A synchronous send the receiver has not matched is
 * withdrawn (MPI_Test_cancelled true, the message never delivered), to
 * itself and to another rank, blocking-started or persistent; one already
 * matched completes normally (cancelled false, delivered once). A standard
 * send that has left, and a large synchronous one whose data is still at
 * the sender, complete normally too and are delivered exactly once: the
 * standard lets a cancel fail, never deliver twice or lose a message.
 * Rank 0 sends, the last rank receives; one rank talks to itself.
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define BIG (1 << 20)   /* above every transport's eager limit */

static int rank, size, peer;

static int cancelled(MPI_Request *req)
{
    MPI_Status st;
    int flag = -1;
    MPI_Wait(req, &st);
    MPI_Test_cancelled(&st, &flag);
    return flag;
}

/* Nothing left for this rank with tag `tag` (after the sender's cancel). */
static void nothing_arrives(int tag, const char *what)
{
    int flag = 1;
    MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag, "%s: a withdrawn message arrived", what);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = size - 1;
    int x = 42, y = -1;
    MPI_Request req;

    /* 1. Unmatched synchronous sends: to this rank and to the peer. */
    if (rank == 0) {
        MPI_Issend(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &req);
        MPI_Cancel(&req);
        CHECK(cancelled(&req) == 1, "Issend to self not cancelled");
        nothing_arrives(1, "Issend to self");
        MPI_Issend(&x, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, &req);
        MPI_Cancel(&req);
        MPI_Cancel(&req);   /* twice: the same as once */
        CHECK(cancelled(&req) == 1, "Issend to %d not cancelled", peer);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == peer)
        nothing_arrives(2, "Issend to the peer");

    /* 2. A persistent synchronous send, cancelled, then started again and
     * received (the receive is posted only after the cancel is answered). */
    if (rank == 0) {
        MPI_Ssend_init(&x, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, &req);
        MPI_Start(&req);
        MPI_Cancel(&req);
        CHECK(cancelled(&req) == 1 && req != MPI_REQUEST_NULL, "persistent Ssend not cancelled");
        x = 43;
        MPI_Start(&req);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == peer) {
        MPI_Recv(&y, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(y == 43, "restarted Ssend delivered %d", y);
    }
    if (rank == 0) {
        CHECK(cancelled(&req) == 0, "restarted Ssend cancelled");
        MPI_Request_free(&req);
    }

    /* 3. Matched before the cancel: completes, delivered once. */
    if (rank == 0) {
        MPI_Issend(&x, 1, MPI_INT, peer, 4, MPI_COMM_WORLD, &req);
        if (rank == peer)
            MPI_Recv(&y, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
            MPI_Recv(NULL, 0, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Cancel(&req);
        CHECK(cancelled(&req) == 0, "a matched Issend reported cancelled");
    } else if (rank == peer) {
        MPI_Recv(&y, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(NULL, 0, MPI_INT, 0, 5, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == peer)
        nothing_arrives(4, "matched Issend");

    /* 4. A standard send that has left, and a large synchronous send
     * (withdrawn or not, depending on the transport): a message is
     * withdrawn exactly when its send says cancelled, else delivered once.
     * The cancels travel before "go" on the same ordered channel, so once
     * "go" is in, what waits at the receiver is final. */
    char *big = malloc(BIG), *got = malloc(BIG);
    memset(big, 7, BIG);
    MPI_Request two[2];
    int was[2] = {-1, -1}, present[2] = {0, 0}, six = 6;
    if (rank == 0) {
        MPI_Isend(&six, 1, MPI_INT, peer, 6, MPI_COMM_WORLD, &two[0]);
        MPI_Issend(big, BIG, MPI_CHAR, peer, 7, MPI_COMM_WORLD, &two[1]);
        MPI_Cancel(&two[0]);
        MPI_Cancel(&two[1]);
        MPI_Send(NULL, 0, MPI_INT, peer, 8, MPI_COMM_WORLD);
    }
    if (rank == peer) {
        MPI_Recv(NULL, 0, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Iprobe(0, 6, MPI_COMM_WORLD, &present[0], MPI_STATUS_IGNORE);
        MPI_Iprobe(0, 7, MPI_COMM_WORLD, &present[1], MPI_STATUS_IGNORE);
        if (present[0])
            MPI_Recv(&y, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (present[1])
            MPI_Recv(got, BIG, MPI_CHAR, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(!present[0] || y == six, "standard send delivered %d", y);
        CHECK(!present[1] || memcmp(got, big, BIG) == 0, "large Issend corrupted");
    }
    if (rank == 0) {
        MPI_Status st[2];
        MPI_Waitall(2, two, st);
        MPI_Test_cancelled(&st[0], &was[0]);
        MPI_Test_cancelled(&st[1], &was[1]);
        CHECK(!was[0], "a standard send that left reported cancelled");
        MPI_Send(was, 2, MPI_INT, peer, 9, MPI_COMM_WORLD);
    }
    if (rank == peer) {
        MPI_Recv(was, 2, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(was[0] == !present[0] && was[1] == !present[1],
              "cancelled %d %d but delivered %d %d", was[0], was[1], present[0], present[1]);
        nothing_arrives(6, "standard send");
        nothing_arrives(7, "large Issend");
    }
    free(big);
    free(got);
    return mtest_finish();
}
