/* `locus tune`'s measurements: osu_bw or imb on 2 ranks under locusrun. */
#include "tune_run.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double tune_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* An install keeps the benchmark programs in libexec; a build tree in bench/. */
static int find_program(char path[PATH_MAX], const char *dir, const char *name, char *err,
                        size_t errlen)
{
    const char *where[] = { LOCUS_LIBEXEC_FROM_BIN, "../bench" };
    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
        snprintf(path, PATH_MAX, "%.4000s/%s/%s", dir, where[i], name);
        if (access(path, X_OK) == 0)
            return 0;
    }
    snprintf(err, errlen, "cannot find %s (looked in %s/%s and %s/%s)", name, dir, where[0],
             dir, where[1]);
    return -1;
}

int tune_tools_find(tune_tools_t *tools, char *err, size_t errlen)
{
    char dir[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
    char *slash = n > 0 ? (dir[n] = '\0', strrchr(dir, '/')) : NULL;
    if (!slash) {
        snprintf(err, errlen, "cannot tell where this locus is (/proc/self/exe)");
        return -1;
    }
    *slash = '\0';
    snprintf(tools->locusrun, sizeof tools->locusrun, "%.4000s/locusrun", dir);
    if (access(tools->locusrun, X_OK) != 0) {
        snprintf(err, errlen, "cannot find locusrun next to locus (%s)", tools->locusrun);
        return -1;
    }
    return find_program(tools->osu_bw, dir, "osu_bw", err, errlen) ||
                   find_program(tools->imb, dir, "imb", err, errlen)
               ? -1 : 0;
}

static void child_exec(const tune_tools_t *tools, const tune_job_t *job, int out)
{
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0)
        dup2(null, 0);
    dup2(out, 1);
    dup2(out, 2);
    for (int i = 0; job->env[i]; i++)
        putenv((char *)job->env[i]);
    char timeout[32];
    snprintf(timeout, sizeof timeout, "%.1f", job->timeout_s);
    const char *argv[32] = { tools->locusrun, "-n", "2", "--timeout", timeout };
    int a = 5;
    if (job->oversubscribe)
        argv[a++] = "--oversubscribe";
    if (job->report_bindings)
        argv[a++] = "--report-bindings";
    argv[a++] = job->prog;
    for (int i = 0; job->args[i] && a < 31; i++)
        argv[a++] = job->args[i];
    argv[a] = NULL;
    execv(tools->locusrun, (char **)argv);
    dprintf(out, "cannot run %s: %s\n", tools->locusrun, strerror(errno));
    _exit(127);
}

/* The number in the given column of a table row (the size in column 0),
 * or -1 when the line is not such a row. */
static double row_value(const char *line, int column, long *size)
{
    const char *p = line;
    while (*p == ' ')
        p++;
    if (*p < '0' || *p > '9')
        return -1;
    char *end;
    *size = strtol(p, &end, 10);
    double v = (double)*size;
    for (int c = 1; c <= column; c++) {
        p = end;
        v = strtod(p, &end);
        if (end == p)
            return -1;
    }
    return v;
}

/* One line of the job's output: a table row, a binding, or text; of
 * the text, the library's first line ("locus: MPI_Init: shm: ...", the
 * reason) is kept over locusrun's last ("rank 0 ... called abort"). */
static void take_line(char *line, int column, const long *sizes, int nsizes, double *values,
                      char *bindings, size_t blen, char *last, size_t lastlen)
{
    int have_reason = strncmp(last, "locus: ", 7) == 0;
    long size;
    double v;
    char *b;
    if ((v = row_value(line, column, &size)) >= 0) {
        for (int i = 0; i < nsizes; i++)
            if (sizes[i] == size)
                values[i] = v;
    } else if ((b = strstr(line, "] rank ")) && strstr(line, " bound to PUs ")) {
        int rank;
        char pus[64];
        if (sscanf(b, "] rank %d bound to PUs %63[^,]", &rank, pus) == 2) {
            size_t n = strlen(bindings);
            snprintf(bindings + n, blen - n, "%srank %d on PUs %s", n ? ", " : "", rank, pus);
        }
    } else if (line[0] && line[0] != '#' && !have_reason) {
        size_t k = strnlen(line, lastlen - 1); /* the line's start, if it is longer */
        memcpy(last, line, k);
        last[k] = '\0';
    }
}

static int wait_child(pid_t pid, int kill_it)
{
    int status = 0;
    if (kill_it) {
        /* locusrun tears its job down on SIGTERM; SIGKILL only if it hangs. */
        kill(pid, SIGTERM);
        for (int i = 0; i < 300 && waitpid(pid, &status, WNOHANG) == 0; i++)
            usleep(10000);
        if (waitpid(pid, &status, WNOHANG) == 0) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
        }
        return -2;
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 124)
        return -2;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int tune_job_run(const tune_tools_t *tools, const tune_job_t *job, const long *sizes, int nsizes,
                 double *values, char *bindings, size_t blen, char *err, size_t errlen)
{
    for (int i = 0; i < nsizes; i++)
        values[i] = 0;
    bindings[0] = err[0] = '\0';
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        child_exec(tools, job, fds[1]);
    }
    close(fds[1]);
    /* locusrun stops the job at timeout_s; this deadline is for a locusrun
     * that does not. */
    double deadline = tune_now() + job->timeout_s + 3;
    char buf[8192], last[256] = "";
    size_t have = 0;
    int late = 0;
    for (;;) {
        double left = deadline - tune_now();
        if (left <= 0) {
            late = 1;
            break;
        }
        struct pollfd p = { fds[0], POLLIN, 0 };
        int r = poll(&p, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue;
        ssize_t got = read(fds[0], buf + have, sizeof buf - 1 - have);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        have += (size_t)got;
        buf[have] = '\0';
        char *start = buf, *nl;
        while ((nl = strchr(start, '\n'))) {
            *nl = '\0';
            take_line(start, job->column, sizes, nsizes, values, bindings, blen, last,
                      sizeof last);
            start = nl + 1;
        }
        have = strlen(start);
        memmove(buf, start, have + 1);
        if (have == sizeof buf - 1)
            have = 0; /* a line longer than the buffer: not one of ours */
    }
    close(fds[0]);
    int rc = wait_child(pid, late);
    if (rc == -1)
        snprintf(err, errlen, "%s", !last[0] ? "the job failed"
                                    : strncmp(last, "locus: ", 7) == 0 ? last + 7 : last);
    else if (rc == -2)
        snprintf(err, errlen, "ran past %.0f s", job->timeout_s);
    return rc;
}
