/*
 * spawn.c — dynamic processes: MPI_Comm_spawn of this program (its
 * children run it with "child"), traffic both ways over the
 * intercommunicator (small and large, checked), collectives on it, a
 * merge, a disconnect after which MPI_Comm_get_parent is MPI_COMM_NULL;
 * spawn_multiple (MPI_APPNUM); a program that cannot start (MPI_ERR_SPAWN
 * at every parent, nothing left waiting); ports within one job and
 * between parents and children; MPI_Comm_join of world ranks 0 and 1 over a
 * TCP socket. Prints " No Errors" at world rank 0.
 *
 *   spawn [N]        N children (default 2)
 *   spawn fail       only the failing spawn
 *   spawn remote H   2 children on host H (info "host"), which must be
 *                    another node: their network namespace is not ours;
 *                    H "-": no host given, the launch's free slots must
 *                    be on another node
 *   spawn crash      a child dies after it connected while the parent
 *                    waits for it: the parent's job must fail, not hang
 *   spawn threads    two threads spawn a child each at once (and meet it
 *                    again through a port of their own)
 *   spawn free       each parent's child runs on a core of its own (where
 *                    the machine has one for every parent and child)
 */
#include <arpa/inet.h>
#include <mpi.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Atomic: two threads check at once in "spawn threads". */
static _Atomic int errs;
#define CHECK(c, ...)                                                                        \
    do {                                                                                     \
        if (!(c)) {                                                                          \
            errs++;                                                                          \
            fprintf(stderr, "check failed (%s:%d): ", __FILE__, __LINE__);                  \
            fprintf(stderr, __VA_ARGS__);                                                    \
            fputc('\n', stderr);                                                             \
        }                                                                                    \
    } while (0)

#define BIG (1 << 20)

static unsigned char pattern(int who, size_t i)
{
    return (unsigned char)(who * 31 + i * 7 + (i >> 9));
}

/* Parents and children both: rank 0 of each side sends the other side's
 * ranks a small and a large message, each checks what it got. */
static void traffic(MPI_Comm inter, int parent_side)
{
    int rank, rsize;
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_remote_size(inter, &rsize);
    unsigned char *big = malloc(BIG);
    int tag = parent_side ? 1 : 2;
    if (rank == 0) {
        for (int r = 0; r < rsize; r++) {
            int v = 1000 * tag + r;
            for (size_t i = 0; i < BIG; i++)
                big[i] = pattern(v, i);
            MPI_Send(&v, 1, MPI_INT, r, tag, inter);
            MPI_Send(big, BIG, MPI_BYTE, r, tag, inter);
        }
    }
    int v = -1, otag = parent_side ? 2 : 1;
    MPI_Status st;
    MPI_Recv(&v, 1, MPI_INT, 0, otag, inter, &st);
    CHECK(v == 1000 * otag + rank, "got %d, want %d", v, 1000 * otag + rank);
    memset(big, 0, BIG);
    MPI_Recv(big, BIG, MPI_BYTE, 0, otag, inter, &st);
    int n;
    MPI_Get_count(&st, MPI_BYTE, &n);
    CHECK(n == BIG && st.MPI_SOURCE == 0, "large message: %d bytes from %d", n, st.MPI_SOURCE);
    size_t bad = 0;
    for (size_t i = 0; i < BIG; i++)
        bad += big[i] != pattern(v, i);
    CHECK(bad == 0, "large message: %zu bytes wrong", bad);
    free(big);
}

/* Collectives across the two groups, and the merge. */
static void collectives(MPI_Comm inter, int parent_side)
{
    int rank, size, rsize;
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_size(inter, &size);
    MPI_Comm_remote_size(inter, &rsize);
    int v = parent_side ? 4242 : -1;
    if (parent_side)
        MPI_Bcast(&v, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);
    else
        MPI_Bcast(&v, 1, MPI_INT, 0, inter);
    if (!parent_side)
        CHECK(v == 4242, "intercomm bcast: %d", v);
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, inter);
    CHECK(sum == rsize, "intercomm allreduce: %d, want %d", sum, rsize);
    MPI_Comm merged;
    MPI_Intercomm_merge(inter, parent_side ? 0 : 1, &merged);
    int mrank, msize;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    CHECK(msize == size + rsize, "merged size %d", msize);
    CHECK(mrank == (parent_side ? rank : rsize + rank), "merged rank %d", mrank);
    int total = 0;
    MPI_Allreduce(&mrank, &total, 1, MPI_INT, MPI_SUM, merged);
    CHECK(total == msize * (msize - 1) / 2, "merged allreduce %d", total);
    MPI_Barrier(merged);
    /* Each side makes a communicator of its own group from the merged one
     * (disjoint groups in one MPI_Comm_create: what mpi4py does for a
     * context of its own on an intercommunicator). */
    MPI_Group local;
    MPI_Comm mine;
    MPI_Comm_group(inter, &local);
    MPI_Comm_create(merged, local, &mine);
    int msz = -1, mtotal = -1;
    if (mine != MPI_COMM_NULL)
        MPI_Comm_size(mine, &msz);
    CHECK(msz == size, "own group from the merged communicator: size %d, want %d", msz, size);
    if (mine != MPI_COMM_NULL) {
        MPI_Allreduce(&one, &mtotal, 1, MPI_INT, MPI_SUM, mine);
        CHECK(mtotal == size, "allreduce on the own group: %d, want %d", mtotal, size);
        MPI_Comm_free(&mine);
    }
    MPI_Group_free(&local);
    MPI_Comm_free(&merged);
    /* Both sides say the same "high": the order is the implementation's,
     * but every member must see the same one (ranks of two jobs). */
    MPI_Intercomm_merge(inter, 0, &merged);
    int who[2] = { parent_side, 0 }, seen[2] = { -1, -1 };
    MPI_Comm_rank(merged, &mrank);
    MPI_Allreduce(&mrank, &total, 1, MPI_INT, MPI_SUM, merged);
    CHECK(total == msize * (msize - 1) / 2, "tied merge: ranks sum to %d", total);
    /* Rank 0's side, as everyone sees it. */
    if (mrank == 0)
        who[1] = parent_side;
    MPI_Allreduce(&who[1], &seen[0], 1, MPI_INT, MPI_MAX, merged);
    if (parent_side == seen[0])
        CHECK(mrank == rank, "tied merge: rank %d of the first side is %d", rank, mrank);
    else
        CHECK(mrank == rsize + rank, "tied merge: rank %d of the second side is %d", rank, mrank);
    MPI_Comm_free(&merged);
}

/* A port between the parents (rank 0 opens it) and the children: a
 * second intercommunicator over an accept/connect of their own. */
static void port_meeting(MPI_Comm inter, int parent_side, MPI_Comm parents)
{
    char port[MPI_MAX_PORT_NAME] = "";
    int rank;
    MPI_Comm_rank(inter, &rank);
    MPI_Comm other;
    if (parent_side) {
        if (rank == 0) {
            MPI_Open_port(MPI_INFO_NULL, port);
            MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 7, inter);
        }
        MPI_Comm local;
        MPI_Comm_dup(parents, &local);
        MPI_Comm_accept(port, MPI_INFO_NULL, 0, local, &other);
        MPI_Comm_free(&local);
        if (rank == 0)
            MPI_Close_port(port);
    } else {
        if (rank == 0)
            MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 7, inter, MPI_STATUS_IGNORE);
        MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &other);
    }
    int v = parent_side ? 77 : -1;
    MPI_Bcast(&v, 1, MPI_INT, parent_side ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, other);
    if (!parent_side)
        CHECK(v == 77, "bcast over the port's communicator: %d", v);
    MPI_Comm_disconnect(&other);
}

/* The parents' ending: every rank's failed checks summed, " No Errors"
 * at world rank 0 when there were none, MPI_Finalize; the exit status. */
static int finish(void)
{
    int mine = errs, all = 0, rank;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0 && all == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return all != 0;
}

/* This process's network namespace (a node of the emulated cluster). */
static unsigned long netns(void)
{
    char link[64] = "";
    ssize_t n = readlink("/proc/self/ns/net", link, sizeof link - 1);
    unsigned long ino = 0;
    if (n > 0)
        sscanf(link, "net:[%lu]", &ino);
    return ino;
}

/* The CPUs (the first 64) this process may run on. */
static unsigned long long cpu_mask(void)
{
    cpu_set_t set;
    unsigned long long mask = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < 64; c++)
            if (CPU_ISSET(c, &set))
                mask |= 1ull << c;
    return mask;
}

/* Children on free cores: the parents (bound by locusrun) spawn one child
 * each; where the machine has a core for every one of them, no child
 * shares a core with a parent or another child (the launch's slot ledger). */
static void free_cores(const char *self)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *cargv[] = { "child", "free", NULL };
    MPI_Comm inter;
    MPI_Comm_spawn(self, cargv, size, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                   MPI_ERRCODES_IGNORE);
    unsigned long long mine = cpu_mask(), all = 0, seen;
    MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_BOR, MPI_COMM_WORLD);
    /* Room for as many again as the parents' PUs (whole cores, with SMT). */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int room = cpus <= 64 && cpus >= 2 * __builtin_popcountll(all);
    for (int i = 0; rank == 0 && i < size; i++) {
        MPI_Recv(&seen, 1, MPI_UNSIGNED_LONG_LONG, MPI_ANY_SOURCE, 11, inter, MPI_STATUS_IGNORE);
        if (room)
            CHECK((seen & all) == 0, "a child runs on CPUs %#llx, beside the parents or "
                  "another child (%#llx)", seen, all);
        all |= seen;
    }
    MPI_Comm_disconnect(&inter);
}

/* Children on another node: where they run, and the traffic checks. */
static int remote(const char *self, const char *host)
{
    MPI_Info info;
    MPI_Info_create(&info);
    if (strcmp(host, "-") != 0) /* "-": where the launch's free slots are */
        MPI_Info_set(info, "host", host);
    char *cargv[] = { "child", "remote", NULL };
    MPI_Comm inter;
    int codes[2];
    MPI_Comm_spawn(self, cargv, 2, info, 0, MPI_COMM_WORLD, &inter, codes);
    MPI_Info_free(&info);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < 2; i++) {
        unsigned long ns = 0;
        if (rank == 0) {
            MPI_Recv(&ns, 1, MPI_UNSIGNED_LONG, i, 8, inter, MPI_STATUS_IGNORE);
            CHECK(ns != 0 && ns != netns(), "child %d runs in our network namespace", i);
        }
    }
    traffic(inter, 1);
    collectives(inter, 1);
    MPI_Comm_disconnect(&inter);
    return 0;
}

static int child(int argc, char **argv)
{
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    CHECK(parent != MPI_COMM_NULL, "a child without a parent");
    if (parent == MPI_COMM_NULL)
        return 1;
    int *appnum, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    int is_remote = argc > 2 && strcmp(argv[2], "remote") == 0;
    int is_free = argc > 2 && strcmp(argv[2], "free") == 0;
    int want_app = argc > 2 && !is_remote && !is_free ? atoi(argv[2]) : 0;
    CHECK(flag && *appnum == want_app, "MPI_APPNUM %d, want %d", flag ? *appnum : -1, want_app);
    int wrank;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    if (argc > 2 && strcmp(argv[2], "crash") == 0) {
        if (wrank == 1)
            abort();
        MPI_Send(&wrank, 1, MPI_INT, 0, 3, parent);
        MPI_Finalize();
        return 0;
    }
    if (is_free) {
        unsigned long long mask = cpu_mask();
        MPI_Send(&mask, 1, MPI_UNSIGNED_LONG_LONG, 0, 11, parent);
    } else if (is_remote) {
        unsigned long ns = netns();
        MPI_Send(&ns, 1, MPI_UNSIGNED_LONG, 0, 8, parent);
        traffic(parent, 0);
        collectives(parent, 0);
    } else if (argc > 2) {
        /* spawn_multiple: report the app number and go. */
        int v[2] = { wrank, *appnum };
        MPI_Send(v, 2, MPI_INT, 0, 9, parent);
    } else {
        traffic(parent, 0);
        collectives(parent, 0);
        port_meeting(parent, 0, MPI_COMM_NULL);
    }
    MPI_Comm_disconnect(&parent);
    MPI_Comm_get_parent(&parent);
    CHECK(parent == MPI_COMM_NULL, "the parent after MPI_Comm_disconnect");
    return errs;
}

/* World ranks 0 and 1 join over a socket of their own. */
static void join(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || rank > 1)
        return;
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t sl = sizeof sa;
    int fd = -1;
    if (rank == 0) {
        int ls = socket(AF_INET, SOCK_STREAM, 0);
        if (bind(ls, (struct sockaddr *)&sa, sizeof sa) || listen(ls, 1) ||
            getsockname(ls, (struct sockaddr *)&sa, &sl))
            CHECK(0, "listen");
        MPI_Send(&sa.sin_port, sizeof sa.sin_port, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
        fd = accept(ls, NULL, NULL);
        close(ls);
    } else {
        MPI_Recv(&sa.sin_port, sizeof sa.sin_port, MPI_BYTE, 0, 5, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        CHECK(connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0, "connect");
    }
    MPI_Comm inter;
    MPI_Comm_join(fd, &inter);
    int rsize = 0, v = rank == 0 ? 99 : -1;
    MPI_Comm_remote_size(inter, &rsize);
    CHECK(rsize == 1, "join: remote size %d", rsize);
    MPI_Bcast(&v, 1, MPI_INT, rank == 0 ? MPI_ROOT : 0, inter);
    if (rank == 1)
        CHECK(v == 99, "bcast over the joined communicator: %d", v);
    MPI_Comm_disconnect(&inter);
    close(fd);
}

static void spawn_fails(void)
{
    MPI_Comm inter = MPI_COMM_NULL;
    int codes[2] = { -1, -1 }, rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Comm_spawn("/nonexistent/locus-spawn-test", MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0,
                            MPI_COMM_WORLD, &inter, codes);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_SPAWN, "spawn of a missing program: class %d", cls);
    CHECK(inter == MPI_COMM_NULL, "spawn of a missing program gave a communicator");
    if (rank == 0)
        CHECK(codes[0] == MPI_ERR_SPAWN && codes[1] == MPI_ERR_SPAWN, "errcodes %d %d",
              codes[0], codes[1]);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* One of two threads that spawn at once, each a child of its own from
 * its own copy of MPI_COMM_SELF, then meet it again through a port: the
 * meetings' messages must not cross (mpi4py.futures' pools do this). */
static void *spawn_thread(void *arg)
{
    MPI_Comm self = *(MPI_Comm *)arg, inter;
    char *cargv[] = { "child", NULL };
    char *prog = getenv("LOCUS_SPAWN_TEST_PROG");
    MPI_Comm_spawn(prog, cargv, 1, MPI_INFO_NULL, 0, self, &inter, MPI_ERRCODES_IGNORE);
    traffic(inter, 1);
    collectives(inter, 1);
    port_meeting(inter, 1, self);
    MPI_Comm_disconnect(&inter);
    return NULL;
}

static int two_threads(char *prog)
{
    int level = 0;
    MPI_Query_thread(&level);
    CHECK(level == MPI_THREAD_MULTIPLE, "thread level %d", level);
    setenv("LOCUS_SPAWN_TEST_PROG", prog, 1);
    MPI_Comm selves[2];
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        MPI_Comm_dup(MPI_COMM_SELF, &selves[i]);
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, spawn_thread, &selves[i]);
    for (int i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
        MPI_Comm_free(&selves[i]);
    }
    return finish();
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "threads") == 0) {
        int got = 0;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &got);
        return two_threads(argv[0]);
    }
    MPI_Init(&argc, &argv);
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        int e = child(argc, argv);
        MPI_Finalize();
        return e ? 1 : 0;
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    CHECK(parent == MPI_COMM_NULL, "a parent job has a parent");
    int *usize, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag);
    CHECK(flag && *usize >= size, "MPI_UNIVERSE_SIZE");
    if (argc > 2 && strcmp(argv[1], "remote") == 0) {
        remote(argv[0], argv[2]);
        return finish();
    }
    if (argc > 1 && strcmp(argv[1], "crash") == 0) {
        char *cargv[] = { "child", "crash", NULL };
        MPI_Comm inter;
        MPI_Comm_spawn(argv[0], cargv, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                       MPI_ERRCODES_IGNORE);
        int v;
        for (int i = 0; rank == 0 && i < 2; i++)
            MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 3, inter, MPI_STATUS_IGNORE);
        printf("still running after a child died\n");
        MPI_Finalize();
        return 1;
    }
    if (argc > 1 && strcmp(argv[1], "free") == 0) {
        free_cores(argv[0]);
        return finish();
    }
    int fail_only = argc > 1 && strcmp(argv[1], "fail") == 0;
    int n = argc > 1 && !fail_only ? atoi(argv[1]) : 2;
    if (!fail_only) {
        char *cargv[] = { "child", NULL };
        int codes[16];
        MPI_Comm inter;
        MPI_Comm_spawn(argv[0], cargv, n, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes);
        int rsize;
        MPI_Comm_remote_size(inter, &rsize);
        CHECK(rsize == n, "%d children, want %d", rsize, n);
        for (int i = 0; rank == 0 && i < n; i++)
            CHECK(codes[i] == MPI_SUCCESS, "errcode[%d] %d", i, codes[i]);
        traffic(inter, 1);
        collectives(inter, 1);
        port_meeting(inter, 1, MPI_COMM_WORLD);
        MPI_Comm_disconnect(&inter);

        /* Two programs in one child job. */
        char *cmds[2] = { argv[0], argv[0] };
        char *a0[] = { "child", "0", NULL }, *a1[] = { "child", "1", NULL };
        char **argvs[2] = { a0, a1 };
        int np[2] = { 1, 2 };
        MPI_Info infos[2] = { MPI_INFO_NULL, MPI_INFO_NULL };
        MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, 0, MPI_COMM_WORLD, &inter, codes);
        if (rank == 0) {
            int seen[3] = { 0, 0, 0 };
            for (int i = 0; i < 3; i++) {
                int v[2];
                MPI_Recv(v, 2, MPI_INT, MPI_ANY_SOURCE, 9, inter, MPI_STATUS_IGNORE);
                CHECK(v[0] >= 0 && v[0] < 3 && v[1] == (v[0] == 0 ? 0 : 1),
                      "child %d says app %d", v[0], v[1]);
                if (v[0] >= 0 && v[0] < 3)
                    seen[v[0]]++;
            }
            CHECK(seen[0] == 1 && seen[1] == 1 && seen[2] == 1, "children heard from");
        }
        MPI_Comm_disconnect(&inter);
    }
    join();
    spawn_fails();
    return finish();
}
