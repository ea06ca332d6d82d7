/*
 * A pending operation keeps its datatype alive: MPI_Type_free of a derived
 * type while a non-contiguous receive (eager and rendezvous sizes) or a
 * nonblocking collective still uses it must not lose or corrupt the data
 * (the type is freed only when the last operation using it completes).
 * Needs >= 2 ranks.
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

static int rank;

/* Every other int of 2n: a vector type the receive unpacks on completion. */
static void one_size(int n, int tag)
{
    int *buf = calloc((size_t)(2 * n), sizeof(int));
    if (rank == 0) {
        int *src = malloc((size_t)n * sizeof(int));
        for (int i = 0; i < n; i++)
            src[i] = i * 7 + tag;
        /* Sent only after rank 1 has posted and freed its type. */
        MPI_Recv(NULL, 0, MPI_BYTE, 1, tag + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(src, n, MPI_INT, 1, tag, MPI_COMM_WORLD);
        free(src);
    } else if (rank == 1) {
        MPI_Datatype vec;
        MPI_Type_vector(n, 1, 2, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        MPI_Request rq;
        MPI_Irecv(buf, 1, vec, 0, tag, MPI_COMM_WORLD, &rq);
        MPI_Type_free(&vec);
        CHECK(vec == MPI_DATATYPE_NULL, "handle not nulled");
        /* Churn the allocator so freed memory would be reused. */
        for (int k = 0; k < 64; k++) {
            MPI_Datatype t;
            MPI_Type_contiguous(k + 1, MPI_INT, &t);
            MPI_Type_commit(&t);
            MPI_Type_free(&t);
        }
        MPI_Send(NULL, 0, MPI_BYTE, 0, tag + 1, MPI_COMM_WORLD);
        MPI_Status st;
        MPI_Wait(&rq, &st);
        int cnt = -1;
        MPI_Get_count(&st, MPI_INT, &cnt);
        CHECK(cnt == n, "count %d, expected %d", cnt, n);
        int bad = 0;
        for (int i = 0; i < n && bad < 3; i++)
            if (buf[2 * i] != i * 7 + tag || buf[2 * i + 1] != 0) {
                CHECK(0, "n=%d element %d: got %d/%d", n, i, buf[2 * i], buf[2 * i + 1]);
                bad++;
            }
    }
    free(buf);
}

/* An Ibcast on a derived type freed before the wait. */
static void nbc_type(void)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    enum { N = 1000 };
    int buf[2 * N];
    memset(buf, 0, sizeof buf);
    if (rank == 0)
        for (int i = 0; i < N; i++)
            buf[2 * i] = i + 5;
    MPI_Datatype vec;
    MPI_Type_vector(N, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Request rq;
    MPI_Ibcast(buf, 1, vec, 0, MPI_COMM_WORLD, &rq);
    MPI_Type_free(&vec);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    for (int i = 0; i < N; i++)
        if (buf[2 * i] != i + 5 || buf[2 * i + 1] != 0) {
            CHECK(0, "ibcast element %d: %d/%d", i, buf[2 * i], buf[2 * i + 1]);
            break;
        }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    one_size(16, 10);          /* eager */
    one_size(300000, 20);      /* rendezvous */
    nbc_type();
    return mtest_finish();
}
