/*
 * Persistent collectives (MPI-4): every MPI_<Coll>_init, several as their
 * `_c` forms, all outstanding at once (one MPI_Startall, one MPI_Waitall)
 * and restarted many times with new input every time; every result is
 * checked every iteration. Then: a persistent collective progresses while
 * its rank blocks in a receive that depends on it, requests are freed
 * while inactive and while active, and misuse gives the right error
 * classes. Any number of ranks.
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define ITERS 60
#define NCOLL 17

static int p, r;

/* Rank q's input element i in iteration it. */
static int val(int it, int q, int i)
{
    return it * 1000 + q * 10 + i;
}

static int sum_over_ranks(int it, int i, int upto)
{
    int s = 0;
    for (int q = 0; q < upto; q++)
        s += val(it, q, i);
    return s;
}

typedef struct {
    int bc[8], rd_s[8], rd_r[8];
    long ar_s[8], ar_r[8];
    int ga_s[2], *ga_r, *gv_s, *gv_r, sc_s[64 * 3], sc_r[3], *sv_s, *sv_r;
    int ag_s[2], *ag_r, *agv_s, *agv_r, *a2_s, *a2_r, *a2v_s, *a2v_r, *a2w_s, *a2w_r;
    int *rs_s, *rs_r, *rsb_s, rsb_r[2], scan_s[4], scan_r[4], ex_s[4], ex_r[4];
    int *cnt, *dsp;                 /* r+1 elements from rank r, packed */
    MPI_Count *cnt_c;
    MPI_Aint *dsp_c;
    int *two, *twodsp;              /* 2 each, strided by 3 */
    MPI_Count *wcnt;
    MPI_Aint *wsd, *wrd;
    MPI_Datatype *wty;
} bufs_t;

static int tri(int n)
{
    return n * (n + 1) / 2;
}

static void alloc_bufs(bufs_t *b)
{
    int tot = tri(p);
    b->ga_r = calloc(2 * p, sizeof(int));
    b->gv_s = calloc(r + 1, sizeof(int));
    b->gv_r = calloc(tot, sizeof(int));
    b->sv_s = calloc(tot, sizeof(int));
    b->sv_r = calloc(r + 1, sizeof(int));
    b->ag_r = calloc(2 * p, sizeof(int));
    b->agv_s = calloc(r + 1, sizeof(int));
    b->agv_r = calloc(tot, sizeof(int));
    b->a2_s = calloc(2 * p, sizeof(int));
    b->a2_r = calloc(2 * p, sizeof(int));
    b->a2v_s = calloc(3 * p, sizeof(int));
    b->a2v_r = calloc(3 * p, sizeof(int));
    b->a2w_s = calloc(2 * p, sizeof(int));
    b->a2w_r = calloc(2 * p, sizeof(int));
    b->rs_s = calloc(tot, sizeof(int));
    b->rs_r = calloc(r + 1, sizeof(int));
    b->rsb_s = calloc(2 * p, sizeof(int));
    b->cnt = calloc(p, sizeof(int));
    b->dsp = calloc(p, sizeof(int));
    b->cnt_c = calloc(p, sizeof(MPI_Count));
    b->dsp_c = calloc(p, sizeof(MPI_Aint));
    b->two = calloc(p, sizeof(int));
    b->twodsp = calloc(p, sizeof(int));
    b->wcnt = calloc(p, sizeof(MPI_Count));
    b->wsd = calloc(p, sizeof(MPI_Aint));
    b->wrd = calloc(p, sizeof(MPI_Aint));
    b->wty = calloc(p, sizeof(MPI_Datatype));
    for (int q = 0; q < p; q++) {
        b->cnt[q] = q + 1;
        b->dsp[q] = tri(q);
        b->cnt_c[q] = q + 1;
        b->dsp_c[q] = tri(q);
        b->two[q] = 2;
        b->twodsp[q] = 3 * q;
        b->wcnt[q] = 2;
        /* w form: byte displacements, received in reverse block order */
        b->wsd[q] = (MPI_Aint)(2 * q * sizeof(int));
        b->wrd[q] = (MPI_Aint)(2 * (p - 1 - q) * sizeof(int));
        b->wty[q] = MPI_INT;
    }
}

static void free_bufs(bufs_t *b)
{
    void *ps[] = { b->ga_r, b->gv_s, b->gv_r, b->sv_s, b->sv_r, b->ag_r, b->agv_s, b->agv_r,
                   b->a2_s, b->a2_r, b->a2v_s, b->a2v_r, b->a2w_s, b->a2w_r, b->rs_s, b->rs_r,
                   b->rsb_s, b->cnt, b->dsp, b->cnt_c, b->dsp_c, b->two, b->twodsp, b->wcnt,
                   b->wsd, b->wrd, b->wty };
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
        free(ps[i]);
}

static void init_all(bufs_t *b, MPI_Request *q)
{
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Info ni = MPI_INFO_NULL;
    MPI_Barrier_init(w, ni, &q[0]);
    MPI_Bcast_init(b->bc, 8, MPI_INT, p - 1, w, ni, &q[1]);
    MPI_Reduce_init(b->rd_s, b->rd_r, 8, MPI_INT, MPI_SUM, 0, w, ni, &q[2]);
    MPI_Allreduce_init_c(b->ar_s, b->ar_r, 8, MPI_LONG, MPI_MAX, w, ni, &q[3]);
    MPI_Gather_init(b->ga_s, 2, MPI_INT, b->ga_r, 2, MPI_INT, 1 % p, w, ni, &q[4]);
    MPI_Gatherv_init_c(b->gv_s, r + 1, MPI_INT, b->gv_r, b->cnt_c, b->dsp_c, MPI_INT, 0, w, ni,
                       &q[5]);
    MPI_Scatter_init(b->sc_s, 3, MPI_INT, b->sc_r, 3, MPI_INT, 0, w, ni, &q[6]);
    MPI_Scatterv_init(b->sv_s, b->cnt, b->dsp, MPI_INT, b->sv_r, r + 1, MPI_INT, p - 1, w, ni,
                      &q[7]);
    MPI_Allgather_init(b->ag_s, 2, MPI_INT, b->ag_r, 2, MPI_INT, w, ni, &q[8]);
    MPI_Allgatherv_init_c(b->agv_s, r + 1, MPI_INT, b->agv_r, b->cnt_c, b->dsp_c, MPI_INT, w,
                          ni, &q[9]);
    MPI_Alltoall_init(b->a2_s, 2, MPI_INT, b->a2_r, 2, MPI_INT, w, ni, &q[10]);
    MPI_Alltoallv_init(b->a2v_s, b->two, b->twodsp, MPI_INT, b->a2v_r, b->two, b->twodsp,
                       MPI_INT, w, ni, &q[11]);
    MPI_Alltoallw_init_c(b->a2w_s, b->wcnt, b->wsd, b->wty, b->a2w_r, b->wcnt, b->wrd, b->wty, w,
                         ni, &q[12]);
    MPI_Reduce_scatter_init(b->rs_s, b->rs_r, b->cnt, MPI_INT, MPI_SUM, w, ni, &q[13]);
    MPI_Reduce_scatter_block_init_c(b->rsb_s, b->rsb_r, 2, MPI_INT, MPI_SUM, w, ni, &q[14]);
    MPI_Scan_init(b->scan_s, b->scan_r, 4, MPI_INT, MPI_SUM, w, ni, &q[15]);
    MPI_Exscan_init(b->ex_s, b->ex_r, 4, MPI_INT, MPI_SUM, w, ni, &q[16]);
}

static void fill(bufs_t *b, int it)
{
    int tot = tri(p);
    for (int i = 0; i < 8; i++) {
        b->bc[i] = r == p - 1 ? val(it, r, i) : -1;
        b->rd_s[i] = val(it, r, i);
        b->rd_r[i] = -1;
        b->ar_s[i] = val(it, r, i);
        b->ar_r[i] = -1;
    }
    for (int i = 0; i < 2; i++)
        b->ga_s[i] = b->ag_s[i] = val(it, r, i);
    for (int i = 0; i <= r; i++)
        b->gv_s[i] = b->agv_s[i] = val(it, r, i);
    for (int i = 0; i < 3 * p; i++)
        b->sc_s[i] = val(it, r, i);
    for (int i = 0; i < tot; i++) {
        b->sv_s[i] = val(it, r, i);
        b->rs_s[i] = val(it, r, i);
        b->gv_r[i] = b->agv_r[i] = -1;
    }
    for (int i = 0; i < 2 * p; i++) {
        b->a2_s[i] = b->a2w_s[i] = b->rsb_s[i] = val(it, r, i);
        b->ga_r[i] = b->ag_r[i] = b->a2_r[i] = b->a2w_r[i] = -1;
    }
    for (int i = 0; i < 3 * p; i++) {
        b->a2v_s[i] = val(it, r, i);
        b->a2v_r[i] = -1;
    }
    for (int i = 0; i <= r; i++)
        b->sv_r[i] = b->rs_r[i] = -1;
    for (int i = 0; i < 3; i++)
        b->sc_r[i] = -1;
    b->rsb_r[0] = b->rsb_r[1] = -1;
    for (int i = 0; i < 4; i++) {
        b->scan_s[i] = b->ex_s[i] = val(it, r, i);
        b->scan_r[i] = b->ex_r[i] = -1;
    }
}

/* Checks every result of iteration it; returns the number of wrong ones. */
static int check(const bufs_t *b, int it)
{
    int bad = 0, tot = tri(p);
    for (int i = 0; i < 8; i++) {
        bad += b->bc[i] != val(it, p - 1, i);
        bad += r == 0 && b->rd_r[i] != sum_over_ranks(it, i, p);
        bad += b->ar_r[i] != val(it, p - 1, i);
    }
    for (int q = 0; q < p; q++)
        for (int i = 0; i < 2; i++) {
            bad += r == 1 % p && b->ga_r[2 * q + i] != val(it, q, i);
            bad += b->ag_r[2 * q + i] != val(it, q, i);
            /* alltoall: block r of rank q's input */
            bad += b->a2_r[2 * q + i] != val(it, q, 2 * r + i);
            bad += b->a2v_r[3 * q + i] != val(it, q, 3 * r + i);
            bad += b->a2w_r[2 * (p - 1 - q) + i] != val(it, q, 2 * r + i);
        }
    for (int q = 0; q < p; q++) {
        bad += b->a2v_r[3 * q + 2] != -1; /* the gap stays untouched */
        for (int i = 0; i <= q; i++) {
            bad += r == 0 && b->gv_r[tri(q) + i] != val(it, q, i);
            bad += b->agv_r[tri(q) + i] != val(it, q, i);
        }
    }
    for (int i = 0; i < 3; i++)
        bad += b->sc_r[i] != val(it, 0, 3 * r + i);
    for (int i = 0; i <= r; i++) {
        bad += b->sv_r[i] != val(it, p - 1, tri(r) + i);
        bad += b->rs_r[i] != sum_over_ranks(it, tri(r) + i, p);
    }
    for (int i = 0; i < 2; i++)
        bad += b->rsb_r[i] != sum_over_ranks(it, 2 * r + i, p);
    for (int i = 0; i < 4; i++) {
        bad += b->scan_r[i] != sum_over_ranks(it, i, r + 1);
        bad += r > 0 && b->ex_r[i] != sum_over_ranks(it, i, r);
    }
    (void)tot;
    return bad;
}

static int err_class(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    bufs_t b;
    MPI_Request q[NCOLL];
    alloc_bufs(&b);
    /* A blocking collective first: with LOCUS_COLL_HIER the communicator's
     * hierarchy exists then, and the persistent schedules use it. */
    int one = 1, total = 0;
    MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    init_all(&b, q);
    for (int it = 0; it < ITERS; it++) {
        fill(&b, it);
        int rc = MPI_Startall(NCOLL, q);
        CHECK(rc == MPI_SUCCESS, "Startall %d", rc);
        if (it % 10 == 0) {
            /* Blocking collectives on the same communicator meanwhile. */
            total = 0;
            MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            CHECK(total == p, "blocking Allreduce among persistent ones: %d", total);
        }
        rc = MPI_Waitall(NCOLL, q, MPI_STATUSES_IGNORE);
        CHECK(rc == MPI_SUCCESS, "Waitall %d", rc);
        int bad = check(&b, it);
        CHECK(bad == 0, "iteration %d: %d wrong results", it, bad);
        if (bad)
            break;
    }
    for (int i = 0; i < NCOLL; i++)
        CHECK(q[i] != MPI_REQUEST_NULL, "request %d freed by Waitall", i);

    /* One at a time, in an order of its own, each waited differently;
     * inactive ones do not disturb the calls. */
    fill(&b, 999);
    for (int i = NCOLL - 1; i >= 0; i--) {
        MPI_Start(&q[i]);
        int flag = 0;
        if (i % 3 == 0) {
            MPI_Wait(&q[i], MPI_STATUS_IGNORE);
        } else if (i % 3 == 1) {
            double t0 = MPI_Wtime();
            while (!flag && MPI_Wtime() - t0 < 60)
                MPI_Test(&q[i], &flag, MPI_STATUS_IGNORE);
            CHECK(flag, "Test loop on collective %d never completed", i);
        } else {
            int idx = -1;
            MPI_Waitany(NCOLL, q, &idx, MPI_STATUS_IGNORE);
            CHECK(idx == i, "Waitany found %d, expected %d", idx, i);
        }
    }
    CHECK(check(&b, 999) == 0, "one-at-a-time run: %d wrong", check(&b, 999));

    /* A persistent collective progresses while its rank is blocked on
     * something else: rank p-1 (the bcast root) starts it and blocks in a
     * receive from rank 0, which sends only after the bcast completed. */
    fill(&b, 1234);
    MPI_Start(&q[1]);
    if (p > 1 && r == p - 1) {
        int tok;
        MPI_Recv(&tok, 1, MPI_INT, 0, 55, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(tok == 1234, "token %d", tok);
    }
    MPI_Wait(&q[1], MPI_STATUS_IGNORE);
    if (p > 1 && r == 0) {
        int tok = b.bc[0] == val(1234, p - 1, 0) ? 1234 : -1;
        MPI_Send(&tok, 1, MPI_INT, p - 1, 55, MPI_COMM_WORLD);
    }

    /* Misuse. */
    MPI_Start(&q[0]);
    int rc = MPI_Start(&q[0]);
    CHECK(err_class(rc) == MPI_ERR_REQUEST, "Start of an active barrier: %d", rc);
    rc = MPI_Cancel(&q[0]);
    CHECK(err_class(rc) == MPI_ERR_REQUEST, "Cancel of a collective: %d", rc);
    MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    /* Freed while active at the root: the others still get the data (the
     * root's part, sends only, finishes in its later calls). */
    fill(&b, 4321);
    MPI_Start(&q[1]);
    if (r == p - 1) {
        rc = MPI_Request_free(&q[1]);
        CHECK(rc == MPI_SUCCESS && q[1] == MPI_REQUEST_NULL, "free active: %d", rc);
    } else {
        MPI_Wait(&q[1], MPI_STATUS_IGNORE);
        CHECK(b.bc[0] == val(4321, p - 1, 0) && b.bc[7] == val(4321, p - 1, 7),
              "bcast freed at the root: got %d", b.bc[0]);
    }
    MPI_Request bad;
    rc = MPI_Bcast_init(b.bc, 8, MPI_INT, p, MPI_COMM_WORLD, MPI_INFO_NULL, &bad);
    CHECK(err_class(rc) == MPI_ERR_ROOT, "Bcast_init root p: %d", rc);
    rc = MPI_Allreduce_init(b.rd_s, b.rd_r, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &bad);
    CHECK(err_class(rc) == MPI_ERR_COUNT, "Allreduce_init count -1: %d", rc);
    rc = MPI_Allreduce_init(b.rd_s, b.rd_r, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD,
                            MPI_INFO_NULL, &bad);
    CHECK(err_class(rc) == MPI_ERR_OP, "Allreduce_init MPI_OP_NULL: %d", rc);
    rc = MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, NULL);
    CHECK(err_class(rc) == MPI_ERR_ARG, "Barrier_init without request: %d", rc);
    rc = MPI_Barrier_init(MPI_COMM_NULL, MPI_INFO_NULL, &bad);
    CHECK(err_class(rc) == MPI_ERR_COMM, "Barrier_init on MPI_COMM_NULL: %d", rc);
    for (int i = 0; i < NCOLL; i++)
        if (q[i] != MPI_REQUEST_NULL)
            MPI_Request_free(&q[i]);
    /* Everything is done everywhere before the buffers go. */
    MPI_Barrier(MPI_COMM_WORLD);
    free_bufs(&b);
    return mtest_finish();
}
