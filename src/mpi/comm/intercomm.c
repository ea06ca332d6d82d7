/*
 * Intercommunicators: MPI_Intercomm_create (leaders meet over a peer
 * communicator), MPI_Intercomm_merge, and split/create on an
 * intercommunicator. How one is laid out: comm.h and mpi_impl.h (the
 * remote group is what its ranks address; its local group is an
 * intracommunicator of its own). Collectives on them: intercomm_coll.c.
 */
#include <stdlib.h>
#include <string.h>

#include "comm.h"

static locus_dtype_t *int_type(void)
{
    return locus_dtype_basic(LOCUS_EL_INT);
}

/* ---- MPI_Intercomm_create ------------------------------------------------------- */

/* A blocking exchange with rank `peer` of comm on its collective context:
 * sends n_out ints, receives up to n_in. */
static int leader_trade(locus_comm_t *comm, int peer, int tag, const int *out, int n_out,
                        int *in, int n_in)
{
    locus_core_t *core = locus_core();
    locus_req_t *rr = locus_core_req_get(core), *sr = locus_core_req_get(core);
    if (!rr || !sr) {
        if (rr)
            locus_core_req_put(core, rr);
        if (sr)
            locus_core_req_put(core, sr);
        return MPI_ERR_NO_MEM;
    }
    locus_p2p_irecv(in, (size_t)n_in, int_type(), peer, tag, comm, comm->ctx_coll, rr);
    int err = locus_p2p_isend(out, (size_t)n_out, int_type(), peer, tag, comm, comm->ctx_coll,
                              0, sr);
    if (err != MPI_SUCCESS) {
        locus_core_req_put(core, sr);
        locus_core_cancel(core, rr);
        locus_p2p_finish(rr, NULL);
        return err;
    }
    int serr = locus_p2p_finish(sr, NULL);
    int rerr = locus_p2p_finish(rr, NULL);
    return serr ? serr : rerr;
}

/* What the local leader learns from the remote one and tells its group. */
typedef struct {
    int err;            /* an MPI error class the whole group returns */
    int rsize;
} leader_news_t;

/* The local leader's part: trade sizes and member lists with the remote
 * leader. *rworld gets the remote members (malloc'ed). */
static int leader_meet(locus_comm_t *local, locus_comm_t *peer, int remote_leader, int tag,
                       leader_news_t *news, int **rworld)
{
    int mine = local->coll.size, theirs = 0;
    int err = leader_trade(peer, remote_leader, tag, &mine, 1, &theirs, 1);
    if (err)
        return err;
    if (theirs < 1)
        return MPI_ERR_INTERN;
    *rworld = malloc(sizeof **rworld * (size_t)theirs);
    if (!*rworld)
        return MPI_ERR_NO_MEM;
    err = leader_trade(peer, remote_leader, tag, local->world_of, local->coll.size, *rworld,
                       theirs);
    if (err)
        return err;
    news->rsize = theirs;
    /* The two groups must be disjoint. */
    for (int i = 0; i < theirs; i++)
        for (int j = 0; j < local->coll.size; j++)
            if ((*rworld)[i] == local->world_of[j])
                return MPI_ERR_ARG;
    return MPI_SUCCESS;
}

/* A round of the context agreement before the intercommunicator exists:
 * each group's maximum, traded by the leaders, told to the group. */
typedef struct {
    locus_comm_t *local, *peer;
    int leader, remote_leader, tag;
} create_round_t;

static int create_round(void *arg, const uint32_t in[2], uint32_t out[2])
{
    create_round_t *a = arg;
    locus_dtype_t *u32 = locus_dtype_basic(LOCUS_EL_UINT32);
    int err = locus_coll_allreduce(in, out, 2, u32, locus_op_predefined(LOCUS_OP_MAX),
                                   &a->local->coll);
    if (!err && a->local->coll.rank == a->leader) {
        int mine[2] = { (int)out[0], (int)out[1] }, theirs[2];
        err = leader_trade(a->peer, a->remote_leader, a->tag, mine, 2, theirs, 2);
        for (int i = 0; !err && i < 2; i++)
            if ((uint32_t)theirs[i] > out[i])
                out[i] = (uint32_t)theirs[i];
    }
    /* A failed trade still lets the group finish its bcast. */
    uint32_t msg[3] = { out[0], out[1], (uint32_t)err };
    int berr = locus_coll_bcast(msg, 3, u32, a->leader, &a->local->coll);
    out[0] = msg[0];
    out[1] = msg[1];
    return berr ? berr : (int)msg[2];
}

int locus_intercomm_finish(locus_comm_t *local, int leader, locus_comm_t *peer,
                           int remote_leader, int tag, const int *rworld, int rsize,
                           locus_comm_t **out)
{
    uint32_t ctx = 0;
    create_round_t round = { local, peer, leader, remote_leader, tag };
    int err = locus_ctx_rounds(create_round, &round, LOCUS_CTX_INTER, &ctx);
    if (!err)
        err = locus_comm_alloc(out);
    if (!err)
        err = locus_intercomm_setup(*out, local->world_of, local->coll.size, local->coll.rank,
                                    rworld, rsize, ctx, local);
    return err;
}

LOCUS_PMPI_WEAK(Intercomm_create)
int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                          int remote_leader, int tag, MPI_Comm *newintercomm)
{
    LOCUS_ENTRY_CS();
    const char *fn = "MPI_Intercomm_create";
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *local = locus_comm_of(local_comm), *n = NULL;
    if (!locus_comm_valid(local) || local->local)
        return locus_mpi_err(local, MPI_ERR_COMM, fn);
    if (!newintercomm)
        return locus_mpi_err(local, MPI_ERR_ARG, fn);
    if (local_leader < 0 || local_leader >= local->coll.size)
        return locus_mpi_err(local, MPI_ERR_RANK, fn);
    int leader = local->coll.rank == local_leader;
    locus_comm_t *peer = leader ? locus_comm_of(peer_comm) : NULL;
    /* The peer's arguments matter at the leader only; a bad one there
     * still lets the group finish the call (all of it then fails). */
    leader_news_t news = { MPI_SUCCESS, 0 };
    if (leader && !locus_comm_valid(peer))
        news.err = MPI_ERR_COMM;
    else if (leader && (remote_leader < 0 || remote_leader >= peer->coll.size ||
                        (!peer->local && remote_leader == peer->coll.rank)))
        news.err = MPI_ERR_RANK;
    else if (leader && tag < 0)
        news.err = MPI_ERR_TAG;
    int *rworld = NULL, t = locus_tag_reserved(tag);
    if (leader && !news.err)
        news.err = leader_meet(local, peer, remote_leader, t, &news, &rworld);
    int err = locus_coll_bcast(&news, 2, int_type(), local_leader, &local->coll);
    if (!err && !news.err && !leader && !(rworld = malloc(sizeof *rworld * (size_t)news.rsize)))
        err = MPI_ERR_NO_MEM;
    if (!err && !news.err)
        err = locus_coll_bcast(rworld, (size_t)news.rsize, int_type(), local_leader,
                               &local->coll);
    if (!err && !news.err)
        err = locus_intercomm_finish(local, local_leader, peer, remote_leader, t, rworld,
                                     news.rsize, &n);
    free(rworld);
    if (!err)
        err = news.err;
    if (err)
        return locus_mpi_err(local, err, fn);
    *newintercomm = locus_comm_handle(n);
    return MPI_SUCCESS;
}

/* ---- MPI_Intercomm_merge ---------------------------------------------------------- */

LOCUS_PMPI_WEAK(Intercomm_merge)
int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    LOCUS_ENTRY_CS();
    const char *fn = "MPI_Intercomm_merge";
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *c = locus_comm_of(intercomm), *n = NULL;
    if (!locus_comm_valid(c) || !c->local)
        return locus_mpi_err(c, MPI_ERR_COMM, fn);
    if (!newintracomm)
        return locus_mpi_err(c, MPI_ERR_ARG, fn);
    locus_comm_t *l = c->local;
    /* The other group's "high" (the same on all of its members). */
    int mine = high != 0, theirs = 0;
    int err = locus_coll_inter_allreduce(&mine, &theirs, 1, int_type(),
                                         locus_op_predefined(LOCUS_OP_MAX), &c->coll, &l->coll);
    uint32_t ctx = 0;
    if (!err)
        err = locus_ctx_agree(c, LOCUS_CTX_INTRA, &ctx);
    int lsize = l->coll.size, rsize = c->coll.size;
    int *world = err ? NULL : malloc(sizeof *world * (size_t)(lsize + rsize));
    if (!err && !world)
        err = MPI_ERR_NO_MEM;
    if (!err) {
        /* The group that said high goes last; when both said the same,
         * the one whose first member comes first among jobs (within one
         * job: is lower in MPI_COMM_WORLD) goes first. */
        int first = mine != theirs ? !mine : locus_peer_before(l->world_of[0], c->world_of[0]);
        memcpy(world + (first ? 0 : rsize), l->world_of, sizeof *world * (size_t)lsize);
        memcpy(world + (first ? lsize : 0), c->world_of, sizeof *world * (size_t)rsize);
        err = locus_comm_new(lsize + rsize, l->coll.rank + (first ? 0 : rsize), world, ctx, c,
                             &n);
    }
    free(world);
    if (err)
        return locus_mpi_err(c, err, fn);
    *newintracomm = locus_comm_handle(n);
    return MPI_SUCCESS;
}

/* ---- split (and create) on an intercommunicator ------------------------------------ */

typedef struct {
    int color, key, rank;
} ic_ent_t;

static int ic_cmp(const void *a, const void *b)
{
    const ic_ent_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* Keeps the entries of `color`, sorted by key then rank; returns how many
 * and writes their world ranks to world. */
static int ic_members(ic_ent_t *e, int n, int color, const int *world_of, int *world)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (e[i].color == color)
            e[k++] = e[i];
    qsort(e, (size_t)k, sizeof *e, ic_cmp);
    for (int i = 0; i < k; i++)
        world[i] = world_of[e[i].rank];
    return k;
}

int locus_intercomm_split(locus_comm_t *c, int color, int key, locus_comm_t **out)
{
    locus_comm_t *l = c->local;
    int lsize = l->coll.size, rsize = c->coll.size;
    ic_ent_t mine = { color, key, l->coll.rank };
    ic_ent_t *le = malloc(sizeof *le * (size_t)lsize), *re = malloc(sizeof *re * (size_t)rsize);
    size_t *cnt = malloc(sizeof *cnt * (size_t)rsize);
    ptrdiff_t *disp = malloc(sizeof *disp * (size_t)rsize);
    int *lw = malloc(sizeof *lw * (size_t)lsize), *rw = malloc(sizeof *rw * (size_t)rsize);
    int err = le && re && cnt && disp && lw && rw ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    *out = NULL;
    for (int i = 0; !err && i < rsize; i++) {
        cnt[i] = 3;
        disp[i] = 3 * (ptrdiff_t)i;
    }
    /* My group's entries, then the remote group's (every member of one
     * group hears from every member of the other). */
    if (!err)
        err = locus_coll_allgather(&mine, 3, int_type(), le, 3, int_type(), &l->coll);
    if (!err)
        err = locus_coll_inter_allgatherv(&mine, 3, int_type(), re, cnt, disp, int_type(),
                                          &c->coll, &l->coll);
    uint32_t ctx;
    if (!err)
        err = locus_ctx_agree(c, LOCUS_CTX_INTER, &ctx);
    if (!err && color != MPI_UNDEFINED) {
        int nl = ic_members(le, lsize, color, l->world_of, lw);
        int nr = ic_members(re, rsize, color, c->world_of, rw);
        int me = 0;
        while (me < nl && le[me].rank != l->coll.rank)
            me++;
        /* Disjoint (color, side) sets share the context ids: they never
         * exchange a message. */
        if (nr > 0 && (err = locus_comm_alloc(out)) == MPI_SUCCESS &&
            (err = locus_intercomm_setup(*out, lw, nl, me, rw, nr, ctx, c)) != MPI_SUCCESS)
            *out = NULL;
    }
    free(le);
    free(re);
    free(cnt);
    free(disp);
    free(lw);
    free(rw);
    return err;
}
