/*
 * frontend.h — state of locusrun's front end (internal to src/launch; the
 * layer's contract is launch.h): one link per node's proxy, the KVS fence
 * aggregation across proxies, and the job's outcome.
 */
#ifndef LOCUS_FRONTEND_H
#define LOCUS_FRONTEND_H

#include "launch.h"
#include "pmi_wire.h"
#include "locus_auth.h"

#include <poll.h>
#include <signal.h>
#include <sys/types.h>

/* One node's proxy as the front end sees it. */
typedef struct {
    int node;                  /* index in the layout */
    char *host;                /* as the user named it (this machine's name without hosts) */
    launch_launcher_t how;     /* LOCAL when the host is this machine */
    pid_t pid;                 /* our child: the local proxy, ssh, or the exec prefix */
    int fd;                    /* control stream, -1 once closed */
    ctl_reader_t rd;
    ctl_outq_t out;
    int hello;                 /* the proxy said hello */
    long proxy_pid;            /* the proxy's pid on its node (from hello) */
    pid_t pgid;                /* the ranks' process group on that node */
    int done;                  /* the proxy said done: everything there is cleaned */
    int reaped;                /* our child was reaped */
    int wstatus;
    double started;            /* when it was launched */
    double kill_by;            /* told to kill: escalate when not done by then (0: not told) */
    int escalated;             /* killed by us, cleanup started */
    double linger_by;          /* done or hung up: its child must be gone by then */
    pid_t cleaner;             /* the `locusrun --cleanup` run on its node, 0: none */
    int lost_reported;
    int awaiting;              /* started by the job's one srun, its proxy not yet
                                  connected back (connect_back.c) */
    int shared;                /* pid is that one srun, shared with other links */
} fe_link_t;

/* A connection to the front end's listener that has not yet said which
 * node's proxy it is (connect_back.c). */
typedef struct {
    int fd;
    double by;                 /* closed if not identified by then */
    size_t len;
    char line[512];
} cb_pending_t;

#define CB_PENDING_MAX 32

/* A KVS pair put on one node, waiting to be sent to the others at the
 * next completed fence. */
typedef struct {
    char *key, *val;
    int origin;                /* node it came from */
} fe_pair_t;

/* A fence (relayed PMI barrier) waiting for its nodes. */
typedef struct {
    char *group;               /* "WORLD:tag" or "r1,r2,..:tag" */
    unsigned char *member;     /* [nnodes] node takes part */
    unsigned char *in;         /* [nnodes] node's fence arrived */
    int expected, arrived;
} fe_fence_t;

typedef struct {
    int nnodes, size;
    const int *node_of;        /* [size] */
    fe_fence_t *fences;
    int nfences, fences_cap, fences_max;
    fe_pair_t *pairs;
    size_t npairs, cap;
    size_t bytes, bytes_max;   /* pending KVS bytes and the bound on them */
    /* what the proxies sent, for LOCUS_STARTUP_REPORT: pairs, their bytes,
     * and node-scoped ones (PMI_WIRE_NODE_KEY), which should be none */
    long pairs_in, node_pairs_in;
    size_t pair_bytes_in;
} fe_fences_t;

typedef struct {
    launch_opts_t *o;
    launch_layout_t layout;
    char jobid[64];
    char mapping[PMI_WIRE_VALLEN_MAX + 1];
    char self[4096];           /* this binary (the local proxy) */
    const char *proxy_path;    /* locusrun on the other nodes */
    char hostname[256];        /* this machine's name */
    double grace;              /* LOCUS_KILL_GRACE */
    double launch_timeout;     /* LOCUS_LAUNCH_TIMEOUT */
    int nlinks;
    fe_link_t *links;
    int sigfd;
    sigset_t sigs;             /* handled through sigfd, unblocked in children */
    /* job state */
    unsigned char *line_start; /* per rank and stream: next byte starts a line */
    int status;                /* first failure's exit status, 0 none */
    int failed;
    int interrupts;
    int killing;               /* teardown ordered */
    size_t stdin_inflight;
    int stdin_done;
    int stdout_broken;
    fe_fences_t fences;
    /* one srun for the job's other nodes: its proxies connect back */
    int cb_listen;             /* -1: none */
    char cb_token[LOCUS_AUTH_KEY_HEX + 1];
    cb_pending_t cb_pending[CB_PENDING_MAX];
    int cb_npending;
    /* cleanups running on nodes whose proxy was lost */
    pid_t *cleaners;
    int ncleaners;
    double cleaners_by;
} fe_t;

/* frontend.c */
void fe_fail(fe_t *fe, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* fe_loop.c: relays until every proxy is done or gone. */
void fe_loop(fe_t *fe);
/* Orders every proxy still running to tear down (now: SIGKILL at once). */
void fe_kill_all(fe_t *fe, int now);

/* launcher.c */
/* Starts link l's proxy (locally, through ssh or the exec prefix). Returns
 * 0, or -1 with errno. */
int launcher_start(fe_t *fe, fe_link_t *l);
/* Kills link l's launcher child and everything of the job on its node
 * (locally at once; on another node through the launcher, in the
 * background: fe->cleaners). */
void launcher_kill(fe_t *fe, fe_link_t *l);
/* What the launcher is called, for messages ("ssh", "the exec launcher"). */
const char *launcher_name(const fe_link_t *l);
/* Whether host names this machine (so the local launcher may run it). */
int launcher_host_is_local(const char *host, const char *hostname);

/* connect_back.c: the front end's listener for the proxies of the job's
 * one srun. cb_listen opens it and writes "ip:port,..." (its IPv4
 * addresses, loopback last) into addrs, and makes the launch token; 0 or
 * -1. cb_fds adds the listener and the unidentified connections to fds
 * (at most 1 + CB_PENDING_MAX) and returns how many; cb_ready serves
 * those of them poll marked, giving each identified proxy's socket to its
 * link; cb_expire drops connections silent for too long; cb_close ends
 * listening (once every link is connected, or at the end). */
int cb_listen(fe_t *fe, char *addrs, size_t len);
int cb_fds(fe_t *fe, struct pollfd *fds);
void cb_ready(fe_t *fe, const struct pollfd *fds, int n);
void cb_expire(fe_t *fe, double now);
void cb_close(fe_t *fe);
/* Starts the proxies of every link not on this machine with one srun
 * (when the launcher is slurm and LOCUS_SLURM_ONE_SRUN is on): returns
 * how many links it started, 0 when it does not apply, -1 with errno. */
int launcher_start_srun(fe_t *fe);

/* fence.c */
void fence_init(fe_fences_t *f, int nnodes, int size, const int *node_of, size_t bytes_max,
                int fences_max);
void fence_free(fe_fences_t *f);
/* A pair from node. Returns 0, or -1 when the node sent more than its
 * ranks may put (a broken or hostile proxy). */
int fence_pair(fe_fences_t *f, int node, const char *key, const char *val);
/* Node arrived at the fence for group. Returns 1 when that completes it
 * (the caller then runs fence_complete), 0 when still waiting, -1 with a
 * reason in err for a group the node cannot be in. */
int fence_arrive(fe_fences_t *f, int node, const char *group, char *err, size_t errlen);
/* Sends every pending pair to each node but its origin, then barrier_out
 * to the group's nodes, through send(ctx, node, verb, w1, w2). */
void fence_complete(fe_fences_t *f, const char *group,
                    void (*send)(void *ctx, int node, const char *verb, const char *w1,
                                 const char *w2),
                    void *ctx);

#endif
