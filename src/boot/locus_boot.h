/*
 * locus_boot.h — how a rank learns who it is and where its peers are: the
 * process-manager client (PMI-1 over PMI_FD from locusrun or Hydra, or
 * PMI_PORT + PMI_ID; PMI-2 over PMI_FD as Slurm's pmi2 plugin and Hydra
 * serve it; PMIx through libpmix under Open MPI's mpirun, prterun or
 * srun --mpi=pmix; LOCUS_PMI chooses), the node map (PMI_process_mapping, checked against locusrun's LOCUS_NODE_ID;
 * else an exchange of node ids, or host names without locusrun) and the
 * key-value exchange the transports use for their addresses. A node is
 * what the launcher says it is: two network namespaces sharing a kernel
 * and a host name are two nodes, and only ranks of one node share memory.
 *
 * Without any of them the process is a singleton: rank 0 of 1.
 */
#ifndef LOCUS_BOOT_H
#define LOCUS_BOOT_H

#include <stddef.h>
#include <sys/types.h>

#include "locus_auth.h"
#include "locus_transport.h"
#include "pmi_wire.h"

/* Start-up phases, in order. Every PMI put, get and fence is counted in
 * the phase current when it is made, and each phase's wall time is kept. */
enum {
    LOCUS_BOOT_PH_PMI,       /* connect and handshake with the process manager */
    LOCUS_BOOT_PH_NODEMAP,   /* who shares a node with whom */
    LOCUS_BOOT_PH_SHM,       /* shared-memory transport set-up */
    LOCUS_BOOT_PH_NET,       /* network transport set-up: the address exchange */
    LOCUS_BOOT_PH_REST,      /* the rest of MPI_Init */
    LOCUS_BOOT_PH_RUN,       /* after MPI_Init: cards fetched when first needed */
    LOCUS_BOOT_NPHASES
};

/* Keys that begin with PMI_WIRE_NODE_KEY (pmi_wire_node_key; the
 * transports' LOCUS_TP_NODE_KEY, the same string) are node-scoped: only
 * ranks of the node that put them read them (a shared segment's name).
 * The process manager keeps them on that node: locusrun's proxy by this
 * name (PMI-1), PMI-2's info-putnodeattr/info-getnodeattr (Hydra, Slurm),
 * PMIx's PMIX_LOCAL scope. A PMI-1 server that does not know the name (Hydra) treats them
 * as any key, which is correct, only not scoped. */

typedef struct {
    double seconds;
    long puts, gets, fences;
    long node_puts, node_gets; /* of puts and gets, the node-scoped ones */
    long put_bytes, get_bytes; /* keys and values sent, values received */
    long table_bytes;          /* address tables this rank holds (a node-shared one
                                  is charged to its creator) */
} locus_boot_count_t;

/* LOCUS_ADDR_EXCHANGE: how transports' cards travel (addr_exchange.c). */
enum { LOCUS_ADDR_SIMPLE, LOCUS_ADDR_SHM, LOCUS_ADDR_ROOTS, LOCUS_ADDR_LAZY,
       LOCUS_ADDR_FABRIC, LOCUS_ADDR_NSTRATEGIES };

struct boot_addr; /* a published card table (addr_exchange.c) */
struct boot_pm;   /* the process-manager backend (boot_priv.h) */

typedef struct {
    int rank, size;
    int appnum;
    int universe_size;
    int singleton;            /* no process manager */
    const struct boot_pm *pm; /* PMI-1, PMI-2 or PMIx; NULL for a singleton */
    int fd;                   /* PMI-1/PMI-2 socket, else -1 */
    pmi_reader_t rd;
    void *pmix;               /* PMIx backend's state */
    int fence_step;           /* PMI-2: which reply of a fence comes next */
    int node_barrier;         /* the server has barriers of a node's ranks only
                                 (locusrun's proxy): locus_boot_node_fence */
    int node_fences;          /* node barriers entered (their tags) */
    char kvsname[PMI_WIRE_KVSNAME_MAX + 1];
    char jobid[PMI_WIRE_KVSNAME_MAX + 1]; /* LOCUS_JOBID or the kvs name, [A-Za-z0-9_.-] */
    int *node_of;             /* [size] node number of every world rank */
    int nnodes;
    int local_rank, local_size;
    int *local_ranks;         /* [local_size] world ranks on this node, ascending */
    int mapping_from;         /* 1: the process manager's map (PMI_process_mapping,
                                 PMIx node ids), 2: exchange of node ids (locusrun's
                                 LOCUS_NODE_ID, else host names), 0: singleton */
    int vallen_max;           /* the process manager's longest PMI value */
    int addr_strategy;        /* LOCUS_ADDR_* */
    int addr_auto;            /* LOCUS_ADDR_EXCHANGE=auto chose it by node count */
    int addr_fabric_nodes;    /* auto: fabric from this many nodes on */
    locus_auth_key_t key;     /* the job's secret (not for a singleton), also left in
                                 LOCUS_JOB_KEY for the transports' listeners */
    locus_auth_key_source_t key_from;
    struct boot_addr *addr;   /* card tables, one per published name */
    int phase;                /* LOCUS_BOOT_PH_* now */
    double phase_t0;          /* when it began (monotonic seconds) */
    locus_boot_count_t count[LOCUS_BOOT_NPHASES];
} locus_boot_t;

/*
 * Connects to the process manager (if any), does the PMI-1 handshake,
 * settles the job's key (locus_auth_key_job: LOCUS_JOB_KEY, else derived
 * from the kvs name where locusrun did not start the job; a multi-rank job
 * without one fails here) and builds the node map. Returns 0, or -1 with a
 * one-line reason in err.
 */
int locus_boot_init(locus_boot_t *b, char *err, size_t errlen);

/* "pmi1", "pmi2", "pmix" or "singleton". */
const char *locus_boot_pm_name(const locus_boot_t *b);

/* Closes the current phase's clock and starts `phase`. */
void locus_boot_phase(locus_boot_t *b, int phase);
const char *locus_boot_phase_name(int phase);
const char *locus_boot_addr_name(int strategy);

/* The kvs (put/get/fence over PMI, and the address exchange) for
 * locus_tp_init_t. */
locus_tp_kvs_t locus_boot_kvs(locus_boot_t *b);

/* PMI put (kvs), get (blocks until the value exists after a fence; owner
 * is the rank that put it, -1 when unknown, which PMIx may not find) and
 * barrier, over whichever interface was chosen; values are printable
 * ASCII without blanks or ';' (boot_kvs_put escapes the rest). Return 0
 * or -1. Singletons keep puts in no store: get fails. */
int locus_boot_put(locus_boot_t *b, const char *key, const char *val);
int locus_boot_get(locus_boot_t *b, int owner, const char *key, char *val, size_t vallen);
int locus_boot_fence(locus_boot_t *b);

/* A barrier of this node's ranks only, after which the node-scoped pairs
 * they put (LOCUS_TP_NODE_KEY) are readable on the node: locusrun's proxy
 * answers it on its own (PMI-1 barrier_in group=NODE:t), with no fence
 * across the job; under other process managers it is locus_boot_fence,
 * so every rank of the job must call it alike. 0 or -1. */
int locus_boot_node_fence(locus_boot_t *b);

/* A fence that keeps calling progress(arg) while it waits, so peers that
 * still need this process (MPI_Finalize) are served. Returns 0; -1 when
 * the fence failed or progress returned a negative value. */
int locus_boot_fence_progress(locus_boot_t *b, int (*progress)(void *arg), void *arg);

/* Asks the process manager to kill the job with exit code `code` (PMI
 * abort), then exits. Never returns. */
void locus_boot_abort(locus_boot_t *b, int code, const char *msg);

/*
 * The address exchange behind the kvs's publish/card (addr_exchange.c).
 * publish is collective over the job; card reads one rank's card. Both
 * return 0, or -1 with a one-line reason in b's last error
 * (locus_boot_addr_error).
 */
int locus_boot_publish(locus_boot_t *b, const char *name, const char *card);
int locus_boot_card(locus_boot_t *b, const char *name, int rank, char *val, size_t vallen);
const char *locus_boot_addr_error(const locus_boot_t *b);
void locus_boot_addr_free(locus_boot_t *b);

/* %XX escaping of bytes PMI values cannot carry (space, controls, '%',
 * ';' for PMI-2, non-ASCII). Return the length written, or -1 when out does not fit. */
int locus_boot_escape(const char *in, char *out, size_t outlen);
int locus_boot_unescape(const char *in, char *out, size_t outlen);

/* ---- child jobs (MPI_Comm_spawn; spawn.c) ---- */

/* One program of a child job: n ranks of cmd argv[] (NULL-terminated, may
 * be NULL); host: where ("" or NULL: this node), wdir: its working
 * directory (NULL: this one). A job's host is its first program's. */
typedef struct {
    const char *cmd;
    char *const *argv;
    int n;
    const char *host, *wdir;
} locus_boot_app_t;

/*
 * Starts a child job under a locusrun of its own (LOCUS_LOCUSRUN, else the
 * one in the bin/ beside this library's lib/), its ranks given `port` in
 * LOCUS_PARENT_PORT and the programs' index in LOCUS_APPNUM; that locusrun
 * is this process's child and ends the child job when this process ends. *pid: the locusrun. 0, or -1
 * with a one-line reason.
 */
int locus_boot_spawn(const locus_boot_app_t *apps, int napps, const char *port, pid_t *pid,
                     char *err, size_t errlen);
/* 0 while the locusrun pid runs; 1 when it has ended (wait: block until
 * then), with its exit status in *status (128 + signal when killed). */
int locus_boot_spawn_poll(pid_t pid, int wait, int *status);

/* ---- name service (MPI_Publish_name, MPI_Lookup_name; names.c) ---- */

/* What the name-service calls return besides 0. */
enum {
    LOCUS_BOOT_NAME_MISS = -1, /* publish: the name is taken; lookup, unpublish: not there */
    LOCUS_BOOT_NAME_ERR = -2,  /* no name service (not under locusrun), unreachable, full,
                                  or bad arguments (empty, too long) */
};

/*
 * The name service of the launch this job belongs to (locusrun's, found
 * through LOCUS_NAME_SERVER; every job one launch spawns shares it).
 * Names and ports are any non-empty strings (escaped on the wire), at most
 * about 4 KiB both escaped. publish binds service to port; lookup writes
 * the port bound to service into port[len]; unpublish removes the binding.
 * Each blocks for at most 2 s per address of the service and 5 s for its
 * answer. Return 0, or LOCUS_BOOT_NAME_MISS / LOCUS_BOOT_NAME_ERR with a
 * one-line reason in err.
 */
int locus_boot_name_publish(const char *service, const char *port, char *err, size_t errlen);
int locus_boot_name_lookup(const char *service, char *port, size_t len, char *err,
                           size_t errlen);
int locus_boot_name_unpublish(const char *service, char *err, size_t errlen);

/* The process manager's finalize handshake and cleanup. */
void locus_boot_finalize(locus_boot_t *b);

/*
 * Parses a PMI_process_mapping value "(vector,(n,N,ppn),...)" into
 * node_of[size] (node ids as given, renumbered 0.. in first-appearance
 * order). Returns the number of nodes, or -1 when the string is malformed,
 * empty or describes fewer than `size` ranks.
 */
int locus_boot_parse_mapping(const char *s, int size, int *node_of);

#endif
