/*
 * Every environment and point-to-point function, compiled with the
 * build-tree mpicc: each is called once with a checked result, and the
 * profiling interface is exercised by wrapping MPI_Send here (the
 * library's MPI_Send is a weak alias of PMPI_Send, so this one wins).
 * Works on any number of ranks (pairs 0<->1, others idle).
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

static int send_calls;

int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    send_calls++;
    return PMPI_Send(buf, count, dt, dest, tag, comm);
}

typedef void (*fn_t)(void); /* the generic function pointer GCC accepts casts to */
#define PAIR(x) { (fn_t)MPI_##x, (fn_t)PMPI_##x, #x }
static const struct {
    fn_t mpi, pmpi;
    const char *name;
} pairs[] = {
    PAIR(Init), PAIR(Init_thread), PAIR(Initialized), PAIR(Finalize), PAIR(Finalized),
    PAIR(Abort), PAIR(Comm_rank), PAIR(Comm_size), PAIR(Get_processor_name),
    PAIR(Get_version), PAIR(Get_library_version), PAIR(Error_string), PAIR(Error_class),
    PAIR(Comm_set_errhandler), PAIR(Comm_get_errhandler), PAIR(Ssend), PAIR(Rsend),
    PAIR(Bsend), PAIR(Buffer_attach), PAIR(Buffer_detach), PAIR(Recv), PAIR(Isend),
    PAIR(Issend), PAIR(Irecv), PAIR(Wait), PAIR(Waitall), PAIR(Waitany), PAIR(Waitsome),
    PAIR(Test), PAIR(Testall), PAIR(Testany), PAIR(Testsome), PAIR(Request_free),
    PAIR(Cancel), PAIR(Sendrecv), PAIR(Sendrecv_replace), PAIR(Probe), PAIR(Iprobe),
    PAIR(Get_count), PAIR(Get_elements), PAIR(Comm_dup), PAIR(Comm_split),
    PAIR(Comm_split_type), PAIR(Comm_create), PAIR(Comm_free), PAIR(Comm_compare),
    PAIR(Comm_group), PAIR(Group_incl), PAIR(Group_excl), PAIR(Group_size),
    PAIR(Group_rank), PAIR(Group_translate_ranks), PAIR(Group_free), PAIR(Comm_set_name),
    PAIR(Comm_get_name), PAIR(Comm_get_attr),
};

int main(int argc, char **argv)
{
    int flag, provided, rank, size, len, v, w;
    MPI_Initialized(&flag);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    CHECK(!flag && provided == MPI_THREAD_FUNNELED, "init_thread provided %d", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        CHECK(pairs[i].mpi == pairs[i].pmpi, "MPI_%s is not PMPI_%s", pairs[i].name,
              pairs[i].name);
    CHECK((fn_t)MPI_Send != (fn_t)PMPI_Send, "the MPI_Send wrapper did not override");

    char name[MPI_MAX_PROCESSOR_NAME], ver[MPI_MAX_LIBRARY_VERSION_STRING];
    char es[MPI_MAX_ERROR_STRING];
    int a, b, cls;
    MPI_Get_processor_name(name, &len);
    MPI_Get_version(&a, &b);
    MPI_Get_library_version(ver, &len);
    CHECK(a == MPI_VERSION && b == MPI_SUBVERSION && len > 0, "versions");
    CHECK(MPI_Wtime() > 0 && MPI_Wtick() > 0, "clocks");
    MPI_Error_string(MPI_ERR_RANK, es, &len);
    MPI_Error_class(MPI_ERR_RANK, &cls);
    CHECK(cls == MPI_ERR_RANK && len > 0, "error class/string");
    MPI_Errhandler eh;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    CHECK(eh == MPI_ERRORS_RETURN, "errhandler");
    CHECK(MPI_Send(&v, 1, MPI_INT, size, 0, MPI_COMM_WORLD) == MPI_ERR_RANK, "bad rank");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    int peer = size == 1 ? 0 : rank < 2 ? 1 - rank : MPI_PROC_NULL;
    if (rank < 2) {
        MPI_Status st;
        MPI_Request rq[4];
        int cnt, idx, outc, ind[4];
        v = rank + 10;
        /* Send/Recv, Ssend, Rsend (the receive is pre-posted and acked). */
        MPI_Irecv(&w, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, &rq[0]);
        MPI_Send(&v, 1, MPI_INT, peer, 1, MPI_COMM_WORLD);
        MPI_Wait(&rq[0], &st);
        CHECK(w == peer + 10, "send/recv %d", w);
        /* Once our Ssend is matched, the peer's tag-2 receive (posted
         * before its tag-3 one) exists, so the Rsend is legal. */
        MPI_Irecv(&w, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, &rq[0]);
        MPI_Irecv(&cnt, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, &rq[1]);
        MPI_Ssend(&v, 1, MPI_INT, peer, 3, MPI_COMM_WORLD);
        MPI_Rsend(&v, 1, MPI_INT, peer, 2, MPI_COMM_WORLD);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        /* Bsend through an attached buffer. */
        int bs = 64 + MPI_BSEND_OVERHEAD;
        void *bb = malloc((size_t)bs), *det;
        MPI_Buffer_attach(bb, bs);
        MPI_Bsend(&v, 1, MPI_INT, peer, 4, MPI_COMM_WORLD);
        MPI_Recv(&w, 1, MPI_INT, peer, 4, MPI_COMM_WORLD, &st);
        MPI_Buffer_detach(&det, &bs);
        free(det);
        /* Isend/Issend/Irecv with Waitany, Waitsome, Test, Testall, Testany. */
        int x[4] = { 0 };
        MPI_Irecv(&x[0], 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &rq[0]);
        MPI_Irecv(&x[1], 1, MPI_INT, peer, 6, MPI_COMM_WORLD, &rq[1]);
        MPI_Isend(&v, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &rq[2]);
        MPI_Issend(&v, 1, MPI_INT, peer, 6, MPI_COMM_WORLD, &rq[3]);
        MPI_Waitany(4, rq, &idx, &st);
        MPI_Waitsome(4, rq, &outc, ind, MPI_STATUSES_IGNORE);
        MPI_Test(&rq[0], &flag, &st);
        MPI_Testany(4, rq, &idx, &flag, &st);
        do
            MPI_Testall(4, rq, &flag, MPI_STATUSES_IGNORE);
        while (!flag);
        CHECK(x[0] == peer + 10 && x[1] == peer + 10, "nonblocking %d %d", x[0], x[1]);
        MPI_Testsome(4, rq, &outc, ind, MPI_STATUSES_IGNORE);
        CHECK(outc == MPI_UNDEFINED, "testsome on nulls %d", outc);
        /* Request_free, Cancel. */
        MPI_Isend(&v, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, &rq[0]);
        MPI_Request_free(&rq[0]);
        MPI_Recv(&w, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, &st);
        MPI_Irecv(&w, 1, MPI_INT, peer, 8, MPI_COMM_WORLD, &rq[0]);
        MPI_Cancel(&rq[0]);
        MPI_Wait(&rq[0], &st);
        MPI_Test_cancelled(&st, &flag);
        CHECK(flag, "cancel");
        /* Sendrecv, Sendrecv_replace, Probe, Iprobe, Get_count, Get_elements. */
        MPI_Sendrecv(&v, 1, MPI_INT, peer, 9, &w, 1, MPI_INT, peer, 9, MPI_COMM_WORLD, &st);
        w = v;
        MPI_Sendrecv_replace(&w, 1, MPI_INT, peer, 10, peer, 10, MPI_COMM_WORLD, &st);
        CHECK(w == peer + 10, "sendrecv_replace %d", w);
        double d[3] = { 1, 2, 3 };
        MPI_Send(d, 3, MPI_DOUBLE, peer, 11, MPI_COMM_WORLD);
        MPI_Probe(peer, 11, MPI_COMM_WORLD, &st);
        MPI_Iprobe(peer, 11, MPI_COMM_WORLD, &flag, &st);
        MPI_Get_count(&st, MPI_DOUBLE, &cnt);
        MPI_Get_elements(&st, MPI_DOUBLE, &len);
        CHECK(flag && cnt == 3 && len == 3, "probe counts %d %d", cnt, len);
        MPI_Recv(d, 3, MPI_DOUBLE, peer, 11, MPI_COMM_WORLD, &st);
    }
    CHECK(rank >= 2 || send_calls == 3, "profiling wrapper saw %d sends", send_calls);
    int rc = mtest_finish(); /* MPI_Finalize */
    MPI_Finalized(&flag);
    return rc || !flag;
}
