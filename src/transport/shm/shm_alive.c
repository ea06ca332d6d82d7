/* Peer liveness: pidfds checked for identity, and segment-file OFD locks. */
#include "shm_alive.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#define PIDFS_MAGIC 0x50494446 /* pidfds live in pidfs (Linux 6.9+): inode = unique pid id */

/* The descriptor through which this process holds its segment lock. It is
 * file-level state because a fork handler takes no argument (and a process
 * has one shm transport). */
static int held_fd = -1;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* In a forked child: let go of the parent's open file description, so a
 * child that outlives a crashed rank does not keep its lock alive. The fd
 * number stays valid (now /dev/null), should the child close it later. */
static void child_drop_lock(void)
{
    if (held_fd < 0)
        return;
    int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (nul < 0 || dup3(nul, held_fd, O_CLOEXEC) < 0)
        close(held_fd);
    if (nul >= 0)
        close(nul);
    held_fd = -1;
}

static void atfork_register(void)
{
    (void)pthread_atfork(NULL, NULL, child_drop_lock);
}

static int pidfd_open(pid_t pid)
{
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* Inode of the pidfs file behind a pidfd, 0 where pidfds are anonymous
 * inodes (before Linux 6.9) and say nothing about identity. */
static uint64_t pidfd_ino(int pidfd)
{
    struct statfs sf;
    struct stat st;
    if (fstatfs(pidfd, &sf) != 0 || sf.f_type != PIDFS_MAGIC || fstat(pidfd, &st) != 0)
        return 0;
    return (uint64_t)st.st_ino;
}

/* Field 22 (starttime, clock ticks after boot) of /proc/<who>/stat; 0 unknown. */
static uint64_t start_ticks(const char *who)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%s/stat", who);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the command name may hold spaces and ')' */
    if (!p)
        return 0;
    p++;
    for (int field = 3; field < 22; field++) {
        p += strspn(p, " ");
        p += strcspn(p, " ");
    }
    return strtoull(p, NULL, 10);
}

/* Whether /proc shows this process's pid namespace (it may be the parent's
 * after an unshare without a remount): only then do its pids mean ours. */
static int proc_is_ours(void)
{
    char buf[32];
    ssize_t n = readlink("/proc/self", buf, sizeof buf - 1);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    return strtol(buf, NULL, 10) == (long)getpid();
}

uint64_t shm_alive_ns(const char *which)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof path, "/proc/self/ns/%s", which);
    return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

void shm_alive_self(shm_alive_id_t *id, int lockfd)
{
    memset(id, 0, sizeof *id);
    id->pid = getpid();
    id->pidns = shm_alive_ns("pid");
    id->timens = shm_alive_ns("time");
    int pfd = pidfd_open(getpid());
    if (pfd >= 0) {
        id->pidfs_ino = pidfd_ino(pfd);
        close(pfd);
    }
    id->start_ticks = start_ticks("self");
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
    if (lockfd >= 0 && fcntl(lockfd, F_OFD_SETLK, &fl) == 0) {
        id->locked = 1;
        pthread_once(&atfork_once, atfork_register);
        held_fd = lockfd;
    }
}

void shm_alive_release(int lockfd)
{
    if (lockfd < 0)
        return;
    if (held_fd == lockfd)
        held_fd = -1;
    close(lockfd);
}

/* 1: someone holds the lock on byte 0, 0: nobody, -1: cannot tell. */
static int lock_held(int fd)
{
    struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
    if (fcntl(fd, F_OFD_GETLK, &fl) != 0)
        return -1;
    return fl.l_type != F_UNLCK;
}

static int pidfd_exited(int pidfd)
{
    struct pollfd pf = { .fd = pidfd, .events = POLLIN };
    return poll(&pf, 1, 0) > 0 && (pf.revents & (POLLIN | POLLHUP | POLLERR));
}

/* 1: the pidfd is the process `id` describes, 0: another one, -1: cannot
 * tell. The pidfd was opened by pid; the peer may have died and its pid
 * been reused before that. */
static int pidfd_is(int pidfd, const shm_alive_id_t *id)
{
    uint64_t ino = id->pidfs_ino ? pidfd_ino(pidfd) : 0;
    if (ino)
        return ino == id->pidfs_ino;
    /* Start times read through /proc are shifted by the reader's time
     * namespace, and name pids of the namespace /proc was mounted for. */
    if (id->start_ticks && id->timens == shm_alive_ns("time") && proc_is_ours()) {
        char who[32];
        snprintf(who, sizeof who, "%lld", (long long)id->pid);
        uint64_t t = start_ticks(who);
        if (t)
            return t == id->start_ticks;
    }
    return -1;
}

int shm_alive_watch(shm_alive_watch_t *w, const shm_alive_id_t *id, int segfd, char *why,
                    size_t whylen)
{
    w->pidfd = -1;
    w->segfd = segfd;
    if (!id->locked) {
        close(segfd);
        w->segfd = -1;
    }
    if (id->pid > 0 && id->pidns != 0 && id->pidns == shm_alive_ns("pid")) {
        w->pidfd = pidfd_open((pid_t)id->pid);
        if (w->pidfd < 0 && errno == ESRCH) {
            snprintf(why, whylen, "no such process");
            shm_alive_unwatch(w);
            return -1;
        }
    }
    if (w->pidfd >= 0) {
        int same = pidfd_is(w->pidfd, id);
        if (same == 0) {
            snprintf(why, whylen, "its pid now belongs to another process");
            shm_alive_unwatch(w);
            return -1;
        }
        if (same < 0) {
            /* Unverifiable (no pidfs, /proc of another namespace): a pidfd
             * that might be a stranger's is worse than none. */
            close(w->pidfd);
            w->pidfd = -1;
        }
    }
    /* Checked after the identity: a pidfd still open on a live process was
     * that process's the whole time, so the check above was about it. */
    int gone = shm_alive_check(w);
    if (gone == SHM_ALIVE_YES && w->segfd >= 0 && lock_held(w->segfd) == 0)
        gone = SHM_ALIVE_UNLOCKED;
    /* A verified pidfd is exact: the lock's descriptor is not needed then. */
    if (gone == SHM_ALIVE_YES && w->pidfd >= 0 && w->segfd >= 0) {
        close(w->segfd);
        w->segfd = -1;
    }
    if (gone != SHM_ALIVE_YES) {
        snprintf(why, whylen, "%s", gone == SHM_ALIVE_EXITED ? "its pidfd reports its exit" :
                 "its segment lock was released");
        shm_alive_unwatch(w);
        return -1;
    }
    return 0;
}

int shm_alive_check(const shm_alive_watch_t *w)
{
    if (w->pidfd >= 0)
        return pidfd_exited(w->pidfd) ? SHM_ALIVE_EXITED : SHM_ALIVE_YES;
    if (w->segfd >= 0 && lock_held(w->segfd) == 0)
        return SHM_ALIVE_UNLOCKED;
    return SHM_ALIVE_YES;
}

const char *shm_alive_means(const shm_alive_watch_t *w)
{
    return w->pidfd >= 0 ? "pidfd" : w->segfd >= 0 ? "lock" : "none";
}

void shm_alive_unwatch(shm_alive_watch_t *w)
{
    if (w->pidfd >= 0)
        close(w->pidfd);
    if (w->segfd >= 0)
        close(w->segfd);
    w->pidfd = w->segfd = -1;
}
