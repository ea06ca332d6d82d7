/*
 * MINLOC/MAXLOC on every pair type through Reduce, Allreduce and the
 * nonblocking form, at counts whose last element ends before its padding
 * (3 x MPI_LONG_INT: 44 bytes of data in a 48-byte extent): the results
 * are right and nothing is written past the data (the sanitizer build
 * checks the library's temporary buffers).
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

static int rank, size;

/* value of element i on rank r: the minimum moves from rank to rank. */
static double val(int r, int i)
{
    return (double)(((r + i) % size) * 3 - i);
}

#define PAIR_TEST(T, MPIT, NAME)                                                     \
    do {                                                                             \
        struct { T v; int i; } in[5], out[5];                                        \
        memset(out, 0x5a, sizeof out);                                               \
        for (int i = 0; i < 5; i++) {                                                \
            in[i].v = (T)val(rank, i);                                               \
            in[i].i = rank;                                                          \
        }                                                                            \
        for (int n = 1; n <= 3; n++) {                                               \
            MPI_Op ops[2] = { MPI_MINLOC, MPI_MAXLOC };                              \
            for (int o = 0; o < 2; o++) {                                            \
                for (int form = 0; form < 3; form++) {                               \
                    memset(out, 0x5a, sizeof out);                                   \
                    if (form == 0) {                                                 \
                        MPI_Reduce(in, out, n, MPIT, ops[o], size - 1, MPI_COMM_WORLD); \
                    } else if (form == 1) {                                          \
                        MPI_Allreduce(in, out, n, MPIT, ops[o], MPI_COMM_WORLD);     \
                    } else {                                                         \
                        MPI_Request rq;                                              \
                        MPI_Iallreduce(in, out, n, MPIT, ops[o], MPI_COMM_WORLD, &rq); \
                        MPI_Wait(&rq, MPI_STATUS_IGNORE);                            \
                    }                                                                \
                    if (form == 0 && rank != size - 1)                               \
                        continue;                                                    \
                    for (int i = 0; i < n; i++) {                                    \
                        T best = (T)val(0, i);                                       \
                        int who = 0;                                                 \
                        for (int r = 1; r < size; r++) {                             \
                            T v = (T)val(r, i);                                      \
                            if (o == 0 ? v < best : v > best) {                      \
                                best = v;                                            \
                                who = r;                                             \
                            }                                                        \
                        }                                                            \
                        CHECK(out[i].v == best && out[i].i == who,                   \
                              "%s %s form %d n=%d element %d: (%g,%d) want (%g,%d)", \
                              NAME, o ? "MAXLOC" : "MINLOC", form, n, i,             \
                              (double)out[i].v, out[i].i, (double)best, who);        \
                    }                                                                \
                }                                                                    \
            }                                                                        \
        }                                                                            \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    PAIR_TEST(float, MPI_FLOAT_INT, "MPI_FLOAT_INT");
    PAIR_TEST(double, MPI_DOUBLE_INT, "MPI_DOUBLE_INT");
    PAIR_TEST(long, MPI_LONG_INT, "MPI_LONG_INT");
    PAIR_TEST(int, MPI_2INT, "MPI_2INT");
    PAIR_TEST(short, MPI_SHORT_INT, "MPI_SHORT_INT");
    PAIR_TEST(long double, MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT");
    return mtest_finish();
}
