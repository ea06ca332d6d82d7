/*
 * Idle polling: yielding when ranks outnumber cores, and noticing a peer
 * that died (without finalize, or while we wait on it).
 */
#include "shm_tp.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECK_EVERY 1024               /* idle polls between clock reads */
#define CHECK_PERIOD_NS 1000000000ull  /* peer liveness checks at most once a second */

/* Whether `pid` is gone or a zombie (kill(pid, 0) succeeds on zombies). */
static int pid_dead(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return errno == ENOENT;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *rp = strrchr(buf, ')');
    return rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X');
}

static int peers_check(shm_tp_t *tp)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    if (now - tp->last_check_ns < CHECK_PERIOD_NS)
        return 0;
    tp->last_check_ns = now;
    for (int l = 0; l < tp->local_size; l++) {
        shm_peer_t *p = &tp->peers[l];
        if (l == tp->local_rank || !p->pid_ok)
            continue;
        /* Gone without finalize: a crash, fatal for the job. Gone after
         * finalize is fine unless we still wait on it. */
        const shm_seg_hdr_t *h = (const shm_seg_hdr_t *)p->seg;
        int clean = atomic_load_explicit(&h->finalized, memory_order_acquire);
        if ((!clean || p->outstanding || p->stalled) && pid_dead(p->pid)) {
            /* Its last messages (a FIN, the last chunk) may have reached
             * our ring after this round polled it: take those first. */
            if (shm_ring_peek(&p->rx))
                return 0;
            return tp->failed = -ECONNRESET;
        }
    }
    return 0;
}

int shm_tp_idle(shm_tp_t *tp)
{
    tp->idle++;
    if (tp->yield && tp->idle >= tp->polls_before_yield)
        sched_yield();
    if (tp->idle % CHECK_EVERY == 0)
        return peers_check(tp);
    return 0;
}

int shm_tp_oversubscribed(shm_tp_t *tp)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online > 0 && tp->local_size > online)
        return 1;
    const shm_seg_hdr_t *me = (const shm_seg_hdr_t *)tp->seg;
    int mine = CPU_COUNT(&me->cpus);
    if (mine <= 0)
        return 1;
    /* Ranks whose allowed CPUs overlap mine compete for them. */
    int sharing = 0;
    for (int l = 0; l < tp->local_size; l++) {
        const shm_seg_hdr_t *h = (const shm_seg_hdr_t *)(l == tp->local_rank ? tp->seg : tp->peers[l].seg);
        cpu_set_t both;
        CPU_AND(&both, &me->cpus, &h->cpus);
        if (CPU_COUNT(&both) > 0)
            sharing++;
    }
    return sharing > mine;
}
