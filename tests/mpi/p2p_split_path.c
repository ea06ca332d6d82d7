/*
 * p2p_split_path.c — on 2 ranks of one node, each with its core, which
 * large messages the shm transport splits between both sides (the sender
 * writes one half while the receiver reads the other). A stream one way
 * (a window of 64 KiB messages, as osu_bw sends) splits: its sender has
 * nothing else to do. An exchange (each rank sends to the other first,
 * then receives, as a halo swap does) never splits at that size: the
 * sender is busy receiving, and its half would come late. ctest sets the
 * rule to CMA from 32 KiB (LOCUS_SHM_CMA_MIN). Counted with the pvars;
 * every byte checked. Skips (77) where the kernel refuses CMA between the
 * ranks or the ranks share a CPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tools/tcheck.h"

enum { LEN = 64 << 10, WINDOW = 16, ROUNDS = 4 };

static MPI_T_pvar_session sess;

static MPI_T_pvar_handle pv(const char *name, int cls)
{
    int idx = -1, count = 0;
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    CHECK(MPI_T_pvar_get_index(name, cls, &idx) == MPI_SUCCESS, "no pvar %s", name);
    CHECK(MPI_T_pvar_handle_alloc(sess, idx, NULL, &h, &count) == MPI_SUCCESS, "%s", name);
    return h;
}

static unsigned long long rd(MPI_T_pvar_handle h)
{
    unsigned long long v = 0;
    MPI_T_pvar_read(sess, h, &v);
    return v;
}

static unsigned char byte_of(int src, int msg, size_t i)
{
    return (unsigned char)(src * 131 + msg * 29 + i * 7 + (i >> 12));
}

static void fill(unsigned char *b, int src, int msg)
{
    for (size_t i = 0; i < LEN; i++)
        b[i] = byte_of(src, msg, i);
}

static void verify(const unsigned char *b, int src, int msg, const char *what)
{
    for (size_t i = 0; i < LEN; i++)
        if (b[i] != byte_of(src, msg, i)) {
            CHECK(0, "%s: message %d from %d: byte %zu is %u, want %u", what, msg, src, i,
                  b[i], byte_of(src, msg, i));
            return;
        }
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tc_rank = rank;
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "p2p_split_path: needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_T_pvar_session_create(&sess);
    MPI_T_pvar_handle cma = pv("locus_shm_cma_recv", MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle split = pv("locus_shm_split_recv", MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle pipe = pv("locus_shm_pipe_recv", MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle on = pv("locus_shm_single_copy", MPI_T_PVAR_CLASS_STATE);
    MPI_T_pvar_handle yield = pv("locus_core_yield", MPI_T_PVAR_CLASS_STATE);
    int single = 0, both = 0, idle = 0, any_idle = 0;
    MPI_T_pvar_read(sess, on, &single);
    MPI_Allreduce(&single, &both, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_T_pvar_read(sess, yield, &idle);
    MPI_Allreduce(&idle, &any_idle, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!both || any_idle) {
        if (rank == 0)
            printf("SKIPPED: %s\n", !both ? "no single copy (CMA) between the ranks here"
                                          : "the ranks share a CPU (no split single copy)");
        MPI_Finalize();
        return 77;
    }

    unsigned char *bufs = malloc((size_t)WINDOW * LEN), *out = malloc(LEN);
    MPI_Request reqs[WINDOW];
    MPI_T_pvar_start(sess, MPI_T_PVAR_ALL_HANDLES);
    /* The stream: rank 0 sends a window to rank 1, whose receives wait
     * posted; a message of it may go unsplit only while it is alone. */
    for (int r = 0; r < ROUNDS; r++) {
        if (rank == 1)
            for (int m = 0; m < WINDOW; m++)
                MPI_Irecv(bufs + (size_t)m * LEN, LEN, MPI_BYTE, 0, m, MPI_COMM_WORLD, &reqs[m]);
        else
            for (int m = 0; m < WINDOW; m++)
                fill(bufs + (size_t)m * LEN, 0, r * WINDOW + m);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            for (int m = 0; m < WINDOW; m++)
                MPI_Isend(bufs + (size_t)m * LEN, LEN, MPI_BYTE, 1, m, MPI_COMM_WORLD, &reqs[m]);
        MPI_Waitall(WINDOW, reqs, MPI_STATUSES_IGNORE);
        if (rank == 1)
            for (int m = 0; m < WINDOW; m++)
                verify(bufs + (size_t)m * LEN, 0, r * WINDOW + m, "stream");
    }
    MPI_T_pvar_stop(sess, MPI_T_PVAR_ALL_HANDLES);
    unsigned long long streamed = ROUNDS * WINDOW;
    if (rank == 1) {
        CHECK(rd(cma) + rd(pipe) == streamed, "stream: cma_recv %llu + pipe_recv %llu, want %llu",
              rd(cma), rd(pipe), streamed);
        CHECK(rd(split) >= streamed / 2, "stream: %llu of %llu messages split", rd(split),
              streamed);
    }

    /* The exchange: my RTS goes out before I match the peer's, and the
     * peer's comes before its FIN for mine, so each receive is matched
     * while a send of mine to that peer is in flight. */
    unsigned long long split0 = rd(split), moved0 = rd(cma) + rd(pipe);
    MPI_T_pvar_start(sess, MPI_T_PVAR_ALL_HANDLES);
    for (int r = 0; r < ROUNDS * WINDOW; r++) {
        fill(out, rank, r);
        MPI_Isend(out, LEN, MPI_BYTE, 1 - rank, r, MPI_COMM_WORLD, &reqs[0]);
        MPI_Irecv(bufs, LEN, MPI_BYTE, 1 - rank, r, MPI_COMM_WORLD, &reqs[1]);
        MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
        verify(bufs, 1 - rank, r, "exchange");
    }
    MPI_T_pvar_stop(sess, MPI_T_PVAR_ALL_HANDLES);
    CHECK(rd(cma) + rd(pipe) - moved0 == streamed, "exchange: %llu large receives, want %llu",
          rd(cma) + rd(pipe) - moved0, streamed);
    CHECK(rd(split) == split0, "exchange: %llu of %llu messages split", rd(split) - split0,
          streamed);
    free(bufs);
    free(out);
    MPI_T_pvar_session_free(&sess);
    int bad = tc_report(MPI_COMM_WORLD);
    MPI_Finalize();
    MPI_T_finalize();
    return bad ? 1 : 0;
}
