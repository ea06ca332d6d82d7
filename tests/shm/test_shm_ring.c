/*
 * Unit tests of the SPSC ring (src/transport/shm/shm_ring.h): wraparound
 * with skips, full ring, payloads that look like positions, and a producer
 * and a consumer running concurrently in two processes (default) or two
 * threads (`-t`, the mode the ThreadSanitizer build runs).
 */
#include "shm_ring.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;

#define CHECK(cond) do { if (!(cond)) { \
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    failures++; } } while (0)

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = (*s += 0x9e3779b97f4a7c15ull);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Message i at position `pos` of a ring of `n` cells: the payload word
 * that lands on the seq word of continuation cell j holds pos + j + n, the
 * very position a reader expects there one lap later: the worst case for a
 * reader that would trust stale seq words. */
static void msg_fill(shm_cell_t *c, uint32_t i, uint32_t len, uint32_t pos, uint32_t n)
{
    c->type = SHM_T_TEST;
    c->len = len;
    c->aux = i;
    uint32_t *w = (uint32_t *)c->body;
    for (uint32_t k = 0; k < len / 4; k++)
        w[k] = pos + n + (k + 4) / 16;
}

static int msg_check(const shm_cell_t *c, uint32_t i, uint32_t pos, uint32_t n)
{
    if (c->type != SHM_T_TEST || c->aux != i)
        return -1;
    const uint32_t *w = (const uint32_t *)c->body;
    for (uint32_t k = 0; k < c->len / 4; k++)
        if (w[k] != pos + n + (k + 4) / 16)
            return -1;
    return 0;
}

static uint32_t msg_len(uint64_t *rng, uint32_t max_cells)
{
    uint32_t cells = 1 + (uint32_t)(rng_next(rng) % max_cells);
    return (cells * SHM_CELL_SIZE - SHM_CELL_HEAD) & ~3u;
}

static void test_full(void)
{
    const uint32_t n = 64;
    void *mem = aligned_alloc(128, shm_ring_bytes(n));
    shm_ring_init(mem, n);
    shm_ring_tx_t tx;
    shm_ring_rx_t rx;
    shm_ring_tx_attach(&tx, mem, n);
    shm_ring_rx_attach(&rx, mem, n);
    CHECK(shm_ring_peek(&rx) == NULL);
    /* Two half-ring messages fill it exactly. */
    for (uint32_t i = 0; i < 2; i++) {
        shm_cell_t *c = shm_ring_reserve(&tx, n / 2);
        CHECK(c != NULL);
        if (!c)
            return;
        msg_fill(c, i, 64, tx.tail, n);
        shm_ring_commit(&tx, c, n / 2);
    }
    CHECK(shm_ring_reserve(&tx, 1) == NULL);
    CHECK(shm_ring_reserve(&tx, 1) == NULL); /* and it stays so, no side effect */
    shm_cell_t *c = shm_ring_peek(&rx);
    CHECK(c && c->aux == 0 && c->ncells == n / 2);
    if (c)
        shm_ring_release(&rx, c);
    /* Room again, exactly half a ring. */
    CHECK(shm_ring_reserve(&tx, n / 2 + 1) == NULL);
    c = shm_ring_reserve(&tx, n / 2);
    CHECK(c != NULL);
    if (c) {
        msg_fill(c, 2, 0, tx.tail, n);
        shm_ring_commit(&tx, c, n / 2);
    }
    for (uint32_t i = 1; i < 3; i++) {
        c = shm_ring_peek(&rx);
        CHECK(c && c->aux == i);
        if (c)
            shm_ring_release(&rx, c);
    }
    CHECK(shm_ring_peek(&rx) == NULL);
    free(mem);
}

/* Single thread, many laps: messages of 1..n/2 cells force skips at the
 * end; the consumer drains whenever the producer finds the ring full. */
static void test_wrap(void)
{
    const uint32_t n = 64;
    void *mem = aligned_alloc(128, shm_ring_bytes(n));
    shm_ring_init(mem, n);
    shm_ring_tx_t tx;
    shm_ring_rx_t rx;
    shm_ring_tx_attach(&tx, mem, n);
    shm_ring_rx_attach(&rx, mem, n);
    uint64_t rng = 1;
    uint32_t sent = 0, got = 0, fulls = 0;
    while (sent < 200000) {
        uint32_t len = msg_len(&rng, n / 2);
        uint32_t cells = shm_ring_cells_for(len);
        shm_cell_t *c = shm_ring_reserve(&tx, cells);
        if (!c) {
            fulls++;
            CHECK(sent != got); /* full with nothing in it would be a bug */
            /* Drain a random number of messages, then retry. */
            uint32_t k = 1 + (uint32_t)(rng_next(&rng) % 8);
            while (k-- && got < sent) {
                shm_cell_t *m = shm_ring_peek(&rx);
                CHECK(m != NULL);
                if (!m)
                    break;
                CHECK(msg_check(m, got, rx.pos, n) == 0);
                shm_ring_release(&rx, m);
                got++;
            }
            continue;
        }
        msg_fill(c, sent, len, tx.tail, n);
        shm_ring_commit(&tx, c, cells);
        sent++;
        CHECK(sent - got < 4096);
    }
    while (got < sent) {
        shm_cell_t *m = shm_ring_peek(&rx);
        CHECK(m != NULL);
        if (!m)
            break;
        CHECK(msg_check(m, got, rx.pos, n) == 0);
        shm_ring_release(&rx, m);
        got++;
    }
    CHECK(shm_ring_peek(&rx) == NULL);
    CHECK(fulls > 1000);
    CHECK(tx.tail > 20u * n); /* many laps */
    free(mem);
}

/* ---- concurrent producer/consumer ---- */

typedef struct {
    void *mem;
    uint32_t ncells;
    uint32_t count;
    int errors;
} pc_t;

static void *producer(void *arg)
{
    pc_t *pc = arg;
    shm_ring_tx_t tx;
    shm_ring_tx_attach(&tx, pc->mem, pc->ncells);
    uint64_t rng = 7;
    for (uint32_t i = 0; i < pc->count; i++) {
        uint32_t len = msg_len(&rng, 16);
        uint32_t cells = shm_ring_cells_for(len);
        shm_cell_t *c;
        int spins = 0;
        while (!(c = shm_ring_reserve(&tx, cells)))
            if (++spins % 64 == 0)
                sched_yield(); /* two cores shared by many: let the consumer run */
        msg_fill(c, i, len, tx.tail, pc->ncells);
        shm_ring_commit(&tx, c, cells);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    pc_t *pc = arg;
    shm_ring_rx_t rx;
    shm_ring_rx_attach(&rx, pc->mem, pc->ncells);
    uint64_t rng = 7;
    for (uint32_t i = 0; i < pc->count; i++) {
        uint32_t len = msg_len(&rng, 16);
        shm_cell_t *c;
        int spins = 0;
        while (!(c = shm_ring_peek(&rx)))
            if (++spins % 64 == 0)
                sched_yield();
        if (c->len != len || msg_check(c, i, rx.pos, pc->ncells) != 0) {
            if (pc->errors++ < 5)
                fprintf(stderr, "message %u: wrong length or content\n", i);
        }
        shm_ring_release(&rx, c);
    }
    if (shm_ring_peek(&rx) != NULL)
        pc->errors++;
    return NULL;
}

static void test_threads(uint32_t count)
{
    pc_t pc = { aligned_alloc(128, shm_ring_bytes(64)), 64, count, 0 };
    shm_ring_init(pc.mem, pc.ncells);
    pthread_t a, b;
    pthread_create(&a, NULL, producer, &pc);
    pthread_create(&b, NULL, consumer, &pc);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    CHECK(pc.errors == 0);
    free(pc.mem);
}

static void test_processes(uint32_t count)
{
    size_t bytes = shm_ring_bytes(256);
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(mem != MAP_FAILED);
    if (mem == MAP_FAILED)
        return;
    shm_ring_init(mem, 256);
    pc_t pc = { mem, 256, count, 0 };
    pid_t pid = fork();
    if (pid == 0) {
        alarm(60);
        producer(&pc);
        _exit(0);
    }
    consumer(&pc);
    int st;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(pc.errors == 0);
    munmap(mem, bytes);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "-t") == 0) {
        test_threads(200000);
    } else {
        test_full();
        test_wrap();
        test_processes(400000);
        test_threads(200000);
    }
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("ring tests passed\n");
    return 0;
}
