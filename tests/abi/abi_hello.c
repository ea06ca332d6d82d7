/*
 * Built with another implementation's ABI wrapper (MPICH 5's mpicc_abi),
 * run on Locus's library: the handles, constants and status layout of the
 * MPI-5 ABI must mean the same thing on both sides. Prints the library
 * version and " No Errors" when every check holds.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int errs;
#define CHECK(c, ...) do { if (!(c)) { errs++; printf("check failed: " __VA_ARGS__); printf("\n"); } } while (0)

int main(int argc, char **argv)
{
    int rank, size, len, maj = -1, min = -1, flag = 0;
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_library_version(v, &len);
    MPI_Abi_get_version(&maj, &min);
    CHECK(maj == 1 && min == 0, "ABI version %d.%d", maj, min);
    /* Point-to-point with wildcards: the status fields. */
    int peer = (rank + 1) % size, from = (rank - 1 + size) % size, got = -1;
    MPI_Status st;
    MPI_Sendrecv(&rank, 1, MPI_INT, peer, 7, &got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                 MPI_COMM_WORLD, &st);
    int cnt = -1;
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(got == from && st.MPI_SOURCE == from && st.MPI_TAG == 7 && cnt == 1,
          "sendrecv got %d from %d tag %d count %d", got, st.MPI_SOURCE, st.MPI_TAG, cnt);
    /* A derived type through a collective, a predefined op. */
    double d[6] = {0}, r[6] = {0};
    for (int i = 0; i < 6; i++)
        d[i] = rank + i;
    MPI_Datatype vec;
    MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    MPI_Allreduce(d, r, 1, vec, MPI_SUM, MPI_COMM_WORLD);
    double base = size * (size - 1) / 2.0;
    CHECK(r[0] == base && r[2] == base + 2 * size && r[4] == base + 4 * size && r[1] == 0,
          "allreduce on a vector: %g %g %g", r[0], r[2], r[4]);
    MPI_Type_free(&vec);
    CHECK(vec == MPI_DATATYPE_NULL, "freed type not nulled");
    /* Error classes and handlers. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Send(&rank, 1, MPI_INT, size, 0, MPI_COMM_WORLD), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "bad rank gave class %d", cls);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    int hr = -1;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_compare(half, MPI_COMM_WORLD, &flag);
    CHECK(flag == (size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL), "compare gave %d", flag);
    MPI_Comm_free(&half);
    CHECK(half == MPI_COMM_NULL, "freed comm not nulled");
    int all = 0;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("library: %s\n", v);
        printf(all ? " Found %d errors\n" : " No Errors\n", all);
    }
    MPI_Finalize();
    return errs != 0;
}
