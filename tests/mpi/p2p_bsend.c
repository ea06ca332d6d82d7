/*
 * Buffered sends and their buffers: the process buffer (attach, detach,
 * flush, iflush, _c forms), a full buffer (MPI_ERR_BUFFER, nothing sent),
 * MPI_BUFFER_AUTOMATIC (the library allocates: many large messages with
 * no buffer of the user's; detach returns MPI_BUFFER_AUTOMATIC), MPI-4.1
 * communicator buffers (they win over the process buffer, are not
 * inherited by a duplicate, are flushed when the communicator is freed),
 * MPI_Ibsend and MPI_Bsend_init. Messages go to the right neighbour and
 * are received after the sends returned. Any number of ranks.
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

/* Receives n messages of len ints on tag from left, checking contents. */
static void recv_check(int n, int len, int tag, int left, MPI_Comm comm, const char *what)
{
    int *b = malloc((size_t)len * sizeof(int)), bad = 0;
    for (int k = 0; k < n; k++) {
        MPI_Recv(b, len, MPI_INT, left, tag, comm, MPI_STATUS_IGNORE);
        for (int i = 0; i < len; i++)
            bad += b[i] != left * 7 + k + i;
    }
    CHECK(bad == 0, "%s: %d wrong elements", what, bad);
    free(b);
}

static int bsend_n(int n, int len, int tag, int right, int rank, MPI_Comm comm)
{
    int *b = malloc((size_t)len * sizeof(int)), rc = MPI_SUCCESS;
    for (int k = 0; k < n && rc == MPI_SUCCESS; k++) {
        for (int i = 0; i < len; i++)
            b[i] = rank * 7 + k + i;
        rc = MPI_Bsend(b, len, MPI_INT, right, tag, comm);
        /* The data was copied: scribbling over it now changes nothing. */
        memset(b, 0, (size_t)len * sizeof(int));
    }
    free(b);
    return rc;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int x = 1;

    /* No buffer attached yet. */
    int rc = MPI_Bsend(&x, 1, MPI_INT, right, 0, MPI_COMM_WORLD);
    CHECK(err_class(rc) == MPI_ERR_BUFFER, "Bsend without a buffer: %d", rc);

    /* A user buffer for 8 messages of 100 ints. */
    int len = 100, msz = len * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
    MPI_Count bsz = 8 * (MPI_Count)msz;
    char *ubuf = malloc((size_t)bsz);
    rc = MPI_Buffer_attach_c(ubuf, bsz);
    CHECK(rc == MPI_SUCCESS, "attach_c %d", rc);
    rc = MPI_Buffer_attach(ubuf, msz);
    CHECK(err_class(rc) == MPI_ERR_BUFFER, "second attach: %d", rc);
    rc = bsend_n(8, len, 1, right, rank, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "8 Bsends: %d", rc);
    /* Full until the receiver takes them; the failed one is not sent. */
    int big[2000];
    rc = MPI_Bsend(big, 2000, MPI_INT, right, 1, MPI_COMM_WORLD);
    CHECK(err_class(rc) == MPI_ERR_BUFFER, "Bsend larger than the buffer: %d", rc);
    recv_check(8, len, 1, left, MPI_COMM_WORLD, "process buffer");
    rc = MPI_Buffer_flush();
    CHECK(rc == MPI_SUCCESS, "flush %d", rc);
    /* Refilled after the flush, then a nonblocking flush. */
    bsend_n(8, len, 2, right, rank, MPI_COMM_WORLD);
    MPI_Request fr;
    MPI_Buffer_iflush(&fr);
    recv_check(8, len, 2, left, MPI_COMM_WORLD, "after flush");
    MPI_Wait(&fr, MPI_STATUS_IGNORE);
    CHECK(fr == MPI_REQUEST_NULL, "iflush request not freed");
    /* Ibsend completes at once; Bsend_init restarts through the buffer. */
    MPI_Request ib, pb;
    int y = 5;
    MPI_Ibsend(&y, 1, MPI_INT, right, 3, MPI_COMM_WORLD, &ib);
    int flag = 0;
    MPI_Test(&ib, &flag, MPI_STATUS_IGNORE);
    CHECK(flag, "Ibsend not complete at once");
    MPI_Bsend_init(&y, 1, MPI_INT, right, 3, MPI_COMM_WORLD, &pb);
    for (int k = 0; k < 5; k++) {
        y = 6 + k;
        MPI_Start(&pb);
        MPI_Wait(&pb, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&pb);
    for (int k = 0; k < 6; k++) {
        int got = -1;
        MPI_Recv(&got, 1, MPI_INT, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(got == 5 + k, "Ibsend/Bsend_init message %d: %d", k, got);
    }
    void *back;
    MPI_Count backsz = -1;
    rc = MPI_Buffer_detach_c(&back, &backsz);
    CHECK(rc == MPI_SUCCESS && back == ubuf && backsz == bsz, "detach_c: %p %lld", back,
          (long long)backsz);
    int isz = -1;
    rc = MPI_Buffer_detach(&back, &isz);
    CHECK(rc == MPI_SUCCESS && back == NULL && isz == 0, "detach of nothing: %p %d", back, isz);

    /* Automatic: 64 messages of 64 KiB with no buffer of the user's. */
    rc = MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0);
    CHECK(rc == MPI_SUCCESS, "attach automatic: %d", rc);
    rc = bsend_n(64, 16384, 4, right, rank, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "automatic Bsends: %d", rc);
    recv_check(64, 16384, 4, left, MPI_COMM_WORLD, "automatic");
    rc = MPI_Buffer_detach(&back, &isz);
    CHECK(rc == MPI_SUCCESS && back == MPI_BUFFER_AUTOMATIC, "detach automatic: %p", back);

    /* Communicator buffers: the process buffer is tiny, c's is large. */
    char tiny[64];
    MPI_Buffer_attach(tiny, (int)sizeof tiny);
    MPI_Comm c, d;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    char *cbuf = malloc((size_t)bsz);
    rc = MPI_Comm_attach_buffer(c, cbuf, (int)bsz);
    CHECK(rc == MPI_SUCCESS, "Comm_attach_buffer %d", rc);
    rc = MPI_Comm_attach_buffer(c, cbuf, (int)bsz);
    CHECK(err_class(rc) == MPI_ERR_BUFFER, "second Comm_attach_buffer: %d", rc);
    MPI_Comm_dup(c, &d);
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    rc = bsend_n(4, len, 5, right, rank, c);
    CHECK(rc == MPI_SUCCESS, "Bsend on c with its own buffer: %d", rc);
    rc = bsend_n(1, len, 5, right, rank, d);
    CHECK(err_class(rc) == MPI_ERR_BUFFER, "the duplicate inherited the buffer: %d", rc);
    rc = bsend_n(1, len, 5, right, rank, MPI_COMM_WORLD);
    CHECK(err_class(rc) == MPI_ERR_BUFFER, "WORLD used c's buffer: %d", rc);
    recv_check(4, len, 5, left, c, "communicator buffer");
    MPI_Request cf;
    rc = MPI_Comm_iflush_buffer(c, &cf);
    CHECK(rc == MPI_SUCCESS, "Comm_iflush_buffer %d", rc);
    MPI_Wait(&cf, MPI_STATUS_IGNORE);
    rc = MPI_Comm_flush_buffer(d); /* nothing attached: nothing to do */
    CHECK(rc == MPI_SUCCESS, "Comm_flush_buffer without buffer: %d", rc);
    MPI_Count csz = -1;
    rc = MPI_Comm_detach_buffer_c(c, &back, &csz);
    CHECK(rc == MPI_SUCCESS && back == cbuf && csz == bsz, "Comm_detach_buffer_c %p %lld", back,
          (long long)csz);
    /* Attached again, used, and the communicator freed with the buffer
     * still attached: freeing flushes it, so the memory may go at once
     * (under ASan a send still reading it would be caught). */
    MPI_Comm_attach_buffer_c(c, cbuf, bsz);
    int *in = malloc(4 * (size_t)len * sizeof(int));
    MPI_Request rr[4];
    for (int k = 0; k < 4; k++)
        MPI_Irecv(in + k * len, len, MPI_INT, left, 6, c, &rr[k]);
    bsend_n(4, len, 6, right, rank, c);
    MPI_Comm_free(&c);
    memset(cbuf, 0, (size_t)bsz);
    free(cbuf);
    MPI_Waitall(4, rr, MPI_STATUSES_IGNORE);
    int bad = 0;
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < len; i++)
            bad += in[k * len + i] != left * 7 + k + i;
    CHECK(bad == 0, "sent through a freed communicator's buffer: %d wrong", bad);
    free(in);
    MPI_Comm_free(&d);
    MPI_Buffer_detach(&back, &isz);
    CHECK(back == tiny && isz == (int)sizeof tiny, "tiny detach %p %d", back, isz);
    rc = MPI_Comm_attach_buffer(MPI_COMM_NULL, ubuf, 10);
    CHECK(err_class(rc) == MPI_ERR_COMM, "attach to MPI_COMM_NULL: %d", rc);
    rc = MPI_Buffer_attach(ubuf, -1);
    CHECK(err_class(rc) == MPI_ERR_ARG, "negative size: %d", rc);
    free(ubuf);
    return mtest_finish();
}
