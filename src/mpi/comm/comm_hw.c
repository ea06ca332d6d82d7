/*
 * Where this process sits in the machine, read through hwloc at the time
 * of the call (the binding locusrun, Hydra or the user gave it): for each
 * level (package, NUMA node, L3 cache, core, hardware thread) the one
 * object that holds the whole binding, if there is one. Used by
 * MPI_Comm_split_type's hardware splits, MPI_Get_hw_resource_info and the
 * NUMA level of topology reordering. HWLOC_XMLFILE (with
 * HWLOC_THISSYSTEM=1) makes hwloc describe another machine, as everywhere.
 */
#include <hwloc.h>
#include <strings.h>

#include "comm.h"

static const struct {
    hwloc_obj_type_t type;
    const char *uri;
} levels[LOCUS_HW_NLEVELS] = {
    [LOCUS_HW_PACKAGE] = { HWLOC_OBJ_PACKAGE, "hwloc://Package" },
    [LOCUS_HW_NUMA] = { HWLOC_OBJ_NUMANODE, "hwloc://NUMANode" },
    [LOCUS_HW_L3] = { HWLOC_OBJ_L3CACHE, "hwloc://L3Cache" },
    [LOCUS_HW_CORE] = { HWLOC_OBJ_CORE, "hwloc://Core" },
    [LOCUS_HW_PU] = { HWLOC_OBJ_PU, "hwloc://PU" },
};

/* Accepted names: the URIs above, hwloc's type names, and the short forms
 * mpirun users write. */
static const struct {
    const char *name;
    int level;
} names[] = {
    { "package", LOCUS_HW_PACKAGE }, { "socket", LOCUS_HW_PACKAGE },
    { "numa", LOCUS_HW_NUMA },       { "numanode", LOCUS_HW_NUMA },
    { "l3", LOCUS_HW_L3 },           { "l3cache", LOCUS_HW_L3 },
    { "core", LOCUS_HW_CORE },       { "hwthread", LOCUS_HW_PU },
    { "pu", LOCUS_HW_PU },           { "thread", LOCUS_HW_PU },
};

int locus_hw_level_of(const char *name)
{
    if (!strncasecmp(name, "hwloc://", 8))
        name += 8;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcasecmp(name, names[i].name))
            return names[i].level;
    return -1;
}

const char *locus_hw_level_uri(int level)
{
    return level >= 0 && level < LOCUS_HW_NLEVELS ? levels[level].uri : "";
}

int locus_hw_where(int where[LOCUS_HW_NLEVELS])
{
    for (int l = 0; l < LOCUS_HW_NLEVELS; l++)
        where[l] = -1;
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0)
        return -1;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    int rc = -1;
    if (set && hwloc_topology_load(topo) == 0) {
        /* Unbound (or unreadable): the process may run anywhere allowed. */
        if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) != 0 || hwloc_bitmap_iszero(set))
            hwloc_bitmap_copy(set, hwloc_topology_get_allowed_cpuset(topo));
        for (int l = 0; l < LOCUS_HW_NLEVELS; l++) {
            int n = hwloc_get_nbobjs_by_type(topo, levels[l].type);
            for (int i = 0; i < n && where[l] < 0; i++) {
                hwloc_obj_t o = hwloc_get_obj_by_type(topo, levels[l].type, (unsigned)i);
                if (o && o->cpuset && !hwloc_bitmap_iszero(set) &&
                    hwloc_bitmap_isincluded(set, o->cpuset))
                    where[l] = (int)o->logical_index;
            }
        }
        rc = 0;
    }
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(topo);
    return rc;
}

LOCUS_PMPI_WEAK(Get_hw_resource_info)
int PMPI_Get_hw_resource_info(MPI_Info *hw_info)
{
    LOCUS_ENTRY_CS();
    const char *fn = "MPI_Get_hw_resource_info";
    LOCUS_CHECK_INIT(fn);
    if (!hw_info)
        return locus_mpi_err(NULL, MPI_ERR_ARG, fn);
    int where[LOCUS_HW_NLEVELS];
    int known = locus_hw_where(where) == 0;
    MPI_Info info;
    int err = locus_info_create_impl(&info);
    /* One key per level this machine has: "true" when this process is
     * restricted to one object of it (the standard's example reads it so). */
    for (int l = 0; !err && known && l < LOCUS_HW_NLEVELS; l++)
        err = locus_info_set_impl(info, levels[l].uri, where[l] >= 0 ? "true" : "false");
    if (err)
        return locus_mpi_err(NULL, err, fn);
    *hw_info = info;
    return MPI_SUCCESS;
}
