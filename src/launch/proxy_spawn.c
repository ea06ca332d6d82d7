/*
 * proxy_spawn.c — starting one rank: its PMI socketpair and stdio pipes,
 * its process group, binding and environment, then exec.
 */
#include "proxy.h"
#include "locus_place.h"
#include "locus_tunables.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

/* Variables that would make an MPI library pick another process manager
 * (MPICH refuses PMI-1 when a PMIx one is set; a PMI_PORT from an outer
 * launcher would win over our PMI_FD in some clients). */
static const char *const scrub[] = {
    "PMI_PORT", "PMI_ID", "PMI_SPAWNED", "PMI_JOBID", "PMIX_VERSION",
    "PMIX_RANK", "PMIX_NAMESPACE", "PMIX_SERVER_URI2", "PMIX_SERVER_URI3",
    "PMIX_SERVER_URI4", "PMIX_SERVER_URI41", "PMIX_SERVER_URI21", "PMIX_SERVER_URI",
    "PRTE_LAUNCHED", "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_RANK", "PMI_FD", "PMI_RANK", "PMI_SIZE",
};

static void put_env(const char *assignment)
{
    const char *eq = strchr(assignment, '=');
    if (eq == NULL) {
        unsetenv(assignment);
        return;
    }
    char name[256];
    size_t n = (size_t)(eq - assignment);
    if (n == 0 || n >= sizeof name)
        return;
    memcpy(name, assignment, n);
    name[n] = '\0';
    setenv(name, eq + 1, 1);
}

static void set_int(const char *name, long v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", v);
    setenv(name, buf, 1);
}

/*
 * A program linked against another MPI's standard-ABI library
 * (libmpi_abi.so.1, e.g. built with MPICH's mpicc_abi) loads Locus's
 * instead when the directory holding Locus's comes first on the loader's
 * path: the lib directory beside this locusrun (bin/../lib), if it has one.
 * Programs linked with Locus's own wrappers find it through their rpath
 * anyway. LOCUS_ABI_SWAP=0 (--no-abi-swap) leaves the path alone.
 */
static void abi_swap_path(void)
{
    long on = 1;
    if (locus_tunable_long("LOCUS_ABI_SWAP", &on, NULL, 0) < 0 || !on)
        return;
    char self[4096], lib[4200];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash == NULL)
        return;
    *slash = '\0';
    snprintf(lib, sizeof lib, "%s/../lib/libmpi_abi.so.1", self);
    if (access(lib, R_OK) != 0)
        return;
    snprintf(lib, sizeof lib, "%s/../lib", self);
    char *libdir = realpath(lib, NULL);
    if (libdir == NULL)
        return;
    const char *old = getenv("LD_LIBRARY_PATH");
    size_t len = strlen(libdir) + (old ? strlen(old) : 0) + 2;
    char *path = malloc(len);
    if (path != NULL) {
        snprintf(path, len, "%s%s%s", libdir, old && *old ? ":" : "", old && *old ? old : "");
        setenv("LD_LIBRARY_PATH", path, 1);
        free(path);
    }
    free(libdir);
}

static void set_list(const char *name, const int *v, int n)
{
    char buf[8192];
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && k + 16 < sizeof buf; i++)
        k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%d", i ? "," : "", v[i]);
    setenv(name, buf, 1);
}

int proxy_node_ncpus(const proxy_t *px)
{
    int unbound = 0, max = -1;
    for (int i = 0; i < px->nlocal; i++) {
        const prank_t *p = &px->ranks[i];
        unbound |= !p->bound || p->ncpus == 0;
        for (int c = 0; c < p->ncpus; c++)
            max = p->cpus[c] > max ? p->cpus[c] : max;
    }
    if (unbound) {
        /* An unbound rank may run anywhere this proxy may. */
        for (int n = 1024; n <= (1 << 20); n *= 2) {
            cpu_set_t *set = CPU_ALLOC(n);
            if (set == NULL)
                return 0;
            size_t sz = CPU_ALLOC_SIZE(n);
            if (sched_getaffinity(0, sz, set) == 0) {
                int count = CPU_COUNT_S(sz, set);
                CPU_FREE(set);
                return count;
            }
            CPU_FREE(set);
            if (errno != EINVAL)
                return 0;
        }
        return 0;
    }
    if (max < 0)
        return 0;
    unsigned char *seen = calloc((size_t)max + 1, 1);
    if (seen == NULL)
        return 0;
    int count = 0;
    for (int i = 0; i < px->nlocal; i++)
        for (int c = 0; c < px->ranks[i].ncpus; c++) {
            int cpu = px->ranks[i].cpus[c];
            if (cpu >= 0 && !seen[cpu]) {
                seen[cpu] = 1;
                count++;
            }
        }
    free(seen);
    return count;
}

/* In the child: never returns. */
static void child_exec(proxy_t *px, prank_t *p, pid_t parent, int pmi_child,
                       int in_fd, int out_w, int err_w, char **pmix_env)
{
    setpgid(0, px->pgid > 0 ? px->pgid : 0);
    /* A kill -9 of the proxy must take the rank down with it. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(1);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    struct rlimit nofile;
    if (px->nofile_soft > 0 && getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
        nofile.rlim_cur = px->nofile_soft;
        setrlimit(RLIMIT_NOFILE, &nofile);
    }

    if (dup2(in_fd, 0) < 0 || dup2(out_w, 1) < 0 || dup2(err_w, 2) < 0)
        _exit(127);
    int pmi_fd = dup(pmi_child);  /* the dup is not close-on-exec */
    if (pmi_fd < 0)
        _exit(127);
    /* A rank gets stdio and its PMI socket, nothing else: no descriptor of
     * the proxy's (its control stream, other ranks' pipes) nor what the
     * user's shell left open, as Open MPI's launcher does. */
    if (pmi_fd > 3)
        close_range(3, (unsigned)pmi_fd - 1, 0);
    close_range((unsigned)pmi_fd + 1, ~0U, 0);

    char err[512];
    if (px->topo != NULL) {
        locus_rank_plan_t rp;
        memset(&rp, 0, sizeof rp);
        rp.rank = p->rank;
        rp.ncpus = p->ncpus;
        rp.cpus = p->cpus;
        rp.nnuma = p->nnuma;
        rp.numa = p->numa;
        rp.bound = p->bound;
        if (locus_bind_apply(px->topo, &rp, err, sizeof err) < 0) {
            fprintf(stderr, "locusrun: rank %d: cannot bind: %s\n", p->rank, err);
            _exit(126);
        }
    }

    for (size_t i = 0; i < sizeof scrub / sizeof scrub[0]; i++)
        unsetenv(scrub[i]);
    for (int i = 0; i < px->nenv; i++)
        put_env(px->env[i]);
    for (int i = 0; i < p->nenv; i++)
        put_env(p->env[i]);
    for (int i = 0; pmix_env && pmix_env[i]; i++)
        put_env(pmix_env[i]);
    if (pmix_env)
        proxy_pmix_child_env(px);
    set_int("PMI_FD", pmi_fd);
    set_int("PMI_RANK", p->rank);
    set_int("PMI_SIZE", px->size);
    set_int("MPI_LOCALNRANKS", px->nlocal);
    set_int("MPI_LOCALRANKID", p->local);
    set_int("LOCUS_RANK", p->rank);
    set_int("LOCUS_SIZE", px->size);
    set_int("LOCUS_LOCAL_RANK", p->local);
    set_int("LOCUS_LOCAL_SIZE", px->nlocal);
    set_int("LOCUS_NODE_ID", px->nodeid);
    set_int("LOCUS_NNODES", px->nnodes);
    setenv("LOCUS_JOBID", px->jobid, 1);
    setenv("LOCUS_KVSNAME", px->kvsname, 1);
    set_list("LOCUS_CPUS", p->cpus, p->ncpus);
    set_list("LOCUS_MEM_NODES", p->numa, p->nnuma);
    setenv("LOCUS_BOUND", p->bound ? "1" : "0", 1);
    if (px->node_ncpus > 0)
        set_int("LOCUS_NODE_NCPUS", px->node_ncpus);
    else
        unsetenv("LOCUS_NODE_NCPUS");  /* not one from an outer job */
    char host[256];
    if (gethostname(host, sizeof host) == 0) {
        host[sizeof host - 1] = '\0';
        setenv("PMI_HOSTNAME", host, 1);
    }

    abi_swap_path();
    execv(px->exe, px->argv);
    fprintf(stderr, "locusrun: rank %d: cannot execute %s: %s\n", p->rank, px->exe,
            strerror(errno));
    _exit(127);
}

int proxy_rank_spawn(proxy_t *px, prank_t *p)
{
    int sv[2], out[2], errp[2], in[2] = { -1, -1 };
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return -1;
    if (pipe2(out, O_CLOEXEC) < 0) {
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    if (pipe2(errp, O_CLOEXEC) < 0) {
        close(sv[0]); close(sv[1]); close(out[0]); close(out[1]);
        return -1;
    }
    /* stdin goes to global rank 0 only; everyone else reads /dev/null. */
    int want_stdin = p->rank == 0;
    if (want_stdin ? pipe2(in, O_CLOEXEC) : ((in[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)) {
        close(sv[0]); close(sv[1]); close(out[0]); close(out[1]);
        close(errp[0]); close(errp[1]);
        return -1;
    }
    /* The PMIx server's variables for this rank (--mpi pmix), made here:
     * libpmix must not run in the child. */
    char **pmix_env = proxy_pmix_fork_env(px, p);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0)
        child_exec(px, p, parent, sv[1], in[0], out[1], errp[1], pmix_env);
    int saved = errno;
    proxy_pmix_env_free(pmix_env);
    close(sv[1]);
    close(out[1]);
    close(errp[1]);
    close(in[0]);
    if (pid < 0) {
        close(sv[0]); close(out[0]); close(errp[0]);
        if (in[1] >= 0)
            close(in[1]);
        errno = saved;
        return -1;
    }
    /* Both sides set the group, so it holds whichever runs first. */
    if (px->pgid <= 0)
        px->pgid = pid;
    setpgid(pid, px->pgid);
    p->pid = pid;
    p->running = 1;
    px->nrunning++;
    p->pmi_fd = sv[0];
    fcntl(sv[0], F_SETFL, O_NONBLOCK);
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(errp[0], F_SETFL, O_NONBLOCK);
    p->out_fd[0] = out[0];
    p->out_fd[1] = errp[0];
    p->pmi_rd = malloc(sizeof *p->pmi_rd);
    if (p->pmi_rd)
        pmi_reader_init(p->pmi_rd, sv[0]);
    if (want_stdin) {
        fcntl(in[1], F_SETFL, O_NONBLOCK);
        px->stdin_fd = in[1];
    }
    return 0;
}

/* Reads what a rank wrote on stream s (0 stdout, 1 stderr) and forwards
 * whole lines; a partial line goes out only when the buffer is full or at
 * end of stream, so lines of different ranks never interleave. */
void proxy_rank_read_output(proxy_t *px, prank_t *p, int s)
{
    if (p->obuf[s] == NULL && (p->obuf[s] = malloc(CTL_IO_CHUNK)) == NULL)
        return;
    ssize_t n;
    do {
        n = read(p->out_fd[s], p->obuf[s] + p->olen[s], CTL_IO_CHUNK - p->olen[s]);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return;
    char rank[16], stream[16];
    snprintf(rank, sizeof rank, "%d", p->rank);
    snprintf(stream, sizeof stream, "%d", s + 1);
    const char *words[3] = { rank, stream, p->obuf[s] };
    size_t lens[3] = { strlen(rank), strlen(stream), 0 };
    if (n > 0) {
        p->olen[s] += (size_t)n;
        size_t upto = p->olen[s];
        while (upto > 0 && p->obuf[s][upto - 1] != '\n')
            upto--;
        if (upto == 0 && p->olen[s] < CTL_IO_CHUNK)
            return;
        if (upto == 0)
            upto = p->olen[s];  /* one line longer than the buffer: split it */
        lens[2] = upto;
        ctl_send(px->ctl_out, "io", 3, words, lens);
        memmove(p->obuf[s], p->obuf[s] + upto, p->olen[s] - upto);
        p->olen[s] -= upto;
        return;
    }
    /* End of stream (or an error, treated alike): flush and close. */
    if (p->olen[s] > 0) {
        lens[2] = p->olen[s];
        ctl_send(px->ctl_out, "io", 3, words, lens);
        p->olen[s] = 0;
    }
    close(p->out_fd[s]);
    p->out_fd[s] = -1;
}
