/*
 * launch.h — the launch layer: the locusrun front end, its per-node proxy
 * and the control protocol between them. Internal to locusrun; the user
 * contract is docs/locusrun.md.
 *
 * Roles. The front end parses the command line, plans placement, starts one
 * proxy per node (locally: fork + exec of this binary as `locusrun --proxy`)
 * and then only relays: stdio to the terminal, stdin to rank 0, signals,
 * KVS fences, and it decides the job's exit status. The proxy spawns and
 * binds the node's ranks, serves PMI-1 to them, forwards their stdio and
 * tears them down. The two talk through one byte stream (a socketpair
 * locally; ssh's stdin/stdout later), so nothing here assumes a shared
 * address space or file system.
 *
 * Control protocol: one message per line, words separated by one space,
 * each word percent-encoded (bytes outside 33..126 and '%' as %XX), the
 * first word the verb. See docs/locusrun.md for the verb list.
 */
#ifndef LOCUS_LAUNCH_H
#define LOCUS_LAUNCH_H

#include <stddef.h>
#include <signal.h>

#include "hosts.h"

#define CTL_WORDS_MAX 16
/* Version of the control protocol, in the proxy's hello; a proxy saying
 * another one is a different locusrun and is refused. */
#define CTL_PROTO_VERSION 2
/* A forwarded stdio chunk is at most this many raw bytes. */
#define CTL_IO_CHUNK 16384

/* One decoded control message. Words point into `data`. */
typedef struct {
    int nwords;
    char *words[CTL_WORDS_MAX];
    size_t lens[CTL_WORDS_MAX];
    char *data;
    size_t cap;
} ctl_msg_t;

/* Buffered reader of control lines over one fd. */
typedef struct {
    int fd;
    char *buf;
    size_t len, cap;
    size_t off;                /* start of the first line not yet handed out */
} ctl_reader_t;

/* Sets up a reader on fd (buffer allocated lazily). */
void ctl_reader_init(ctl_reader_t *r, int fd);

/* Frees the reader's and a message's buffers. */
void ctl_reader_free(ctl_reader_t *r);
void ctl_msg_free(ctl_msg_t *m);

/* One read(2): returns bytes read, 0 at EOF, -1 on error (EAGAIN included:
 * poll first). */
long ctl_reader_fill(ctl_reader_t *r);

/* Next complete message: 1 when one was decoded into m, 0 when none is
 * buffered, -1 for a malformed line (consumed). */
int ctl_reader_next(ctl_reader_t *r, ctl_msg_t *m);

/* The same in two steps, for a relay that passes most lines on as they
 * came: the next complete line still encoded, without its newline (1, with
 * *line valid until the next ctl_reader_fill; 0 none; -1 an overlong line,
 * dropped), and one such line decoded into m (1, or -1 when malformed). */
int ctl_reader_line(ctl_reader_t *r, const char **line, size_t *len);
int ctl_decode(const char *line, size_t len, ctl_msg_t *m);

/*
 * Sends one message: the verb then n words of given lengths (lens NULL:
 * NUL-terminated). Blocking write of the whole line; returns 0 or -1.
 */
int ctl_send(int fd, const char *verb, int n, const char *const *words,
             const size_t *lens);

/* ctl_send with NUL-terminated words given as a NULL-terminated list. */
int ctl_sendl(int fd, const char *verb, ...);

/* Messages queued for one peer and written without blocking, so the front
 * end never waits on one proxy while the others need it. */
typedef struct {
    char *buf;
    size_t len, cap;
} ctl_outq_t;

/* Appends one message to q (as ctl_send/ctl_sendl would write it).
 * Returns 0, or -1 when out of memory. */
int ctl_queue(ctl_outq_t *q, const char *verb, int n, const char *const *words,
              const size_t *lens);
int ctl_queuel(ctl_outq_t *q, const char *verb, ...);

/* Writes as much of q as the stream socket fd takes now. Returns 0, or -1
 * when the peer is gone (q is emptied: it can never be delivered). */
int ctl_outq_flush(ctl_outq_t *q, int fd);
void ctl_outq_free(ctl_outq_t *q);

/*
 * Routing through a tree of proxies (LOCUS_LAUNCH_FANOUT): a message for or
 * from a node the stream does not end at travels as "via NODE <message>",
 * the message's encoded line unchanged. ctl_line_via: 1 with the node and
 * the inner line when line is routed, 0 when it is not, -1 when malformed.
 * ctl_queue_raw/ctl_send_raw: an encoded line (no newline) behind
 * "via NODE " (via >= 0) or as it is (via < 0). ctl_outq_route moves every
 * line queued in from into to, routed to node via.
 */
int ctl_line_via(const char *line, size_t len, long *node, const char **rest, size_t *restlen);
int ctl_queue_raw(ctl_outq_t *q, long via, const char *line, size_t len);
int ctl_send_raw(int fd, long via, const char *line, size_t len);
int ctl_outq_route(ctl_outq_t *to, long via, ctl_outq_t *from);

/* Word i of m as a long; -1 with *ok = 0 when absent or not a number. */
long ctl_word_long(const ctl_msg_t *m, int i, int *ok);

/* How proxies reach their nodes. */
typedef enum {
    LAUNCHER_SSH = 0,          /* ssh -o BatchMode=yes HOST CMD (default with hosts) */
    LAUNCHER_EXEC,             /* --launcher-exec PREFIX: PREFIX HOST CMD... */
    LAUNCHER_LOCAL             /* fork on this machine */
} launch_launcher_t;

/* How a node's proxy is started: by the front end (its direct proxies) and
 * by an inner proxy of a tree (its children). launcher.c. */
typedef struct {
    launch_launcher_t how;
    const char *exec;          /* --launcher-exec words; NULL: LOCUS_SSH for ssh */
    const char *proxy_path;    /* locusrun on the other nodes */
    const char *self;          /* this binary (the local launcher) */
    const char *jobid;
    double timeout;            /* LOCUS_LAUNCH_TIMEOUT (ssh's ConnectTimeout) */
    const sigset_t *unblock;   /* blocked here, unblocked in the child */
} launch_via_t;

/* Starts the proxy of host: 0 with the launcher child's pid and this end
 * of the proxy's control stream (non-blocking), or -1 with errno. */
int launch_proxy_start(const launch_via_t *v, const char *host, pid_t *pid, int *fd);
/* Runs `locusrun --cleanup JOBID` on host in the background (never with
 * the local launcher): its pid, or -1. */
pid_t launch_cleanup_start(const launch_via_t *v, const char *host);

/* Command line of the front end, after validation. */
typedef struct {
    int nranks;
    int nranks_given;          /* -n was on the command line */
    launch_hosts_t hosts;      /* --host/--hostfile; empty: this machine only */
    int ppn;                   /* --ppn/-N: ranks per node, 0: by slots */
    int map_by_node;           /* --map-by node: round-robin over nodes */
    int oversubscribe;         /* --oversubscribe was given */
    launch_launcher_t launcher;
    int launcher_given;
    const char *launcher_exec; /* --launcher-exec words, NULL: default */
    int launcher_slurm;        /* the slurm launcher: srun starts the proxies */
    int report_bindings;
    int startup_report;        /* --startup-report */
    int mpi_pmix;              /* --mpi pmix: the proxies serve PMIx too */
    int mpi_given;             /* --mpi was on the command line */
    int tag_output;
    int dry_run;
    int no_abi_swap;           /* --no-abi-swap: leave the loader path alone */
    double timeout_s;          /* 0: none */
    const char *topology;      /* --topology FILE or NULL */
    int nexports;
    char **exports;            /* -x words as given: VAR or VAR=VAL */
    char *exe;                 /* resolved program path */
    int argc;                  /* program argv (argv[0] as typed) */
    char **argv;
    int place_argc;            /* placement option words, replayed into */
    char **place_argv;         /* locus_place_opt_parse by the planner */
} launch_opts_t;

/*
 * Parses the front end's command line. Returns 0, or 2 with a one-line
 * reason in err (bad input: the caller prints it and exits 2), or 1 when
 * help/version was printed (exit 0).
 */
int launch_opts_parse(launch_opts_t *o, int argc, char **argv, char *err,
                      size_t errlen);

void launch_opts_free(launch_opts_t *o);

/* 1 when the ELF program at path names soname among its DT_NEEDED. */
int launch_elf_needs(const char *path, const char *soname);

/* Whether locusrun's own option word `opt` takes a value word after it. */
int launch_opt_takes_value(const char *opt);

/* Open MPI's and Hydra's mpirun options and environment, as locusrun's
 * own words (dialect.c): d->argv is argv translated, to parse with
 * launch_opts_parse and keep until the job is over. What Locus cannot
 * honour is named in one warning line. 0, or -1 with err. */
typedef struct {
    int argc;
    char **argv;
} launch_dialect_t;
int launch_dialect_translate(launch_dialect_t *d, int argc, char **argv, char *err,
                             size_t errlen);
void launch_dialect_free(launch_dialect_t *d);

/* Runs the front end; returns the job's exit status. */
int launch_frontend_run(launch_opts_t *o);

/* Runs the proxy role on control fds in/out; returns its exit status. */
int launch_proxy_run(int ctl_in, int ctl_out);
/* `locusrun --proxy-connect`, a proxy started by the job's one srun
 * (connect_back.c): dials the front end at LOCUS_FRONTEND with
 * LOCUS_LAUNCH_TOKEN, then runs as launch_proxy_run on that socket. */
int launch_proxy_connect(void);

/* `locusrun --name-server`: a name service of its own (names.c), shared
 * by launches that find it in LOCUS_NAME_SERVER (as MPICH's
 * hydra_nameserver and Open MPI's ompi-server are): prints that
 * variable's assignment on stdout and serves until SIGINT, SIGTERM or
 * SIGHUP. The exit status. */
int launch_name_server_run(void);

/* "SIGKILL" for 9, "SIG?" when unknown. */
const char *launch_signame(int sig);

/* Monotonic time in seconds. */
double launch_now(void);

/* Whether LOCUS_STARTUP_REPORT asks for the start-up report (1, yes, json). */
int launch_startup_report_on(void);

/* Removes the job's files on this node: /dev/shm/locus.<jobid>.* (files,
 * and directories with what they hold) and the PMIx servers'
 * <TMPDIR>/locus-pmix.<jobid>.<node>; returns how many. */
int launch_shm_cleanup(const char *jobid);

/* $TMPDIR when it is an absolute path, else /tmp. */
const char *launch_tmpdir(void);

/* Removes a directory and what it holds (never following links): 0 or -1. */
int launch_rmtree(const char *path);

/* Whether jobid is one locusrun makes ([A-Za-z0-9_-], at most 60 bytes). */
int launch_jobid_ok(const char *jobid);

/* Kills every process of job `jobid` in this network namespace (found by
 * LOCUS_JOBID in its environment) and removes the job's shared memory.
 * Returns how many processes were killed, or -1 for a bad jobid. */
int launch_job_cleanup(const char *jobid);

#endif
