/*
 * hosts.c — host lists, hostfiles and the rank layout over nodes (see
 * hosts.h). Everything is checked here, before anything starts, so bad
 * input ends with one line and exit status 2.
 */
#include "hosts.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* More slots than this on one host is surely a typo. */
#define SLOTS_MAX 100000

int hosts_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > LAUNCH_HOST_MAX || name[0] == '-' || name[0] == '.')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)name[i]) && name[i] != '.' && name[i] != '-' &&
            name[i] != '_')
            return 0;
    return 1;
}

static int parse_slots(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0 || v <= 0 || v > SLOTS_MAX)
        return -1;
    *out = (int)v;
    return 0;
}

int hosts_add(launch_hosts_t *h, const char *name, int slots)
{
    for (int i = 0; i < h->n; i++) {
        if (strcmp(h->hosts[i].name, name) == 0) {
            if (h->hosts[i].slots > SLOTS_MAX - slots)
                return -1;
            h->hosts[i].slots += slots;
            return 0;
        }
    }
    launch_host_t *nh = realloc(h->hosts, (size_t)(h->n + 1) * sizeof *nh);
    if (nh == NULL)
        return -1;
    h->hosts = nh;
    snprintf(nh[h->n].name, sizeof nh[h->n].name, "%s", name);
    nh[h->n].slots = slots;
    h->n++;
    return 0;
}

/* "host" or "host:N" into name/slots; -1 with a reason. */
static int parse_host_word(const char *w, char *name, int *slots, char *err, size_t errlen)
{
    const char *colon = strchr(w, ':');
    size_t nlen = colon ? (size_t)(colon - w) : strlen(w);
    if (nlen == 0) {
        snprintf(err, errlen, "'%s': empty host name", w);
        return -1;
    }
    if (nlen > LAUNCH_HOST_MAX) {
        snprintf(err, errlen, "'%.40s...': host name longer than %d bytes", w, LAUNCH_HOST_MAX);
        return -1;
    }
    memcpy(name, w, nlen);
    name[nlen] = '\0';
    if (!hosts_name_ok(name)) {
        snprintf(err, errlen, "'%s': not a host name (letters, digits, '.', '-', '_'; "
                 "not starting with '-')", name);
        return -1;
    }
    *slots = 1;
    if (colon && parse_slots(colon + 1, slots) < 0) {
        snprintf(err, errlen, "'%s': slot count '%s' is not a positive integer", w, colon + 1);
        return -1;
    }
    return 0;
}

int hosts_parse_list(launch_hosts_t *h, const char *list, char *err, size_t errlen)
{
    if (list[0] == '\0') {
        snprintf(err, errlen, "empty host list");
        return -1;
    }
    const char *p = list;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char word[LAUNCH_HOST_MAX + 32], name[LAUNCH_HOST_MAX + 1];
        int slots;
        if (len == 0) {
            snprintf(err, errlen, "'%s': empty host name in the list", list);
            return -1;
        }
        if (len >= sizeof word) {
            snprintf(err, errlen, "'%.40s...': host name too long", p);
            return -1;
        }
        memcpy(word, p, len);
        word[len] = '\0';
        if (parse_host_word(word, name, &slots, err, errlen) < 0)
            return -1;
        if (hosts_add(h, name, slots) < 0) {
            snprintf(err, errlen, "'%s': too many slots", name);
            return -1;
        }
        if (comma == NULL)
            return 0;
        p = comma + 1;
    }
}

/* One hostfile line (comment already cut). 0: nothing on it, 1: a host. */
static int parse_file_line(char *line, char *name, int *slots, char *err, size_t errlen)
{
    char *save = NULL;
    char *w = strtok_r(line, " \t\r\n", &save);
    if (w == NULL)
        return 0;
    if (parse_host_word(w, name, slots, err, errlen) < 0)
        return -1;
    int had_colon = strchr(w, ':') != NULL, had_slots = 0;
    while ((w = strtok_r(NULL, " \t\r\n", &save)) != NULL) {
        if (strncmp(w, "slots=", 6) == 0) {
            if (had_colon || had_slots) {
                snprintf(err, errlen, "'%s': the slot count is given twice", w);
                return -1;
            }
            if (parse_slots(w + 6, slots) < 0) {
                snprintf(err, errlen, "'%s': slot count is not a positive integer", w);
                return -1;
            }
            had_slots = 1;
        } else if (strncmp(w, "max_slots=", 10) == 0 || strncmp(w, "max-slots=", 10) == 0) {
            int max;  /* Open MPI's hard limit: only checked for sanity */
            if (parse_slots(w + 10, &max) < 0) {
                snprintf(err, errlen, "'%s': not a positive integer", w);
                return -1;
            }
        } else {
            snprintf(err, errlen, "'%s': unknown attribute (expected slots=N)", w);
            return -1;
        }
    }
    return 1;
}

int hosts_parse_file(launch_hosts_t *h, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char line[4096], why[512], name[LAUNCH_HOST_MAX + 1];
    int lineno = 0, added = 0, rc = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        lineno++;
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n') {
            snprintf(err, errlen, "%s:%d: line too long", path, lineno);
            rc = -1;
            break;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        int slots;
        int got = parse_file_line(line, name, &slots, why, sizeof why);
        if (got < 0 || (got == 1 && hosts_add(h, name, slots) < 0)) {
            snprintf(err, errlen, "%s:%d: %s", path, lineno, got < 0 ? why : "too many slots");
            rc = -1;
            break;
        }
        added += got;
    }
    if (rc == 0 && ferror(f)) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        rc = -1;
    }
    fclose(f);
    if (rc == 0 && added == 0) {
        snprintf(err, errlen, "%s: no hosts in the file", path);
        rc = -1;
    }
    return rc;
}

void hosts_free(launch_hosts_t *h)
{
    free(h->hosts);
    h->hosts = NULL;
    h->n = 0;
}

/* ---- layout ------------------------------------------------------------ */

void layout_free(launch_layout_t *l)
{
    free(l->node_host);
    free(l->node_nranks);
    free(l->node_of);
    free(l->local_of);
    memset(l, 0, sizeof *l);
}

/* Ranks per host: up to each host's capacity, then (oversubscribed) one
 * more per host in turn. by_node deals ranks round-robin; by slot fills. */
static void count_per_host(const launch_hosts_t *h, const int *cap, int nranks, int by_node,
                           int *count)
{
    int left = nranks;
    if (by_node) {
        while (left > 0) {
            int placed = 0;
            for (int i = 0; i < h->n && left > 0; i++) {
                if (count[i] < cap[i]) {
                    count[i]++;
                    left--;
                    placed = 1;
                }
            }
            if (!placed)
                break;
        }
    } else {
        for (int i = 0; i < h->n && left > 0; i++) {
            count[i] = cap[i] < left ? cap[i] : left;
            left -= count[i];
        }
    }
    for (int i = 0; left > 0; i = (i + 1) % h->n) {
        count[i]++;
        left--;
    }
}

int layout_make(launch_layout_t *l, const launch_hosts_t *h, int nranks, int ppn,
                int by_node, int oversubscribe, char *err, size_t errlen)
{
    memset(l, 0, sizeof *l);
    int *cap = calloc((size_t)h->n, sizeof *cap);
    int *count = calloc((size_t)h->n, sizeof *count);
    long total = 0;
    if (cap == NULL || count == NULL) {
        free(cap);
        free(count);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < h->n; i++) {
        cap[i] = ppn > 0 ? ppn : h->hosts[i].slots;
        total += cap[i];
    }
    if (nranks > total && !oversubscribe) {
        if (ppn > 0)
            snprintf(err, errlen, "%d ranks but --ppn %d on %d host%s allows only %ld "
                     "(add --oversubscribe to place more)", nranks, ppn, h->n,
                     h->n == 1 ? "" : "s", total);
        else
            snprintf(err, errlen, "%d ranks but only %ld slot%s on %d host%s (add "
                     "--oversubscribe to allow more ranks than slots)", nranks, total,
                     total == 1 ? "" : "s", h->n, h->n == 1 ? "" : "s");
        free(cap);
        free(count);
        return -1;
    }
    count_per_host(h, cap, nranks, by_node, count);
    free(cap);
    l->nranks = nranks;
    for (int i = 0; i < h->n; i++)
        l->nnodes += count[i] > 0;
    l->node_host = calloc((size_t)l->nnodes, sizeof *l->node_host);
    l->node_nranks = calloc((size_t)l->nnodes, sizeof *l->node_nranks);
    l->node_of = calloc((size_t)nranks, sizeof *l->node_of);
    l->local_of = calloc((size_t)nranks, sizeof *l->local_of);
    if (!l->node_host || !l->node_nranks || !l->node_of || !l->local_of) {
        free(count);
        layout_free(l);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int *host_node = calloc((size_t)h->n, sizeof *host_node);
    if (host_node == NULL) {
        free(count);
        layout_free(l);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0, n = 0; i < h->n; i++) {
        host_node[i] = -1;
        if (count[i] > 0) {
            host_node[i] = n;
            l->node_host[n++] = i;
        }
    }
    /* Rank numbers: by slot, consecutive ranks share a node; by node,
     * consecutive ranks go round-robin over the nodes with room left. */
    int r = 0;
    if (by_node) {
        while (r < nranks) {
            for (int n = 0; n < l->nnodes && r < nranks; n++) {
                int host = l->node_host[n];
                if (l->node_nranks[n] < count[host]) {
                    l->node_of[r] = n;
                    l->local_of[r++] = l->node_nranks[n]++;
                }
            }
        }
    } else {
        for (int n = 0; n < l->nnodes; n++) {
            for (int k = 0; k < count[l->node_host[n]]; k++) {
                l->node_of[r] = n;
                l->local_of[r++] = l->node_nranks[n]++;
            }
        }
    }
    free(host_node);
    free(count);
    return 0;
}

/* Blocks "(start,nnodes,ppn)" of a node sequence: runs of one node, then
 * runs of equal length on consecutive nodes merged. */
typedef struct {
    int start, nnodes, ppn;
} map_block_t;

static int blocks_of(const launch_layout_t *l, map_block_t *b)
{
    int nb = 0;
    for (int r = 0; r < l->nranks;) {
        int node = l->node_of[r], len = 0;
        while (r < l->nranks && l->node_of[r] == node) {
            r++;
            len++;
        }
        if (nb > 0 && b[nb - 1].ppn == len &&
            b[nb - 1].start + b[nb - 1].nnodes == node)
            b[nb - 1].nnodes++;
        else
            b[nb++] = (map_block_t){ node, 1, len };
    }
    return nb;
}

/* Whether the first np blocks, repeated, give exactly the layout. */
static int blocks_repeat_ok(const launch_layout_t *l, const map_block_t *b, int np)
{
    int r = 0;
    while (r < l->nranks)
        for (int i = 0; i < np && r < l->nranks; i++)
            for (int n = 0; n < b[i].nnodes && r < l->nranks; n++)
                for (int k = 0; k < b[i].ppn && r < l->nranks; k++)
                    if (l->node_of[r++] != b[i].start + n)
                        return 0;
    return 1;
}

int layout_mapping(const launch_layout_t *l, char *out, size_t cap)
{
    out[0] = '\0';
    map_block_t *b = malloc((size_t)l->nranks * sizeof *b);
    if (b == NULL)
        return -1;
    int nb = blocks_of(l, b);
    int np = 1;
    while (np < nb && !blocks_repeat_ok(l, b, np))
        np++;
    size_t k = (size_t)snprintf(out, cap, "(vector");
    for (int i = 0; i < np && k < cap; i++)
        k += (size_t)snprintf(out + k, cap - k, ",(%d,%d,%d)", b[i].start, b[i].nnodes,
                              b[i].ppn);
    if (k < cap)
        k += (size_t)snprintf(out + k, cap - k, ")");
    free(b);
    if (k >= cap) {
        out[0] = '\0';
        return -1;
    }
    return 0;
}
