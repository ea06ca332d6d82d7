/* Applying a rank plan to the calling process (a forked child before exec). */
#include <errno.h>
#include <string.h>

#include "locus_place.h"

/* Memory binding is needed only when it narrows something: one memory
 * node, or a rank not bound anywhere with every node allowed, has none. */
static int membind_needed(const locus_topo_t *t, const locus_rank_plan_t *rp)
{
    int nmem = 0;
    for (int i = 0; i < t->nnumas; i++)
        nmem += t->numas[i].allowed;
    return nmem > 1 && rp->nnuma > 0 && rp->nnuma < nmem;
}

int locus_bind_apply(const locus_topo_t *t, const locus_rank_plan_t *rp,
                     char *err, size_t errlen)
{
    if (!t->this_system) {
        snprintf(err, errlen, "cannot bind with a topology read from XML");
        return -1;
    }
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    if (rp->bound) {
        for (int i = 0; i < rp->ncpus; i++)
            hwloc_bitmap_set(set, (unsigned)rp->cpus[i]);
        if (rp->ncpus == 0 || hwloc_set_cpubind(t->hw, set, HWLOC_CPUBIND_PROCESS) < 0) {
            snprintf(err, errlen, "cannot bind rank %d to its %d PUs: %s", rp->rank, rp->ncpus,
                     rp->ncpus ? strerror(errno) : "empty set");
            rc = -1;
        }
    }
    if (rc == 0 && membind_needed(t, rp)) {
        hwloc_bitmap_zero(set);
        for (int i = 0; i < rp->nnuma; i++)
            hwloc_bitmap_set(set, (unsigned)rp->numa[i]);
        if (hwloc_set_membind(t->hw, set, HWLOC_MEMBIND_BIND,
                              HWLOC_MEMBIND_PROCESS | HWLOC_MEMBIND_BYNODESET) < 0) {
            snprintf(err, errlen, "cannot bind rank %d's memory to NUMA node(s): %s",
                     rp->rank, strerror(errno));
            rc = -1;
        }
    }
    hwloc_bitmap_free(set);
    return rc;
}
