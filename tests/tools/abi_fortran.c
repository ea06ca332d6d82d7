/*
 * The ABI's Fortran settings: .TRUE./.FALSE. per LOGICAL size (gfortran's
 * 1/0 until told, callable before MPI_Init, set once per size); the
 * Fortran info (gfortran's sizes, optional types supported exactly when
 * their datatype is), set once, a refused setting changing nothing.
 */
#include <string.h>

#include "tcheck.h"

static int info_is(MPI_Info info, const char *key, const char *want)
{
    char v[64] = "";
    int len = sizeof v, flag = 0;
    MPI_Info_get_string(info, key, &len, v, &flag);
    return flag && strcmp(v, want) == 0;
}

static const struct {
    const char *key;
    MPI_Datatype type;
} optional[] = {
    {"mpi_logical1_supported", MPI_LOGICAL1}, {"mpi_integer8_supported", MPI_INTEGER8},
    {"mpi_integer16_supported", MPI_INTEGER16}, {"mpi_real2_supported", MPI_REAL2},
    {"mpi_real8_supported", MPI_REAL8}, {"mpi_real16_supported", MPI_REAL16},
    {"mpi_complex8_supported", MPI_COMPLEX8}, {"mpi_double_complex_supported",
                                               MPI_DOUBLE_COMPLEX},
};

int main(int argc, char **argv)
{
    /* Booleans work before MPI_Init. */
    int t = -5, f = -5, is_set = -1;
    CHECK(MPI_Abi_get_fortran_booleans(4, &t, &f, &is_set) == MPI_SUCCESS && t == 1 &&
          f == 0 && is_set == 0, "defaults %d %d %d", t, f, is_set);
    CHECK(MPI_Abi_get_fortran_booleans(3, &t, &f, &is_set) == MPI_ERR_ARG, "LOGICAL*3");
    int mt = -1, mf = 0;
    CHECK(MPI_Abi_set_fortran_booleans(4, &mt, &mf) == MPI_SUCCESS, "set");
    CHECK(MPI_Abi_get_fortran_booleans(4, &t, &f, &is_set) == MPI_SUCCESS && t == -1 &&
          f == 0 && is_set == 1, "after set %d %d %d", t, f, is_set);
    CHECK(MPI_Abi_set_fortran_booleans(4, &mt, &mf) == MPI_ERR_ABI, "set twice");
    long long one = 1, other = 1;
    CHECK(MPI_Abi_set_fortran_booleans(8, &one, &other) == MPI_ERR_ARG, "true == false");
    signed char c1 = 9, c0 = 9;
    CHECK(MPI_Abi_get_fortran_booleans(1, &c1, &c0, &is_set) == MPI_SUCCESS && c1 == 1 &&
          c0 == 0 && is_set == 0, "LOGICAL*1 is independent");

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &tc_rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Info info;
    CHECK(MPI_Abi_get_fortran_info(&info) == MPI_SUCCESS, "get info");
    CHECK(info_is(info, "mpi_logical_size", "4") && info_is(info, "mpi_integer_size", "4") &&
          info_is(info, "mpi_real_size", "4") && info_is(info, "mpi_double_precision_size", "8"),
          "gfortran's sizes");
    for (size_t i = 0; i < sizeof optional / sizeof optional[0]; i++) {
        int size = 0;
        int ok = MPI_Type_size(optional[i].type, &size) == MPI_SUCCESS;
        CHECK(info_is(info, optional[i].key, ok ? "true" : "false"), "%s vs its datatype",
              optional[i].key);
    }
    MPI_Info_free(&info);

    CHECK(MPI_Abi_set_fortran_info(MPI_INFO_NULL) == MPI_ERR_INFO, "MPI_INFO_NULL");
    MPI_Info bad;
    MPI_Info_create(&bad);
    MPI_Info_set(bad, "mpi_integer_size", "3");
    CHECK(MPI_Abi_set_fortran_info(bad) == MPI_ERR_INFO_VALUE, "INTEGER*3");
    MPI_Info_set(bad, "mpi_integer_size", "8");
    MPI_Info_set(bad, "mpi_real16_supported", "maybe");
    CHECK(MPI_Abi_set_fortran_info(bad) == MPI_ERR_INFO_VALUE, "maybe");
    MPI_Info_free(&bad);
    MPI_Abi_get_fortran_info(&info);
    CHECK(info_is(info, "mpi_integer_size", "4"), "a refused setting changed something");
    MPI_Info_free(&info);

    MPI_Info set;
    MPI_Info_create(&set);
    MPI_Info_set(set, "mpi_integer_size", "8");
    MPI_Info_set(set, "mpi_real16_supported", "true");
    MPI_Info_set(set, "some_other_key", "ignored");
    CHECK(MPI_Abi_set_fortran_info(set) == MPI_SUCCESS, "set info");
    MPI_Abi_get_fortran_info(&info);
    CHECK(info_is(info, "mpi_integer_size", "8") && info_is(info, "mpi_real16_supported", "true")
          && info_is(info, "mpi_logical_size", "4"), "round trip");
    MPI_Info_free(&info);
    CHECK(MPI_Abi_set_fortran_info(set) == MPI_ERR_ABI, "only the first call counts");
    MPI_Info_free(&set);

    int rc = tc_report(MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
}
