/*
 * Matching and ordering: non-overtaking per pair (eager and rendezvous
 * sizes mixed), tag selection out of order, MPI_ANY_SOURCE/ANY_TAG,
 * zero-byte and PROC_NULL messages, probes, the wait/test families,
 * cancel, Ssend semantics, Sendrecv(_replace), Rsend, Bsend, communicator
 * isolation and a non-contiguous datatype. Needs >= 2 ranks.
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

static int rank, size;

static void fill(int *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        b[i] = seed * 7919 + i;
}

static int verify(const int *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        if (b[i] != seed * 7919 + i)
            return 0;
    return 1;
}

/* 1 -> 0: 60 messages, sizes alternating between eager and rendezvous. */
static void order_test(void)
{
    enum { N = 60 };
    int big = 50000; /* ints: 200 KB, beyond every eager limit */
    int *b = malloc(sizeof(int) * (size_t)big);
    if (rank == 1) {
        MPI_Request rq[N];
        int *bufs[N];
        for (int i = 0; i < N; i++) {
            int n = (i % 3 == 0) ? big : 1 + i;
            bufs[i] = malloc(sizeof(int) * (size_t)n);
            fill(bufs[i], n, i);
            MPI_Isend(bufs[i], n, MPI_INT, 0, 5, MPI_COMM_WORLD, &rq[i]);
        }
        MPI_Waitall(N, rq, MPI_STATUSES_IGNORE);
        for (int i = 0; i < N; i++)
            free(bufs[i]);
    } else if (rank == 0) {
        for (int i = 0; i < N; i++) {
            MPI_Status st;
            int n = (i % 3 == 0) ? big : 1 + i, cnt;
            MPI_Recv(b, big, MPI_INT, i % 2 ? MPI_ANY_SOURCE : 1, 5, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_INT, &cnt);
            CHECK(cnt == n && verify(b, n, i), "message %d out of order (count %d)", i, cnt);
        }
    }
    free(b);
}

/* Tags select messages regardless of arrival order. */
static void tag_test(void)
{
    if (rank == 1) {
        for (int t = 0; t < 5; t++)
            MPI_Send(&t, 1, MPI_INT, 0, 100 + t, MPI_COMM_WORLD);
    } else if (rank == 0) {
        for (int t = 4; t >= 0; t--) {
            int v = -1;
            MPI_Recv(&v, 1, MPI_INT, 1, 100 + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(v == t, "tag %d got %d", 100 + t, v);
        }
        MPI_Status st;
        int v;
        MPI_Send(&rank, 1, MPI_INT, 1, 200, MPI_COMM_WORLD);
        MPI_Recv(&v, 1, MPI_INT, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        CHECK(st.MPI_TAG == 201 && v == 201, "any tag: tag %d", st.MPI_TAG);
    }
    if (rank == 1) {
        int v, w = 201;
        MPI_Recv(&v, 1, MPI_INT, 0, 200, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&w, 1, MPI_INT, 0, 201, MPI_COMM_WORLD);
    }
}

/* Everyone sends to 0; each source is seen exactly once via ANY_SOURCE. */
static void any_source_test(void)
{
    if (rank != 0) {
        MPI_Send(&rank, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
        return;
    }
    char *seen = calloc((size_t)size, 1);
    for (int i = 1; i < size; i++) {
        MPI_Status st;
        int v = -1;
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &st);
        CHECK(v == st.MPI_SOURCE && v > 0 && v < size && !seen[v], "any source got %d from %d",
              v, st.MPI_SOURCE);
        if (v > 0 && v < size)
            seen[v] = 1;
    }
    free(seen);
}

static void zero_and_null_test(void)
{
    MPI_Status st;
    int cnt = -1;
    if (rank == 0) {
        MPI_Send(NULL, 0, MPI_INT, 1, 9, MPI_COMM_WORLD);
        MPI_Ssend(NULL, 0, MPI_BYTE, 1, 10, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Recv(NULL, 0, MPI_INT, 0, 9, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_INT, &cnt);
        CHECK(cnt == 0 && st.MPI_SOURCE == 0 && st.MPI_TAG == 9, "zero-byte: count %d", cnt);
        int big[4];
        MPI_Recv(big, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_INT, &cnt);
        CHECK(cnt == 0 && st.MPI_TAG == 10, "zero-byte ssend: count %d tag %d", cnt, st.MPI_TAG);
    }
    int v = 5;
    MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
    MPI_Recv(&v, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && cnt == 0 && v == 5,
          "PROC_NULL receive");
    MPI_Request rq;
    MPI_Irecv(&v, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, &st);
    CHECK(rq == MPI_REQUEST_NULL && st.MPI_SOURCE == MPI_PROC_NULL, "PROC_NULL irecv");
}

static void probe_test(void)
{
    if (rank == 1) {
        int b[33];
        fill(b, 33, 3);
        MPI_Send(b, 33, MPI_INT, 0, 11, MPI_COMM_WORLD);
    } else if (rank == 0) {
        MPI_Status st;
        int cnt, flag = 0;
        MPI_Probe(MPI_ANY_SOURCE, 11, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_INT, &cnt);
        CHECK(cnt == 33 && st.MPI_SOURCE == 1, "probe count %d", cnt);
        MPI_Iprobe(1, 11, MPI_COMM_WORLD, &flag, &st);
        CHECK(flag, "iprobe after probe");
        MPI_Iprobe(1, 12, MPI_COMM_WORLD, &flag, &st);
        CHECK(!flag, "iprobe of a tag never sent");
        int *b = malloc(sizeof(int) * (size_t)cnt);
        MPI_Recv(b, cnt, MPI_INT, st.MPI_SOURCE, 11, MPI_COMM_WORLD, &st);
        CHECK(verify(b, 33, 3), "probed message content");
        int el;
        MPI_Get_elements(&st, MPI_INT, &el);
        CHECK(el == 33, "get_elements %d", el);
        MPI_Get_count(&st, MPI_DOUBLE, &el);
        CHECK(el == MPI_UNDEFINED, "count of 132 bytes in doubles: %d", el);
        free(b);
    }
}

/* The wait/test families over 0 <-> 1 exchanges. */
static void completion_test(void)
{
    if (rank > 1)
        return;
    int peer = 1 - rank;
    enum { N = 8 };
    int out[N], in[N];
    MPI_Request rq[2 * N];
    MPI_Status st[2 * N];
    for (int i = 0; i < N; i++) {
        out[i] = rank * 100 + i;
        in[i] = -1;
        MPI_Irecv(&in[i], 1, MPI_INT, peer, 20 + i, MPI_COMM_WORLD, &rq[i]);
    }
    for (int i = 0; i < N; i++)
        MPI_Isend(&out[i], 1, MPI_INT, peer, 20 + i, MPI_COMM_WORLD, &rq[N + i]);
    int done = 0, idx, flag, outc, indices[2 * N];
    /* Waitany until one, Testany, then Waitsome/Testsome, then Waitall. */
    MPI_Waitany(2 * N, rq, &idx, &st[0]);
    CHECK(idx >= 0 && idx < 2 * N && rq[idx] == MPI_REQUEST_NULL, "waitany index %d", idx);
    done++;
    MPI_Testany(2 * N, rq, &idx, &flag, &st[0]);
    if (flag && idx != MPI_UNDEFINED)
        done++;
    MPI_Waitsome(2 * N, rq, &outc, indices, st);
    CHECK(outc >= 1, "waitsome outcount %d", outc);
    done += outc;
    MPI_Testsome(2 * N, rq, &outc, indices, st);
    if (outc != MPI_UNDEFINED)
        done += outc;
    do {
        MPI_Testall(2 * N, rq, &flag, st);
    } while (!flag);
    for (int i = 0; i < 2 * N; i++)
        CHECK(rq[i] == MPI_REQUEST_NULL, "request %d not null after testall", i);
    for (int i = 0; i < N; i++)
        CHECK(in[i] == peer * 100 + i, "exchange %d got %d", i, in[i]);
    MPI_Waitall(2 * N, rq, st); /* all null: returns at once */
    MPI_Waitany(2 * N, rq, &idx, &st[0]);
    CHECK(idx == MPI_UNDEFINED, "waitany on nulls %d", idx);
}

static void cancel_test(void)
{
    MPI_Request rq;
    MPI_Status st;
    int v, flag;
    MPI_Irecv(&v, 1, MPI_INT, 0, 999, MPI_COMM_WORLD, &rq);
    MPI_Cancel(&rq);
    MPI_Wait(&rq, &st);
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag, "receive not cancelled");
    /* A freed receive still completes into the buffer. */
    if (rank < 2) {
        int w = -1, x = 77;
        MPI_Irecv(&w, 1, MPI_INT, 1 - rank, 998, MPI_COMM_WORLD, &rq);
        MPI_Request_free(&rq);
        CHECK(rq == MPI_REQUEST_NULL, "request_free leaves a handle");
        MPI_Send(&x, 1, MPI_INT, 1 - rank, 998, MPI_COMM_WORLD);
        MPI_Sendrecv(&x, 1, MPI_INT, 1 - rank, 997, &v, 1, MPI_INT, 1 - rank, 997,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        while (w != 77)
            MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    }
}

/* Issend cannot complete before the receive is posted: rank 0 posts it
 * only after rank 1 tells it, following many unsuccessful tests. */
static void ssend_test(void)
{
    if (rank == 1) {
        int v = 5, flag = 0, go = 1;
        MPI_Request rq;
        MPI_Issend(&v, 1, MPI_INT, 0, 30, MPI_COMM_WORLD, &rq);
        for (int i = 0; i < 2000 && !flag; i++)
            MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
        CHECK(!flag, "Issend completed before a receive was posted");
        MPI_Send(&go, 1, MPI_INT, 0, 31, MPI_COMM_WORLD);
        if (!flag)
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
    } else if (rank == 0) {
        int v = 0, go;
        MPI_Recv(&go, 1, MPI_INT, 1, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(&v, 1, MPI_INT, 1, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(v == 5, "ssend value %d", v);
    }
}

static void sendrecv_test(void)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int v = rank, w = -1;
    MPI_Status st;
    MPI_Sendrecv(&v, 1, MPI_INT, next, 40, &w, 1, MPI_INT, prev, 40, MPI_COMM_WORLD, &st);
    CHECK(w == prev && st.MPI_SOURCE == prev, "sendrecv got %d", w);
    int buf[3] = { rank, rank, rank };
    MPI_Sendrecv_replace(buf, 3, MPI_INT, next, 41, prev, 41, MPI_COMM_WORLD, &st);
    CHECK(buf[0] == prev && buf[2] == prev, "sendrecv_replace got %d", buf[0]);
}

static void modes_test(void)
{
    if (rank > 1)
        return;
    int peer = 1 - rank, v = -1, x = 3, ready;
    /* Rsend: 1 posts, says so, 0 rsends. */
    if (rank == 1) {
        MPI_Request rq;
        MPI_Irecv(&v, 1, MPI_INT, 0, 50, MPI_COMM_WORLD, &rq);
        MPI_Send(&x, 1, MPI_INT, 0, 51, MPI_COMM_WORLD);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        CHECK(v == 3, "rsend value %d", v);
    } else {
        MPI_Recv(&ready, 1, MPI_INT, 1, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Rsend(&x, 1, MPI_INT, 1, 50, MPI_COMM_WORLD);
    }
    /* Bsend from an attached buffer: returns before any receive. */
    int bsize = 3 * (1000 * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    char *bbuf = malloc((size_t)bsize);
    MPI_Buffer_attach(bbuf, bsize);
    int data[1000];
    fill(data, 1000, 9);
    for (int i = 0; i < 3; i++)
        MPI_Bsend(data, 1000, MPI_INT, peer, 60 + i, MPI_COMM_WORLD);
    fill(data, 1000, 0); /* the copies went out, not this buffer */
    for (int i = 2; i >= 0; i--) {
        int in[1000];
        MPI_Recv(in, 1000, MPI_INT, peer, 60 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(verify(in, 1000, 9), "bsend %d content", i);
    }
    void *det;
    int dsize;
    MPI_Buffer_detach(&det, &dsize);
    CHECK(det == bbuf && dsize == bsize, "detach gave %p/%d", det, dsize);
    free(bbuf);
}

/* The same tag on two communicators never crosses over. */
static void comm_isolation_test(void)
{
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    if (rank == 1) {
        int a = 1, b = 2;
        MPI_Send(&a, 1, MPI_INT, 0, 70, dup);
        MPI_Send(&b, 1, MPI_INT, 0, 70, MPI_COMM_WORLD);
    } else if (rank == 0) {
        int a = 0, b = 0;
        /* Source 1 only: ranks done early send mtest_finish() counts on WORLD. */
        MPI_Recv(&b, 1, MPI_INT, 1, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(&a, 1, MPI_INT, 1, 70, dup, MPI_STATUS_IGNORE);
        CHECK(a == 1 && b == 2, "dup isolation a=%d b=%d", a, b);
    }
    MPI_Comm_free(&dup);
    CHECK(dup == MPI_COMM_NULL, "comm_free");
}

/* A strided column sent with a vector type, received contiguous. */
static void vector_test(void)
{
    if (rank > 1)
        return;
    MPI_Datatype col;
    MPI_Type_vector(10, 1, 4, MPI_INT, &col);
    MPI_Type_commit(&col);
    int m[40], c[10];
    for (int i = 0; i < 40; i++)
        m[i] = i;
    if (rank == 0) {
        MPI_Send(m + 1, 1, col, 1, 80, MPI_COMM_WORLD);
        MPI_Recv(m, 1, col, 1, 81, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < 10; i++)
            CHECK(m[4 * i] == -i && m[4 * i + 1] == 4 * i + 1, "vector recv row %d", i);
    } else {
        MPI_Recv(c, 10, MPI_INT, 0, 80, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < 10; i++)
            CHECK(c[i] == 4 * i + 1, "vector send element %d = %d", i, c[i]);
        for (int i = 0; i < 10; i++)
            c[i] = -i;
        MPI_Send(c, 10, MPI_INT, 0, 81, MPI_COMM_WORLD);
    }
    MPI_Type_free(&col);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        fprintf(stderr, "p2p_match needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    order_test();
    tag_test();
    any_source_test();
    zero_and_null_test();
    probe_test();
    completion_test();
    cancel_test();
    ssend_test();
    sendrecv_test();
    modes_test();
    comm_isolation_test();
    vector_test();
    return mtest_finish();
}
