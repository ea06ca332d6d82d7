/*
 * proxy.c — the per-node proxy: receives the node's part of the job from
 * the front end, starts the ranks, then runs one poll() loop over the
 * control stream, a signalfd and every rank's PMI socket and stdio pipes
 * until every rank is reaped, and removes what the job left in /dev/shm.
 */
#include "proxy.h"
#include "locus_tunables.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

/* After the last rank is reaped, output still in flight gets this long. */
#define DRAIN_WAIT 0.3

static void node_finish(proxy_t *px);

static void run_msg(proxy_t *px, const ctl_msg_t *m)
{
    const char *v = m->words[0];
    int ok;
    if (!strcmp(v, "signal") && m->nwords == 2) {
        int sig = (int)ctl_word_long(m, 1, &ok);
        if (ok && sig > 0 && sig < 64)
            proxy_signal_all(px, sig);
    } else if (!strcmp(v, "kill")) {
        proxy_teardown(px);
    } else if (!strcmp(v, "killnow")) {
        px->failed = px->term_sent = px->kill_sent = 1;
        proxy_signal_all(px, SIGKILL);
    } else if (!strcmp(v, "stdin") && m->nwords == 2) {
        if (px->stdin_fd < 0) {
            char n[32];
            snprintf(n, sizeof n, "%zu", m->lens[1]);
            ctl_sendl(px->ctl_out, "stdin_ack", n, (char *)NULL);
            return;
        }
        char *nb = realloc(px->inbuf, px->inlen + m->lens[1] + 1);
        if (nb == NULL)
            return;
        px->inbuf = nb;
        memcpy(nb + px->inlen, m->words[1], m->lens[1]);
        px->inlen += m->lens[1];
    } else if (!strcmp(v, "stdin_eof")) {
        px->stdin_eof = 1;
    } else if (!strcmp(v, "kvs") && m->nwords == 3) {
        proxy_tree_kvs(px, m->words[1], m->words[2]);
    } else if (!strcmp(v, "barrier_out") && m->nwords == 2) {
        proxy_tree_barrier_out(px, m->words[1]);
    } else if (!strcmp(v, "drop") && m->nwords == 2) {
        proxy_tree_drop(px, ctl_word_long(m, 1, &ok));
    }
}

static void stdin_pump(proxy_t *px)
{
    if (px->stdin_fd >= 0 && px->inlen > 0) {
        ssize_t n = write(px->stdin_fd, px->inbuf, px->inlen);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        size_t done = n < 0 ? px->inlen : (size_t)n;  /* EPIPE: rank 0 gone */
        memmove(px->inbuf, px->inbuf + done, px->inlen - done);
        px->inlen -= done;
        char s[32];
        snprintf(s, sizeof s, "%zu", done);
        ctl_sendl(px->ctl_out, "stdin_ack", s, (char *)NULL);
        if (n < 0) {
            close(px->stdin_fd);
            px->stdin_fd = -1;
        }
    }
    if (px->stdin_fd >= 0 && px->stdin_eof && px->inlen == 0) {
        close(px->stdin_fd);
        px->stdin_fd = -1;
    }
}

/* Serves the control messages buffered: this node's, and those routed
 * through it to the nodes below (proxy_tree.c). */
static void ctl_drain(proxy_t *px, ctl_msg_t *m)
{
    int rc;
    const char *line;
    size_t len;
    while ((rc = ctl_reader_line(&px->rd, &line, &len)) != 0) {
        if (rc > 0 && proxy_tree_route(px, line, len) == 0 && ctl_decode(line, len, m) > 0)
            run_msg(px, m);
    }
}

static int ctl_pump(proxy_t *px, ctl_msg_t *m)
{
    long n = ctl_reader_fill(&px->rd);
    if (n <= 0)
        return -1;
    px->served.ctl_in += n;
    ctl_drain(px, m);
    return 0;
}

static int outputs_open(const proxy_t *px)
{
    for (int i = 0; i < px->nlocal; i++)
        if (px->ranks[i].out_fd[0] >= 0 || px->ranks[i].out_fd[1] >= 0)
            return 1;
    return 0;
}

static void event_loop(proxy_t *px, ctl_msg_t *m)
{
    size_t cap = 4 + 3 * (size_t)px->nlocal + (size_t)px->tree.nkids;
    struct pollfd *fds = calloc(cap, sizeof *fds);
    prank_t **who = calloc(cap, sizeof *who);
    int *what = calloc(cap, sizeof *what);
    int *kid = calloc((size_t)px->tree.nkids + 1, sizeof *kid);
    double drain_until = 0;
    if (fds == NULL || who == NULL || what == NULL || kid == NULL)
        goto out;
    for (;;) {
        double now = launch_now();
        proxy_tree_check(px, now);
        if (px->nrunning == 0) {
            if (drain_until == 0)
                drain_until = now + DRAIN_WAIT;
            if (!outputs_open(px) || now >= drain_until) {
                /* An inner proxy of a tree stays until its children are gone. */
                if (!proxy_tree_busy(px))
                    break;
                node_finish(px);
            }
        }
        /* A rank's descriptors close before its exit status can be
         * collected: reap first, so that a rank that exited while this
         * proxy was descheduled is reported by its status, not as a lost
         * PMI connection. */
        proxy_reap(px);
        int lost_pending = proxy_check_lost(px, now);
        if (px->term_sent && !px->kill_sent && now >= px->kill_at && px->nrunning > 0) {
            px->kill_sent = 1;
            proxy_signal_all(px, SIGKILL);
        }
        int n = 0;
        fds[n] = (struct pollfd){ .fd = px->sigfd, .events = POLLIN };
        what[n++] = -1;
        if (!px->ctl_lost) {
            fds[n] = (struct pollfd){ .fd = px->ctl_in, .events = POLLIN };
            what[n++] = -2;
        }
        if (proxy_pmix_wake_fd(px) >= 0) {
            fds[n] = (struct pollfd){ .fd = proxy_pmix_wake_fd(px), .events = POLLIN };
            what[n++] = -4;
        }
        if (px->stdin_fd >= 0 && (px->inlen > 0 || px->stdin_eof)) {
            fds[n] = (struct pollfd){ .fd = px->stdin_fd, .events = POLLOUT };
            what[n++] = -3;
        }
        for (int i = 0; i < px->nlocal; i++) {
            prank_t *p = &px->ranks[i];
            if (p->pmi_fd >= 0) {
                fds[n] = (struct pollfd){ .fd = p->pmi_fd, .events = POLLIN };
                who[n] = p;
                what[n++] = 0;
            }
            for (int s = 0; s < 2; s++) {
                if (p->out_fd[s] >= 0) {
                    fds[n] = (struct pollfd){ .fd = p->out_fd[s], .events = POLLIN };
                    who[n] = p;
                    what[n++] = 1 + s;
                }
            }
        }
        int kid_at = n, nkid = proxy_tree_fds(px, fds + n, kid);
        for (int i = 0; i < nkid; i++)
            what[n++] = -5;
        int timeout = 500;
        if (px->term_sent && !px->kill_sent) {
            int t = (int)((px->kill_at - now) * 1000) + 1;
            timeout = t < timeout ? (t < 0 ? 0 : t) : timeout;
        }
        if (px->nrunning == 0 || lost_pending || proxy_tree_settling(px))
            timeout = timeout > 50 ? 50 : timeout;
        int rc = poll(fds, (nfds_t)n, timeout);
        if (rc < 0 && errno != EINTR)
            break;
        if (rc > 0 && nkid > 0)
            proxy_tree_ready(px, fds + kid_at, kid, nkid);
        for (int i = 0; rc > 0 && i < n; i++) {
            if (fds[i].revents == 0 || what[i] == -5)
                continue;
            if (what[i] == -1) {
                struct signalfd_siginfo si;
                while (read(px->sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
                    if (si.ssi_signo != SIGCHLD)
                        proxy_teardown(px);  /* SIGTERM/SIGHUP: front end died */
                }
                proxy_reap(px);
            } else if (what[i] == -2) {
                if (ctl_pump(px, m) < 0) {
                    px->ctl_lost = 1;
                    proxy_teardown(px);
                    proxy_tree_lost(px);
                }
            } else if (what[i] == -3) {
                stdin_pump(px);
            } else if (what[i] == -4) {
                proxy_pmix_progress(px);
            } else if (what[i] == 0) {
                prank_t *p = who[i];
                int got = p->pmi_rd ? pmi_reader_fill(p->pmi_rd) : PMI_WIRE_EIO;
                if (got > 0 || got == PMI_WIRE_ETOOLONG)
                    proxy_pmi_serve(px, p);
                else if (got != PMI_WIRE_EAGAIN)
                    proxy_pmi_drop(px, p);
            } else {
                proxy_rank_read_output(px, who[i], what[i] - 1);
            }
        }
        proxy_reap(px);
    }
out:
    free(fds);
    free(who);
    free(what);
    free(kid);
}

static void proxy_free(proxy_t *px)
{
    free(px->ranks);
    for (int i = 0; i < px->argc; i++)
        free(px->argv[i]);
    free(px->argv);
    for (int i = 0; i < px->nenv; i++)
        free(px->env[i]);
    free(px->env);
    free(px->exe);
    free(px->cwd);
    free(px->inbuf);
    for (int i = 0; i < px->nplace; i++)
        free(px->place[i]);
    free(px->place);
    for (int i = 0; i < px->nuenv; i++)
        free(px->uenv[i]);
    free(px->uenv);
    kvs_free(&px->kvs);
    free(px->pmix_hosts);
    free(px->pmix_node_of);
    for (int i = 0; i < px->nbarriers; i++)
        free(px->barriers[i].in);
    free(px->barriers);
    ctl_reader_free(&px->rd);
    proxy_tree_free(px);
    if (px->topo)
        locus_topo_free(px->topo);
    if (px->sigfd >= 0)
        close(px->sigfd);
}

/* The PMI bounds, from the tunables the front end checked and forwarded. */
static void limits_read(proxy_t *px)
{
    px->kvs_keys_max = px->kvs_bytes_max = px->barriers_max = 0;
    locus_tunable_long("LOCUS_PMI_KVS_KEYS_MAX", &px->kvs_keys_max, NULL, 0);
    locus_tunable_long("LOCUS_PMI_KVS_BYTES_MAX", &px->kvs_bytes_max, NULL, 0);
    locus_tunable_long("LOCUS_PMI_BARRIERS_MAX", &px->barriers_max, NULL, 0);
}

static int ranks_start(proxy_t *px)
{
    limits_read(px);
    if (px->cwd != NULL && chdir(px->cwd) != 0 && getenv("HOME") != NULL &&
        chdir(getenv("HOME")) != 0) {
        /* No such directory on this node: like mpirun, start in $HOME. */
    }
    proxy_tree_start(px);
    if (proxy_plan(px) < 0 || proxy_pmix_start(px) < 0)
        return -1;
    px->leader = 0;
    px->node_ncpus = proxy_node_ncpus(px);
    for (int i = 0; i < px->nlocal; i++) {
        prank_t *p = &px->ranks[i];
        if (px->failed)
            break;
        if (proxy_rank_spawn(px, p) < 0) {
            proxy_fail(px, p, 1, "rank %d: cannot start: %s", p->rank, strerror(errno));
            break;
        }
        char r[16], pid[16];
        snprintf(r, sizeof r, "%d", p->rank);
        snprintf(pid, sizeof pid, "%d", (int)p->pid);
        ctl_sendl(px->ctl_out, "pid", r, pid, (char *)NULL);
    }
    char pg[16];
    snprintf(pg, sizeof pg, "%d", (int)px->pgid);
    ctl_sendl(px->ctl_out, "pgid", pg, (char *)NULL);
    return 0;
}

/* The control stream may be the proxy's stdin/stdout (ssh, the exec
 * launcher): move it off them, so nothing printed by accident can corrupt
 * it and ranks never inherit it. stdout then goes where stderr goes. */
static int ctl_fds_take(int *in, int *out)
{
    int nin = fcntl(*in, F_DUPFD_CLOEXEC, 3);
    int nout = *out == *in ? fcntl(nin, F_DUPFD_CLOEXEC, 3) : fcntl(*out, F_DUPFD_CLOEXEC, 3);
    if (nin < 0 || nout < 0)
        return -1;
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    for (int fd = 0; fd <= 1; fd++)
        if (fd == *in || fd == *out)
            dup2(fd == 0 ? devnull : 2, fd);
    if (*in > 2 && *in != nin)
        close(*in);
    if (*out > 2 && *out != *in && *out != nout)
        close(*out);
    if (devnull >= 0)
        close(devnull);
    *in = nin;
    *out = nout;
    return 0;
}

/* LOCUS_STARTUP_REPORT: what this node's PMI server did for the job. */
static void served_report(const proxy_t *px, const char *host);

/* The node's part is over: strays, shared memory and the PMIx server
 * gone, then `done`. An inner proxy of a tree says it before its children
 * are gone and stays to relay for them. */
static void node_finish(proxy_t *px)
{
    if (px->node_done)
        return;
    px->node_done = 1;
    proxy_finish(px);
    proxy_pmix_stop(px);
    served_report(px, px->sysname);
    ctl_sendl(px->ctl_out, "done", (char *)NULL);
}

static void served_report(const proxy_t *px, const char *host)
{
    if (!launch_startup_report_on())
        return;
    fprintf(stderr, "locusrun: proxy on %s served %d ranks: %ld PMI puts, %ld gets (%ld not "
            "found), %ld barrier entries (%ld fences relayed to the front end), %ld bytes in, "
            "%ld bytes out, %ld node-scoped keys kept on the node, %ld control bytes from above "
            "(%d proxies started from here)\n", host, px->nlocal,
            px->served.puts, px->served.gets, px->served.gets_missed, px->served.barriers,
            px->served.fences_relayed, px->served.bytes_in, px->served.bytes_out,
            px->served.node_puts, px->served.ctl_in, px->tree.nkids);
    fflush(stderr);
}

int launch_proxy_run(int ctl_in, int ctl_out)
{
    if (ctl_fds_take(&ctl_in, &ctl_out) < 0) {
        fprintf(stderr, "locusrun --proxy: bad control descriptors\n");
        return 1;
    }
    proxy_t *px = calloc(1, sizeof *px);
    ctl_msg_t m = { 0 };
    if (px == NULL)
        return 1;
    px->ctl_in = ctl_in;
    px->ctl_out = ctl_out;
    px->stdin_fd = -1;
    px->sigfd = -1;
    px->leader = -1;
    px->grace = 0.5;
    kvs_init(&px->kvs);
    ctl_reader_init(&px->rd, ctl_in);
    char *host = px->sysname, proto[16], pid[16];
    if (gethostname(host, sizeof px->sysname) != 0)
        snprintf(host, sizeof px->sysname, "localhost");
    host[sizeof px->sysname - 1] = '\0';
    snprintf(proto, sizeof proto, "%d", CTL_PROTO_VERSION);
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    ctl_sendl(ctl_out, "hello", proto, host, pid, (char *)NULL);

    /* Each rank costs the proxy four descriptors: lift the soft limit
     * (ranks get the original back before exec). */
    struct rlimit nofile;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
        px->nofile_soft = nofile.rlim_cur;
        nofile.rlim_cur = nofile.rlim_max;
        setrlimit(RLIMIT_NOFILE, &nofile);
    }

    sigset_t *set = &px->sigs;
    sigemptyset(set);
    sigaddset(set, SIGCHLD);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGHUP);
    sigaddset(set, SIGINT);
    sigprocmask(SIG_BLOCK, set, NULL);
    signal(SIGPIPE, SIG_IGN);
    px->sigfd = signalfd(-1, set, SFD_CLOEXEC | SFD_NONBLOCK);

    int status = 0;
    if (px->sigfd < 0 || proxy_setup_read(px, &m) < 0) {
        status = 1;
    } else {
        ranks_start(px);
        ctl_drain(px, &m);  /* what came in behind `start` */
        event_loop(px, &m);
        node_finish(px);
    }
    ctl_msg_free(&m);
    proxy_free(px);
    free(px);
    return status;
}
