/*
 * names.c — the name service: every rank publishes svc-<rank> with a port
 * of its own and looks up every other rank's; a name published twice, a
 * lookup of nothing and an unpublish of nothing fail with their classes; a
 * name and port with blanks and '%' round-trip; the server (reached raw
 * through LOCUS_NAME_SERVER) closes on a wrong token, garbage, an
 * over-long line and silence, and serves on. MPI_UNIVERSE_SIZE checked
 * too. Prints " No Errors" at world rank 0.
 *
 *   names [universe=N]  MPI_UNIVERSE_SIZE must be N (default: the CPUs
 *                       online, at least the job's size)
 *   names spawn         also: a child job finds its parent's name,
 *                       connects to the port it names, and shares the
 *                       parent's LOCUS_NAME_SERVER
 *   names singleton     no locusrun: each call fails with its class, then
 *                       MPI_Publish_name under the fatal handler
 *   names publish N     (one rank) publish N for a port and accept on it
 *   names lookup N      (one rank) look N up, connect, take a value: with
 *                       the publisher in another launch, both given one
 *                       LOCUS_NAME_SERVER (tests/mpi/names_shared.sh)
 */
#include <arpa/inet.h>
#include <mpi.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int errs;
#define CHECK(c, ...)                                                                        \
    do {                                                                                     \
        if (!(c)) {                                                                          \
            errs++;                                                                          \
            fprintf(stderr, "check failed (%s:%d): ", __FILE__, __LINE__);                  \
            fprintf(stderr, __VA_ARGS__);                                                    \
            fputc('\n', stderr);                                                             \
        }                                                                                    \
    } while (0)

static int err_class(int rc)
{
    int c = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

/* ---- the server, raw ---------------------------------------------------- */

/* Sends len bytes of req to the name server and reads until it closes:
 * what it answered into out, or -1 when it did not close within 8 s. */
static int raw(const char *req, size_t len, char *out, size_t outlen)
{
    const char *env = getenv("LOCUS_NAME_SERVER");
    const char *at = env ? strchr(env, '@') : NULL;
    char ip[64];
    int port = 0;
    if (!at || sscanf(at + 1, "%63[0-9.]:%d", ip, &port) != 2)
        return -2;
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    inet_pton(AF_INET, ip, &sa.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
        return -2;
    if (len)
        (void)!send(fd, req, len, MSG_NOSIGNAL);
    size_t got = 0;
    struct pollfd p = { .fd = fd, .events = POLLIN };
    time_t by = time(NULL) + 8;
    for (;;) {
        if (time(NULL) > by || poll(&p, 1, 1000) < 0) {
            close(fd);
            return -1;
        }
        if (!p.revents)
            continue;
        ssize_t r = recv(fd, out + got, outlen - 1 - got, 0);
        if (r <= 0)
            break;  /* closed (or reset: a long request left unread) */
        got += (size_t)r;
    }
    close(fd);
    out[got] = '\0';
    return (int)got;
}

static void server_robustness(void)
{
    const char *env = getenv("LOCUS_NAME_SERVER");
    CHECK(env && strchr(env, '@'), "LOCUS_NAME_SERVER=%s", env ? env : "(unset)");
    if (!env || !strchr(env, '@'))
        return;
    char token[128], req[6000], out[256];
    snprintf(token, sizeof token, "%.*s", (int)(strchr(env, '@') - env), env);
    static const char *const bad[] = {
        "0123 lookup svc-0\n",                   /* wrong token */
        "garbage\n",
        "%s lookup\n",                           /* too few words */
        "%s publish a b c\n",                    /* too many */
        "%s lookup  svc-0\n",                    /* an empty word */
        "%s fetch svc-0\n",                      /* no such verb */
        "%s lookup svc\t0\n",                    /* a control byte */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int n = snprintf(req, sizeof req, bad[i], token);
        int got = raw(req, (size_t)n, out, sizeof out);
        CHECK(got == 0, "request %zu: answered %d bytes '%s'", i, got, got > 0 ? out : "");
    }
    /* A NUL inside the line, a line longer than 4 KiB, silence. */
    int n = snprintf(req, sizeof req, "%s lookup svc-0", token);
    memcpy(req + n, "\0x\n", 3);
    CHECK(raw(req, (size_t)n + 3, out, sizeof out) == 0, "a NUL in the line was answered");
    memset(req, 'x', 5000);
    req[5000] = '\n';
    CHECK(raw(req, 5001, out, sizeof out) == 0, "a 5000-byte line was answered");
    double t0 = MPI_Wtime();
    int got = raw("", 0, out, sizeof out);
    CHECK(got == 0 && MPI_Wtime() - t0 > 4, "a silent connection: %d after %.1f s", got,
          MPI_Wtime() - t0);
    /* Still serving, and the wire's form of an answer. */
    n = snprintf(req, sizeof req, "%s lookup no-such-name\n", token);
    got = raw(req, (size_t)n, out, sizeof out);
    CHECK(got == 5 && strcmp(out, "none\n") == 0, "lookup of nothing: '%s'", got > 0 ? out : "");
}

/* ---- MPI ------------------------------------------------------------------- */

static void universe(int size, const char *want_arg)
{
    int *u, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &u, &flag);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int want = want_arg ? atoi(want_arg) : (int)(cpus > size ? cpus : size);
    CHECK(flag && *u == want, "MPI_UNIVERSE_SIZE %d, want %d", flag ? *u : -1, want);
}

static void names(int rank, int size)
{
    char port[MPI_MAX_PORT_NAME], got[MPI_MAX_PORT_NAME], svc[64];
    MPI_Open_port(MPI_INFO_NULL, port);
    snprintf(svc, sizeof svc, "svc-%d", rank);
    CHECK(MPI_Publish_name(svc, MPI_INFO_NULL, port) == MPI_SUCCESS, "publish %s", svc);
    char *all = malloc((size_t)size * MPI_MAX_PORT_NAME);
    MPI_Allgather(port, MPI_MAX_PORT_NAME, MPI_CHAR, all, MPI_MAX_PORT_NAME, MPI_CHAR,
                  MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < size; r++) {
        snprintf(svc, sizeof svc, "svc-%d", r);
        int rc = MPI_Lookup_name(svc, MPI_INFO_NULL, got);
        CHECK(rc == MPI_SUCCESS && strcmp(got, all + (size_t)r * MPI_MAX_PORT_NAME) == 0,
              "lookup %s: rc %d, '%s'", svc, rc, got);
    }
    snprintf(svc, sizeof svc, "svc-%d", rank);
    int c = err_class(MPI_Publish_name(svc, MPI_INFO_NULL, "another-port"));
    CHECK(c == MPI_ERR_SERVICE, "publish of a taken name: class %d", c);
    c = err_class(MPI_Lookup_name("no-such-service", MPI_INFO_NULL, got));
    CHECK(c == MPI_ERR_NAME, "lookup of nothing: class %d", c);
    c = err_class(MPI_Publish_name("", MPI_INFO_NULL, port));
    CHECK(c == MPI_ERR_ARG, "publish of an empty name: class %d", c);
    MPI_Barrier(MPI_COMM_WORLD);  /* every lookup done before any unpublish */
    CHECK(MPI_Unpublish_name(svc, MPI_INFO_NULL, port) == MPI_SUCCESS, "unpublish %s", svc);
    c = err_class(MPI_Lookup_name(svc, MPI_INFO_NULL, got));
    CHECK(c == MPI_ERR_NAME, "lookup after unpublish: class %d", c);
    c = err_class(MPI_Unpublish_name(svc, MPI_INFO_NULL, port));
    CHECK(c == MPI_ERR_SERVICE, "unpublish of nothing: class %d", c);
    /* Blanks and '%' in both, as MPI allows any string. */
    const char *odd = "my service %41 100% \xc3\xa9", *oddport = "a port with\tblanks %zz%";
    if (rank == 0)
        CHECK(MPI_Publish_name(odd, MPI_INFO_NULL, oddport) == MPI_SUCCESS, "publish odd");
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(MPI_Lookup_name(odd, MPI_INFO_NULL, got) == MPI_SUCCESS && strcmp(got, oddport) == 0,
          "odd name: '%s'", got);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(MPI_Unpublish_name(odd, MPI_INFO_NULL, oddport) == MPI_SUCCESS, "unpublish odd");
    MPI_Close_port(port);
    free(all);
}

/* Parents: rank 0 publishes a port, the children look it up and connect.
 * The port travels over the spawn's intercommunicator too, which the
 * children connect to whatever the lookup gave (a failed one must not
 * leave the parents accepting forever). */
static void spawn_parent(const char *self)
{
    int rank, ok = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char port[MPI_MAX_PORT_NAME] = "", env[2300] = "";
    if (rank == 0) {
        MPI_Open_port(MPI_INFO_NULL, port);
        ok = MPI_Publish_name("parent-svc", MPI_INFO_NULL, port) == MPI_SUCCESS;
        CHECK(ok, "publish parent-svc");
        snprintf(env, sizeof env, "%s", getenv("LOCUS_NAME_SERVER"));
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok)
        return;
    char *cargv[] = { "child", NULL };
    MPI_Comm inter, other;
    MPI_Comm_spawn(self, cargv, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE);
    int root = rank == 0 ? MPI_ROOT : MPI_PROC_NULL;
    MPI_Bcast(env, sizeof env, MPI_CHAR, root, inter);
    MPI_Bcast(port, sizeof port, MPI_CHAR, root, inter);
    MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &other);
    int v = 99;
    MPI_Bcast(&v, 1, MPI_INT, root, other);
    MPI_Comm_disconnect(&other);
    MPI_Comm_disconnect(&inter);
    if (rank == 0) {
        CHECK(MPI_Unpublish_name("parent-svc", MPI_INFO_NULL, port) == MPI_SUCCESS, "unpublish");
        MPI_Close_port(port);
    }
}

static int child(void)
{
    MPI_Comm parent, other;
    MPI_Comm_get_parent(&parent);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char env[2300], port[MPI_MAX_PORT_NAME], got[MPI_MAX_PORT_NAME] = "";
    MPI_Bcast(env, sizeof env, MPI_CHAR, 0, parent);
    MPI_Bcast(port, sizeof port, MPI_CHAR, 0, parent);
    const char *mine = getenv("LOCUS_NAME_SERVER");
    CHECK(mine && strcmp(mine, env) == 0, "child's name server %s, parent's %s",
          mine ? mine : "(unset)", env);
    int rc = MPI_Lookup_name("parent-svc", MPI_INFO_NULL, got);
    CHECK(rc == MPI_SUCCESS && strcmp(got, port) == 0, "child: lookup of parent-svc: rc %d, "
          "'%s'", rc, got);
    MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &other);
    int v = -1;
    MPI_Bcast(&v, 1, MPI_INT, 0, other);
    CHECK(v == 99, "child: bcast over the port: %d", v);
    MPI_Comm_disconnect(&other);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return errs != 0;
}

static int singleton(void)
{
    char got[MPI_MAX_PORT_NAME];
    int c = err_class(MPI_Publish_name("svc", MPI_INFO_NULL, "port"));
    CHECK(c == MPI_ERR_SERVICE, "publish without a name service: class %d", c);
    c = err_class(MPI_Lookup_name("svc", MPI_INFO_NULL, got));
    CHECK(c == MPI_ERR_NAME, "lookup without a name service: class %d", c);
    c = err_class(MPI_Unpublish_name("svc", MPI_INFO_NULL, "port"));
    CHECK(c == MPI_ERR_SERVICE, "unpublish without a name service: class %d", c);
    if (errs)
        return 1;
    /* The fatal handler's line says why (the test expects it). */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Publish_name("svc", MPI_INFO_NULL, "port");
    return 1;
}

/* Two launches sharing one name service (locusrun --name-server): the
 * first publishes `name` for a port it accepts on, the second looks the
 * name up (until it is there, 20 s at most) and connects; a value crosses
 * the resulting intercommunicator. */
static int shared(int publisher, const char *name)
{
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm other;
    int v = publisher ? 4711 : -1;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (publisher) {
        MPI_Open_port(MPI_INFO_NULL, port);
        CHECK(MPI_Publish_name(name, MPI_INFO_NULL, port) == MPI_SUCCESS, "publish %s", name);
        MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &other);
        MPI_Send(&v, 1, MPI_INT, 0, 0, other);
        CHECK(MPI_Unpublish_name(name, MPI_INFO_NULL, port) == MPI_SUCCESS, "unpublish");
        MPI_Close_port(port);
    } else {
        int rc = MPI_ERR_NAME;
        for (int tries = 0; tries < 200 && rc != MPI_SUCCESS; tries++) {
            rc = MPI_Lookup_name(name, MPI_INFO_NULL, port);
            if (rc != MPI_SUCCESS)
                usleep(100000);
        }
        CHECK(rc == MPI_SUCCESS, "lookup of %s from another launch: %d", name, rc);
        if (rc != MPI_SUCCESS) {
            MPI_Finalize();
            return 1;
        }
        MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &other);
        MPI_Recv(&v, 1, MPI_INT, 0, 0, other, MPI_STATUS_IGNORE);
        CHECK(v == 4711, "value from the other launch: %d", v);
    }
    MPI_Comm_disconnect(&other);
    if (errs == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return errs != 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "child") == 0)
        return child();
    if ((strcmp(mode, "publish") == 0 || strcmp(mode, "lookup") == 0) && argc > 2)
        return shared(mode[0] == 'p', argv[2]);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (strcmp(mode, "singleton") == 0)
        return singleton();
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    universe(size, strncmp(mode, "universe=", 9) == 0 ? mode + 9 : NULL);
    names(rank, size);
    if (rank == 0)
        server_robustness();
    if (strcmp(mode, "spawn") == 0)
        spawn_parent(argv[0]);
    int total = 0;
    MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && total == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return total != 0;
}
