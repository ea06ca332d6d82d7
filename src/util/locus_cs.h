/*
 * locus_cs.h — a recursive critical section for MPI_THREAD_MULTIPLE: one
 * lock that every MPI entry point takes, that a blocking wait hands over
 * while it has nothing to do, and that a thread already holding it may
 * take again (an MPI call that calls MPI, a user callback that does).
 *
 * Built on a pthread mutex (a waiter sleeps in the kernel, which matters
 * when ranks and threads outnumber the cores) plus the owner and depth
 * that make it recursive. The owner is read without the mutex: a thread
 * only ever finds its own id there if it stored it itself, so a stale
 * value never makes another thread believe it holds the lock.
 *
 * A count of the threads blocked on the mutex lets a wait loop keep the
 * lock while nobody wants it: MPI_THREAD_MULTIPLE with one busy thread
 * then spins exactly as a single-threaded program does.
 */
#ifndef LOCUS_CS_H
#define LOCUS_CS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

typedef struct {
    pthread_mutex_t mutex;
    _Atomic uintptr_t owner;   /* pthread_self() of the holder, 0: none */
    int depth;                 /* the holder's nesting (only it touches it) */
    atomic_int waiters;        /* threads blocked in locus_cs_enter */
} locus_cs_t;

/* Prepares cs (unheld). Returns 0, or an errno value. */
int locus_cs_init(locus_cs_t *cs);

static inline uintptr_t locus_cs_self(void)
{
    return (uintptr_t)pthread_self();
}

/* Takes cs, again if this thread holds it already (then only counts). */
void locus_cs_lock_slow(locus_cs_t *cs);
static inline void locus_cs_enter(locus_cs_t *cs)
{
    if (atomic_load_explicit(&cs->owner, memory_order_relaxed) == locus_cs_self()) {
        cs->depth++;
        return;
    }
    locus_cs_lock_slow(cs);
}

/* Leaves one level of cs; the outermost releases it. */
static inline void locus_cs_exit(locus_cs_t *cs)
{
    if (--cs->depth == 0) {
        atomic_store_explicit(&cs->owner, 0, memory_order_relaxed);
        pthread_mutex_unlock(&cs->mutex);
    }
}

/* 1 when another thread waits to enter cs: worth handing it over. */
static inline int locus_cs_contended(locus_cs_t *cs)
{
    return atomic_load_explicit(&cs->waiters, memory_order_relaxed) > 0;
}

/*
 * For a blocking wait with nothing to do: releases cs entirely (whatever
 * the nesting), runs idle(arg) (a yield or a nap) without it, and takes it
 * back at the same depth. A thread that does not hold cs just runs idle.
 */
void locus_cs_yield(locus_cs_t *cs, void (*idle)(void *arg), void *arg);

#endif
