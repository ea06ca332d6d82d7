/*
 * copy_ceiling — what this machine's cores can move between two processes
 * with no MPI and no transport around it: the ceiling the shm transport's
 * large-message paths are measured against. A program to run by hand, not
 * a test:
 *
 *   copy_ceiling [-b SIZES] [-c CHUNK] [-s SLOTS] [-r REPEATS]
 *     -b  message sizes, comma-separated (default 64k,1M,4M)
 *     -c  chunk of the two-copy stream (default 64k, at most the message)
 *     -s  chunks in flight (default 16)
 *     -r  repeats of each measurement; the best is shown (default 3)
 *
 * Per size, in MB/s of payload:
 *  - memcpy: one process copying a message between two buffers it reuses
 *    (what one core's copy can do with both in its caches);
 *  - two copies: two processes pinned to CPUs 0 and 1 streaming messages
 *    as osu_bw does (the same source and destination buffer every time),
 *    the sender copying each chunk into a shared ring of chunks and the
 *    receiver copying it out; the pipelined copy's ceiling;
 *  - cma: the receiver reading each message from the sender's buffer with
 *    process_vm_readv, the single copy's ceiling.
 * When the two-copy figure is below twice the CMA one, splitting one
 * transfer between both sides' CMA copies could beat the pipeline.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* process_vm_readv, CPU_SET */
#endif
#include "locus_tunables.h"
#include "shm_harness.h"

#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STREAM_BYTES (256L << 20) /* payload per measurement */
#define WAIT_LIMIT_S 20.0         /* a peer silent this long: give up */

typedef struct {
    _Alignas(64) _Atomic long head; /* chunks the sender filled */
    _Alignas(64) _Atomic long tail; /* chunks the receiver emptied */
    _Alignas(64) _Atomic long go;   /* CMA rounds: the sender's buffer is ready */
    _Alignas(64) _Atomic long done; /* CMA rounds: the receiver has read it */
} ctl_t;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    sched_setaffinity(0, sizeof s, &s);
}

/* Spins until *w reaches at least v; exits when that takes too long. */
static void wait_for(_Atomic long *w, long v)
{
    double t0 = 0;
    for (unsigned spins = 0; atomic_load_explicit(w, memory_order_acquire) < v; spins++) {
        if ((spins & 0xffff) != 0xffff)
            continue;
        double t = now_s();
        if (t0 == 0)
            t0 = t;
        else if (t - t0 > WAIT_LIMIT_S) {
            fprintf(stderr, "copy_ceiling: the other process stopped answering\n");
            exit(1);
        }
        sched_yield();
    }
}

static double memcpy_rate(size_t size)
{
    unsigned char *a = aligned_alloc(4096, size), *b = aligned_alloc(4096, size);
    if (!a || !b)
        exit(1);
    memset(a, 1, size);
    memset(b, 2, size);
    long n = STREAM_BYTES / (long)size + 1;
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        memcpy(b, a, size);
        __asm__ __volatile__("" ::"r"(b) : "memory");
    }
    double t = now_s() - t0;
    free(a);
    free(b);
    return (double)size * (double)n / t;
}

/* The sender's (rank 0) or receiver's side of one two-copy stream of n
 * messages of size bytes through slots chunks of chunk bytes. */
static void two_copy_side(int rank, ctl_t *ctl, unsigned char *ring, size_t chunk, long slots,
                          unsigned char *buf, size_t size, long n, long base)
{
    long per = (long)((size + chunk - 1) / chunk), k = base;
    for (long m = 0; m < n; m++)
        for (long j = 0; j < per; j++, k++) {
            size_t off = (size_t)j * chunk, len = size - off < chunk ? size - off : chunk;
            unsigned char *slot = ring + (size_t)(k % slots) * chunk;
            if (rank == 0) {
                wait_for(&ctl->tail, k - slots + 1);
                memcpy(slot, buf + off, len);
                atomic_store_explicit(&ctl->head, k + 1, memory_order_release);
            } else {
                wait_for(&ctl->head, k + 1);
                memcpy(buf + off, slot, len);
                atomic_store_explicit(&ctl->tail, k + 1, memory_order_release);
            }
        }
}

int main(int argc, char **argv)
{
    long sizes[32] = { 65536, 1L << 20, 4L << 20 }, chunk = 65536, slots = 16;
    int nsizes = 3, reps = 3, opt;
    while ((opt = getopt(argc, argv, "b:c:s:r:")) != -1) {
        switch (opt) {
        case 'b': nsizes = harness_parse_sizes(optarg, sizes, 32); break;
        case 'c': if (locus_parse_size(optarg, &chunk) != 0) chunk = 0; break;
        case 's': slots = atol(optarg); break;
        case 'r': reps = atoi(optarg); break;
        default: nsizes = -1;
        }
    }
    for (int i = 0; i < nsizes; i++)
        if (sizes[i] < 1)
            nsizes = -1;
    if (nsizes < 1 || chunk < 64 || slots < 1 || slots > 4096 || reps < 1 || optind < argc) {
        fprintf(stderr, "usage: copy_ceiling [-b SIZES] [-c CHUNK] [-s SLOTS] [-r REPEATS]\n");
        return 2;
    }
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
        fprintf(stderr, "copy_ceiling: needs 2 online CPUs\n");
        return 1;
    }
    long maxsize = 0;
    for (int i = 0; i < nsizes; i++)
        maxsize = sizes[i] > maxsize ? sizes[i] : maxsize;
    size_t ring_len = (size_t)slots * (size_t)chunk;
    ctl_t *ctl = mmap(NULL, sizeof *ctl + ring_len, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (ctl == MAP_FAILED) {
        perror("copy_ceiling: mmap");
        return 1;
    }
    unsigned char *ring = (unsigned char *)(ctl + 1);
    unsigned char *buf = aligned_alloc(4096, (size_t)maxsize);
    if (!buf)
        return 1;
    memset(buf, 3, (size_t)maxsize);
    memset(ring, 0, ring_len);
    printf("# copy_ceiling: chunk %ld, %ld in flight, best of %d; MB/s\n", chunk, slots, reps);
    printf("# %10s %12s %12s %12s\n", "bytes", "memcpy", "two_copies", "cma");
    fflush(stdout);
    pid_t child = fork();
    if (child < 0) {
        perror("copy_ceiling: fork");
        return 1;
    }
    int rank = child == 0;
    pin(rank);
    long k = 0, rounds = 0;
    for (int i = 0; i < nsizes; i++) {
        size_t size = (size_t)sizes[i], ch = (size_t)chunk < size ? (size_t)chunk : size;
        long n = STREAM_BYTES / (long)size + 1;
        long per = (long)((size + ch - 1) / ch);
        double best_mc = 0, best_two = 0, best_cma = 0;
        for (int r = 0; r < reps; r++) {
            if (rank == 0) {
                double x = memcpy_rate(size);
                best_mc = x > best_mc ? x : best_mc;
            }
            /* Both sides start together: the receiver's empty ring is the go. */
            double t0 = now_s();
            two_copy_side(rank, ctl, ring, ch, slots, buf, size, n, k);
            k += n * per;
            if (rank == 0) {
                wait_for(&ctl->tail, k);
                double x = (double)size * (double)n / (now_s() - t0);
                best_two = x > best_two ? x : best_two;
            }
            /* CMA: rank 0 publishes its buffer, rank 1 reads it n times. */
            rounds++;
            if (rank == 0) {
                atomic_store_explicit(&ctl->go, rounds, memory_order_release);
                wait_for(&ctl->done, rounds);
            } else {
                wait_for(&ctl->go, rounds);
                struct iovec l = { buf, size }, rm = { buf, size };
                pid_t parent = getppid();
                double c0 = now_s();
                for (long m = 0; m < n; m++)
                    if (process_vm_readv(parent, &l, 1, &rm, 1, 0) != (ssize_t)size) {
                        perror("copy_ceiling: process_vm_readv");
                        atomic_store_explicit(&ctl->done, -1, memory_order_release);
                        _exit(1);
                    }
                double x = (double)size * (double)n / (now_s() - c0);
                /* The receiver's figure reaches rank 0 through the ring's first bytes. */
                memcpy(ring, &x, sizeof x);
                atomic_store_explicit(&ctl->done, rounds, memory_order_release);
            }
            if (rank == 0) {
                double x;
                memcpy(&x, ring, sizeof x);
                best_cma = x > best_cma ? x : best_cma;
            }
        }
        if (rank == 0) {
            printf("  %10zu %12.0f %12.0f %12.0f\n", size, best_mc / 1e6, best_two / 1e6,
                   best_cma / 1e6);
            fflush(stdout);
        }
    }
    if (rank == 1)
        _exit(0);
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
