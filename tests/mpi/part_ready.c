/*
 * Partitioned communication (MPI-4): around a ring, the sender marks its
 * partitions ready out of order (MPI_Pready, _range, _list mixed) and the
 * receiver, which partitions the same buffer differently, polls
 * MPI_Parrived; restarted many times with new data, once on the largest
 * tag. Nothing arrives before the sender marks every partition, a wildcard
 * MPI_Irecv on the same communicator never takes partitioned data, and
 * each misuse gives its error class. Any number of ranks (1: to itself).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define SPARTS 8
#define SCOUNT 16
#define RPARTS 4
#define RCOUNT 32
#define ITERS 40

static int err_class(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

/* A permutation of 0..SPARTS-1 that changes with it. */
static void order(int it, int *perm)
{
    for (int i = 0; i < SPARTS; i++)
        perm[i] = (i * 5 + it * 3) % SPARTS;
}

/* The contents of send partition k in iteration it. */
static void fill_part(int *sbuf, int k, int rank, int it)
{
    for (int i = k * SCOUNT; i < (k + 1) * SCOUNT; i++)
        sbuf[i] = rank * 1000000 + it * 1000 + i;
}

static void run(int rank, int size, int tag, int iters)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int sbuf[SPARTS * SCOUNT] = { 0 }, rbuf[RPARTS * RCOUNT], regular = -1;
    MPI_Request ps, pr, wild;
    MPI_Psend_init(sbuf, SPARTS, SCOUNT, MPI_INT, right, tag, MPI_COMM_WORLD, MPI_INFO_NULL, &ps);
    MPI_Precv_init(rbuf, RPARTS, RCOUNT, MPI_INT, left, tag, MPI_COMM_WORLD, MPI_INFO_NULL, &pr);
    /* Partitioned messages match partitioned receives only. */
    MPI_Irecv(&regular, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &wild);
    for (int it = 0; it < iters; it++) {
        /* Each partition gets its data only right before it is marked
         * ready: a send that left earlier carries these -1s. */
        for (int i = 0; i < SPARTS * SCOUNT; i++)
            sbuf[i] = -1;
        memset(rbuf, 0xff, sizeof rbuf);
        MPI_Start(&pr);
        MPI_Start(&ps);
        MPI_Barrier(MPI_COMM_WORLD); /* every receive is posted, nothing marked yet */
        int early = 0;
        for (int k = 0; k < RPARTS; k++) {
            int f = 0;
            MPI_Parrived(pr, k, &f);
            early += f;
        }
        CHECK(early == 0, "it %d: %d partitions arrived before any was ready", it, early);
        MPI_Barrier(MPI_COMM_WORLD); /* nobody marks before everyone looked */
        int perm[SPARTS];
        order(it, perm);
        /* The first two singly, then a list of three, the rest one by one
         * or as a range when they happen to be adjacent. */
        fill_part(sbuf, perm[0], rank, it);
        MPI_Pready(perm[0], ps);
        fill_part(sbuf, perm[1], rank, it);
        MPI_Pready(perm[1], ps);
        for (int k = 2; k < 5; k++)
            fill_part(sbuf, perm[k], rank, it);
        MPI_Pready_list(3, &perm[2], ps);
        for (int i = 5; i < SPARTS; i++) {
            fill_part(sbuf, perm[i], rank, it);
            if (i + 1 < SPARTS && perm[i + 1] == perm[i] + 1) {
                fill_part(sbuf, perm[i + 1], rank, it);
                MPI_Pready_range(perm[i], perm[i + 1], ps);
                i++;
            } else {
                MPI_Pready(perm[i], ps);
            }
        }
        int arrived = 0;
        double t0 = MPI_Wtime();
        while (arrived != (1 << RPARTS) - 1 && MPI_Wtime() - t0 < 60) {
            for (int k = 0; k < RPARTS; k++) {
                int f = 0;
                MPI_Parrived(pr, k, &f);
                if (f)
                    arrived |= 1 << k;
            }
        }
        CHECK(arrived == (1 << RPARTS) - 1, "it %d: partitions arrived: %#x", it, arrived);
        MPI_Status st;
        MPI_Wait(&ps, MPI_STATUS_IGNORE);
        MPI_Wait(&pr, &st);
        int cnt = -1, bad = 0;
        MPI_Get_count(&st, MPI_INT, &cnt);
        CHECK(st.MPI_SOURCE == left && st.MPI_TAG == tag && cnt == RPARTS * RCOUNT,
              "it %d: status src %d tag %d count %d", it, st.MPI_SOURCE, st.MPI_TAG, cnt);
        for (int i = 0; i < RPARTS * RCOUNT; i++)
            bad += rbuf[i] != left * 1000000 + it * 1000 + i;
        CHECK(bad == 0, "it %d: %d wrong elements", it, bad);
        if (bad)
            break;
        /* Inactive again: MPI_Parrived says arrived, MPI_Wait returns. */
        int f = 0;
        MPI_Parrived(pr, 0, &f);
        CHECK(f == 1, "Parrived on an inactive request: %d", f);
    }
    /* Nobody has sent a regular message yet (the barriers keep it so). */
    MPI_Barrier(MPI_COMM_WORLD);
    int flag = 1;
    MPI_Test(&wild, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag, "a wildcard MPI_Irecv took a partitioned message");
    MPI_Barrier(MPI_COMM_WORLD);
    int one = 1;
    MPI_Send(&one, 1, MPI_INT, right, 5, MPI_COMM_WORLD);
    MPI_Wait(&wild, MPI_STATUS_IGNORE);
    CHECK(regular == 1, "the regular message: %d", regular);
    MPI_Request_free(&ps);
    MPI_Request_free(&pr);
}

static void misuse(int rank)
{
    int buf[4] = { 0 }, rbuf[4];
    MPI_Request ps, pr, bad;
    int rc = MPI_Psend_init(buf, 2, 2, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &bad);
    CHECK(err_class(rc) == MPI_ERR_RANK, "Psend_init to ANY_SOURCE: %d", rc);
    rc = MPI_Precv_init(rbuf, 2, 2, MPI_INT, rank, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_INFO_NULL,
                        &bad);
    CHECK(err_class(rc) == MPI_ERR_TAG, "Precv_init on ANY_TAG: %d", rc);
    rc = MPI_Precv_init(rbuf, -1, 2, MPI_INT, rank, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &bad);
    CHECK(err_class(rc) == MPI_ERR_COUNT, "Precv_init with -1 partitions: %d", rc);
    MPI_Psend_init(buf, 4, 1, MPI_INT, rank, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &ps);
    MPI_Precv_init(rbuf, 2, 2, MPI_INT, rank, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &pr);
    rc = MPI_Pready(0, ps);
    CHECK(err_class(rc) == MPI_ERR_REQUEST, "Pready before Start: %d", rc);
    MPI_Start(&pr);
    MPI_Start(&ps);
    rc = MPI_Pready(0, pr);
    CHECK(err_class(rc) == MPI_ERR_REQUEST, "Pready on a receive: %d", rc);
    rc = MPI_Pready(4, ps);
    CHECK(err_class(rc) == MPI_ERR_ARG, "Pready partition 4 of 4: %d", rc);
    int dup[3] = { 1, 3, 1 };
    rc = MPI_Pready_list(3, dup, ps);
    CHECK(err_class(rc) == MPI_ERR_ARG, "Pready_list with a repeat: %d", rc);
    rc = MPI_Pready_range(3, 2, ps);
    CHECK(err_class(rc) == MPI_ERR_ARG, "Pready_range high < low: %d", rc);
    MPI_Pready(1, ps); /* the failed list marked nothing */
    rc = MPI_Pready(1, ps);
    CHECK(err_class(rc) == MPI_ERR_ARG, "Pready twice: %d", rc);
    int f = 1;
    rc = MPI_Parrived(pr, 2, &f);
    CHECK(err_class(rc) == MPI_ERR_ARG, "Parrived partition 2 of 2: %d", rc);
    rc = MPI_Parrived(ps, 0, &f);
    CHECK(err_class(rc) == MPI_ERR_REQUEST, "Parrived on a send: %d", rc);
    rc = MPI_Parrived(MPI_REQUEST_NULL, 0, &f);
    CHECK(rc == MPI_SUCCESS && f == 1, "Parrived on null: %d %d", rc, f);
    rc = MPI_Start(&ps);
    CHECK(err_class(rc) == MPI_ERR_REQUEST, "Start of an active partitioned send: %d", rc);
    rc = MPI_Request_free(&ps);
    CHECK(err_class(rc) == MPI_ERR_REQUEST && ps != MPI_REQUEST_NULL,
          "free of an active partitioned send: %d", rc);
    rc = MPI_Cancel(&pr);
    CHECK(err_class(rc) == MPI_ERR_REQUEST, "cancel of an active partitioned receive: %d", rc);
    int rest[3] = { 0, 2, 3 };
    MPI_Pready_list(3, rest, ps);
    MPI_Wait(&ps, MPI_STATUS_IGNORE);
    MPI_Wait(&pr, MPI_STATUS_IGNORE);
    CHECK(rbuf[0] == 0 && rbuf[3] == 0, "data %d %d", rbuf[0], rbuf[3]);
    MPI_Request_free(&ps);
    MPI_Request_free(&pr);
    /* A receive shorter than the send is a truncation. */
    MPI_Psend_init(buf, 2, 2, MPI_INT, rank, 10, MPI_COMM_WORLD, MPI_INFO_NULL, &ps);
    MPI_Precv_init(rbuf, 1, 2, MPI_INT, rank, 10, MPI_COMM_WORLD, MPI_INFO_NULL, &pr);
    MPI_Start(&pr);
    MPI_Start(&ps);
    MPI_Pready_range(0, 1, ps);
    MPI_Wait(&ps, MPI_STATUS_IGNORE);
    rc = MPI_Wait(&pr, MPI_STATUS_IGNORE);
    CHECK(err_class(rc) == MPI_ERR_TRUNCATE, "short partitioned receive: %d", rc);
    MPI_Request_free(&ps);
    MPI_Request_free(&pr);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *ub, flag;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    run(rank, size, 3, ITERS);
    run(rank, size, *ub, 3); /* the largest tags */
    run(rank, size, *ub - 1, 3);
    run(rank, size, 0, 3);
    misuse(rank);
    return mtest_finish();
}
