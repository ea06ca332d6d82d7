/*
 * type_darray.c — distributed and sub- arrays through real messages: rank
 * 0 scatters a global array to every rank with each rank's
 * MPI_Type_create_darray type (send side derived), each rank checks what
 * it got against index math done here from MPI's definition (owner and
 * local index per dimension, local array in C or Fortran order), then
 * sends its piece back and rank 0 gathers it with the same type (receive
 * side derived); the result must be the global array again. Same for
 * subarrays. Grids are built for the job's size (run at 4 and 6 ranks).
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

enum { MAXD = 3 };

typedef struct {
    int nd;
    int gs[MAXD], dist[MAXD], darg[MAXD], ps[MAXD];
} darr_t;

static void owner_of(int gi, int gsize, int dist, int darg, int p, int *coord, int *local)
{
    if (dist == MPI_DISTRIBUTE_NONE) {
        *coord = 0;
        *local = gi;
    } else if (dist == MPI_DISTRIBUTE_BLOCK) {
        int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + p - 1) / p : darg;
        *coord = gi / b;
        *local = gi % b;
    } else {
        int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
        *coord = gi / b % p;
        *local = gi / (b * p) * b + gi % b;
    }
}

/* The global linear indices rank owns, in the local array's order. */
static int darray_expected(const darr_t *a, int rank, int fortran, double *out)
{
    int my[MAXD], lsize[MAXD], total = 1;
    for (int d = a->nd - 1, r = rank; d >= 0; d--) {
        my[d] = r % a->ps[d];
        r /= a->ps[d];
    }
    for (int d = 0; d < a->nd; d++) {
        total *= a->gs[d];
        lsize[d] = 0;
        for (int g = 0; g < a->gs[d]; g++) {
            int c, l;
            owner_of(g, a->gs[d], a->dist[d], a->darg[d], a->ps[d], &c, &l);
            lsize[d] += c == my[d];
        }
    }
    int n = 0;
    for (int lin = 0; lin < total; lin++) {
        int g[MAXD], loc[MAXD], mine = 1, rest = lin;
        for (int k = 0; k < a->nd; k++) {   /* lin in the array's own order */
            int d = fortran ? k : a->nd - 1 - k;
            g[d] = rest % a->gs[d];
            rest /= a->gs[d];
        }
        for (int d = 0; d < a->nd && mine; d++) {
            int c;
            owner_of(g[d], a->gs[d], a->dist[d], a->darg[d], a->ps[d], &c, &loc[d]);
            mine = c == my[d];
        }
        if (!mine)
            continue;
        int l = 0;
        for (int k = 0; k < a->nd; k++) {
            int d = fortran ? a->nd - 1 - k : k;
            l = l * lsize[d] + loc[d];
        }
        out[l] = lin;
        n++;
    }
    return n;
}

static void run(const char *what, int total, MPI_Datatype *types, double *(*expect)(int, int *),
                int partition)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double *g = malloc(sizeof(double) * (size_t)total), *back = calloc((size_t)total, sizeof(double));
    for (int i = 0; i < total; i++) {
        g[i] = i;
        back[i] = -1;
    }
    int n;
    double *want = expect(rank, &n), *mine = calloc((size_t)n + 1, sizeof(double));
    MPI_Request rq = MPI_REQUEST_NULL;
    MPI_Irecv(mine, n + 1, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD, &rq);
    if (rank == 0)
        for (int r = 0; r < size; r++)
            MPI_Send(g, 1, types[r], r, 5, MPI_COMM_WORLD);
    MPI_Status st;
    MPI_Wait(&rq, &st);
    int got = -1;
    MPI_Get_count(&st, MPI_DOUBLE, &got);
    CHECK(got == n, "%s: rank %d got %d doubles, want %d", what, rank, got, n);
    for (int i = 0; i < n && got == n; i++)
        if (mine[i] != want[i]) {
            CHECK(0, "%s: rank %d local %d = %g, want global %g", what, rank, i, mine[i], want[i]);
            break;
        }
    /* And back: rank 0 receives every piece into place. */
    MPI_Isend(mine, n, MPI_DOUBLE, 0, 6, MPI_COMM_WORLD, &rq);
    if (rank == 0) {
        for (int r = 0; r < size; r++)
            MPI_Recv(back, 1, types[r], r, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        /* A partition covers every element; subarrays only theirs. */
        int bad = 0, covered = 0;
        for (int i = 0; i < total; i++) {
            covered += back[i] == g[i];
            bad += back[i] != g[i] && (partition || back[i] != -1);
        }
        CHECK(bad == 0 && covered > 0, "%s: gathered array has %d wrong elements", what, bad);
    }
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    free(g); free(back); free(want); free(mine);
}

static darr_t cur;
static int cur_fortran;

static double *darray_want(int rank, int *n)
{
    int total = 1;
    for (int d = 0; d < cur.nd; d++)
        total *= cur.gs[d];
    double *w = malloc(sizeof(double) * (size_t)total);
    *n = darray_expected(&cur, rank, cur_fortran, w);
    return w;
}

static void darray_case(const darr_t *a, int fortran)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    cur = *a;
    cur_fortran = fortran;
    MPI_Datatype *t = malloc(sizeof *t * (size_t)size);
    int total = 1;
    for (int d = 0; d < a->nd; d++)
        total *= a->gs[d];
    for (int r = 0; r < size; r++) {
        int rc = MPI_Type_create_darray(size, r, a->nd, a->gs, a->dist, a->darg, a->ps,
                                        fortran ? MPI_ORDER_FORTRAN : MPI_ORDER_C, MPI_DOUBLE,
                                        &t[r]);
        CHECK(rc == MPI_SUCCESS, "darray rc %d", rc);
        MPI_Type_commit(&t[r]);
        MPI_Aint lb, ext;
        MPI_Type_get_extent(t[r], &lb, &ext);
        CHECK(lb == 0 && ext == (MPI_Aint)(total * 8), "darray bounds %ld %ld", (long)lb, (long)ext);
    }
    char what[64];
    snprintf(what, sizeof what, "darray nd=%d %s %dx%dx%d", a->nd, fortran ? "F" : "C", a->ps[0],
             a->nd > 1 ? a->ps[1] : 1, a->nd > 2 ? a->ps[2] : 1);
    run(what, total, t, darray_want, 1);
    for (int r = 0; r < size; r++)
        MPI_Type_free(&t[r]);
    free(t);
}

/* Subarrays: rank r takes sub[] at starts that depend on r. */
static int sa_sizes[3] = {5, 4, 6}, sa_sub[3] = {2, 3, 3};

static void sa_starts(int r, int *st)
{
    for (int d = 0; d < 3; d++)
        st[d] = (r * (d + 1)) % (sa_sizes[d] - sa_sub[d] + 1);
}

static double *subarray_want(int rank, int *n)
{
    int st[3], k = 0;
    sa_starts(rank, st);
    double *w = malloc(sizeof(double) * 18);
    int i[3];
    /* C order: last index fastest; Fortran: first. */
    for (i[0] = 0; i[0] < (cur_fortran ? sa_sub[2] : sa_sub[0]); i[0]++)
        for (i[1] = 0; i[1] < sa_sub[1]; i[1]++)
            for (i[2] = 0; i[2] < (cur_fortran ? sa_sub[0] : sa_sub[2]); i[2]++) {
                int a = cur_fortran ? i[2] : i[0], b = i[1], c = cur_fortran ? i[0] : i[2];
                int g0 = st[0] + a, g1 = st[1] + b, g2 = st[2] + c;
                w[k++] = cur_fortran ? g0 + sa_sizes[0] * (g1 + sa_sizes[1] * g2)
                                     : (g0 * sa_sizes[1] + g1) * sa_sizes[2] + g2;
            }
    *n = k;
    return w;
}

static void subarray_case(int fortran)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    cur_fortran = fortran;
    MPI_Datatype *t = malloc(sizeof *t * (size_t)size);
    for (int r = 0; r < size; r++) {
        int st[3];
        sa_starts(r, st);
        CHECK(MPI_Type_create_subarray(3, sa_sizes, sa_sub, st,
                                       fortran ? MPI_ORDER_FORTRAN : MPI_ORDER_C, MPI_DOUBLE,
                                       &t[r]) == MPI_SUCCESS, "subarray");
        MPI_Type_commit(&t[r]);
    }
    /* The subarrays overlap across ranks: gathering back checks each piece
     * lands where it came from (the values are the global indices). */
    run(fortran ? "subarray F" : "subarray C", 5 * 4 * 6, t, subarray_want, 0);
    for (int r = 0; r < size; r++)
        MPI_Type_free(&t[r]);
    free(t);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int B = MPI_DISTRIBUTE_BLOCK, C = MPI_DISTRIBUTE_CYCLIC, N = MPI_DISTRIBUTE_NONE,
              D = MPI_DISTRIBUTE_DFLT_DARG;
    /* Grids for this size: p x q with p*q = size, and a 3-D one. */
    int p = 1;
    for (int f = 2; f * f <= size; f++)
        if (size % f == 0)
            p = f;
    int q = size / p;
    darr_t cases[] = {
        {1, {23}, {B}, {D}, {size}},
        {1, {23}, {C}, {2}, {size}},
        {2, {7, 9}, {B, C}, {D, D}, {p, q}},
        {2, {9, 7}, {C, B}, {3, 4}, {q, p}},
        {2, {6, 5}, {N, C}, {D, 2}, {1, size}},
        {3, {4, 6, 5}, {C, B, N}, {1, D, D}, {p, q, 1}},
        {3, {5, 3, 8}, {B, N, C}, {D, D, 3}, {q, 1, p}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int f = 0; f <= 1; f++) {
            /* A BLOCK darg must cover its dimension. */
            if (i == 3 && 4 * p < 7)
                continue;
            darray_case(&cases[i], f);
        }
    subarray_case(0);
    subarray_case(1);
    return mtest_finish();
}
