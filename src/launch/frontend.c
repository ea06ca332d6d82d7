/*
 * frontend.c — locusrun's front end: checks the request (tunables, nodes,
 * placement where it can see the node), lays ranks out over nodes, starts
 * one proxy per node and sends it its part of the job, then hands over to
 * the event loop (fe_loop.c) and turns what happened into one exit status.
 */
#include "frontend.h"
#include "locus_place.h"
#include "locus_tunables.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Records the job's first failure (its status decides the exit status)
 * and prints it at once; later ones are consequences, not causes. */
void fe_fail(fe_t *fe, int status, const char *fmt, ...)
{
    if (fe->failed)
        return;
    fe->failed = 1;
    fe->status = status;
    char msg[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "locusrun: %s\n", msg);
    fflush(stderr);
}

/* The user's own value for an OpenMP variable the plan also sets: the last
 * -x VAR=VAL, else this environment's value (also what -x VAR passes on).
 * An explicit choice of thread count or placement must not be silently
 * replaced by the --cpus-per-rank default. */
static const char *user_omp_value(const launch_opts_t *o, const char *name, size_t n)
{
    for (int i = o->nexports - 1; i >= 0; i--) {
        const char *x = o->exports[i];
        if (strncmp(x, name, n) == 0 && x[n] == '=')
            return x + n + 1;
    }
    for (char **e = environ; *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

/* uenv for every OMP_* variable the user set (environment or -x). */
static void queue_user_omp(fe_t *fe, ctl_outq_t *q)
{
    const launch_opts_t *o = fe->o;
    int nsrc = o->nexports;
    int count = 0;
    for (char **e = environ; *e; e++)
        count++;
    for (int i = 0; i < nsrc + count; i++) {
        const char *w = i < nsrc ? o->exports[i] : environ[i - nsrc];
        size_t n = strcspn(w, "=");
        if (strncmp(w, "OMP_", 4) != 0 || n > 64)
            continue;
        /* Send each name once: at its first mention in that order. */
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) {
            const char *p = j < nsrc ? o->exports[j] : environ[j - nsrc];
            seen = strncmp(p, w, n) == 0 && (p[n] == '=' || p[n] == '\0');
        }
        const char *val = seen ? NULL : user_omp_value(o, w, n);
        if (val == NULL)
            continue;
        char kv[4096];
        snprintf(kv, sizeof kv, "%.*s=%s", (int)n, w, val);
        ctl_queuel(q, "uenv", kv, (char *)NULL);
    }
}

/* Tunables set here go to every proxy (and so its ranks), as Open MPI
 * forwards OMPI_MCA_*; ids locusrun itself sets per job do not. */
static void queue_tunables(ctl_outq_t *q)
{
    int n;
    const locus_tunable_t *t = locus_tunables(&n);
    for (int i = 0; i < n; i++) {
        const char *v = getenv(t[i].name);
        if (v == NULL || !strcmp(t[i].name, "LOCUS_JOBID") || !strcmp(t[i].name, "LOCUS_NODE_ID"))
            continue;
        char kv[4096];
        snprintf(kv, sizeof kv, "%s=%s", t[i].name, v);
        ctl_queuel(q, "tun", kv, (char *)NULL);
    }
}

/* --mpi pmix: every node's name and every rank's node, which a PMIx
 * server publishes to its clients (PMIX_NODE_MAP, PMIX_HOSTNAME...). */
static void queue_pmix(fe_t *fe, ctl_outq_t *q)
{
    size_t cap = 16, n = 0;
    for (int i = 0; i < fe->nlinks; i++)
        cap += strlen(fe->links[i].host) + 1;
    cap += 12 * (size_t)fe->o->nranks;
    char *hosts = malloc(cap), *nodes = malloc(cap);
    if (hosts && nodes) {
        hosts[0] = nodes[0] = '\0';
        for (int i = 0; i < fe->nlinks; i++)
            n += (size_t)snprintf(hosts + n, cap - n, "%s%s", i ? "," : "", fe->links[i].host);
        n = 0;
        for (int r = 0; r < fe->o->nranks; r++)
            n += (size_t)snprintf(nodes + n, cap - n, "%s%d", r ? "," : "",
                                  fe->layout.node_of[r]);
        ctl_queuel(q, "pmix", hosts, nodes, (char *)NULL);
    }
    free(hosts);
    free(nodes);
}

/* Queues node l's part of the job (docs/locusrun.md lists the verbs). */
static void queue_job(fe_t *fe, fe_link_t *l)
{
    launch_opts_t *o = fe->o;
    ctl_outq_t *q = &l->out;
    char size[16], node[16], nnodes[16], grace[32], trace[16];
    long tr = 0;
    snprintf(size, sizeof size, "%d", o->nranks);
    snprintf(node, sizeof node, "%d", l->node);
    snprintf(nnodes, sizeof nnodes, "%d", fe->layout.nnodes);
    snprintf(grace, sizeof grace, "%s", locus_tunable_str("LOCUS_KILL_GRACE"));
    locus_tunable_long("LOCUS_PMI_TRACE", &tr, NULL, 0);
    snprintf(trace, sizeof trace, "%d", tr ? 1 : 0);
    ctl_queuel(q, "job", fe->jobid, size, node, nnodes, fe->mapping, grace, trace, l->host,
               (char *)NULL);
    queue_tunables(q);
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd) != NULL)
        ctl_queuel(q, "cwd", cwd, (char *)NULL);
    ctl_queuel(q, "exe", o->exe, (char *)NULL);
    for (int i = 0; i < o->argc; i++)
        ctl_queuel(q, "arg", o->argv[i], (char *)NULL);
    for (int i = 0; i < o->nexports; i++) {
        const char *x = o->exports[i];
        if (strchr(x, '=') != NULL) {
            ctl_queuel(q, "env", x, (char *)NULL);
        } else if (getenv(x) != NULL) {
            size_t len = strlen(x) + strlen(getenv(x)) + 2;
            char *kv = malloc(len);
            if (kv == NULL)
                continue;
            snprintf(kv, len, "%s=%s", x, getenv(x));
            ctl_queuel(q, "env", kv, (char *)NULL);
            free(kv);
        }
    }
    queue_user_omp(fe, q);
    for (int i = 0; i < o->place_argc; i++)
        ctl_queuel(q, "place", o->place_argv[i], (char *)NULL);
    if (o->report_bindings)
        ctl_queuel(q, "report", (char *)NULL);
    if (o->mpi_pmix)
        queue_pmix(fe, q);
}

/* Every node's setup. In a tree a proxy gets its children's setup (routed
 * through it) before its own `start`, so it passes them on before it
 * plans and starts its ranks. */
static void queue_setup(fe_t *fe)
{
    for (int i = 0; i < fe->nlinks; i++) {
        queue_job(fe, &fe->links[i]);
        tree_queue(fe, &fe->links[i]);
    }
    for (int r = 0; r < fe->o->nranks; r++) {
        char rs[16], ls[16];
        snprintf(rs, sizeof rs, "%d", r);
        snprintf(ls, sizeof ls, "%d", fe->layout.local_of[r]);
        ctl_queuel(&fe->links[fe->layout.node_of[r]].out, "rank", rs, ls, (char *)NULL);
    }
    tree_route_flush(fe);
    for (int i = 0; i < fe->nlinks; i++)
        ctl_queuel(&fe->links[i].out, "start", (char *)NULL);
    tree_route_flush(fe);
}

/*
 * Plans every node this machine can see: nodes it runs itself (so an
 * impossible placement is bad input, exit 2, before anything starts) and,
 * for --dry-run, every node on this machine's topology (or --topology).
 * Returns 0, or -1 with the reason printed.
 */
static int plan_nodes(fe_t *fe)
{
    launch_opts_t *o = fe->o;
    char e[512];
    int need = o->dry_run;
    for (int i = 0; i < fe->nlinks; i++)
        need |= fe->links[i].how == LAUNCHER_LOCAL;
    if (!need)
        return 0;
    locus_topo_t *topo = locus_topo_load(o->topology, e, sizeof e);
    if (topo == NULL) {
        fprintf(stderr, "locusrun: topology: %s\n", e);
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < fe->nlinks && rc == 0; i++) {
        fe_link_t *l = &fe->links[i];
        if (!o->dry_run && l->how != LAUNCHER_LOCAL)
            continue;
        locus_place_request_t req;
        locus_place_request_init(&req);
        req.nranks = fe->layout.node_nranks[i];
        for (int k = 0; k < o->place_argc && rc == 0;) {
            const char *val = k + 1 < o->place_argc ? o->place_argv[k + 1] : NULL;
            int used = locus_place_opt_parse(&req, o->place_argv[k], val, e, sizeof e);
            if (used <= 0) {
                fprintf(stderr, "locusrun: %s\n", e);
                rc = -1;
            }
            k += used > 0 ? used : 1;
        }
        locus_plan_t plan;
        if (rc == 0 && locus_plan_make(topo, &req, &plan, e, sizeof e) < 0) {
            if (fe->nlinks > 1)
                fprintf(stderr, "locusrun: %s: placement: %s\n", l->host, e);
            else
                fprintf(stderr, "locusrun: placement: %s\n", e);
            rc = -1;
        }
        if (rc != 0 || !o->dry_run) {
            if (rc == 0)
                locus_plan_free(&plan);
            continue;
        }
        for (int w = 0; w < plan.nwarnings; w++)
            fprintf(stderr, "locusrun: warning: %s\n", plan.warnings[w]);
        if (fe->nlinks > 1 || o->hosts.n > 0) {
            /* The plan's ranks are the node's; print the job's numbers. */
            for (int r = 0, k = 0; r < o->nranks; r++)
                if (fe->layout.node_of[r] == i)
                    plan.ranks[k++].rank = r;
            printf("# node %d: %s, %d rank%s (planned on %s)\n", i, l->host,
                   plan.nranks, plan.nranks == 1 ? "" : "s",
                   o->topology ? o->topology : "this machine's topology");
        }
        locus_plan_write_table(&plan, topo, stdout);
        locus_plan_free(&plan);
    }
    locus_topo_free(topo);
    return rc;
}

/* Validates the tunables this layer reads; -1 with the reason printed. */
static int tunables_check(fe_t *fe)
{
    static const char *const longs[] = {
        "LOCUS_PMI_TRACE", "LOCUS_PMI_KVS_KEYS_MAX", "LOCUS_PMI_KVS_BYTES_MAX",
        "LOCUS_PMI_BARRIERS_MAX", "LOCUS_ABI_SWAP", "LOCUS_LAUNCH_AUTOFORK",
        "LOCUS_SLOT_LEDGER_NODES",
    };
    char terr[256];
    long v;
    for (size_t i = 0; i < sizeof longs / sizeof longs[0]; i++) {
        if (locus_tunable_long(longs[i], &v, terr, sizeof terr) < 0) {
            fprintf(stderr, "locusrun: %s\n", terr);
            return -1;
        }
    }
    static const char *const secs[] = { "LOCUS_KILL_GRACE", "LOCUS_LAUNCH_TIMEOUT" };
    double *out[] = { &fe->grace, &fe->launch_timeout };
    for (size_t i = 0; i < 2; i++) {
        const char *s = locus_tunable_str(secs[i]);
        char *end;
        double d = strtod(s, &end);
        if (*end != '\0' || !(d >= 0) || d > 3600 || (i == 1 && d <= 0)) {
            fprintf(stderr, "locusrun: %s: '%s' is not a number of seconds\n", secs[i], s);
            return -1;
        }
        *out[i] = d;
    }
    return 0;
}

/* Lays the ranks out and sets up one link per node; -1 on bad input. */
static int links_make(fe_t *fe)
{
    launch_opts_t *o = fe->o;
    char err[1024];
    launch_hosts_t here = { 0 };
    const launch_hosts_t *hosts = &o->hosts;
    if (hosts->n == 0) {
        /* No hosts: this machine, as many slots as placement allows. */
        if (hosts_parse_list(&here, "localhost:100000", err, sizeof err) < 0)
            return -1;
        snprintf(here.hosts[0].name, sizeof here.hosts[0].name, "%s", fe->hostname);
        hosts = &here;
    }
    int rc = layout_make(&fe->layout, hosts, o->nranks, o->ppn, o->map_by_node,
                         o->oversubscribe || hosts == &here, err, sizeof err);
    if (rc == 0 && o->ppn > 0 && hosts == &here && o->nranks > o->ppn && !o->oversubscribe) {
        snprintf(err, sizeof err, "%d ranks but --ppn %d on 1 host allows only %d (add "
                 "--oversubscribe to place more)", o->nranks, o->ppn, o->ppn);
        rc = -1;
    }
    long autofork = 1;
    (void)locus_tunable_long("LOCUS_LAUNCH_AUTOFORK", &autofork, NULL, 0); /* checked before */
    if (rc == 0) {
        layout_mapping(&fe->layout, fe->mapping, sizeof fe->mapping);
        fe->nlinks = fe->layout.nnodes;
        fe->links = calloc((size_t)fe->nlinks, sizeof *fe->links);
        if (fe->links == NULL) {
            snprintf(err, sizeof err, "out of memory");
            rc = -1;
        }
    }
    for (int i = 0; rc == 0 && i < fe->nlinks; i++) {
        fe_link_t *l = &fe->links[i];
        const char *name = hosts->hosts[fe->layout.node_host[i]].name;
        l->node = i;
        l->fd = -1;
        l->host = strdup(name);
        /* A host that names this machine is a fork, whatever the
         * launcher (Hydra's autofork): no ssh, no exec prefix, on the
         * node the job starts from. LOCUS_LAUNCH_AUTOFORK=0 sends it
         * through the launcher too (a prefix that does more than reach
         * the host, e.g. enters a container). */
        l->how = o->launcher;
        if (hosts == &here || (autofork && o->launcher != LAUNCHER_LOCAL &&
                               launcher_host_is_local(name, fe->hostname)))
            l->how = LAUNCHER_LOCAL;
        if (l->host == NULL)
            rc = -1;
    }
    hosts_free(&here);
    if (rc < 0)
        fprintf(stderr, "locusrun: %s\n", err);
    return rc;
}

static int signals_setup(fe_t *fe)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2,
                                SIGALRM, SIGTSTP, SIGCONT };
    sigemptyset(&fe->sigs);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaddset(&fe->sigs, sigs[i]);
    sigprocmask(SIG_BLOCK, &fe->sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
    fe->sigfd = signalfd(-1, &fe->sigs, SFD_CLOEXEC | SFD_NONBLOCK);
    return fe->sigfd < 0 ? -1 : 0;
}

static void fe_free(fe_t *fe)
{
    names_server_stop(fe->names);
    fe->names = NULL;
    cb_close(fe);
    for (int i = 0; i < fe->nlinks; i++) {
        fe_link_t *l = &fe->links[i];
        if (l->fd >= 0)
            close(l->fd);
        ctl_reader_free(&l->rd);
        ctl_outq_free(&l->out);
        free(l->host);
    }
    free(fe->links);
    tree_free(fe);
    if (fe->sigfd >= 0)
        close(fe->sigfd);
    fence_free(&fe->fences);
    layout_free(&fe->layout);
    free(fe->line_start);
    free(fe->cleaners);
}

/* MPI_UNIVERSE_SIZE (LOCUS_UNIVERSE_SIZE): the slots of the host list,
 * this machine's CPUs without one, never fewer than the job's ranks. A
 * child job's locusrun counts its own over what it inherited. */
static void set_universe_size(const fe_t *fe)
{
    const launch_opts_t *o = fe->o;
    long n = o->hosts.n > 0 ? 0 : sysconf(_SC_NPROCESSORS_ONLN);
    for (int h = 0; h < o->hosts.n; h++)
        n += o->hosts.hosts[h].slots;
    n = n < o->nranks ? o->nranks : n > INT_MAX ? INT_MAX : n;
    char v[24];
    snprintf(v, sizeof v, "%ld", n);
    setenv("LOCUS_UNIVERSE_SIZE", v, 1);
}

/* The launcher the user chose, for the locusruns of the jobs the ranks
 * spawn (LOCUS_SPAWN_LAUNCHER, LOCUS_SPAWN_LAUNCHER_EXEC: src/boot/spawn.c
 * passes them on), so a child job reaches other nodes as its parents did. */
static void set_spawn_launcher(const fe_t *fe)
{
    const launch_opts_t *o = fe->o;
    if (!o->launcher_given && !o->launcher_exec)
        return;
    const char *name = o->launcher_slurm ? "slurm"
                       : o->launcher == LAUNCHER_EXEC ? "exec"
                       : o->launcher == LAUNCHER_LOCAL ? "local" : "ssh";
    setenv("LOCUS_SPAWN_LAUNCHER", name, 1);
    if (o->launcher_exec && !o->launcher_slurm)
        setenv("LOCUS_SPAWN_LAUNCHER_EXEC", o->launcher_exec, 1);
}

/* The job's id, unique on this machine: pid and clock, no dots. */
static void make_jobid(fe_t *fe)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(fe->jobid, sizeof fe->jobid, "%d-%06lx", (int)getpid(),
             (unsigned long)(ts.tv_nsec ^ ts.tv_sec) & 0xffffffUL);
}

static int fe_start(fe_t *fe)
{
    ssize_t n = readlink("/proc/self/exe", fe->self, sizeof fe->self - 1);
    if (n <= 0) {
        fprintf(stderr, "locusrun: cannot find this program's path: %s\n", strerror(errno));
        return 1;
    }
    fe->self[n] = '\0';
    fe->proxy_path = locus_tunable_str("LOCUS_PROXY_PATH");
    if (fe->proxy_path[0] == '\0')
        fe->proxy_path = fe->self;
    make_jobid(fe);
    long keys, bytes, barriers;
    locus_tunable_long("LOCUS_PMI_KVS_BYTES_MAX", &bytes, NULL, 0);
    locus_tunable_long("LOCUS_PMI_KVS_KEYS_MAX", &keys, NULL, 0);
    locus_tunable_long("LOCUS_PMI_BARRIERS_MAX", &barriers, NULL, 0);
    /* Each pair costs its bytes plus two separators in the accounting. */
    size_t kvs_max = ((size_t)bytes + 2 * (size_t)keys) * (size_t)fe->o->nranks;
    fence_init(&fe->fences, fe->ndirect, fe->o->nranks, fe->slot_of, kvs_max,
               (int)((barriers + 1) * (long)fe->o->nranks > 1000000
                         ? 1000000 : (barriers + 1) * (long)fe->o->nranks));
    fe->line_start = malloc(2 * (size_t)fe->o->nranks);
    if (fe->line_start == NULL) {
        fprintf(stderr, "locusrun: out of memory\n");
        return 1;
    }
    memset(fe->line_start, 1, 2 * (size_t)fe->o->nranks);
    if (signals_setup(fe) < 0) {
        fprintf(stderr, "locusrun: signalfd: %s\n", strerror(errno));
        return 1;
    }
    /* After the signals are blocked: its thread keeps them blocked too. */
    launch_parent_watch();
    fe->via = (launch_via_t){ .how = fe->o->launcher, .exec = fe->o->launcher_exec,
                              .proxy_path = fe->proxy_path, .self = fe->self,
                              .jobid = fe->jobid, .timeout = fe->launch_timeout,
                              .unblock = &fe->sigs };
    queue_setup(fe);
    /* Inside a Slurm allocation one srun starts every other node's proxy. */
    int by_srun = launcher_start_srun(fe);
    if (by_srun < 0) {
        fe_fail(fe, 1, "cannot start the proxies with srun: %s", strerror(errno));
        fe_kill_all(fe, 0);
    }
    for (int i = 0; i < fe->nlinks; i++) {
        fe_link_t *l = &fe->links[i];
        if (l->awaiting || (by_srun < 0 && l->how != LAUNCHER_LOCAL) || !link_direct(l))
            continue;
        if (launcher_start(fe, l) < 0) {
            fe_fail(fe, 1, "cannot start the proxy on %s: %s", l->host, strerror(errno));
            l->reaped = 1;  /* nothing to wait for */
            fe_kill_all(fe, 0);
            break;
        }
    }
    for (int i = 0; i < fe->nlinks; i++)
        if (fe->links[i].pid == 0 && link_direct(&fe->links[i]))
            fe->links[i].reaped = 1;  /* never started */
    return 0;
}

/* LOCUS_STARTUP_REPORT: what the proxies sent the front end at fences. */
static void fences_report(const fe_t *fe)
{
    if (!launch_startup_report_on())
        return;
    fprintf(stderr, "locusrun: front end took %ld key-value pairs (%zu bytes) from %d nodes at "
            "fences, %ld node-scoped; sent %zu bytes of pairs to the %d proxies it started "
            "(LOCUS_LAUNCH_FANOUT %d)\n", fe->fences.pairs_in, fe->fences.pair_bytes_in,
            fe->layout.nnodes, fe->fences.node_pairs_in, fe->kvs_bytes_out, fe->ndirect,
            fe->fanout);
    fflush(stderr);
}

int launch_frontend_run(launch_opts_t *o)
{
    fe_t fe_s, *fe = &fe_s;
    memset(fe, 0, sizeof *fe);
    fe->o = o;
    fe->sigfd = -1;
    fe->cb_listen = -1;
    if (gethostname(fe->hostname, sizeof fe->hostname) != 0)
        snprintf(fe->hostname, sizeof fe->hostname, "localhost");
    fe->hostname[sizeof fe->hostname - 1] = '\0';
    /* Proxies (local or remote) get it with the other tunables. */
    if (o->no_abi_swap)
        setenv("LOCUS_ABI_SWAP", "0", 1);
    if (o->startup_report)
        setenv("LOCUS_STARTUP_REPORT", "1", 0);
    /* The ranks measure their start-up from here (a wall-clock stamp: the
     * nodes of a cluster share a clock closely enough for milliseconds). */
    struct timespec t0;
    char stamp[64];
    clock_gettime(CLOCK_REALTIME, &t0);
    snprintf(stamp, sizeof stamp, "%ld.%09ld", (long)t0.tv_sec, t0.tv_nsec);
    setenv("LOCUS_LAUNCH_TIME", stamp, 1);
    if (tunables_check(fe) < 0 || links_make(fe) < 0 || tree_make(fe) < 0 ||
        plan_nodes(fe) < 0) {
        fe_free(fe);
        return 2;
    }
    if (o->dry_run) {
        fe_free(fe);
        return 0;
    }
    set_universe_size(fe);
    set_spawn_launcher(fe);
    names_setup(fe);
    int rc = fe_start(fe);
    if (rc == 0) {
        fe_loop(fe);
        rc = fe->status;
        fences_report(fe);
    }
    /* The proxies remove them; this catches a local proxy that died first. */
    launch_shm_cleanup(fe->jobid);
    names_release(fe);
    fe_free(fe);
    return rc;
}
