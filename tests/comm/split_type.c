/*
 * MPI_Comm_split_type: SHARED (one communicator per node, real or
 * emulated with LOCUS_MPI_NODES), HW_GUIDED and RESOURCE_GUIDED for every
 * resource type, HW_UNGUIDED, MPI_UNDEFINED, unknown and missing info
 * values, the info the results carry, MPI_Get_hw_resource_info, and bad
 * arguments. The expected groups come from an independent oracle: each
 * rank asks hwloc (the covering object of its binding, then its ancestor
 * of each type) and the answers are gathered; the node of each rank comes
 * from SHARED, checked itself against LOCUS_MPI_NODES when set. With an
 * hwloc XML file as argument, both see that machine (two ranks bound to
 * CPUs 0 and 1 of 24em64t-2n6c2t-pci.xml sit on different NUMA nodes).
 */
#include <hwloc.h>
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

static int rank, size;

enum { L_PACKAGE, L_NUMA, L_L3, L_CORE, L_PU, NL };
static const char *names[NL] = { "package", "numa", "l3cache", "core", "hwthread" };
static const char *uris[NL] = { "hwloc://Package", "hwloc://NUMANode", "hwloc://L3Cache",
                                "hwloc://Core", "hwloc://PU" };
static const hwloc_obj_type_t types[NL] = { HWLOC_OBJ_PACKAGE, HWLOC_OBJ_NUMANODE,
                                            HWLOC_OBJ_L3CACHE, HWLOC_OBJ_CORE, HWLOC_OBJ_PU };

/* The object of each level holding my whole binding (-1: none). */
static void oracle(int *where)
{
    hwloc_topology_t t;
    hwloc_topology_init(&t);
    hwloc_topology_load(t);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (hwloc_get_cpubind(t, set, HWLOC_CPUBIND_PROCESS) != 0 || hwloc_bitmap_iszero(set))
        hwloc_bitmap_copy(set, hwloc_topology_get_allowed_cpuset(t));
    hwloc_obj_t cover = hwloc_get_obj_covering_cpuset(t, set);
    for (int l = 0; l < NL; l++) {
        where[l] = -1;
        if (types[l] == HWLOC_OBJ_NUMANODE) {
            /* NUMA nodes hang off the CPU tree: the first whose CPUs hold mine. */
            hwloc_obj_t o = NULL;
            while ((o = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, o)))
                if (hwloc_bitmap_isincluded(set, o->cpuset)) {
                    where[l] = (int)o->logical_index;
                    break;
                }
            continue;
        }
        for (hwloc_obj_t o = cover; o; o = o->parent)
            if (o->type == types[l]) {
                where[l] = (int)o->logical_index;
                break;
            }
    }
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(t);
}

/* Checks that c (or MPI_COMM_NULL) holds exactly the ranks whose key
 * equals mine, in world order; key -1: MPI_COMM_NULL expected. */
static void expect_group(MPI_Comm c, const int *key, const char *what)
{
    if (key[rank] < 0) {
        CHECK(c == MPI_COMM_NULL, "%s: expected MPI_COMM_NULL", what);
        return;
    }
    CHECK(c != MPI_COMM_NULL, "%s: got MPI_COMM_NULL", what);
    if (c == MPI_COMM_NULL)
        return;
    int n, r, want_n = 0, want_r = 0;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &r);
    for (int q = 0; q < size; q++)
        if (key[q] == key[rank]) {
            if (q < rank)
                want_r++;
            want_n++;
        }
    CHECK(n == want_n && r == want_r, "%s: size %d rank %d, expected %d %d", what, n, r, want_n,
          want_r);
}

static MPI_Comm guided(int type, const char *value)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_hw_resource_type", value);
    MPI_Comm c;
    MPI_Comm_split_type(MPI_COMM_WORLD, type, 0, info, &c);
    MPI_Info_free(&info);
    return c;
}

int main(int argc, char **argv)
{
    /* An hwloc XML export as the machine (for the library and the oracle
     * alike): on two CPUs of this machine, another machine's NUMA nodes. */
    if (argc > 1) {
        setenv("HWLOC_XMLFILE", argv[1], 1);
        setenv("HWLOC_THISSYSTEM", "1", 1);
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *rows = malloc(sizeof *rows * (size_t)size * (NL + 1));
    int *key = malloc(sizeof *key * (size_t)size);

    /* SHARED: my node is the lowest world rank sharing it. */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int node_first;
    MPI_Group ng, wg;
    MPI_Comm_group(node, &ng);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int zero = 0;
    MPI_Group_translate_ranks(ng, 1, &zero, wg, &node_first);
    const char *emu = getenv("LOCUS_MPI_NODES");
    if (emu && !strncmp(emu, "block:", 6)) {
        int per = atoi(emu + 6);
        CHECK(node_first == rank / per * per, "emulated block node: first %d", node_first);
    } else if (emu && !strncmp(emu, "cyclic:", 7)) {
        int nn = atoi(emu + 7);
        CHECK(node_first == rank % nn, "emulated cyclic node: first %d", node_first);
    } else if (!emu) {
        CHECK(node_first == 0, "one node here: first %d", node_first);
    }

    int row[NL + 1];
    row[0] = node_first;
    oracle(row + 1);
    MPI_Allgather(row, NL + 1, MPI_INT, rows, NL + 1, MPI_INT, MPI_COMM_WORLD);

    /* mpi_shared_memory is SHARED. */
    for (int q = 0; q < size; q++)
        key[q] = rows[q * (NL + 1)];
    MPI_Comm c = guided(MPI_COMM_TYPE_HW_GUIDED, "mpi_shared_memory");
    expect_group(c, key, "guided mpi_shared_memory");
    if (c != MPI_COMM_NULL)
        MPI_Comm_free(&c);
    expect_group(node, key, "shared");

    /* Each level, by short name and by URI: one communicator per (node,
     * object); MPI_COMM_NULL where the binding spans several. */
    MPI_Info hw;
    MPI_Get_hw_resource_info(&hw);
    for (int l = 0; l < NL; l++) {
        for (int q = 0; q < size; q++) {
            const int *rq = rows + q * (NL + 1);
            key[q] = rq[1 + l] < 0 ? -1 : rq[0] * 100000 + rq[1 + l];
        }
        for (int form = 0; form < 3; form++) {
            int type = form == 2 ? MPI_COMM_TYPE_RESOURCE_GUIDED : MPI_COMM_TYPE_HW_GUIDED;
            c = guided(type, form == 1 ? uris[l] : names[l]);
            char what[64];
            snprintf(what, sizeof what, "guided %s (form %d)", names[l], form);
            expect_group(c, key, what);
            if (c != MPI_COMM_NULL) {
                /* The result tells which resource made it. */
                MPI_Info used;
                char v[64];
                int len = sizeof v, flag = 0;
                MPI_Comm_get_info(c, &used);
                MPI_Info_get_string(used, "mpi_hw_resource_type", &len, v, &flag);
                CHECK(flag, "%s: no mpi_hw_resource_type on the result", what);
                MPI_Info_free(&used);
                MPI_Comm_free(&c);
            }
        }
        /* MPI_Get_hw_resource_info says whether I am restricted to one. */
        char v[16];
        int len = sizeof v, flag = 0;
        MPI_Info_get_string(hw, uris[l], &len, v, &flag);
        CHECK(flag && !strcmp(v, rows[rank * (NL + 1) + 1 + l] >= 0 ? "true" : "false"),
              "hw_resource_info %s = %s", uris[l], flag ? v : "(missing)");
    }
    MPI_Info_free(&hw);

    /* Unknown value, missing key: MPI_COMM_NULL everywhere. */
    for (int q = 0; q < size; q++)
        key[q] = -1;
    c = guided(MPI_COMM_TYPE_HW_GUIDED, "flux-capacitor");
    expect_group(c, key, "guided unknown value");
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, MPI_INFO_NULL, &c);
    expect_group(c, key, "guided without info");

    /* Unguided: the coarsest level that splits (node first), or none; the
     * info passed in learns which. */
    int level = -2;
    for (int l = -1; l < NL && level == -2; l++) {
        int defined = 0, several = 0, first = -1;
        for (int q = 0; q < size; q++) {
            const int *rq = rows + q * (NL + 1);
            if (l >= 0 && rq[1 + l] < 0)
                continue;
            int k = l < 0 ? rq[0] : rq[0] * 100000 + rq[1 + l];
            if (defined++ == 0)
                first = k;
            else if (k != first)
                several = 1;
        }
        if (defined > 0 && (defined < size || several))
            level = l;
    }
    for (int q = 0; q < size; q++) {
        const int *rq = rows + q * (NL + 1);
        if (level == -2)
            key[q] = -1;
        else if (level < 0)
            key[q] = rq[0];
        else
            key[q] = rq[1 + level] < 0 ? -1 : rq[0] * 100000 + rq[1 + level];
    }
    MPI_Info ui;
    MPI_Info_create(&ui);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, ui, &c);
    expect_group(c, key, "unguided");
    if (level != -2) {
        char v[64];
        int len = sizeof v, flag = 0;
        MPI_Info_get_string(ui, "mpi_hw_resource_type", &len, v, &flag);
        CHECK(flag && !strcmp(v, level < 0 ? "mpi_shared_memory" : uris[level]),
              "unguided info says %s", flag ? v : "(nothing)");
    }
    MPI_Info_free(&ui);
    if (c != MPI_COMM_NULL)
        MPI_Comm_free(&c);

    /* MPI_UNDEFINED on rank 0 only: it gets MPI_COMM_NULL, the rest split. */
    MPI_Comm_split_type(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0,
                        MPI_INFO_NULL, &c);
    for (int q = 0; q < size; q++)
        key[q] = q == 0 ? -1 : rows[q * (NL + 1)];
    expect_group(c, key, "undefined on rank 0");
    if (c != MPI_COMM_NULL)
        MPI_Comm_free(&c);

    /* Keys order the ranks: reversed. */
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, -rank, MPI_INFO_NULL, &c);
    int n, r;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &r);
    int below = 0;
    for (int q = rank + 1; q < size; q++)
        below += rows[q * (NL + 1)] == node_first;
    CHECK(r == below, "shared with reversed keys: rank %d, expected %d", r, below);
    MPI_Comm_free(&c);

    /* A bad split type. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &c), cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "split type 12345: class %d", cls);

    MPI_Group_free(&ng);
    MPI_Group_free(&wg);
    MPI_Comm_free(&node);
    free(rows);
    free(key);
    return mtest_finish();
}
