/*
 * fe_loop.c — the front end's event loop: relays rank output, stdin,
 * signals and KVS fences between the terminal and every node's proxy,
 * watches for proxies that do not start, die or stop answering, and
 * decides when the job is over. The front end never blocks on a proxy:
 * everything it sends is queued per link and written when the link takes it.
 */
#include "frontend.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

/* Bytes of stdin sent to the proxy but not yet written to rank 0. */
#define STDIN_INFLIGHT_MAX 65536
/* A proxy told to kill its ranks gets the kill grace plus this long to say
 * done; then it is killed and its node cleaned from here. */
#define ESCALATE_WAIT 1.0
/* A proxy that said done (or closed its stream) but lingers is killed. */
#define LINGER_WAIT 3.0

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
static void fe_output(fe_t *fe, int rank, int stream, const char *data, size_t len)
{
    int fd = stream == 2 ? 2 : 1;
    if (fd == 1 && fe->stdout_broken)
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

static int link_running(const fe_link_t *l)
{
    return link_open(l) && !l->done && !l->escalated;
}

/* Every running proxy must be done by `by`, or its launcher is killed and
 * its node cleaned; verb (or NULL) is what it is told now. */
static void links_end_by(fe_t *fe, double by, const char *verb)
{
    for (int i = 0; i < fe->nlinks; i++) {
        fe_link_t *l = &fe->links[i];
        if (!link_running(l))
            continue;
        if (verb)
            ctl_queuel(&l->out, verb, (char *)NULL);
        if (l->kill_by == 0 || by < l->kill_by)
            l->kill_by = by;
    }
}

void fe_kill_all(fe_t *fe, int now)
{
    fe->killing = 1;
    links_end_by(fe, launch_now() + (now ? 0 : fe->grace) + ESCALATE_WAIT,
                 now ? "killnow" : "kill");
}

static void send_all(fe_t *fe, const char *verb, const char *word)
{
    for (int i = 0; i < fe->nlinks; i++)
        if (link_running(&fe->links[i]))
            ctl_queuel(&fe->links[i].out, verb, word, (char *)NULL);
}

/* To the fences' node `slot`, a direct link: in a tree the proxies below
 * it get what it is sent from its proxy. */
static void fence_send(void *ctx, int slot, const char *verb, const char *w1, const char *w2)
{
    fe_t *fe = ctx;
    fe_link_t *l = &fe->links[fe->direct[slot]];
    if (link_running(l)) {
        ctl_queuel(&l->out, verb, w1, w2, (char *)NULL);
        if (w2 != NULL)
            fe->kvs_bytes_out += strlen(w1) + strlen(w2) + 2;
    }
}

/* A proxy broke the protocol or a bound: the job cannot go on. */
static void link_broken(fe_t *fe, fe_link_t *l, const char *what)
{
    fe_fail(fe, 1, "proxy on %s: %s", l->host, what);
    fe_kill_all(fe, 0);
}

/* A rank number in a message from l: must be one of l's node's ranks. */
static int link_rank(fe_t *fe, fe_link_t *l, const ctl_msg_t *m, int i)
{
    int ok;
    long r = ctl_word_long(m, i, &ok);
    if (!ok || r < 0 || r >= fe->o->nranks || fe->layout.node_of[r] != l->node)
        return -1;
    return (int)r;
}

static void link_msg(fe_t *fe, fe_link_t *l, const ctl_msg_t *m)
{
    const char *v = m->words[0];
    int ok = 0, r;
    char err[256];
    if (!strcmp(v, "hello") && m->nwords == 4) {
        long proto = ctl_word_long(m, 1, &ok);
        if (!ok || proto != CTL_PROTO_VERSION) {
            snprintf(err, sizeof err, "speaks control protocol %s, this locusrun %d "
                     "(another locusrun version at %s?)", m->words[1], CTL_PROTO_VERSION,
                     fe->proxy_path);
            link_broken(fe, l, err);
            return;
        }
        l->hello = 1;
        l->proxy_pid = ctl_word_long(m, 3, &ok);
        tree_hello(fe, l);
    } else if (!l->hello) {
        link_broken(fe, l, "sent something before its hello");
    } else if (!strcmp(v, "io") && m->nwords == 4 && (r = link_rank(fe, l, m, 1)) >= 0) {
        long s = ctl_word_long(m, 2, &ok);
        if (ok && (s == 1 || s == 2))
            fe_output(fe, r, (int)s, m->words[3], m->lens[3]);
    } else if (!strcmp(v, "pid") && m->nwords == 3 && link_rank(fe, l, m, 1) >= 0) {
        /* Nothing to do: the proxy kills its ranks, launcher_kill the rest. */
    } else if (!strcmp(v, "pgid") && m->nwords == 2) {
        l->pgid = (pid_t)ctl_word_long(m, 1, &ok);
    } else if (!strcmp(v, "fail") && m->nwords == 4) {
        long st = ctl_word_long(m, 2, &ok);
        fe_fail(fe, ok && st > 0 && st < 256 ? (int)st : 1, "%s", m->words[3]);
        fe_kill_all(fe, 0);
    } else if (!strcmp(v, "note") && m->nwords == 2) {
        fprintf(stderr, "%s\n", m->words[1]);
        fflush(stderr);
    } else if (!strcmp(v, "stdin_ack") && m->nwords == 2) {
        size_t n = (size_t)ctl_word_long(m, 1, &ok);
        fe->stdin_inflight = n > fe->stdin_inflight ? 0 : fe->stdin_inflight - n;
    } else if ((!strcmp(v, "kvs") || !strcmp(v, "fence")) && l->slot < 0) {
        link_broken(fe, l, "sent a fence past the proxy above it");
    } else if (!strcmp(v, "kvs") && m->nwords == 3) {
        if (fence_pair(&fe->fences, l->slot, m->words[1], m->words[2]) < 0)
            link_broken(fe, l, "sent more key-value data than its ranks may put");
    } else if (!strcmp(v, "fence") && m->nwords == 2) {
        int rc = fence_arrive(&fe->fences, l->slot, m->words[1], err, sizeof err);
        if (rc > 0)
            fence_complete(&fe->fences, m->words[1], fence_send, fe);
        else if (rc < 0)
            link_broken(fe, l, err);
    } else if (!strcmp(v, "done") && m->nwords == 1) {
        l->done = 1;
    } else if (!strcmp(v, "gone") && m->nwords == 2 && !link_direct(l)) {
        /* Its parent proxy reaped its launcher child (wait status). */
        l->gone = l->reaped = 1;
        l->wstatus = (int)ctl_word_long(m, 1, &ok);
    } else if (!strcmp(v, "error")) {
        fe_fail(fe, 1, "%s: %s %s", l->host, m->nwords > 1 ? m->words[1] : "",
                m->nwords > 2 ? m->words[2] : "");
        fe_kill_all(fe, 0);
    } else if (strcmp(v, "exit") != 0) {
        snprintf(err, sizeof err, "sent an unknown or malformed message '%.40s'", v);
        link_broken(fe, l, err);
    }
}

/* A line from direct link l: its proxy's own message, or one routed up
 * from a proxy below it ("via NODE ..."). */
static void link_line(fe_t *fe, fe_link_t *l, const char *line, size_t len, ctl_msg_t *m)
{
    long node;
    const char *rest;
    size_t rlen;
    fe_link_t *from = l;
    int via = ctl_line_via(line, len, &node, &rest, &rlen);
    if (via != 0) {
        if (via < 0 || node < 0 || node >= fe->nlinks || node == l->node ||
            fe->links[node].top != l->node) {
            link_broken(fe, l, "routed a message from a node not below it");
            return;
        }
        from = &fe->links[node];
        line = rest;
        len = rlen;
    }
    if (ctl_decode(line, len, m) > 0)
        link_msg(fe, from, m);
    else
        link_broken(fe, l, "sent a malformed control line");
}

static void link_read(fe_t *fe, fe_link_t *l)
{
    ctl_msg_t m = { 0 };
    long got = ctl_reader_fill(&l->rd);
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        ctl_msg_free(&m);
        return;
    }
    int rc;
    const char *line;
    size_t len;
    while (l->fd >= 0 && (rc = ctl_reader_line(&l->rd, &line, &len)) != 0) {
        if (rc > 0)
            link_line(fe, l, line, len, &m);
        else
            link_broken(fe, l, "sent a malformed control line");
    }
    ctl_msg_free(&m);
    if (got <= 0 && l->fd >= 0) {
        close(l->fd);
        l->fd = -1;
        ctl_outq_free(&l->out);
    }
}

static void reap_children(fe_t *fe)
{
    int st;
    pid_t p;
    while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
        for (int i = 0; i < fe->nlinks; i++) {
            if (fe->links[i].pid == p) {
                fe->links[i].reaped = 1;
                fe->links[i].wstatus = st;
            }
        }
        for (int i = 0; i < fe->ncleaners; i++)
            if (fe->cleaners[i] == p)
                fe->cleaners[i--] = fe->cleaners[--fe->ncleaners];
    }
}

/* Before stopping itself the front end must get SIGSTOP to every proxy. */
static void flush_all_blocking(fe_t *fe, double seconds)
{
    double end = launch_now() + seconds;
    tree_route_flush(fe);
    for (int i = 0; i < fe->nlinks; i++) {
        fe_link_t *l = &fe->links[i];
        while (l->fd >= 0 && l->out.len > 0 && launch_now() < end) {
            if (ctl_outq_flush(&l->out, l->fd) < 0)
                break;
            struct pollfd p = { .fd = l->fd, .events = POLLOUT };
            poll(&p, 1, 50);
        }
    }
}

static void fe_signal(fe_t *fe, int sig)
{
    char s[16];
    if (sig == SIGCHLD) {
        reap_children(fe);
        return;
    }
    if (sig == SIGTSTP) {
        /* Ctrl-Z: stop the ranks, then stop here so the shell regains the
         * terminal (Open MPI's mpirun does both). */
        snprintf(s, sizeof s, "%d", SIGSTOP);
        send_all(fe, "signal", s);
        flush_all_blocking(fe, 1.0);
        kill(getpid(), SIGSTOP);
        return;
    }
    if (sig != SIGINT && sig != SIGTERM && sig != SIGHUP && sig != SIGQUIT) {
        /* USR1, USR2, ALRM, CONT: the ranks get it, nothing ends. */
        snprintf(s, sizeof s, "%d", sig);
        send_all(fe, "signal", s);
        return;
    }
    fe->interrupts++;
    if (fe->interrupts == 1) {
        fe_fail(fe, 128 + sig, "got %s, forwarding it to all ranks (again to kill them at once)",
                launch_signame(sig));
        snprintf(s, sizeof s, "%d", sig);
        send_all(fe, "signal", s);
        /* One signal ends the job: a proxy that cannot be told (its node
         * cut off) or whose ranks ignore it is killed as after a kill, so
         * a batch system's SIGTERM never leaves locusrun waiting. */
        links_end_by(fe, launch_now() + fe->grace + ESCALATE_WAIT, NULL);
    } else if (fe->interrupts == 2) {
        fprintf(stderr, "locusrun: got %s again, killing all ranks\n", launch_signame(sig));
        fe_kill_all(fe, 1);
    }
}

static void fe_stdin(fe_t *fe)
{
    char buf[4096];
    fe_link_t *l = &fe->links[fe->layout.node_of[0]];
    ssize_t n = read(0, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0 || !link_running(l)) {
        fe->stdin_done = 1;
        if (link_running(l))
            ctl_queuel(&l->out, "stdin_eof", (char *)NULL);
        return;
    }
    const char *w[1] = { buf };
    size_t len[1] = { (size_t)n };
    ctl_queue(&l->out, "stdin", 1, w, len);
    fe->stdin_inflight += (size_t)n;
}

/* Link l's proxy is gone without saying done: report it (the first such
 * event is the job's failure), stop the others, clean its node. */
static void link_lost(fe_t *fe, fe_link_t *l)
{
    if (l->lost_reported)
        return;
    l->lost_reported = 1;
    if (!l->hello) {
        char how[64] = "ended";
        if (l->reaped && WIFEXITED(l->wstatus))
            snprintf(how, sizeof how, "exited with status %d", WEXITSTATUS(l->wstatus));
        else if (l->reaped && WIFSIGNALED(l->wstatus))
            snprintf(how, sizeof how, "was killed by signal %d (%s)", WTERMSIG(l->wstatus),
                     launch_signame(WTERMSIG(l->wstatus)));
        fe_fail(fe, 1, "cannot start the proxy on %s: %s %s before it answered", l->host,
                launcher_name(l), how);
    } else if (!l->escalated) {
        fe_fail(fe, 1, "proxy on %s (pid %ld) ended before the job did; killing the ranks",
                l->host, l->proxy_pid);
    }
    fe_kill_all(fe, 0);
    launcher_kill(fe, l);
}

/* Whether l's launcher child is the job's one srun and another node's
 * proxy still runs under it (or has yet to connect back). */
static int srun_in_use(const fe_t *fe, const fe_link_t *l)
{
    if (!l->shared)
        return 0;
    for (int i = 0; i < fe->nlinks; i++) {
        const fe_link_t *o = &fe->links[i];
        if (o != l && o->pid == l->pid && !o->lost_reported &&
            (o->awaiting || (o->fd >= 0 && !o->done)))
            return 1;
    }
    return 0;
}

/* Time-driven checks: start-up, kill escalation, lingering proxies. */
static void links_check(fe_t *fe, double now)
{
    for (int i = 0; i < fe->nlinks; i++) {
        fe_link_t *l = &fe->links[i];
        if (!link_open(l) && l->reaped) {
            if (!l->done)
                link_lost(fe, l);
            /* The proxies below it are out of reach: each ends the job's
             * ranks on its node when its stream closes; their nodes are
             * cleaned from here as well. */
            tree_cut(fe, l, link_lost);
            continue;
        }
        if (!l->hello && !l->lost_reported && l->started > 0 &&
            now - l->started > fe->launch_timeout) {
            fe_fail(fe, 1, "no answer from the proxy on %s within %g s (LOCUS_LAUNCH_TIMEOUT)",
                    l->host, fe->launch_timeout);
            l->lost_reported = 1;
            fe_kill_all(fe, 0);
            launcher_kill(fe, l);
        }
        if (l->kill_by > 0 && !l->done && !l->escalated && now >= l->kill_by) {
            fprintf(stderr, "locusrun: proxy on %s did not end within %.1f s of being told; "
                    "killing it\n", l->host, fe->grace + ESCALATE_WAIT);
            l->lost_reported = 1;
            launcher_kill(fe, l);
        }
        /* Said done, or hung up, but the launcher child lingers. A hang-up
         * without done is a lost proxy even while the job's one srun runs
         * on (its other nodes); that srun is killed only once no other
         * node's proxy still uses it. */
        if ((l->done || !link_open(l)) && !l->reaped && !l->awaiting && link_direct(l) &&
            (!link_open(l) || !tree_busy_below(fe, l))) {
            if (l->linger_by == 0)
                l->linger_by = now + LINGER_WAIT;
            if (now >= l->linger_by && l->pid > 0) {
                if (!l->done)
                    link_lost(fe, l);
                if (!srun_in_use(fe, l)) {
                    kill(-l->pid, SIGKILL);
                    kill(l->pid, SIGKILL);
                }
                l->linger_by = now + LINGER_WAIT;
            }
        }
    }
    if (fe->ncleaners > 0 && now >= fe->cleaners_by) {
        for (int i = 0; i < fe->nlinks; i++) {
            fe_link_t *l = &fe->links[i];
            for (int k = 0; l->cleaner > 0 && k < fe->ncleaners; k++)
                if (fe->cleaners[k] == l->cleaner) {
                    fprintf(stderr, "locusrun: could not reach %s to end the job there: "
                            "processes of the job may remain on it\n", l->host);
                    l->cleaner = 0;
                }
        }
        for (int i = 0; i < fe->ncleaners; i++)
            kill(-fe->cleaners[i], SIGKILL);
    }
}

static int links_finished(const fe_t *fe)
{
    for (int i = 0; i < fe->nlinks; i++)
        if (link_open(&fe->links[i]) || !fe->links[i].reaped)
            return 0;
    return fe->ncleaners == 0;
}

void fe_loop(fe_t *fe)
{
    double deadline = fe->o->timeout_s > 0 ? launch_now() + fe->o->timeout_s : 0;
    int timed_out = 0;
    size_t cap = (size_t)fe->nlinks + 3 + CB_PENDING_MAX;
    struct pollfd *fds = calloc(cap, sizeof *fds);
    fe_link_t **who = calloc(cap, sizeof *who);
    if (fds == NULL || who == NULL) {
        fe_fail(fe, 1, "out of memory");
        fe_kill_all(fe, 1);
    }
    while (fds && who) {
        double now = launch_now();
        if (deadline > 0 && !timed_out && now >= deadline) {
            timed_out = 1;
            fe_fail(fe, 124, "timeout: killing the job after %g s", fe->o->timeout_s);
            fe_kill_all(fe, 0);
        }
        links_check(fe, now);
        cb_expire(fe, now);
        tree_route_flush(fe);
        if (links_finished(fe))
            break;
        int n = 0, si = -1;
        fds[n] = (struct pollfd){ .fd = fe->sigfd, .events = POLLIN };
        who[n++] = NULL;
        for (int i = 0; i < fe->nlinks; i++) {
            fe_link_t *l = &fe->links[i];
            if (l->fd < 0)
                continue;
            if (l->out.len > 0 && ctl_outq_flush(&l->out, l->fd) < 0)
                continue;  /* gone: the read side sees it */
            fds[n] = (struct pollfd){ .fd = l->fd,
                                      .events = (short)(POLLIN | (l->out.len ? POLLOUT : 0)) };
            who[n++] = l;
        }
        if (!fe->stdin_done && !fe->killing && fe->stdin_inflight < STDIN_INFLIGHT_MAX) {
            si = n;
            fds[n++] = (struct pollfd){ .fd = 0, .events = POLLIN };
        }
        int cb_at = n, cb_n = cb_fds(fe, fds + n);
        for (int i = 0; i < cb_n; i++)
            who[n++] = NULL;
        int timeout = 200;
        if (deadline > 0 && !timed_out) {
            int t = (int)((deadline - now) * 1000) + 1;
            timeout = t < timeout ? t : timeout;
        }
        int rc = poll(fds, (nfds_t)n, timeout);
        if (rc < 0 && errno != EINTR)
            break;
        if (rc > 0 && cb_n > 0)
            cb_ready(fe, fds + cb_at, cb_n);
        for (int i = 0; rc > 0 && i < cb_at; i++) {
            if (fds[i].revents == 0)
                continue;
            if (i == 0) {
                struct signalfd_siginfo sinfo;
                while (read(fe->sigfd, &sinfo, sizeof sinfo) == (ssize_t)sizeof sinfo)
                    fe_signal(fe, (int)sinfo.ssi_signo);
            } else if (i == si) {
                fe_stdin(fe);
            } else if (who[i]->fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
                link_read(fe, who[i]);
            }
        }
    }
    free(fds);
    free(who);
}
