/*
 * MPI-4 sessions, with MPI_Init (argument "init") or without it (none):
 * two sessions; the process sets mpi://WORLD and mpi://SELF, their info
 * and groups; communicators made from groups (the WORLD group, each
 * parity's half concurrently under the same tag, SELF) carrying
 * collectives and point-to-point without mixing; mismatched tags
 * refused on every member; an intercommunicator from two groups; session
 * error handlers; the session's info; finalize.
 */
#include <stdlib.h>
#include <string.h>

#include "tcheck.h"

static int handler_calls, handler_code;
static MPI_Session handler_session;

static void session_handler(MPI_Session *s, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_session = *s;
}

static void psets(MPI_Session s, int size)
{
    int n = 0, len = 0;
    char name[64];
    CHECK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n) == MPI_SUCCESS && n == 2, "psets %d",
          n);
    CHECK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, NULL) == MPI_SUCCESS &&
          len == (int)strlen("mpi://WORLD") + 1, "length query %d", len);
    len = sizeof name;
    MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, name);
    CHECK(strcmp(name, "mpi://WORLD") == 0, "pset 0 '%s'", name);
    len = sizeof name;
    MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 1, &len, name);
    CHECK(strcmp(name, "mpi://SELF") == 0, "pset 1 '%s'", name);
    len = sizeof name;
    CHECK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 2, &len, name) == MPI_ERR_ARG, "pset 2");

    MPI_Info info;
    char v[32];
    int flag = 0, vl = sizeof v;
    CHECK(MPI_Session_get_pset_info(s, "mpi://WORLD", &info) == MPI_SUCCESS, "pset info");
    MPI_Info_get_string(info, "mpi_size", &vl, v, &flag);
    CHECK(flag && atoi(v) == size, "mpi://WORLD mpi_size '%s'", v);
    MPI_Info_free(&info);
    vl = sizeof v;
    MPI_Session_get_pset_info(s, "mpi://SELF", &info);
    MPI_Info_get_string(info, "mpi_size", &vl, v, &flag);
    CHECK(flag && atoi(v) == 1, "mpi://SELF mpi_size '%s'", v);
    MPI_Info_free(&info);
    CHECK(MPI_Session_get_pset_info(s, "mpi://NOWHERE", &info) == MPI_ERR_ARG, "unknown pset");
    MPI_Group g;
    CHECK(MPI_Group_from_session_pset(s, "mpi://nowhere", &g) == MPI_ERR_ARG, "unknown group");
}

/* Collectives and a ring on c (members: world ranks wrank[] of it). */
static void use_comm(MPI_Comm c, const char *what)
{
    int rank, size, sum = 0, root_val, next, prev, got = -1;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c);
    CHECK(sum == size * (size - 1) / 2, "%s: allreduce %d", what, sum);
    root_val = rank == size - 1 ? 4242 : 0;
    MPI_Bcast(&root_val, 1, MPI_INT, size - 1, c);
    CHECK(root_val == 4242, "%s: bcast %d", what, root_val);
    MPI_Barrier(c);
    next = (rank + 1) % size;
    prev = (rank + size - 1) % size;
    MPI_Sendrecv(&rank, 1, MPI_INT, next, 5, &got, 1, MPI_INT, prev, 5, c, MPI_STATUS_IGNORE);
    CHECK(got == prev, "%s: ring got %d want %d", what, got, prev);
}

int main(int argc, char **argv)
{
    int with_init = argc > 1 && strcmp(argv[1], "init") == 0;
    if (with_init)
        MPI_Init(&argc, &argv);
    MPI_Session s1, s2;
    CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s1) == MPI_SUCCESS, "init s1");
    CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2) == MPI_SUCCESS, "init s2");
    CHECK(s1 != s2 && s1 != MPI_SESSION_NULL, "two sessions");

    MPI_Group gw, gs;
    int rank, size, grank;
    CHECK(MPI_Group_from_session_pset(s1, "mpi://WORLD", &gw) == MPI_SUCCESS, "WORLD group");
    MPI_Group_size(gw, &size);
    MPI_Group_rank(gw, &rank);
    tc_rank = rank;
    CHECK(size >= 2, "run on 2 or more ranks (%d)", size);
    psets(s1, size);
    CHECK(MPI_Group_from_session_pset(s2, "mpi://SELF", &gs) == MPI_SUCCESS, "SELF group");
    MPI_Group_size(gs, &grank);
    CHECK(grank == 1, "SELF group size %d", grank);

    /* The WORLD group's communicator, twice (each its own context). */
    MPI_Comm cw, cw2, cself, half;
    CHECK(MPI_Comm_create_from_group(gw, "org.locus.test.world", MPI_INFO_NULL,
                                     MPI_ERRORS_RETURN, &cw) == MPI_SUCCESS, "from WORLD");
    MPI_Comm_rank(cw, &grank);
    CHECK(grank == rank, "rank %d in the new communicator, %d in the group", grank, rank);
    use_comm(cw, "world");
    MPI_Group g2;
    MPI_Group_from_session_pset(s2, "mpi://WORLD", &g2);
    CHECK(MPI_Comm_create_from_group(g2, "org.locus.test.world2", MPI_INFO_NULL,
                                     MPI_ERRORS_RETURN, &cw2) == MPI_SUCCESS, "second");
    /* Same members and tag, other communicator: the messages stay apart. */
    int a = 1, b = 2, ra = 0, rb = 0;
    if (rank == 0) {
        MPI_Send(&a, 1, MPI_INT, 1, 0, cw);
        MPI_Send(&b, 1, MPI_INT, 1, 0, cw2);
    } else if (rank == 1) {
        MPI_Recv(&rb, 1, MPI_INT, 0, 0, cw2, MPI_STATUS_IGNORE);
        MPI_Recv(&ra, 1, MPI_INT, 0, 0, cw, MPI_STATUS_IGNORE);
        CHECK(ra == 1 && rb == 2, "messages crossed communicators: %d %d", ra, rb);
    }

    /* A buffer attached to s2 serves the buffered sends of s2's communicators. */
    static char sbuf[1024 + MPI_BSEND_OVERHEAD];
    CHECK(MPI_Session_attach_buffer(s2, sbuf, sizeof sbuf) == MPI_SUCCESS, "session attach");
    int bv = 7 + rank, bgot = -1;
    CHECK(MPI_Bsend(&bv, 1, MPI_INT, (rank + 1) % size, 3, cw2) == MPI_SUCCESS, "Bsend");
    MPI_Recv(&bgot, 1, MPI_INT, (rank + size - 1) % size, 3, cw2, MPI_STATUS_IGNORE);
    CHECK(bgot == 7 + (rank + size - 1) % size, "session-buffered message %d", bgot);
    CHECK(MPI_Session_flush_buffer(s2) == MPI_SUCCESS, "session flush");
    void *back = NULL;
    int bsize = 0;
    CHECK(MPI_Session_detach_buffer(s2, &back, &bsize) == MPI_SUCCESS && back == sbuf &&
          bsize == (int)sizeof sbuf, "session detach: %p %d", back, bsize);

    /* Each parity's half at once, same tag: disjoint groups, no mixing. */
    int nhalf = 0, *members = malloc(sizeof(int) * (size_t)size);
    for (int r = rank % 2; r < size; r += 2)
        members[nhalf++] = r;
    MPI_Group gh;
    MPI_Group_incl(gw, nhalf, members, &gh);
    CHECK(MPI_Comm_create_from_group(gh, "org.locus.test.half", MPI_INFO_NULL,
                                     MPI_ERRORS_RETURN, &half) == MPI_SUCCESS, "half");
    if (nhalf > 1)
        use_comm(half, "half");
    int hsize;
    MPI_Comm_size(half, &hsize);
    CHECK(hsize == nhalf, "half size %d", hsize);

    /* SELF's. */
    CHECK(MPI_Comm_create_from_group(gs, "org.locus.test.self", MPI_INFO_NULL,
                                     MPI_ERRORS_RETURN, &cself) == MPI_SUCCESS, "from SELF");
    MPI_Comm_size(cself, &hsize);
    CHECK(hsize == 1, "SELF communicator of %d", hsize);

    /* Tags that differ between the members: refused everywhere. */
    char tag[32];
    snprintf(tag, sizeof tag, "org.locus.test.rank%d", rank);
    MPI_Comm bad = MPI_COMM_NULL;
    int rc = MPI_Comm_create_from_group(gw, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &bad);
    CHECK(rc == MPI_ERR_ARG && bad == MPI_COMM_NULL, "mismatched tags: %d", rc);

    /* An intercommunicator between the halves. */
    MPI_Group other;
    MPI_Group_difference(gw, gh, &other);
    MPI_Comm inter;
    rc = MPI_Intercomm_create_from_groups(gh, 0, other, 0, "org.locus.test.inter", MPI_INFO_NULL,
                                          MPI_ERRORS_RETURN, &inter);
    CHECK(rc == MPI_SUCCESS, "intercommunicator: %d", rc);
    if (rc == MPI_SUCCESS) {
        int flag = 0, rsize = 0, lrank, peer = -1;
        MPI_Comm_test_inter(inter, &flag);
        MPI_Comm_remote_size(inter, &rsize);
        CHECK(flag && rsize == size - nhalf, "inter: flag %d remote size %d", flag, rsize);
        /* The first of each half trade their world ranks. */
        MPI_Comm_rank(inter, &lrank);
        if (lrank == 0)
            MPI_Sendrecv(&rank, 1, MPI_INT, 0, 1, &peer, 1, MPI_INT, 0, 1, inter,
                         MPI_STATUS_IGNORE);
        CHECK(lrank != 0 || peer == 1 - rank % 2, "the other half's first is %d", peer);
        MPI_Comm_free(&inter);
    }

    /* A session's error handler. */
    MPI_Errhandler eh, got;
    CHECK(MPI_Session_create_errhandler(session_handler, &eh) == MPI_SUCCESS, "create eh");
    CHECK(MPI_Session_set_errhandler(s2, eh) == MPI_SUCCESS, "set eh");
    MPI_Session_call_errhandler(s2, MPI_ERR_OTHER);
    CHECK(handler_calls == 1 && handler_code == MPI_ERR_OTHER && handler_session == s2,
          "handler called %d times with %d", handler_calls, handler_code);
    MPI_Session_get_num_psets(s2, MPI_INFO_NULL, NULL);
    CHECK(handler_calls == 2 && handler_code == MPI_ERR_ARG, "error raised on s2: %d",
          handler_code);
    CHECK(MPI_Session_get_errhandler(s2, &got) == MPI_SUCCESS && got == eh, "get eh");
    MPI_Errhandler_free(&got);
    MPI_Errhandler_free(&eh);

    /* The session's info says its thread level. */
    MPI_Info info;
    char v[64];
    int vl = sizeof v, flag = 0;
    CHECK(MPI_Session_get_info(s1, &info) == MPI_SUCCESS, "get_info");
    MPI_Info_get_string(info, "thread_level", &vl, v, &flag);
    CHECK(flag && strncmp(v, "MPI_THREAD_", 11) == 0, "thread_level '%s'", v);
    MPI_Info_free(&info);

    /* The verdict goes over the session's communicator: without MPI_Init
     * there is no MPI_COMM_WORLD to use. */
    int fails = tc_report(cw);
    MPI_Comm_free(&cw);
    MPI_Comm_free(&cw2);
    MPI_Comm_free(&half);
    MPI_Comm_free(&cself);
    MPI_Group_free(&gw);
    MPI_Group_free(&g2);
    MPI_Group_free(&gs);
    MPI_Group_free(&gh);
    MPI_Group_free(&other);
    free(members);
    MPI_Session stale = s1;
    CHECK(MPI_Session_finalize(&s1) == MPI_SUCCESS && s1 == MPI_SESSION_NULL, "finalize s1");
    /* A finalized session is no session: the default handler hears of it
     * (MPI_COMM_WORLD's, set to return here; without MPI_Init it is fatal). */
    if (with_init) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        CHECK(MPI_Session_get_num_psets(stale, MPI_INFO_NULL, &vl) == MPI_ERR_SESSION,
              "finalized session");
    }
    CHECK(MPI_Session_finalize(&s2) == MPI_SUCCESS, "finalize s2");
    if (with_init)
        MPI_Finalize();
    return fails || tc_errs;
}
