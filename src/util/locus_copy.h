/*
 * locus_copy.h — the copy every payload takes (transports, datatypes,
 * collectives): memcpy, except where memcpy falls off a cliff.
 *
 * glibc copies from about 2 KiB up to its non-temporal threshold (between
 * 256 KiB and 512 KiB on the 2-vCPU EPYC VM) with `rep movsb`, and on AMD
 * Zen 3 that instruction runs at 3 GB/s instead of 35-80 when the
 * destination lies 1 to 31 bytes past the source modulo 4 KiB: an 8 KiB
 * copy took 3.3 us instead of 0.09. Such pairs are common: malloc's large
 * buffers start 16 bytes into a page, the shm pool's chunks and a user's
 * aligned buffers at its start. A 2-rank MPI_Allreduce of 8 KiB whose
 * receive buffer sat 16 bytes (mod 4 KiB) past its send buffer took 4.4
 * us instead of 1.6 (the copy of the input it starts with).
 *
 * locus_copy() moves those pairs 64 bytes at a time with unaligned 16-byte
 * loads and stores (33-52 GB/s there on the same VM; glibc's own vector
 * loop, in 2 KiB pieces, reached only 16-18); every other copy is memcpy.
 */
#ifndef LOCUS_COPY_H
#define LOCUS_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Below this memcpy stays on its vector loop whatever the distance. */
#define LOCUS_COPY_LOOP_MIN 2048u
/* The destinations past the source (mod 4 KiB) that `rep movsb` crawls at. */
#define LOCUS_COPY_SLOW_DIST 32u

typedef unsigned char locus_copy_v16_t __attribute__((vector_size(16), aligned(1), may_alias));

/* 1 when memcpy(dst, src, n) would take glibc's `rep movsb` at a slow distance. */
static inline int locus_copy_is_slow(const void *dst, const void *src, size_t n)
{
    uintptr_t dist = ((uintptr_t)dst - (uintptr_t)src) & 4095u;
    return n >= LOCUS_COPY_LOOP_MIN && dist != 0 && dist < LOCUS_COPY_SLOW_DIST;
}

/* GCC must not turn the loop below back into a memcpy call. */
#if defined(__GNUC__) && !defined(__clang__)
#define LOCUS_COPY_LOOP __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define LOCUS_COPY_LOOP
#endif

/* The slow distances' copy: 64 bytes a turn, then the tail by memcpy. */
LOCUS_COPY_LOOP static inline void locus_copy_by_vectors(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        locus_copy_v16_t a = *(const locus_copy_v16_t *)(s + i);
        locus_copy_v16_t b = *(const locus_copy_v16_t *)(s + i + 16);
        locus_copy_v16_t c = *(const locus_copy_v16_t *)(s + i + 32);
        locus_copy_v16_t e = *(const locus_copy_v16_t *)(s + i + 48);
        *(locus_copy_v16_t *)(d + i) = a;
        *(locus_copy_v16_t *)(d + i + 16) = b;
        *(locus_copy_v16_t *)(d + i + 32) = c;
        *(locus_copy_v16_t *)(d + i + 48) = e;
    }
    if (i < n)
        memcpy(d + i, s + i, n - i);
}

/* memcpy(dst, src, n) for payloads: the buffers must not overlap. */
static inline void locus_copy(void *dst, const void *src, size_t n)
{
    if (__builtin_expect(locus_copy_is_slow(dst, src, n), 0))
        locus_copy_by_vectors(dst, src, n);
    else
        memcpy(dst, src, n);
}

/* memmove(dst, src, n) for payloads: locus_copy() unless the buffers overlap. */
static inline void locus_move(void *dst, const void *src, size_t n)
{
    uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
    if (d + n <= s || s + n <= d)
        locus_copy(dst, src, n);
    else
        memmove(dst, src, n);
}

#endif
