/*
 * halo_bench — the gain of topology reordering for a halo exchange.
 *
 *   halo_bench [-d 2|3] [-n N] [-i ITERS] [-w WARMUP] [-r REPS] [-m neighbor|p2p]
 *              [-j FILE.json]
 *
 * A periodic 2-D (or 3-D) grid of N^d doubles per rank with one layer of
 * ghost cells, on MPI_Cart_create(..., reorder = 0) and then reorder = 1.
 * Each exchange sends every face to the neighbour across it, with
 * MPI_Neighbor_alltoallw (face subarray types) or Irecv/Isend per face.
 * Prints, per reorder setting, the share of (rank, neighbour) pairs on the
 * same node (MPI_Comm_split_type SHARED: real nodes, or LOCUS_MPI_NODES
 * emulated ones) and the time per exchange (the slowest rank's mean over
 * ITERS exchanges; REPS such measurements, the two settings interleaved,
 * their median and minimum reported), and checks that every ghost face
 * holds its neighbour's data. Plain MPI: builds against any MPI.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REPS 99

typedef struct {
    int d, n, iters, warmup, reps, p2p;
    const char *json;
} opts_t;

typedef struct {
    int reorder;
    double share, usec[MAX_REPS];
    int errors;
} result_t;

static void usage(void)
{
    fprintf(stderr, "usage: halo_bench [-d 2|3] [-n N] [-i ITERS] [-w WARMUP] [-r REPS] "
                    "[-m neighbor|p2p] [-j FILE.json]\n");
}

static int parse(int argc, char **argv, opts_t *o)
{
    *o = (opts_t){ 2, 64, 200, 20, 5, 0, NULL };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            return -1;
        if (!strcmp(a, "-d"))
            o->d = atoi(v);
        else if (!strcmp(a, "-n"))
            o->n = atoi(v);
        else if (!strcmp(a, "-i"))
            o->iters = atoi(v);
        else if (!strcmp(a, "-w"))
            o->warmup = atoi(v);
        else if (!strcmp(a, "-r"))
            o->reps = atoi(v);
        else if (!strcmp(a, "-m"))
            o->p2p = !strcmp(v, "p2p") ? 1 : !strcmp(v, "neighbor") ? 0 : -1;
        else if (!strcmp(a, "-j"))
            o->json = v;
        else
            return -1;
        i++;
    }
    return (o->d == 2 || o->d == 3) && o->n >= 1 && o->iters >= 1 && o->warmup >= 0 &&
                   o->reps >= 1 && o->reps <= MAX_REPS && o->p2p >= 0 ? 0 : -1;
}

/* Face types of the (n+2)^d block: what I send towards side s of dim k
 * (my outermost interior layer) and where its ghost lands (the ghost
 * layer), in the neighbour order of the Cartesian neighbourhood. */
static void face_types(int d, int n, MPI_Datatype *send, MPI_Datatype *recv)
{
    int sizes[3], sub[3], start[3];
    for (int k = 0; k < d; k++)
        for (int side = 0; side < 2; side++) {
            for (int j = 0; j < d; j++) {
                sizes[j] = n + 2;
                sub[j] = j == k ? 1 : n;
                start[j] = 1;
            }
            start[k] = side ? n : 1;
            MPI_Type_create_subarray(d, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE,
                                     &send[2 * k + side]);
            start[k] = side ? n + 1 : 0;
            MPI_Type_create_subarray(d, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE,
                                     &recv[2 * k + side]);
            MPI_Type_commit(&send[2 * k + side]);
            MPI_Type_commit(&recv[2 * k + side]);
        }
}

static void exchange(const opts_t *o, MPI_Comm cart, double *grid, MPI_Datatype *st,
                     MPI_Datatype *rt, const int *nbr)
{
    int m = 2 * o->d, one[6] = { 1, 1, 1, 1, 1, 1 };
    MPI_Aint zero[6] = { 0, 0, 0, 0, 0, 0 };
    if (!o->p2p) {
        MPI_Neighbor_alltoallw(grid, one, zero, st, grid, one, zero, rt, cart);
        return;
    }
    /* Tags say which side a face came from (a periodic dimension of size
     * 2 has the same neighbour on both sides). */
    MPI_Request q[12];
    for (int j = 0; j < m; j++)
        MPI_Irecv(grid, 1, rt[j], nbr[j], j ^ 1, cart, &q[j]);
    for (int j = 0; j < m; j++)
        MPI_Isend(grid, 1, st[j], nbr[j], j, cart, &q[m + j]);
    MPI_Waitall(2 * m, q, MPI_STATUSES_IGNORE);
}

static void run(const opts_t *o, int reorder, int rep, result_t *res)
{
    int size, dims[3] = { 0, 0, 0 }, periods[3] = { 1, 1, 1 };
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Dims_create(size, o->d, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, o->d, dims, periods, reorder, &cart);
    int r, nbr[6];
    MPI_Comm_rank(cart, &r);
    for (int k = 0; k < o->d; k++)
        MPI_Cart_shift(cart, k, 1, &nbr[2 * k], &nbr[2 * k + 1]);

    /* Which neighbours share my node. */
    MPI_Comm shm;
    MPI_Comm_split_type(cart, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm);
    MPI_Group gs, gc;
    MPI_Comm_group(shm, &gs);
    MPI_Comm_group(cart, &gc);
    int zero = 0, lead, *node = malloc(sizeof *node * (size_t)size);
    MPI_Group_translate_ranks(gs, 1, &zero, gc, &lead);
    MPI_Allgather(&lead, 1, MPI_INT, node, 1, MPI_INT, cart);
    int pairs[2] = { 0, 2 * o->d }, tot[2];
    for (int j = 0; j < 2 * o->d; j++)
        pairs[0] += node[nbr[j]] == node[r];
    MPI_Allreduce(pairs, tot, 2, MPI_INT, MPI_SUM, cart);
    res->share = (double)tot[0] / tot[1];
    free(node);
    MPI_Group_free(&gs);
    MPI_Group_free(&gc);
    MPI_Comm_free(&shm);

    size_t cells = 1;
    for (int k = 0; k < o->d; k++)
        cells *= (size_t)(o->n + 2);
    double *grid = malloc(sizeof *grid * cells);
    for (size_t i = 0; i < cells; i++)
        grid[i] = r;
    MPI_Datatype st[6], rt[6];
    face_types(o->d, o->n, st, rt);

    /* Once for correctness: every ghost face holds its neighbour's rank. */
    exchange(o, cart, grid, st, rt, nbr);
    int errors = 0;
    for (int j = 0; j < 2 * o->d; j++) {
        /* The ghost face's first cell: start of the recv subarray. */
        size_t at = 0;
        for (int k = 0; k < o->d; k++) {
            int x = k == j / 2 ? (j % 2 ? o->n + 1 : 0) : 1;
            at = at * (size_t)(o->n + 2) + (size_t)x;
        }
        errors += grid[at] != nbr[j];
    }
    int all_errors;
    MPI_Allreduce(&errors, &all_errors, 1, MPI_INT, MPI_SUM, cart);
    res->errors += all_errors;

    for (int it = 0; it < o->warmup; it++)
        exchange(o, cart, grid, st, rt, nbr);
    MPI_Barrier(cart);
    double t0 = MPI_Wtime();
    for (int it = 0; it < o->iters; it++)
        exchange(o, cart, grid, st, rt, nbr);
    double mine = (MPI_Wtime() - t0) / o->iters, slowest;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, cart);
    res->usec[rep] = slowest * 1e6;
    res->reorder = reorder;
    for (int j = 0; j < 2 * o->d; j++) {
        MPI_Type_free(&st[j]);
        MPI_Type_free(&rt[j]);
    }
    free(grid);
    MPI_Comm_free(&cart);
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    opts_t o;
    if (parse(argc, argv, &o) != 0) {
        if (rank == 0)
            usage();
        MPI_Finalize();
        return 2;
    }
    result_t res[2];
    memset(res, 0, sizeof res);
    for (int rep = 0; rep < o.reps; rep++)
        for (int reorder = 0; reorder < 2; reorder++)
            run(&o, reorder, rep, &res[reorder]);
    int failed = res[0].errors || res[1].errors;
    double med[2], min[2];
    for (int k = 0; k < 2; k++) {
        qsort(res[k].usec, (size_t)o.reps, sizeof(double), dbl_cmp);
        med[k] = res[k].usec[o.reps / 2];
        min[k] = res[k].usec[0];
    }
    if (rank == 0) {
        const char *emu = getenv("LOCUS_MPI_NODES");
        printf("# halo exchange: %d ranks, %d-D periodic grid, %d^%d doubles per rank, %s, "
               "nodes: %s, %d x %d exchanges\n", size, o.d, o.n, o.d,
               o.p2p ? "isend/irecv" : "neighbor_alltoallw", emu && *emu ? emu : "real", o.reps,
               o.iters);
        printf("%-8s %16s %18s %16s\n", "reorder", "same-node pairs", "usec/exch median",
               "usec/exch min");
        for (int k = 0; k < 2; k++)
            printf("%-8d %16.3f %18.2f %16.2f\n", res[k].reorder, res[k].share, med[k], min[k]);
        if (failed)
            printf("ERROR: %d ghost faces held the wrong data\n", res[0].errors + res[1].errors);
        if (o.json) {
            FILE *f = fopen(o.json, "w");
            if (!f) {
                fprintf(stderr, "halo_bench: cannot write %s\n", o.json);
                failed = 1;
            } else {
                fprintf(f, "{\"benchmark\": \"halo\", \"ranks\": %d, \"dims\": %d, \"n\": %d, "
                           "\"iters\": %d, \"reps\": %d, \"method\": \"%s\", \"nodes\": \"%s\", "
                           "\"results\": [",
                        size, o.d, o.n, o.iters, o.reps, o.p2p ? "p2p" : "neighbor",
                        emu && *emu ? emu : "real");
                for (int k = 0; k < 2; k++)
                    fprintf(f, "%s{\"reorder\": %d, \"same_node_share\": %.4f, "
                               "\"usec_median\": %.3f, \"usec_min\": %.3f}",
                            k ? ", " : "", res[k].reorder, res[k].share, med[k], min[k]);
                fprintf(f, "]}\n");
                fclose(f);
            }
        }
    }
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return failed ? 1 : 0;
}
