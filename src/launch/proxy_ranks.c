/*
 * proxy_ranks.c — the life of a node's ranks after they start: signals,
 * reaping and what each end means (exit status, signal, PMI lost without
 * finalize), the teardown (SIGTERM, SIGKILL after the grace) and the final
 * cleanup of the node.
 */
#include "proxy.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* A rank that closed PMI without finalize gets this long to exit on its
 * own, so the report names its real exit status rather than our kill. */
#define PMI_LOST_WAIT 0.2

void proxy_signal_all(proxy_t *px, int sig)
{
    if (sig == SIGTERM || sig == SIGKILL || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT)
        px->sent_sigs |= 1UL << sig;
    if (px->pgid > 0)
        kill(-px->pgid, sig);
    /* Also by pid to a rank that moved itself to another group; never
     * twice to one process: a forwarded SIGUSR1 must arrive once. */
    for (int i = 0; i < px->nlocal; i++) {
        pid_t pid = px->ranks[i].pid;
        if (px->ranks[i].running && (px->pgid <= 0 || getpgid(pid) != px->pgid))
            kill(pid, sig);
    }
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

void proxy_teardown(proxy_t *px)
{
    px->failed = 1;
    if (px->term_sent)
        return;
    px->term_sent = 1;
    proxy_signal_all(px, SIGTERM);
    /* Stopped ranks (Ctrl-Z) would hold SIGTERM until the kill. */
    proxy_signal_all(px, SIGCONT);
    px->kill_at = launch_now() + px->grace;
}

void proxy_fail(proxy_t *px, prank_t *p, int status, const char *fmt, ...)
{
    if (px->failed) {
        proxy_teardown(px);
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
    proxy_teardown(px);
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
        if (sig >= 64 || !(px->sent_sigs & (1UL << sig)))
            proxy_fail(px, p, 128 + sig, "rank %d (pid %d) on %s killed by signal %d (%s)",
                       p->rank, (int)p->pid, px->host, sig, launch_signame(sig));
    } else if (code != 0) {
        proxy_fail(px, p, code, "rank %d (pid %d) on %s exited with status %d", p->rank,
                   (int)p->pid, px->host, code);
    } else if (p->pmi_state == PMI_ST_INIT || p->pmi_lost_at > 0) {
        proxy_fail(px, p, 1, "rank %d (pid %d) on %s exited without calling PMI finalize",
                   p->rank, (int)p->pid, px->host);
    }
}

/* Reaps what has exited. The group leader is only looked at (WNOWAIT), so
 * its pid, which names the job's process group, cannot be reused while
 * the group is still signalled. */
void proxy_reap(proxy_t *px)
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

int proxy_check_lost(proxy_t *px, double now)
{
    int pending = 0;
    for (int i = 0; i < px->nlocal; i++) {
        prank_t *p = &px->ranks[i];
        pending |= p->pmi_lost_at > 0 && p->running;
        if (p->pmi_lost_at > 0 && p->running && now - p->pmi_lost_at >= PMI_LOST_WAIT &&
            !pid_exiting(p->pid)) {
            p->pmi_lost_at = -1;  /* report once */
            proxy_fail(px, p, 1, "rank %d (pid %d) on %s closed its PMI connection "
                       "without finalize", p->rank, (int)p->pid, px->host);
        }
    }
    return pending;
}

/* Everything after the last rank: strays of the job's process group, the
 * group leader's zombie, the job's shared-memory files. */
void proxy_finish(proxy_t *px)
{
    if (px->pgid > 0)
        kill(-px->pgid, SIGKILL);
    for (int i = 0; i < px->nlocal; i++) {
        prank_t *p = &px->ranks[i];
        if (p->pid > 0)
            while (waitpid(p->pid, NULL, WNOHANG) < 0 && errno == EINTR)
                ;
        /* Closed and cleared: an inner proxy of a tree polls on after this. */
        if (p->pmi_fd >= 0)
            close(p->pmi_fd);
        p->pmi_fd = -1;
        for (int s = 0; s < 2; s++) {
            if (p->out_fd[s] >= 0)
                close(p->out_fd[s]);
            p->out_fd[s] = -1;
            free(p->obuf[s]);
            p->obuf[s] = NULL;
        }
        free(p->pmi_rd);
        p->pmi_rd = NULL;
        free(p->cpus);
        free(p->numa);
        p->cpus = p->numa = NULL;
        for (int k = 0; k < p->nenv; k++)
            free(p->env[k]);
        free(p->env);
        p->env = NULL;
        p->nenv = 0;
    }
    if (px->leader >= 0 && px->leader < px->nlocal && px->ranks[px->leader].pid > 0) {
        /* The leader is reaped blocking: it has exited (or was SIGKILLed
         * just above), so this returns at once. */
        while (waitpid(px->ranks[px->leader].pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    px->pgid = 0;  /* its number may be reused now */
    if (px->jobid[0])
        launch_shm_cleanup(px->jobid);
    if (px->stdin_fd >= 0)
        close(px->stdin_fd);
    px->stdin_fd = -1;
}
