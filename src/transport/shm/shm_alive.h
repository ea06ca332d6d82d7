/*
 * shm_alive.h — whether a local peer process still exists, without being
 * fooled by pid reuse and across pid namespaces.
 *
 * Two signals; a watch uses the first it can have:
 *  - a pidfd (pidfd_open(2)) on the peer, opened while it is known to be
 *    alive and checked to be the same process (pidfs inode, else start
 *    time): it becomes readable when that very process exits, whoever gets
 *    its pid afterwards. Only when the peer's pid means something here, i.e.
 *    both live in one pid namespace, and the kernel has pidfds (5.3+).
 *  - an open-file-description lock (F_OFD_SETLK) that every process holds
 *    on byte 0 of its own segment file; peers keep a descriptor of that file
 *    and probe with F_OFD_GETLK. The kernel drops the lock when the owner's
 *    last descriptor goes, i.e. when it dies, in whatever pid namespace.
 *    Children forked by the owner close their inherited copy (atfork), so a
 *    child outliving a crashed rank does not keep the lock.
 * A zombie counts as gone for both (its files are closed, its pidfd is
 * readable). At start-up both are checked. One descriptor per peer.
 */
#ifndef SHM_ALIVE_H
#define SHM_ALIVE_H

#include <stddef.h>
#include <stdint.h>

/* Who a segment's owner is, published in its segment header. */
typedef struct {
    int64_t pid;          /* getpid(), in the owner's pid namespace */
    uint64_t pidns;       /* inode of its /proc/self/ns/pid */
    uint64_t pidfs_ino;   /* inode of a pidfd on itself when pidfds live in pidfs
                           * (Linux 6.9+: unique per process for the boot), else 0 */
    uint64_t start_ticks; /* its start time (/proc/self/stat field 22), 0 unknown */
    uint64_t timens;      /* inode of its /proc/self/ns/time: start times compare within one */
    uint32_t locked;      /* holds an OFD write lock on byte 0 of its segment file */
    uint32_t pad;
} shm_alive_id_t;

/* A watch on one peer. */
typedef struct {
    int pidfd;            /* -1: none (other pid namespace, no pidfd_open) */
    int segfd;            /* its segment file, for the lock probe; -1: none */
} shm_alive_watch_t;

enum { SHM_ALIVE_YES = 0, SHM_ALIVE_EXITED = 1, SHM_ALIVE_UNLOCKED = 2 };

/*
 * Describes this process in *id and takes the OFD write lock on byte 0 of
 * its segment file through `lockfd`, a descriptor opened for that alone
 * and kept until shm_alive_release (not the one a mapping was made with:
 * the mapping holds that open file, in forked children too). A lock the
 * file system refuses (or lockfd < 0) only leaves id->locked at 0.
 */
void shm_alive_self(shm_alive_id_t *id, int lockfd);

/* Closes the descriptor holding the lock (finalize): peers then see it
 * released, so set the segment's `finalized` flag first. */
void shm_alive_release(int lockfd);

/*
 * Starts watching the owner of a segment that this process has just mapped
 * (between the two start-up fences, while the owner must be alive): takes
 * over `segfd` (a descriptor of that segment file) and opens a pidfd when
 * the pid namespaces match (shm_alive_ns("pid")). Returns 0, or -1 when the owner is
 * already gone, with the reason in why ("no such process", "its pid now
 * belongs to another process", ...); the watch is then closed.
 */
int shm_alive_watch(shm_alive_watch_t *w, const shm_alive_id_t *id, int segfd, char *why,
                    size_t whylen);

/* SHM_ALIVE_YES, or how the owner was found gone: SHM_ALIVE_EXITED (its
 * pidfd) or SHM_ALIVE_UNLOCKED (its segment lock). Never blocks. */
int shm_alive_check(const shm_alive_watch_t *w);

/* How the watch notices a death: "pidfd", "lock" or "none". */
const char *shm_alive_means(const shm_alive_watch_t *w);

void shm_alive_unwatch(shm_alive_watch_t *w);

/* Inode of /proc/self/ns/<which> ("pid", "time", ...), 0 when unknown. */
uint64_t shm_alive_ns(const char *which);

#endif
