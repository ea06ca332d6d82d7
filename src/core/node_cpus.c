/*
 * node_cpus.c — how many CPUs the ranks of this node may share, for the
 * idle-yield rule: from locusrun (LOCUS_NODE_NCPUS, the union of the local
 * ranks' bindings), else the CPUs online bounded by the cgroup's cpuset.
 * The process's own affinity is not used: with one rank bound per core it
 * is 1 everywhere, which would make every bound job look oversubscribed.
 */
#include "locus_core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "locus_tunables.h"

/* Counts the CPUs of a list like "0-3,8,10-11"; -1 when malformed. */
static int cpulist_count(const char *s)
{
    int n = 0;
    while (*s && *s != '\n') {
        char *end;
        long a = strtol(s, &end, 10), b;
        if (end == s || a < 0)
            return -1;
        b = a;
        if (*end == '-') {
            s = end + 1;
            b = strtol(s, &end, 10);
            if (end == s || b < a)
                return -1;
        }
        n += (int)(b - a + 1);
        s = end;
        if (*s == ',')
            s++;
    }
    return n;
}

static int file_cpulist_count(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char buf[4096];
    int n = -1;
    if (fgets(buf, sizeof buf, f))
        n = cpulist_count(buf);
    fclose(f);
    return n > 0 ? n : -1;
}

/* The effective cpuset of our cgroup (v2 unified, else v1's cpuset
 * hierarchy), looked up from our cgroup up to the root; -1 unknown. */
static int cgroup_cpus(void)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f)
        return -1;
    char line[1024], path[1200];
    int n = -1;
    while (n < 0 && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        const char *file, *root;
        char *rel;
        if (strncmp(line, "0::", 3) == 0) {
            rel = line + 3;
            root = "/sys/fs/cgroup";
            file = "cpuset.cpus.effective";
        } else if ((rel = strstr(line, ":cpuset:")) != NULL) {
            rel += 8;
            root = "/sys/fs/cgroup/cpuset";
            file = "cpuset.effective_cpus";
        } else {
            continue;
        }
        for (;;) {
            snprintf(path, sizeof path, "%s%s/%s", root, rel, file);
            if ((n = file_cpulist_count(path)) > 0 || !*rel)
                break;
            char *slash = strrchr(rel, '/');
            if (!slash)
                break;
            *slash = '\0';  /* one level up: the controller may be on above */
        }
    }
    fclose(f);
    return n;
}

int locus_core_node_ncpus(const char **source)
{
    long n = 0;
    const char *v = locus_tunable_str("LOCUS_NODE_NCPUS");
    if (*v && locus_tunable_long("LOCUS_NODE_NCPUS", &n, NULL, 0) == 0 && n > 0) {
        *source = "LOCUS_NODE_NCPUS";
        return (int)n;
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int cg = cgroup_cpus();
    if (online > 0 && (cg <= 0 || cg >= online)) {
        *source = "CPUs online";
        return (int)online;
    }
    *source = "cgroup cpuset";
    return cg > 0 ? cg : 0;
}
