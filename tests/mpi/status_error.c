/*
 * MPI_ERROR of a status: calls that return one status (receives, probes,
 * matched probes, Wait/Test/Waitany/Testany, Sendrecv, Request_get_status)
 * leave it as the caller set it -- the return code already says it all
 * (MPI-4.1 section 3.2.5), and a receive or probe from MPI_PROC_NULL is no
 * exception; only the multiple-completion calls write it, and only when
 * they return MPI_ERR_IN_STATUS. The empty status of a null or inactive
 * request is defined with MPI_SUCCESS in it (3.7.3), and gets that. Each
 * check presets the field to a sentinel and looks at it afterwards,
 * MPICH's test/mpi/pt2pt/mprobe.c style, on a message to itself and
 * (np > 1) to a neighbour.
 */
#include <string.h>

#include "mtest.h"

#define SENTINEL MPI_ERR_DIMS

static MPI_Status fresh(void)
{
    MPI_Status st;
    memset(&st, 0xab, sizeof st);
    st.MPI_ERROR = SENTINEL;
    return st;
}

#define KEPT(st, what) \
    CHECK((st).MPI_ERROR == SENTINEL, "%s overwrote MPI_ERROR with %d", what, (st).MPI_ERROR)
#define EMPTY(st, what)                                                                    \
    CHECK((st).MPI_ERROR == MPI_SUCCESS && (st).MPI_SOURCE == MPI_ANY_SOURCE &&             \
              (st).MPI_TAG == MPI_ANY_TAG,                                                  \
          "%s: not an empty status: error %d source %d tag %d", what, (st).MPI_ERROR,      \
          (st).MPI_SOURCE, (st).MPI_TAG)

/* Every single-status receive and probe of one message from peer. */
static void receives(int peer, MPI_Comm comm)
{
    int x = 7, y = 0, flag = 0;
    MPI_Status st;
    MPI_Request rq;
    MPI_Message msg;

    MPI_Isend(&x, 1, MPI_INT, peer, 1, comm, &rq);
    st = fresh();
    MPI_Probe(peer, 1, comm, &st);
    KEPT(st, "MPI_Probe");
    st = fresh();
    do
        MPI_Iprobe(peer, 1, comm, &flag, &st);
    while (!flag);
    KEPT(st, "MPI_Iprobe");
    st = fresh();
    MPI_Recv(&y, 1, MPI_INT, peer, 1, comm, &st);
    KEPT(st, "MPI_Recv");
    CHECK(y == 7 && st.MPI_TAG == 1, "recv y %d tag %d", y, st.MPI_TAG);
    st = fresh();
    MPI_Wait(&rq, &st);
    KEPT(st, "MPI_Wait (send)");

    MPI_Isend(&x, 1, MPI_INT, peer, 2, comm, &rq);
    st = fresh();
    MPI_Mprobe(peer, 2, comm, &msg, &st);
    KEPT(st, "MPI_Mprobe");
    st = fresh();
    MPI_Mrecv(&y, 1, MPI_INT, &msg, &st);
    KEPT(st, "MPI_Mrecv");
    MPI_Wait(&rq, MPI_STATUS_IGNORE);

    MPI_Isend(&x, 1, MPI_INT, peer, 3, comm, &rq);
    st = fresh();
    flag = 0;
    do
        MPI_Improbe(peer, 3, comm, &flag, &msg, &st);
    while (!flag);
    KEPT(st, "MPI_Improbe");
    MPI_Request rr;
    MPI_Imrecv(&y, 1, MPI_INT, &msg, &rr);
    st = fresh();
    flag = 0;
    do
        MPI_Request_get_status(rr, &flag, &st);
    while (!flag);
    KEPT(st, "MPI_Request_get_status");
    st = fresh();
    MPI_Test(&rr, &flag, &st);
    CHECK(flag, "Test after get_status not done");
    KEPT(st, "MPI_Test (Imrecv)");
    MPI_Wait(&rq, MPI_STATUS_IGNORE);

    /* Waitany/Testany return one status too. */
    MPI_Request two[2];
    int idx;
    MPI_Irecv(&y, 1, MPI_INT, peer, 4, comm, &two[0]);
    MPI_Isend(&x, 1, MPI_INT, peer, 4, comm, &two[1]);
    for (int k = 0; k < 2; k++) {
        st = fresh();
        MPI_Waitany(2, two, &idx, &st);
        KEPT(st, "MPI_Waitany");
    }
    MPI_Irecv(&y, 1, MPI_INT, peer, 5, comm, &two[0]);
    MPI_Isend(&x, 1, MPI_INT, peer, 5, comm, &two[1]);
    for (int k = 0; k < 2;) {
        st = fresh();
        MPI_Testany(2, two, &idx, &flag, &st);
        if (flag && idx != MPI_UNDEFINED) {
            KEPT(st, "MPI_Testany");
            k++;
        }
    }

    st = fresh();
    MPI_Sendrecv(&x, 1, MPI_INT, peer, 6, &y, 1, MPI_INT, peer, 6, comm, &st);
    KEPT(st, "MPI_Sendrecv");
    st = fresh();
    MPI_Sendrecv_replace(&y, 1, MPI_INT, peer, 7, peer, 7, comm, &st);
    KEPT(st, "MPI_Sendrecv_replace");
    MPI_Isendrecv(&x, 1, MPI_INT, peer, 8, &y, 1, MPI_INT, peer, 8, comm, &rq);
    st = fresh();
    MPI_Wait(&rq, &st);
    KEPT(st, "MPI_Wait (Isendrecv)");

    MPI_Recv_init(&y, 1, MPI_INT, peer, 9, comm, &rr);
    MPI_Start(&rr);
    MPI_Send(&x, 1, MPI_INT, peer, 9, comm);
    st = fresh();
    MPI_Wait(&rr, &st);
    KEPT(st, "MPI_Wait (persistent)");
    st = fresh();
    MPI_Wait(&rr, &st);   /* inactive now: an empty status */
    EMPTY(st, "MPI_Wait (inactive)");
    MPI_Request_free(&rr);
}

/* MPI_PROC_NULL: a receive's status, MPI_ERROR untouched; MPI_REQUEST_NULL
 * and no active request: the empty status. */
static void empties(MPI_Comm comm)
{
    MPI_Status st;
    MPI_Message msg;
    MPI_Request rq = MPI_REQUEST_NULL;
    int y = 0, flag;

    st = fresh();
    MPI_Recv(&y, 1, MPI_INT, MPI_PROC_NULL, 0, comm, &st);
    KEPT(st, "MPI_Recv (PROC_NULL)");
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "PROC_NULL recv %d %d",
          st.MPI_SOURCE, st.MPI_TAG);
    st = fresh();
    MPI_Probe(MPI_PROC_NULL, 0, comm, &st);
    KEPT(st, "MPI_Probe (PROC_NULL)");
    st = fresh();
    MPI_Iprobe(MPI_PROC_NULL, 0, comm, &flag, &st);
    KEPT(st, "MPI_Iprobe (PROC_NULL)");
    st = fresh();
    MPI_Mprobe(MPI_PROC_NULL, 0, comm, &msg, &st);
    KEPT(st, "MPI_Mprobe (PROC_NULL)");
    CHECK(msg == MPI_MESSAGE_NO_PROC, "Mprobe PROC_NULL message");
    st = fresh();
    MPI_Mrecv(&y, 1, MPI_INT, &msg, &st);
    KEPT(st, "MPI_Mrecv (NO_PROC)");
    st = fresh();
    MPI_Improbe(MPI_PROC_NULL, 0, comm, &flag, &msg, &st);
    KEPT(st, "MPI_Improbe (PROC_NULL)");
    MPI_Imrecv(&y, 1, MPI_INT, &msg, &rq);
    st = fresh();
    MPI_Wait(&rq, &st);
    KEPT(st, "MPI_Wait (Imrecv NO_PROC)");
    st = fresh();
    MPI_Wait(&rq, &st);
    EMPTY(st, "MPI_Wait (REQUEST_NULL)");
    st = fresh();
    MPI_Test(&rq, &flag, &st);
    EMPTY(st, "MPI_Test (REQUEST_NULL)");
    st = fresh();
    MPI_Request_get_status(rq, &flag, &st);
    EMPTY(st, "MPI_Request_get_status (REQUEST_NULL)");
    MPI_Request nulls[2] = { MPI_REQUEST_NULL, MPI_REQUEST_NULL };
    int idx = 0;
    st = fresh();
    MPI_Waitany(2, nulls, &idx, &st);
    EMPTY(st, "MPI_Waitany (no active request)");
    st = fresh();
    MPI_Request_get_status_any(2, nulls, &idx, &flag, &st);
    CHECK(idx == MPI_UNDEFINED && flag, "get_status_any of nulls: %d %d", idx, flag);
    EMPTY(st, "MPI_Request_get_status_any (no active request)");
}

/* A truncated receive: the single-status calls return the error and leave
 * the field alone; Waitall reports MPI_ERR_IN_STATUS and sets every field. */
static void errors(int peer, MPI_Comm comm)
{
    int x[4] = { 1, 2, 3, 4 }, y[4];
    MPI_Status st, sts[3];
    MPI_Request rq[3];
    MPI_Message msg;

    MPI_Isend(x, 4, MPI_INT, peer, 20, comm, &rq[0]);
    st = fresh();
    int rc = MPI_Recv(y, 2, MPI_INT, peer, 20, comm, &st);
    CHECK(rc != MPI_SUCCESS, "truncated Recv returned success");
    KEPT(st, "MPI_Recv (truncated)");
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);

    MPI_Isend(x, 4, MPI_INT, peer, 21, comm, &rq[0]);
    MPI_Mprobe(peer, 21, comm, &msg, MPI_STATUS_IGNORE);
    st = fresh();
    rc = MPI_Mrecv(y, 2, MPI_INT, &msg, &st);
    CHECK(rc != MPI_SUCCESS, "truncated Mrecv returned success");
    KEPT(st, "MPI_Mrecv (truncated)");
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);

    MPI_Irecv(y, 2, MPI_INT, peer, 22, comm, &rq[0]);
    MPI_Isend(x, 4, MPI_INT, peer, 22, comm, &rq[1]);
    rq[2] = MPI_REQUEST_NULL;
    for (int i = 0; i < 3; i++)
        sts[i] = fresh();
    rc = MPI_Waitall(3, rq, sts);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_IN_STATUS, "Waitall returned class %d", cls);
    int c0 = -1;
    MPI_Error_class(sts[0].MPI_ERROR, &c0);
    CHECK(c0 == MPI_ERR_TRUNCATE && sts[1].MPI_ERROR == MPI_SUCCESS &&
          sts[2].MPI_ERROR == MPI_SUCCESS, "Waitall statuses %d %d %d", sts[0].MPI_ERROR,
          sts[1].MPI_ERROR, sts[2].MPI_ERROR);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);

    receives(rank, comm);   /* to itself */
    if (size > 1) {
        /* Pairs (0,1), (2,3), ...; an odd last rank talks to itself. */
        int peer = rank ^ 1;
        receives(peer < size ? peer : rank, comm);
    }
    empties(comm);
    errors(rank, comm);

    MPI_Comm_free(&comm);
    return mtest_finish();
}
