/*
 * 64 MiB messages: blocking, synchronous, simultaneous exchange, a large
 * unexpected message (probed before it is received) and a large strided
 * receive. On one rank everything goes to self.
 */
#include <stdint.h>
#include <stdlib.h>

#include "mtest.h"

#define BIG (64u << 20)

static uint64_t word(uint64_t seed, size_t i)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + i;
    x ^= x >> 31;
    return x * 0xbf58476d1ce4e5b9ull;
}

static void fill(uint64_t *b, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = word(seed, i);
}

static size_t bad_at(const uint64_t *b, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != word(seed, i))
            return i;
    return (size_t)-1;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = size == 1 ? 0 : (rank ^ 1) < size ? rank ^ 1 : MPI_PROC_NULL;
    size_t n = BIG / 8;
    uint64_t *out = malloc(BIG), *in = malloc(BIG);
    if (!out || !in) {
        fprintf(stderr, "out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (peer != MPI_PROC_NULL) {
        MPI_Status st;
        int cnt;
        /* 1: simultaneous exchange (both directions at once). */
        MPI_Request rq[2];
        fill(out, n, (uint64_t)rank + 1);
        MPI_Irecv(in, (int)n, MPI_UINT64_T, peer, 1, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(out, (int)n, MPI_UINT64_T, peer, 1, MPI_COMM_WORLD, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        size_t b = bad_at(in, n, (uint64_t)peer + 1);
        CHECK(b == (size_t)-1, "exchange: word %zu wrong", b);

        /* 2: blocking and synchronous sends, the lower rank first. */
        for (int round = 0; round < 2; round++) {
            int sender = round == 0 ? (rank < peer ? rank : peer) : (rank < peer ? peer : rank);
            if (size == 1 && rank == sender) {
                MPI_Request r;
                fill(out, n, 77 + (uint64_t)round);
                MPI_Irecv(in, (int)n, MPI_UINT64_T, 0, 2, MPI_COMM_WORLD, &r);
                if (round == 0)
                    MPI_Send(out, (int)n, MPI_UINT64_T, 0, 2, MPI_COMM_WORLD);
                else
                    MPI_Ssend(out, (int)n, MPI_UINT64_T, 0, 2, MPI_COMM_WORLD);
                MPI_Wait(&r, &st);
            } else if (rank == sender) {
                fill(out, n, 77 + (uint64_t)round);
                if (round == 0)
                    MPI_Send(out, (int)n, MPI_UINT64_T, peer, 2, MPI_COMM_WORLD);
                else
                    MPI_Ssend(out, (int)n, MPI_UINT64_T, peer, 2, MPI_COMM_WORLD);
                continue;
            } else {
                MPI_Recv(in, (int)n, MPI_UINT64_T, peer, 2, MPI_COMM_WORLD, &st);
            }
            MPI_Get_count(&st, MPI_UINT64_T, &cnt);
            b = bad_at(in, n, 77 + (uint64_t)round);
            CHECK(cnt == (int)n && b == (size_t)-1, "round %d: count %d, word %zu wrong", round,
                  cnt, b);
        }

        /* 3: unexpected: probe first, then receive into a strided layout
         * (every other 8-byte word of a 128 MiB buffer would be too much:
         * use 4 MiB of pairs instead). */
        size_t m = (4u << 20) / 8;
        fill(out, m, 5);
        MPI_Request r;
        MPI_Isend(out, (int)m, MPI_UINT64_T, peer, 3, MPI_COMM_WORLD, &r);
        MPI_Probe(peer, 3, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_UINT64_T, &cnt);
        CHECK(cnt == (int)m, "probe count %d", cnt);
        MPI_Datatype strided;
        MPI_Type_vector((int)m, 1, 2, MPI_UINT64_T, &strided);
        MPI_Type_commit(&strided);
        MPI_Recv(in, 1, strided, peer, 3, MPI_COMM_WORLD, &st);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        size_t wrong = 0;
        for (size_t i = 0; i < m; i++)
            wrong += in[2 * i] != word(5, i);
        CHECK(wrong == 0, "strided receive: %zu words wrong", wrong);
        MPI_Type_free(&strided);
    }
    free(out);
    free(in);
    return mtest_finish();
}
