/*
 * Matched probes: a message found by MPI_Mprobe/Improbe is received only
 * by its MPI_Mrecv/Imrecv, even with a wildcard receive posted in
 * between; eager and large (rendezvous) messages; MPI_PROC_NULL gives
 * MPI_MESSAGE_NO_PROC; MPI_MESSAGE_NULL is an error (MPI_ERR_REQUEST).
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define BIG (1 << 20)

static void fill(int *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        b[i] = seed * 7919 + i;
}

static int bad(const int *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        if (b[i] != seed * 7919 + i)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *buf = malloc(BIG * sizeof(int));

    if (rank != 0) {
        /* tag 1: small; tag 2: a decoy for the wildcard receive; tag 3: large */
        fill(buf, 4, rank);
        MPI_Send(buf, 4, MPI_INT, 0, 1, MPI_COMM_WORLD);
        fill(buf, 4, rank + 100);
        MPI_Send(buf, 4, MPI_INT, 0, 2, MPI_COMM_WORLD);
        fill(buf, BIG, rank + 200);
        MPI_Send(buf, BIG, MPI_INT, 0, 3, MPI_COMM_WORLD);
    } else {
        for (int n = 1; n < size; n++) {
            MPI_Message msg;
            MPI_Status st;
            int rc = MPI_Mprobe(MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &msg, &st);
            CHECK(rc == MPI_SUCCESS && msg != MPI_MESSAGE_NULL, "Mprobe rc %d", rc);
            int src = st.MPI_SOURCE, cnt = -1;
            MPI_Get_count(&st, MPI_INT, &cnt);
            CHECK(cnt == 4 && st.MPI_TAG == 1, "probe count %d tag %d", cnt, st.MPI_TAG);
            /* A wildcard receive must not take the probed message: it gets
             * the decoy (tag 2) from some rank instead. */
            int decoy[4];
            MPI_Request wild;
            MPI_Irecv(decoy, 4, MPI_INT, src, MPI_ANY_TAG, MPI_COMM_WORLD, &wild);
            int got[4] = { 0 };
            rc = MPI_Mrecv(got, 4, MPI_INT, &msg, &st);
            CHECK(rc == MPI_SUCCESS && msg == MPI_MESSAGE_NULL, "Mrecv rc %d", rc);
            CHECK(!bad(got, 4, src) && st.MPI_SOURCE == src, "Mrecv data from %d", src);
            MPI_Wait(&wild, &st);
            CHECK(st.MPI_TAG == 2 && !bad(decoy, 4, src + 100), "wildcard got tag %d",
                  st.MPI_TAG);
            /* The large message: Improbe until it is there, then Imrecv. */
            int flag = 0;
            for (long spin = 0; !flag && spin < 100000000L; spin++) {
                rc = MPI_Improbe(src, 3, MPI_COMM_WORLD, &flag, &msg, &st);
                CHECK(rc == MPI_SUCCESS, "Improbe rc %d", rc);
                if (rc != MPI_SUCCESS)
                    break;
            }
            CHECK(flag, "Improbe never found the large message");
            memset(buf, 0, BIG * sizeof(int));
            MPI_Request r;
            rc = MPI_Imrecv(buf, BIG, MPI_INT, &msg, &r);
            CHECK(rc == MPI_SUCCESS && msg == MPI_MESSAGE_NULL, "Imrecv rc %d", rc);
            MPI_Wait(&r, &st);
            MPI_Get_count(&st, MPI_INT, &cnt);
            CHECK(cnt == BIG && !bad(buf, BIG, src + 200), "large message from %d", src);
        }
        /* Nothing left: Improbe says so. */
        int flag = 1;
        MPI_Message msg;
        MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg,
                    MPI_STATUS_IGNORE);
        CHECK(!flag && msg == MPI_MESSAGE_NULL, "Improbe found a message that was not sent");
    }
    /* MPI_PROC_NULL */
    MPI_Message msg;
    MPI_Status st;
    MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st);
    CHECK(msg == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL, "PROC_NULL probe");
    int x = 5;
    MPI_Mrecv(&x, 1, MPI_INT, &msg, &st);
    CHECK(msg == MPI_MESSAGE_NULL && st.MPI_SOURCE == MPI_PROC_NULL && x == 5,
          "Mrecv of MPI_MESSAGE_NO_PROC");
    /* Errors */
    msg = MPI_MESSAGE_NULL;
    int rc = MPI_Mrecv(&x, 1, MPI_INT, &msg, &st), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_REQUEST, "Mrecv(MPI_MESSAGE_NULL) class %d", cls);
    rc = MPI_Mprobe(size, 0, MPI_COMM_WORLD, &msg, &st);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "Mprobe of rank %d: class %d", size, cls);
    free(buf);
    return mtest_finish();
}
