/* Loading a machine (native or XML) into the model of locus_topo.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "topo_internal.h"

static void model_clear(locus_topo_t *t)
{
    for (int i = 0; i < t->nnumas; i++)
        hwloc_bitmap_free(t->numas[i].cpuset);
    for (int i = 0; i < t->npackages; i++)
        hwloc_bitmap_free(t->packages[i].cpuset);
    for (int i = 0; i < t->nl3s; i++)
        hwloc_bitmap_free(t->l3s[i].cpuset);
    topo_devs_clear(t);
    free(t->pus);
    free(t->cores);
    free(t->numas);
    free(t->packages);
    free(t->l3s);
    t->pus = NULL; t->cores = NULL; t->numas = NULL;
    t->packages = NULL; t->l3s = NULL;
    t->npus = t->ncores = t->nnumas = t->npackages = t->nl3s = 0;
}

static int objs_build(locus_topo_t *t, hwloc_obj_type_t type, locus_topo_obj_t **out)
{
    int n = hwloc_get_nbobjs_by_type(t->hw, type);
    if (n <= 0)
        return 0;
    *out = calloc((size_t)n, sizeof **out);
    if (!*out)
        return -1;
    for (int i = 0; i < n; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(t->hw, type, (unsigned)i);
        (*out)[i].os = (int)o->os_index;
        (*out)[i].cpuset = hwloc_bitmap_dup(o->cpuset);
    }
    return n;
}

/* Which object of an array contains the whole of `set`, or -1. */
static int obj_containing(const locus_topo_obj_t *objs, int n, hwloc_const_bitmap_t set)
{
    if (hwloc_bitmap_iszero(set))
        return -1;
    for (int i = 0; i < n; i++)
        if (hwloc_bitmap_isincluded(set, objs[i].cpuset))
            return i;
    return -1;
}

/* A NUMA node is a CPU domain when it has CPUs, is not a special memory
 * (MCDRAM, GPU memory) and no earlier node already covers those CPUs:
 * each PU then belongs to exactly one CPU domain. */
static int numas_build(locus_topo_t *t)
{
    int n = hwloc_get_nbobjs_by_type(t->hw, HWLOC_OBJ_NUMANODE);
    if (n <= 0)
        return 0;
    t->numas = calloc((size_t)n, sizeof *t->numas);
    if (!t->numas)
        return -1;
    hwloc_const_nodeset_t allowed = hwloc_topology_get_allowed_nodeset(t->hw);
    for (int i = 0; i < n; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(t->hw, HWLOC_OBJ_NUMANODE, (unsigned)i);
        locus_topo_numa_t *m = &t->numas[i];
        m->os = (int)o->os_index;
        m->cpuset = hwloc_bitmap_dup(o->cpuset);
        m->bytes = (unsigned long long)o->attr->numanode.local_memory;
        m->allowed = hwloc_bitmap_isset(allowed, o->os_index);
        if (o->subtype)
            snprintf(m->subtype, sizeof m->subtype, "%s", o->subtype);
        int special = !strcmp(m->subtype, "MCDRAM") || !strcmp(m->subtype, "GPUMemory");
        m->has_cpus = !hwloc_bitmap_iszero(o->cpuset) && !special;
        for (int j = 0; m->has_cpus && j < i; j++)
            if (t->numas[j].has_cpus && hwloc_bitmap_intersects(t->numas[j].cpuset, o->cpuset))
                m->has_cpus = 0;
        t->nnumas = i + 1;
    }
    return 0;
}

/* A PU whose NUMA node is outside the saved or allowed nodeset (a cpuset
 * with CPUs of a node but not its memory) still has a locality: hwloc keeps
 * the node's number in the PU's complete nodeset. Such a node becomes a
 * CPU domain without allowed memory, so its cores are mapped like others. */
static int numas_add_hidden(locus_topo_t *t)
{
    int n = hwloc_get_nbobjs_by_type(t->hw, HWLOC_OBJ_PU);
    for (int i = 0; i < n; i++) {
        hwloc_obj_t pu = hwloc_get_obj_by_type(t->hw, HWLOC_OBJ_PU, (unsigned)i);
        int covered = 0, k = pu->complete_nodeset ? hwloc_bitmap_first(pu->complete_nodeset) : -1;
        for (int j = 0; j < t->nnumas && !covered; j++)
            covered = t->numas[j].has_cpus && hwloc_bitmap_isset(t->numas[j].cpuset, pu->os_index);
        if (covered || k < 0)
            continue;
        int j = locus_topo_numa_find(t, k);
        if (j < 0) {
            locus_topo_numa_t *m = realloc(t->numas, (size_t)(t->nnumas + 1) * sizeof *m);
            if (!m)
                return -1;
            t->numas = m;
            j = t->nnumas++;
            memset(&m[j], 0, sizeof m[j]);
            m[j].os = k;
            m[j].allowed = hwloc_bitmap_isset(hwloc_topology_get_allowed_nodeset(t->hw), (unsigned)k);
            if (!(m[j].cpuset = hwloc_bitmap_alloc()))
                return -1;
        }
        t->numas[j].has_cpus = 1;
        hwloc_bitmap_or(t->numas[j].cpuset, t->numas[j].cpuset, pu->cpuset);
    }
    return 0;
}

static int numa_of_pu(const locus_topo_t *t, int os)
{
    for (int i = 0; i < t->nnumas; i++)
        if (t->numas[i].has_cpus && hwloc_bitmap_isset(t->numas[i].cpuset, (unsigned)os))
            return i;
    return -1;
}

/* PUs and cores in logical order. A PU with no Core ancestor (some XML
 * exports) is its own core. */
static int cores_build(locus_topo_t *t)
{
    int n = hwloc_get_nbobjs_by_type(t->hw, HWLOC_OBJ_PU);
    if (n <= 0)
        return 0;
    t->pus = calloc((size_t)n, sizeof *t->pus);
    t->cores = calloc((size_t)n, sizeof *t->cores);
    if (!t->pus || !t->cores)
        return -1;
    hwloc_obj_t prev_core = NULL;
    for (int i = 0; i < n; i++) {
        hwloc_obj_t pu = hwloc_get_obj_by_type(t->hw, HWLOC_OBJ_PU, (unsigned)i);
        hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(t->hw, HWLOC_OBJ_CORE, pu);
        if (!core || core != prev_core || t->ncores == 0) {
            locus_topo_core_t *c = &t->cores[t->ncores++];
            hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(t->hw, HWLOC_OBJ_PACKAGE, pu);
            hwloc_obj_t l3 = hwloc_get_ancestor_obj_by_type(t->hw, HWLOC_OBJ_L3CACHE, pu);
            c->first_pu = i;
            c->numa = numa_of_pu(t, (int)pu->os_index);
            c->package = pkg ? (int)pkg->logical_index : -1;
            c->l3 = l3 ? (int)l3->logical_index : -1;
        }
        prev_core = core;
        locus_topo_core_t *c = &t->cores[t->ncores - 1];
        t->pus[i].os = (int)pu->os_index;
        t->pus[i].core = t->ncores - 1;
        t->pus[i].allowed = hwloc_bitmap_isset(t->allowed, pu->os_index);
        c->npus++;
        c->nallowed += t->pus[i].allowed;
    }
    t->npus = n;
    return 0;
}

static int model_build(locus_topo_t *t, char *err, size_t errlen)
{
    int n;
    if ((n = objs_build(t, HWLOC_OBJ_PACKAGE, &t->packages)) < 0)
        goto oom;
    t->npackages = n;
    if ((n = objs_build(t, HWLOC_OBJ_L3CACHE, &t->l3s)) < 0)
        goto oom;
    t->nl3s = n;
    if (numas_build(t) < 0 || numas_add_hidden(t) < 0 || cores_build(t) < 0)
        goto oom;
    for (int i = 0; i < t->nnumas; i++)
        t->numas[i].package = obj_containing(t->packages, t->npackages, t->numas[i].cpuset);
    if (topo_devs_build(t) < 0)
        goto oom;
    if (locus_topo_allowed_pus(t) == 0) {
        snprintf(err, errlen, "the topology has no allowed PU");
        return -1;
    }
    return 0;
oom:
    snprintf(err, errlen, "out of memory while reading the topology");
    return -1;
}

/* hwloc set up to read this machine (xml NULL) or an XML file; `ours`:
 * the file is this machine's own, cached (topo_cache.c). */
static int hw_init(locus_topo_t *t, const char *xml, int ours, char *err, size_t errlen)
{
    /* hwloc opens every plugin it finds at its first init; the GL, OpenCL
     * and libxml2 ones pull in X11, an OpenCL loader, libxml2 and ICU
     * (~3 ms a process) for components this loader turns off or does not
     * need (hwloc parses XML itself). Only for that first init: the
     * variable is gone before a rank could inherit it. */
    int set = getenv("HWLOC_PLUGINS_BLACKLIST") == NULL;
    if (set)
        setenv("HWLOC_PLUGINS_BLACKLIST", "hwloc_gl,hwloc_opencl,hwloc_xml_libxml", 1);
    int rc = hwloc_topology_init(&t->hw);
    if (set)
        unsetenv("HWLOC_PLUGINS_BLACKLIST");
    if (rc < 0) {
        snprintf(err, errlen, "hwloc_topology_init failed");
        t->hw = NULL;
        return -1;
    }
    /* Disallowed PUs stay visible so `locus topo` can mark them; mapping
     * uses only t->allowed. */
    hwloc_topology_set_flags(t->hw, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED
                             | (xml && !ours ? 0 : HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM));
    hwloc_topology_set_io_types_filter(t->hw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (!xml) {
        /* Linux sysfs gives the same PCI tree as libpciaccess (which leaks
         * at exit); OpenCL and GL would initialise GPU runtimes or connect
         * to a display just to name devices sysfs already shows. */
        hwloc_topology_set_components(t->hw, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci");
        hwloc_topology_set_components(t->hw, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "opencl");
        hwloc_topology_set_components(t->hw, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "gl");
        /* The x86 backend binds the process to every PU in turn to run
         * CPUID there; on a loaded node each migration can wait seconds
         * for a busy core, stalling locusrun's start-up. sysfs (the linux
         * backend) already gives the whole topology. */
        hwloc_topology_set_components(t->hw, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86");
        return 0;
    }
    if (!ours) {
        /* hwloc's libxml2 importer prints parser errors on stderr; the
         * built-in one fails silently, so our one-line message stands. */
        setenv("HWLOC_LIBXML_IMPORT", "0", 0);
        /* hwloc also reports what it rejects in a file on stderr. */
        setenv("HWLOC_HIDE_ERRORS", "2", 0);
    }
    if (hwloc_topology_set_xml(t->hw, xml) < 0) {
        snprintf(err, errlen, "cannot use topology file '%s': %s", xml, strerror(errno));
        return -1;
    }
    return 0;
}

static int hw_open(locus_topo_t *t, const char *xml_path, char *err, size_t errlen)
{
    char cached[600];
    int cache = !xml_path && topo_cache_path(cached, sizeof cached) == 0;
    if (cache && access(cached, R_OK) == 0) {
        if (hw_init(t, cached, 1, err, errlen) == 0 && hwloc_topology_load(t->hw) == 0)
            return 0;
        /* A damaged file: discover afresh and write it again. */
        if (t->hw)
            hwloc_topology_destroy(t->hw);
        t->hw = NULL;
    }
    if (hw_init(t, xml_path, 0, err, errlen) < 0)
        return -1;
    if (hwloc_topology_load(t->hw) < 0) {
        if (xml_path)
            snprintf(err, errlen, "'%s' is not a valid hwloc XML topology", xml_path);
        else
            snprintf(err, errlen, "cannot read this machine's topology: %s", strerror(errno));
        return -1;
    }
    if (cache)
        topo_cache_store(t->hw, cached);
    return 0;
}

/* A readable regular file, or -1 with the reason. Opened without
 * blocking: a FIFO would otherwise wait for a writer forever. */
static int xml_file_check(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot read topology file '%s': %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    int regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    close(fd);
    if (!regular) {
        snprintf(err, errlen, "cannot read topology file '%s': not a regular file", path);
        return -1;
    }
    return 0;
}

locus_topo_t *locus_topo_load(const char *xml_path, char *err, size_t errlen)
{
    if (xml_path && xml_file_check(xml_path, err, errlen) < 0)
        return NULL;
    locus_topo_t *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (hw_open(t, xml_path, err, errlen) < 0)
        goto fail;
    t->this_system = hwloc_topology_is_thissystem(t->hw) && !xml_path;
    t->allowed = hwloc_bitmap_dup(hwloc_topology_get_allowed_cpuset(t->hw));
    if (t->this_system) {
        /* A parent's taskset narrows what we may use, like a cgroup. */
        hwloc_bitmap_t bound = hwloc_bitmap_alloc();
        if (bound && hwloc_get_cpubind(t->hw, bound, HWLOC_CPUBIND_PROCESS) == 0
            && hwloc_bitmap_intersects(bound, t->allowed))
            hwloc_bitmap_and(t->allowed, t->allowed, bound);
        hwloc_bitmap_free(bound);
    }
    const char *host = hwloc_obj_get_info_by_name(hwloc_get_root_obj(t->hw), "HostName");
    if (host)
        snprintf(t->host, sizeof t->host, "%s", host);
    else if (t->this_system && gethostname(t->host, sizeof t->host - 1) < 0)
        t->host[0] = '\0';
    if (model_build(t, err, errlen) < 0)
        goto fail;
    return t;
fail:
    locus_topo_free(t);
    return NULL;
}

void locus_topo_free(locus_topo_t *t)
{
    if (!t)
        return;
    model_clear(t);
    hwloc_bitmap_free(t->allowed);
    if (t->hw)
        hwloc_topology_destroy(t->hw);
    free(t);
}

int locus_topo_restrict(locus_topo_t *t, const char *cpulist, char *err, size_t errlen)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set || hwloc_bitmap_list_sscanf(set, cpulist) < 0 || hwloc_bitmap_iszero(set)) {
        snprintf(err, errlen, "bad CPU list '%s'", cpulist);
        hwloc_bitmap_free(set);
        return -1;
    }
    if (!hwloc_bitmap_intersects(set, t->allowed)) {
        snprintf(err, errlen, "CPU list '%s' contains no allowed PU", cpulist);
        hwloc_bitmap_free(set);
        return -1;
    }
    hwloc_bitmap_and(set, set, t->allowed);
    if (hwloc_topology_restrict(t->hw, set, HWLOC_RESTRICT_FLAG_ADAPT_IO) < 0) {
        snprintf(err, errlen, "hwloc_topology_restrict failed: %s", strerror(errno));
        hwloc_bitmap_free(set);
        return -1;
    }
    model_clear(t);
    hwloc_bitmap_copy(t->allowed, set);
    hwloc_bitmap_free(set);
    return model_build(t, err, errlen);
}

int locus_topo_is_this_system(const locus_topo_t *t)
{
    return t->this_system;
}

const char *locus_topo_hostname(const locus_topo_t *t)
{
    return t->host;
}

int locus_topo_allowed_pus(const locus_topo_t *t)
{
    int n = 0;
    for (int i = 0; i < t->npus; i++)
        n += t->pus[i].allowed;
    return n;
}

int locus_topo_allowed_cores(const locus_topo_t *t)
{
    int n = 0;
    for (int i = 0; i < t->ncores; i++)
        n += t->cores[i].nallowed > 0;
    return n;
}

int locus_topo_numa_find(const locus_topo_t *t, int os)
{
    for (int i = 0; i < t->nnumas; i++)
        if (t->numas[i].os == os)
            return i;
    return -1;
}

int locus_topo_dev_distance(const locus_topo_t *t, int dev, int numa)
{
    const locus_topo_dev_t *d = &t->devs[dev];
    if (numa < 0)
        return 2;
    if (d->numa >= 0 && d->numa == numa)
        return 0;
    if (d->package >= 0 && t->numas[numa].package == d->package)
        return 1;
    return 2;
}
