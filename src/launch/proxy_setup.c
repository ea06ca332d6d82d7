/*
 * proxy_setup.c — the proxy's side of the setup messages (job, exe, arg,
 * env, rank, renv, start) that describe its node's part of the job.
 */
#include "proxy.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_list(const char *s, int **out)
{
    int n = 0;
    *out = NULL;
    if (s[0] == '\0' || strcmp(s, "-") == 0)
        return 0;
    for (const char *c = s; *c; c++)
        n += *c == ',';
    *out = calloc((size_t)n + 1, sizeof **out);
    if (*out == NULL)
        return 0;
    n = 0;
    for (const char *c = s; *c;) {
        (*out)[n++] = (int)strtol(c, (char **)&c, 10);
        if (*c == ',')
            c++;
        else if (*c)
            break;
    }
    return n;
}

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

static prank_t *rank_by_global(proxy_t *px, long r)
{
    for (int i = 0; i < px->nlocal; i++)
        if (px->ranks[i].rank == r)
            return &px->ranks[i];
    return NULL;
}

/* Setup messages before `start`. Returns 1 at start, 0 to go on, -1 bad. */
static int setup_msg(proxy_t *px, const ctl_msg_t *m)
{
    const char *v = m->words[0];
    int ok = 1, ok2 = 1;
    if (!strcmp(v, "job") && m->nwords == 8) {
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
        return ok && ok2 && px->size > 0 ? 0 : -1;
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
    if (!strcmp(v, "rank") && m->nwords == 6) {
        prank_t *na = realloc(px->ranks, (size_t)(px->nlocal + 1) * sizeof *na);
        if (na == NULL)
            return -1;
        px->ranks = na;
        prank_t *p = &na[px->nlocal++];
        memset(p, 0, sizeof *p);
        p->rank = (int)ctl_word_long(m, 1, &ok);
        p->local = (int)ctl_word_long(m, 2, &ok2);
        p->bound = (int)ctl_word_long(m, 3, &ok2) && ok2;
        p->ncpus = parse_list(m->words[4], &p->cpus);
        p->nnuma = parse_list(m->words[5], &p->numa);
        p->pmi_fd = p->out_fd[0] = p->out_fd[1] = -1;
        return ok ? 0 : -1;
    }
    if (!strcmp(v, "renv") && m->nwords == 3) {
        prank_t *p = rank_by_global(px, ctl_word_long(m, 1, &ok));
        return p ? push_str(&p->env, &p->nenv, m->words[2], m->lens[2]) : -1;
    }
    if (!strcmp(v, "start"))
        return px->exe && px->argc > 0 && px->nlocal > 0 ? 1 : -1;
    return -1;
}

/* Reads setup messages until `start`. Returns 0, or -1 (message sent). */
int proxy_setup_read(proxy_t *px, ctl_msg_t *m)
{
    for (;;) {
        int rc;
        while ((rc = ctl_reader_next(&px->rd, m)) != 0) {
            int st = rc > 0 ? setup_msg(px, m) : -1;
            if (st < 0) {
                ctl_sendl(px->ctl_out, "error", "proxy: bad setup message",
                          rc > 0 ? m->words[0] : "(malformed)", (char *)NULL);
                return -1;
            }
            if (st == 1)
                return 0;
        }
        struct pollfd p = { .fd = px->ctl_in, .events = POLLIN };
        if (poll(&p, 1, 10000) <= 0 || ctl_reader_fill(&px->rd) <= 0)
            return -1;  /* front end gone or silent: nothing started yet */
    }
}

