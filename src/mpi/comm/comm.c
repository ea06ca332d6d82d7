/*
 * Communicators: construction (with node-locality tables), lifetime
 * (reference counts), context-id agreement (comm.h says how ids are
 * chosen), dup, split and free. Queries are in comm_query.c, the other
 * constructors in comm_create.c, comm_dup.c, comm_split_type.c,
 * intercomm.c and topo*.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "locus_dyn.h"
#include "locus_tunables.h"

/* ---- node tables -------------------------------------------------------------- */

/* The emulated layout of LOCUS_MPI_NODES: 'b' (block:N), 'c' (cyclic:N) or
 * 0 (the real nodes); a bad value stops the process with one line. */
static char node_layout(int *n)
{
    const char *v = locus_tunable_str("LOCUS_MPI_NODES");
    if (!*v)
        return 0;
    char mode[8] = "", tail;
    if (sscanf(v, "%7[a-z]:%d%c", mode, n, &tail) != 2 || *n < 1 ||
        (strcmp(mode, "block") && strcmp(mode, "cyclic"))) {
        fprintf(stderr, "locus: LOCUS_MPI_NODES=%s is not block:N or cyclic:N (N >= 1)\n", v);
        exit(2);
    }
    return mode[0];
}

/* -1 for a process of another job (a peer id past the world's, dynproc/):
 * where it runs is not known, so it shares a node with nobody. */
static int node_of_world(char layout, int n, int w)
{
    if (w >= locus_mpi.boot.size)
        return -1;
    if (layout)
        return layout == 'b' ? w / n : w % n;
    int nn = locus_mpi.boot.nnodes > 0 ? locus_mpi.boot.nnodes : 1;
    int wn = locus_mpi.boot.node_of ? locus_mpi.boot.node_of[w] : 0;
    return wn < 0 || wn >= nn ? 0 : wn;
}

/* A peer's name among jobs: this job's ranks are its world ranks, the
 * others' the dyn transport's (an unknown one sorts last). */
static locus_dyn_name_t peer_name(int w)
{
    locus_dyn_name_t n = { locus_mpi.job, w };
    if (w >= locus_mpi.boot.size &&
        (!locus_mpi.dyn || locus_dyn_name(locus_mpi.dyn, w, &n, NULL, 0) != 0))
        n = (locus_dyn_name_t){ UINT64_MAX, w };
    return n;
}

int locus_peer_before(int a, int b)
{
    locus_dyn_name_t x = peer_name(a), y = peer_name(b);
    return x.job != y.job ? x.job < y.job : x.rank < y.rank;
}

int locus_world_node(int w)
{
    int n = 1;
    char layout = node_layout(&n);
    return node_of_world(layout, n, w);
}

/* Node layout of the members, in ranks of the communicator. */
static int comm_nodes(locus_coll_comm_t *cc, const int *world_of)
{
    int size = cc->size, rank = cc->rank, n = 1;
    char layout = node_layout(&n);
    /* Node numbers (real or emulated) stay below the world's size. */
    int bound = locus_mpi.boot.size > locus_mpi.boot.nnodes ? locus_mpi.boot.size
                                                            : locus_mpi.boot.nnodes;
    if (bound < 1)
        bound = 1;
    int *wnode_to_comm = calloc((size_t)bound, sizeof *wnode_to_comm); /* node + 1 */
    cc->node_of = malloc((size_t)size * sizeof *cc->node_of);
    cc->leaders = malloc((size_t)size * sizeof *cc->leaders);
    if (!wnode_to_comm || !cc->node_of || !cc->leaders) {
        free(wnode_to_comm);
        return MPI_ERR_NO_MEM;
    }
    /* With processes of two jobs (a spawn's parents and children merged),
     * each member knows the nodes of its own job's members only, and the
     * collectives' algorithms must see one layout everywhere: every member
     * is a node of its own. Each member sees a process of another job in
     * such a communicator, so all decide alike. */
    int other_jobs = 0;
    for (int r = 0; r < size; r++)
        other_jobs |= world_of[r] >= locus_mpi.boot.size;
    /* Nodes are numbered in the order of their first member (the leader). */
    for (int r = 0; r < size; r++) {
        int wn = other_jobs ? -1 : node_of_world(layout, n, world_of[r]);
        if (wn < 0) {
            cc->leaders[cc->num_nodes] = r;
            cc->node_of[r] = cc->num_nodes++;
            continue;
        }
        if (wn >= bound)
            wn = 0;
        if (wnode_to_comm[wn] == 0) {
            cc->leaders[cc->num_nodes++] = r;
            wnode_to_comm[wn] = cc->num_nodes;
        }
        cc->node_of[r] = wnode_to_comm[wn] - 1;
    }
    free(wnode_to_comm);
    cc->node_index = cc->node_of[rank];
    for (int r = 0; r < size; r++)
        cc->local_size += cc->node_of[r] == cc->node_index;
    cc->local_ranks = malloc((size_t)cc->local_size * sizeof *cc->local_ranks);
    if (!cc->local_ranks)
        return MPI_ERR_NO_MEM;
    int k = 0;
    for (int r = 0; r < size; r++) {
        if (cc->node_of[r] == cc->node_index) {
            if (r == rank)
                cc->local_rank = k;
            cc->local_ranks[k++] = r;
        }
    }
    return MPI_SUCCESS;
}

/* ---- lifetime --------------------------------------------------------------- */

/* Frees what locus_comm_init and the other constructors allocated. */
static void comm_teardown(locus_comm_t *c)
{
    /* Attributes left on an internal communicator or at MPI_Finalize. */
    locus_attr_clear(&c->attrs, ATTR_COMM, locus_comm_handle(c));
    locus_coll_comm_release(&c->coll);
    locus_errh_set(c, &locus_errh_fatal);
    free(c->world_of);
    free(c->coll.node_of);
    free(c->coll.leaders);
    free(c->coll.local_ranks);
    c->world_of = c->coll.node_of = c->coll.leaders = c->coll.local_ranks = NULL;
    locus_ptopo_free(c->topo);
    c->topo = NULL;
    locus_comm_hints_set(c, MPI_INFO_NULL);
    if (c->local) {
        c->local->magic = 0;
        locus_comm_release(c->local);
        c->local = NULL;
    }
    c->magic = 0;
}

/* What every communicator starts with: size peers (the remote group's
 * for an intercommunicator), whose world ranks are world_of, rank mine,
 * contexts ctx (point-to-point) and ctx + 1 (collectives), the fatal
 * handler. MPI_ERR_NO_MEM leaves c->world_of NULL. */
static int comm_base(locus_comm_t *c, int size, int rank, const int *world_of, uint32_t ctx)
{
    memset(c, 0, sizeof *c);
    c->refs = 1;
    c->coll.p2p = &locus_coll_p2p;
    c->coll.size = size;
    c->coll.rank = rank;
    c->coll.id = ctx + 1;
    c->coll.yield = locus_mpi.core.yield;
    c->ctx_p2p = ctx;
    c->ctx_coll = ctx + 1;
    c->errh = &locus_errh_fatal;
    c->world_of = malloc((size_t)size * sizeof *c->world_of);
    if (!c->world_of)
        return MPI_ERR_NO_MEM;
    memcpy(c->world_of, world_of, (size_t)size * sizeof *world_of);
    return MPI_SUCCESS;
}

int locus_comm_init(locus_comm_t *c, int size, int rank, const int *world_of, uint32_t ctx)
{
    if (size < 1 || rank < 0 || rank >= size) {
        memset(c, 0, sizeof *c);
        return MPI_ERR_INTERN;
    }
    int err = comm_base(c, size, rank, world_of, ctx);
    if (err == MPI_SUCCESS)
        err = comm_nodes(&c->coll, world_of);
    if (err != MPI_SUCCESS) {
        comm_teardown(c);
        return err;
    }
    c->magic = LOCUS_COMM_MAGIC;
    return MPI_SUCCESS;
}

void locus_comm_free(locus_comm_t *c)
{
    comm_teardown(c);
    /* The struct is kept (its magic cleared) and reused, so a stale handle
     * is caught as MPI_ERR_COMM instead of touching freed memory. The
     * predefined ones are static. */
    if (!c->predefined)
        locus_comm_unalloc(c);
}

void locus_comm_discard(locus_comm_t *c)
{
    c->magic = 0;
    locus_comm_release(c);
}

int locus_comm_alloc(locus_comm_t **out)
{
    locus_comm_t *c = locus_mpi.comm_pool;
    if (c)
        locus_mpi.comm_pool = c->pool_next;
    else if (!(c = calloc(1, sizeof *c)))
        return MPI_ERR_NO_MEM;
    /* Entered for good: the struct is never given back, so its magic can
     * always be read through a handle that names it. */
    else if (locus_handle_enter(c, LOCUS_HK_COMM) < 0) {
        free(c);
        return MPI_ERR_NO_MEM;
    }
    c->magic = 0;
    *out = c;
    return MPI_SUCCESS;
}

void locus_comm_unalloc(locus_comm_t *c)
{
    c->magic = 0;
    c->pool_next = locus_mpi.comm_pool;
    locus_mpi.comm_pool = c;
}

int locus_comm_setup(locus_comm_t *c, int size, int rank, const int *world_of, uint32_t ctx,
                     const locus_comm_t *parent)
{
    int err = locus_comm_init(c, size, rank, world_of, ctx);
    if (err) {
        locus_comm_unalloc(c);
        return err;
    }
    if (parent) {
        locus_errh_set(c, parent->errh);
        c->coll.no_shm = parent->coll.no_shm; /* the library's own stay light */
        c->bsend_slot = parent->bsend_slot;
    }
    return MPI_SUCCESS;
}

int locus_comm_new(int size, int rank, const int *world_of, uint32_t ctx,
                   const locus_comm_t *parent, locus_comm_t **out)
{
    locus_comm_t *c;
    int err = locus_comm_alloc(&c);
    if (!err)
        err = locus_comm_setup(c, size, rank, world_of, ctx, parent);
    *out = err ? NULL : c;
    return err;
}

int locus_intercomm_setup(locus_comm_t *c, const int *lworld, int lsize, int lrank,
                          const int *rworld, int rsize, uint32_t ctx,
                          const locus_comm_t *parent)
{
    locus_comm_t *local;
    int err = locus_comm_new(lsize, lrank, lworld, ctx + 2, NULL, &local);
    if (err) {
        locus_comm_unalloc(c);
        return err;
    }
    /* The remote group is what point-to-point and the collective view
     * address; my rank is my rank in the local group. Node tables are
     * the local communicator's business. */
    err = comm_base(c, rsize, lrank, rworld, ctx);
    c->coll.node_index = -1;
    c->local = local;
    if (err) {
        comm_teardown(c);
        locus_comm_unalloc(c);
        return err;
    }
    if (parent)
        locus_errh_set(c, parent->errh);
    c->magic = LOCUS_COMM_MAGIC;
    return MPI_SUCCESS;
}

/* ---- context ids ------------------------------------------------------------ */

int locus_ctx_check(uint32_t first, uint32_t n)
{
    if (first < LOCUS_CTX_LIMIT && n <= LOCUS_CTX_LIMIT - first)
        return MPI_SUCCESS;
    snprintf(locus_mpi.detail, sizeof locus_mpi.detail,
             "context ids exhausted after %u communicators", first / 2);
    return MPI_ERR_INTERN;
}

void locus_ctx_take(uint32_t ctx, uint32_t n)
{
    if (locus_mpi.next_ctx < ctx + n)
        locus_mpi.next_ctx = ctx + n;
}

int locus_ctx_vote(uint32_t cand, uint32_t n, uint32_t vote[2])
{
    int err = locus_ctx_check(cand, n);
    if (err)
        return err;
    /* Every id this process ever used lies below next_ctx. */
    int fresh = locus_mpi.next_ctx <= cand;
    if (fresh)
        locus_ctx_take(cand, n);
    vote[0] = !fresh;
    vote[1] = locus_mpi.next_ctx;
    return MPI_SUCCESS;
}

int locus_ctx_rounds(int (*round)(void *arg, const uint32_t in[2], uint32_t out[2]), void *arg,
                     uint32_t n, uint32_t *ctx)
{
    uint32_t vote[2] = { 1, locus_mpi.next_ctx }, res[2], cand = 0;
    for (int r = 0;; r++) {
        int err = round(arg, vote, res);
        if (err)
            return err;
        if (r > 0 && res[0] == 0) {
            *ctx = cand;
            return MPI_SUCCESS;
        }
        cand = res[1];
        if ((err = locus_ctx_vote(cand, n, vote)) != MPI_SUCCESS)
            return err;
    }
}

/* A round over c: the maximum over its members (both groups of an
 * intercommunicator). */
static int comm_round(void *arg, const uint32_t in[2], uint32_t out[2])
{
    locus_comm_t *c = arg;
    locus_dtype_t *u32 = locus_dtype_basic(LOCUS_EL_UINT32);
    locus_op_t *max = locus_op_predefined(LOCUS_OP_MAX);
    int err = locus_coll_allreduce(in, out, 2, u32, max, &locus_comm_local(c)->coll);
    if (!err && c->local) {
        uint32_t remote[2];
        err = locus_coll_inter_allreduce(out, remote, 2, u32, max, &c->coll, &c->local->coll);
        for (int i = 0; !err && i < 2; i++)
            if (remote[i] > out[i])
                out[i] = remote[i];
    }
    return err;
}

int locus_ctx_agree(locus_comm_t *c, uint32_t n, uint32_t *ctx)
{
    return locus_ctx_rounds(comm_round, c, n, ctx);
}

/* ---- dup ------------------------------------------------------------------------ */

int locus_comm_hints_set(locus_comm_t *c, MPI_Info info)
{
    MPI_Info copy = NULL;
    if (info != MPI_INFO_NULL && info != NULL) {
        int err = locus_info_dup_impl(info, &copy);
        if (err)
            return err;
    }
    if (c->hints)
        PMPI_Info_free(&c->hints);
    c->hints = copy;
    return MPI_SUCCESS;
}

int locus_comm_inherit(locus_comm_t *c, locus_comm_t *n, MPI_Info hints)
{
    int err = locus_attr_copy(c->attrs, ATTR_COMM, locus_comm_handle(c), &n->attrs);
    if (!err && c->topo)
        err = locus_ptopo_dup(c->topo, &n->topo);
    if (!err)
        err = locus_comm_hints_set(n, hints ? hints : c->hints ? c->hints : MPI_INFO_NULL);
    return err;
}

/* A communicator of c's groups on the context ids from ctx. */
static int comm_same_groups(locus_comm_t *c, uint32_t ctx, locus_comm_t **out)
{
    locus_comm_t *n;
    int err = locus_comm_alloc(&n);
    if (err)
        return err;
    if (c->local)
        err = locus_intercomm_setup(n, c->local->world_of, c->local->coll.size,
                                    c->local->coll.rank, c->world_of, c->coll.size, ctx, c);
    else
        err = locus_comm_setup(n, c->coll.size, c->coll.rank, c->world_of, ctx, c);
    *out = err ? NULL : n;
    return err;
}

int locus_comm_dup(locus_comm_t *c, locus_comm_t **out)
{
    uint32_t ctx;
    locus_comm_t *n = NULL;
    int err = locus_ctx_agree(c, c->local ? LOCUS_CTX_INTER : LOCUS_CTX_INTRA, &ctx);
    if (!err)
        err = comm_same_groups(c, ctx, &n);
    if (!err && (err = locus_comm_inherit(c, n, NULL)) != MPI_SUCCESS) {
        locus_comm_discard(n);
        n = NULL;
    }
    *out = n;
    return err;
}

int locus_comm_dup_on(locus_comm_t *c, uint32_t ctx, locus_comm_t **out)
{
    return comm_same_groups(c, ctx, out);
}

void locus_comm_set_ctx(locus_comm_t *c, uint32_t ctx)
{
    c->ctx_p2p = ctx;
    c->ctx_coll = c->coll.id = ctx + 1;
    if (c->local)
        locus_comm_set_ctx(c->local, ctx + 2);
}

LOCUS_PMPI_WEAK(Comm_dup)
int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Comm_dup");
    locus_comm_t *c = locus_comm_of(comm), *n = NULL;
    if (!locus_comm_valid(c))
        return locus_mpi_err(c, MPI_ERR_COMM, "MPI_Comm_dup");
    if (!newcomm)
        return locus_mpi_err(c, MPI_ERR_ARG, "MPI_Comm_dup");
    int err = locus_comm_dup(c, &n);
    if (err)
        return locus_mpi_err(c, err, "MPI_Comm_dup");
    *newcomm = locus_comm_handle(n);
    return MPI_SUCCESS;
}

/* ---- split ------------------------------------------------------------------------ */

typedef struct {
    int color, key, rank;
} split_ent_t;

static int split_cmp(const void *a, const void *b)
{
    const split_ent_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

int locus_comm_split(locus_comm_t *comm, int color, int key, locus_comm_t **newcomm)
{
    if (comm->local)
        return locus_intercomm_split(comm, color, key, newcomm);
    int p = comm->coll.size;
    split_ent_t mine = { color, key, comm->coll.rank };
    split_ent_t *all = malloc((size_t)p * sizeof *all);
    int *world = malloc((size_t)p * sizeof *world);
    locus_dtype_t *ints = locus_dtype_basic(LOCUS_EL_INT);
    int err = all && world ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (!err)
        err = locus_coll_allgather(&mine, 3, ints, all, 3, ints, &comm->coll);
    uint32_t ctx;
    if (!err)
        err = locus_ctx_agree(comm, LOCUS_CTX_INTRA, &ctx);
    *newcomm = NULL;
    if (!err && color != MPI_UNDEFINED) {
        int n = 0;
        for (int r = 0; r < p; r++)
            if (all[r].color == color)
                all[n++] = all[r];
        qsort(all, (size_t)n, sizeof *all, split_cmp);
        int me = 0;
        for (int i = 0; i < n; i++) {
            world[i] = comm->world_of[all[i].rank];
            if (all[i].rank == comm->coll.rank)
                me = i;
        }
        err = locus_comm_new(n, me, world, ctx, comm, newcomm);
    }
    free(all);
    free(world);
    return err;
}

LOCUS_PMPI_WEAK(Comm_split)
int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Comm_split");
    locus_comm_t *c = locus_comm_of(comm), *n;
    if (!locus_comm_valid(c))
        return locus_mpi_err(c, MPI_ERR_COMM, "MPI_Comm_split");
    if (!newcomm || (color < 0 && color != MPI_UNDEFINED))
        return locus_mpi_err(c, MPI_ERR_ARG, "MPI_Comm_split");
    int err = locus_comm_split(c, color, key, &n);
    if (err)
        return locus_mpi_err(c, err, "MPI_Comm_split");
    *newcomm = locus_comm_handle(n);
    return MPI_SUCCESS;
}

/* ---- free ------------------------------------------------------------------------- */

LOCUS_PMPI_WEAK(Comm_free)
int PMPI_Comm_free(MPI_Comm *comm)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Comm_free");
    if (!comm)
        return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_Comm_free");
    locus_comm_t *c = locus_comm_of(*comm);
    if (!locus_comm_valid(c) || c->predefined)
        return locus_mpi_err(c, MPI_ERR_COMM, "MPI_Comm_free");
    /* Attributes go first (their delete callbacks see the communicator);
     * then the handle is invalid, while operations still pending on the
     * communicator hold their own references and finish on it. */
    int rc = locus_attr_clear(&c->attrs, ATTR_COMM, *comm);
    if (rc != MPI_SUCCESS)
        return locus_mpi_err(c, rc, "MPI_Comm_free");
    locus_comm_discard(c);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}
