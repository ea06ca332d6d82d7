/* locus bench: hands over to the Python benchmark runner (tools/locus_bench.py). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "locus_cli.h"

/* The runner sits at <prefix>/share/locus/tools after an install and in the
 * source tree's tools/ for a build tree. */
static int find_runner(char *path, size_t len)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            snprintf(path, len, "%s/../share/locus/tools/locus_bench.py", exe);
            if (access(path, R_OK) == 0)
                return 0;
        }
    }
    snprintf(path, len, "%s/tools/locus_bench.py", LOCUS_SOURCE_DIR);
    return access(path, R_OK) == 0 ? 0 : -1;
}

/* locusrun and mpicc sit next to this `locus` in a build tree and an
 * install alike: tell the runner (LOCUS_BENCH_LOCUS_BIN, unless the user set
 * it) so it measures this Locus, not whatever PATH finds. */
static void export_bindir(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) {
        *slash = '\0';
        setenv("LOCUS_BENCH_LOCUS_BIN", exe, 0);
    }
}

int locus_cmd_bench(int argc, char **argv)
{
    char runner[PATH_MAX + 64];
    if (find_runner(runner, sizeof runner) != 0) {
        fprintf(stderr, "locus bench: cannot find tools/locus_bench.py (install incomplete?)\n");
        return 1;
    }
    char **args = calloc((size_t)argc + 3, sizeof *args);
    if (!args) {
        fprintf(stderr, "locus bench: out of memory\n");
        return 1;
    }
    export_bindir();
    args[0] = "python3";
    args[1] = runner;
    for (int i = 1; i < argc; i++)
        args[i + 1] = argv[i];
    execvp("python3", args);
    perror("locus bench: cannot run python3");
    free(args);
    return 1;
}
