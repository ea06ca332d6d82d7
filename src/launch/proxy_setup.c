/*
 * proxy_setup.c — the proxy's side of the setup messages (job, tun, cwd,
 * exe, arg, env, uenv, place, report, rank, start) that describe its
 * node's part of the job.
 */
#include "proxy.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int push_str(char ***arr, int *n, const char *s, size_t len)
{
    char **na = realloc(*arr, (size_t)(*n + 2) * sizeof *na);
    if (na == NULL)
        return -1;
    *arr = na;
    na[*n] = strndup(s, len);
    na[++*n] = NULL;
    return 0;
}

/* A tunable for this proxy and its ranks (the front end forwards those
 * set where it runs, as Open MPI forwards OMPI_MCA_*). */
static int set_tunable(const char *kv)
{
    const char *eq = strchr(kv, '=');
    if (strncmp(kv, "LOCUS_", 6) != 0 || eq == NULL || eq - kv > 128)
        return -1;
    char name[160];
    snprintf(name, sizeof name, "%.*s", (int)(eq - kv), kv);
    return setenv(name, eq + 1, 1);
}

static int setup_job(proxy_t *px, const ctl_msg_t *m)
{
    int ok = 1, ok2 = 1;
    if (!launch_jobid_ok(m->words[1]))
        return -1;
    snprintf(px->jobid, sizeof px->jobid, "%s", m->words[1]);
    snprintf(px->kvsname, sizeof px->kvsname, "kvs_%s", px->jobid);
    px->size = (int)ctl_word_long(m, 2, &ok);
    px->nodeid = (int)ctl_word_long(m, 3, &ok2);
    ok &= ok2;
    px->nnodes = (int)ctl_word_long(m, 4, &ok2);
    ok &= ok2;
    snprintf(px->mapping, sizeof px->mapping, "%s", m->words[5]);
    px->grace = strtod(m->words[6], NULL);
    px->pmi_trace = (int)ctl_word_long(m, 7, &ok2);
    snprintf(px->host, sizeof px->host, "%s", m->words[8]);
    return ok && ok2 && px->size > 0 && px->nnodes > 0 && px->nodeid >= 0 &&
           px->nodeid < px->nnodes ? 0 : -1;
}

static int setup_rank(proxy_t *px, const ctl_msg_t *m)
{
    int ok = 1, ok2 = 1;
    long r = ctl_word_long(m, 1, &ok), local = ctl_word_long(m, 2, &ok2);
    if (!ok || !ok2 || r < 0 || r >= px->size || local != px->nlocal)
        return -1;
    prank_t *na = realloc(px->ranks, (size_t)(px->nlocal + 1) * sizeof *na);
    if (na == NULL)
        return -1;
    px->ranks = na;
    prank_t *p = &na[px->nlocal++];
    memset(p, 0, sizeof *p);
    p->rank = (int)r;
    p->local = (int)local;
    p->pmi_fd = p->out_fd[0] = p->out_fd[1] = -1;
    return 0;
}

/* Setup messages before `start`. Returns 1 at start, 0 to go on, -1 bad. */
static int setup_msg(proxy_t *px, const ctl_msg_t *m)
{
    const char *v = m->words[0];
    if (!strcmp(v, "job") && m->nwords == 9)
        return setup_job(px, m);
    if (px->jobid[0] == '\0')
        return -1;  /* everything else comes after the job */
    if (!strcmp(v, "tun") && m->nwords == 2)
        return set_tunable(m->words[1]);
    if (!strcmp(v, "cwd") && m->nwords == 2) {
        free(px->cwd);
        px->cwd = strdup(m->words[1]);
        return 0;
    }
    if (!strcmp(v, "exe") && m->nwords == 2) {
        free(px->exe);
        px->exe = strdup(m->words[1]);
        return 0;
    }
    if (!strcmp(v, "arg") && m->nwords == 2)
        return push_str(&px->argv, &px->argc, m->words[1], m->lens[1]);
    if (!strcmp(v, "env") && m->nwords == 2)
        return push_str(&px->env, &px->nenv, m->words[1], m->lens[1]);
    if (!strcmp(v, "uenv") && m->nwords == 2)
        return push_str(&px->uenv, &px->nuenv, m->words[1], m->lens[1]);
    if (!strcmp(v, "place") && m->nwords == 2)
        return push_str(&px->place, &px->nplace, m->words[1], m->lens[1]);
    if (!strcmp(v, "report") && m->nwords == 1) {
        px->report = 1;
        return 0;
    }
    if (!strcmp(v, "pmix") && m->nwords == 3)
        return proxy_pmix_setup(px, m->words[1], m->words[2]);
    int tree = proxy_tree_setup(px, m);
    if (tree != 0)
        return tree > 0 ? 0 : -1;
    if (!strcmp(v, "rank") && m->nwords == 3)
        return setup_rank(px, m);
    if (!strcmp(v, "start"))
        return px->exe && px->argc > 0 && px->nlocal > 0 ? 1 : -1;
    return -1;
}

/* Reads setup messages until `start`. Returns 0, or -1 (message sent). */
int proxy_setup_read(proxy_t *px, ctl_msg_t *m)
{
    for (;;) {
        int rc;
        const char *line;
        size_t len;
        while ((rc = ctl_reader_line(&px->rd, &line, &len)) != 0) {
            /* Setup for the nodes below this one goes on at once. */
            int routed = rc > 0 ? proxy_tree_route(px, line, len) : -1;
            if (routed > 0)
                continue;
            if (routed == 0)
                rc = ctl_decode(line, len, m);
            int st = rc > 0 && routed == 0 ? setup_msg(px, m) : -1;
            if (st < 0) {
                ctl_sendl(px->ctl_out, "error", "proxy: bad setup message",
                          routed < 0 ? "via (a node not below this one)"
                          : rc > 0 ? m->words[0] : "(malformed)", (char *)NULL);
                return -1;
            }
            if (st == 1)
                return 0;
        }
        struct pollfd p = { .fd = px->ctl_in, .events = POLLIN };
        long got = poll(&p, 1, 10000) > 0 ? ctl_reader_fill(&px->rd) : -1;
        if (got <= 0)
            return -1;  /* front end gone or silent: nothing started yet */
        px->served.ctl_in += got;
    }
}

