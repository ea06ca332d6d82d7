/*
 * MPI_T performance variables on 2 ranks of one node (shm between them),
 * LOCUS_SINGLE_COPY=none (large messages through the pool):
 *  - exact counts: N eager sends grow locus_shm_msgs_sent/eager_sent by N
 *    and bytes_sent by N*size on the sender, nothing on the receiver;
 *    large sends grow rndv_sent (and pipe_recv at the receiver); sends to
 *    oneself grow locus_self_msgs_sent;
 *  - class semantics: counters count only while started, stop freezes,
 *    reset and write set, readreset returns and zeroes, ALL_HANDLES;
 *    levels (unexpected, posted) read the queues now;
 *  - a full ring and an exhausted pool are counted;
 *  - collectives per kind on a handle bound to a communicator, invalid
 *    once it is freed;
 *  - the error codes of misuse.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tcheck.h"

static MPI_T_pvar_session sess;

static MPI_T_pvar_handle pv(const char *name, int cls, void *obj)
{
    int idx = -1, count = 0;
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    int rc = MPI_T_pvar_get_index(name, cls, &idx);
    CHECK(rc == MPI_SUCCESS, "no pvar %s (%d)", name, rc);
    rc = MPI_T_pvar_handle_alloc(sess, idx, obj, &h, &count);
    CHECK(rc == MPI_SUCCESS && count == 1, "alloc %s: %d", name, rc);
    return h;
}

static unsigned long long rd(MPI_T_pvar_handle h)
{
    unsigned long long v = 0;
    int rc = MPI_T_pvar_read(sess, h, &v);
    CHECK(rc == MPI_SUCCESS, "read: %d", rc);
    return v;
}

enum { N = 50, SMALL = 100, NBIG = 5, BIG = 65536 };

static void exact_counts(int rank)
{
    MPI_T_pvar_handle msgs = pv("locus_shm_msgs_sent", MPI_T_PVAR_CLASS_COUNTER, NULL);
    MPI_T_pvar_handle bytes = pv("locus_shm_bytes_sent", MPI_T_PVAR_CLASS_COUNTER, NULL);
    MPI_T_pvar_handle eager = pv("locus_shm_eager_sent", MPI_T_PVAR_CLASS_COUNTER, NULL);
    MPI_T_pvar_handle rndv = pv("locus_shm_rndv_sent", MPI_T_PVAR_CLASS_COUNTER, NULL);
    MPI_T_pvar_handle pipe = pv("locus_shm_pipe_recv", MPI_T_PVAR_CLASS_COUNTER, NULL);
    MPI_T_pvar_handle self = pv("locus_self_msgs_sent", MPI_T_PVAR_CLASS_COUNTER, NULL);
    char *buf = calloc(1, BIG);

    /* Handles start stopped: nothing counts yet. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_Send(buf, SMALL, MPI_BYTE, 1, 9, MPI_COMM_WORLD);
    else
        MPI_Recv(buf, SMALL, MPI_BYTE, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(rd(msgs) == 0, "a stopped counter moved");

    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(MPI_T_pvar_start(sess, MPI_T_PVAR_ALL_HANDLES) == MPI_SUCCESS, "start all");
    for (int i = 0; i < N; i++) {
        if (rank == 0)
            MPI_Send(buf, SMALL, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        else
            MPI_Recv(buf, SMALL, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    CHECK(MPI_T_pvar_stop(sess, MPI_T_PVAR_ALL_HANDLES) == MPI_SUCCESS, "stop all");
    unsigned long long want_msgs = rank == 0 ? N : 0;
    CHECK(rd(msgs) == want_msgs, "shm msgs %llu, want %llu", rd(msgs), want_msgs);
    CHECK(rd(bytes) == want_msgs * SMALL, "shm bytes %llu", rd(bytes));
    CHECK(rd(eager) == want_msgs && rd(rndv) == 0, "eager %llu rndv %llu", rd(eager), rd(rndv));

    /* Stopped: frozen while more goes out. */
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(rd(msgs) == want_msgs, "stopped counter moved over a barrier");

    /* Reset, then large messages (rendezvous, pipelined). */
    CHECK(MPI_T_pvar_reset(sess, MPI_T_PVAR_ALL_HANDLES) == MPI_SUCCESS, "reset all");
    CHECK(rd(msgs) == 0 && rd(bytes) == 0, "reset");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_T_pvar_start(sess, MPI_T_PVAR_ALL_HANDLES);
    for (int i = 0; i < NBIG; i++) {
        if (rank == 0)
            MPI_Send(buf, BIG, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
        else
            MPI_Recv(buf, BIG, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    /* And three to oneself. */
    for (int i = 0; i < 3; i++)
        MPI_Sendrecv(buf, SMALL, MPI_BYTE, rank, 3, buf + SMALL, SMALL, MPI_BYTE, rank, 3,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_T_pvar_stop(sess, MPI_T_PVAR_ALL_HANDLES);
    want_msgs = rank == 0 ? NBIG : 0;
    CHECK(rd(rndv) == want_msgs && rd(eager) == 0, "rndv %llu eager %llu", rd(rndv), rd(eager));
    CHECK(rd(bytes) == want_msgs * BIG, "big bytes %llu", rd(bytes));
    CHECK(rd(pipe) == (rank == 1 ? NBIG : 0), "pipelined receives %llu", rd(pipe));
    CHECK(rd(self) == 3, "self msgs %llu", rd(self));

    /* write sets, readreset returns and zeroes. */
    unsigned long long v = 1000, got = 0;
    CHECK(MPI_T_pvar_write(sess, msgs, &v) == MPI_SUCCESS && rd(msgs) == 1000, "write");
    CHECK(MPI_T_pvar_readreset(sess, msgs, &got) == MPI_SUCCESS && got == 1000, "readreset");
    CHECK(rd(msgs) == 0, "after readreset");

    MPI_T_pvar_handle all[] = {msgs, bytes, eager, rndv, pipe, self};
    for (int i = 0; i < 6; i++)
        CHECK(MPI_T_pvar_handle_free(sess, &all[i]) == MPI_SUCCESS &&
              all[i] == MPI_T_PVAR_HANDLE_NULL, "free %d", i);
    free(buf);
}

/* The queues as levels: N unexpected messages and a marker wait at rank 1. */
static void levels(int rank)
{
    MPI_T_pvar_handle unexp = pv("locus_core_unexpected", MPI_T_PVAR_CLASS_LEVEL, NULL);
    MPI_T_pvar_handle posted = pv("locus_core_posted", MPI_T_PVAR_CLASS_LEVEL, NULL);
    int x = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        for (int i = 0; i < N; i++)
            MPI_Send(&x, 1, MPI_INT, 1, 4, MPI_COMM_WORLD);
        MPI_Send(&x, 1, MPI_INT, 1, 5, MPI_COMM_WORLD);
        MPI_Recv(&x, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        /* The marker came last from the same sender: the N are here. */
        MPI_Probe(0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(rd(unexp) == N + 1, "unexpected level %llu, want %d", rd(unexp), N + 1);
        MPI_Request r;
        MPI_Irecv(&x, 1, MPI_INT, 0, 77, MPI_COMM_WORLD, &r);
        CHECK(rd(posted) == 1, "posted level %llu", rd(posted));
        MPI_Cancel(&r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        for (int i = 0; i < N + 1; i++)
            MPI_Recv(&x, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(rd(unexp) == 0 && rd(posted) == 0, "queues drained: %llu %llu", rd(unexp),
              rd(posted));
        MPI_Send(&x, 1, MPI_INT, 0, 6, MPI_COMM_WORLD);
    }
    /* Levels are continuous and read-only. */
    unsigned long long v = 0;
    CHECK(MPI_T_pvar_start(sess, unexp) == MPI_T_ERR_PVAR_NO_STARTSTOP, "start a level");
    CHECK(MPI_T_pvar_stop(sess, unexp) == MPI_T_ERR_PVAR_NO_STARTSTOP, "stop a level");
    CHECK(MPI_T_pvar_reset(sess, unexp) == MPI_T_ERR_PVAR_NO_WRITE, "reset a level");
    CHECK(MPI_T_pvar_write(sess, unexp, &v) == MPI_T_ERR_PVAR_NO_WRITE, "write a level");
    CHECK(MPI_T_pvar_readreset(sess, unexp, &v) == MPI_T_ERR_PVAR_NO_WRITE, "readreset level");
    MPI_T_pvar_handle_free(sess, &unexp);
    MPI_T_pvar_handle_free(sess, &posted);
}

/* A sleeping receiver: its ring fills; its pool-fed large message waits. */
static void full_resources(int rank)
{
    MPI_T_pvar_handle ring = pv("locus_shm_ring_full", MPI_T_PVAR_CLASS_COUNTER, NULL);
    MPI_T_pvar_handle pool = pv("locus_shm_pool_full", MPI_T_PVAR_CLASS_COUNTER, NULL);
    MPI_T_pvar_handle queued = pv("locus_core_sends_queued", MPI_T_PVAR_CLASS_LEVEL, NULL);
    enum { M = 200, SZ = 1000, LARGE = 4 << 20 };
    char *buf = calloc(1, LARGE);
    MPI_Request req[M];
    MPI_T_pvar_start(sess, ring);
    MPI_T_pvar_start(sess, pool);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        for (int i = 0; i < M; i++)
            MPI_Isend(buf, SZ, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &req[i]);
        CHECK(rd(queued) > 0, "no send waits for room while the peer sleeps");
        MPI_Waitall(M, req, MPI_STATUSES_IGNORE);
        CHECK(rd(ring) > 0, "%d sends of %d bytes into a sleeping peer's ring: none refused", M,
              SZ);
        /* The announcement then a marker: the receiver matches at once,
         * sends its CTS and sleeps while the pool (8 chunks) holds 32. */
        MPI_Request big;
        MPI_Isend(buf, LARGE, MPI_BYTE, 1, 8, MPI_COMM_WORLD, &big);
        MPI_Send(buf, 1, MPI_BYTE, 1, 9, MPI_COMM_WORLD);
        MPI_Wait(&big, MPI_STATUS_IGNORE);
        CHECK(rd(pool) > 0, "a 4 MiB send through a 1 MiB pool never found it full");
    } else {
        usleep(300000);
        for (int i = 0; i < M; i++)
            MPI_Recv(buf, SZ, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Request big;
        MPI_Recv(buf, 1, MPI_BYTE, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Irecv(buf, LARGE, MPI_BYTE, 0, 8, MPI_COMM_WORLD, &big);
        usleep(200000);
        MPI_Wait(&big, MPI_STATUS_IGNORE);
    }
    MPI_T_pvar_handle_free(sess, &ring);
    MPI_T_pvar_handle_free(sess, &pool);
    MPI_T_pvar_handle_free(sess, &queued);
    free(buf);
}

static void collectives(void)
{
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm world = MPI_COMM_WORLD;
    MPI_T_pvar_handle bar = pv("locus_coll_barrier_started", MPI_T_PVAR_CLASS_COUNTER, &c);
    MPI_T_pvar_handle ag = pv("locus_coll_allgather_started", MPI_T_PVAR_CLASS_COUNTER, &c);
    MPI_T_pvar_handle wbar = pv("locus_coll_barrier_started", MPI_T_PVAR_CLASS_COUNTER, &world);
    int bind = 0, idx;
    MPI_T_pvar_get_index("locus_coll_barrier_started", MPI_T_PVAR_CLASS_COUNTER, &idx);
    MPI_T_pvar_get_info(idx, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &bind, NULL, NULL,
                        NULL);
    CHECK(bind == MPI_T_BIND_MPI_COMM, "collectives bound to a communicator: %d", bind);
    MPI_T_pvar_start(sess, MPI_T_PVAR_ALL_HANDLES);
    int in[2] = {1, 2}, out[8];
    for (int i = 0; i < 3; i++)
        MPI_Barrier(c);
    MPI_Allgather(in, 1, MPI_INT, out, 1, MPI_INT, c);
    MPI_Allgather(in, 2, MPI_INT, out, 2, MPI_INT, c);
    MPI_Request r;
    MPI_Ibarrier(c, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(rd(bar) == 4, "barriers on c: %llu", rd(bar));
    CHECK(rd(ag) == 2, "allgathers on c: %llu", rd(ag));
    CHECK(rd(wbar) == 0, "barriers on WORLD: %llu", rd(wbar));
    MPI_Comm_free(&c);
    unsigned long long v;
    CHECK(MPI_T_pvar_read(sess, bar, &v) == MPI_T_ERR_INVALID_HANDLE, "freed communicator");
    MPI_T_pvar_handle h;
    int count;
    CHECK(MPI_T_pvar_handle_alloc(sess, idx, NULL, &h, &count) == MPI_T_ERR_INVALID_HANDLE,
          "no communicator");
    MPI_Comm null = MPI_COMM_NULL;
    CHECK(MPI_T_pvar_handle_alloc(sess, idx, &null, &h, &count) == MPI_T_ERR_INVALID_HANDLE,
          "MPI_COMM_NULL");
    MPI_T_pvar_handle_free(sess, &bar);
    MPI_T_pvar_handle_free(sess, &ag);
    MPI_T_pvar_handle_free(sess, &wbar);
}

static void misuse(void)
{
    int num, idx, ro, cont, atomic, cls;
    MPI_Datatype dt;
    MPI_T_pvar_get_num(&num);
    CHECK(MPI_T_pvar_get_info(num, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                              NULL, NULL) == MPI_T_ERR_INVALID_INDEX, "index num");
    CHECK(MPI_T_pvar_get_index("locus_shm_msgs_sent", MPI_T_PVAR_CLASS_LEVEL, &idx) ==
          MPI_T_ERR_INVALID_NAME, "right name, wrong class");
    MPI_T_pvar_get_index("locus_shm_msgs_sent", MPI_T_PVAR_CLASS_COUNTER, &idx);
    MPI_T_pvar_get_info(idx, NULL, NULL, NULL, &cls, &dt, NULL, NULL, NULL, NULL, &ro, &cont,
                        &atomic);
    CHECK(cls == MPI_T_PVAR_CLASS_COUNTER && dt == MPI_UNSIGNED_LONG_LONG && !ro && !cont &&
          atomic, "counter info");
    MPI_T_pvar_handle h = pv("locus_shm_msgs_sent", MPI_T_PVAR_CLASS_COUNTER, NULL);
    MPI_T_pvar_session other;
    MPI_T_pvar_session_create(&other);
    unsigned long long v;
    CHECK(MPI_T_pvar_read(other, h, &v) == MPI_T_ERR_INVALID_HANDLE, "another session's handle");
    CHECK(MPI_T_pvar_read(sess, MPI_T_PVAR_ALL_HANDLES, &v) == MPI_T_ERR_INVALID_HANDLE,
          "read all handles");
    CHECK(MPI_T_pvar_readreset(sess, MPI_T_PVAR_ALL_HANDLES, &v) == MPI_T_ERR_INVALID_HANDLE,
          "readreset all handles");
    MPI_T_pvar_session stale = other;
    MPI_T_pvar_session_free(&other);
    CHECK(other == MPI_T_PVAR_SESSION_NULL, "session nulled");
    CHECK(MPI_T_pvar_start(stale, MPI_T_PVAR_ALL_HANDLES) == MPI_T_ERR_INVALID_SESSION,
          "freed session");
    CHECK(MPI_T_pvar_session_free(&stale) == MPI_T_ERR_INVALID_SESSION, "session double free");
    MPI_T_pvar_handle_free(sess, &h);
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tc_rank = rank;
    if (size != 2) {
        fprintf(stderr, "mpit_pvars needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_pvar_session_create(&sess);
    exact_counts(rank);
    levels(rank);
    full_resources(rank);
    collectives();
    misuse();
    MPI_T_pvar_session_free(&sess);
    MPI_T_finalize();
    int rc = tc_report(MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
}
