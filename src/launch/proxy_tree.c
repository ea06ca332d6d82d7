/*
 * proxy_tree.c — a proxy's children in a tree of proxies
 * (LOCUS_LAUNCH_FANOUT, fe_tree.c). The front end tells an inner proxy
 * how to launch (`launch`), its children (`child NODE HOST`, started at
 * once), which child every node further below is reached through
 * (`below KID NODE`) and their ranks (`subranks NODE FIRST COUNT`).
 *
 * Down, a line "via NODE msg" from the parent goes to the child NODE as
 * msg, or unchanged to the child NODE is below. Up, a child's own lines go
 * to the parent as "via CHILD msg" and its routed lines unchanged, except
 * its fences: those are combined here with this node's own and those of
 * the other children, and one `fence` goes up when the whole subtree has
 * arrived, with the pairs the subtree put (fence.c). barrier_out and the
 * pairs from above come down the same way. So the bytes into a node grow
 * with the job's pairs, never with the number of nodes times them.
 *
 * Writes up block (as every proxy's do: the front end never does), writes
 * down are queued, so a slow child never stalls the rest of the tree.
 */
#include "proxy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* A child that said done (or hung up) but whose launcher lingers is
 * killed after this long (the front end's own bound for its children). */
#define KID_LINGER 3.0
/* After this proxy's own stream closed, children get this long to end. */
#define KID_LOST_WAIT 1.0

static pkid_t *kid_of_node(proxy_t *px, long node)
{
    for (int i = 0; i < px->tree.nkids; i++)
        if (px->tree.kids[i].node == node)
            return &px->tree.kids[i];
    return NULL;
}

static int below_alloc(proxy_t *px)
{
    ptree_t *t = &px->tree;
    if (t->below == NULL) {
        if (px->nnodes <= 0 || (t->below = malloc((size_t)px->nnodes * sizeof *t->below)) == NULL)
            return -1;
        for (int i = 0; i < px->nnodes; i++)
            t->below[i] = -1;
    }
    if (t->slot_of == NULL) {
        if ((t->slot_of = malloc((size_t)px->size * sizeof *t->slot_of)) == NULL)
            return -1;
        for (int r = 0; r < px->size; r++)
            t->slot_of[r] = -1;
    }
    return 0;
}

static void kid_start(proxy_t *px, pkid_t *k)
{
    k->fd = -1;
    ctl_reader_init(&k->rd, -1);
    if (launch_proxy_start(&px->tree.via, k->host, &k->pid, &k->fd) < 0) {
        /* Reported up as a launcher that ended before its proxy answered. */
        k->reaped = 1;
        k->wstatus = 127 << 8;
        return;
    }
    ctl_reader_init(&k->rd, k->fd);
}

static int setup_child(proxy_t *px, const ctl_msg_t *m)
{
    ptree_t *t = &px->tree;
    int ok;
    long node = ctl_word_long(m, 1, &ok);
    if (!ok || t->via.proxy_path == NULL || below_alloc(px) < 0 || node < 0 ||
        node >= px->nnodes || node == px->nodeid || t->below[node] >= 0)
        return -1;
    pkid_t *nk = realloc(t->kids, (size_t)(t->nkids + 1) * sizeof *nk);
    if (nk == NULL)
        return -1;
    t->kids = nk;
    pkid_t *k = &nk[t->nkids];
    memset(k, 0, sizeof *k);
    k->node = (int)node;
    k->host = strdup(m->words[2]);
    if (k->host == NULL)
        return -1;
    t->below[node] = t->nkids++;
    kid_start(px, k);
    return 1;
}

int proxy_tree_setup(proxy_t *px, const ctl_msg_t *m)
{
    ptree_t *t = &px->tree;
    const char *v = m->words[0];
    int ok, ok2, ok3;
    if (!strcmp(v, "launch") && m->nwords == 5) {
        if (t->via.proxy_path != NULL)
            return -1;
        t->proxy_path = strdup(m->words[2]);
        t->exec = m->lens[4] ? strdup(m->words[4]) : NULL;
        t->via = (launch_via_t){ .how = !strcmp(m->words[1], "ssh") ? LAUNCHER_SSH
                                                                    : LAUNCHER_EXEC,
                                 .exec = t->exec, .proxy_path = t->proxy_path,
                                 .jobid = px->jobid, .timeout = strtod(m->words[3], NULL),
                                 .unblock = &px->sigs };
        if (t->proxy_path == NULL || (m->lens[4] && t->exec == NULL) ||
            (strcmp(m->words[1], "ssh") && strcmp(m->words[1], "exec")) ||
            !(t->via.timeout > 0))
            return -1;
        return 1;
    }
    if (!strcmp(v, "child") && m->nwords == 3)
        return setup_child(px, m);
    if (!strcmp(v, "below") && m->nwords == 3) {
        long kid = ctl_word_long(m, 1, &ok), node = ctl_word_long(m, 2, &ok2);
        pkid_t *k = ok ? kid_of_node(px, kid) : NULL;
        if (k == NULL || !ok2 || node < 0 || node >= px->nnodes || node == px->nodeid)
            return -1;
        t->below[node] = (int)(k - t->kids);
        return 1;
    }
    if (!strcmp(v, "subranks") && m->nwords == 4) {
        long node = ctl_word_long(m, 1, &ok), first = ctl_word_long(m, 2, &ok2);
        long count = ctl_word_long(m, 3, &ok3);
        if (!ok || !ok2 || !ok3 || t->below == NULL || node < 0 || node >= px->nnodes ||
            t->below[node] < 0 || first < 0 || count <= 0 || first + count > px->size)
            return -1;
        for (long r = first; r < first + count; r++)
            t->slot_of[r] = 1 + t->below[node];
        return 1;
    }
    return 0;
}

static void kid_flush(pkid_t *k)
{
    if (k->fd >= 0 && k->out.len > 0 && ctl_outq_flush(&k->out, k->fd) < 0)
        k->out.len = 0;  /* gone: its read side sees it */
}

int proxy_tree_route(proxy_t *px, const char *line, size_t len)
{
    long node;
    const char *rest;
    size_t rlen;
    int via = ctl_line_via(line, len, &node, &rest, &rlen);
    if (via <= 0)
        return via;
    ptree_t *t = &px->tree;
    if (t->below == NULL || node < 0 || node >= px->nnodes || t->below[node] < 0)
        return -1;
    pkid_t *k = &t->kids[t->below[node]];
    if (k->fd < 0)
        return 1;  /* that branch is gone; the front end hears of it */
    if (k->node == node)
        ctl_queue_raw(&k->out, -1, rest, rlen);
    else
        ctl_queue_raw(&k->out, -1, line, len);
    kid_flush(k);
    return 1;
}

void proxy_tree_start(proxy_t *px)
{
    ptree_t *t = &px->tree;
    if (t->nkids == 0 || below_alloc(px) < 0)
        return;
    for (int i = 0; i < px->nlocal; i++)
        t->slot_of[px->ranks[i].rank] = 0;
    /* The front end's bounds (frontend.c), for this subtree's share. */
    size_t kvs_max = ((size_t)px->kvs_bytes_max + 2 * (size_t)px->kvs_keys_max) *
                     (size_t)px->size;
    long fences = (px->barriers_max + 1) * (long)px->size;
    fence_init(&t->agg, 1 + t->nkids, px->size, t->slot_of, kvs_max,
               (int)(fences > 1000000 ? 1000000 : fences));
    t->agg.relay_up = 1;
    t->agg_on = 1;
}

static void send_up_pair(void *ctx, const char *key, const char *val)
{
    proxy_t *px = ctx;
    ctl_sendl(px->ctl_out, "kvs", key, val, (char *)NULL);
}

/* The whole subtree arrived at group: its pairs, then one fence, go up. */
static void agg_up(proxy_t *px, const char *group)
{
    fence_take_up(&px->tree.agg, send_up_pair, px);
    ctl_sendl(px->ctl_out, "fence", group, (char *)NULL);
    px->served.fences_relayed++;
}

int proxy_up_pair(proxy_t *px, const char *key, const char *val)
{
    if (!px->tree.agg_on)
        return ctl_sendl(px->ctl_out, "kvs", key, val, (char *)NULL);
    return fence_pair(&px->tree.agg, 0, key, val);
}

/* Slot arrived at group; a group it cannot be in fails the job. */
static int agg_arrive(proxy_t *px, int slot, const char *group)
{
    char err[256];
    int rc = fence_arrive(&px->tree.agg, slot, group, err, sizeof err);
    if (rc > 0)
        agg_up(px, group);
    else if (rc < 0)
        proxy_fail(px, NULL, 1, "%s: %s", px->host, err);
    return rc < 0 ? -1 : 0;
}

int proxy_up_fence(proxy_t *px, const char *group)
{
    if (px->tree.agg_on)
        return agg_arrive(px, 0, group);
    px->served.fences_relayed++;
    return ctl_sendl(px->ctl_out, "fence", group, (char *)NULL);
}

void proxy_tree_kvs(proxy_t *px, const char *key, const char *val)
{
    if (proxy_kvs_remote(px, key, val) < 0 ||
        (px->tree.agg_on && fence_pair(&px->tree.agg, -1, key, val) < 0))
        proxy_fail(px, NULL, 1, "%s: out of memory for the key-value store", px->host);
}

static void down_send(void *ctx, int slot, const char *verb, const char *w1, const char *w2)
{
    proxy_t *px = ctx;
    if (slot == 0) {
        if (!strcmp(verb, "kvs"))
            proxy_kvs_remote(px, w1, w2);
        else
            proxy_pmi_barrier_done(px, w1);
        return;
    }
    pkid_t *k = &px->tree.kids[slot - 1];
    if (k->fd >= 0)
        ctl_queuel(&k->out, verb, w1, w2, (char *)NULL);
}

void proxy_tree_barrier_out(proxy_t *px, const char *group)
{
    if (!px->tree.agg_on) {
        proxy_pmi_barrier_done(px, group);
        return;
    }
    fence_complete(&px->tree.agg, group, down_send, px);
    for (int i = 0; i < px->tree.nkids; i++)
        kid_flush(&px->tree.kids[i]);
}

/* Sends up, on behalf of node: verb and one word. */
static void up_routed(proxy_t *px, int node, const char *verb, const char *word)
{
    ctl_outq_t q = { 0 };
    if (ctl_queuel(&q, verb, word, (char *)NULL) == 0)
        ctl_send_raw(px->ctl_out, node, q.buf, q.len - 1);
    ctl_outq_free(&q);
}

/* One line from child k. */
static void kid_line(proxy_t *px, pkid_t *k, const char *line, size_t len, ctl_msg_t *m)
{
    long node;
    const char *rest;
    size_t rlen;
    int via = ctl_line_via(line, len, &node, &rest, &rlen);
    int slot = 1 + (int)(k - px->tree.kids);
    if (via != 0) {
        if (via < 0 || node < 0 || node >= px->nnodes || node == k->node ||
            px->tree.below[node] != slot - 1) {
            proxy_fail(px, NULL, 1, "%s: the proxy on %s routed a message from a node not "
                       "below it", px->host, k->host);
            return;
        }
        ctl_send_raw(px->ctl_out, -1, line, len);
        return;
    }
    int kvs = len > 4 && !memcmp(line, "kvs ", 4);
    int fence = len > 6 && !memcmp(line, "fence ", 6);
    if (!kvs && !fence) {
        k->done |= len == 4 && !memcmp(line, "done", 4);
        ctl_send_raw(px->ctl_out, k->node, line, len);
        return;
    }
    if (ctl_decode(line, len, m) < 0 || m->nwords != (kvs ? 3 : 2) || !px->tree.agg_on) {
        proxy_fail(px, NULL, 1, "%s: the proxy on %s sent a malformed %s", px->host, k->host,
                   kvs ? "pair" : "fence");
    } else if (kvs) {
        if (fence_pair(&px->tree.agg, slot, m->words[1], m->words[2]) < 0)
            proxy_fail(px, NULL, 1, "%s: the proxy on %s sent more key-value data than its "
                       "ranks may put", px->host, k->host);
    } else {
        agg_arrive(px, slot, m->words[1]);
    }
}

static void kid_read(proxy_t *px, pkid_t *k)
{
    long got = ctl_reader_fill(&k->rd);
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return;
    ctl_msg_t m = { 0 };
    const char *line;
    size_t len;
    int rc;
    while ((rc = ctl_reader_line(&k->rd, &line, &len)) != 0)
        if (rc > 0)
            kid_line(px, k, line, len, &m);
    ctl_msg_free(&m);
    if (got <= 0) {
        close(k->fd);
        k->fd = -1;
        ctl_outq_free(&k->out);
    }
}

int proxy_tree_fds(proxy_t *px, struct pollfd *fds, int *kid)
{
    int n = 0;
    for (int i = 0; i < px->tree.nkids; i++) {
        pkid_t *k = &px->tree.kids[i];
        if (k->fd < 0)
            continue;
        kid_flush(k);
        fds[n] = (struct pollfd){ .fd = k->fd,
                                  .events = (short)(POLLIN | (k->out.len ? POLLOUT : 0)) };
        kid[n++] = i;
    }
    return n;
}

void proxy_tree_ready(proxy_t *px, const struct pollfd *fds, const int *kid, int n)
{
    for (int i = 0; i < n; i++) {
        pkid_t *k = &px->tree.kids[kid[i]];
        if (fds[i].revents & POLLOUT)
            kid_flush(k);
        if (k->fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
            kid_read(px, k);
    }
}

/* Child k is ending (its proxy said done or hung up, or this proxy's own
 * stream closed) and its launcher is still to be reaped. */
static int kid_settling(const proxy_t *px, const pkid_t *k)
{
    return !k->reaped && (k->done || k->fd < 0 || px->ctl_lost);
}

void proxy_tree_check(proxy_t *px, double now)
{
    for (int i = 0; i < px->tree.nkids; i++) {
        pkid_t *k = &px->tree.kids[i];
        if (!k->reaped && k->pid > 0) {
            int st;
            pid_t r;
            while ((r = waitpid(k->pid, &st, WNOHANG)) < 0 && errno == EINTR)
                ;
            if (r == k->pid) {
                k->reaped = 1;
                k->wstatus = st;
            }
        }
        if (k->fd < 0 && k->reaped && !k->gone_sent) {
            char st[16];
            snprintf(st, sizeof st, "%d", k->wstatus);
            if (!px->ctl_lost)
                up_routed(px, k->node, "gone", st);
            k->gone_sent = 1;
        }
        if (kid_settling(px, k)) {
            if (k->linger_by == 0)
                k->linger_by = now + (px->ctl_lost ? KID_LOST_WAIT : KID_LINGER);
            if (now >= k->linger_by) {
                kill(-k->pid, SIGKILL);
                kill(k->pid, SIGKILL);
            }
        }
    }
}

int proxy_tree_busy(const proxy_t *px)
{
    for (int i = 0; i < px->tree.nkids; i++)
        if (px->tree.kids[i].fd >= 0 || !px->tree.kids[i].reaped)
            return 1;
    return 0;
}

int proxy_tree_settling(const proxy_t *px)
{
    for (int i = 0; i < px->tree.nkids; i++)
        if (kid_settling(px, &px->tree.kids[i]))
            return 1;
    return 0;
}

void proxy_tree_lost(proxy_t *px)
{
    /* A closed stream ends each child's proxy, which ends its ranks. */
    for (int i = 0; i < px->tree.nkids; i++) {
        pkid_t *k = &px->tree.kids[i];
        if (k->fd >= 0) {
            close(k->fd);
            k->fd = -1;
            ctl_outq_free(&k->out);
        }
    }
}

void proxy_tree_drop(proxy_t *px, long node)
{
    pkid_t *k = kid_of_node(px, node);
    if (k != NULL && !k->reaped && k->pid > 0) {
        kill(-k->pid, SIGKILL);
        kill(k->pid, SIGKILL);
    }
}

void proxy_tree_free(proxy_t *px)
{
    ptree_t *t = &px->tree;
    for (int i = 0; i < t->nkids; i++) {
        if (t->kids[i].fd >= 0)
            close(t->kids[i].fd);
        ctl_reader_free(&t->kids[i].rd);
        ctl_outq_free(&t->kids[i].out);
        free(t->kids[i].host);
    }
    free(t->kids);
    free(t->below);
    free(t->slot_of);
    free(t->proxy_path);
    free(t->exec);
    if (t->agg_on)
        fence_free(&t->agg);
    memset(t, 0, sizeof *t);
}
