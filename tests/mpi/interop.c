/*
 * Language interoperability from C alone (mpi.h, linked with liblocusmpi,
 * no Fortran library): MPI_Fint, the handle conversions MPI_<Kind>_c2f /
 * _f2c (a Fortran handle is the ABI's integer handle: MPI_COMM_WORLD is
 * 257) and the status conversions, whose bad arguments are MPI_ERR_ARG.
 */
#include <string.h>

#include "mtest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    _Static_assert(sizeof(MPI_Fint) == sizeof(int), "MPI_Fint is a C int");

    CHECK(MPI_Comm_c2f(MPI_COMM_WORLD) == 257 && MPI_Comm_f2c(257) == MPI_COMM_WORLD,
          "MPI_COMM_WORLD is not 257 across the languages");
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Fint f = MPI_Comm_c2f(dup);
    CHECK(f != MPI_Comm_c2f(MPI_COMM_NULL) && MPI_Comm_f2c(f) == dup,
          "a communicator's Fortran handle does not come back");
    MPI_Comm_free(&dup);
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 3, MPI_INT, &vec);
    CHECK(MPI_Type_f2c(MPI_Type_c2f(vec)) == vec && MPI_Type_c2f(MPI_INT) == MPI_Type_toint(MPI_INT),
          "datatype handles");
    MPI_Type_free(&vec);

    MPI_Status st = { .MPI_SOURCE = 3, .MPI_TAG = 4, .MPI_ERROR = 5 }, back;
    MPI_Fint fst[MPI_F_STATUS_SIZE];
    MPI_F08_status f08;
    memset(&back, 0, sizeof back);
    CHECK(MPI_Status_c2f(&st, fst) == MPI_SUCCESS && fst[MPI_F_SOURCE] == 3 &&
              fst[MPI_F_TAG] == 4 && fst[MPI_F_ERROR] == 5 &&
              MPI_Status_f2f08(fst, &f08) == MPI_SUCCESS && f08.MPI_TAG == 4 &&
              MPI_Status_f082c(&f08, &back) == MPI_SUCCESS && memcmp(&back, &st, sizeof st) == 0,
          "status round trip C -> Fortran -> mpi_f08 -> C");
    CHECK(MPI_Status_c2f(NULL, fst) == MPI_ERR_ARG && MPI_Status_f2c(fst, NULL) == MPI_ERR_ARG,
          "a NULL status is not MPI_ERR_ARG");
    return mtest_finish();
}
