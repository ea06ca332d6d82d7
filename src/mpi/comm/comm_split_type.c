/*
 * MPI_Comm_split_type: by node (MPI_COMM_TYPE_SHARED), by a hardware
 * resource named in the info key "mpi_hw_resource_type"
 * (MPI_COMM_TYPE_HW_GUIDED / _RESOURCE_GUIDED: "mpi_shared_memory",
 * "numa", "package"/"socket", "l3cache", "core", "hwthread" or the
 * hwloc:// names of MPI_Get_hw_resource_info), or at the coarsest level
 * that splits the communicator (MPI_COMM_TYPE_HW_UNGUIDED).
 *
 * Every member sends every other its node and, for each hardware level,
 * the object that holds its binding (comm_hw.c); a process whose binding
 * spans several objects of the level asked for gets MPI_COMM_NULL. Hardware
 * objects are told apart per node, so a split never crosses nodes.
 */
#include <stdlib.h>
#include <string.h>

#include "comm.h"

/* A member's row: node, then the object per hardware level (-1: none). */
#define ROW (1 + LOCUS_HW_NLEVELS)
/* Levels as the split sees them: the node, then the hardware ones. */
#define LEVEL_NODE (-1)

/* The color of rank r at level l: the lowest rank in the same object
 * (MPI_UNDEFINED when r's binding has none). */
static int level_color(const int *rows, int size, int r, int l)
{
    const int *me = rows + ROW * r;
    int col = 1 + l;
    if (me[col] < 0)
        return MPI_UNDEFINED;
    for (int q = 0; q < size; q++) {
        const int *o = rows + ROW * q;
        if (o[0] == me[0] && o[col] == me[col])
            return q;
    }
    return MPI_UNDEFINED;
}

/* Whether level l splits the communicator into proper subsets: some
 * member has an object there, and not all of them share one. */
static int level_splits(const int *rows, int size, int l)
{
    int defined = 0, several = 0, first = MPI_UNDEFINED;
    for (int r = 0; r < size; r++) {
        int col = level_color(rows, size, r, l);
        if (col == MPI_UNDEFINED)
            continue;
        if (defined++ == 0)
            first = col;
        else if (col != first)
            several = 1;
    }
    return defined > 0 && (defined < size || several);
}

/* The level a guided split names in info (LEVEL_NODE for the node), or -2
 * when the key is missing or unknown; *name gets the value. */
static int guided_level(MPI_Info info, char *name, int namelen)
{
    int flag = 0, len = namelen;
    name[0] = '\0';
    if (info == MPI_INFO_NULL ||
        locus_info_get_string_impl(info, "mpi_hw_resource_type", &len, name, &flag) ||
        !flag)
        return -2;
    if (!strcmp(name, "mpi_shared_memory") || !strcmp(name, "node") ||
        !strcmp(name, "machine"))
        return LEVEL_NODE;
    int l = locus_hw_level_of(name);
    return l >= 0 ? l : -2;
}

/*
 * On an intercommunicator: the intercommunicator of the processes of
 * either group that share my node (and hardware object); each process
 * knows its own color, named the same way on both sides (world node
 * numbers). The unguided split has no defined level here: MPI_COMM_NULL.
 */
static int inter_split_type(locus_comm_t *c, int split_type, int level, int key,
                            locus_comm_t **out)
{
    int where[LOCUS_HW_NLEVELS], color = MPI_UNDEFINED;
    int node = locus_world_node(locus_mpi.core.rank);
    if (level >= 0)
        locus_hw_where(where);
    if (split_type == MPI_UNDEFINED || split_type == MPI_COMM_TYPE_HW_UNGUIDED || level == -2)
        color = MPI_UNDEFINED;
    else if (level == LEVEL_NODE)
        color = node;
    else if (where[level] >= 0 && where[level] < 0x10000 && node < 0x7fff)
        color = node * 0x10000 + where[level];
    return locus_comm_split(c, color, key, out);
}

/* Its entry point is generated with the checks (MPI initialized, a live
 * communicator, somewhere to write); it raises what this returns. */
int locus_comm_split_type_impl(locus_comm_t *c, int split_type, int key, MPI_Info info,
                               MPI_Comm *newcomm)
{
    locus_comm_t *n = NULL;
    if (split_type != MPI_UNDEFINED && split_type != MPI_COMM_TYPE_SHARED &&
        split_type != MPI_COMM_TYPE_HW_GUIDED && split_type != MPI_COMM_TYPE_HW_UNGUIDED &&
        split_type != MPI_COMM_TYPE_RESOURCE_GUIDED)
        return MPI_ERR_ARG;
    char name[MPI_MAX_INFO_VAL + 1];
    int level = split_type == MPI_COMM_TYPE_SHARED ? LEVEL_NODE : -2;
    if (split_type == MPI_COMM_TYPE_HW_GUIDED || split_type == MPI_COMM_TYPE_RESOURCE_GUIDED)
        level = guided_level(info, name, (int)sizeof name);
    if (c->local) {
        int err = inter_split_type(c, split_type, level, key, &n);
        if (!err)
            *newcomm = locus_comm_handle(n);
        return err;
    }
    int p = c->coll.size, where[LOCUS_HW_NLEVELS], row[ROW];
    int *rows = malloc(sizeof *rows * ROW * (size_t)p);
    if (!rows)
        return MPI_ERR_NO_MEM;
    locus_hw_where(where);
    row[0] = c->coll.node_index;
    memcpy(row + 1, where, sizeof where);
    locus_dtype_t *ints = locus_dtype_basic(LOCUS_EL_INT);
    int err = locus_coll_allgather(row, ROW, ints, rows, ROW, ints, &c->coll);
    if (!err && split_type == MPI_COMM_TYPE_HW_UNGUIDED) {
        /* The coarsest level that splits; every member finds the same. */
        for (level = LEVEL_NODE; level < LOCUS_HW_NLEVELS; level++)
            if (level_splits(rows, p, level))
                break;
        if (level == LOCUS_HW_NLEVELS)
            level = -2;
        strcpy(name, level == LEVEL_NODE ? "mpi_shared_memory" : locus_hw_level_uri(level));
    }
    int color = level == -2 || split_type == MPI_UNDEFINED
                    ? MPI_UNDEFINED : level_color(rows, p, c->coll.rank, level);
    free(rows);
    if (!err)
        err = locus_comm_split(c, color, key, &n);
    /* The new communicator remembers which resource made it; an unguided
     * split also tells the caller through its info. */
    if (!err && n && level != -2 && split_type != MPI_COMM_TYPE_SHARED) {
        MPI_Info used;
        if (locus_info_create_impl(&used) == MPI_SUCCESS) {
            locus_info_set_impl(used, "mpi_hw_resource_type", name);
            locus_comm_hints_set(n, used);
            PMPI_Info_free(&used);
        }
        if (split_type == MPI_COMM_TYPE_HW_UNGUIDED && info != MPI_INFO_NULL)
            locus_info_set_impl(info, "mpi_hw_resource_type", name);
    }
    if (!err)
        *newcomm = locus_comm_handle(n);
    return err;
}
