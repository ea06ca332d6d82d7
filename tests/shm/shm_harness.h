/*
 * shm_harness.h — real processes for the shm transport tests: a kvs in
 * process-shared memory (a table under a process-shared mutex, fence = a
 * process-shared pthread barrier), set up before fork, and a fork/wait
 * helper with a deadline.
 */
#ifndef SHM_HARNESS_H
#define SHM_HARNESS_H

#include "locus_transport.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define HARNESS_MAX_PROCS 16
#define HARNESS_MAX_KEYS 256

typedef struct {
    pthread_mutex_t mu;
    pthread_barrier_t bar;
    int nprocs;
    int nkeys;
    struct {
        char key[64];
        char val[320];
    } ent[HARNESS_MAX_KEYS];
    volatile int flags[HARNESS_MAX_PROCS]; /* free for the tests' own signalling */
} harness_kvs_t;

typedef struct {
    harness_kvs_t *kvs;
    int nprocs;
    int local_ranks[HARNESS_MAX_PROCS];
    int oversubscribed;   /* passed in locus_tp_init_t; tests may change it */
    long idle;            /* idle progress rounds in a row (this process's) */
} harness_t;

/* Maps the shared kvs for `nprocs` processes. Returns 0 or -1. Sets
 * h->oversubscribed as the core would for a node of nprocs ranks that may
 * use every online CPU: nprocs > CPUs online; and LOCUS_JOB_KEY to a
 * random key, as locusrun would, unless it is set already. */
int harness_open(harness_t *h, int nprocs);
void harness_close(harness_t *h);

/* Fills `in` for rank `rank` of a one-node job of h->nprocs ranks. */
void harness_init(harness_t *h, locus_tp_init_t *in, int rank,
                  const locus_tp_upcalls_t *up, void *core);

/* One progress round of `tp` as the core's idle loop runs it: when
 * h->oversubscribed, every HARNESS_POLLS_BEFORE_YIELD idle rounds in a row
 * yield the CPU (the transport never does; LOCUS_YIELD belongs to the
 * core). Returns what progress() returned. */
#define HARNESS_POLLS_BEFORE_YIELD 32
int harness_progress(harness_t *h, locus_tp_t *tp);

/* A fence for the tests themselves (same barrier as the kvs fence). */
void harness_barrier(harness_t *h);

/* Forks h->nprocs children running fn(h, rank, arg), which returns the exit
 * status. Waits for all of them at most `timeout_s` seconds (then kills the
 * rest). Returns the number of children that failed (exit != 0, signal,
 * timeout) and prints one line per failure. */
int harness_run(harness_t *h, int (*fn)(harness_t *, int, void *), void *arg,
                int timeout_s);

/* Number of entries /dev/shm/locus.<jobid>.* (jobid = $LOCUS_JOBID). */
int harness_shm_leftovers(void);

/* Sets LOCUS_JOBID to a name unique to this test run ("t<pid>"). */
void harness_set_jobid(const char *prefix);

/* Message contents for the transport tests: a random stream, bytes that
 * depend on a seed (src, dst, seq), and a checksum. Byte i of a message is
 * the same whatever its length, so a truncated receive checks against the
 * same pattern; harness_check returns the first bad offset, or SIZE_MAX. */
uint64_t harness_rng(uint64_t *s);
void harness_fill(unsigned char *b, size_t len, uint64_t seed);
size_t harness_check(const unsigned char *b, size_t len, uint64_t seed);
uint64_t harness_sum(const unsigned char *b, size_t len);

/* A comma-separated list of sizes ("0,8,1k,64k") into out (at most max):
 * how many, or -1 when one does not parse. For the benchmarks' options. */
int harness_parse_sizes(const char *s, long *out, int max);

#endif
