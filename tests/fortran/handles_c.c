/*
 * handles_c.c — the C half of the handles test: it receives Fortran
 * handles and statuses, converts them with MPI_<Kind>_f2c / _c2f and
 * MPI_Status_f2c / c2f (mpi_abi_fort.h), uses them from C, and hands C
 * objects back to Fortran. Each function returns how many checks failed.
 */
#include <stdio.h>
#include <string.h>

#include <mpi.h>
#include <mpi_abi_fort.h>

#define CHECK(cond)                                                         \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "handles_c.c:%d: %s failed\n", __LINE__, #cond); \
            errs++;                                                         \
        }                                                                   \
    } while (0)

/* The Fortran integers of predefined handles, in the order the Fortran
 * side lists its constants. */
int c_predefined(MPI_Fint *out)
{
    out[0] = MPI_Comm_c2f(MPI_COMM_WORLD);
    out[1] = MPI_Comm_c2f(MPI_COMM_SELF);
    out[2] = MPI_Comm_c2f(MPI_COMM_NULL);
    out[3] = MPI_Type_c2f(MPI_DOUBLE_PRECISION);
    out[4] = MPI_Type_c2f(MPI_INTEGER);
    out[5] = MPI_Op_c2f(MPI_SUM);
    out[6] = MPI_Errhandler_c2f(MPI_ERRORS_RETURN);
    out[7] = MPI_Info_c2f(MPI_INFO_ENV);
    out[8] = MPI_Request_c2f(MPI_REQUEST_NULL);
    out[9] = MPI_Group_c2f(MPI_GROUP_EMPTY);
    out[10] = MPI_Win_c2f(MPI_WIN_NULL);
    out[11] = MPI_Message_c2f(MPI_MESSAGE_NO_PROC);
    return 0;
}

/* A communicator made in Fortran: the same process group seen from C. */
int c_check_comm(MPI_Fint fcomm, int rank, int size)
{
    int errs = 0, r = -1, s = -1;
    MPI_Comm c = MPI_Comm_f2c(fcomm);
    CHECK(c != MPI_COMM_NULL && c != MPI_COMM_WORLD);
    CHECK(MPI_Comm_rank(c, &r) == MPI_SUCCESS && r == rank);
    CHECK(MPI_Comm_size(c, &s) == MPI_SUCCESS && s == size);
    CHECK(MPI_Comm_c2f(c) == fcomm);
    return errs;
}

/* A communicator made in C, named, for Fortran to use and free. */
MPI_Fint c_make_comm(void)
{
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_name(dup, "made in C");
    return MPI_Comm_c2f(dup);
}

/* A datatype, a group and an info object made in Fortran. */
int c_check_objects(MPI_Fint ftype, int type_size, MPI_Fint fgroup, int group_size,
                    MPI_Fint finfo)
{
    int errs = 0, n = -1, flag = 0;
    MPI_Datatype t = MPI_Type_f2c(ftype);
    CHECK(MPI_Type_size(t, &n) == MPI_SUCCESS && n == type_size);
    CHECK(MPI_Type_c2f(t) == ftype);
    MPI_Group g = MPI_Group_f2c(fgroup);
    CHECK(MPI_Group_size(g, &n) == MPI_SUCCESS && n == group_size);
    char value[32] = "";
    int len = (int)sizeof value;
    CHECK(MPI_Info_get_string(MPI_Info_f2c(finfo), "locus_key", &len, value, &flag) ==
          MPI_SUCCESS);
    CHECK(flag && strcmp(value, "fortran value") == 0);
    return errs;
}

/* A status Fortran received: read through MPI_Status_f2c, and written
 * back unchanged through MPI_Status_c2f. */
int c_check_status(MPI_Fint *fstatus, int source, int tag, int count)
{
    int errs = 0, n = -1;
    MPI_Status st;
    MPI_Fint back[MPI_F_STATUS_SIZE];
    CHECK(fstatus != MPI_F_STATUS_IGNORE);
    CHECK(MPI_Status_f2c(fstatus, &st) == MPI_SUCCESS);
    CHECK(st.MPI_SOURCE == source && st.MPI_TAG == tag && st.MPI_ERROR == fstatus[MPI_F_ERROR]);
    CHECK(fstatus[MPI_F_SOURCE] == source && fstatus[MPI_F_TAG] == tag);
    CHECK(MPI_Get_count(&st, MPI_INTEGER, &n) == MPI_SUCCESS && n == count);
    CHECK(MPI_Status_c2f(&st, back) == MPI_SUCCESS);
    CHECK(memcmp(back, fstatus, sizeof back) == 0);
    MPI_F08_status f08;
    CHECK(MPI_Status_f2f08(fstatus, &f08) == MPI_SUCCESS && f08.MPI_SOURCE == source);
    return errs;
}

/* Fortran's MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE are C's
 * MPI_F_STATUS_IGNORE and MPI_F_STATUSES_IGNORE. */
int c_check_ignores(MPI_Fint *status_ignore, MPI_Fint *statuses_ignore)
{
    int errs = 0;
    CHECK(status_ignore == MPI_F_STATUS_IGNORE);
    CHECK(statuses_ignore == MPI_F_STATUSES_IGNORE);
    MPI_Status st;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int code = MPI_Status_f2c(MPI_F_STATUS_IGNORE, &st), cls = -1;
    CHECK(MPI_Error_class(code, &cls) == MPI_SUCCESS && cls == MPI_ERR_ARG);
    return errs;
}

/* A receive started in C, for Fortran to complete with MPI_Wait. */
MPI_Fint c_start_recv(int *buf, int count, int source, int tag)
{
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Irecv(buf, count, MPI_INT, source, tag, MPI_COMM_WORLD, &r);
    return MPI_Request_c2f(r);
}
