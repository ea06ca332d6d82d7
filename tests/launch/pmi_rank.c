/*
 * pmi_rank — a rank program for the launcher tests that speaks PMI-1 to the
 * proxy through the codec directly (no MPI library), then behaves as the
 * mode asks:
 *   pmi_rank MODE [ARG]
 *   ok        full PMI exchange: every rank puts, barrier, gets every key
 *   ok nodes  first reports its node (launcher id, network namespace) and
 *             every other rank's, exchanged through a fence
 *   env       prints its launch environment, CPU binding and memory
 *             policy, no PMI
 *   abort R   rank R calls PMI abort with exit code 7 (others wait)
 *   crash R   rank R raises SIGSEGV after init (others wait)
 *   exit R    rank R exits 3 after init (others wait)
 *   nofin R   rank R exits 0 after init without finalize (others wait)
 *   closepmi R rank R closes its PMI socket without finalize, keeps running
 *   hang      init, then wait forever
 *   hangign   like hang, ignoring SIGINT and SIGTERM
 *   bad       sends malformed, oversized and out-of-order lines; checks
 *             each gets an rc error and the connection still works
 *   spam N    prints N numbered lines quickly on stdout
 *   signals   counts SIGUSR1/SIGUSR2, printing every change; done after
 *             two USR1 and one USR2
 *   floodkvs R rank R puts new 1000-byte keys until the proxy refuses one
 *   floodbar R rank R enters new barrier groups until one is refused
 * Every mode that inits PMI first creates /dev/shm/locus.$LOCUS_JOBID.rankR
 * and prints "start R PID JOBID"; every mode that completes prints
 * "rank R of N OK".
 */
#include "pmi_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pmi_reader_t rd;
static pmi_msg_t msg;
static int fd = -1, rank, size;

static void die(const char *what)
{
    fprintf(stderr, "pmi_rank %d: FAIL: %s\n", rank, what);
    exit(99);
}

/* One request, one response; returns the response's rc. */
static int call(const char *line, const char *want)
{
    if (pmi_write_all(fd, line, strlen(line)) != 0)
        die("write");
    int rc = pmi_reader_wait(&rd, &msg);
    if (rc != PMI_WIRE_OK)
        die(pmi_wire_strerror(rc));
    if (want && strcmp(msg.cmd, want) != 0) {
        fprintf(stderr, "pmi_rank %d: sent %s got cmd=%s\n", rank, line, msg.cmd);
        die("unexpected response");
    }
    const char *r = pmi_msg_get(&msg, "rc");
    if (r == NULL)
        die("response without rc");
    return atoi(r);
}

static char kvsname[PMI_WIRE_KVSNAME_MAX + 1];

static void pmi_start(void)
{
    const char *s = getenv("PMI_FD");
    if (s == NULL)
        die("no PMI_FD");
    fd = atoi(s);
    rank = atoi(getenv("PMI_RANK") ? getenv("PMI_RANK") : "-1");
    size = atoi(getenv("PMI_SIZE") ? getenv("PMI_SIZE") : "-1");
    pmi_reader_init(&rd, fd);
    if (call("cmd=init pmi_version=1 pmi_subversion=1\n", "response_to_init") != 0)
        die("init");
    if (strcmp(pmi_msg_get(&msg, "pmi_version"), "1") != 0)
        die("init version");
    if (call("cmd=get_maxes\n", "maxes") != 0 || atoi(pmi_msg_get(&msg, "vallen_max")) != 1024 ||
        atoi(pmi_msg_get(&msg, "kvsname_max")) != 256 || atoi(pmi_msg_get(&msg, "keylen_max")) != 64)
        die("get_maxes");
    if (call("cmd=get_appnum\n", "appnum") != 0 || strcmp(pmi_msg_get(&msg, "appnum"), "0"))
        die("get_appnum");
    if (call("cmd=get_universe_size\n", "universe_size") != 0 ||
        atoi(pmi_msg_get(&msg, "size")) != size)
        die("get_universe_size");
    if (call("cmd=get_my_kvsname\n", "my_kvsname") != 0)
        die("get_my_kvsname");
    snprintf(kvsname, sizeof kvsname, "%s", pmi_msg_get(&msg, "kvsname"));
}

static void barrier(void)
{
    if (call("cmd=barrier_in\n", "barrier_out") != 0)
        die("barrier");
}

static void finalize(void)
{
    if (call("cmd=finalize\n", "finalize_ack") != 0)
        die("finalize");
}

static void exchange(void)
{
    char line[PMI_WIRE_LINE_MAX + 2], key[64], val[PMI_WIRE_VALLEN_MAX + 1];
    /* A long hex value, like MPICH's business cards. */
    for (int i = 0; i < 1000; i++)
        val[i] = "0123456789abcdef"[(rank * 7 + i) % 16];
    val[1000] = '\0';
    snprintf(key, sizeof key, "card-%d", rank);
    if (pmi_msg_format(line, sizeof line, "put", "kvsname", kvsname, "key", key, "value",
                       val, (char *)NULL) < 0 || call(line, "put_result") != 0)
        die("put");
    if (call("cmd=put key=PMI_reserved value=1\n", "put_result") == 0)
        die("put of a PMI_ key accepted");
    barrier();
    for (int r = 0; r < size; r++) {
        snprintf(key, sizeof key, "card-%d", r);
        pmi_msg_format(line, sizeof line, "get", "kvsname", kvsname, "key", key, (char *)NULL);
        if (call(line, "get_result") != 0)
            die("get of a put key");
        const char *v = pmi_msg_get(&msg, "value");
        for (int i = 0; i < 1000; i++)
            if (v == NULL || v[i] != "0123456789abcdef"[(r * 7 + i) % 16])
                die("wrong value");
    }
    snprintf(line, sizeof line, "cmd=get kvsname=%s key=PMI_process_mapping\n", kvsname);
    char want[64];
    snprintf(want, sizeof want, "(vector,(0,1,%d))", size);
    const char *nn = getenv("LOCUS_NNODES");
    if (call(line, "get_result") != 0 ||
        ((nn == NULL || !strcmp(nn, "1")) && strcmp(pmi_msg_get(&msg, "value"), want) != 0))
        die("PMI_process_mapping");
    if (call("cmd=get key=no-such-key\n", "get_result") == 0)
        die("get of a missing key answered rc=0");
    barrier();
}

static void bad_input(void)
{
    /* Before init: out of order. */
    if (call("cmd=put key=a value=b\n", "put_result") == 0)
        die("put before init accepted");
    if (call("cmd=get_maxes\n", "maxes") == 0)
        die("get_maxes before init accepted");
    if (call("garbage without cmd\n", NULL) == 0)
        die("garbage accepted");
    static char big[3 * PMI_WIRE_LINE_MAX];
    memset(big, 'x', sizeof big);
    memcpy(big, "cmd=put key=a value=", 20);
    big[sizeof big - 1] = '\n';
    if (pmi_write_all(fd, big, sizeof big) != 0)
        die("write big");
    if (pmi_reader_wait(&rd, &msg) != 0 || atoi(pmi_msg_get(&msg, "rc")) == 0)
        die("oversized line accepted");
    if (call("cmd=a 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n", NULL) == 0)
        die("too many tokens accepted");
    if (call("cmd=no_such_command\n", NULL) == 0)
        die("unknown command accepted");
    if (call("cmd=init pmi_version=2 pmi_subversion=0\n", "response_to_init") == 0)
        die("PMI-2 init accepted");
    pmi_start();  /* the connection still works */
    if (call("cmd=init pmi_version=1 pmi_subversion=1\n", "response_to_init") == 0)
        die("second init accepted");
    if (call("cmd=barrier_in group=3,4,5:1\n", "barrier_out") == 0)
        die("barrier of a group without me accepted");
    exchange();
    finalize();
    if (call("cmd=get key=x\n", "get_result") == 0)
        die("get after finalize accepted");
}

/* Node identity across nodes: every rank puts its launcher node id and
 * network namespace, fences, reads everyone's and prints one line. */
static void nodes_report(void)
{
    char line[PMI_WIRE_LINE_MAX + 2], key[64], val[256], ns[128] = "?";
    ssize_t n = readlink("/proc/self/ns/net", ns, sizeof ns - 1);
    ns[n > 0 ? n : 1] = '\0';
    const char *node = getenv("LOCUS_NODE_ID");
    snprintf(key, sizeof key, "node-%d", rank);
    snprintf(val, sizeof val, "%s/%s", node ? node : "-", ns);
    for (char *c = val; *c; c++)
        if (*c == '[' || *c == ']' || *c == ':')
            *c = '_';
    if (pmi_msg_format(line, sizeof line, "put", "kvsname", kvsname, "key", key, "value",
                       val, (char *)NULL) < 0 || call(line, "put_result") != 0)
        die("put node");
    barrier();
    char all[16384];
    size_t k = 0;
    for (int r = 0; r < size && k < sizeof all - 300; r++) {
        snprintf(key, sizeof key, "node-%d", r);
        pmi_msg_format(line, sizeof line, "get", "kvsname", kvsname, "key", key, (char *)NULL);
        if (call(line, "get_result") != 0)
            die("get of another rank's node");
        k += (size_t)snprintf(all + k, sizeof all - k, "%s%s", r ? "," : "",
                              pmi_msg_get(&msg, "value"));
    }
    snprintf(line, sizeof line, "cmd=get kvsname=%s key=PMI_process_mapping\n", kvsname);
    if (call(line, "get_result") != 0)
        die("PMI_process_mapping");
    printf("nodes rank=%d node=%s local=%s nlocal=%s nnodes=%s mapping=%s self=%s all=%s\n",
           rank, node ? node : "-", getenv("LOCUS_LOCAL_RANK"), getenv("LOCUS_LOCAL_SIZE"),
           getenv("LOCUS_NNODES"), pmi_msg_get(&msg, "value"), val, all);
    barrier();
}

static volatile sig_atomic_t usr1, usr2;

static void on_usr(int sig)
{
    if (sig == SIGUSR1)
        usr1++;
    else
        usr2++;
}

/* Counts SIGUSR1/SIGUSR2, printing the counts at every change, until it
 * has seen two USR1 and one USR2 (at most 30 s). */
static void count_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr;
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGUSR2, &sa, NULL);
    printf("ready %d\n", rank);
    int seen1 = 0, seen2 = 0;
    for (int i = 0; i < 3000 && (seen1 < 2 || seen2 < 1); i++) {
        usleep(10000);
        if (usr1 != seen1 || usr2 != seen2) {
            seen1 = usr1;
            seen2 = usr2;
            printf("signals rank=%d usr1=%d usr2=%d\n", rank, seen1, seen2);
        }
    }
    if (seen1 != 2 || seen2 != 1)
        die("did not get SIGUSR1 twice and SIGUSR2 once");
}

/* A hostile client: puts new keys until the proxy refuses one. */
static void flood_kvs(void)
{
    char line[PMI_WIRE_LINE_MAX + 2], key[64], val[PMI_WIRE_VALLEN_MAX + 1];
    memset(val, 'v', 1000);
    val[1000] = '\0';
    for (long i = 0; i < 100000; i++) {
        snprintf(key, sizeof key, "flood-%d-%ld", rank, i);
        pmi_msg_format(line, sizeof line, "put", "kvsname", kvsname, "key", key, "value", val,
                       (char *)NULL);
        if (call(line, "put_result") != 0) {
            printf("kvs refused rank %d after %ld puts: %s\n", rank, i, pmi_msg_get(&msg, "msg"));
            return;
        }
    }
    die("100000 puts of 1000 bytes accepted");
}

/* A hostile client: enters ever new barrier groups without waiting. */
static void flood_barriers(void)
{
    char line[128];
    for (int i = 1; i <= 1000; i++) {
        snprintf(line, sizeof line, "cmd=barrier_in group=WORLD:%d\n", 1000 + i);
        if (pmi_write_all(fd, line, strlen(line)) != 0)
            die("write");
        struct timespec ts = { 0, 2000000 };
        nanosleep(&ts, NULL);
        if (pmi_reader_fill(&rd) > 0 && pmi_reader_next(&rd, &msg) == PMI_WIRE_OK) {
            printf("barrier refused rank %d after %d: %s\n", rank, i - 1,
                   pmi_msg_get(&msg, "msg"));
            return;
        }
    }
    die("1000 outstanding barriers accepted");
}

static void wait_forever(void)
{
    for (;;)
        pause();
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ok";
    int target = argc > 2 ? atoi(argv[2]) : 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(mode, "env")) {
        const char *vars[] = { "PMI_FD", "PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS",
                               "MPI_LOCALRANKID", "LOCUS_RANK", "LOCUS_SIZE",
                               "LOCUS_LOCAL_RANK", "LOCUS_LOCAL_SIZE", "LOCUS_JOBID",
                               "LOCUS_CPUS", "LOCUS_MEM_NODES", "LOCUS_BOUND",
                               "LOCUS_TEST_X", "LOCUS_NODE_NCPUS", "OMP_NUM_THREADS",
                               "OMP_PLACES", "OMP_PROC_BIND", "LOCUS_NODE_ID", "LOCUS_NNODES",
                               "FAKE_RSH_HOST", "LOCUS_KILL_GRACE", "LOCUS_NET_IFACES" };
        char line[4096];
        size_t k = 0;
        for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
            const char *v = getenv(vars[i]);
            k += (size_t)snprintf(line + k, sizeof line - k, "%s=%s ", vars[i], v ? v : "(unset)");
        }
        /* Memory policy as the kernel has it (no libnuma needed). */
        int mode = -1;
        unsigned long mask[16] = { 0 };
        if (syscall(SYS_get_mempolicy, &mode, mask, 16 * 8 * sizeof mask[0], NULL, 0UL) == 0) {
            k += (size_t)snprintf(line + k, sizeof line - k, "mempolicy=%d:", mode);
            for (int b = 0, first = 1; b < (int)(16 * 8 * sizeof mask[0]); b++)
                if (mask[b / (8 * sizeof mask[0])] >> (b % (8 * sizeof mask[0])) & 1) {
                    k += (size_t)snprintf(line + k, sizeof line - k, "%s%d", first ? "" : ",", b);
                    first = 0;
                }
            k += (size_t)snprintf(line + k, sizeof line - k, " ");
        }
        FILE *f = fopen("/proc/self/status", "r");
        char st[512];
        while (f && fgets(st, sizeof st, f))
            if (!strncmp(st, "Cpus_allowed_list:", 18))
                k += (size_t)snprintf(line + k, sizeof line - k, "allowed=%s", st + 19);
        if (f)
            fclose(f);
        printf("%s", line);
        return 0;
    }
    if (!strcmp(mode, "spam")) {
        const char *r = getenv("LOCUS_RANK");
        for (int i = 0; i < target; i++)
            printf("spam rank %s line %d %s\n", r, i,
                   "................................................................");
        return 0;
    }
    if (!strcmp(mode, "bad")) {
        const char *s = getenv("PMI_FD");
        fd = s ? atoi(s) : -1;
        rank = atoi(getenv("PMI_RANK") ? getenv("PMI_RANK") : "-1");
        size = atoi(getenv("PMI_SIZE") ? getenv("PMI_SIZE") : "-1");
        pmi_reader_init(&rd, fd);
        bad_input();
        printf("rank %d of %d OK\n", rank, size);
        return 0;
    }
    pmi_start();
    /* Every PMI mode leaves a file in /dev/shm, as the MPI library would,
     * so the tests can check that the launcher removes it. */
    char path[256];
    snprintf(path, sizeof path, "/dev/shm/locus.%s.rank%d", getenv("LOCUS_JOBID"), rank);
    int f = open(path, O_CREAT | O_RDWR, 0600);
    if (f < 0)
        die("shm create");
    close(f);
    /* Before "start": a test may signal the job as soon as it reads it. */
    if (!strcmp(mode, "hangign")) {
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, SIG_IGN);
    }
    printf("start %d %d %s\n", rank, (int)getpid(), getenv("LOCUS_JOBID"));
    if (!strcmp(mode, "signals")) {
        count_signals();
        finalize();
        printf("rank %d of %d OK\n", rank, size);
        return 0;
    }
    if (!strcmp(mode, "floodkvs") || !strcmp(mode, "floodbar"))
        barrier();  /* everyone has started (and said so) before the flood */
    if ((!strcmp(mode, "floodkvs") || !strcmp(mode, "floodbar")) && rank == target) {
        int nb = fcntl(fd, F_GETFL);
        if (!strcmp(mode, "floodbar"))
            fcntl(fd, F_SETFL, nb | O_NONBLOCK);
        if (!strcmp(mode, "floodkvs"))
            flood_kvs();
        else
            flood_barriers();
        wait_forever();  /* the launcher must end the job */
    }
    if (!strcmp(mode, "floodkvs") || !strcmp(mode, "floodbar"))
        wait_forever();
    if (!strcmp(mode, "hang") || !strcmp(mode, "hangign"))
        wait_forever();
    /* Everyone has started (and said so) before anyone fails. */
    if (strcmp(mode, "ok"))
        barrier();
    if (rank == target && strcmp(mode, "ok")) {
        if (!strcmp(mode, "abort")) {
            pmi_write_all(fd, "cmd=abort exitcode=7 message=test_abort\n", 40);
            wait_forever();  /* the launcher must kill us */
        }
        if (!strcmp(mode, "crash")) {
            signal(SIGSEGV, SIG_DFL);  /* past a sanitizer's handler */
            raise(SIGSEGV);
        }
        if (!strcmp(mode, "exit"))
            exit(3);
        if (!strcmp(mode, "nofin"))
            exit(0);
        if (!strcmp(mode, "closepmi")) {
            close(fd);  /* and live on: the launcher must notice and kill */
            wait_forever();
        }
    }
    if (strcmp(mode, "ok"))
        wait_forever();  /* the others wait to be torn down */
    if (!strcmp(mode, "ok") && argc > 2 && !strcmp(argv[2], "nodes"))
        nodes_report();
    exchange();
    finalize();
    printf("rank %d of %d OK\n", rank, size);
    return 0;
}
