/*
 * proxy.c — the per-node proxy: receives the node's part of the job from
 * the front end, starts the ranks, then runs one poll() loop over the
 * control stream, a signalfd and every rank's PMI socket and stdio pipes
 * until every rank is reaped, and removes what the job left in /dev/shm.
 */
#include "proxy.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

/* A rank that closed PMI without finalize gets this long to exit on its
 * own, so the report names its real exit status rather than our kill. */
#define PMI_LOST_WAIT 0.2
/* After the last rank is reaped, output still in flight gets this long. */
#define DRAIN_WAIT 0.3

void proxy_signal_all(proxy_t *px, int sig)
{
    if (sig > 0 && sig < 64)
        px->sent_sigs |= 1UL << sig;
    if (px->pgid > 0)
        kill(-px->pgid, sig);
    /* Also by pid: a rank may have moved itself to another group. */
    for (int i = 0; i < px->nlocal; i++)
        if (px->ranks[i].running)
            kill(px->ranks[i].pid, sig);
}

/* Whether pid is inside exit() (PF_EXITING in /proc/PID/stat): its PMI
 * socket is already closed but SIGCHLD is still to come, possibly much
 * later on a loaded node. */
static int pid_exiting(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    const char *s = strrchr(buf, ')');
    if (s == NULL)
        return 0;
    /* After the name: state ppid pgrp session tty_nr tpgid flags. */
    unsigned long flags = 0;
    if (sscanf(s + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
        return 0;
    return (flags & 0x4UL) != 0;  /* PF_EXITING */
}

static void teardown_start(proxy_t *px)
{
    px->failed = 1;
    if (px->term_sent)
        return;
    px->term_sent = 1;
    proxy_signal_all(px, SIGTERM);
    px->kill_at = launch_now() + px->grace;
}

void proxy_fail(proxy_t *px, prank_t *p, int status, const char *fmt, ...)
{
    if (px->failed) {
        teardown_start(px);
        return;
    }
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char r[16], st[16];
    snprintf(r, sizeof r, "%d", p ? p->rank : -1);
    snprintf(st, sizeof st, "%d", status);
    ctl_sendl(px->ctl_out, "fail", r, st, msg, (char *)NULL);
    teardown_start(px);
}

void proxy_pmi_drop(proxy_t *px, prank_t *p)
{
    if (p->pmi_fd < 0)
        return;
    close(p->pmi_fd);
    p->pmi_fd = -1;
    if (p->pmi_state == PMI_ST_INIT)
        p->pmi_lost_at = launch_now();
    p->pmi_state = PMI_ST_CLOSED;
    (void)px;
}

static void rank_exited(proxy_t *px, prank_t *p, int code, int sig)
{
    p->running = 0;
    px->nrunning--;
    char r[16], pid[16], v[16];
    snprintf(r, sizeof r, "%d", p->rank);
    snprintf(pid, sizeof pid, "%d", (int)p->pid);
    snprintf(v, sizeof v, "%d", sig ? sig : code);
    ctl_sendl(px->ctl_out, "exit", r, pid, sig ? "signaled" : "exited", v, (char *)NULL);
    if (sig) {
        if (!(px->sent_sigs & (1UL << sig)))
            proxy_fail(px, p, 128 + sig, "rank %d (pid %d) killed by signal %d (%s)",
                       p->rank, (int)p->pid, sig, launch_signame(sig));
    } else if (code != 0) {
        proxy_fail(px, p, code, "rank %d (pid %d) exited with status %d", p->rank,
                   (int)p->pid, code);
    } else if (p->pmi_state == PMI_ST_INIT || p->pmi_lost_at > 0) {
        proxy_fail(px, p, 1, "rank %d (pid %d) exited without calling PMI finalize",
                   p->rank, (int)p->pid);
    }
}

/* Reaps what has exited. The group leader is only looked at (WNOWAIT), so
 * its pid, which names the job's process group, cannot be reused while
 * the group is still signalled. */
static void reap(proxy_t *px)
{
    for (int i = 0; i < px->nlocal; i++) {
        prank_t *p = &px->ranks[i];
        if (!p->running)
            continue;
        siginfo_t si;
        memset(&si, 0, sizeof si);
        int opts = WEXITED | WNOHANG | (i == px->leader ? WNOWAIT : 0);
        if (waitid(P_PID, (id_t)p->pid, &si, opts) < 0 || si.si_pid == 0)
            continue;
        if (si.si_code == CLD_EXITED)
            rank_exited(px, p, si.si_status, 0);
        else
            rank_exited(px, p, 0, si.si_status);
    }
}

static void run_msg(proxy_t *px, const ctl_msg_t *m)
{
    const char *v = m->words[0];
    int ok;
    if (!strcmp(v, "signal") && m->nwords == 2) {
        int sig = (int)ctl_word_long(m, 1, &ok);
        if (ok && sig > 0 && sig < 64)
            proxy_signal_all(px, sig);
    } else if (!strcmp(v, "kill")) {
        teardown_start(px);
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
        kvs_put(&px->kvs, m->words[1], m->words[2], 0);
    } else if (!strcmp(v, "barrier_out") && m->nwords == 2) {
        proxy_pmi_barrier_done(px, m->words[1]);
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

/* Reads control messages; returns -1 when the front end is gone. */
static void ctl_drain(proxy_t *px, ctl_msg_t *m)
{
    int rc;
    while ((rc = ctl_reader_next(&px->rd, m)) != 0)
        if (rc > 0)
            run_msg(px, m);
}

static int ctl_pump(proxy_t *px, ctl_msg_t *m)
{
    long n = ctl_reader_fill(&px->rd);
    if (n <= 0)
        return -1;
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
    size_t cap = 3 + 3 * (size_t)px->nlocal;
    struct pollfd *fds = calloc(cap, sizeof *fds);
    prank_t **who = calloc(cap, sizeof *who);
    int *what = calloc(cap, sizeof *what);
    double drain_until = 0;
    if (fds == NULL || who == NULL || what == NULL)
        goto out;
    for (;;) {
        double now = launch_now();
        if (px->nrunning == 0) {
            if (drain_until == 0)
                drain_until = now + DRAIN_WAIT;
            if (!outputs_open(px) || now >= drain_until)
                break;
        }
        /* A rank's descriptors close before its exit status can be
         * collected: reap first, so that a rank that exited while this
         * proxy was descheduled is reported by its status, not as a lost
         * PMI connection. */
        reap(px);
        int lost_pending = 0;
        for (int i = 0; i < px->nlocal; i++) {
            prank_t *p = &px->ranks[i];
            lost_pending |= p->pmi_lost_at > 0 && p->running;
            if (p->pmi_lost_at > 0 && p->running && now - p->pmi_lost_at >= PMI_LOST_WAIT
                && !pid_exiting(p->pid)) {
                p->pmi_lost_at = -1;  /* report once */
                proxy_fail(px, p, 1, "rank %d (pid %d) closed its PMI connection without finalize",
                           p->rank, (int)p->pid);
            }
        }
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
        int timeout = 500;
        if (px->term_sent && !px->kill_sent) {
            int t = (int)((px->kill_at - now) * 1000) + 1;
            timeout = t < timeout ? (t < 0 ? 0 : t) : timeout;
        }
        if (px->nrunning == 0 || lost_pending)
            timeout = timeout > 50 ? 50 : timeout;
        int rc = poll(fds, (nfds_t)n, timeout);
        if (rc < 0 && errno != EINTR)
            break;
        for (int i = 0; rc > 0 && i < n; i++) {
            if (fds[i].revents == 0)
                continue;
            if (what[i] == -1) {
                struct signalfd_siginfo si;
                while (read(px->sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
                    if (si.ssi_signo != SIGCHLD)
                        teardown_start(px);  /* SIGTERM/SIGHUP: front end died */
                }
                reap(px);
            } else if (what[i] == -2) {
                if (ctl_pump(px, m) < 0) {
                    px->ctl_lost = 1;
                    teardown_start(px);
                }
            } else if (what[i] == -3) {
                stdin_pump(px);
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
        reap(px);
    }
out:
    free(fds);
    free(who);
    free(what);
}

/* Everything after the last rank: strays of the job's process group, the
 * group leader's zombie, the job's shared-memory files. */
static void finish(proxy_t *px)
{
    if (px->pgid > 0)
        kill(-px->pgid, SIGKILL);
    for (int i = 0; i < px->nlocal; i++) {
        prank_t *p = &px->ranks[i];
        if (p->pid > 0)
            while (waitpid(p->pid, NULL, WNOHANG) < 0 && errno == EINTR)
                ;
        if (p->pmi_fd >= 0)
            close(p->pmi_fd);
        for (int s = 0; s < 2; s++) {
            if (p->out_fd[s] >= 0)
                close(p->out_fd[s]);
            free(p->obuf[s]);
        }
        free(p->pmi_rd);
        free(p->cpus);
        free(p->numa);
        for (int k = 0; k < p->nenv; k++)
            free(p->env[k]);
        free(p->env);
    }
    if (px->leader >= 0 && px->leader < px->nlocal && px->ranks[px->leader].pid > 0) {
        /* The leader is reaped blocking: it has exited (or was SIGKILLed
         * just above), so this returns at once. */
        while (waitpid(px->ranks[px->leader].pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    if (px->jobid[0])
        launch_shm_cleanup(px->jobid);
    if (px->stdin_fd >= 0)
        close(px->stdin_fd);
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
    free(px->inbuf);
    kvs_free(&px->kvs);
    for (int i = 0; i < PROXY_BARRIERS_MAX; i++)
        free(px->barriers[i].in);
    ctl_reader_free(&px->rd);
    if (px->topo)
        locus_topo_free(px->topo);
    if (px->sigfd >= 0)
        close(px->sigfd);
}

static int ranks_start(proxy_t *px)
{
    int need_topo = 0;
    for (int i = 0; i < px->nlocal; i++)
        need_topo |= px->ranks[i].bound || px->ranks[i].nnuma > 0;
    if (need_topo) {
        char err[512];
        px->topo = locus_topo_load(NULL, err, sizeof err);
        if (px->topo == NULL) {
            proxy_fail(px, NULL, 1, "proxy: cannot load this machine's topology: %s", err);
            return -1;
        }
    }
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

int launch_proxy_run(int ctl_in, int ctl_out)
{
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
    fcntl(ctl_in, F_SETFD, FD_CLOEXEC);
    fcntl(ctl_out, F_SETFD, FD_CLOEXEC);

    /* Each rank costs the proxy four descriptors: lift the soft limit
     * (ranks get the original back before exec). */
    struct rlimit nofile;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
        px->nofile_soft = nofile.rlim_cur;
        nofile.rlim_cur = nofile.rlim_max;
        setrlimit(RLIMIT_NOFILE, &nofile);
    }

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGINT);
    sigprocmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    px->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);

    int status = 0;
    if (px->sigfd < 0 || proxy_setup_read(px, &m) < 0) {
        status = 1;
    } else {
        ranks_start(px);
        ctl_drain(px, &m);  /* what came in behind `start` */
        event_loop(px, &m);
        finish(px);
        ctl_sendl(px->ctl_out, "done", (char *)NULL);
    }
    ctl_msg_free(&m);
    proxy_free(px);
    free(px);
    return status;
}
