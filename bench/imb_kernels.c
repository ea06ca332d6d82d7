/* Kernels of the IMB-style benchmarks: one timed loop each (see imb.h). */
#include <stddef.h>
#include <stdlib.h>
#include <strings.h>

#include "imb.h"

static double k_pingpong(const imb_ctx_t *c, long size, long iters)
{
    MPI_Status st;
    int n = (int)size;
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        if (c->rank == 0) {
            MPI_Send(c->sbuf, n, MPI_BYTE, 1, 1, c->comm);
            MPI_Recv(c->rbuf, n, MPI_BYTE, 1, 1, c->comm, &st);
        } else {
            MPI_Recv(c->rbuf, n, MPI_BYTE, 0, 1, c->comm, &st);
            MPI_Send(c->sbuf, n, MPI_BYTE, 0, 1, c->comm);
        }
    }
    return MPI_Wtime() - t0;
}

static double k_pingping(const imb_ctx_t *c, long size, long iters)
{
    MPI_Request rq;
    int n = (int)size, peer = 1 - c->rank;
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        MPI_Isend(c->sbuf, n, MPI_BYTE, peer, 2, c->comm, &rq);
        MPI_Recv(c->rbuf, n, MPI_BYTE, peer, 2, c->comm, MPI_STATUS_IGNORE);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    }
    return MPI_Wtime() - t0;
}

static double k_sendrecv(const imb_ctx_t *c, long size, long iters)
{
    int n = (int)size;
    int right = (c->rank + 1) % c->np, left = (c->rank + c->np - 1) % c->np;
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++)
        MPI_Sendrecv(c->sbuf, n, MPI_BYTE, right, 3, c->rbuf, n, MPI_BYTE, left, 3, c->comm,
                     MPI_STATUS_IGNORE);
    return MPI_Wtime() - t0;
}

static double k_exchange(const imb_ctx_t *c, long size, long iters)
{
    MPI_Request rq[2];
    MPI_Status st[2];
    int n = (int)size;
    int right = (c->rank + 1) % c->np, left = (c->rank + c->np - 1) % c->np;
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        MPI_Isend(c->sbuf, n, MPI_BYTE, left, 4, c->comm, &rq[0]);
        MPI_Isend(c->sbuf, n, MPI_BYTE, right, 4, c->comm, &rq[1]);
        MPI_Recv(c->rbuf, n, MPI_BYTE, left, 4, c->comm, MPI_STATUS_IGNORE);
        MPI_Recv(c->rbuf + size, n, MPI_BYTE, right, 4, c->comm, MPI_STATUS_IGNORE);
        MPI_Waitall(2, rq, st);
    }
    return MPI_Wtime() - t0;
}

static double k_barrier(const imb_ctx_t *c, long size, long iters)
{
    (void)size;
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++)
        MPI_Barrier(c->comm);
    return MPI_Wtime() - t0;
}

/* IMB rotates the root so no rank's position is favoured. */
static double k_bcast(const imb_ctx_t *c, long size, long iters)
{
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++)
        MPI_Bcast(c->sbuf, (int)size, MPI_BYTE, (int)(i % c->np), c->comm);
    return MPI_Wtime() - t0;
}

static double k_allreduce(const imb_ctx_t *c, long size, long iters)
{
    int n = (int)(size / 4);
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++)
        MPI_Allreduce(c->sbuf, c->rbuf, n, MPI_FLOAT, MPI_SUM, c->comm);
    return MPI_Wtime() - t0;
}

static double k_reduce(const imb_ctx_t *c, long size, long iters)
{
    int n = (int)(size / 4);
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++)
        MPI_Reduce(c->sbuf, c->rbuf, n, MPI_FLOAT, MPI_SUM, (int)(i % c->np), c->comm);
    return MPI_Wtime() - t0;
}

static double k_alltoall(const imb_ctx_t *c, long size, long iters)
{
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++)
        MPI_Alltoall(c->sbuf, (int)size, MPI_BYTE, c->rbuf, (int)size, MPI_BYTE, c->comm);
    return MPI_Wtime() - t0;
}

static double k_allgather(const imb_ctx_t *c, long size, long iters)
{
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++)
        MPI_Allgather(c->sbuf, (int)size, MPI_BYTE, c->rbuf, (int)size, MPI_BYTE, c->comm);
    return MPI_Wtime() - t0;
}

/* IMB's Reduce_scatter: `size` bytes of floats reduced, rank i keeping
 * block i (the first size%np ranks one element more). */
static double k_reduce_scatter(const imb_ctx_t *c, long size, long iters)
{
    int n = (int)(size / 4), *counts = malloc(sizeof *counts * (size_t)c->np);
    if (!counts)
        MPI_Abort(c->comm, 1);
    for (int i = 0; i < c->np; i++)
        counts[i] = n / c->np + (i < n % c->np);
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++)
        MPI_Reduce_scatter(c->sbuf, c->rbuf, counts, MPI_FLOAT, MPI_SUM, c->comm);
    double t = MPI_Wtime() - t0;
    free(counts);
    return t;
}

/* Gather and Scatter share one signature; IMB rotates their root. */
typedef int (*rooted_fn)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int,
                         MPI_Comm);

static double rooted(const imb_ctx_t *c, long size, long iters, rooted_fn fn)
{
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++)
        fn(c->sbuf, (int)size, MPI_BYTE, c->rbuf, (int)size, MPI_BYTE, (int)(i % c->np),
           c->comm);
    return MPI_Wtime() - t0;
}

static double k_gather(const imb_ctx_t *c, long size, long iters)
{
    return rooted(c, size, iters, MPI_Gather);
}

static double k_scatter(const imb_ctx_t *c, long size, long iters)
{
    return rooted(c, size, iters, MPI_Scatter);
}

static const imb_bench_t table[] = {
    {"PingPong", IMB_SINGLE, 1, 0.5, 1, 1, k_pingpong},
    {"PingPing", IMB_SINGLE, 1, 1.0, 1, 1, k_pingping},
    {"Sendrecv", IMB_PARALLEL, 1, 1.0, 2, 0, k_sendrecv},
    {"Exchange", IMB_PARALLEL, 1, 1.0, 4, 0, k_exchange},
    {"Barrier", IMB_SYNC, 1, 1.0, 0, 0, k_barrier},
    {"Bcast", IMB_COLL, 1, 1.0, 0, 0, k_bcast},
    {"Allreduce", IMB_COLL, 4, 1.0, 0, 0, k_allreduce},
    {"Reduce", IMB_COLL, 4, 1.0, 0, 0, k_reduce},
    {"Reduce_scatter", IMB_COLL, 4, 1.0, 0, 0, k_reduce_scatter},
    {"Allgather", IMB_COLL, 1, 1.0, 0, 0, k_allgather},
    {"Alltoall", IMB_COLL, 1, 1.0, 0, 0, k_alltoall},
    {"Scatter", IMB_COLL, 1, 1.0, 0, 0, k_scatter},
    {"Gather", IMB_COLL, 1, 1.0, 0, 0, k_gather},
};

const imb_bench_t *imb_benches(int *count)
{
    *count = (int)(sizeof table / sizeof table[0]);
    return table;
}

const imb_bench_t *imb_bench_find(const char *name)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcasecmp(table[i].name, name) == 0)
            return &table[i];
    return NULL;
}
