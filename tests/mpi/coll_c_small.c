/*
 * The large-count (`_c`) collectives with ordinary sizes: every blocking
 * and several nonblocking ones give the same results as their int forms
 * would; the v forms take MPI_Count counts and MPI_Aint displacements
 * (here in decreasing order, with gaps); MPI_Reduce_local(_c); counts
 * that are negative or whose bytes overflow are MPI_ERR_COUNT before
 * anything is allocated or sent; Alltoallw from MPI_BOTTOM. Any number of
 * ranks.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

static int p, r;

static int err_class(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

/* Block q of a v-layout: q+1 elements, blocks in reverse order with one
 * element of gap after each. */
static MPI_Aint vdispl(int q)
{
    MPI_Aint d = 0;
    for (int k = p - 1; k > q; k--)
        d += k + 2;
    return d;
}

static void vectors(void)
{
    MPI_Count *cnt = malloc(p * sizeof *cnt);
    MPI_Aint *dsp = malloc(p * sizeof *dsp);
    int span = (int)vdispl(0) + 2;
    for (int q = 0; q < p; q++) {
        cnt[q] = q + 1;
        dsp[q] = vdispl(q);
    }
    int *mine = malloc((r + 1) * sizeof(int)), *all = malloc(span * sizeof(int));
    for (int i = 0; i <= r; i++)
        mine[i] = r * 100 + i;
    for (int blocking = 1; blocking >= 0; blocking--) {
        for (int i = 0; i < span; i++)
            all[i] = -1;
        if (blocking) {
            MPI_Gatherv_c(mine, r + 1, MPI_INT, all, cnt, dsp, MPI_INT, p - 1, MPI_COMM_WORLD);
        } else {
            MPI_Request rq;
            MPI_Igatherv_c(mine, r + 1, MPI_INT, all, cnt, dsp, MPI_INT, p - 1, MPI_COMM_WORLD,
                           &rq);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
        }
        int bad = 0;
        if (r == p - 1)
            for (int q = 0; q < p; q++) {
                for (int i = 0; i <= q; i++)
                    bad += all[dsp[q] + i] != q * 100 + i;
                bad += all[dsp[q] + q + 1] != -1; /* the gap */
            }
        CHECK(bad == 0, "Gatherv_c (blocking %d): %d wrong", blocking, bad);
    }
    /* Allgatherv_c, then Scatterv_c of what was gathered back. */
    for (int i = 0; i < span; i++)
        all[i] = -1;
    MPI_Allgatherv_c(mine, r + 1, MPI_INT, all, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
    int bad = 0;
    for (int q = 0; q < p; q++)
        for (int i = 0; i <= q; i++)
            bad += all[dsp[q] + i] != q * 100 + i;
    CHECK(bad == 0, "Allgatherv_c: %d wrong", bad);
    int *back = malloc((r + 1) * sizeof(int));
    memset(back, 0xff, (r + 1) * sizeof(int));
    MPI_Scatterv_c(all, cnt, dsp, MPI_INT, back, r + 1, MPI_INT, 0, MPI_COMM_WORLD);
    bad = 0;
    for (int i = 0; i <= r; i++)
        bad += back[i] != r * 100 + i;
    CHECK(bad == 0, "Scatterv_c: %d wrong", bad);
    /* Reduce_scatter_c: rank q gets q+1 sums. */
    int tot = p * (p + 1) / 2, *contrib = malloc(tot * sizeof(int));
    for (int i = 0; i < tot; i++)
        contrib[i] = r + i;
    MPI_Reduce_scatter_c(contrib, back, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    bad = 0;
    for (int i = 0; i <= r; i++)
        bad += back[i] != p * (p - 1) / 2 + p * (r * (r + 1) / 2 + i);
    CHECK(bad == 0, "Reduce_scatter_c: %d wrong", bad);
    /* Alltoallv_c: 2 to everyone, at reversed displacements. */
    MPI_Count *two = malloc(p * sizeof *two);
    MPI_Aint *rev = malloc(p * sizeof *rev);
    int *s2 = malloc(2 * p * sizeof(int)), *r2 = malloc(2 * p * sizeof(int));
    for (int q = 0; q < p; q++) {
        two[q] = 2;
        rev[q] = 2 * (p - 1 - q);
        s2[rev[q]] = r * 1000 + q;
        s2[rev[q] + 1] = -(r * 1000 + q);
    }
    MPI_Request rq;
    MPI_Ialltoallv_c(s2, two, rev, MPI_INT, r2, two, rev, MPI_INT, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    bad = 0;
    for (int q = 0; q < p; q++)
        bad += r2[rev[q]] != q * 1000 + r || r2[rev[q] + 1] != -(q * 1000 + r);
    CHECK(bad == 0, "Ialltoallv_c: %d wrong", bad);
    free(two);
    free(rev);
    free(s2);
    free(r2);
    free(contrib);
    free(back);
    free(cnt);
    free(dsp);
    free(mine);
    free(all);
}

static void scalars(void)
{
    long v[4], w[4];
    for (int i = 0; i < 4; i++)
        v[i] = r * 10 + i;
    MPI_Allreduce_c(v, w, 4, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    int bad = 0;
    for (int i = 0; i < 4; i++)
        bad += w[i] != 10L * p * (p - 1) / 2 + (long)p * i;
    CHECK(bad == 0, "Allreduce_c: %d wrong", bad);
    MPI_Request rq;
    memcpy(w, v, sizeof w);
    MPI_Iallreduce_c(MPI_IN_PLACE, w, 4, MPI_LONG, MPI_MAX, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    CHECK(w[3] == (p - 1) * 10 + 3, "Iallreduce_c in place: %ld", w[3]);
    int b[3] = { r, r, r };
    MPI_Ibcast_c(b, 3, MPI_INT, p - 1, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    CHECK(b[0] == p - 1 && b[2] == p - 1, "Ibcast_c: %d", b[0]);
    MPI_Reduce_c(v, w, 4, MPI_LONG, MPI_MIN, 0, MPI_COMM_WORLD);
    CHECK(r != 0 || w[1] == 1, "Reduce_c min: %ld", w[1]);
    int sc = -1, ex = -1, one = r + 1;
    MPI_Scan_c(&one, &sc, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Exscan_c(&one, &ex, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sc == (r + 1) * (r + 2) / 2 && (r == 0 || ex == r * (r + 1) / 2), "scan %d exscan %d",
          sc, ex);
    int *ga = malloc(2 * p * sizeof(int)), pair[2] = { r, -r };
    MPI_Allgather_c(pair, 2, MPI_INT, ga, 2, MPI_INT, MPI_COMM_WORLD);
    bad = 0;
    for (int q = 0; q < p; q++)
        bad += ga[2 * q] != q || ga[2 * q + 1] != -q;
    CHECK(bad == 0, "Allgather_c: %d wrong", bad);
    int *a2 = malloc(2 * p * sizeof(int));
    for (int q = 0; q < p; q++)
        ga[2 * q] = ga[2 * q + 1] = r * p + q;
    MPI_Alltoall_c(ga, 2, MPI_INT, a2, 2, MPI_INT, MPI_COMM_WORLD);
    bad = 0;
    for (int q = 0; q < p; q++)
        bad += a2[2 * q] != q * p + r;
    CHECK(bad == 0, "Alltoall_c: %d wrong", bad);
    int got[2] = { -1, -1 };
    MPI_Scatter_c(a2, 2, MPI_INT, got, 2, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK(got[0] == (r == 0 ? 0 : r * p), "Scatter_c: %d", got[0]);
    MPI_Gather_c(pair, 2, MPI_INT, ga, 2, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK(r != 0 || ga[2 * (p - 1)] == p - 1, "Gather_c: %d", ga[2 * (p - 1)]);
    int rsbo = -1;
    int *rsbin = malloc(p * sizeof(int));
    for (int q = 0; q < p; q++)
        rsbin[q] = q + r;
    MPI_Reduce_scatter_block_c(rsbin, &rsbo, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(rsbo == p * r + p * (p - 1) / 2, "Reduce_scatter_block_c: %d", rsbo);
    free(rsbin);
    /* Alltoallw_c: per-peer byte displacements. */
    MPI_Count *wc = malloc(p * sizeof *wc);
    MPI_Aint *wd = malloc(p * sizeof *wd);
    MPI_Datatype *wt = malloc(p * sizeof *wt);
    for (int q = 0; q < p; q++) {
        wc[q] = 1;
        wd[q] = (MPI_Aint)(q * sizeof(int));
        wt[q] = MPI_INT;
        ga[q] = r * p + q;
    }
    MPI_Alltoallw_c(ga, wc, wd, wt, a2, wc, wd, wt, MPI_COMM_WORLD);
    bad = 0;
    for (int q = 0; q < p; q++)
        bad += a2[q] != q * p + r;
    CHECK(bad == 0, "Alltoallw_c: %d wrong", bad);
    free(wc);
    free(wd);
    free(wt);
    free(ga);
    free(a2);
}

static void local_and_errors(void)
{
    int in[5] = { 1, 2, 3, 4, 5 }, io[5] = { 10, 20, 30, 40, 50 };
    MPI_Reduce_local(in, io, 5, MPI_INT, MPI_SUM);
    CHECK(io[0] == 11 && io[4] == 55, "Reduce_local: %d %d", io[0], io[4]);
    MPI_Reduce_local_c(in, io, 5, MPI_INT, MPI_MAX);
    CHECK(io[0] == 11, "Reduce_local_c max: %d", io[0]);
    MPI_Reduce_local_c(in, io, 2, MPI_INT, MPI_PROD);
    CHECK(io[0] == 11 && io[1] == 44, "Reduce_local_c prod: %d %d", io[0], io[1]);
    int rc = MPI_Reduce_local(in, io, 5, MPI_INT, MPI_OP_NULL);
    CHECK(err_class(rc) == MPI_ERR_OP, "Reduce_local OP_NULL: %d", rc);
    rc = MPI_Reduce_local(in, io, -2, MPI_INT, MPI_SUM);
    CHECK(err_class(rc) == MPI_ERR_COUNT, "Reduce_local count -2: %d", rc);
    float f[2] = { 1, 2 }, g[2] = { 3, 4 };
    rc = MPI_Reduce_local(f, g, 2, MPI_FLOAT, MPI_BAND);
    CHECK(err_class(rc) == MPI_ERR_OP, "BAND on floats: %d", rc);
    rc = MPI_Reduce_local(NULL, io, 5, MPI_INT, MPI_SUM);
    CHECK(err_class(rc) == MPI_ERR_BUFFER, "Reduce_local NULL input: %d", rc);

    /* Counts whose bytes overflow, or negative: nothing is attempted. */
    MPI_Count huge = (MPI_Count)1 << 62;
    rc = MPI_Bcast_c(in, huge, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK(err_class(rc) == MPI_ERR_COUNT, "Bcast_c 2^62 ints: %d", rc);
    rc = MPI_Send_c(in, huge, MPI_INT, r, 0, MPI_COMM_WORLD);
    CHECK(err_class(rc) == MPI_ERR_COUNT, "Send_c 2^62 ints: %d", rc);
    rc = MPI_Allreduce_c(in, io, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(err_class(rc) == MPI_ERR_COUNT, "Allreduce_c -1: %d", rc);
    MPI_Count bad_cnt[64];
    MPI_Aint dsp[64] = { 0 };
    for (int q = 0; q < p && q < 64; q++)
        bad_cnt[q] = q == p - 1 ? -1 : 1;
    rc = MPI_Allgatherv_c(in, 1, MPI_INT, io, bad_cnt, dsp, MPI_INT, MPI_COMM_WORLD);
    CHECK(err_class(rc) == MPI_ERR_COUNT, "Allgatherv_c negative count: %d", rc);
    MPI_Request rq;
    rc = MPI_Ibcast_c(in, 1, MPI_INT, 0, MPI_COMM_WORLD, NULL);
    CHECK(err_class(rc) == MPI_ERR_ARG, "Ibcast_c without request: %d", rc);
    (void)rq;
}

/* Alltoallw from MPI_BOTTOM, each block described by a struct type at its
 * absolute address (mpi4py's BOTTOM tests): the block a rank keeps is
 * copied between two different types at the same base, which must not be
 * taken for a copy onto itself. Blocking and nonblocking. */
static void alltoallw_bottom(void)
{
    int *sb = malloc(2 * p * sizeof *sb), *rb = malloc(2 * p * sizeof *rb);
    int *cnt = malloc(p * sizeof *cnt), *dsp = malloc(p * sizeof *dsp);
    MPI_Datatype *st = malloc(2 * p * sizeof *st), *rt = st + p;
    for (int nb = 0; nb < 2; nb++) {
        for (int q = 0; q < p; q++) {
            int len = 2;
            MPI_Aint a;
            MPI_Datatype t = MPI_INT;
            sb[2 * q] = sb[2 * q + 1] = r * p + q;
            rb[2 * q] = rb[2 * q + 1] = -1;
            MPI_Get_address(sb + 2 * q, &a);
            MPI_Type_create_struct(1, &len, &a, &t, &st[q]);
            MPI_Get_address(rb + 2 * q, &a);
            MPI_Type_create_struct(1, &len, &a, &t, &rt[q]);
            MPI_Type_commit(&st[q]);
            MPI_Type_commit(&rt[q]);
            cnt[q] = 1;
            dsp[q] = 0;
        }
        int rc;
        if (nb) {
            MPI_Request req;
            rc = MPI_Ialltoallw(MPI_BOTTOM, cnt, dsp, st, MPI_BOTTOM, cnt, dsp, rt,
                                MPI_COMM_WORLD, &req);
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            rc = MPI_Alltoallw(MPI_BOTTOM, cnt, dsp, st, MPI_BOTTOM, cnt, dsp, rt, MPI_COMM_WORLD);
        }
        int bad = 0;
        for (int q = 0; q < p; q++)
            bad += rb[2 * q] != q * p + r || rb[2 * q + 1] != q * p + r;
        CHECK(rc == MPI_SUCCESS && bad == 0, "%salltoallw from MPI_BOTTOM: rc %d, %d wrong",
              nb ? "I" : "", rc, bad);
        for (int q = 0; q < 2 * p; q++)
            MPI_Type_free(&st[q]);
    }
    free(sb);
    free(rb);
    free(cnt);
    free(dsp);
    free(st);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    vectors();
    scalars();
    local_and_errors();
    alltoallw_bottom();
    return mtest_finish();
}
