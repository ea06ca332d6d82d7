/*
 * Communicators from groups: MPI_Comm_create (collective over the parent,
 * intra- or intercommunicator) and MPI_Comm_create_group (collective over
 * the group's members only: they agree on the context ids among
 * themselves, by messages on the parent's collective context under a tag
 * the collective layer never uses).
 */
#include <stdlib.h>

#include "comm.h"

/* The rank in c's local group of each member of g (world ranks), in
 * ranks[g->size]; MPI_ERR_GROUP when one is not in c. */
static int group_ranks_in(const locus_comm_t *c, const locus_group_t *g, int *ranks)
{
    int wsize = locus_mpi.core.size > 0 ? locus_mpi.core.size : 1; /* with other jobs' */
    int *rank_of_world = malloc(sizeof *rank_of_world * (size_t)wsize);
    if (!rank_of_world)
        return MPI_ERR_NO_MEM;
    for (int w = 0; w < wsize; w++)
        rank_of_world[w] = -1;
    for (int r = 0; r < c->coll.size; r++)
        rank_of_world[c->world_of[r]] = r;
    int err = MPI_SUCCESS;
    for (int i = 0; i < g->size && !err; i++) {
        int w = g->world_of[i];
        ranks[i] = w >= 0 && w < wsize ? rank_of_world[w] : -1;
        if (ranks[i] < 0)
            err = MPI_ERR_GROUP;
    }
    free(rank_of_world);
    return err;
}

LOCUS_PMPI_WEAK(Comm_create)
int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Comm_create");
    locus_comm_t *c = locus_comm_of(comm), *n = NULL;
    locus_group_t *g = locus_group_of(group);
    if (!locus_comm_valid(c))
        return locus_mpi_err(c, MPI_ERR_COMM, "MPI_Comm_create");
    if (!g)
        return locus_mpi_err(c, MPI_ERR_GROUP, "MPI_Comm_create");
    if (!newcomm)
        return locus_mpi_err(c, MPI_ERR_ARG, "MPI_Comm_create");
    /* Every member of the group must belong to comm (its local group). */
    int *ranks = malloc(sizeof *ranks * ((size_t)g->size + 1));
    int err = ranks ? group_ranks_in(locus_comm_local(c), g, ranks) : MPI_ERR_NO_MEM;
    free(ranks);
    if (err)
        return locus_mpi_err(c, err, "MPI_Comm_create");
    if (c->local) {
        /* The intercommunicator of my side's group and the other side's. */
        err = locus_intercomm_split(c, g->rank == MPI_UNDEFINED ? MPI_UNDEFINED : 0, g->rank,
                                    &n);
    } else {
        uint32_t ctx;
        err = locus_ctx_agree(c, LOCUS_CTX_INTRA, &ctx);
        if (!err && g->rank != MPI_UNDEFINED)
            err = locus_comm_new(g->size, g->rank, g->world_of, ctx, c, &n);
    }
    if (err)
        return locus_mpi_err(c, err, "MPI_Comm_create");
    *newcomm = locus_comm_handle(n);
    return MPI_SUCCESS;
}

/* The members of a group, by their ranks in the parent, and the tag of
 * their exchanges. */
typedef struct {
    locus_comm_t *c;
    const locus_group_t *g;
    const int *ranks;
    int tag;
} group_round_t;

/*
 * A round of the context agreement among the group's members only: the
 * maximum gathered at the first member and sent back to each, by messages
 * on the parent's collective context (peers named by parent rank, so
 * other groups' exchanges never match them).
 */
static int group_round(void *arg, const uint32_t in[2], uint32_t out[2])
{
    group_round_t *a = arg;
    locus_dtype_t *u32 = locus_dtype_basic(LOCUS_EL_UINT32);
    locus_core_t *core = locus_core();
    uint32_t v[2];
    int err = MPI_SUCCESS, leader = a->g->rank == 0;
    out[0] = in[0];
    out[1] = in[1];
    for (int phase = 0; phase < 2; phase++) {
        int npeers = leader ? a->g->size - 1 : 1;
        for (int k = 0; k < npeers && !err; k++) {
            int peer = leader ? a->ranks[k + 1] : a->ranks[0];
            locus_req_t *r = locus_core_req_get(core);
            if (!r)
                return MPI_ERR_NO_MEM;
            if (phase == 0 ? leader : !leader) {
                locus_p2p_irecv(v, 2, u32, peer, a->tag, a->c, a->c->ctx_coll, r);
                err = locus_p2p_finish(r, NULL);
                /* The leader keeps the maximum; the others take its answer. */
                for (int i = 0; !err && i < 2; i++)
                    if (!leader || v[i] > out[i])
                        out[i] = v[i];
            } else {
                err = locus_p2p_isend(out, 2, u32, peer, a->tag, a->c, a->c->ctx_coll, 0, r);
                if (err)
                    locus_core_req_put(core, r);
                else
                    err = locus_p2p_finish(r, NULL);
            }
        }
    }
    return err;
}

LOCUS_PMPI_WEAK(Comm_create_group)
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    LOCUS_ENTRY_CS();
    const char *fn = "MPI_Comm_create_group";
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *c = locus_comm_of(comm), *n = NULL;
    locus_group_t *g = locus_group_of(group);
    if (!locus_comm_valid(c) || c->local)
        return locus_mpi_err(c, MPI_ERR_COMM, fn);
    if (!g)
        return locus_mpi_err(c, MPI_ERR_GROUP, fn);
    if (!newcomm)
        return locus_mpi_err(c, MPI_ERR_ARG, fn);
    if (tag < 0 || tag > LOCUS_TAG_UB)
        return locus_mpi_err(c, MPI_ERR_TAG, fn);
    int *ranks = malloc(sizeof *ranks * ((size_t)g->size + 1));
    int err = ranks ? group_ranks_in(c, g, ranks) : MPI_ERR_NO_MEM;
    if (!err && g->rank == MPI_UNDEFINED) {
        /* Not a member: nothing to agree on (MPICH does the same). */
        free(ranks);
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    uint32_t ctx = 0;
    group_round_t round = { c, g, ranks, locus_tag_reserved(tag) };
    if (!err)
        err = locus_ctx_rounds(group_round, &round, LOCUS_CTX_INTRA, &ctx);
    free(ranks);
    if (!err)
        err = locus_comm_new(g->size, g->rank, g->world_of, ctx, c, &n);
    if (err)
        return locus_mpi_err(c, err, fn);
    *newcomm = locus_comm_handle(n);
    return MPI_SUCCESS;
}
