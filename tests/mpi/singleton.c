/* A program started without any launcher runs as rank 0 of 1 and can talk
 * to itself; the environment calls behave. */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

int main(int argc, char **argv)
{
    int flag, rank, size, provided;
    MPI_Initialized(&flag);
    CHECK(!flag, "initialized before MPI_Init");
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d for MULTIPLE", provided);
    MPI_Query_thread(&flag);
    CHECK(flag == MPI_THREAD_MULTIPLE, "query_thread %d", flag);
    MPI_Initialized(&flag);
    CHECK(flag, "not initialized after MPI_Init");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(rank == 0 && size == 1, "rank %d size %d", rank, size);
    MPI_Comm_size(MPI_COMM_SELF, &size);
    CHECK(size == 1, "self size %d", size);

    int v = 42, w = 0;
    MPI_Status st;
    MPI_Sendrecv(&v, 1, MPI_INT, 0, 3, &w, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, &st);
    CHECK(w == 42 && st.MPI_SOURCE == 0 && st.MPI_TAG == 3, "self sendrecv %d", w);
    MPI_Request rq;
    MPI_Issend(&v, 1, MPI_INT, 0, 4, MPI_COMM_SELF, &rq);
    MPI_Recv(&w, 1, MPI_INT, 0, 4, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);

    int ver, sub, len;
    char s[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Get_version(&ver, &sub);
    CHECK(ver == MPI_VERSION && sub == MPI_SUBVERSION, "version %d.%d", ver, sub);
    MPI_Get_library_version(s, &len);
    CHECK(len > 0 && strstr(s, "Locus"), "library version '%s'", s);
    char host[MPI_MAX_PROCESSOR_NAME];
    MPI_Get_processor_name(host, &len);
    CHECK(len > 0 && (int)strlen(host) == len, "processor name");
    double t0 = MPI_Wtime(), t1 = MPI_Wtime();
    CHECK(t1 >= t0 && MPI_Wtick() > 0 && MPI_Wtick() < 1, "clock");
    int *ub;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    CHECK(flag && *ub >= 32767, "tag ub");
    MPI_Finalized(&flag);
    CHECK(!flag, "finalized too early");
    int rc = mtest_finish();
    MPI_Finalized(&flag);
    if (!flag)
        return 1;
    return rc;
}
