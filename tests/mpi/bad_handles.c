/*
 * Handles that are not handles, under MPI_ERRORS_RETURN: the kind's error
 * class, never a fault. Each kind gets a stray pointer that no object of
 * Locus's is at (an address outside the canonical range, and a zeroed
 * buffer on the stack) and, where it can be freed, a freed handle; MPICH
 * returns these classes too. Also MPI_IN_PLACE as a receive buffer.
 */
#include <stdint.h>
#include <string.h>

#include "../mtest.h"

static int cls(int rc)
{
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

#define EXPECT(call, want) do { int rc_ = (call); CHECK(cls(rc_) == (want), \
    "%s gave class %d, want %d (%s)", #call, cls(rc_), (want), #want); } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank, size, a = 1, b = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long junk[64];
    memset(junk, 0, sizeof junk);
    void *strays[] = { (void *)(uintptr_t)0xdeadbeefdeadbeefull, (void *)&junk[8],
                       (void *)(uintptr_t)0x12345678 };
    MPI_Status st;

    for (size_t i = 0; i < sizeof strays / sizeof strays[0]; i++) {
        void *p = strays[i];
        MPI_Request r = (MPI_Request)p;
        EXPECT(MPI_Wait(&r, &st), MPI_ERR_REQUEST);
        int flag = 0;
        r = (MPI_Request)p;
        EXPECT(MPI_Test(&r, &flag, &st), MPI_ERR_REQUEST);
        MPI_Request rs[2] = { MPI_REQUEST_NULL, (MPI_Request)p };
        EXPECT(MPI_Waitall(2, rs, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
        r = (MPI_Request)p;
        EXPECT(MPI_Request_free(&r), MPI_ERR_REQUEST);
        EXPECT(MPI_Send(&a, 1, MPI_INT, 0, 0, (MPI_Comm)p), MPI_ERR_COMM);
        EXPECT(MPI_Barrier((MPI_Comm)p), MPI_ERR_COMM);
        EXPECT(MPI_Comm_size((MPI_Comm)p, &b), MPI_ERR_COMM);
        EXPECT(MPI_Send(&a, 1, (MPI_Datatype)p, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
        EXPECT(MPI_Type_commit((MPI_Datatype *)&p), MPI_ERR_TYPE);
        EXPECT(MPI_Allreduce(&a, &b, 1, MPI_INT, (MPI_Op)p, MPI_COMM_WORLD), MPI_ERR_OP);
        EXPECT(MPI_Group_size((MPI_Group)p, &b), MPI_ERR_GROUP);
        int nkeys;
        EXPECT(MPI_Info_get_nkeys((MPI_Info)p, &nkeys), MPI_ERR_INFO);
        EXPECT(MPI_Win_fence(0, (MPI_Win)p), MPI_ERR_WIN);
        MPI_Message m = (MPI_Message)p;
        EXPECT(MPI_Mrecv(&a, 1, MPI_INT, &m, &st), MPI_ERR_REQUEST);
        EXPECT(MPI_Comm_set_errhandler(MPI_COMM_WORLD, (MPI_Errhandler)p), MPI_ERR_ARG);
    }

    /* Freed handles (their variables kept by the program). */
    MPI_Comm dup, dup_copy;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    dup_copy = dup;
    MPI_Comm_free(&dup);
    EXPECT(MPI_Send(&a, 1, MPI_INT, 0, 0, dup_copy), MPI_ERR_COMM);
    MPI_Datatype t, t_copy;
    MPI_Type_contiguous(2, MPI_INT, &t);
    MPI_Type_commit(&t);
    t_copy = t;
    MPI_Type_free(&t);
    EXPECT(MPI_Send(&a, 1, t_copy, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    MPI_Group g, g_copy;
    MPI_Comm_group(MPI_COMM_WORLD, &g);
    g_copy = g;
    MPI_Group_free(&g);
    EXPECT(MPI_Group_size(g_copy, &b), MPI_ERR_GROUP);
    MPI_Info info, info_copy;
    MPI_Info_create(&info);
    info_copy = info;
    MPI_Info_free(&info);
    int nkeys;
    EXPECT(MPI_Info_get_nkeys(info_copy, &nkeys), MPI_ERR_INFO);
    MPI_Request req, req_copy;
    MPI_Isend(&a, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, &req);
    req_copy = req;
    MPI_Recv(&b, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    EXPECT(MPI_Wait(&req_copy, &st), MPI_ERR_REQUEST);
    /* Requests from several slabs of the core's (256 each): each one found
     * by its address; the address just past one is not a request. */
    enum { MANY = 700 };
    static MPI_Request many[MANY];
    static int mbuf[MANY];
    for (int i = 0; i < MANY; i++)
        MPI_Irecv(&mbuf[i], 1, MPI_INT, rank, 1000 + i, MPI_COMM_WORLD, &many[i]);
    for (int i = 0; i < MANY; i += 97) {
        int f = 1;
        EXPECT(MPI_Test(&many[i], &f, &st), MPI_SUCCESS);
        CHECK(f == 0, "request %d of %d done before its send", i, MANY);
        MPI_Request past = (MPI_Request)((char *)many[i] + 8);
        EXPECT(MPI_Test(&past, &f, &st), MPI_ERR_REQUEST);
    }
    for (int i = 0; i < MANY; i++)
        MPI_Send(&i, 1, MPI_INT, rank, 1000 + i, MPI_COMM_WORLD);
    EXPECT(MPI_Waitall(MANY, many, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    for (int i = 0; i < MANY; i++)
        CHECK(mbuf[i] == i, "request %d received %d", i, mbuf[i]);
    /* A null request is no error. */
    req = MPI_REQUEST_NULL;
    EXPECT(MPI_Wait(&req, &st), MPI_SUCCESS);

    /* MPI_IN_PLACE is for the send buffer only. */
    EXPECT(MPI_Allreduce(&a, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT(MPI_Reduce(&a, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD),
           rank == 0 ? MPI_ERR_BUFFER : MPI_SUCCESS);
    int all[64];
    EXPECT(MPI_Allgather(&a, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, MPI_COMM_WORLD),
           MPI_ERR_BUFFER);
    (void)all;
    /* The job goes on after all that. */
    b = 0;
    EXPECT(MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK(b == size, "allreduce after the errors: %d, want %d", b, size);
    return mtest_finish();
}
