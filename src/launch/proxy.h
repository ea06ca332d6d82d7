/*
 * proxy.h — state of the per-node proxy (internal to src/launch; the
 * layer's contract is launch.h).
 */
#ifndef LOCUS_PROXY_H
#define LOCUS_PROXY_H

#include "launch.h"
#include "fence.h"
#include "pmi_wire.h"
#include "locus_topo.h"

#include <poll.h>
#include <signal.h>
#include <sys/types.h>

typedef struct {
    char *key;
    char *val;
    int owner;                 /* local index of the rank that put it; -1: from another node */
    int unsent;                /* put here, not yet relayed at a fence */
} kvs_slot_t;

typedef struct {
    kvs_slot_t *slots;
    size_t cap, count, unsent;
} kvs_t;

void kvs_init(kvs_t *k);
void kvs_free(kvs_t *k);
/* Stores a copy (replacing an older value). owner >= 0 (a local rank's
 * index) marks it for relaying at the next fence; -1: from another node. */
/* relay: 0 keeps a local rank's key on this node (node-scoped, never sent
 * to the front end at a fence). */
int kvs_put(kvs_t *k, const char *key, const char *val, int owner, int relay);
/* The value, or NULL. */
const char *kvs_get(const kvs_t *k, const char *key);
/* The slot holding key, or NULL. */
const kvs_slot_t *kvs_find(const kvs_t *k, const char *key);
/* Calls send for every local pair not yet relayed, then marks them sent. */
int kvs_flush(kvs_t *k, int (*send)(void *ctx, const char *key, const char *val),
              void *ctx);

enum { PMI_ST_NEW = 0, PMI_ST_INIT, PMI_ST_FINALIZED, PMI_ST_CLOSED };

/* A child of this proxy in a tree of proxies (proxy_tree.c). */
typedef struct {
    int node;
    char *host;
    pid_t pid;                 /* the launcher child (ssh, the exec prefix) */
    int fd;                    /* its control stream, -1 once closed */
    ctl_reader_t rd;
    ctl_outq_t out;
    int done;                  /* its proxy said done */
    int reaped, wstatus;
    int gone_sent;             /* "via NODE gone" sent up */
    double linger_by;
} pkid_t;

/* This proxy's part of a tree: how to start its children, which child
 * each node below it is reached through, and the fences of its subtree
 * combined (slot 0 this node, slot 1 + i child i). */
typedef struct {
    launch_via_t via;
    char *proxy_path, *exec;
    pkid_t *kids;
    int nkids;
    int *below;                /* [nnodes] index of the child it is below, -1 */
    int *slot_of;              /* [size] each rank's fence slot, -1: not below */
    fe_fences_t agg;
    int agg_on;
} ptree_t;

/* An outstanding barrier: one per distinct group string ("WORLD:0", ...). */
typedef struct {
    char group[PMI_WIRE_VALLEN_MAX + 1];
    char tag[32];
    int spans;                 /* has members on other nodes: relayed to the front end */
    int relayed;               /* fence sent, waiting for barrier_out */
    int expected;              /* local members */
    unsigned char *in;         /* per local rank: arrived */
    int arrived;
} pbarrier_t;

typedef struct {
    int rank, local;
    pid_t pid;
    int bound, ncpus, nnuma;
    int *cpus, *numa;
    char **env;                /* the plan's variables, NAME=VALUE */
    int nenv;
    long kvs_keys, kvs_bytes;  /* what its puts hold in the KVS */
    int nbarriers;             /* barriers it is in, outstanding */
    int pmi_fd;                /* proxy's end of the rank's socketpair */
    int pmi_state;
    pmi_reader_t *pmi_rd;
    int out_fd[2];             /* stdout, stderr pipes (read ends) */
    char *obuf[2];
    size_t olen[2];
    int running;               /* forked, not yet reaped */
    double pmi_lost_at;        /* > 0: closed PMI without finalize at */
} prank_t;

typedef struct {
    int ctl_in, ctl_out;
    ctl_reader_t rd;
    char jobid[64];
    char kvsname[96];
    char mapping[PMI_WIRE_VALLEN_MAX + 1];
    char host[256];            /* this node's name as the front end knows it */
    char sysname[256];         /* as the node itself says (gethostname) */
    int node_done;             /* its ranks are over and `done` was sent */
    int size, nodeid, nnodes;
    double grace;
    int pmi_trace;
    int report;                /* --report-bindings */
    char *cwd;
    char *exe;
    char **argv;
    int argc;
    char **env;                /* -x VAR=VAL for every rank */
    int nenv;
    char **place;              /* placement option words, replayed into the plan */
    int nplace;
    char **uenv;               /* the user's OMP_* values, winning over the plan's */
    int nuenv;
    long kvs_keys_max, kvs_bytes_max, barriers_max;
    prank_t *ranks;
    int nlocal;
    pid_t pgid;                /* the job's process group (rank 0 here) */
    int leader;                /* index of the group leader, reaped last */
    int sigfd;
    sigset_t sigs;             /* handled through sigfd, unblocked in children */
    ptree_t tree;
    int started;
    /* stdin for the first local rank (global rank 0 only) */
    int stdin_fd;
    char *inbuf;
    size_t inlen;
    int stdin_eof;
    kvs_t kvs;
    pbarrier_t *barriers;      /* outstanding, at most barriers_max per local rank */
    int nbarriers;
    /* teardown */
    int failed;                /* a local failure was reported */
    int term_sent, kill_sent;
    double kill_at;
    unsigned long sent_sigs;   /* bit per signal we sent the ranks */
    int nrunning;
    int ctl_lost;
    unsigned long nofile_soft; /* RLIMIT_NOFILE soft limit to give ranks */
    pmi_msg_t pmsg;            /* the PMI request being served */
    locus_topo_t *topo;
    int node_ncpus;            /* distinct PUs the local ranks may use (LOCUS_NODE_NCPUS) */
    /* --mpi pmix: every node's name (comma list) and rank's node, from the
     * front end; the server's state (proxy_pmix.c) once started. */
    char *pmix_hosts;
    int *pmix_node_of;
    struct proxy_pmix *pmix;
    struct {                   /* PMI requests served, for LOCUS_STARTUP_REPORT */
        long puts, gets, gets_missed, barriers, fences_relayed, bytes_in, bytes_out;
        long node_puts;        /* node-scoped (PMI_WIRE_NODE_KEY): kept here */
        long ctl_in;           /* control bytes from the front end or parent */
    } served;
} proxy_t;

/* proxy_plan.c: plans the node's ranks on this node's own topology
 * (binding and environment per rank), tells the front end the report
 * lines and warnings. Returns 0, or -1 after reporting the failure. */
int proxy_plan(proxy_t *px);

/* proxy_pmi.c: serves every complete PMI line buffered for rank p. */
void proxy_pmi_serve(proxy_t *px, prank_t *p);
/* Closes rank p's PMI connection (EOF, error or a broken client); without
 * a finalize first this is a failure once the rank has not exited soon. */
void proxy_pmi_drop(proxy_t *px, prank_t *p);
/* Rank p asked to abort the job with exit code `code` (PMI-1 or PMIx). */
void proxy_rank_abort(proxy_t *px, prank_t *p, long code, const char *msg);
/* A barrier spanning nodes completed job-wide (front end's barrier_out). */
void proxy_pmi_barrier_done(proxy_t *px, const char *group);
/* Stores a pair from another node (the front end's kvs). */
int proxy_kvs_remote(proxy_t *px, const char *key, const char *val);

/* proxy_pmix.c: the PMIx server (locusrun --mpi pmix), beside PMI-1.
 * start: before the first rank is forked (server, namespace, clients);
 * 0, or -1 after reporting the failure. fork_env: the variables that lead
 * rank p's PMIx client to this server (NULL-terminated, PMIx's to free
 * with proxy_pmix_env_free), NULL without a server. wake_fd: readable
 * when progress has work (-1 without a server). fence_done: a barrier
 * the front end completed, 1 when it was one of PMIx's. stop: after the
 * last rank; removes the server's directory. */
int proxy_pmix_start(proxy_t *px);
char **proxy_pmix_fork_env(proxy_t *px, prank_t *p);
void proxy_pmix_env_free(char **env);
int proxy_pmix_wake_fd(const proxy_t *px);
/* In a rank's child before exec: what Open MPI needs besides PMIx's
 * variables (proxy_pmix.c says why). */
void proxy_pmix_child_env(const proxy_t *px);
void proxy_pmix_progress(proxy_t *px);
int proxy_pmix_fence_done(proxy_t *px, const char *group);
void proxy_pmix_stop(proxy_t *px);
/* proxy_setup.c's "pmix HOSTS NODES" message. 0, or -1 when malformed. */
int proxy_pmix_setup(proxy_t *px, const char *hosts, const char *nodes);

/* proxy_setup.c: reads setup messages until `start`. Returns 0, or -1
 * (after telling the front end) when one is malformed or the front end
 * went away. */
int proxy_setup_read(proxy_t *px, ctl_msg_t *m);

/* proxy_spawn.c: forks and execs rank p (bound, with its environment).
 * Returns 0 or -1 with errno. */
int proxy_rank_spawn(proxy_t *px, prank_t *p);
/* Number of distinct PUs in the union of the local ranks' bindings; this
 * proxy's own allowed set when a rank is not bound. 0 when unknown. */
int proxy_node_ncpus(const proxy_t *px);
/* Forwards what rank p wrote on stream s (0 stdout, 1 stderr) as whole
 * lines; closes the stream at its end. */
void proxy_rank_read_output(proxy_t *px, prank_t *p, int s);

/* proxy_ranks.c: reports the first local failure and starts the teardown. */
void proxy_fail(proxy_t *px, prank_t *p, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Starts the teardown: SIGTERM (and SIGCONT) now, SIGKILL after the grace. */
void proxy_teardown(proxy_t *px);
/* Collects the ranks that ended and reports what each end means. */
void proxy_reap(proxy_t *px);
/* Fails the job for a rank still running PMI_LOST_WAIT after closing PMI
 * without finalize; returns whether one is still being waited for. */
int proxy_check_lost(proxy_t *px, double now);
/* After the last rank: strays of the process group, the group leader's
 * zombie, the node's shared-memory files, the ranks' descriptors. */
void proxy_finish(proxy_t *px);
/* Sends signal sig to every running rank and the job's process group. A
 * rank that dies of a teardown signal (SIGTERM, SIGKILL, or a forwarded
 * SIGINT, SIGHUP, SIGQUIT) is not reported as a failure of its own. */
void proxy_signal_all(proxy_t *px, int sig);

/* proxy_tree.c: this proxy's children in a tree (LOCUS_LAUNCH_FANOUT).
 * setup: a setup message of the tree (launch, child, below, subranks): 1
 * done, 0 not one, -1 malformed. route: a line from the parent routed to
 * a node below ("via NODE ..."): 1 passed on, 0 not routed, -1 for a node
 * not below. start: after setup, before the first fence. fds adds the
 * children's streams (returns how many, each fds[i] for child kid[i]);
 * ready serves those poll marked; check reaps, flushes, ends lingering
 * launchers and tells the front end of children gone. busy: a child not
 * yet gone. lost: this proxy's own stream closed, its children are
 * ended. */
int proxy_tree_setup(proxy_t *px, const ctl_msg_t *m);
int proxy_tree_route(proxy_t *px, const char *line, size_t len);
void proxy_tree_start(proxy_t *px);
int proxy_tree_fds(proxy_t *px, struct pollfd *fds, int *kid);
void proxy_tree_ready(proxy_t *px, const struct pollfd *fds, const int *kid, int n);
void proxy_tree_check(proxy_t *px, double now);
int proxy_tree_busy(const proxy_t *px);
/* A child's proxy said done or hung up and its launcher is still to be
 * reaped (or killed when it lingers): check often. */
int proxy_tree_settling(const proxy_t *px);
void proxy_tree_lost(proxy_t *px);
/* The front end gave up on the child NODE: its launcher is killed. */
void proxy_tree_drop(proxy_t *px, long node);
void proxy_tree_free(proxy_t *px);
/* What a fence sends up: to the parent as it is on a leaf; combined with
 * the children's on an inner proxy. */
int proxy_up_pair(proxy_t *px, const char *key, const char *val);
int proxy_up_fence(proxy_t *px, const char *group);
/* A pair or a barrier's end from above (the parent's kvs, barrier_out). */
void proxy_tree_kvs(proxy_t *px, const char *key, const char *val);
void proxy_tree_barrier_out(proxy_t *px, const char *group);

#endif
