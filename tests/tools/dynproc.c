/*
 * Dynamic processes' errors: under MPI_ERRORS_RETURN a spawn of a program
 * that cannot start returns MPI_ERR_SPAWN at every parent and leaves no
 * communicator (its error codes at the root say so too); a port name that
 * is not one, or one this process did not open, is MPI_ERR_PORT; a port
 * whose process is gone is MPI_ERR_PORT, not a hang; MPI_Comm_get_parent
 * says there is no parent; MPI_Comm_disconnect frees an ordinary
 * communicator collectively and refuses MPI_COMM_WORLD; MPI_Comm_join of
 * a descriptor that is no socket is MPI_ERR_ARG. With argument
 * "fatal" a spawn of a program that exits without MPI_Init uses the
 * default handler: the job must end with one line naming the call (the
 * test expects that failure).
 */
#include <string.h>

#include "tcheck.h"

#define FAILS_WITH(call, want, what)                                            \
    do {                                                                        \
        int rc_ = (call), cls_ = -1;                                            \
        MPI_Error_class(rc_, &cls_);                                            \
        CHECK(cls_ == (want), "%s returned %d", what, rc_);                     \
    } while (0)

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &tc_rank);
    rank = tc_rank;
    MPI_Comm inter = MPI_COMM_WORLD;
    int codes[3] = {0, 0, 0};
    if (argc > 1 && strcmp(argv[1], "fatal") == 0) {
        MPI_Comm_spawn("true", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                       MPI_ERRCODES_IGNORE);
        printf("still running after a fatal error\n");
        MPI_Finalize();
        return 0;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    MPI_Comm parent = MPI_COMM_WORLD;
    CHECK(MPI_Comm_get_parent(&parent) == MPI_SUCCESS && parent == MPI_COMM_NULL,
          "a Locus process has no parent");

    FAILS_WITH(MPI_Comm_spawn("/nonexistent/locus-worker", MPI_ARGV_NULL, 3, MPI_INFO_NULL, 0,
                              MPI_COMM_WORLD, &inter, codes), MPI_ERR_SPAWN, "MPI_Comm_spawn");
    CHECK(inter == MPI_COMM_NULL, "spawn left an intercommunicator");
    for (int i = 0; i < 3; i++)
        CHECK(rank != 0 || codes[i] == MPI_ERR_SPAWN, "errcode %d: %d", i, codes[i]);
    /* A program that exits at once without MPI_Init. */
    FAILS_WITH(MPI_Comm_spawn("true", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD,
                              &inter, MPI_ERRCODES_IGNORE), MPI_ERR_SPAWN, "MPI_Comm_spawn(true)");
    char *cmds[2] = {"true", "/nonexistent/locus-worker"};
    int maxprocs[2] = {1, 1};
    MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
    inter = MPI_COMM_WORLD;
    FAILS_WITH(MPI_Comm_spawn_multiple(2, cmds, MPI_ARGVS_NULL, maxprocs, infos, 0,
                                       MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE),
               MPI_ERR_SPAWN, "MPI_Comm_spawn_multiple");
    CHECK(inter == MPI_COMM_NULL, "spawn_multiple left an intercommunicator");

    char port[MPI_MAX_PORT_NAME] = "";
    CHECK(MPI_Open_port(MPI_INFO_NULL, port) == MPI_SUCCESS && strncmp(port, "locus-port:", 11) == 0,
          "MPI_Open_port: %s", port);
    FAILS_WITH(MPI_Close_port("tag#0$description#x"), MPI_ERR_PORT, "MPI_Close_port");
    inter = MPI_COMM_WORLD;
    FAILS_WITH(MPI_Comm_connect("port", MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter), MPI_ERR_PORT,
               "MPI_Comm_connect");
    CHECK(inter == MPI_COMM_NULL, "connect left a communicator");
    inter = MPI_COMM_WORLD;
    FAILS_WITH(MPI_Comm_accept("port", MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter), MPI_ERR_PORT,
               "MPI_Comm_accept");
    CHECK(inter == MPI_COMM_NULL, "accept left a communicator");
    /* Another job's port whose process is gone: the dial is refused. */
    char dead[MPI_MAX_PORT_NAME];
    snprintf(dead, sizeof dead, "locus-port:00000000000000ab:0:3:dyn1/%032x/1/127.0.0.1", 0);
    FAILS_WITH(MPI_Comm_connect(dead, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter), MPI_ERR_PORT,
               "MPI_Comm_connect to a port that is gone");
    CHECK(MPI_Close_port(port) == MPI_SUCCESS, "MPI_Close_port");
    FAILS_WITH(MPI_Close_port(port), MPI_ERR_PORT, "MPI_Close_port twice");
    inter = MPI_COMM_WORLD;
    FAILS_WITH(MPI_Comm_join(-1, &inter), MPI_ERR_ARG, "MPI_Comm_join(-1)");
    CHECK(inter == MPI_COMM_NULL, "join left a communicator");

    /* Disconnect: a collective free of an ordinary communicator. */
    MPI_Comm dup, world = MPI_COMM_WORLD;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int x = rank, sum = 0, size;
    MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, dup);
    CHECK(MPI_Comm_disconnect(&dup) == MPI_SUCCESS && dup == MPI_COMM_NULL, "disconnect");
    int cls = -1;
    MPI_Error_class(MPI_Comm_disconnect(&world), &cls);
    CHECK(cls == MPI_ERR_COMM && world == MPI_COMM_WORLD, "disconnect WORLD: %d", cls);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(sum == size * (size - 1) / 2, "allreduce before disconnect");

    int rc = tc_report(MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
}
