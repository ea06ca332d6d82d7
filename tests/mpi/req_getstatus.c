/*
 * MPI-4.1's MPI_Request_get_status(_all, _any, _some) never free a request
 * (the completion calls afterwards still find it and report the same
 * status); the completion calls take every kind of request in one array
 * (point-to-point, persistent inactive and active, nonblocking collective,
 * MPI_Isendrecv, generalized); MPI_Status_set_elements(_c, _x) on a mixed
 * struct type is read back by MPI_Get_elements and MPI_Get_count; the
 * MPI-4.1 status accessors and their argument checks. Any number of
 * ranks (1: to itself).
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

static int err_class(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

static int gq(void *extra, MPI_Status *st)
{
    (void)extra;
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    return MPI_SUCCESS;
}

static int gf(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}

static int gc(void *extra, int complete)
{
    (void)extra, (void)complete;
    return MPI_SUCCESS;
}

/* Polls MPI_Request_get_status until flag (bounded). */
static int poll_status(MPI_Request rq, MPI_Status *st)
{
    int flag = 0;
    double t0 = MPI_Wtime();
    while (!flag && MPI_Wtime() - t0 < 60)
        MPI_Request_get_status(rq, &flag, st);
    return flag;
}

static void get_status_keeps(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int x = rank + 10, y = -1;
    MPI_Request rr, sr;
    MPI_Irecv(&y, 1, MPI_INT, left, 21, MPI_COMM_WORLD, &rr);
    MPI_Isend(&x, 1, MPI_INT, right, 21, MPI_COMM_WORLD, &sr);
    MPI_Status st, st2;
    CHECK(poll_status(rr, &st), "receive never complete");
    CHECK(rr != MPI_REQUEST_NULL && st.MPI_SOURCE == left && st.MPI_TAG == 21 && y == left + 10,
          "get_status: src %d tag %d y %d", st.MPI_SOURCE, st.MPI_TAG, y);
    int flag = 0;
    MPI_Request_get_status(rr, &flag, &st2);
    CHECK(flag && st2.MPI_SOURCE == left, "second get_status: flag %d", flag);
    MPI_Wait(&rr, &st2);
    CHECK(rr == MPI_REQUEST_NULL && st2.MPI_SOURCE == left && st2.MPI_TAG == 21,
          "Wait after get_status: src %d", st2.MPI_SOURCE);
    MPI_Wait(&sr, MPI_STATUS_IGNORE);

    /* The array forms over a nonblocking collective and two receives. */
    int ya = -1, yb = -1;
    MPI_Request arr[4];
    arr[0] = MPI_REQUEST_NULL;
    MPI_Ibarrier(MPI_COMM_WORLD, &arr[1]);
    MPI_Irecv(&ya, 1, MPI_INT, left, 22, MPI_COMM_WORLD, &arr[2]);
    MPI_Irecv(&yb, 1, MPI_INT, left, 23, MPI_COMM_WORLD, &arr[3]);
    int idx = -1, out = -1, ind[4];
    MPI_Request_get_status_any(4, arr, &idx, &flag, &st);
    MPI_Request_get_status_some(4, arr, &out, ind, MPI_STATUSES_IGNORE);
    CHECK(arr[2] != MPI_REQUEST_NULL && arr[3] != MPI_REQUEST_NULL && (out == 0 || out == 1),
          "before any send: outcount %d", out);
    MPI_Barrier(MPI_COMM_WORLD); /* everyone looked before anyone sends */
    MPI_Send(&x, 1, MPI_INT, right, 23, MPI_COMM_WORLD);
    MPI_Send(&x, 1, MPI_INT, right, 22, MPI_COMM_WORLD);
    MPI_Status sts[4];
    flag = 0;
    double t0 = MPI_Wtime();
    while (!flag && MPI_Wtime() - t0 < 60)
        MPI_Request_get_status_all(4, arr, &flag, sts);
    CHECK(flag && arr[1] != MPI_REQUEST_NULL && arr[2] != MPI_REQUEST_NULL,
          "get_status_all: flag %d", flag);
    CHECK(sts[2].MPI_TAG == 22 && sts[3].MPI_TAG == 23 && sts[0].MPI_SOURCE == MPI_ANY_SOURCE,
          "get_status_all statuses: %d %d %d", sts[2].MPI_TAG, sts[3].MPI_TAG,
          sts[0].MPI_SOURCE);
    MPI_Request_get_status_some(4, arr, &out, ind, sts);
    CHECK(out == 3 && ind[0] == 1 && ind[1] == 2 && ind[2] == 3, "get_status_some: %d", out);
    MPI_Request_get_status_any(4, arr, &idx, &flag, &st);
    CHECK(flag && idx == 1, "get_status_any: flag %d idx %d", flag, idx);
    MPI_Waitall(4, arr, sts);
    CHECK(ya == left + 10 && yb == left + 10 && sts[3].MPI_TAG == 23, "Waitall after: %d %d",
          ya, yb);
    /* All null: any gives MPI_UNDEFINED with flag set, some MPI_UNDEFINED. */
    MPI_Request_get_status_any(4, arr, &idx, &flag, &st);
    CHECK(flag && idx == MPI_UNDEFINED, "any over nulls: flag %d idx %d", flag, idx);
    MPI_Request_get_status_some(4, arr, &out, ind, MPI_STATUSES_IGNORE);
    CHECK(out == MPI_UNDEFINED, "some over nulls: %d", out);
    int rc = MPI_Request_get_status(MPI_REQUEST_NULL, NULL, &st);
    CHECK(err_class(rc) == MPI_ERR_ARG, "get_status without flag: %d", rc);
}

/* Every kind in one array, completed by each array call in turn. */
static void mixed_kinds(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int ps = rank, pr = -1, isr_s = rank * 2, isr_r = -1, ab = rank, ar = -1, p2 = -1;
    MPI_Request rq[7], pers_s, pers_r;
    MPI_Send_init(&ps, 1, MPI_INT, right, 31, MPI_COMM_WORLD, &pers_s);
    MPI_Recv_init(&pr, 1, MPI_INT, left, 31, MPI_COMM_WORLD, &pers_r);
    for (int round = 0; round < 4; round++) {
        pr = isr_r = ar = p2 = -1;
        MPI_Start(&pers_r);
        MPI_Start(&pers_s);
        rq[0] = pers_r;
        rq[1] = pers_s;
        MPI_Isendrecv(&isr_s, 1, MPI_INT, right, 32, &isr_r, 1, MPI_INT, left, 32,
                      MPI_COMM_WORLD, &rq[2]);
        MPI_Iallreduce(&ab, &ar, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[3]);
        MPI_Grequest_start(gq, gf, gc, NULL, &rq[4]);
        MPI_Grequest_complete(rq[4]);
        MPI_Irecv(&p2, 1, MPI_INT, left, 33, MPI_COMM_WORLD, &rq[5]);
        MPI_Request inactive;
        MPI_Recv_init(&p2, 1, MPI_INT, left, 34, MPI_COMM_WORLD, &inactive);
        rq[6] = inactive;
        MPI_Send(&ps, 1, MPI_INT, right, 33, MPI_COMM_WORLD);
        int done = 0, n = 0, ind[7], flag;
        MPI_Status sts[7];
        double t0 = MPI_Wtime();
        switch (round) {
        case 0:
            MPI_Waitall(7, rq, sts);
            done = 7;
            break;
        case 1:
            while (done < 6 && MPI_Wtime() - t0 < 60) {
                MPI_Waitsome(7, rq, &n, ind, sts);
                done += n;
            }
            break;
        case 2:
            while (done < 6 && MPI_Wtime() - t0 < 60) {
                MPI_Testany(7, rq, &n, &flag, sts);
                if (flag && n != MPI_UNDEFINED)
                    done++;
            }
            MPI_Waitany(7, rq, &n, sts);
            CHECK(n == MPI_UNDEFINED, "Waitany after all done: %d", n);
            break;
        default:
            flag = 0;
            while (!flag && MPI_Wtime() - t0 < 60)
                MPI_Testall(7, rq, &flag, sts);
            done = 7;
            break;
        }
        CHECK(done >= 6, "round %d: %d completed", round, done);
        CHECK(pr == left && isr_r == left * 2 && ar == size * (size - 1) / 2 && p2 == left,
              "round %d: %d %d %d %d", round, pr, isr_r, ar, p2);
        CHECK(rq[0] == pers_r && rq[1] == pers_s && rq[6] == inactive,
              "round %d: persistent handles changed", round);
        CHECK(rq[2] == MPI_REQUEST_NULL && rq[3] == MPI_REQUEST_NULL &&
                  rq[4] == MPI_REQUEST_NULL && rq[5] == MPI_REQUEST_NULL,
              "round %d: nonpersistent handles left", round);
        MPI_Request_free(&inactive);
    }
    MPI_Request_free(&pers_s);
    MPI_Request_free(&pers_r);
}

/* MPI_Status_set_elements on a struct of mixed kinds. */
static void set_elements(void)
{
    struct {
        int i;
        double d[2];
        char c;
    } s;
    int bl[3] = { 1, 2, 1 };
    MPI_Aint dis[3] = { (char *)&s.i - (char *)&s, (char *)s.d - (char *)&s,
                        (char *)&s.c - (char *)&s };
    MPI_Datatype ty[3] = { MPI_INT, MPI_DOUBLE, MPI_CHAR }, st_t;
    MPI_Type_create_struct(3, bl, dis, ty, &st_t);
    MPI_Type_commit(&st_t);
    MPI_Status st;
    /* 4 basic elements per struct; 9 = two structs and one int. */
    int n = -1, cnt = -1;
    MPI_Status_set_elements(&st, st_t, 9);
    MPI_Get_elements(&st, st_t, &n);
    MPI_Get_count(&st, st_t, &cnt);
    CHECK(n == 9 && cnt == MPI_UNDEFINED, "9 elements: got %d, count %d", n, cnt);
    MPI_Count nc = -1;
    MPI_Status_set_elements_c(&st, st_t, 8);
    MPI_Get_elements_c(&st, st_t, &nc);
    MPI_Get_count(&st, st_t, &cnt);
    CHECK(nc == 8 && cnt == 2, "8 elements: got %lld, count %d", (long long)nc, cnt);
    MPI_Status_set_elements_x(&st, st_t, 6); /* two structs' first... int + 2 doubles */
    MPI_Get_elements_x(&st, st_t, &nc);
    CHECK(nc == 6, "6 elements: %lld", (long long)nc);
    MPI_Status_set_elements(&st, MPI_DOUBLE, 3);
    MPI_Get_count(&st, MPI_DOUBLE, &cnt);
    CHECK(cnt == 3, "3 doubles: count %d", cnt);
    MPI_Status_set_elements_c(&st, MPI_CHAR, (MPI_Count)1 << 33);
    MPI_Get_count_c(&st, MPI_CHAR, &nc);
    MPI_Get_count(&st, MPI_CHAR, &cnt);
    CHECK(nc == (MPI_Count)1 << 33 && cnt == MPI_UNDEFINED, "2^33 chars: %lld / %d",
          (long long)nc, cnt);
    int rc = MPI_Status_set_elements(&st, st_t, -1);
    CHECK(err_class(rc) == MPI_ERR_COUNT, "negative elements: %d", rc);
    rc = MPI_Status_set_elements(&st, MPI_DATATYPE_NULL, 1);
    CHECK(err_class(rc) == MPI_ERR_TYPE, "null type: %d", rc);
    rc = MPI_Get_count(&st, MPI_DATATYPE_NULL, &cnt);
    CHECK(err_class(rc) == MPI_ERR_TYPE, "Get_count null type: %d", rc);
    MPI_Type_free(&st_t);

    int v = -1, flag = -1;
    MPI_Status_set_error(&st, MPI_ERR_TAG);
    MPI_Status_get_error(&st, &v);
    CHECK(v == MPI_ERR_TAG, "get_error %d", v);
    MPI_Status_set_cancelled(&st, 1);
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag == 1, "cancelled %d", flag);
    MPI_Status_set_cancelled(&st, 0);
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag == 0, "not cancelled %d", flag);
    rc = MPI_Status_get_source(NULL, &v);
    CHECK(err_class(rc) == MPI_ERR_ARG, "get_source(NULL): %d", rc);
    rc = MPI_Status_set_tag(NULL, 1);
    CHECK(err_class(rc) == MPI_ERR_ARG, "set_tag(NULL): %d", rc);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    get_status_keeps(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    mixed_kinds(rank, size);
    set_elements();
    return mtest_finish();
}
