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

#include "../tools/tpvar.h"

enum { LEN = 64 << 10, WINDOW = 16, ROUNDS = 4 };

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
    tp_large_t pv;
    int rank = tp_pair_init(&argc, &argv, "p2p_split_path", &pv);
    MPI_T_pvar_handle cma = pv.cma, split = pv.split, pipe = pv.pipe;
    tp_split_or_skip(rank);

    unsigned char *bufs = malloc((size_t)WINDOW * LEN), *out = malloc(LEN);
    MPI_Request reqs[WINDOW];
    MPI_T_pvar_start(tp_sess, MPI_T_PVAR_ALL_HANDLES);
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
    MPI_T_pvar_stop(tp_sess, MPI_T_PVAR_ALL_HANDLES);
    unsigned long long streamed = ROUNDS * WINDOW;
    if (rank == 1) {
        CHECK(tp_read(cma) + tp_read(pipe) == streamed,
              "stream: cma_recv %llu + pipe_recv %llu, want %llu", tp_read(cma), tp_read(pipe),
              streamed);
        CHECK(tp_read(split) >= streamed / 2, "stream: %llu of %llu messages split", tp_read(split),
              streamed);
    }

    /* The exchange: my RTS goes out before I match the peer's, and the
     * peer's comes before its FIN for mine, so each receive is matched
     * while a send of mine to that peer is in flight. */
    unsigned long long split0 = tp_read(split), moved0 = tp_read(cma) + tp_read(pipe);
    MPI_T_pvar_start(tp_sess, MPI_T_PVAR_ALL_HANDLES);
    for (int r = 0; r < ROUNDS * WINDOW; r++) {
        fill(out, rank, r);
        MPI_Isend(out, LEN, MPI_BYTE, 1 - rank, r, MPI_COMM_WORLD, &reqs[0]);
        MPI_Irecv(bufs, LEN, MPI_BYTE, 1 - rank, r, MPI_COMM_WORLD, &reqs[1]);
        MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
        verify(bufs, 1 - rank, r, "exchange");
    }
    MPI_T_pvar_stop(tp_sess, MPI_T_PVAR_ALL_HANDLES);
    CHECK(tp_read(cma) + tp_read(pipe) - moved0 == streamed,
          "exchange: %llu large receives, want %llu", tp_read(cma) + tp_read(pipe) - moved0,
          streamed);
    CHECK(tp_read(split) == split0, "exchange: %llu of %llu messages split",
          tp_read(split) - split0, streamed);
    free(bufs);
    free(out);
    return tp_end();
}
