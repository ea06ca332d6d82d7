/*
 * frontend.c — locusrun's front end: plan, start the proxy, then relay
 * stdio, stdin, signals and fences until the proxy is done, and turn what
 * happened into one exit status.
 */
#include "launch.h"
#include "locus_place.h"
#include "locus_tunables.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Bytes of stdin sent to the proxy but not yet written to rank 0. */
#define STDIN_INFLIGHT_MAX 65536

typedef struct {
    launch_opts_t *o;
    locus_topo_t *topo;
    locus_plan_t plan;
    char jobid[64];
    pid_t proxy;
    int proxy_reaped, proxy_done;
    int ctl;
    ctl_reader_t rd;
    int sigfd;
    /* job state */
    pid_t pgid;
    pid_t *pids;
    unsigned char *line_start;   /* per rank and stream: next byte starts a line */
    int status;                  /* first failure's exit status, 0 none */
    int failed;
    int interrupts;
    size_t stdin_inflight;
    int stdin_done;
    int stdout_broken;
} frontend_t;

static void fe_fail(frontend_t *fe, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Records the job's first failure (its status decides the exit status)
 * and prints it at once; later ones are consequences, not causes. */
static void fe_fail(frontend_t *fe, int status, const char *fmt, ...)
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

static int write_out(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            struct pollfd p = { .fd = fd, .events = POLLOUT };
            poll(&p, 1, 100);
            continue;
        }
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Prints a forwarded chunk in one write, "[rank] " before each line when
 * tagging; the proxy only sends whole lines unless one is huge. */
static void fe_output(frontend_t *fe, int rank, int stream, const char *data, size_t len)
{
    int fd = stream == 2 ? 2 : 1;
    if (rank < 0 || rank >= fe->o->nranks || (fd == 1 && fe->stdout_broken))
        return;
    unsigned char *start = &fe->line_start[2 * rank + (stream == 2)];
    if (!fe->o->tag_output) {
        if (write_out(fd, data, len) < 0 && fd == 1)
            fe->stdout_broken = 1;
        return;
    }
    char tag[24];
    int tlen = snprintf(tag, sizeof tag, "[%d] ", rank);
    size_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += data[i] == '\n';
    char *buf = malloc(len + lines * (size_t)tlen);
    if (buf == NULL)
        return;
    size_t k = 0;
    for (size_t i = 0; i < len; i++) {
        if (*start) {
            memcpy(buf + k, tag, (size_t)tlen);
            k += (size_t)tlen;
        }
        buf[k++] = data[i];
        *start = data[i] == '\n';
    }
    if (write_out(fd, buf, k) < 0 && fd == 1)
        fe->stdout_broken = 1;
    free(buf);
}

static void fe_msg(frontend_t *fe, const ctl_msg_t *m)
{
    const char *v = m->words[0];
    int ok = 0;
    if (!strcmp(v, "io") && m->nwords == 4) {
        int r = (int)ctl_word_long(m, 1, &ok);
        int s = (int)ctl_word_long(m, 2, &ok);
        fe_output(fe, r, s, m->words[3], m->lens[3]);
    } else if (!strcmp(v, "pid") && m->nwords == 3) {
        long r = ctl_word_long(m, 1, &ok);
        if (ok && r >= 0 && r < fe->o->nranks)
            fe->pids[r] = (pid_t)ctl_word_long(m, 2, &ok);
    } else if (!strcmp(v, "pgid") && m->nwords == 2) {
        fe->pgid = (pid_t)ctl_word_long(m, 1, &ok);
    } else if (!strcmp(v, "fail") && m->nwords == 4) {
        int st = (int)ctl_word_long(m, 2, &ok);
        fe_fail(fe, ok && st > 0 ? st : 1, "%s", m->words[3]);
    } else if (!strcmp(v, "stdin_ack") && m->nwords == 2) {
        size_t n = (size_t)ctl_word_long(m, 1, &ok);
        fe->stdin_inflight = n > fe->stdin_inflight ? 0 : fe->stdin_inflight - n;
    } else if (!strcmp(v, "fence") && m->nwords == 2) {
        /* One proxy: the fence is complete as soon as it arrives. */
        ctl_sendl(fe->ctl, "barrier_out", m->words[1], (char *)NULL);
    } else if (!strcmp(v, "done")) {
        fe->proxy_done = 1;
    } else if (!strcmp(v, "error")) {
        fe_fail(fe, 1, "%s %s", m->words[m->nwords > 1 ? 1 : 0],
                m->nwords > 2 ? m->words[2] : "");
    }
    /* "exit" and "kvs" need nothing here with a single node. */
}

static void fe_signal(frontend_t *fe, int sig)
{
    char s[16];
    if (sig == SIGCHLD) {
        int st;
        pid_t p;
        while ((p = waitpid(-1, &st, WNOHANG)) > 0)
            if (p == fe->proxy)
                fe->proxy_reaped = 1;
        return;
    }
    fe->interrupts++;
    if (fe->interrupts == 1) {
        fe_fail(fe, 128 + sig, "got %s, forwarding it to all ranks (again to kill them at once)",
                launch_signame(sig));
        snprintf(s, sizeof s, "%d", sig);
        ctl_sendl(fe->ctl, "signal", s, (char *)NULL);
    } else if (fe->interrupts == 2) {
        fprintf(stderr, "locusrun: got %s again, killing all ranks\n", launch_signame(sig));
        ctl_sendl(fe->ctl, "killnow", (char *)NULL);
    }
}

static void fe_stdin(frontend_t *fe)
{
    char buf[4096];
    ssize_t n = read(0, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        fe->stdin_done = 1;
        ctl_sendl(fe->ctl, "stdin_eof", (char *)NULL);
        return;
    }
    const char *w[1] = { buf };
    size_t l[1] = { (size_t)n };
    ctl_send(fe->ctl, "stdin", 1, w, l);
    fe->stdin_inflight += (size_t)n;
}

/* Last resort when the proxy vanished: kill what it started ourselves. */
static void fe_emergency(frontend_t *fe)
{
    if (fe->pgid > 0)
        kill(-fe->pgid, SIGKILL);
    for (int r = 0; r < fe->o->nranks; r++)
        if (fe->pids[r] > 0)
            kill(fe->pids[r], SIGKILL);
}

static void fe_loop(frontend_t *fe)
{
    double deadline = fe->o->timeout_s > 0 ? launch_now() + fe->o->timeout_s : 0;
    int ctl_open = 1, timed_out = 0;
    double done_at = 0;
    while (!fe->proxy_reaped) {
        double now = launch_now();
        if (deadline > 0 && !timed_out && now >= deadline) {
            timed_out = 1;
            fe_fail(fe, 124, "timeout: killing the job after %g s", fe->o->timeout_s);
            ctl_sendl(fe->ctl, "kill", (char *)NULL);
        }
        if ((fe->proxy_done || !ctl_open) && done_at == 0)
            done_at = now;
        if (done_at > 0 && now - done_at > 3.0) {
            kill(fe->proxy, SIGKILL);  /* said done (or hung up) but lingers */
            done_at = now;
        }
        struct pollfd fds[3];
        int n = 0;
        fds[n++] = (struct pollfd){ .fd = fe->sigfd, .events = POLLIN };
        int ci = -1, si = -1;
        if (ctl_open) {
            ci = n;
            fds[n++] = (struct pollfd){ .fd = fe->ctl, .events = POLLIN };
        }
        if (!fe->stdin_done && !fe->proxy_done && fe->stdin_inflight < STDIN_INFLIGHT_MAX) {
            si = n;
            fds[n++] = (struct pollfd){ .fd = 0, .events = POLLIN };
        }
        int timeout = 1000;
        if (deadline > 0 && !timed_out) {
            int t = (int)((deadline - now) * 1000) + 1;
            timeout = t < timeout ? t : timeout;
        }
        int rc = poll(fds, (nfds_t)n, timeout);
        if (rc < 0 && errno != EINTR)
            break;
        if (rc <= 0)
            continue;
        if (fds[0].revents) {
            struct signalfd_siginfo sinfo;
            while (read(fe->sigfd, &sinfo, sizeof sinfo) == (ssize_t)sizeof sinfo)
                fe_signal(fe, (int)sinfo.ssi_signo);
        }
        if (ci >= 0 && fds[ci].revents) {
            ctl_msg_t m = { 0 };
            if (ctl_reader_fill(&fe->rd) <= 0)
                ctl_open = 0;
            int r;
            while ((r = ctl_reader_next(&fe->rd, &m)) != 0)
                if (r > 0)
                    fe_msg(fe, &m);
            ctl_msg_free(&m);
        }
        if (si >= 0 && fds[si].revents)
            fe_stdin(fe);
    }
    /* The proxy is gone: whatever it wrote before is still in the socket. */
    if (ctl_open) {
        ctl_msg_t m = { 0 };
        int r;
        do {
            while ((r = ctl_reader_next(&fe->rd, &m)) != 0)
                if (r > 0)
                    fe_msg(fe, &m);
        } while (ctl_reader_fill(&fe->rd) > 0);
        ctl_msg_free(&m);
    }
    if (!fe->proxy_done) {
        fe_fail(fe, 1, "proxy (pid %d) ended before the job did; killing the ranks",
                (int)fe->proxy);
        fe_emergency(fe);
    }
}

/* The user's own value for an OpenMP variable the plan also sets
 * (OMP_NUM_THREADS, OMP_PLACES, OMP_PROC_BIND): the last -x VAR=VAL, else
 * this environment's value (also what -x VAR passes on); NULL when the user
 * set none and the plan's value applies. An explicit choice of thread count
 * or placement must not be silently replaced by the --cpus-per-rank default. */
static const char *user_omp_value(const launch_opts_t *o, const char *name)
{
    if (strncmp(name, "OMP_", 4) != 0)
        return NULL;
    size_t n = strlen(name);
    for (int i = o->nexports - 1; i >= 0; i--) {
        const char *x = o->exports[i];
        if (strncmp(x, name, n) == 0 && x[n] == '=')
            return x + n + 1;
    }
    return getenv(name);
}

/* Sends the node's part of the job to the proxy. */
static int fe_send_job(frontend_t *fe)
{
    launch_opts_t *o = fe->o;
    char size[16], grace[32], mapping[64], trace[16];
    long tr = 0;
    snprintf(size, sizeof size, "%d", o->nranks);
    snprintf(grace, sizeof grace, "%s", locus_tunable_str("LOCUS_KILL_GRACE"));
    snprintf(mapping, sizeof mapping, "(vector,(0,1,%d))", o->nranks);
    locus_tunable_long("LOCUS_PMI_TRACE", &tr, NULL, 0);
    snprintf(trace, sizeof trace, "%d", tr ? 1 : 0);
    int rc = ctl_sendl(fe->ctl, "job", fe->jobid, size, "0", "1", mapping, grace, trace,
                       (char *)NULL);
    rc |= ctl_sendl(fe->ctl, "exe", o->exe, (char *)NULL);
    for (int i = 0; i < o->argc; i++)
        rc |= ctl_sendl(fe->ctl, "arg", o->argv[i], (char *)NULL);
    for (int i = 0; i < o->nexports; i++) {
        const char *x = o->exports[i];
        if (strchr(x, '=') != NULL) {
            rc |= ctl_sendl(fe->ctl, "env", x, (char *)NULL);
        } else if (getenv(x) != NULL) {
            size_t len = strlen(x) + strlen(getenv(x)) + 2;
            char *kv = malloc(len);
            if (kv == NULL)
                return -1;
            snprintf(kv, len, "%s=%s", x, getenv(x));
            rc |= ctl_sendl(fe->ctl, "env", kv, (char *)NULL);
            free(kv);
        }
    }
    for (int r = 0; r < fe->plan.nranks; r++) {
        const locus_rank_plan_t *rp = &fe->plan.ranks[r];
        char rs[16], bound[4], cpus[8192] = "-", numa[1024] = "-";
        snprintf(rs, sizeof rs, "%d", r);
        snprintf(bound, sizeof bound, "%d", rp->bound ? 1 : 0);
        size_t k = 0;
        for (int i = 0; i < rp->ncpus && k + 16 < sizeof cpus; i++)
            k += (size_t)snprintf(cpus + k, sizeof cpus - k, "%s%d", i ? "," : "", rp->cpus[i]);
        k = 0;
        for (int i = 0; i < rp->nnuma && k + 16 < sizeof numa; i++)
            k += (size_t)snprintf(numa + k, sizeof numa - k, "%s%d", i ? "," : "", rp->numa[i]);
        rc |= ctl_sendl(fe->ctl, "rank", rs, rs, bound, cpus, numa, (char *)NULL);
        for (int e = 0; e < rp->nenv; e++) {
            const char *val = user_omp_value(o, rp->env[e].name);
            if (val == NULL)
                val = rp->env[e].value;
            size_t len = strlen(rp->env[e].name) + strlen(val) + 2;
            char *kv = malloc(len);
            if (kv == NULL)
                return -1;
            snprintf(kv, len, "%s=%s", rp->env[e].name, val);
            rc |= ctl_sendl(fe->ctl, "renv", rs, kv, (char *)NULL);
            free(kv);
        }
    }
    rc |= ctl_sendl(fe->ctl, "start", (char *)NULL);
    return rc ? -1 : 0;
}

/* Forks the local proxy: this same binary in its proxy role, in its own
 * process group (the terminal's Ctrl-C reaches only the front end, which
 * forwards it), dying with the front end. */
static int fe_proxy_start(frontend_t *fe, const sigset_t *blocked)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return -1;
    self[n] = '\0';
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return -1;
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(1);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, 0);
        if (dup2(sv[1], 3) < 0)
            _exit(1);
        sigprocmask(SIG_UNBLOCK, blocked, NULL);
        /* Tags the proxy as part of the job, like its ranks, so tools (and
         * the tests) can find every process of a job by its environment. */
        setenv("LOCUS_JOBID", fe->jobid, 1);
        execl(self, "locusrun", "--proxy", "3", "3", (char *)NULL);
        fprintf(stderr, "locusrun: cannot start proxy %s: %s\n", self, strerror(errno));
        _exit(1);
    }
    close(sv[1]);
    fe->proxy = pid;
    fe->ctl = sv[0];
    ctl_reader_init(&fe->rd, fe->ctl);
    return 0;
}

static int fe_plan(frontend_t *fe, char *err, size_t errlen)
{
    launch_opts_t *o = fe->o;
    char e[512];
    fe->topo = locus_topo_load(o->topology, e, sizeof e);
    if (fe->topo == NULL) {
        snprintf(err, errlen, "topology: %s", e);
        return -1;
    }
    locus_place_request_t req;
    locus_place_request_init(&req);
    req.nranks = o->nranks;
    for (int i = 0; i < o->place_argc;) {
        const char *val = i + 1 < o->place_argc ? o->place_argv[i + 1] : NULL;
        e[0] = '\0';
        int used = locus_place_opt_parse(&req, o->place_argv[i], val, e, sizeof e);
        if (used <= 0) {
            snprintf(err, errlen, "%s", e);
            return -1;
        }
        i += used;
    }
    if (locus_plan_make(fe->topo, &req, &fe->plan, e, sizeof e) < 0) {
        snprintf(err, errlen, "placement: %s", e);
        return -1;
    }
    return 0;
}

int launch_frontend_run(launch_opts_t *o)
{
    frontend_t fe_s, *fe = &fe_s;
    memset(fe, 0, sizeof *fe);
    fe->o = o;
    fe->sigfd = fe->ctl = -1;
    char err[1024];
    char terr[256];
    long tv;
    if (locus_tunable_long("LOCUS_PMI_TRACE", &tv, terr, sizeof terr) < 0) {
        fprintf(stderr, "locusrun: %s\n", terr);
        return 2;
    }
    char *end;
    double grace = strtod(locus_tunable_str("LOCUS_KILL_GRACE"), &end);
    if (*end != '\0' || !(grace >= 0) || grace > 3600) {
        fprintf(stderr, "locusrun: LOCUS_KILL_GRACE: '%s' is not a number of seconds\n",
                locus_tunable_str("LOCUS_KILL_GRACE"));
        return 2;
    }
    if (fe_plan(fe, err, sizeof err) < 0) {
        fprintf(stderr, "locusrun: %s\n", err);
        if (fe->topo)
            locus_topo_free(fe->topo);
        return 2;
    }
    for (int i = 0; i < fe->plan.nwarnings; i++)
        fprintf(stderr, "locusrun: warning: %s\n", fe->plan.warnings[i]);
    if (o->dry_run) {
        locus_plan_write_table(&fe->plan, fe->topo, stdout);
        locus_plan_free(&fe->plan);
        locus_topo_free(fe->topo);
        return 0;
    }
    if (o->report_bindings) {
        for (int r = 0; r < fe->plan.nranks; r++) {
            char line[1024];
            locus_rank_plan_format(&fe->plan.ranks[r], locus_topo_hostname(fe->topo),
                                   line, sizeof line);
            fprintf(stderr, "%s\n", line);
        }
        fflush(stderr);
    }

    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(fe->jobid, sizeof fe->jobid, "%d-%06lx", (int)getpid(),
             (unsigned long)(ts.tv_nsec ^ ts.tv_sec) & 0xffffffUL);
    fe->pids = calloc((size_t)o->nranks, sizeof *fe->pids);
    fe->line_start = malloc(2 * (size_t)o->nranks);
    if (fe->pids == NULL || fe->line_start == NULL) {
        fprintf(stderr, "locusrun: out of memory\n");
        return 1;
    }
    memset(fe->line_start, 1, 2 * (size_t)o->nranks);

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGQUIT);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    fe->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (fe->sigfd < 0 || fe_proxy_start(fe, &set) < 0) {
        fprintf(stderr, "locusrun: cannot start the proxy: %s\n", strerror(errno));
        return 1;
    }
    if (fe_send_job(fe) < 0)
        fe_fail(fe, 1, "cannot send the job to the proxy");
    fe_loop(fe);
    /* The proxy removes them; this catches a proxy that died first. */
    launch_shm_cleanup(fe->jobid);
    int status = fe->status;
    close(fe->ctl);
    close(fe->sigfd);
    ctl_reader_free(&fe->rd);
    free(fe->pids);
    free(fe->line_start);
    locus_plan_free(&fe->plan);
    locus_topo_free(fe->topo);
    return status;
}
