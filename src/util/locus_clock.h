/*
 * locus_clock.h — the one clock the layers time things by: CLOCK_MONOTONIC
 * in nanoseconds (never steps back, unlike the wall clock).
 */
#ifndef LOCUS_CLOCK_H
#define LOCUS_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t locus_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
