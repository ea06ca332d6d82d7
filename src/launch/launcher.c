/*
 * launcher.c — starting one node's proxy and, when a proxy is lost,
 * cleaning its node. Three launchers, as Hydra and Open MPI have them:
 *
 *   local   fork + exec of this binary (`locusrun --proxy 0 1`)
 *   ssh     LOCUS_SSH|--launcher-exec -o BatchMode=yes ... HOST 'CMD'
 *   exec    PREFIX... HOST CMD... (Open MPI's rsh agent form; with
 *           `ip netns exec` the proxy runs in the namespace named HOST)
 *
 * The proxy speaks the control protocol on its stdin/stdout, which are one
 * end of a socketpair here, whatever carries them (ssh forwards both). Each
 * launcher child runs in its own process group, so a Ctrl-C or Ctrl-Z at
 * the terminal reaches only the front end, which forwards it.
 */
#include "frontend.h"
#include "locus_tunables.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

/* Seconds a cleanup on another node may take before it is killed. */
#define CLEANUP_WAIT 2.0

int launcher_host_is_local(const char *host, const char *hostname)
{
    if (!strcmp(host, "localhost") || !strcmp(host, "127.0.0.1") || !strcmp(host, hostname))
        return 1;
    /* "vm" names this machine when its name is "vm.example.org", and back. */
    size_t n = strcspn(hostname, "."), m = strcspn(host, ".");
    return n == m && strncmp(host, hostname, n) == 0 &&
           (hostname[n] == '\0' || host[m] == '\0');
}

const char *launcher_name(const fe_link_t *l)
{
    switch (l->how) {
    case LAUNCHER_SSH: return "ssh";
    case LAUNCHER_EXEC: return "the exec launcher";
    default: return "the local launcher";
    }
}

/* Appends the whitespace-separated words of cmd to argv. */
static int push_words(char ***argv, int *argc, const char *cmd)
{
    for (const char *p = cmd; *p;) {
        p += strspn(p, " \t");
        size_t len = strcspn(p, " \t");
        if (len == 0)
            break;
        char **na = realloc(*argv, (size_t)(*argc + 2) * sizeof *na);
        if (na == NULL)
            return -1;
        *argv = na;
        if ((na[*argc] = strndup(p, len)) == NULL)
            return -1;
        na[++*argc] = NULL;
        p += len;
    }
    return 0;
}

static int push_word(char ***argv, int *argc, const char *w)
{
    char **na = realloc(*argv, (size_t)(*argc + 2) * sizeof *na);
    if (na == NULL)
        return -1;
    *argv = na;
    if ((na[*argc] = strdup(w)) == NULL)
        return -1;
    na[++*argc] = NULL;
    return 0;
}

static void free_words(char **argv, int argc)
{
    for (int i = 0; i < argc; i++)
        free(argv[i]);
    free(argv);
}

/* s quoted for a POSIX shell (ssh runs the remote command through one). */
static char *sh_quote(const char *s)
{
    size_t n = 3;
    for (const char *c = s; *c; c++)
        n += *c == '\'' ? 4 : 1;
    char *q = malloc(n), *o = q;
    if (q == NULL)
        return NULL;
    *o++ = '\'';
    for (const char *c = s; *c; c++) {
        if (*c == '\'') {
            memcpy(o, "'\\''", 4);
            o += 4;
        } else {
            *o++ = *c;
        }
    }
    *o++ = '\'';
    *o = '\0';
    return q;
}

/* words as one shell command line, each word quoted; NULL when out of memory. */
static char *sh_command(const char *const *words)
{
    size_t len = 1;
    for (int i = 0; words[i]; i++)
        len += 4 * strlen(words[i]) + 3;  /* worst case: every byte a quote */
    char *cmd = malloc(len);
    if (cmd == NULL)
        return NULL;
    cmd[0] = '\0';
    for (int i = 0; words[i]; i++) {
        char *q = sh_quote(words[i]);
        if (q == NULL) {
            free(cmd);
            return NULL;
        }
        if (i > 0)
            strcat(cmd, " ");
        strcat(cmd, q);
        free(q);
    }
    return cmd;
}

/*
 * The argv that runs `words` (a remote command) on host: the launcher
 * prefix, the host, then the command (for ssh one shell-quoted string).
 */
static char **remote_argv(const launch_via_t *v, const char *host, const char *const *words,
                          int *argcp)
{
    char **argv = NULL;
    int argc = 0, rc = 0;
    if (v->how == LAUNCHER_SSH) {
        const char *ssh = v->exec ? v->exec : locus_tunable_str("LOCUS_SSH");
        char ct[64];
        snprintf(ct, sizeof ct, "ConnectTimeout=%d", (int)(v->timeout + 0.999));
        rc |= push_words(&argv, &argc, ssh);
        const char *opts[] = { "-o", "BatchMode=yes", "-o", ct, "-x", "-T" };
        for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
            rc |= push_word(&argv, &argc, opts[i]);
        rc |= push_word(&argv, &argc, host);
        char *cmd = sh_command(words);
        rc |= cmd ? push_word(&argv, &argc, cmd) : -1;
        free(cmd);
    } else {
        rc |= push_words(&argv, &argc, v->exec ? v->exec : "");
        rc |= push_word(&argv, &argc, host);
        for (int i = 0; words[i]; i++)
            rc |= push_word(&argv, &argc, words[i]);
    }
    if (rc != 0 || argc == 0) {
        free_words(argv, argc);
        return NULL;
    }
    *argcp = argc;
    return argv;
}

/* Forks a launcher child: own process group, gone with the front end,
 * stdin/stdout on fd io (or /dev/null when io < 0). */
static pid_t spawn(const sigset_t *unblock, char **argv, int io, const char *jobid_env)
{
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
        _exit(1);
    int fd = io >= 0 ? io : open("/dev/null", O_RDWR);
    if (fd < 0 || dup2(fd, 0) < 0 || dup2(fd, 1) < 0)
        _exit(1);
    /* Only as 0 and 1: left open under its own number, the control socket
     * reached the proxy's ranks, which could then speak for the proxy. */
    if (fd > 2)
        close(fd);
    if (unblock)
        sigprocmask(SIG_UNBLOCK, unblock, NULL);
    signal(SIGPIPE, SIG_DFL);
    /* Tags the local proxy as part of the job, like its ranks, so every
     * process of a job can be found by its environment. */
    if (jobid_env)
        setenv("LOCUS_JOBID", jobid_env, 1);
    execvp(argv[0], argv);
    fprintf(stderr, "locusrun: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

int launch_proxy_start(const launch_via_t *v, const char *host, pid_t *pidp, int *fdp)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return -1;
    char **argv;
    int argc = 0;
    const char *jobid_env = NULL;
    if (v->how == LAUNCHER_LOCAL) {
        const char *words[] = { v->self, "--proxy", "0", "1", NULL };
        argv = NULL;
        for (int i = 0; words[i]; i++)
            if (push_word(&argv, &argc, words[i]) < 0)
                break;
        jobid_env = v->jobid;
    } else {
        char env[96];
        snprintf(env, sizeof env, "LOCUS_JOBID=%s", v->jobid);
        const char *words[] = { "env", env, v->proxy_path, "--proxy", "0", "1", NULL };
        argv = remote_argv(v, host, words, &argc);
    }
    if (argv == NULL || argc < 4) {
        free_words(argv, argc);
        close(sv[0]);
        close(sv[1]);
        errno = ENOMEM;
        return -1;
    }
    /* The child's end must survive its exec: clear close-on-exec there. */
    int child_fd = dup(sv[1]);
    close(sv[1]);
    pid_t pid = child_fd >= 0 ? spawn(v->unblock, argv, child_fd, jobid_env) : -1;
    int saved = errno;
    free_words(argv, argc);
    if (child_fd >= 0)
        close(child_fd);
    if (pid < 0) {
        close(sv[0]);
        errno = saved;
        return -1;
    }
    *pidp = pid;
    *fdp = sv[0];
    fcntl(sv[0], F_SETFL, O_NONBLOCK);
    return 0;
}

int launcher_start(fe_t *fe, fe_link_t *l)
{
    launch_via_t v = fe->via;
    v.how = l->how;
    if (launch_proxy_start(&v, l->host, &l->pid, &l->fd) < 0)
        return -1;
    ctl_reader_init(&l->rd, l->fd);
    l->started = launch_now();
    return 0;
}

int launcher_start_srun(fe_t *fe)
{
    if (!fe->o->launcher_slurm || !strcmp(locus_tunable_str("LOCUS_SLURM_ONE_SRUN"), "0"))
        return 0;
    int n = 0;
    size_t list = 1;
    for (int i = 0; i < fe->nlinks; i++)
        if (fe->links[i].how != LAUNCHER_LOCAL) {
            n++;
            list += strlen(fe->links[i].host) + 1;
        }
    if (n == 0)
        return 0;
    char addrs[1024], nodes_opt[64], tasks_opt[64], env[96];
    char *nodelist = malloc(list + 16);
    if (!nodelist || cb_listen(fe, addrs, sizeof addrs) < 0) {
        free(nodelist);
        return -1;
    }
    strcpy(nodelist, "--nodelist=");
    for (int i = 0, k = 0; i < fe->nlinks; i++)
        if (fe->links[i].how != LAUNCHER_LOCAL) {
            strcat(nodelist, k++ ? "," : "");
            strcat(nodelist, fe->links[i].host);
        }
    snprintf(nodes_opt, sizeof nodes_opt, "--nodes=%d", n);
    snprintf(tasks_opt, sizeof tasks_opt, "--ntasks=%d", n);
    snprintf(env, sizeof env, "LOCUS_JOBID=%s", fe->jobid);
    /* One task per node; its stdio is not a control stream, so the
     * proxies dial back (connect_back.c). */
    const char *words[] = { "srun", nodes_opt, tasks_opt, "--ntasks-per-node=1", "--overlap",
                            "--mpi=none", "--unbuffered", "--kill-on-bad-exit=0", nodelist,
                            "env", env, fe->proxy_path, "--proxy-connect", NULL };
    char **argv = NULL;
    int argc = 0, rc = 0;
    for (int i = 0; words[i]; i++)
        rc |= push_word(&argv, &argc, words[i]);
    free(nodelist);
    /* The child's environment: where to dial and the token to show. */
    setenv("LOCUS_FRONTEND", addrs, 1);
    setenv("LOCUS_LAUNCH_TOKEN", fe->cb_token, 1);
    pid_t pid = rc == 0 ? spawn(&fe->sigs, argv, -1, NULL) : -1;
    int saved = errno;
    unsetenv("LOCUS_FRONTEND");
    unsetenv("LOCUS_LAUNCH_TOKEN");
    free_words(argv, argc);
    if (pid < 0) {
        cb_close(fe);
        errno = rc ? ENOMEM : saved;
        return -1;
    }
    double now = launch_now();
    for (int i = 0; i < fe->nlinks; i++) {
        fe_link_t *l = &fe->links[i];
        if (l->how == LAUNCHER_LOCAL)
            continue;
        l->pid = pid;
        l->awaiting = 1;
        l->shared = n > 1;
        l->started = now;
    }
    return n;
}

pid_t launch_cleanup_start(const launch_via_t *v, const char *host)
{
    const char *words[] = { v->proxy_path, "--cleanup", v->jobid, NULL };
    int argc = 0;
    char **argv = remote_argv(v, host, words, &argc);
    if (argv == NULL)
        return -1;
    pid_t pid = spawn(v->unblock, argv, -1, NULL);
    free_words(argv, argc);
    return pid;
}

/* Runs `locusrun --cleanup JOBID` on l's node in the background. */
static void cleanup_remote(fe_t *fe, fe_link_t *l)
{
    pid_t *nc = realloc(fe->cleaners, (size_t)(fe->ncleaners + 1) * sizeof *nc);
    if (nc == NULL)
        return;
    fe->cleaners = nc;
    launch_via_t v = fe->via;
    v.how = l->how;
    pid_t pid = launch_cleanup_start(&v, l->host);
    if (pid > 0) {
        fe->cleaners[fe->ncleaners++] = pid;
        l->cleaner = pid;
        fe->cleaners_by = launch_now() + CLEANUP_WAIT;
    }
}

void launcher_kill(fe_t *fe, fe_link_t *l)
{
    if (l->escalated)
        return;
    l->escalated = 1;
    if (!l->reaped && l->pid > 0) {
        kill(-l->pid, SIGKILL);
        kill(l->pid, SIGKILL);
    }
    if (l->how == LAUNCHER_LOCAL) {
        /* Its ranks die with it (PDEATHSIG); what they forked and their
         * shared memory are found by the job id. */
        if (l->pgid > 0)
            kill(-l->pgid, SIGKILL);
        launch_job_cleanup(fe->jobid);
    } else if (l->hello) {
        cleanup_remote(fe, l);
    }
    /* In a tree its launcher child is its parent proxy's to kill. */
    if (!link_direct(l) && l->parent >= 0 && !l->gone) {
        char node[16];
        snprintf(node, sizeof node, "%d", l->node);
        ctl_queuel(&fe->links[l->parent].out, "drop", node, (char *)NULL);
    }
}
