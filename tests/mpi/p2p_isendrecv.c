/*
 * MPI_Isendrecv and MPI_Isendrecv_replace (MPI-4) and the blocking forms,
 * each also as `_c`: shifts around a ring in both directions with
 * contiguous and non-contiguous types (the replace form packs its
 * outgoing data before the receive lands in the same buffer),
 * MPI_PROC_NULL on either side (status names MPI_PROC_NULL, the buffer is
 * untouched), many outstanding at once completed in any order, argument
 * errors. Any number of ranks (1: to itself).
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define N 1000

static int err_class(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int *a = malloc(N * sizeof(int)), *b = malloc(N * sizeof(int));

    /* Isendrecv: shift right, then left with the _c form. */
    for (int dir = 0; dir < 2; dir++) {
        int to = dir ? left : right, from = dir ? right : left;
        for (int i = 0; i < N; i++) {
            a[i] = rank * N + i;
            b[i] = -1;
        }
        MPI_Request rq;
        MPI_Status st;
        if (dir == 0)
            MPI_Isendrecv(a, N, MPI_INT, to, 1, b, N, MPI_INT, from, 1, MPI_COMM_WORLD, &rq);
        else
            MPI_Isendrecv_c(a, N, MPI_INT, to, 1, b, N, MPI_INT, from, 1, MPI_COMM_WORLD, &rq);
        MPI_Wait(&rq, &st);
        int bad = 0, cnt = -1;
        for (int i = 0; i < N; i++)
            bad += b[i] != from * N + i;
        MPI_Get_count(&st, MPI_INT, &cnt);
        CHECK(bad == 0 && st.MPI_SOURCE == from && st.MPI_TAG == 1 && cnt == N,
              "Isendrecv dir %d: %d bad, src %d count %d", dir, bad, st.MPI_SOURCE, cnt);
    }

    /* Isendrecv_replace with a strided type: every other int travels, the
     * ones between stay. */
    MPI_Datatype every2;
    MPI_Type_vector(N / 2, 1, 2, MPI_INT, &every2);
    MPI_Type_commit(&every2);
    for (int form = 0; form < 4; form++) {
        for (int i = 0; i < N; i++)
            a[i] = i % 2 ? -7 : rank * N + i;
        MPI_Request rq;
        MPI_Status st;
        if (form == 0) {
            MPI_Isendrecv_replace(a, 1, every2, right, 2, left, 2, MPI_COMM_WORLD, &rq);
            MPI_Wait(&rq, &st);
        } else if (form == 1) {
            MPI_Isendrecv_replace_c(a, 1, every2, right, 2, left, 2, MPI_COMM_WORLD, &rq);
            int flag = 0;
            double t0 = MPI_Wtime();
            while (!flag && MPI_Wtime() - t0 < 60)
                MPI_Test(&rq, &flag, &st);
        } else if (form == 2) {
            MPI_Sendrecv_replace(a, 1, every2, right, 2, left, 2, MPI_COMM_WORLD, &st);
        } else {
            MPI_Sendrecv_replace_c(a, 1, every2, right, 2, left, 2, MPI_COMM_WORLD, &st);
        }
        int bad = 0;
        for (int i = 0; i < N; i++)
            bad += a[i] != (i % 2 ? -7 : left * N + i);
        CHECK(bad == 0 && st.MPI_SOURCE == left, "replace form %d: %d bad, src %d", form, bad,
              st.MPI_SOURCE);
    }
    MPI_Type_free(&every2);

    /* Blocking Sendrecv_c across two types of the same signature. */
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    for (int i = 0; i < N; i++) {
        a[i] = rank + i;
        b[i] = -1;
    }
    MPI_Status st;
    MPI_Sendrecv_c(a, N, MPI_INT, right, 3, b, N / 2, pair, left, 3, MPI_COMM_WORLD, &st);
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += b[i] != left + i;
    MPI_Count cc = -1;
    MPI_Get_count_c(&st, pair, &cc);
    CHECK(bad == 0 && cc == N / 2, "Sendrecv_c: %d bad, count %lld", bad, (long long)cc);
    MPI_Type_free(&pair);

    /* MPI_PROC_NULL on one side or both. */
    b[0] = 99;
    MPI_Request rq;
    MPI_Isendrecv(a, 1, MPI_INT, MPI_PROC_NULL, 4, b, 1, MPI_INT, MPI_PROC_NULL, 4,
                  MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, &st);
    int cnt = -1;
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(b[0] == 99 && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && cnt == 0,
          "both PROC_NULL: b %d src %d tag %d count %d", b[0], st.MPI_SOURCE, st.MPI_TAG, cnt);
    /* Send only (receive from PROC_NULL), then receive only. */
    a[0] = rank + 500;
    MPI_Isendrecv_replace(a, 1, MPI_INT, right, 5, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, &st);
    CHECK(a[0] == rank + 500 && st.MPI_SOURCE == MPI_PROC_NULL, "send-only replace: %d %d",
          a[0], st.MPI_SOURCE);
    MPI_Isendrecv(a, 1, MPI_INT, MPI_PROC_NULL, 5, b, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, &st);
    CHECK(b[0] == left + 500 && st.MPI_SOURCE == left, "receive-only: %d %d", b[0],
          st.MPI_SOURCE);

    /* Many at once, completed by Waitsome in whatever order. */
    enum { K = 16 };
    MPI_Request many[K];
    int *ins = malloc(K * sizeof(int)), *outs = malloc(K * sizeof(int));
    for (int k = 0; k < K; k++) {
        ins[k] = rank * 100 + k;
        outs[k] = -1;
        MPI_Isendrecv(&ins[k], 1, MPI_INT, right, 100 + k, &outs[k], 1, MPI_INT, left, 100 + k,
                      MPI_COMM_WORLD, &many[k]);
    }
    int done = 0, n, ind[K];
    double t0 = MPI_Wtime();
    while (done < K && MPI_Wtime() - t0 < 60) {
        MPI_Waitsome(K, many, &n, ind, MPI_STATUSES_IGNORE);
        done += n;
    }
    bad = 0;
    for (int k = 0; k < K; k++)
        bad += outs[k] != left * 100 + k;
    CHECK(done == K && bad == 0, "many: %d done, %d bad", done, bad);
    free(ins);
    free(outs);

    /* Freed before completion: the exchange still happens. */
    b[0] = -1;
    a[0] = rank + 900;
    MPI_Isendrecv(a, 1, MPI_INT, right, 6, b, 1, MPI_INT, left, 6, MPI_COMM_WORLD, &rq);
    MPI_Request_free(&rq);
    t0 = MPI_Wtime();
    while (b[0] != left + 900 && MPI_Wtime() - t0 < 60) {
        int f;
        MPI_Iprobe(MPI_ANY_SOURCE, 4321, MPI_COMM_WORLD, &f, MPI_STATUS_IGNORE);
    }
    CHECK(b[0] == left + 900, "freed Isendrecv: %d", b[0]);

    /* Argument errors. */
    int rc = MPI_Isendrecv(a, -1, MPI_INT, right, 0, b, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &rq);
    CHECK(err_class(rc) == MPI_ERR_COUNT, "negative send count: %d", rc);
    rc = MPI_Isendrecv(a, 1, MPI_INT, right, 0, b, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &rq);
    CHECK(err_class(rc) == MPI_ERR_RANK, "bad source: %d", rc);
    rc = MPI_Isendrecv_replace(a, 1, MPI_INT, right, MPI_ANY_TAG, left, 0, MPI_COMM_WORLD, &rq);
    CHECK(err_class(rc) == MPI_ERR_TAG, "ANY_TAG as send tag: %d", rc);
    rc = MPI_Isendrecv(a, 1, MPI_INT, right, 0, b, 1, MPI_INT, left, 0, MPI_COMM_WORLD, NULL);
    CHECK(err_class(rc) == MPI_ERR_ARG, "no request: %d", rc);
    rc = MPI_Sendrecv_c(a, 1, MPI_INT, right, 0, b, 1, MPI_DATATYPE_NULL, left, 0,
                        MPI_COMM_WORLD, &st);
    CHECK(err_class(rc) == MPI_ERR_TYPE, "null receive type: %d", rc);
    free(a);
    free(b);
    return mtest_finish();
}
