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

#define CTL_WORDS_MAX 16
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

/*
 * Sends one message: the verb then n words of given lengths (lens NULL:
 * NUL-terminated). Blocking write of the whole line; returns 0 or -1.
 */
int ctl_send(int fd, const char *verb, int n, const char *const *words,
             const size_t *lens);

/* ctl_send with NUL-terminated words given as a NULL-terminated list. */
int ctl_sendl(int fd, const char *verb, ...);

/* Word i of m as a long; -1 with *ok = 0 when absent or not a number. */
long ctl_word_long(const ctl_msg_t *m, int i, int *ok);

/* Command line of the front end, after validation. */
typedef struct {
    int nranks;
    int report_bindings;
    int tag_output;
    int dry_run;
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

/* Runs the front end; returns the job's exit status. */
int launch_frontend_run(launch_opts_t *o);

/* Runs the proxy role on control fds in/out; returns its exit status. */
int launch_proxy_run(int ctl_in, int ctl_out);

/* "SIGKILL" for 9, "SIG?" when unknown. */
const char *launch_signame(int sig);

/* Monotonic time in seconds. */
double launch_now(void);

/* Removes /dev/shm/locus.<jobid>.* ; returns how many were removed. */
int launch_shm_cleanup(const char *jobid);

#endif
