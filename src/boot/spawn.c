/*
 * spawn.c — MPI_Comm_spawn's process-manager side: a child job is a job of
 * its own, started by a locusrun of its own (the one installed beside this
 * library, or LOCUS_LOCUSRUN), so it gets locusrun's placement, proxies,
 * launchers, output forwarding and teardown whole. The spawning rank is
 * that locusrun's parent: it sees it end (the children failed to start)
 * with waitpid, and that locusrun ends the child job when the rank's
 * process ends (LOCUS_PARENT_PID, src/launch/parent_watch.c), so a child
 * job never outlives the job that made it.
 *
 * The children find the port their parents accept on in LOCUS_PARENT_PORT
 * and connect to it in MPI_Init.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boot_priv.h"
#include "locus_dial.h"

/* What the rank's own process manager left in its environment, which the
 * child job's locusrun and ranks must not take for their own. */
static const char *const parent_env[] = {
    "PMI_FD", "PMI_RANK", "PMI_SIZE", "PMI_PORT", "PMI_ID", "PMI_JOBID", "PMI_SPAWNED",
    "PMI_HOSTNAME", "MPI_LOCALNRANKS", "MPI_LOCALRANKID", "LOCUS_RANK", "LOCUS_SIZE",
    "LOCUS_LOCAL_RANK", "LOCUS_LOCAL_SIZE", "LOCUS_NODE_ID", "LOCUS_NNODES", "LOCUS_JOBID",
    "LOCUS_KVSNAME", "LOCUS_CPUS", "LOCUS_MEM_NODES", "LOCUS_BOUND", "LOCUS_NODE_NCPUS",
    "LOCUS_JOB_KEY", "LOCUS_FRONTEND", "LOCUS_LAUNCH_TOKEN", "LOCUS_LAUNCH_TIME",
    "LOCUS_PARENT_PORT", "LOCUS_APPNUM", "LOCUS_NIC", "LOCUS_NIC_PCI", "LOCUS_REPORT_BINDINGS",
    "LOCUS_SLOTS_KEY",
    "PMIX_RANK", "PMIX_NAMESPACE", "PMIX_SERVER_URI", "PMIX_SERVER_URI2", "PMIX_SERVER_URI21",
    "PMIX_SERVER_URI3", "PMIX_SERVER_URI4", "PMIX_SERVER_URI41", "PMIX_VERSION",
};

/* The locusrun beside the library this function is in (lib/.. /bin). */
static int locusrun_path(char *out, size_t len, char *err, size_t errlen)
{
    const char *env = getenv("LOCUS_LOCUSRUN");
    if (env && *env) {
        if (access(env, X_OK) != 0) {
            snprintf(err, errlen, "LOCUS_LOCUSRUN=%s: %s", env, strerror(errno));
            return -1;
        }
        snprintf(out, len, "%s", env);
        return 0;
    }
    Dl_info info;
    char lib[PATH_MAX];
    if (!dladdr((void *)locusrun_path, &info) || !info.dli_fname ||
        !realpath(info.dli_fname, lib)) {
        snprintf(err, errlen, "cannot find where the Locus library is (set LOCUS_LOCUSRUN)");
        return -1;
    }
    char *slash = strrchr(lib, '/');
    if (slash)
        *slash = '\0';
    if ((size_t)snprintf(out, len, "%s/../bin/locusrun", lib) >= len || access(out, X_OK)) {
        snprintf(err, errlen, "no locusrun beside %s (set LOCUS_LOCUSRUN)", lib);
        return -1;
    }
    return 0;
}

/* A growing string. */
typedef struct {
    char *s;
    size_t len, cap;
    int oom;
} strbuf_t;

static void sb_add(strbuf_t *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = 2 * (b->len + n + 1);
        char *ns = realloc(b->s, cap);
        if (!ns) {
            b->oom = 1;
            return;
        }
        b->s = ns;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void sb_str(strbuf_t *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

/* s single-quoted for /bin/sh, and a blank. */
static void sb_quoted(strbuf_t *b, const char *s)
{
    sb_add(b, "'", 1);
    for (const char *q; (q = strchr(s, '\'')) != NULL; s = q + 1) {
        sb_add(b, s, (size_t)(q - s));
        sb_str(b, "'\\''");
    }
    sb_str(b, s);
    sb_add(b, "' ", 2);
}

/* The script that runs the command of a rank's app (spawn_multiple: one
 * job of several programs): case "$PMI_RANK" in 0|1) LOCUS_APPNUM=0 exec
 * 'a' ...;; ... esac. */
static char *apps_script(const locus_boot_app_t *apps, int napps)
{
    strbuf_t b = { 0 };
    sb_str(&b, "case \"$PMI_RANK\" in ");
    for (int a = 0, first = 0; a < napps; first += apps[a].n, a++) {
        char num[48];
        for (int r = first; r < first + apps[a].n; r++) {
            snprintf(num, sizeof num, r + 1 < first + apps[a].n ? "%d|" : "%d) ", r);
            sb_str(&b, num);
        }
        snprintf(num, sizeof num, "LOCUS_APPNUM=%d exec ", a);
        sb_str(&b, num);
        sb_quoted(&b, apps[a].cmd);
        for (int i = 0; apps[a].argv && apps[a].argv[i]; i++)
            sb_quoted(&b, apps[a].argv[i]);
        sb_str(&b, ";; ");
    }
    sb_str(&b, "esac");
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

/* In the forked child: the parent rank's binding and process-manager
 * variables go, the port comes in, and locusrun runs. */
static void exec_locusrun(const char *run, char **argv, const char *port, const char *key,
                          const char *wdir)
{
    cpu_set_t all;
    CPU_ZERO(&all);
    long n = sysconf(_SC_NPROCESSORS_CONF);
    for (long i = 0; i < n && i < CPU_SETSIZE; i++)
        CPU_SET(i, &all);
    sched_setaffinity(0, sizeof all, &all);
    for (size_t i = 0; i < sizeof parent_env / sizeof parent_env[0]; i++)
        unsetenv(parent_env[i]);
    setenv("LOCUS_PARENT_PORT", port, 1);
    if (*key)
        setenv("LOCUS_SLOTS_KEY", key, 1);
    /* The rank's stdin belongs to the rank. */
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0) {
        dup2(null, 0);
        close(null);
    }
    if (wdir && *wdir && chdir(wdir) != 0) {
        fprintf(stderr, "locus: MPI_Comm_spawn: wdir %s: %s\n", wdir, strerror(errno));
        _exit(127);
    }
    execv(run, argv);
    fprintf(stderr, "locus: MPI_Comm_spawn: cannot execute %s: %s\n", run, strerror(errno));
    _exit(127);
}

/* The name the child job's slots go under in the launch's ledger
 * (src/launch/slots.c): its port's job, rank and tag, unique in the
 * launch; "" without a launch's service (no locusrun above). */
static void slots_key(const char *port, char *key, size_t len)
{
    const char *server = getenv("LOCUS_NAME_SERVER"), *p = strchr(port, ':');
    size_t n = 0;
    key[0] = '\0';
    if (!server || !*server || !p)
        return;
    for (int colons = 0; p[1 + n] && n + 1 < len; n++)
        if (p[1 + n] == ':' && ++colons == 3)
            break;
    snprintf(key, len, "%.*s", (int)n, p + 1);
}

/* Where the ledger puts n ranks ("HOST:K,..." into hosts): 1, or 0 when it
 * has no host list (the child job runs on this node) or cannot be asked. */
static int slots_place(const char *key, int n, char *hosts, size_t len)
{
    char args[96], err[256];
    snprintf(args, sizeof args, "%s %d", key, n);
    if (locus_service_call("place", args, hosts, len, LOCUS_LEDGER_CONNECT_MS, err,
                           sizeof err) != 0 ||
        strncmp(hosts, "ok ", 3) != 0 || strcmp(hosts + 3, "-") == 0)
        return 0;
    memmove(hosts, hosts + 3, strlen(hosts + 3) + 1);
    return 1;
}

/* The ledger keys of the child jobs this process started, by their
 * locusrun's pid: when one is reaped its entries go back to the ledger
 * here too (that locusrun releases them itself unless it was killed). */
#define SPAWN_KEYS_MAX 64
static struct {
    pid_t pid;
    char key[64];
} spawn_keys[SPAWN_KEYS_MAX];

static void key_remember(pid_t pid, const char *key)
{
    for (int i = 0; *key && i < SPAWN_KEYS_MAX; i++)
        if (spawn_keys[i].pid == 0) {
            spawn_keys[i].pid = pid;
            snprintf(spawn_keys[i].key, sizeof spawn_keys[i].key, "%s", key);
            return;
        }
}

static void key_give_back(const char *key)
{
    char reply[64], err[256];
    if (*key)
        (void)locus_service_call("release", key, reply, sizeof reply, LOCUS_LEDGER_CONNECT_MS,
                                 err, sizeof err);
}

static void key_release(pid_t pid)
{
    for (int i = 0; i < SPAWN_KEYS_MAX; i++)
        if (spawn_keys[i].pid == pid) {
            key_give_back(spawn_keys[i].key);
            spawn_keys[i].pid = 0;
        }
}

int locus_boot_spawn(const locus_boot_app_t *apps, int napps, const char *port, pid_t *pid,
                     char *err, size_t errlen)
{
    char run[PATH_MAX];
    if (napps < 1 || locusrun_path(run, sizeof run, err, errlen) < 0)
        return napps < 1 ? (snprintf(err, errlen, "no command"), -1) : -1;
    int total = 0, nargs = 0;
    for (int a = 0; a < napps; a++) {
        total += apps[a].n;
        for (int i = 0; apps[a].argv && apps[a].argv[i]; i++)
            nargs++;
    }
    char **argv = calloc((size_t)nargs + 20, sizeof *argv);
    char *script = napps > 1 ? apps_script(apps, napps) : NULL;
    char np[16];
    snprintf(np, sizeof np, "%d", total);
    if (!argv || (napps > 1 && !script)) {
        free(argv);
        free(script);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int k = 0;
    argv[k++] = run;
    argv[k++] = "-n";
    argv[k++] = np;
    /* Ranks beyond the free cores share them: a spawn adds processes to a
     * node the parents already fill. */
    argv[k++] = "--oversubscribe";
    /* The port, to ranks on every node (remote ones get only what -x and
     * the LOCUS_* tunables carry). */
    argv[k++] = "-x";
    argv[k++] = "LOCUS_PARENT_PORT";
    /* The parents' launcher, as locusrun was told it (set_spawn_launcher). */
    const char *launcher = getenv("LOCUS_SPAWN_LAUNCHER"),
               *prefix = getenv("LOCUS_SPAWN_LAUNCHER_EXEC");
    if (launcher && *launcher) {
        argv[k++] = "--launcher";
        argv[k++] = (char *)launcher;
    }
    if (prefix && *prefix) {
        argv[k++] = "--launcher-exec";
        argv[k++] = (char *)prefix;
    }
    char key[64], hosts[LOCUS_SERVICE_LINE_MAX + 8];
    slots_key(port, key, sizeof key);
    if (apps[0].host && *apps[0].host) {
        argv[k++] = "--host";
        argv[k++] = (char *)apps[0].host;
    } else if (*key && slots_place(key, total, hosts, sizeof hosts)) {
        argv[k++] = "--host";
        argv[k++] = hosts;
    }
    if (script) {
        argv[k++] = "/bin/sh";
        argv[k++] = "-c";
        argv[k++] = script;
    } else {
        argv[k++] = (char *)apps[0].cmd;
        for (int i = 0; apps[0].argv && apps[0].argv[i]; i++)
            argv[k++] = apps[0].argv[i];
    }
    argv[k] = NULL;
    /* The child job ends with this process (locusrun watches it). */
    char parent[24];
    snprintf(parent, sizeof parent, "%d", (int)getpid());
    pid_t p = fork();
    if (p == 0) {
        setenv("LOCUS_PARENT_PID", parent, 1);
        exec_locusrun(run, argv, port, key, apps[0].wdir);
    }
    int e = errno;
    free(argv);
    free(script);
    if (p < 0) {
        key_give_back(key);
        snprintf(err, errlen, "cannot start locusrun: %s", strerror(e));
        return -1;
    }
    *pid = p;
    key_remember(p, key);
    return 0;
}

int locus_boot_spawn_poll(pid_t pid, int wait, int *status)
{
    int st = 0;
    pid_t r;
    do
        r = waitpid(pid, &st, wait ? 0 : WNOHANG);
    while (r < 0 && errno == EINTR);
    if (r == 0)
        return 0;
    *status = r < 0 ? 255 /* reaped by someone else (a SIGCHLD handler of the program) */
              : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    key_release(pid);
    return 1;
}
