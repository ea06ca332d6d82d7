/*
 * spawn.c — MPI_Comm_spawn and spawn_multiple, MPI_Comm_get_parent, and the
 * children's side in MPI_Init.
 *
 * The root opens a port, starts the child job (a locusrun of its own,
 * boot/spawn.c) with the port in the children's environment, and the
 * parents accept on it while the children connect in MPI_Init: the
 * intercommunicator is an accept/connect one (port.c). A child job that
 * ends before its ranks connected (a program that cannot be executed, one
 * that exits or crashes before MPI_Init, no room on the hosts) makes the
 * spawn return MPI_ERR_SPAWN at every parent: the root watches its
 * locusrun while it waits. MPI_Finalize waits for the child jobs a rank
 * started: that locusrun is its child and would die with it.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dynproc.h"

/* The child jobs this rank started (their locusruns). */
static pid_t *child_jobs;
static int nchild_jobs;
/* Children: the intercommunicator to the parents, and its context (a
 * struct of the pool is reused, a context id never is). */
static locus_comm_t *parent_comm;
static uint32_t parent_ctx;

typedef struct {
    pid_t pid;      /* 0: it was not started */
    int err;        /* why it was not */
} spawn_watch_t;

/* Parents and children share the nodes the parents' plan gave the parents
 * alone: idle waits yield from now on, as when oversubscribed, unless
 * LOCUS_YIELD=never says otherwise. */
static void yield_from_now(void)
{
    locus_core_t *c = locus_core();
    if (!c->yield && strcmp(c->yield_why, "LOCUS_YIELD=never") != 0) {
        c->yield = 1;
        c->yield_why = "a spawn shares the node with another job";
    }
}

/* While the root waits for the children: their locusrun has ended. */
static int spawn_gave_up(void *arg)
{
    spawn_watch_t *w = arg;
    if (!w->pid)
        return w->err;
    int status = 0;
    if (!locus_boot_spawn_poll(w->pid, 0, &status))
        return MPI_SUCCESS;
    w->pid = 0;
    snprintf(locus_mpi.detail, sizeof locus_mpi.detail,
             "the child job ended (locusrun exit status %d) before its ranks connected", status);
    return MPI_ERR_SPAWN;
}

/* The info keys a spawn honours: host (where the children run) and wdir. */
static void app_info(MPI_Info info, locus_boot_app_t *app, char *host, char *wdir, int len)
{
    int flag = 0;
    host[0] = wdir[0] = '\0';
    if (info == MPI_INFO_NULL)
        return;
    if (locus_info_get_impl(info, "host", len - 1, host, &flag) != MPI_SUCCESS || !flag)
        host[0] = '\0';
    if (locus_info_get_impl(info, "wdir", len - 1, wdir, &flag) != MPI_SUCCESS || !flag)
        wdir[0] = '\0';
    app->host = host;
    app->wdir = wdir;
}

/* The core's watch while child jobs run: one that ended with a failure
 * (a child crashed, aborted, or was killed after it connected) fails this
 * job too, as its parents may be waiting for what it will never send;
 * one that ended well is forgotten. */
static int child_jobs_watch(void *arg, char *why, size_t len)
{
    (void)arg;
    for (int i = 0; i < nchild_jobs; i++) {
        int status = 0;
        if (!locus_boot_spawn_poll(child_jobs[i], 0, &status))
            continue;
        pid_t pid = child_jobs[i];
        child_jobs[i--] = child_jobs[--nchild_jobs];
        if (status != 0) {
            snprintf(why, len, "a child job this rank spawned failed (its locusrun, pid %d, "
                     "exited with status %d)", (int)pid, status);
            return -1;
        }
    }
    if (nchild_jobs == 0)
        locus_core()->watch = NULL;
    return 0;
}

/* Collective over comm; apps matter at root only. */
static int spawn(locus_boot_app_t *apps, int napps, int root, locus_comm_t *comm,
                 locus_comm_t **out)
{
    char port[MPI_MAX_PORT_NAME] = "";
    spawn_watch_t w = { 0, MPI_SUCCESS };
    if (comm->coll.rank == root) {
        w.err = napps > 0 ? locus_open_port_impl(MPI_INFO_NULL, port) : MPI_ERR_SPAWN;
        if (!w.err) {
            char why[sizeof locus_mpi.detail];
            if (locus_boot_spawn(apps, napps, port, &w.pid, why, sizeof why) < 0) {
                snprintf(locus_mpi.detail, sizeof locus_mpi.detail, "%s", why);
                w.err = MPI_ERR_SPAWN;
            }
        }
        if (w.err && !port[0]) {
            /* No port: the meeting fails at once at the root, and says so. */
            strcpy(port, "-");
        }
    }
    yield_from_now();
    int err = locus_dyn_meet(1, port, root, comm, spawn_gave_up, &w, out);
    if (comm->coll.rank == root) {
        if (port[0] != '-')
            locus_close_port_impl(port);
        if (w.pid && err) {
            int status;
            kill(w.pid, SIGTERM);
            locus_boot_spawn_poll(w.pid, 1, &status);
        } else if (w.pid) {
            pid_t *j = realloc(child_jobs, sizeof *j * (size_t)(nchild_jobs + 1));
            if (j) {
                child_jobs = j;
                child_jobs[nchild_jobs++] = w.pid;
                locus_core()->watch = child_jobs_watch;
            }
        }
    }
    return err;
}

/* One code per child: at the root, and wherever the children's count is
 * known (every parent, once the spawn worked). */
static void spawn_errcodes(int err, locus_comm_t *n, int total, int errcodes[])
{
    if (errcodes == MPI_ERRCODES_IGNORE)
        return;
    if (n)
        total = n->coll.size;
    for (int i = 0; i < total; i++)
        errcodes[i] = err ? MPI_ERR_SPAWN : MPI_SUCCESS;
}

/* What both spawn calls check at the root, and the end they share. */
static int spawn_finish(int err, locus_comm_t *c, locus_comm_t *n, int total,
                        MPI_Comm *intercomm, int errcodes[], const char *fn)
{
    spawn_errcodes(err, n, c->coll.rank == 0 || n ? total : 0, errcodes);
    if (err)
        return locus_mpi_err(c, err, fn);
    *intercomm = locus_comm_handle(n);
    return MPI_SUCCESS;
}

/* The checks of the spawn calls: a live intracommunicator, a root in it,
 * somewhere to put the result. */
static int spawn_check(locus_comm_t *c, int root, MPI_Comm *intercomm)
{
    if (!locus_comm_valid(c) || c->local)
        return MPI_ERR_COMM;
    if (!intercomm)
        return MPI_ERR_ARG;
    if (root < 0 || root >= c->coll.size)
        return MPI_ERR_ROOT;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Comm_spawn)
int PMPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
                    MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    LOCUS_ENTRY_CS();
    static const char fn[] = "MPI_Comm_spawn";
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *c = locus_comm_of(comm), *n = NULL;
    int err = spawn_check(c, root, intercomm);
    if (err)
        return locus_mpi_err(locus_comm_valid(c) ? c : NULL, err, fn);
    *intercomm = MPI_COMM_NULL;
    char host[256], wdir[1024];
    locus_boot_app_t app = { command, argv, maxprocs, NULL, NULL };
    int isroot = c->coll.rank == root;
    if (isroot && (!command || !*command || maxprocs < 1)) {
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail,
                 !command || !*command ? "no command" : "maxprocs %d: at least 1", maxprocs);
        /* Every parent still takes part, and fails alike. */
        app.n = 0;
    }
    if (isroot)
        app_info(info, &app, host, wdir, (int)sizeof host);
    err = spawn(&app, isroot && app.n > 0 ? 1 : 0, root, c, &n);
    return spawn_finish(err, c, n, maxprocs, intercomm, array_of_errcodes, fn);
}

LOCUS_PMPI_WEAK(Comm_spawn_multiple)
int PMPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                             const int array_of_maxprocs[], const MPI_Info array_of_info[],
                             int root, MPI_Comm comm, MPI_Comm *intercomm,
                             int array_of_errcodes[])
{
    LOCUS_ENTRY_CS();
    static const char fn[] = "MPI_Comm_spawn_multiple";
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *c = locus_comm_of(comm), *n = NULL;
    int err = spawn_check(c, root, intercomm);
    if (err)
        return locus_mpi_err(locus_comm_valid(c) ? c : NULL, err, fn);
    *intercomm = MPI_COMM_NULL;
    int isroot = c->coll.rank == root, total = 0, napps = 0;
    locus_boot_app_t *apps = NULL;
    char host[256], wdir[1024];
    if (isroot && count > 0 && array_of_commands && array_of_maxprocs &&
        (apps = calloc((size_t)count, sizeof *apps)) != NULL) {
        for (int i = 0; i < count; i++) {
            if (!array_of_commands[i] || !*array_of_commands[i] || array_of_maxprocs[i] < 1)
                break;
            apps[i].cmd = array_of_commands[i];
            apps[i].argv = array_of_argv != MPI_ARGVS_NULL ? array_of_argv[i] : NULL;
            apps[i].n = array_of_maxprocs[i];
            total += apps[i].n;
            napps++;
        }
        /* The job's host and wdir are its first program's. */
        if (array_of_info)
            app_info(array_of_info[0], &apps[0], host, wdir, (int)sizeof host);
        if (napps < count)
            napps = 0;
    }
    if (isroot && napps == 0)
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail,
                 "a command is missing or asks for fewer than 1 process");
    err = spawn(apps, napps, root, c, &n);
    free(apps);
    return spawn_finish(err, c, n, total, intercomm, array_of_errcodes, fn);
}

int locus_comm_get_parent_impl(MPI_Comm *parent)
{
    /* MPI_COMM_NULL once the program freed or disconnected it. */
    int live = parent_comm && parent_comm->magic == LOCUS_COMM_MAGIC &&
               parent_comm->ctx_p2p == parent_ctx;
    *parent = live ? locus_comm_handle(parent_comm) : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

int locus_dynproc_init(void)
{
    const char *v = getenv("LOCUS_PARENT_PORT");
    if (!v || !*v)
        return MPI_SUCCESS;
    char port[MPI_MAX_PORT_NAME];
    snprintf(port, sizeof port, "%s", v);
    /* Not for the child jobs this one starts. */
    unsetenv("LOCUS_PARENT_PORT");
    const char *app = getenv("LOCUS_APPNUM");
    if (app && *app)
        locus_mpi.boot.appnum = atoi(app);
    yield_from_now();
    int err = locus_dyn_meet(0, port, 0, &locus_comm_world, NULL, NULL, &parent_comm);
    if (!err)
        parent_ctx = parent_comm->ctx_p2p;
    return err;
}

void locus_dynproc_finalize(void)
{
    locus_ports_close_all();
    /* The children may still be sending what they owe (their last
     * messages, their flush at MPI_Finalize): keep reading while waiting. */
    locus_core_t *c = locus_core();
    c->watch = NULL; /* the loop below reaps them */
    for (int i = 0; i < nchild_jobs; i++) {
        int status;
        while (!locus_boot_spawn_poll(child_jobs[i], 0, &status)) {
            if (locus_core_progress(c) < 0) {
                locus_boot_spawn_poll(child_jobs[i], 1, &status);
                break;
            }
            struct timespec nap = { 0, 200000 };
            nanosleep(&nap, NULL);
        }
    }
    free(child_jobs);
    child_jobs = NULL;
    nchild_jobs = 0;
}
