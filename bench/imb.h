/*
 * imb.h — the IMB-MPI1 style benchmarks inside the `imb` program: their
 * table (name, output type, scaling) and kernels. Private to bench/imb*.c.
 */
#ifndef BENCH_IMB_H
#define BENCH_IMB_H

#include <mpi.h>

/* IMB's output classes (IMB_output.c), which decide the columns. */
typedef enum {
    IMB_SINGLE,    /* PingPong, PingPing: #bytes #repetitions t[usec] Mbytes/sec */
    IMB_PARALLEL,  /* Sendrecv, Exchange: t_min t_max t_avg and Mbytes/sec */
    IMB_COLL,      /* collectives: t_min t_max t_avg */
    IMB_SYNC       /* Barrier: no #bytes column */
} imb_type_t;

/* What a kernel works on: the group running it and two big buffers. */
typedef struct {
    MPI_Comm comm;
    int rank, np;
    char *sbuf, *rbuf;
} imb_ctx_t;

/* Runs `iters` operations of `size` bytes; returns this rank's elapsed seconds. */
typedef double (*imb_kernel_fn)(const imb_ctx_t *c, long size, long iters);

typedef struct {
    const char *name;
    imb_type_t type;
    int unit;            /* bytes per element: 4 for float reductions, else 1 */
    double scale_time;   /* 0.5 for PingPong: report one way */
    double scale_bw;     /* bytes moved per reported time, in units of size */
    int pair_only;       /* runs on exactly 2 ranks whatever the job size */
    imb_kernel_fn run;
} imb_bench_t;

/* The table of benchmarks, in IMB's order; *count receives its length. */
const imb_bench_t *imb_benches(int *count);

/* The entry whose name matches case-insensitively, or NULL. */
const imb_bench_t *imb_bench_find(const char *name);

#endif
