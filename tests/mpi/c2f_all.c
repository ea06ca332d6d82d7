/*
 * c2f_all.c — the C side of language interoperability as C code that
 * mixes with Fortran uses it, built by mpicc (no Fortran library) with
 * warnings as errors, so an undeclared function fails the build instead
 * of being called with an int result that cuts 64-bit handles: MPI_Fint,
 * MPI_<Kind>_c2f / _f2c for every kind of handle (made by the program and
 * predefined) and their PMPI_ names, the status conversions between C,
 * Fortran and mpi_f08. Prints " No Errors".
 */
#include <string.h>

#include "mtest.h"

/* Both names of both directions give back h (and agree). */
#define ROUND_TRIP(Kind, h)                                                                  \
    CHECK(MPI_##Kind##_f2c(MPI_##Kind##_c2f(h)) == (h) &&                                    \
              PMPI_##Kind##_f2c(PMPI_##Kind##_c2f(h)) == (h) &&                              \
              MPI_##Kind##_c2f(h) == PMPI_##Kind##_c2f(h),                                   \
          "MPI_" #Kind "_c2f/_f2c: %s", #h)

static void user_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)in, (void)inout, (void)len, (void)type;
}

static void user_errh(MPI_Comm *comm, int *code, ...)
{
    (void)comm, (void)code;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    _Static_assert(sizeof(MPI_Fint) == sizeof(int), "MPI_Fint is Fortran's INTEGER");

    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    ROUND_TRIP(Comm, comm);
    ROUND_TRIP(Comm, MPI_COMM_WORLD);
    ROUND_TRIP(Comm, MPI_COMM_NULL);
    MPI_Datatype type;
    MPI_Type_vector(2, 1, 4, MPI_DOUBLE, &type);
    ROUND_TRIP(Type, type);
    ROUND_TRIP(Type, MPI_INTEGER);
    MPI_Group group;
    MPI_Comm_group(comm, &group);
    ROUND_TRIP(Group, group);
    ROUND_TRIP(Group, MPI_GROUP_EMPTY);
    int buf[2] = { 1, 2 };
    MPI_Request req;
    MPI_Send_init(buf, 1, MPI_INT, 0, 0, MPI_COMM_SELF, &req);
    ROUND_TRIP(Request, req);
    ROUND_TRIP(Request, MPI_REQUEST_NULL);
    MPI_Op op;
    MPI_Op_create(user_op, 1, &op);
    ROUND_TRIP(Op, op);
    ROUND_TRIP(Op, MPI_SUM);
    MPI_Info info;
    MPI_Info_create(&info);
    ROUND_TRIP(Info, info);
    ROUND_TRIP(Info, MPI_INFO_NULL);
    MPI_Errhandler errh;
    MPI_Comm_create_errhandler(user_errh, &errh);
    ROUND_TRIP(Errhandler, errh);
    ROUND_TRIP(Errhandler, MPI_ERRORS_RETURN);
    MPI_Win win;
    MPI_Win_create(buf, sizeof buf, sizeof buf[0], MPI_INFO_NULL, MPI_COMM_SELF, &win);
    ROUND_TRIP(Win, win);
    ROUND_TRIP(Win, MPI_WIN_NULL);
    /* A message handle from a matched probe. */
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Send(buf, 1, MPI_INT, 0, 7, MPI_COMM_SELF);
    MPI_Mprobe(0, 7, MPI_COMM_SELF, &msg, MPI_STATUS_IGNORE);
    ROUND_TRIP(Message, msg);
    ROUND_TRIP(Message, MPI_MESSAGE_NO_PROC);
    MPI_Mrecv(buf + 1, 1, MPI_INT, &msg, MPI_STATUS_IGNORE);
    /* MPI-IO is refused (no file exists): the null handle. */
    ROUND_TRIP(File, MPI_FILE_NULL);
    ROUND_TRIP(Session, MPI_SESSION_NULL);

    MPI_Status st = { .MPI_SOURCE = 1, .MPI_TAG = 2, .MPI_ERROR = MPI_SUCCESS }, back;
    MPI_Fint f[MPI_F_STATUS_SIZE], f2[MPI_F_STATUS_SIZE];
    MPI_F08_status f08, f08b;
    memset(&back, 0, sizeof back);
    CHECK(MPI_Status_c2f(&st, f) == MPI_SUCCESS && PMPI_Status_f2f08(f, &f08) == MPI_SUCCESS &&
              MPI_Status_f082f(&f08, f2) == MPI_SUCCESS && PMPI_Status_f2c(f2, &back) == MPI_SUCCESS &&
              memcmp(&back, &st, sizeof st) == 0,
          "status C -> Fortran -> mpi_f08 -> Fortran -> C");
    memset(&back, 0, sizeof back);
    CHECK(PMPI_Status_c2f08(&st, &f08b) == MPI_SUCCESS && f08b.MPI_TAG == 2 &&
              MPI_Status_f082c(&f08b, &back) == MPI_SUCCESS && memcmp(&back, &st, sizeof st) == 0,
          "status C -> mpi_f08 -> C");

    MPI_Win_free(&win);
    MPI_Errhandler_free(&errh);
    MPI_Info_free(&info);
    MPI_Op_free(&op);
    MPI_Request_free(&req);
    MPI_Group_free(&group);
    MPI_Type_free(&type);
    MPI_Comm_free(&comm);
    return mtest_finish();
}
