/*
 * MPI_Remove_error_string/code/class (MPI-4.1) undo MPI_Add_error_*: a
 * removed code or class is no longer one (MPI_Error_class refuses it), a
 * class keeps its codes until they are removed, a code or class keeps its
 * string until that is removed, predefined ones cannot be removed.
 */
#include <string.h>

#include "tcheck.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &tc_rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int cls, code, got = -1, len;
    char text[MPI_MAX_ERROR_STRING];
    MPI_Add_error_class(&cls);
    MPI_Add_error_code(cls, &code);
    MPI_Add_error_string(cls, "a class of the test");
    MPI_Add_error_string(code, "a code of the test");

    CHECK(MPI_Remove_error_class(cls) == MPI_ERR_ARG, "a class with a code left");
    CHECK(MPI_Remove_error_code(cls) == MPI_ERR_ARG, "a class is no code");
    CHECK(MPI_Remove_error_class(MPI_ERR_OTHER) == MPI_ERR_ARG, "predefined class");
    CHECK(MPI_Remove_error_string(MPI_ERR_OTHER) == MPI_ERR_ARG, "predefined string");

    CHECK(MPI_Remove_error_code(code) == MPI_ERR_ARG, "a code with its string");
    CHECK(MPI_Remove_error_string(code) == MPI_SUCCESS, "string of the code");
    CHECK(MPI_Error_string(code, text, &len) == MPI_SUCCESS && len == 0, "string gone: '%s'",
          text);
    CHECK(MPI_Remove_error_code(code) == MPI_SUCCESS, "the code");
    CHECK(MPI_Error_class(code, &got) == MPI_ERR_ARG, "a removed code is none");
    CHECK(MPI_Remove_error_code(code) == MPI_ERR_ARG, "removed twice");
    CHECK(MPI_Remove_error_class(cls) == MPI_ERR_ARG, "a class with its string");
    CHECK(MPI_Remove_error_string(cls) == MPI_SUCCESS, "string of the class");
    CHECK(MPI_Remove_error_class(cls) == MPI_SUCCESS, "the class");
    CHECK(MPI_Error_class(cls, &got) == MPI_ERR_ARG, "a removed class is none");

    int rc = tc_report(MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
}
