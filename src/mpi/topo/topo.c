/*
 * Process topologies, the common part: the communicator a topology call
 * makes, and MPI_Topo_test. The topology object itself travels with its
 * communicator (comm/comm_topo.c).
 */
#include <stdlib.h>

#include "topo.h"

/* ---- the communicator of a topology ----------------------------------------------- */

int locus_topo_comm(locus_comm_t *old, int n, const int *proc_of, locus_ptopo_t *t,
                    locus_comm_t **out)
{
    *out = NULL;
    uint32_t ctx;
    int *world = malloc(sizeof *world * (size_t)(n > 0 ? n : 1));
    int err = world ? locus_ctx_agree(old, LOCUS_CTX_INTRA, &ctx) : MPI_ERR_NO_MEM;
    int me = -1;
    for (int v = 0; !err && v < n; v++) {
        int p = proc_of ? proc_of[v] : v;
        world[v] = old->world_of[p];
        if (p == old->coll.rank)
            me = v;
    }
    if (!err && me >= 0)
        err = locus_comm_new(n, me, world, ctx, old, out);
    if (!err && *out) {
        (*out)->topo = t;
        t = NULL;
        if ((err = locus_ptopo_nbrs_build((*out)->topo, me)) != MPI_SUCCESS) {
            locus_comm_discard(*out);
            *out = NULL;
        }
    }
    locus_ptopo_free(t);
    free(world);
    return err;
}

int locus_topo_ids_check(const int *ids, int n, int bound, int bad)
{
    if (n > 0 && !ids)
        return MPI_ERR_ARG;
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= bound)
            return bad;
    return MPI_SUCCESS;
}

int locus_topo_create_end(locus_comm_t *old, int err, locus_ptopo_t *t, int n, int *proc_of,
                          int reorder, MPI_Comm *newcomm)
{
    locus_comm_t *nc = NULL;
    if (!err)
        err = locus_topo_comm(old, n, reorder ? proc_of : NULL, t, &nc);
    else
        locus_ptopo_free(t);
    free(proc_of);
    if (!err)
        *newcomm = locus_comm_handle(nc);
    return err;
}

LOCUS_PMPI_WEAK(Topo_test)
int PMPI_Topo_test(MPI_Comm comm, int *status)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Topo_test");
    locus_comm_t *c = locus_comm_of(comm);
    if (!locus_comm_valid(c))
        return locus_mpi_err(c, MPI_ERR_COMM, "MPI_Topo_test");
    if (!status)
        return locus_mpi_err(c, MPI_ERR_ARG, "MPI_Topo_test");
    *status = c->topo ? c->topo->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
