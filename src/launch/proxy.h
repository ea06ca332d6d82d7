/*
 * proxy.h — state of the per-node proxy (internal to src/launch; the
 * layer's contract is launch.h).
 */
#ifndef LOCUS_PROXY_H
#define LOCUS_PROXY_H

#include "launch.h"
#include "pmi_wire.h"
#include "locus_topo.h"

#include <sys/types.h>

typedef struct {
    char *key;
    char *val;
    int unsent;                /* put here, not yet relayed at a fence */
} kvs_slot_t;

typedef struct {
    kvs_slot_t *slots;
    size_t cap, count, unsent;
} kvs_t;

void kvs_init(kvs_t *k);
void kvs_free(kvs_t *k);
/* Stores a copy (replacing an older value); local marks it for relaying. */
int kvs_put(kvs_t *k, const char *key, const char *val, int local);
/* The value, or NULL. */
const char *kvs_get(const kvs_t *k, const char *key);
/* Calls send for every local pair not yet relayed, then marks them sent. */
int kvs_flush(kvs_t *k, int (*send)(void *ctx, const char *key, const char *val),
              void *ctx);

enum { PMI_ST_NEW = 0, PMI_ST_INIT, PMI_ST_FINALIZED, PMI_ST_CLOSED };

/* An outstanding barrier: one per distinct group string ("WORLD:0", ...). */
typedef struct {
    char group[PMI_WIRE_VALLEN_MAX + 1];
    char tag[32];
    int world;                 /* relayed to the front end when complete here */
    int relayed;               /* fence sent, waiting for barrier_out */
    int expected;              /* local members */
    unsigned char *in;         /* per local rank: arrived */
    int arrived;
} pbarrier_t;

#define PROXY_BARRIERS_MAX 8

typedef struct {
    int rank, local;
    pid_t pid;
    int bound, ncpus, nnuma;
    int *cpus, *numa;
    char **env;
    int nenv;
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
    int size, nodeid, nnodes;
    double grace;
    int pmi_trace;
    char *exe;
    char **argv;
    int argc;
    char **env;
    int nenv;
    prank_t *ranks;
    int nlocal;
    pid_t pgid;                /* the job's process group (rank 0 here) */
    int leader;                /* index of the group leader, reaped last */
    int sigfd;
    int started;
    /* stdin for the first local rank (global rank 0 only) */
    int stdin_fd;
    char *inbuf;
    size_t inlen;
    int stdin_eof;
    kvs_t kvs;
    pbarrier_t barriers[PROXY_BARRIERS_MAX];
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
} proxy_t;

/* proxy_pmi.c: serves every complete PMI line buffered for rank p. */
void proxy_pmi_serve(proxy_t *px, prank_t *p);
/* Closes rank p's PMI connection (EOF, error or a broken client); without
 * a finalize first this is a failure once the rank has not exited soon. */
void proxy_pmi_drop(proxy_t *px, prank_t *p);
/* A WORLD barrier completed job-wide (front end's barrier_out). */
void proxy_pmi_barrier_done(proxy_t *px, const char *group);

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

/* proxy.c: reports the first local failure and starts the teardown. */
void proxy_fail(proxy_t *px, prank_t *p, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Sends signal sig to every running rank and the job's process group. */
void proxy_signal_all(proxy_t *px, int sig);

#endif
