/*
 * locus_copy() and locus_move() (src/util/locus_copy.h) against byte
 * loops: every size around the vector loop's edges, every destination
 * 0..80 bytes past the source modulo 4 KiB (the slow distances 1..31
 * among them), both directions, and locus_move on overlapping buffers.
 * Bytes around the destination must stay untouched.
 */
#include "locus_copy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (!(cond) && failures++ < 20) {                                       \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                         \
            printf(__VA_ARGS__);                                                \
            printf("\n");                                                       \
        }                                                                       \
    } while (0)

enum { AREA = 1 << 20, GUARD = 64 };

/* Fills the area with a pattern that differs at every byte of a page. */
static void fill(unsigned char *a, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        a[i] = (unsigned char)(i * 131u + seed + (i >> 12) * 7u);
}

/* Copies n bytes from src_off to dst_off of the area with copy() and
 * checks the destination, and that the guard bytes around it held. */
static void one(unsigned char *area, unsigned char *ref, size_t src_off, size_t dst_off,
                size_t n, int move)
{
    fill(area, AREA, (unsigned)(n + dst_off));
    memcpy(ref, area, AREA);
    if (move)
        locus_move(area + dst_off, area + src_off, n);
    else
        locus_copy(area + dst_off, area + src_off, n);
    memmove(ref + dst_off, ref + src_off, n);
    size_t lo = dst_off >= GUARD ? dst_off - GUARD : 0, hi = dst_off + n + GUARD;
    CHECK(memcmp(area + lo, ref + lo, hi - lo) == 0, "%s of %zu bytes from %zu to %zu differs",
          move ? "move" : "copy", n, src_off, dst_off);
}

int main(void)
{
    unsigned char *area = aligned_alloc(4096, AREA), *ref = aligned_alloc(4096, AREA);
    static const size_t sizes[] = { 0, 1, 63, 64, 65, 2047, 2048, 2049, 4095, 4096, 4097,
                                    8191, 8256, 65536 + 17, 262144 + 3 };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        for (size_t dist = 0; dist <= 80; dist++) {
            /* Destination after the source (mod 4 KiB) and before it. */
            one(area, ref, 4096 + 5, 4096 + 5 + 4096 * 73 + dist, n, 0);
            one(area, ref, 4096 + 5 + 4096 * 73 + dist, 4096 + 5, n, 0);
        }
        /* Overlapping moves both ways (slow distances included). */
        for (size_t d = 1; d < 40; d += 7) {
            one(area, ref, 8192, 8192 + d, n, 1);
            one(area, ref, 8192 + d, 8192, n, 1);
        }
    }
    CHECK(locus_copy_is_slow((char *)area + 16, area, 4096) &&
              !locus_copy_is_slow((char *)area + 32, area, 4096) &&
              !locus_copy_is_slow((char *)area + 16, area, 2047) &&
              !locus_copy_is_slow(area, (char *)area + 16, 4096),
          "locus_copy_is_slow");
    free(area);
    free(ref);
    if (failures)
        return 1;
    printf(" No Errors\n");
    return 0;
}
