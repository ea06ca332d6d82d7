/*
 * Every collective on an intercommunicator (even world ranks: group A,
 * odd: group B), with data checks: barrier, bcast (MPI_ROOT /
 * MPI_PROC_NULL, roots on either side), reduce, allreduce, gather(v),
 * scatter(v), allgather(v), alltoall(v,w), reduce_scatter(_block); once
 * blocking, once nonblocking, and a few persistent ones started twice.
 * Needs >= 2 ranks (unequal groups with an odd count).
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

static int wrank, wsize, inA, lsize, rsize, lrank;
static MPI_Comm ic;

/* World rank of member i of group A or B. */
static int world_of(int in_a, int i)
{
    return 2 * i + (in_a ? 0 : 1);
}

static void finish(int nb, MPI_Request *r)
{
    if (nb)
        MPI_Wait(r, MPI_STATUS_IGNORE);
}

#define DO(nb, blocking, nonblocking)                                          \
    do {                                                                       \
        MPI_Request r_ = MPI_REQUEST_NULL;                                     \
        (void)r_;                                                              \
        if (nb)                                                                \
            nonblocking;                                                       \
        else                                                                   \
            blocking;                                                          \
        finish(nb, &r_);                                                       \
    } while (0)

static void test_rooted(int nb, const char *mode)
{
    /* bcast from A's last member. */
    int root_a = (inA ? lsize : rsize) - 1, buf[4];
    for (int i = 0; i < 4; i++)
        buf[i] = -1;
    int root = inA ? (lrank == root_a ? MPI_ROOT : MPI_PROC_NULL) : root_a;
    if (root == MPI_ROOT)
        for (int i = 0; i < 4; i++)
            buf[i] = 1000 + i;
    DO(nb, MPI_Bcast(buf, 4, MPI_INT, root, ic), MPI_Ibcast(buf, 4, MPI_INT, root, ic, &r_));
    for (int i = 0; i < 4; i++) {
        int want = (!inA || root == MPI_ROOT) ? 1000 + i : -1;
        CHECK(buf[i] == want, "%s bcast[%d] = %d, expected %d", mode, i, buf[i], want);
    }

    /* reduce to B's member 0: the sum over A of (world + i). */
    int in[3], out[3] = { -1, -1, -1 };
    for (int i = 0; i < 3; i++)
        in[i] = wrank + i;
    root = inA ? 0 : (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL);
    DO(nb, MPI_Reduce(in, out, 3, MPI_INT, MPI_SUM, root, ic),
       MPI_Ireduce(in, out, 3, MPI_INT, MPI_SUM, root, ic, &r_));
    if (root == MPI_ROOT) {
        int na = (wsize + 1) / 2;
        for (int i = 0; i < 3; i++) {
            int want = 0;
            for (int a = 0; a < na; a++)
                want += world_of(1, a) + i;
            CHECK(out[i] == want, "%s reduce[%d] = %d, expected %d", mode, i, out[i], want);
        }
    }

    /* gather(v) at A's member 0 from every B member: [world, 10*world] /
     * (i + 1) copies of world at displacement reversed. */
    int *g = malloc(sizeof *g * 64), *cnt = malloc(sizeof *cnt * 32);
    int *dsp = malloc(sizeof *dsp * 32);
    int mine[2] = { wrank, 10 * wrank };
    root = inA ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    for (int i = 0; i < 64; i++)
        g[i] = -1;
    DO(nb, MPI_Gather(mine, 2, MPI_INT, g, 2, MPI_INT, root, ic),
       MPI_Igather(mine, 2, MPI_INT, g, 2, MPI_INT, root, ic, &r_));
    if (root == MPI_ROOT)
        for (int i = 0; i < rsize; i++)
            CHECK(g[2 * i] == world_of(0, i) && g[2 * i + 1] == 10 * world_of(0, i),
                  "%s gather block %d: %d %d", mode, i, g[2 * i], g[2 * i + 1]);
    int at = 0;
    for (int i = rsize - 1; i >= 0; i--) {
        cnt[i] = i + 1;
        dsp[i] = at;
        at += i + 1;
    }
    int vmine[16];
    for (int i = 0; i < 16; i++)
        vmine[i] = wrank;
    for (int i = 0; i < 64; i++)
        g[i] = -1;
    DO(nb, MPI_Gatherv(vmine, lrank + 1, MPI_INT, g, cnt, dsp, MPI_INT, root, ic),
       MPI_Igatherv(vmine, lrank + 1, MPI_INT, g, cnt, dsp, MPI_INT, root, ic, &r_));
    if (root == MPI_ROOT)
        for (int i = 0; i < rsize; i++)
            for (int k = 0; k < i + 1; k++)
                CHECK(g[dsp[i] + k] == world_of(0, i), "%s gatherv block %d[%d] = %d", mode, i,
                      k, g[dsp[i] + k]);

    /* scatter(v) from B's member 0 to every A member: block i is
     * [100 + i, 200 + i] / i + 1 copies of 300 + i. */
    root = inA ? 0 : (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL);
    int *s = malloc(sizeof *s * 64), got[16];
    for (int i = 0; i < rsize; i++) {
        s[2 * i] = 100 + i;
        s[2 * i + 1] = 200 + i;
    }
    got[0] = got[1] = -1;
    DO(nb, MPI_Scatter(s, 2, MPI_INT, got, 2, MPI_INT, root, ic),
       MPI_Iscatter(s, 2, MPI_INT, got, 2, MPI_INT, root, ic, &r_));
    if (inA)
        CHECK(got[0] == 100 + lrank && got[1] == 200 + lrank, "%s scatter got %d %d", mode,
              got[0], got[1]);
    at = 0;
    for (int i = 0; i < rsize; i++) {
        cnt[i] = i + 1;
        dsp[i] = at;
        for (int k = 0; k <= i; k++)
            s[at + k] = 300 + i;
        at += i + 1;
    }
    for (int i = 0; i < 16; i++)
        got[i] = -1;
    DO(nb, MPI_Scatterv(s, cnt, dsp, MPI_INT, got, lrank + 1, MPI_INT, root, ic),
       MPI_Iscatterv(s, cnt, dsp, MPI_INT, got, lrank + 1, MPI_INT, root, ic, &r_));
    if (inA)
        for (int k = 0; k <= lrank; k++)
            CHECK(got[k] == 300 + lrank, "%s scatterv got[%d] = %d", mode, k, got[k]);
    free(g);
    free(cnt);
    free(dsp);
    free(s);
}

static void test_all(int nb, const char *mode)
{
    /* allreduce: each group gets the other's sum of (world * (i + 1)). */
    int in[2] = { wrank, 2 * wrank }, out[2] = { -1, -1 };
    DO(nb, MPI_Allreduce(in, out, 2, MPI_INT, MPI_SUM, ic),
       MPI_Iallreduce(in, out, 2, MPI_INT, MPI_SUM, ic, &r_));
    int sum = 0;
    for (int i = 0; i < rsize; i++)
        sum += world_of(!inA, i);
    CHECK(out[0] == sum && out[1] == 2 * sum, "%s allreduce %d %d, expected %d", mode, out[0],
          out[1], sum);

    /* allgather(v): every remote member's world rank (i + 1 times). */
    int *r = malloc(sizeof *r * 256), *cnt = malloc(sizeof *cnt * 32);
    int *dsp = malloc(sizeof *dsp * 32);
    int mine[16];
    for (int i = 0; i < 16; i++)
        mine[i] = wrank;
    for (int i = 0; i < 256; i++)
        r[i] = -1;
    DO(nb, MPI_Allgather(mine, 1, MPI_INT, r, 1, MPI_INT, ic),
       MPI_Iallgather(mine, 1, MPI_INT, r, 1, MPI_INT, ic, &r_));
    for (int i = 0; i < rsize; i++)
        CHECK(r[i] == world_of(!inA, i), "%s allgather[%d] = %d", mode, i, r[i]);
    int at = 0;
    for (int i = 0; i < rsize; i++) {
        cnt[i] = i + 1;
        dsp[i] = at;
        at += i + 2;   /* a gap between blocks stays untouched */
    }
    for (int i = 0; i < 256; i++)
        r[i] = -1;
    DO(nb, MPI_Allgatherv(mine, lrank + 1, MPI_INT, r, cnt, dsp, MPI_INT, ic),
       MPI_Iallgatherv(mine, lrank + 1, MPI_INT, r, cnt, dsp, MPI_INT, ic, &r_));
    for (int i = 0; i < rsize; i++) {
        for (int k = 0; k <= i; k++)
            CHECK(r[dsp[i] + k] == world_of(!inA, i), "%s allgatherv %d[%d] = %d", mode, i, k,
                  r[dsp[i] + k]);
        CHECK(r[dsp[i] + i + 1] == -1, "%s allgatherv wrote into a gap", mode);
    }

    /* alltoall: block to remote i is world * 100 + i. */
    int *sb = malloc(sizeof *sb * 256);
    for (int i = 0; i < rsize; i++)
        sb[i] = wrank * 100 + i;
    for (int i = 0; i < 256; i++)
        r[i] = -1;
    DO(nb, MPI_Alltoall(sb, 1, MPI_INT, r, 1, MPI_INT, ic),
       MPI_Ialltoall(sb, 1, MPI_INT, r, 1, MPI_INT, ic, &r_));
    for (int i = 0; i < rsize; i++)
        CHECK(r[i] == world_of(!inA, i) * 100 + lrank, "%s alltoall[%d] = %d", mode, i, r[i]);

    /* alltoallv: lrank + 1 copies to every remote member, reversed blocks. */
    int *sc = malloc(sizeof *sc * 32), *sd = malloc(sizeof *sd * 32);
    at = 0;
    for (int i = 0; i < rsize; i++) {
        sc[i] = lrank + 1;
        sd[i] = at;
        for (int k = 0; k <= lrank; k++)
            sb[at + k] = wrank * 100 + i;
        at += lrank + 1;
    }
    at = 0;
    for (int i = rsize - 1; i >= 0; i--) {
        cnt[i] = i + 1;
        dsp[i] = at;
        at += i + 1;
    }
    for (int i = 0; i < 256; i++)
        r[i] = -1;
    DO(nb, MPI_Alltoallv(sb, sc, sd, MPI_INT, r, cnt, dsp, MPI_INT, ic),
       MPI_Ialltoallv(sb, sc, sd, MPI_INT, r, cnt, dsp, MPI_INT, ic, &r_));
    for (int i = 0; i < rsize; i++)
        for (int k = 0; k <= i; k++)
            CHECK(r[dsp[i] + k] == world_of(!inA, i) * 100 + lrank, "%s alltoallv %d[%d] = %d",
                  mode, i, k, r[dsp[i] + k]);

    /* alltoallw: ints to even remote ranks, doubles to odd ones. */
    MPI_Datatype *st = malloc(sizeof *st * 32), *rt = malloc(sizeof *rt * 32);
    char *wsend = malloc(64 * 32), *wrecv = malloc(64 * 32);
    memset(wrecv, 0xff, 64 * 32);
    for (int i = 0; i < rsize; i++) {
        sc[i] = cnt[i] = 1;
        sd[i] = dsp[i] = 16 * i;
        st[i] = rt[i] = i % 2 ? MPI_DOUBLE : MPI_INT;
        if (i % 2)
            *(double *)(wsend + 16 * i) = wrank + 0.5;
        else
            *(int *)(wsend + 16 * i) = wrank;
    }
    /* The receive types follow the sender's choice: sender's local rank
     * (= my remote index as seen from it) parity. */
    for (int i = 0; i < rsize; i++)
        rt[i] = lrank % 2 ? MPI_DOUBLE : MPI_INT;
    DO(nb, MPI_Alltoallw(wsend, sc, sd, st, wrecv, cnt, dsp, rt, ic),
       MPI_Ialltoallw(wsend, sc, sd, st, wrecv, cnt, dsp, rt, ic, &r_));
    for (int i = 0; i < rsize; i++) {
        if (lrank % 2)
            CHECK(*(double *)(wrecv + 16 * i) == world_of(!inA, i) + 0.5, "%s alltoallw[%d]",
                  mode, i);
        else
            CHECK(*(int *)(wrecv + 16 * i) == world_of(!inA, i), "%s alltoallw[%d] = %d", mode,
                  i, *(int *)(wrecv + 16 * i));
    }

    /* reduce_scatter_block: both groups reduce lsize * rsize elements; my
     * block of the other group's sum, element k = sum over it of world + k. */
    int total = lsize * rsize, rc_blk = rsize;
    for (int k = 0; k < total; k++)
        sb[k] = wrank + k;
    for (int i = 0; i < 256; i++)
        r[i] = -1;
    DO(nb, MPI_Reduce_scatter_block(sb, r, rc_blk, MPI_INT, MPI_SUM, ic),
       MPI_Ireduce_scatter_block(sb, r, rc_blk, MPI_INT, MPI_SUM, ic, &r_));
    for (int k = 0; k < rc_blk; k++) {
        int want = 0, elem = lrank * rc_blk + k;
        for (int i = 0; i < rsize; i++)
            want += world_of(!inA, i) + elem;
        CHECK(r[k] == want, "%s reduce_scatter_block[%d] = %d, expected %d", mode, k, r[k], want);
    }
    /* reduce_scatter with uneven counts over my group (same total). */
    for (int i = 0; i < lsize; i++)
        cnt[i] = rsize;
    if (lsize > 1) {
        cnt[0] += 1;
        cnt[lsize - 1] -= 1;
    }
    int first = 0;
    for (int i = 0; i < lrank; i++)
        first += cnt[i];
    for (int i = 0; i < 256; i++)
        r[i] = -1;
    DO(nb, MPI_Reduce_scatter(sb, r, cnt, MPI_INT, MPI_SUM, ic),
       MPI_Ireduce_scatter(sb, r, cnt, MPI_INT, MPI_SUM, ic, &r_));
    for (int k = 0; k < cnt[lrank]; k++) {
        int want = 0;
        for (int i = 0; i < rsize; i++)
            want += world_of(!inA, i) + first + k;
        CHECK(r[k] == want, "%s reduce_scatter[%d] = %d, expected %d", mode, k, r[k], want);
    }
    DO(nb, MPI_Barrier(ic), MPI_Ibarrier(ic, &r_));
    free(r);
    free(cnt);
    free(dsp);
    free(sb);
    free(sc);
    free(sd);
    free(st);
    free(rt);
    free(wsend);
    free(wrecv);
}

/* Persistent forms: built once, started twice with new data. */
static void test_persistent(void)
{
    int buf = -1, in = 0, out = -1;
    int root = inA ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    MPI_Request rq[2];
    MPI_Bcast_init(&buf, 1, MPI_INT, root, ic, MPI_INFO_NULL, &rq[0]);
    MPI_Allreduce_init(&in, &out, 1, MPI_INT, MPI_SUM, ic, MPI_INFO_NULL, &rq[1]);
    for (int round = 1; round <= 2; round++) {
        if (root == MPI_ROOT)
            buf = 77 * round;
        in = wrank * round;
        MPI_Startall(2, rq);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        if (!inA)
            CHECK(buf == 77 * round, "persistent bcast round %d: %d", round, buf);
        int sum = 0;
        for (int i = 0; i < rsize; i++)
            sum += world_of(!inA, i) * round;
        CHECK(out == sum, "persistent allreduce round %d: %d, expected %d", round, out, sum);
    }
    MPI_Request_free(&rq[0]);
    MPI_Request_free(&rq[1]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (wsize < 2) {
        printf("intercomm_coll needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    inA = wrank % 2 == 0;
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, !inA, wrank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, inA ? 1 : 0, 5, &ic);
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);
    MPI_Comm_rank(ic, &lrank);
    test_rooted(0, "blocking");
    test_all(0, "blocking");
    test_rooted(1, "nonblocking");
    test_all(1, "nonblocking");
    test_persistent();
    MPI_Comm_free(&ic);
    MPI_Comm_free(&half);
    return mtest_finish();
}
