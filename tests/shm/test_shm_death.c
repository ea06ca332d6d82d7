/*
 * A peer dies where its pid says nothing (another pid namespace) or lies
 * (its pid given to another process): the survivor must still notice, within
 * a bounded time, with a reason naming the mechanism that saw it.
 *
 *   test_shm_death otherns       the victim lives in a pid namespace of its
 *                                own and is SIGKILLed: seen by its segment lock
 *   test_shm_death otherns-fork  the same, but the victim forked a child that
 *                                outlives it (holding its descriptors)
 *   test_shm_death pidreuse      the job runs in a pid namespace of its own
 *                                (with its /proc); the victim is SIGKILLed and
 *                                reaped, and a new process takes its pid
 *                                (clone3 set_tid): seen by its pidfd
 *   test_shm_death pidreuse-start  the victim dies between the start-up
 *                                fences and its pid is reused before rank 0
 *                                attaches: rank 0's start-up must fail, naming
 *                                the pid's new owner as another process
 *   test_shm_death pidreuse-cma  the victim announces a large message for a
 *                                single-copy read (LOCUS_SINGLE_COPY=cma) and
 *                                dies; its pid goes to a process with the same
 *                                memory layout: rank 0 must fail loudly, not
 *                                deliver that process's bytes
 *
 * Exits 77 (skipped) where namespaces or set_tid are not permitted.
 */
#include "shm_harness.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EXIT_NOTICED 3
#define EXIT_SKIP 77
#define BIG (256u << 10)
#define NOTICE_LIMIT_S 10.0 /* the check runs once a second: 10 s is generous */

enum { OTHERNS, OTHERNS_FORK, PIDREUSE, PIDREUSE_START, PIDREUSE_CMA };

/* Test control, shared by every process of the test (mapped before fork). */
typedef struct {
    _Atomic int ready;     /* victim set up and traffic started */
    _Atomic int waiting;   /* rank 0 waits on the victim */
    _Atomic int fenced;    /* pidreuse-start: victim passed the first fence */
    _Atomic int made0;     /* rank 0's transport made (its CMA probe done) */
    _Atomic int go;        /* victim killed (and its pid reused): rank 0 may look */
    _Atomic int done;      /* test over: lingering children may go */
    _Atomic int skip;      /* the environment cannot run this case */
    _Atomic int victim;    /* victim's pid as its killer names it */
    _Atomic int init;      /* the namespace's init, as the top process names it */
    _Atomic int r0_status; /* pidreuse*: rank 0's wait status, -1 unknown */
    double noticed_s;      /* rank 0: seconds from go to notice */
    char why[256];         /* rank 0: last_error, or start-up error */
} ctl_t;

static ctl_t *ctl;
static harness_t hs;
static int mode;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Waits (sleeping) until *flag is set; 0, or -1 after `limit` seconds. */
static int wait_flag(_Atomic int *flag, double limit)
{
    double t0 = now_s();
    while (!atomic_load(flag)) {
        if (now_s() - t0 > limit)
            return -1;
        usleep(1000);
    }
    return 0;
}

/* This process's pid as /proc names it (the host's pid when /proc was not
 * remounted in a new pid namespace). */
static pid_t proc_self_pid(void)
{
    char buf[32];
    ssize_t n = readlink("/proc/self", buf, sizeof buf - 1);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    return (pid_t)atoi(buf);
}

/* ---- the two ranks ---- */

typedef struct {
    locus_tp_t *tp;
    int arrived, sent, done;
} core_t;

/* Large message buffers; static, so at the same address in every process
 * forked from the test (the victim's pid reused by such a process). */
static unsigned char big_buf[BIG];

static unsigned char big_byte(size_t i)
{
    return (unsigned char)(i * 29 + 11);
}

static void c_deliver(void *core, int src, const void *hdr, size_t hdrlen, const void *data,
                      size_t len)
{
    (void)core, (void)src, (void)hdr, (void)hdrlen, (void)data, (void)len;
}

static void c_arrived(void *core, int src, const void *hdr, size_t hdrlen, size_t len,
                      locus_tp_rndv_t *r)
{
    core_t *c = core;
    (void)src, (void)hdr, (void)hdrlen;
    c->arrived++;
    /* Posted only where rank 0 receives (pidreuse-cma); elsewhere never, so
     * that the sender keeps waiting. Read whole by rank 0 (the bulk hint):
     * a split would first ask the dead victim to write its half. */
    if (mode == PIDREUSE_CMA)
        c->tp->ops->rndv_recv(c->tp, r, big_buf, len, NULL, LOCUS_TP_RECV_BULK);
}

static void c_done(void *core, void *ctx)
{
    (void)ctx;
    ((core_t *)core)->done = 1;
}

static void c_sent(void *core, void *ctx)
{
    (void)ctx;
    ((core_t *)core)->sent++;
}

static const locus_tp_upcalls_t ups = { c_deliver, c_arrived, c_done, c_sent, NULL };

/* pidreuse-start: the victim stops for good after the first fence; rank 0
 * reads the victim's segment name only once its pid has a new owner, and
 * does not wait for it at the second fence. */
static int fences_done;

static int fence_then_stop(void *kvs)
{
    (void)kvs;
    harness_barrier(&hs);
    atomic_store(&ctl->fenced, 1);
    while (!atomic_load(&ctl->done))
        pause(); /* killed here */
    return -1;
}

static int fence_once(void *kvs)
{
    (void)kvs;
    if (++fences_done == 1)
        harness_barrier(&hs);
    return 0;
}

static int (*harness_get)(void *, int, const char *, char *, size_t);

static int get_after_reuse(void *kvs, int owner, const char *key, char *val, size_t len)
{
    if (wait_flag(&ctl->go, 20) != 0)
        return -1;
    return harness_get(kvs, owner, key, val, len);
}

static int make(int rank, core_t *c, char *err, size_t errlen)
{
    locus_tp_init_t in;
    harness_init(&hs, &in, rank, &ups, c);
    if (mode == PIDREUSE_START) {
        harness_get = in.kvs.get;
        in.kvs.fence = rank == 1 ? fence_then_stop : fence_once;
        if (rank == 0)
            in.kvs.get = get_after_reuse;
    }
    return locus_tp_shm_create(&in, &c->tp, err, errlen) == 0 && c->tp ? 0 : -1;
}

static int victim_main(void)
{
    static core_t c;
    char err[256];
    if (make(1, &c, err, sizeof err) != 0) {
        fprintf(stderr, "victim: %s\n", err);
        return 1;
    }
    if (mode == PIDREUSE_CMA) {
        for (size_t i = 0; i < BIG; i++)
            big_buf[i] = big_byte(i);
        if (c.tp->ops->send(c.tp, 0, "v", 1, big_buf, BIG, NULL) != LOCUS_TP_PENDING)
            return 1;
        /* Killed only once rank 0 has probed it for CMA: a probe of the dead
         * victim fails rank 0's start-up, which is not the case under test. */
        if (wait_flag(&ctl->made0, 30) != 0)
            return 1;
        atomic_store(&ctl->ready, 1);
    }
    if (mode == OTHERNS_FORK) {
        /* A child that outlives the victim, as a program's helper might. */
        pid_t k = fork();
        if (k == 0) {
            double t0 = now_s();
            while (!atomic_load(&ctl->done) && now_s() - t0 < 60)
                usleep(10000);
            _exit(0);
        }
    }
    atomic_store(&ctl->victim, proc_self_pid());
    double t0 = now_s();
    while (now_s() - t0 < 60) { /* until killed */
        if (harness_progress(&hs, c.tp) < 0)
            return 1;
        if (c.arrived)
            atomic_store(&ctl->ready, 1);
        usleep(100);
    }
    return 1;
}

/* pidreuse-cma: rank 0 receives the dead victim's large message. */
static int rank0_receive(core_t *c)
{
    if (wait_flag(&ctl->go, 30) != 0)
        return 1;
    double t0 = now_s();
    while (now_s() - t0 < NOTICE_LIMIT_S && !c->done) {
        if (harness_progress(&hs, c->tp) < 0) {
            ctl->noticed_s = now_s() - t0;
            snprintf(ctl->why, sizeof ctl->why, "%s", c->tp->ops->last_error ?
                     c->tp->ops->last_error(c->tp) : "(no reason)");
            return EXIT_NOTICED;
        }
    }
    size_t i = 0;
    while (i < BIG && big_buf[i] == big_byte(i))
        i++;
    snprintf(ctl->why, sizeof ctl->why, c->done ? (i < BIG ? "the receive completed with "
             "another process's bytes (byte %zu wrong)" : "the receive completed from a dead "
             "sender (%zu bytes right)") : "dead peer not noticed", i);
    return 1;
}

static int rank0_main(void)
{
    static core_t c;
    char err[256] = "";
    if (make(0, &c, err, sizeof err) != 0) {
        snprintf(ctl->why, sizeof ctl->why, "%s", err);
        return mode == PIDREUSE_START ? EXIT_NOTICED : 1;
    }
    atomic_store(&ctl->made0, 1);
    if (mode == PIDREUSE_CMA)
        return rank0_receive(&c);
    int rc = c.tp->ops->send(c.tp, 1, "h", 1, big_buf, sizeof big_buf, NULL);
    if (rc != LOCUS_TP_PENDING) {
        fprintf(stderr, "rank 0: large send gave %d, want PENDING\n", rc);
        return 1;
    }
    if (mode != PIDREUSE_START) {
        /* The victim alive: no check may call it dead (two checks at least). */
        double t0 = now_s();
        while (now_s() - t0 < 2.5)
            if (harness_progress(&hs, c.tp) < 0) {
                fprintf(stderr, "rank 0: live peer declared dead: %s\n",
                        c.tp->ops->last_error ? c.tp->ops->last_error(c.tp) : "");
                return 1;
            }
        atomic_store(&ctl->waiting, 1);
        /* No progress while the victim is killed (and its pid reused): the
         * check must see the final state, not the zombie in between. */
        if (wait_flag(&ctl->go, 30) != 0)
            return 1;
    }
    double t0 = now_s();
    while (now_s() - t0 < NOTICE_LIMIT_S) {
        if (harness_progress(&hs, c.tp) < 0) {
            ctl->noticed_s = now_s() - t0;
            const char *why = c.tp->ops->last_error ? c.tp->ops->last_error(c.tp) : NULL;
            snprintf(ctl->why, sizeof ctl->why, "%s", why ? why : "(no reason)");
            return EXIT_NOTICED;
        }
    }
    snprintf(ctl->why, sizeof ctl->why, "dead peer not noticed within %.0f s", NOTICE_LIMIT_S);
    return 1;
}

/* ---- processes ---- */

static pid_t spawn(int (*fn)(void))
{
    fflush(NULL);
    pid_t p = fork();
    if (p == 0) {
        alarm(90);
        int rc = fn();
        fflush(NULL);
        _exit(rc);
    }
    return p;
}

/* Waits for `pid` at most `limit` seconds; its status, or -1 (then killed). */
static int reap(pid_t pid, double limit)
{
    double t0 = now_s();
    int st;
    while (waitpid(pid, &st, WNOHANG) == 0) {
        if (now_s() - t0 > limit) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return -1;
        }
        usleep(1000);
    }
    return st;
}

static pid_t clone_with_pid(pid_t want)
{
    struct {
        uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls,
            set_tid, set_tid_size, cgroup;
    } args;
    pid_t tid[1] = { want };
    memset(&args, 0, sizeof args);
    args.exit_signal = SIGCHLD;
    args.set_tid = (uint64_t)(uintptr_t)tid;
    args.set_tid_size = 1;
    long p = syscall(SYS_clone3, &args, sizeof args);
    if (p != 0)
        return (pid_t)p;
    for (;;) /* the new owner of the victim's pid: alive until killed */
        pause();
}

/* Another process takes the (reaped) victim's pid: clone3 with set_tid,
 * else ns_last_pid and fork. Returns its pid, or -1. */
static pid_t take_pid(pid_t want)
{
    pid_t p = clone_with_pid(want);
    if (p == want)
        return p;
    if (p > 0) {
        kill(p, SIGKILL);
        waitpid(p, NULL, 0);
    }
    FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");
    if (!f)
        return -1;
    fprintf(f, "%d", (int)want - 1);
    if (fclose(f) != 0)
        return -1;
    p = fork();
    if (p == 0)
        for (;;)
            pause();
    if (p == want)
        return p;
    if (p > 0) {
        kill(p, SIGKILL);
        waitpid(p, NULL, 0);
    }
    return -1;
}

/* Init of a pid namespace of its own (with its own /proc): runs both ranks,
 * kills the victim, gives its pid to another process, reports rank 0's end. */
static int reuse_init(void)
{
    atomic_store(&ctl->init, proc_self_pid()); /* still the parent's /proc */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) {
        fprintf(stderr, "SKIPPED: cannot mount /proc for the new pid namespace: %s\n",
                strerror(errno));
        atomic_store(&ctl->skip, 1);
        return EXIT_SKIP;
    }
    pid_t r0 = spawn(rank0_main);
    pid_t v = spawn(victim_main);
    _Atomic int *up = mode == PIDREUSE_START ? &ctl->fenced :
                      mode == PIDREUSE_CMA ? &ctl->ready : &ctl->waiting;
    int ok = wait_flag(up, 30) == 0;
    if (!ok)
        fprintf(stderr, "ranks did not get going\n");
    kill(v, SIGKILL);
    waitpid(v, NULL, 0);
    pid_t z = ok ? take_pid(v) : -1;
    if (ok && z < 0) {
        fprintf(stderr, "SKIPPED: cannot give pid %d to a new process (clone3 set_tid, "
                "ns_last_pid): %s\n", (int)v, strerror(errno));
        atomic_store(&ctl->skip, 1);
    }
    if (z > 0)
        printf("victim pid %d killed and reaped; pid %d now belongs to a new process\n",
               (int)v, (int)z);
    atomic_store(&ctl->go, 1);
    atomic_store(&ctl->r0_status, reap(r0, 40));
    if (z > 0) {
        kill(z, SIGKILL);
        waitpid(z, NULL, 0);
    }
    return 0;
}

/* Init of the victim's pid namespace: runs the victim, reaps everyone. */
static int otherns_init(void)
{
    atomic_store(&ctl->init, proc_self_pid());
    spawn(victim_main);
    double t0 = now_s();
    while (now_s() - t0 < 90)
        if (waitpid(-1, NULL, 0) < 0 && errno == ECHILD)
            break;
    return 0;
}

/* Forks a child that enters a new pid namespace (and mount namespace) and
 * runs `init` as that namespace's pid 1. Returns the child's pid. */
static pid_t spawn_ns(int flags, int (*init)(void))
{
    fflush(NULL);
    pid_t c = fork();
    if (c != 0)
        return c;
    if (unshare(flags) != 0) {
        fprintf(stderr, "SKIPPED: unshare(CLONE_NEWPID%s): %s\n",
                flags & CLONE_NEWNS ? "|CLONE_NEWNS" : "", strerror(errno));
        atomic_store(&ctl->skip, 1);
        _exit(EXIT_SKIP);
    }
    pid_t i = spawn(init);
    _exit(i > 0 ? (reap(i, 100) == 0 ? 0 : 1) : 1);
}

/* What locusrun's sweep does after a job: a victim killed during start-up
 * leaves its (not yet unlinked) segment. */
static int sweep(void)
{
    char pat[160];
    glob_t g;
    snprintf(pat, sizeof pat, "/dev/shm/locus.%s.*", getenv("LOCUS_JOBID"));
    int n = 0;
    if (glob(pat, 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++)
            n += unlink(g.gl_pathv[i]) == 0;
        globfree(&g);
    }
    return n;
}

int main(int argc, char **argv)
{
    static const char *const names[] = { "otherns", "otherns-fork", "pidreuse",
                                         "pidreuse-start", "pidreuse-cma" };
    mode = -1;
    for (int i = 0; i < 5 && argc == 2; i++)
        if (strcmp(argv[1], names[i]) == 0)
            mode = i;
    if (mode < 0) {
        fprintf(stderr, "usage: test_shm_death otherns|otherns-fork|pidreuse|pidreuse-start|"
                "pidreuse-cma\n");
        return 2;
    }
    harness_set_jobid("shmd");
    ctl = mmap(NULL, sizeof *ctl, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (ctl == MAP_FAILED || harness_open(&hs, 2) != 0)
        return 1;
    memset(ctl, 0, sizeof *ctl);
    atomic_store(&ctl->r0_status, -1);
    int fail = 0, st;
    const char *want;
    if (mode == OTHERNS || mode == OTHERNS_FORK) {
        want = "segment lock";
        pid_t r0 = spawn(rank0_main);
        pid_t c = spawn_ns(CLONE_NEWPID, otherns_init);
        int up = wait_flag(&ctl->ready, 30) == 0 && wait_flag(&ctl->waiting, 30) == 0;
        if (up) {
            printf("victim (pid %d here) in its own pid namespace: SIGKILL\n",
                   atomic_load(&ctl->victim));
            kill(atomic_load(&ctl->victim), SIGKILL);
        }
        atomic_store(&ctl->go, 1);
        st = reap(r0, 40);
        atomic_store(&ctl->done, 1);
        if (atomic_load(&ctl->init) > 0)
            kill(atomic_load(&ctl->init), SIGKILL);
        reap(c, 20);
        if (!up && !atomic_load(&ctl->skip)) {
            fprintf(stderr, "the ranks did not get going\n");
            fail = 1;
        }
    } else {
        want = mode == PIDREUSE ? "pidfd" : mode == PIDREUSE_CMA ? "single-copy read" :
               "belongs to another process";
        if (mode == PIDREUSE_CMA)
            setenv("LOCUS_SINGLE_COPY", "cma", 1);
        pid_t c = spawn_ns(CLONE_NEWPID | CLONE_NEWNS, reuse_init);
        if (reap(c, 100) != 0 && atomic_load(&ctl->init) > 0) {
            kill(atomic_load(&ctl->init), SIGKILL);
            fail = 1;
        }
        st = atomic_load(&ctl->r0_status);
    }
    int swept = sweep();
    harness_close(&hs);
    if (atomic_load(&ctl->skip)) {
        printf("SKIPPED\n");
        return EXIT_SKIP;
    }
    if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != EXIT_NOTICED) {
        fprintf(stderr, "rank 0 did not notice the dead peer (status %#x): %s\n", st, ctl->why);
        fail = 1;
    } else if (!strstr(ctl->why, want) || !strstr(ctl->why, "local rank 1")) {
        fprintf(stderr, "rank 0 noticed, but the reason '%s' does not name '%s'\n", ctl->why,
                want);
        fail = 1;
    } else {
        printf("rank 0: %s (after %.2f s)\n", ctl->why, ctl->noticed_s);
    }
    /* Only a victim killed during start-up may leave its segment (for
     * locusrun's sweep); in every other case start-up unlinked them all. */
    if (swept != (mode == PIDREUSE_START)) {
        fprintf(stderr, "%d segment(s) left in /dev/shm, expected %d\n", swept,
                mode == PIDREUSE_START);
        fail = 1;
    }
    if (fail)
        return 1;
    printf("No Errors\n");
    return 0;
}
