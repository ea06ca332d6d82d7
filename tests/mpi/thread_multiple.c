/*
 * MPI_THREAD_MULTIPLE: MPI_Init_thread(MULTIPLE) provides it, MPI_Query_thread
 * agrees and MPI_Is_thread_main is false in the other threads. Then
 * NTHREADS threads per rank call MPI at once, with no lock of their own,
 * for ROUNDS rounds (argv[1]) each:
 *   - point-to-point with the same thread of the next and previous ranks
 *     on MPI_COMM_WORLD (its own tag), in turn blocking (MPI_Sendrecv),
 *     a receive from MPI_ANY_SOURCE, nonblocking with MPI_Waitall, and
 *     synchronous, of 8 bytes to 200 KiB (every transport path);
 *   - collectives on the thread's own duplicate of MPI_COMM_WORLD, made
 *     before the threads start (allreduce, bcast from a moving root,
 *     iallreduce, barrier), and now and then a duplicate of it made and
 *     freed while the other threads work (context ids agreed at once);
 *   - passive-target RMA on the thread's own window: an exclusive lock,
 *     a put to the next rank, unlock, a shared lock, a get back, unlock.
 * Every byte received is checked; the job must neither hang nor mix up
 * the threads' messages.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define NTHREADS 4
#define MAXBYTES (200 * 1024)
#define WIN_INTS 4096

static int rank, size, rounds = 150;
static MPI_Comm tcomm[NTHREADS];
static MPI_Win twin[NTHREADS];
static int *twin_mem[NTHREADS];
static int thread_errs[NTHREADS];
static const size_t sizes[] = { 8, 1000, 9000, 70000, MAXBYTES };

/* The byte k of the message thread t of rank r sends in round i. */
static unsigned char pattern(int r, int t, int i, size_t k)
{
    return (unsigned char)(r * 131 + t * 31 + i * 7 + k * 13 + (k >> 8));
}

static void fill(unsigned char *b, size_t n, int r, int t, int i)
{
    for (size_t k = 0; k < n; k++)
        b[k] = pattern(r, t, i, k);
}

/* The number of bytes that differ (first few reported). */
static int check(const unsigned char *b, size_t n, int r, int t, int i, const char *what)
{
    int bad = 0;
    for (size_t k = 0; k < n; k++)
        if (b[k] != pattern(r, t, i, k) && bad++ < 3)
            fprintf(stderr, "rank %d thread %d round %d %s: byte %zu is %u, not %u\n", rank, t,
                    i, what, k, b[k], pattern(r, t, i, k));
    return bad;
}

static int p2p_round(int t, int i, unsigned char *out, unsigned char *in)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, errs = 0;
    size_t n = sizes[(i + t) % (sizeof sizes / sizeof sizes[0])];
    MPI_Status st;
    MPI_Request rq[2];
    fill(out, n, rank, t, i);
    memset(in, 0xee, n);
    switch (i % 4) {
    case 0:
        MPI_Sendrecv(out, (int)n, MPI_BYTE, next, t, in, (int)n, MPI_BYTE, prev, t,
                     MPI_COMM_WORLD, &st);
        break;
    case 1:
        /* Only the previous rank's thread t sends this thread tag t. */
        MPI_Irecv(in, (int)n, MPI_BYTE, MPI_ANY_SOURCE, t, MPI_COMM_WORLD, &rq[0]);
        MPI_Send(out, (int)n, MPI_BYTE, next, t, MPI_COMM_WORLD);
        MPI_Wait(&rq[0], &st);
        break;
    case 2:
        MPI_Isend(out, (int)n, MPI_BYTE, next, t, MPI_COMM_WORLD, &rq[1]);
        MPI_Recv(in, (int)n, MPI_BYTE, MPI_ANY_SOURCE, t, MPI_COMM_WORLD, &st);
        MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
        break;
    default: {
        MPI_Status sts[2];
        MPI_Irecv(in, (int)n, MPI_BYTE, prev, t, MPI_COMM_WORLD, &rq[0]);
        MPI_Issend(out, (int)n, MPI_BYTE, next, t, MPI_COMM_WORLD, &rq[1]);
        MPI_Waitall(2, rq, sts);
        st = sts[0];
    }
    }
    int count = -1;
    MPI_Get_count(&st, MPI_BYTE, &count);
    if (st.MPI_SOURCE != prev || st.MPI_TAG != t || count != (int)n) {
        fprintf(stderr, "rank %d thread %d round %d: source %d tag %d count %d\n", rank, t, i,
                st.MPI_SOURCE, st.MPI_TAG, count);
        errs++;
    }
    return errs + (check(in, n, prev, t, i, "p2p") > 0);
}

static int coll_round(int t, int i)
{
    MPI_Comm c = tcomm[t];
    int errs = 0, v[4], sum[4];
    for (int k = 0; k < 4; k++)
        v[k] = rank * 1000 + t * 100 + i + k;
    MPI_Allreduce(v, sum, 4, MPI_INT, MPI_SUM, c);
    for (int k = 0; k < 4; k++)
        errs += sum[k] != 1000 * size * (size - 1) / 2 + size * (t * 100 + i + k);
    int root = i % size;
    long b[64];
    for (int k = 0; k < 64; k++)
        b[k] = rank == root ? (long)root * 7 + t * 3 + i + k : -1;
    MPI_Bcast(b, 64, MPI_LONG, root, c);
    for (int k = 0; k < 64; k++)
        errs += b[k] != (long)root * 7 + t * 3 + i + k;
    MPI_Request rq;
    int one = 1, total = 0;
    MPI_Iallreduce(&one, &total, 1, MPI_INT, MPI_SUM, c, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    errs += total != size;
    if (i % 10 == 0)
        MPI_Barrier(c);
    if (i % 25 == 0) {
        /* Context ids agreed while other threads agree on theirs. */
        MPI_Comm d;
        int r = -1, s = 0;
        MPI_Comm_dup(c, &d);
        MPI_Allreduce(&rank, &s, 1, MPI_INT, MPI_SUM, d);
        MPI_Comm_rank(d, &r);
        errs += r != rank || s != size * (size - 1) / 2;
        MPI_Comm_free(&d);
    }
    if (errs)
        fprintf(stderr, "rank %d thread %d round %d: %d wrong collective results\n", rank, t,
                i, errs);
    return errs;
}

static int rma_round(int t, int i, int *buf)
{
    int next = (rank + 1) % size, n = 64 + (i * 97) % (WIN_INTS - 64), errs = 0;
    for (int k = 0; k < n; k++)
        buf[k] = rank * 1000000 + t * 100000 + i * 100 + k % 100;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, twin[t]);
    MPI_Put(buf, n, MPI_INT, next, 0, n, MPI_INT, twin[t]);
    MPI_Win_unlock(next, twin[t]);
    memset(buf, 0xee, (size_t)n * sizeof *buf);
    MPI_Win_lock(MPI_LOCK_SHARED, next, 0, twin[t]);
    MPI_Get(buf, n, MPI_INT, next, 0, n, MPI_INT, twin[t]);
    MPI_Win_unlock(next, twin[t]);
    /* Only this rank's thread t writes the next rank's window t. */
    for (int k = 0; k < n; k++)
        if (buf[k] != rank * 1000000 + t * 100000 + i * 100 + k % 100 && errs++ < 3)
            fprintf(stderr, "rank %d thread %d round %d: got %d at %d\n", rank, t, i, buf[k], k);
    return errs > 0;
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg, is_main = 1;
    MPI_Is_thread_main(&is_main);
    if (is_main) {
        fprintf(stderr, "rank %d thread %d: MPI_Is_thread_main says yes\n", rank, t);
        thread_errs[t]++;
    }
    unsigned char *out = malloc(MAXBYTES), *in = malloc(MAXBYTES);
    int *buf = malloc(WIN_INTS * sizeof *buf);
    if (!out || !in || !buf) {
        thread_errs[t]++;
        return NULL;
    }
    for (int i = 0; i < rounds; i++) {
        thread_errs[t] += p2p_round(t, i, out, in);
        thread_errs[t] += coll_round(t, i);
        thread_errs[t] += rma_round(t, i, buf);
    }
    free(out);
    free(in);
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1, level = -1, flag = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1)
        rounds = atoi(argv[1]);
    MPI_Query_thread(&level);
    CHECK(provided == MPI_THREAD_MULTIPLE && level == provided, "provided %d, query %d",
          provided, level);
    MPI_Is_thread_main(&flag);
    CHECK(flag, "the initializing thread is not the main thread");

    for (int t = 0; t < NTHREADS; t++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &tcomm[t]);
        MPI_Alloc_mem(WIN_INTS * sizeof(int), MPI_INFO_NULL, &twin_mem[t]);
        memset(twin_mem[t], 0, WIN_INTS * sizeof(int));
        MPI_Win_create(twin_mem[t], WIN_INTS * sizeof(int), sizeof(int), MPI_INFO_NULL,
                       tcomm[t], &twin[t]);
    }
    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; t++)
        CHECK(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) == 0, "pthread_create");
    for (int t = 0; t < NTHREADS; t++) {
        pthread_join(th[t], NULL);
        CHECK(thread_errs[t] == 0, "thread %d: %d errors", t, thread_errs[t]);
    }
    /* The last put into each of my windows came from the previous rank's
     * thread, in the last round. */
    MPI_Barrier(MPI_COMM_WORLD);
    int prev = (rank + size - 1) % size, last = rounds - 1;
    for (int t = 0; rounds > 0 && t < NTHREADS; t++) {
        int n = 64 + (last * 97) % (WIN_INTS - 64), bad = 0;
        MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, twin[t]);
        for (int k = 0; k < n; k++)
            bad += twin_mem[t][k] != prev * 1000000 + t * 100000 + last * 100 + k % 100;
        MPI_Win_unlock(rank, twin[t]);
        CHECK(bad == 0, "window %d: %d ints not the last put", t, bad);
    }
    for (int t = 0; t < NTHREADS; t++) {
        MPI_Win_free(&twin[t]);
        MPI_Free_mem(twin_mem[t]);
        MPI_Comm_free(&tcomm[t]);
    }
    return mtest_finish();
}
