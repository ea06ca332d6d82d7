/*
 * hosts.h — the nodes of a job: host lists (--host a:2,b), hostfiles (Open
 * MPI's "host slots=N" and Hydra's "host:N" lines) and the layout that
 * assigns every rank a node and a local index. Internal to src/launch.
 */
#ifndef LOCUS_HOSTS_H
#define LOCUS_HOSTS_H

#include <stddef.h>

/* Longest host name accepted (a DNS name is at most 253 bytes). */
#define LAUNCH_HOST_MAX 255

typedef struct {
    char name[LAUNCH_HOST_MAX + 1];
    int slots;                 /* > 0 */
} launch_host_t;

typedef struct {
    int n;
    launch_host_t *hosts;      /* in order of first mention; a host named
                                  twice has the sum of its slots */
} launch_hosts_t;

/*
 * Appends the hosts of a list "a:2,b,c:4" (no slot count: 1 slot). Returns
 * 0, or -1 with a one-line reason in err (an empty element, a bad name or
 * slot count).
 */
int hosts_parse_list(launch_hosts_t *h, const char *list, char *err, size_t errlen);

/*
 * Appends the hosts of a hostfile: one host per line as "host", "host:N"
 * or "host slots=N [max_slots=M]"; '#' starts a comment; blank lines are
 * skipped. Returns 0, or -1 with "FILE:LINE: reason" (or the open error).
 */
int hosts_parse_file(launch_hosts_t *h, const char *path, char *err, size_t errlen);

/*
 * Appends the nodes of a Slurm allocation: nodelist in Slurm's hostlist
 * syntax ("n[0-3,7],gpu[01-02]"), tasks as SLURM_TASKS_PER_NODE gives them
 * ("2(x3),1": the slots; NULL or "": 1 each). Returns 0, or -1 with a
 * one-line reason naming the variable (slurm.c).
 */
int hosts_from_slurm(launch_hosts_t *h, const char *nodelist, const char *tasks, char *err,
                     size_t errlen);

/* Appends host `name` (checked by the caller) with `slots`; a host already
 * there gets them added. 0, or -1 (out of memory, too many slots). */
int hosts_add(launch_hosts_t *h, const char *name, int slots);

void hosts_free(launch_hosts_t *h);

/* Whether name is a valid host name for us: [A-Za-z0-9._-], not starting
 * with '-' (it would read as an option to ssh). */
int hosts_name_ok(const char *name);

/* Where every rank runs. Nodes are the hosts that got at least one rank,
 * in host order, so node 0 holds rank 0. */
typedef struct {
    int nranks, nnodes;
    int *node_host;            /* [nnodes] index into the host list */
    int *node_nranks;          /* [nnodes] */
    int *node_of;              /* [nranks] */
    int *local_of;             /* [nranks] index among the node's ranks */
} launch_layout_t;

/*
 * Assigns nranks ranks to the hosts: by slot (fill a host's slots, then the
 * next; the default) or by node (round-robin), at most ppn per host when
 * ppn > 0 (instead of its slots). More ranks than slots is an error unless
 * oversubscribe, which then deals the rest out one per host in turn.
 * Returns 0, or -1 with a one-line reason.
 */
int layout_make(launch_layout_t *l, const launch_hosts_t *h, int nranks, int ppn,
                int by_node, int oversubscribe, char *err, size_t errlen);

void layout_free(launch_layout_t *l);

/*
 * Writes the layout as PMI_process_mapping, "(vector,(node,nnodes,ppn),...)"
 * in MPICH's rank-map syntax, using the shortest repeating prefix (readers
 * repeat the vector until every rank is covered). Returns 0, or -1 (out
 * left "") when it does not fit in cap bytes.
 */
int layout_mapping(const launch_layout_t *l, char *out, size_t cap);

#endif
