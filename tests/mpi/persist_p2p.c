/*
 * Persistent point-to-point requests: every send mode and the receive,
 * restarted many times around a ring with new contents each time (so a
 * request that kept the first activation's data or status fails), through
 * MPI_Start and MPI_Startall of mixed sends and receives, with their
 * `_c` forms, a non-contiguous type freed right after the init, wildcard
 * receives, MPI_PROC_NULL, MPI_Cancel; what an inactive request does in
 * every completion call, and the error class of each misuse. Any number of
 * ranks (1 talks to itself).
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define N 64
#define ITERS 200

static int err_class(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

/* Ring exchange with MPI_Startall of a mixed pair, every mode, new data
 * every iteration. */
static void ring_modes(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int *sbuf = malloc(N * sizeof(int)), *rbuf = malloc(N * sizeof(int));
    int bsize = 64 * (N * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    void *battach = malloc((size_t)bsize);
    MPI_Buffer_attach(battach, bsize);
    const char *names[4] = { "Send_init", "Ssend_init", "Rsend_init", "Bsend_init_c" };
    for (int mode = 0; mode < 4; mode++) {
        MPI_Request rq[2];
        MPI_Recv_init(rbuf, N, MPI_INT, left, 7 + mode, MPI_COMM_WORLD, &rq[0]);
        if (mode == 0)
            MPI_Send_init(sbuf, N, MPI_INT, right, 7, MPI_COMM_WORLD, &rq[1]);
        else if (mode == 1)
            MPI_Ssend_init(sbuf, N, MPI_INT, right, 8, MPI_COMM_WORLD, &rq[1]);
        else if (mode == 2)
            MPI_Rsend_init(sbuf, N, MPI_INT, right, 9, MPI_COMM_WORLD, &rq[1]);
        else
            MPI_Bsend_init_c(sbuf, (MPI_Count)N, MPI_INT, right, 10, MPI_COMM_WORLD, &rq[1]);
        for (int it = 0; it < ITERS; it++) {
            for (int i = 0; i < N; i++)
                sbuf[i] = rank * 100000 + it * 100 + i;
            memset(rbuf, 0xff, N * sizeof(int));
            if (mode == 2) {
                /* Ready mode: the receive must be posted before the send
                 * starts, here on every rank before a barrier. */
                MPI_Start(&rq[0]);
                MPI_Barrier(MPI_COMM_WORLD);
                MPI_Start(&rq[1]);
            } else {
                MPI_Startall(2, rq);
            }
            MPI_Status st[2];
            int rc = MPI_Waitall(2, rq, st);
            CHECK(rc == MPI_SUCCESS, "%s: Waitall %d", names[mode], rc);
            CHECK(rq[0] != MPI_REQUEST_NULL && rq[1] != MPI_REQUEST_NULL,
                  "%s: Waitall freed a persistent request", names[mode]);
            int cnt = -1;
            MPI_Get_count(&st[0], MPI_INT, &cnt);
            CHECK(st[0].MPI_SOURCE == left && st[0].MPI_TAG == 7 + mode && cnt == N,
                  "%s it %d: status src %d tag %d count %d", names[mode], it, st[0].MPI_SOURCE,
                  st[0].MPI_TAG, cnt);
            int bad = 0;
            for (int i = 0; i < N; i++)
                bad += rbuf[i] != left * 100000 + it * 100 + i;
            CHECK(bad == 0, "%s it %d: %d wrong elements", names[mode], it, bad);
            if (bad)
                break;
        }
        MPI_Request_free(&rq[0]);
        MPI_Request_free(&rq[1]);
        CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL, "free left handles");
    }
    int sz;
    void *b;
    MPI_Buffer_detach(&b, &sz);
    CHECK(b == battach && sz == bsize, "detach gave %p %d", b, sz);
    free(battach);
    free(sbuf);
    free(rbuf);
}

/* A vector type freed right after the init; ANY_SOURCE/ANY_TAG receive
 * statuses change with each activation; _c forms. */
static void vector_wildcards(int rank, int size)
{
    MPI_Datatype vec;
    MPI_Type_vector(4, 1, 3, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    double src[12], dst[12];
    MPI_Request s, r;
    int right = (rank + 1) % size;
    MPI_Send_init_c(src, 1, vec, right, 0, MPI_COMM_WORLD, &s);
    MPI_Recv_init_c(dst, 1, vec, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r);
    MPI_Type_free(&vec);
    for (int it = 0; it < 50; it++) {
        for (int i = 0; i < 12; i++) {
            src[i] = rank + it * 0.5 + i * 1000;
            dst[i] = -1;
        }
        MPI_Start(&r);
        MPI_Start(&s);
        MPI_Status st;
        MPI_Wait(&s, MPI_STATUS_IGNORE);
        MPI_Wait(&r, &st);
        int left = (rank + size - 1) % size, bad = 0;
        for (int i = 0; i < 12; i++)
            bad += dst[i] != (i % 3 == 0 ? left + it * 0.5 + i * 1000 : -1);
        CHECK(bad == 0 && st.MPI_SOURCE == left && st.MPI_TAG == 0,
              "vector it %d: %d bad, src %d", it, bad, st.MPI_SOURCE);
        MPI_Count c = -1;
        MPI_Get_count_c(&st, MPI_DOUBLE, &c);
        CHECK(c == 4, "count_c %lld", (long long)c);
        if (bad)
            break;
    }
    MPI_Request_free(&s);
    MPI_Request_free(&r);
}

/* What completion calls do with inactive persistent requests. */
static void inactive_rules(int rank)
{
    int x = 5, y = 0;
    MPI_Request r, s, arr[3];
    MPI_Recv_init(&y, 1, MPI_INT, rank, 3, MPI_COMM_WORLD, &r);
    MPI_Send_init(&x, 1, MPI_INT, rank, 3, MPI_COMM_WORLD, &s);
    MPI_Status st;
    st.MPI_SOURCE = 77;
    st.MPI_TAG = 77;
    int rc = MPI_Wait(&r, &st), cnt = -1, flag = 0, idx = 5;
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(rc == MPI_SUCCESS && r != MPI_REQUEST_NULL && st.MPI_SOURCE == MPI_ANY_SOURCE &&
              st.MPI_TAG == MPI_ANY_TAG && cnt == 0,
          "Wait on inactive: rc %d src %d tag %d count %d", rc, st.MPI_SOURCE, st.MPI_TAG, cnt);
    MPI_Test(&r, &flag, &st);
    CHECK(flag == 1 && r != MPI_REQUEST_NULL, "Test on inactive: flag %d", flag);
    arr[0] = r;
    arr[1] = MPI_REQUEST_NULL;
    arr[2] = s;
    MPI_Waitany(3, arr, &idx, &st);
    CHECK(idx == MPI_UNDEFINED, "Waitany over inactive gave index %d", idx);
    MPI_Testany(3, arr, &idx, &flag, &st);
    CHECK(idx == MPI_UNDEFINED && flag == 1, "Testany: index %d flag %d", idx, flag);
    int out = 5, ind[3];
    MPI_Waitsome(3, arr, &out, ind, MPI_STATUSES_IGNORE);
    CHECK(out == MPI_UNDEFINED, "Waitsome over inactive: outcount %d", out);
    MPI_Testall(3, arr, &flag, MPI_STATUSES_IGNORE);
    CHECK(flag == 1 && arr[0] == r && arr[2] == s, "Testall over inactive");
    /* Now one active among inactive ones: Waitany finds it. */
    MPI_Start(&arr[0]);
    MPI_Start(&arr[2]);
    int got = 0;
    for (int k = 0; k < 2; k++) {
        MPI_Waitany(3, arr, &idx, &st);
        CHECK(idx == 0 || idx == 2, "Waitany index %d", idx);
        got |= 1 << idx;
    }
    CHECK(got == 5 && y == 5, "both completed once (%d), y %d", got, y);
    MPI_Waitany(3, arr, &idx, &st);
    CHECK(idx == MPI_UNDEFINED, "third Waitany gave %d", idx);

    /* Misuse: start an active request, start a non-persistent one,
     * start null, free an active receive (allowed), cancel. */
    MPI_Start(&r);
    rc = MPI_Start(&r);
    CHECK(err_class(rc) == MPI_ERR_REQUEST, "Start of an active request: %d", rc);
    rc = MPI_Startall(1, &r);
    CHECK(err_class(rc) == MPI_ERR_REQUEST, "Startall of an active request: %d", rc);
    MPI_Request nb;
    MPI_Irecv(&y, 1, MPI_INT, rank, 99, MPI_COMM_WORLD, &nb);
    rc = MPI_Start(&nb);
    CHECK(err_class(rc) == MPI_ERR_REQUEST, "Start of a nonblocking request: %d", rc);
    MPI_Request null = MPI_REQUEST_NULL;
    rc = MPI_Start(&null);
    CHECK(err_class(rc) == MPI_ERR_REQUEST, "Start of MPI_REQUEST_NULL: %d", rc);
    rc = MPI_Start(NULL);
    CHECK(err_class(rc) == MPI_ERR_ARG, "Start(NULL): %d", rc);
    MPI_Cancel(&nb);
    MPI_Wait(&nb, &st);
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag, "cancelled Irecv not reported cancelled");
    /* The active persistent receive is cancelled, then restarted and used. */
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag && r != MPI_REQUEST_NULL, "cancelled persistent recv: flag %d", flag);
    x = 6;
    MPI_Start(&r);
    MPI_Start(&s);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    MPI_Wait(&r, &st);
    MPI_Test_cancelled(&st, &flag);
    CHECK(y == 6 && !flag, "restart after cancel: y %d cancelled %d", y, flag);
    /* Freeing an active persistent receive: the message still lands. */
    MPI_Start(&r);
    MPI_Request_free(&r);
    x = 7;
    MPI_Start(&s);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    /* The freed receive takes it (progress until it lands, bounded). */
    double t0 = MPI_Wtime();
    while (y != 7 && MPI_Wtime() - t0 < 30) {
        int f;
        MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &f, MPI_STATUS_IGNORE);
    }
    CHECK(y == 7, "the freed active receive did not complete: y %d", y);
    MPI_Request_free(&s);
    rc = MPI_Request_free(&s);
    CHECK(err_class(rc) == MPI_ERR_REQUEST, "free of a null handle: %d", rc);
    /* PROC_NULL: complete at once, receive status names PROC_NULL. */
    MPI_Recv_init(&y, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r);
    MPI_Send_init(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &s);
    for (int it = 0; it < 3; it++) {
        MPI_Start(&r);
        MPI_Start(&s);
        MPI_Test(&r, &flag, &st);
        CHECK(flag && st.MPI_SOURCE == MPI_PROC_NULL, "PROC_NULL recv: flag %d src %d", flag,
              st.MPI_SOURCE);
        MPI_Wait(&s, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&r);
    MPI_Request_free(&s);
    /* Arguments checked at init. */
    rc = MPI_Send_init(&x, -1, MPI_INT, rank, 0, MPI_COMM_WORLD, &s);
    CHECK(err_class(rc) == MPI_ERR_COUNT, "negative count: %d", rc);
    rc = MPI_Recv_init(&x, 1, MPI_INT, 9999, 0, MPI_COMM_WORLD, &r);
    CHECK(err_class(rc) == MPI_ERR_RANK, "bad rank: %d", rc);
    rc = MPI_Ssend_init(&x, 1, MPI_INT, rank, -5, MPI_COMM_WORLD, &s);
    CHECK(err_class(rc) == MPI_ERR_TAG, "bad tag: %d", rc);
    rc = MPI_Send_init(&x, 1, MPI_DATATYPE_NULL, rank, 0, MPI_COMM_WORLD, &s);
    CHECK(err_class(rc) == MPI_ERR_TYPE, "null type: %d", rc);
    rc = MPI_Recv_init(&x, 1, MPI_INT, rank, 0, MPI_COMM_NULL, &r);
    CHECK(err_class(rc) == MPI_ERR_COMM, "null comm: %d", rc);
    /* A persistent buffered send without a buffer fails at MPI_Start. */
    MPI_Bsend_init(&x, 1, MPI_INT, rank, 0, MPI_COMM_WORLD, &s);
    rc = MPI_Start(&s);
    CHECK(err_class(rc) == MPI_ERR_BUFFER, "Bsend_init start without buffer: %d", rc);
    MPI_Request_free(&s);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    ring_modes(rank, size);
    vector_wildcards(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    inactive_rules(rank);
    return mtest_finish();
}
