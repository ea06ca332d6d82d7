/*
 * frontend.h — state of locusrun's front end (internal to src/launch; the
 * layer's contract is launch.h): one link per node's proxy, the KVS fence
 * aggregation across proxies, and the job's outcome.
 */
#ifndef LOCUS_FRONTEND_H
#define LOCUS_FRONTEND_H

#include "launch.h"
#include "fence.h"
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
    /* A tree of proxies (LOCUS_LAUNCH_FANOUT): this link's messages travel
     * through the direct link `top` as "via NODE ..." (top == node: direct,
     * started by the front end); its proxy is started by `parent`'s
     * (-1: the front end) and starts tree positions kid0.. kid0+nkids-1. */
    int top, parent, pos, kid0, nkids;
    int slot;                  /* direct: its node in the front end's fences
                                  (fe->direct[slot] is it); -1 otherwise */
    int gone;                  /* not direct: its parent said its launcher child
                                  ended, or the route to it broke */
} fe_link_t;

/* Whether l is started by the front end and has a stream of its own. */
static inline int link_direct(const fe_link_t *l)
{
    return l->top == l->node;
}

/* Whether l's control stream is open (a routed one: not yet gone). */
static inline int link_open(const fe_link_t *l)
{
    return link_direct(l) ? l->fd >= 0 : !l->gone;
}

/* A connection to the front end's listener that has not yet said which
 * node's proxy it is (connect_back.c). */
typedef struct {
    int fd;
    double by;                 /* closed if not identified by then */
    size_t len;
    char line[512];
} cb_pending_t;

#define CB_PENDING_MAX 32

typedef struct {
    launch_opts_t *o;
    launch_via_t via;          /* how proxies are started (launcher.c) */
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
    /* the tree: fanout (0: every proxy started from here), links in tree
     * positions; the fences' nodes are the direct links (direct[slot] is
     * one's index), slot_of each rank's direct link's slot */
    int fanout, ntree, ndirect;
    int *tree;
    int *direct;
    int *slot_of;
    /* each node's ranks as runs (first, count): node n's are
     * runs[2*run_at[n]] .. runs[2*run_at[n+1]] (a tree's subranks) */
    int *run_at, *runs;
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
    size_t kvs_bytes_out;      /* pairs sent down at fences (LOCUS_STARTUP_REPORT) */
    /* one srun for the job's other nodes: its proxies connect back */
    int cb_listen;             /* -1: none */
    char cb_token[LOCUS_AUTH_KEY_HEX + 1];
    cb_pending_t cb_pending[CB_PENDING_MAX];
    int cb_npending;
    struct names_server *names; /* the job's name service (names.c), NULL: none here */
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

/* fe_tree.c: the tree of proxies. tree_make lays the links out (every
 * link direct when the tree does not apply); 0, or -1 with the reason
 * printed. tree_queue queues what link l's proxy needs to start and route
 * to its subtree. tree_route_flush moves what is queued for routed links
 * onto their direct link's stream. tree_cut marks every link below l gone
 * (l's proxy is lost: the route to them broke); tree_hello starts the
 * launch clock of l's children. */
int tree_make(fe_t *fe);
void tree_queue(fe_t *fe, fe_link_t *l);
void tree_route_flush(fe_t *fe);
void tree_cut(fe_t *fe, fe_link_t *l, void (*lost)(fe_t *fe, fe_link_t *d));
void tree_hello(fe_t *fe, fe_link_t *l);
/* Whether a proxy below l is still running and not being killed (l's
 * proxy, done with its own node, relays for it). */
int tree_busy_below(fe_t *fe, const fe_link_t *l);
void tree_free(fe_t *fe);

/* connect_back.c: the front end's listener for the proxies of the job's
 * one srun. cb_listen opens it and writes "ip:port,..." (its IPv4
 * addresses, loopback last) into addrs, and makes the launch token; 0 or
 * -1. cb_fds adds the listener and the unidentified connections to fds
 * (at most 1 + CB_PENDING_MAX) and returns how many; cb_ready serves
 * those of them poll marked, giving each identified proxy's socket to its
 * link; cb_expire drops connections silent for too long; cb_close ends
 * listening (once every link is connected, or at the end). */
int cb_listen(fe_t *fe, char *addrs, size_t len);
/* A TCP socket listening (non-blocking, close-on-exec) on an ephemeral
 * port of every address, with "ip:port,..." written into addrs: its IPv4
 * addresses, loopback last. The socket, or -1 (errno, or no address). */
int launch_listen_tcp(char *addrs, size_t len);
int cb_fds(fe_t *fe, struct pollfd *fds);
void cb_ready(fe_t *fe, const struct pollfd *fds, int n);
void cb_expire(fe_t *fe, double now);
void cb_close(fe_t *fe);
/* Starts the proxies of every link not on this machine with one srun
 * (when the launcher is slurm and LOCUS_SLURM_ONE_SRUN is on): returns
 * how many links it started, 0 when it does not apply, -1 with errno. */
int launcher_start_srun(fe_t *fe);

/* names.c: the name service of MPI_Publish_name and MPI_Lookup_name,
 * one per launch: a thread of the front end serving a TCP listener (one
 * line-based request per connection, docs/locusrun.md), so the event loop
 * never waits on a rank's client. */
typedef struct names_server names_server_t;
/* slots.c: the launch's slot ledger, which the name service's thread
 * serves too (where a spawned job runs, which PUs its proxies bind). */
typedef struct slots slots_t;
/* A ledger of the job's host list (its slots and what the job uses of
 * them), or NULL when out of memory. */
slots_t *slots_new(const fe_t *fe);
void slots_free(slots_t *s);
/* The answer to a ledger request split in words (w[0] the token, checked
 * already; w[1] the verb), into out or a constant; NULL: not one. */
const char *slots_answer(slots_t *s, char **w, int n, char *out, size_t outlen);
/* Starts it and writes where it listens, "TOKEN@ip:port,...", into value
 * (the LOCUS_NAME_SERVER the ranks get); it serves the ledger `slots`
 * (taken over; may be NULL). The server, or NULL with a one-line reason
 * in err. */
names_server_t *names_server_start(slots_t *slots, char *value, size_t len, char *err,
                                   size_t errlen);
/* Stops its thread, closes its sockets and forgets every name; NULL is a no-op. */
void names_server_stop(names_server_t *s);
/* The job's LOCUS_NAME_SERVER, set in this environment before
 * queue_tunables forwards it: a server started here (fe->names) unless
 * the variable is set already (a child job's locusrun shares its
 * parents'). One that cannot start is a warning: the job runs, and only
 * the name service's calls fail in it. */
void names_setup(fe_t *fe);
/* A spawned job's locusrun, at its end: its slots and PUs go back to the
 * launch's ledger (LOCUS_SLOTS_KEY). */
void names_release(const fe_t *fe);

/* A child job's locusrun (LOCUS_PARENT_PID, set by MPI_Comm_spawn) gets
 * SIGTERM when the spawning process ends (parent_watch.c). */
void launch_parent_watch(void);

#endif
