/* The MPI_THREAD_MULTIPLE critical section (locus_cs.h). */
#include "locus_cs.h"

int locus_cs_init(locus_cs_t *cs)
{
    atomic_init(&cs->owner, 0);
    atomic_init(&cs->waiters, 0);
    cs->depth = 0;
    return pthread_mutex_init(&cs->mutex, NULL);
}

void locus_cs_lock_slow(locus_cs_t *cs)
{
    /* Uncontended, a trylock costs what a lock does; only a thread that
     * must block says so, for locus_cs_contended. */
    if (pthread_mutex_trylock(&cs->mutex) != 0) {
        atomic_fetch_add_explicit(&cs->waiters, 1, memory_order_relaxed);
        pthread_mutex_lock(&cs->mutex);
        atomic_fetch_sub_explicit(&cs->waiters, 1, memory_order_relaxed);
    }
    atomic_store_explicit(&cs->owner, locus_cs_self(), memory_order_relaxed);
    cs->depth = 1;
}

void locus_cs_yield(locus_cs_t *cs, void (*idle)(void *arg), void *arg)
{
    if (atomic_load_explicit(&cs->owner, memory_order_relaxed) != locus_cs_self()) {
        idle(arg);
        return;
    }
    int depth = cs->depth;
    cs->depth = 0;
    atomic_store_explicit(&cs->owner, 0, memory_order_relaxed);
    pthread_mutex_unlock(&cs->mutex);
    /* glibc's mutex does not hand over: without a pause here the thread
     * just woken rarely wins against this one coming straight back (what
     * MPICH's global lock does too: unlock, yield, lock). */
    idle(arg);
    locus_cs_lock_slow(cs);
    cs->depth = depth;
}
