#include "shm_harness.h"
#include "locus_tunables.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int kvs_put(void *ctx, const char *key, const char *val)
{
    harness_kvs_t *k = ctx;
    int rc = -1;
    pthread_mutex_lock(&k->mu);
    if (k->nkeys < HARNESS_MAX_KEYS && strlen(key) < sizeof k->ent[0].key &&
        strlen(val) < sizeof k->ent[0].val) {
        strcpy(k->ent[k->nkeys].key, key);
        strcpy(k->ent[k->nkeys].val, val);
        k->nkeys++;
        rc = 0;
    }
    pthread_mutex_unlock(&k->mu);
    return rc;
}

static int kvs_get(void *ctx, int owner, const char *key, char *val, size_t vallen)
{
    (void)owner;
    harness_kvs_t *k = ctx;
    int rc = -1;
    pthread_mutex_lock(&k->mu);
    for (int i = k->nkeys - 1; i >= 0; i--)
        if (strcmp(k->ent[i].key, key) == 0) {
            snprintf(val, vallen, "%s", k->ent[i].val);
            rc = 0;
            break;
        }
    pthread_mutex_unlock(&k->mu);
    return rc;
}

static int kvs_fence(void *ctx)
{
    harness_kvs_t *k = ctx;
    int rc = pthread_barrier_wait(&k->bar);
    return rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD ? 0 : -1;
}

/* The address exchange, done the lazy way: a card is a key
 * "locus.<name>.<rank>", read when asked for. */
static int kvs_rank; /* each rank is a process of its own */

static int kvs_publish(void *ctx, const char *name, const char *card)
{
    char key[64];
    snprintf(key, sizeof key, "locus.%s.%d", name, kvs_rank);
    int rc = kvs_put(ctx, key, card);
    return kvs_fence(ctx) != 0 ? -1 : rc;
}

static int kvs_card(void *ctx, const char *name, int rank, char *val, size_t vallen)
{
    char key[64];
    snprintf(key, sizeof key, "locus.%s.%d", name, rank);
    return kvs_get(ctx, rank, key, val, vallen);
}

static const char *kvs_error(void *ctx)
{
    (void)ctx;
    return "harness kvs: no such card, or the store is full";
}

int harness_open(harness_t *h, int nprocs)
{
    if (nprocs < 1 || nprocs > HARNESS_MAX_PROCS)
        return -1;
    harness_kvs_t *k = mmap(NULL, sizeof *k, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (k == MAP_FAILED)
        return -1;
    memset(k, 0, sizeof *k);
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
    pthread_mutex_init(&k->mu, &ma);
    pthread_barrierattr_t ba;
    pthread_barrierattr_init(&ba);
    pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
    pthread_barrier_init(&k->bar, &ba, (unsigned)nprocs);
    k->nprocs = nprocs;
    h->kvs = k;
    h->nprocs = nprocs;
    for (int i = 0; i < nprocs; i++)
        h->local_ranks[i] = i;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    h->oversubscribed = online <= 0 || nprocs > online;
    /* The job's key, as locusrun would give it (a listening transport
     * admits only peers that prove it), unless the test chose one. */
    if (!getenv("LOCUS_JOB_KEY")) {
        unsigned char key[32];
        char hex[65];
        if (getrandom(key, sizeof key, 0) != (ssize_t)sizeof key)
            return -1;
        for (int i = 0; i < 32; i++)
            snprintf(hex + 2 * i, 3, "%02x", key[i]);
        setenv("LOCUS_JOB_KEY", hex, 1);
    }
    return 0;
}

void harness_close(harness_t *h)
{
    munmap(h->kvs, sizeof *h->kvs);
}

void harness_init(harness_t *h, locus_tp_init_t *in, int rank,
                  const locus_tp_upcalls_t *up, void *core)
{
    memset(in, 0, sizeof *in);
    in->rank = rank;
    in->size = h->nprocs;
    in->local_rank = rank;
    in->local_size = h->nprocs;
    in->local_ranks = h->local_ranks;
    in->kvs.ctx = h->kvs;
    in->kvs.put = kvs_put;
    in->kvs.get = kvs_get;
    in->kvs.fence = kvs_fence;
    in->kvs.publish = kvs_publish;
    in->kvs.card = kvs_card;
    in->kvs.error = kvs_error;
    kvs_rank = rank;
    in->up = up;
    in->core = core;
    in->oversubscribed = h->oversubscribed;
}

int harness_progress(harness_t *h, locus_tp_t *tp)
{
    int rc = tp->ops->progress(tp);
    if (rc != 0)
        h->idle = 0;
    else if (h->oversubscribed && ++h->idle % HARNESS_POLLS_BEFORE_YIELD == 0)
        sched_yield();
    return rc;
}

void harness_barrier(harness_t *h)
{
    (void)kvs_fence(h->kvs);
}

int harness_run(harness_t *h, int (*fn)(harness_t *, int, void *), void *arg, int timeout_s)
{
    pid_t pids[HARNESS_MAX_PROCS];
    int failed = 0, left = h->nprocs;
    fflush(NULL);
    for (int r = 0; r < h->nprocs; r++) {
        pids[r] = fork();
        if (pids[r] < 0) {
            perror("fork");
            return h->nprocs;
        }
        if (pids[r] == 0) {
            alarm((unsigned)timeout_s + 5); /* never outlive the parent's deadline */
            int rc = fn(h, r, arg);
            fflush(NULL);
            _exit(rc);
        }
    }
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (left > 0) {
        int st;
        pid_t p = waitpid(-1, &st, WNOHANG);
        if (p > 0) {
            left--;
            int r = 0;
            while (r < h->nprocs && pids[r] != p)
                r++;
            if (r < h->nprocs)
                pids[r] = 0;
            if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
                continue;
            failed++;
            if (WIFEXITED(st))
                fprintf(stderr, "rank %d exited with status %d\n", r, WEXITSTATUS(st));
            else
                fprintf(stderr, "rank %d killed by signal %d\n", r, WTERMSIG(st));
            continue;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec >= timeout_s) {
            for (int r = 0; r < h->nprocs; r++)
                if (pids[r] > 0) {
                    fprintf(stderr, "rank %d timed out after %d s\n", r, timeout_s);
                    kill(pids[r], SIGKILL);
                    waitpid(pids[r], NULL, 0);
                    failed++;
                    left--;
                }
            break;
        }
        usleep(2000);
    }
    return failed;
}

int harness_shm_leftovers(void)
{
    const char *job = getenv("LOCUS_JOBID");
    char prefix[128];
    snprintf(prefix, sizeof prefix, "locus.%s.", job ? job : "");
    DIR *d = opendir("/dev/shm");
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            fprintf(stderr, "left behind: /dev/shm/%s\n", e->d_name);
            n++;
        }
    closedir(d);
    return n;
}

void harness_set_jobid(const char *prefix)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s%ld", prefix, (long)getpid());
    setenv("LOCUS_JOBID", buf, 1);
}

/* ---- message contents ---- */

uint64_t harness_rng(uint64_t *s)
{
    uint64_t x = (*s += 0x9e3779b97f4a7c15ull);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t word_at(uint64_t seed, size_t i)
{
    return (seed * 0x9e3779b97f4a7c15ull + 1) + (uint64_t)i * 0xff51afd7ed558ccdull;
}

/* Byte i is byte i%8 of word_at(seed, i - i%8), whatever the length, so
 * a truncated receive is checked against the same pattern. */
void harness_fill(unsigned char *b, size_t len, uint64_t seed)
{
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t v = word_at(seed, i);
        memcpy(b + i, &v, 8);
    }
    if (i < len) {
        uint64_t v = word_at(seed, i);
        memcpy(b + i, &v, len - i);
    }
}

size_t harness_check(const unsigned char *b, size_t len, uint64_t seed)
{
    for (size_t i = 0; i < len; i += 8) {
        uint64_t v = word_at(seed, i);
        size_t k = len - i < 8 ? len - i : 8;
        if (memcmp(b + i, &v, k) != 0)
            for (size_t j = 0; j < k; j++)
                if (b[i + j] != ((unsigned char *)&v)[j])
                    return i + j;
    }
    return SIZE_MAX;
}

uint64_t harness_sum(const unsigned char *b, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

int harness_parse_sizes(const char *s, long *out, int max)
{
    int n = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save, *t = strtok_r(buf, ",", &save); t && n < max; t = strtok_r(NULL, ",", &save))
        if (locus_parse_size(t, &out[n++]) != 0)
            return -1;
    return n;
}
