/*
 * cleanup.c — the last resort when a node's proxy is gone or wedged: kill
 * every process of the job on this node and remove its shared memory.
 * Processes of a job are found by LOCUS_JOBID in their environment (the
 * proxy and every rank carry it; so do what ranks fork). "This node" is
 * this network namespace, so on an emulated cluster of namespaces sharing
 * one kernel a cleanup touches only its own node. Run locally by the front
 * end, and on other nodes as `locusrun --cleanup JOBID` through the
 * launcher (Hydra's cleanup script does the same job).
 */
#include "launch.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int launch_jobid_ok(const char *jobid)
{
    size_t n = strlen(jobid);
    if (n == 0 || n > 60)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)jobid[i]) && jobid[i] != '-' && jobid[i] != '_')
            return 0;
    return 1;
}

/* Whether pid's environment holds needle ("\0LOCUS_JOBID=<id>\0" form). */
static int environ_has(pid_t pid, const char *needle, size_t nlen)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    /* Read it whole: the variable may be anywhere. Bounded by the kernel's
     * limit on the environment (ARG_MAX-ish); 1 MiB chunks. */
    size_t cap = 65536, len = 1;
    char *buf = malloc(cap + 2);
    int found = 0;
    if (buf != NULL) {
        buf[0] = '\0';
        ssize_t n;
        while ((n = read(fd, buf + len, cap - len)) > 0) {
            len += (size_t)n;
            if (len == cap) {
                char *nb = cap < (64u << 20) ? realloc(buf, 2 * cap + 2) : NULL;
                if (nb == NULL)
                    break;
                buf = nb;
                cap *= 2;
            }
        }
        buf[len] = '\0';
        buf[len + 1] = '\0';
        len++;
        found = memmem(buf, len, needle, nlen) != NULL;
        free(buf);
    }
    close(fd);
    return found;
}

static int same_netns(pid_t pid, const struct stat *mine)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%d/ns/net", (int)pid);
    if (stat(path, &st) != 0)
        return 0;
    return st.st_ino == mine->st_ino && st.st_dev == mine->st_dev;
}

int launch_job_cleanup(const char *jobid)
{
    if (!launch_jobid_ok(jobid))
        return -1;
    char needle[96];
    int nlen = snprintf(needle, sizeof needle, "%cLOCUS_JOBID=%s%c", 0, jobid, 0);
    struct stat mine;
    if (stat("/proc/self/ns/net", &mine) != 0)
        return -1;
    int killed = 0;
    /* Twice: a process may fork while the first pass runs. */
    for (int pass = 0; pass < 2; pass++) {
        DIR *d = opendir("/proc");
        if (d == NULL)
            return -1;
        for (struct dirent *e; (e = readdir(d)) != NULL;) {
            if (!isdigit((unsigned char)e->d_name[0]))
                continue;
            pid_t pid = (pid_t)atol(e->d_name);
            if (pid == getpid() || !same_netns(pid, &mine) || !environ_has(pid, needle, (size_t)nlen))
                continue;
            if (kill(pid, SIGKILL) == 0)
                killed++;
        }
        closedir(d);
    }
    launch_shm_cleanup(jobid);
    return killed;
}
