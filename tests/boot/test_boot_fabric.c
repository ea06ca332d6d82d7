/*
 * The fabric address exchange (addr_fabric.c) under attack: three node
 * roots in their own processes run the allgather while a stranger (another
 * user when this runs as root) has opened, before the exchange began, 80
 * silent connections to each root (more than the 64 slots the exchange
 * once had, which then stalled it until its timeout) and sent each a
 * forged blob (the right layout, no key); while root 0 holds back (so that
 * roots 1 and 2 wait in the exchange), it answers their challenges with
 * another job's key. Every root must end with every real blob and none of the
 * forger's, within seconds, having refused the forged blob and the wrong
 * key (counted) and closed the silent ones (timed out or evicted), and its
 * listeners must be bound to its card's addresses, not to all interfaces.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stranger.h"

#include "boot_fabric.h"

enum { ROOTS = 3, SILENT = 80, PENDING_MAX = 16, BLOB = 3000 };

typedef struct {
    pthread_barrier_t bar;
    char card[ROOTS][512];
    volatile int wrong_done; /* the stranger tried another key on roots 1 and 2 */
} shared_t;

static shared_t *sh;
static int failures, me = -1;

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "%s:%d: %s %d: ", __FILE__, \
    __LINE__, me < ROOTS ? "root" : "stranger", me); fprintf(stderr, __VA_ARGS__); \
    fputc('\n', stderr); failures++; } } while (0)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void blob_make(int node, char *out)
{
    for (int i = 0; i < BLOB; i++)
        out[i] = (char)('a' + (node * 7 + i) % 26);
    out[BLOB] = '\0';
}

static int root_card(void *ctx, int node, char *out, size_t cap)
{
    (void)ctx;
    snprintf(out, cap, "%s", sh->card[node]);
    return 0;
}

/* The first address and the port of a card "ip,ip:port". */
static int card_addr(const char *card, struct sockaddr_in *sa)
{
    char ip[INET_ADDRSTRLEN];
    const char *colon = strrchr(card, ':');
    size_t n = strcspn(card, ",:");
    if (!colon || n >= sizeof ip)
        return -1;
    memcpy(ip, card, n);
    ip[n] = '\0';
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    sa->sin_port = htons((uint16_t)atoi(colon + 1));
    return inet_pton(AF_INET, ip, &sa->sin_addr) == 1 ? 0 : -1;
}

/* Whether the port of `card` also answers on loopback: a listener on all
 * interfaces would. */
static int answers_on_loopback(const char *card)
{
    struct sockaddr_in sa;
    if (card_addr(card, &sa) != 0)
        return 0;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int ok = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
    close(fd);
    return ok;
}

static int root(int node)
{
    me = node;
    locus_auth_key_t key;
    locus_auth_key_derive("test_boot_fabric", &key);
    boot_fabric_t *f = NULL;
    char err[256];
    if (boot_fabric_listen(&f, &key, sh->card[node], sizeof sh->card[node], err,
                           sizeof err) != 0) {
        fprintf(stderr, "root %d: %s\n", node, err);
        pthread_barrier_wait(&sh->bar);
        pthread_barrier_wait(&sh->bar);
        return 1;
    }
    pthread_barrier_wait(&sh->bar); /* cards out: the stranger does its worst */
    pthread_barrier_wait(&sh->bar); /* ...and has: the exchange begins */
    CHECK(!answers_on_loopback(sh->card[node]), "listens on all interfaces (card %s)",
          sh->card[node]);
    char *blobs[ROOTS] = { 0 };
    size_t lens[ROOTS] = { 0 };
    blobs[node] = malloc(BLOB + 1);
    blob_make(node, blobs[node]);
    lens[node] = BLOB;
    double t0 = now();
    while (node == 0 && !sh->wrong_done && now() - t0 < 10)
        usleep(1000);
    t0 = now();
    int rc = boot_fabric_allgather(f, node, ROOTS, blobs, lens, root_card, NULL, 20.0, err,
                                   sizeof err);
    double took = now() - t0;
    CHECK(rc == 0, "allgather: %s", err);
    CHECK(took < 5.0, "allgather took %.2f s", took);
    char want[BLOB + 1];
    for (int n = 0; rc == 0 && n < ROOTS; n++) {
        blob_make(n, want);
        CHECK(blobs[n] && lens[n] == BLOB && strcmp(blobs[n], want) == 0,
              "node %d's blob is not node %d's (%zu bytes: %.10s)", n, n, lens[n],
              blobs[n] ? blobs[n] : "");
    }
    /* The stranger's last connections time out meanwhile. */
    pthread_barrier_wait(&sh->bar);
    boot_fabric_stats_t st;
    boot_fabric_stats(f, &st);
    CHECK(st.refused == (node == 0 ? 1 : 2), "refused %ld, expected %d (the forged blob%s)",
          st.refused, node == 0 ? 1 : 2, node == 0 ? "" : ", the wrong key");
    printf("root %d: allgather in %.3f s; refused %ld, timed out %ld, evicted %ld\n", node,
           took, st.refused, st.timeouts, st.evicted);
    CHECK(st.timeouts + st.evicted >= SILENT - PENDING_MAX - 8,
          "only %ld of %d silent connections closed", st.timeouts + st.evicted, SILENT);
    for (int n = 0; n < ROOTS; n++)
        free(blobs[n]);
    boot_fabric_close(f);
    return failures != 0;
}

static int dial(const char *card)
{
    struct sockaddr_in sa;
    if (card_addr(card, &sa) != 0)
        return -1;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    struct timeval tv = { 10, 0 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

static void put32(unsigned char *p, uint32_t v)
{
    v = htonl(v);
    memcpy(p, &v, 4);
}

static int stranger(void)
{
    me = ROOTS;
    pthread_barrier_wait(&sh->bar);
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
        CHECK(0, "cannot become another user: %s", strerror(errno));
    static int silent[ROOTS][SILENT];
    int forged[ROOTS], wrong[ROOTS] = { -1, -1, -1 };
    for (int r = 0; r < ROOTS; r++) {
        for (int i = 0; i < SILENT; i++)
            silent[r][i] = dial(sh->card[r]);
        /* A blob for step 0 from the very root this one expects it from:
         * the right layout, no key. */
        unsigned char msg[16 + 8 + 5];
        int from = (r + 1) % ROOTS;
        put32(msg, 0x4c4f4346u);
        put32(msg + 4, 0);
        put32(msg + 8, (uint32_t)from);
        put32(msg + 12, 1);
        put32(msg + 16, (uint32_t)from);
        put32(msg + 20, 5);
        memcpy(msg + 24, "FORGE", 5);
        forged[r] = dial(sh->card[r]);
        CHECK(forged[r] >= 0 && send(forged[r], msg, sizeof msg, MSG_NOSIGNAL) == sizeof msg,
              "cannot send root %d a forged blob", r);
        shutdown(forged[r], SHUT_WR);
        if (r > 0)
            wrong[r] = dial(sh->card[r]);
    }
    pthread_barrier_wait(&sh->bar); /* the exchange begins */
    locus_auth_key_t other;
    locus_auth_key_derive("another job", &other);
    unsigned char buf[128];
    for (int r = 1; r < ROOTS; r++) {
        unsigned char chal[LOCUS_AUTH_CHAL_LEN], resp[LOCUS_AUTH_RESP_LEN];
        locus_auth_t a;
        locus_auth_init(&a, &other, "fabric");
        CHECK(recv(wrong[r], chal, sizeof chal, MSG_WAITALL) == sizeof chal &&
              locus_auth_answer(&a, chal, resp) == 0, "root %d sent no challenge", r);
        send(wrong[r], resp, sizeof resp, MSG_NOSIGNAL);
        int n = stranger_until_closed(wrong[r], buf, sizeof buf);
        CHECK(n == LOCUS_AUTH_PROOF_LEN && locus_auth_confirm(&a, buf) == -1,
              "root %d: another job's key not refused (%d bytes back)", r, n);
        close(wrong[r]);
    }
    sh->wrong_done = 1;
    for (int r = 0; r < ROOTS; r++) {
        int n = stranger_until_closed(forged[r], buf, sizeof buf);
        CHECK(n >= 0 && n <= LOCUS_AUTH_CHAL_LEN, "root %d: forged blob answered (%d bytes)", r,
              n);
        close(forged[r]);
    }
    pthread_barrier_wait(&sh->bar);
    for (int r = 0; r < ROOTS; r++)
        for (int i = 0; i < SILENT; i++)
            if (silent[r][i] >= 0)
                close(silent[r][i]);
    return failures != 0;
}

/* The first interface that is up, not loopback, with IPv4: the exchange
 * is kept to it (the cluster tests add and remove veth ends in this
 * namespace while they run). NULL when there is none. */
static const char *iface(void)
{
    static char name[IF_NAMESIZE];
    struct ifaddrs *all, *i;
    if (getifaddrs(&all) != 0)
        return NULL;
    for (i = all; i; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && (i->ifa_flags & IFF_UP) &&
            !(i->ifa_flags & IFF_LOOPBACK))
            break;
    if (i)
        snprintf(name, sizeof name, "%s", i->ifa_name);
    freeifaddrs(all);
    return i ? name : NULL;
}

int main(void)
{
    const char *ifc = iface();
    if (!ifc) {
        printf("SKIPPED: no network interface but loopback\n");
        return 77;
    }
    setenv("LOCUS_NET_IFACES", ifc, 1);
    setenv("LOCUS_AUTH_TIMEOUT_MS", "500", 1);
    setenv("LOCUS_AUTH_PENDING_MAX", "16", 1);
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED)
        return 1;
    memset(sh, 0, sizeof *sh);
    pthread_barrierattr_t ba;
    pthread_barrierattr_init(&ba);
    pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
    pthread_barrier_init(&sh->bar, &ba, ROOTS + 1);
    pid_t pid[ROOTS + 1];
    for (int p = 0; p <= ROOTS; p++) {
        pid[p] = fork();
        if (pid[p] == 0) {
            alarm(60); /* a hang ends as a failure, never as a stray process */
            exit(p < ROOTS ? root(p) : stranger());
        }
    }
    int bad = 0;
    for (int p = 0; p <= ROOTS; p++) {
        int st;
        if (pid[p] < 0 || waitpid(pid[p], &st, 0) != pid[p] || !WIFEXITED(st) ||
            WEXITSTATUS(st) != 0) {
            fprintf(stderr, "%s %d failed\n", p < ROOTS ? "root" : "stranger", p);
            bad++;
        }
    }
    if (bad)
        return 1;
    printf(" No Errors\n");
    return 0;
}
