/*
 * topo_cache.c — this machine's topology kept as hwloc XML between loads
 * (LOCUS_TOPO_CACHE). Discovering it costs ~10 ms, most of it reading PCI
 * config space, which traps to the hypervisor on a VM; every locusrun proxy
 * start pays it. Reading the XML back costs ~1 ms.
 *
 * A cached file is named by a hash of everything that changes what hwloc
 * would find: hwloc's version, the boot, the host and network namespace,
 * the CPUs and memory nodes this process may use (and its cgroups), the
 * online CPUs and NUMA nodes, the network interfaces and PCI devices. An
 * HWLOC_* variable in the environment that changes discovery turns the
 * cache off. Link state and speed are not in the XML: the NIC layer reads them
 * live (topo_nics.c).
 */
#include "topo_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "locus_tunables.h"

extern char **environ;

/* Bump when what the loader asks of hwloc (filters, flags) changes. */
#define TOPO_CACHE_FORMAT "locus-topo-cache-1"
#define TOPO_CACHE_MAX_AGE (7 * 24 * 3600)

static void hash_bytes(uint64_t *h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++)
        *h = (*h ^ s[i]) * 1099511628211ULL; /* FNV-1a */
}

static void hash_str(uint64_t *h, const char *s)
{
    hash_bytes(h, s, strlen(s) + 1);
}

static void hash_file(uint64_t *h, const char *path)
{
    char buf[4096];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    hash_str(h, path);
    if (fd < 0)
        return;
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        hash_bytes(h, buf, (size_t)n);
    close(fd);
}

/* The lines of /proc/self/status that say which CPUs and memory nodes
 * this process may use. */
static void hash_allowed(uint64_t *h)
{
    FILE *f = fopen("/proc/self/status", "re");
    char line[4096];
    if (!f)
        return;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "Cpus_allowed_list:", 18) || !strncmp(line, "Mems_allowed_list:", 18))
            hash_str(h, line);
    fclose(f);
}

/* Each entry's name and, for links, where it points (a NIC's device). */
static void hash_dir(uint64_t *h, const char *dir)
{
    DIR *d = opendir(dir);
    hash_str(h, dir);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char path[1024], target[1024];
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        ssize_t n = readlink(path, target, sizeof target - 1);
        target[n > 0 ? n : 0] = '\0';
        /* Order-independent: readdir's order is the file system's. */
        uint64_t one = 1469598103934665603ULL;
        hash_str(&one, e->d_name);
        hash_str(&one, target);
        *h ^= one;
    }
    closedir(d);
}

/* The cache directory, made if needed and checked to be ours alone;
 * 0, or -1 (no cache). */
static int cache_dir(char *dir, size_t len)
{
    const char *v = locus_tunable_str("LOCUS_TOPO_CACHE");
    if (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "no"))
        return -1;
    if (strcmp(v, "auto") != 0 && v[0]) {
        snprintf(dir, len, "%s", v);
    } else {
        const char *run = getenv("XDG_RUNTIME_DIR");
        if (run && run[0] == '/')
            snprintf(dir, len, "%s/locus", run);
        else
            snprintf(dir, len, "/tmp/locus-%ld", (long)geteuid());
    }
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return -1;
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
        (st.st_mode & 022))
        return -1;
    return 0;
}

int topo_cache_path(char *path, size_t len)
{
    /* Two that change only how XML errors are reported (topo_load.c sets
     * them for a user's file) leave the cache on. */
    for (char **e = environ; *e; e++)
        if (!strncmp(*e, "HWLOC_", 6) && strncmp(*e, "HWLOC_LIBXML_IMPORT=", 20) != 0 &&
            strncmp(*e, "HWLOC_HIDE_ERRORS=", 18) != 0)
            return -1;
    char dir[512], host[256] = "", ns[128] = "";
    if (cache_dir(dir, sizeof dir) != 0)
        return -1;
    uint64_t h = 1469598103934665603ULL;
    char ver[32];
    snprintf(ver, sizeof ver, "%u", hwloc_get_api_version());
    hash_str(&h, TOPO_CACHE_FORMAT);
    hash_str(&h, ver);
    hash_file(&h, "/proc/sys/kernel/random/boot_id");
    if (gethostname(host, sizeof host - 1) == 0)
        hash_str(&h, host);
    ssize_t n = readlink("/proc/self/ns/net", ns, sizeof ns - 1);
    ns[n > 0 ? n : 0] = '\0';
    hash_str(&h, ns);
    hash_allowed(&h);
    hash_file(&h, "/proc/self/cgroup");
    hash_file(&h, "/sys/devices/system/cpu/online");
    hash_file(&h, "/sys/devices/system/node/online");
    hash_dir(&h, "/sys/class/net");
    hash_dir(&h, "/sys/bus/pci/devices");
    int k = snprintf(path, len, "%s/topo-%016llx.xml", dir, (unsigned long long)h);
    return k > 0 && (size_t)k < len ? 0 : -1;
}

/* Drops cached files nobody read for a week, and temporaries a crash
 * left, so a directory that sees many namespaces come and go stays small. */
static void cache_prune(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    time_t now = time(NULL);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        struct stat st;
        if (strncmp(e->d_name, "topo-", 5) != 0 || fstatat(dirfd(d), e->d_name, &st, 0) != 0)
            continue;
        int tmp = strstr(e->d_name, ".tmp") != NULL;
        if (now - st.st_atime > TOPO_CACHE_MAX_AGE || (tmp && now - st.st_mtime > 60))
            unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
}

void topo_cache_store(hwloc_topology_t hw, const char *path)
{
    char tmp[600], dir[512];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    /* hwloc writes the file itself; a reader sees only a complete one. */
    if (hwloc_topology_export_xml(hw, tmp, 0) != 0) {
        unlink(tmp);
        return;
    }
    if (rename(tmp, path) != 0)
        unlink(tmp);
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = '\0';
        cache_prune(dir);
    }
}
