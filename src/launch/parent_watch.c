/*
 * parent_watch.c — a child job's locusrun (MPI_Comm_spawn: src/boot/spawn.c
 * starts it from the spawning rank, with LOCUS_PARENT_PID) ends when that
 * rank's process does, however it ends, so that a child job never outlives
 * the job that made it. PR_SET_PDEATHSIG would fire when the spawning
 * *thread* ends (mpi4py's pool spawns from a helper thread that ends before
 * its workers do); a pidfd of the process does not.
 *
 * A thread waits on the pidfd and sends this process SIGTERM: the front end
 * then ends the job as for a SIGTERM from anyone (its ranks, its proxies,
 * their segments).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "frontend.h"

static void *parent_wait(void *arg)
{
    struct pollfd p = { .fd = (int)(intptr_t)arg, .events = POLLIN };
    while (poll(&p, 1, -1) < 0 && errno == EINTR)
        ;
    kill(getpid(), SIGTERM);
    return NULL;
}

void launch_parent_watch(void)
{
    const char *v = getenv("LOCUS_PARENT_PID");
    if (v == NULL || *v == '\0')
        return;
    pid_t pid = (pid_t)strtol(v, NULL, 10);
    /* Not for the ranks' own spawns: they set their own. */
    unsetenv("LOCUS_PARENT_PID");
    int fd = pid > 1 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
    /* Gone already (this process was handed to another parent first). */
    if (fd < 0 || getppid() != pid) {
        if (fd >= 0)
            close(fd);
        if (pid > 1)
            kill(getpid(), SIGTERM);
        return;
    }
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &a, parent_wait, (void *)(intptr_t)fd) != 0)
        close(fd);
    pthread_attr_destroy(&a);
}
