/*
 * Communicators: construction (with node-locality tables), lifetime
 * (reference counts), context-id agreement, dup/split/split_type/create/
 * free/compare, names and attributes.
 *
 * Context ids come in pairs (even: point-to-point, odd: collectives) and
 * are never reused within a process: each process keeps the lowest id it
 * may still use, and a new communicator takes the highest such id among
 * the parent's members, which all then move past it. So a message still in
 * flight on a freed communicator can never match a receive on a later one.
 * Disjoint children of one split may share a pair since they never
 * exchange messages.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"

locus_comm_t locus_comm_world, locus_comm_self;

#define CTX_LIMIT 0xfffffff0u

/* Node layout of the members, in ranks of the communicator. */
static int comm_nodes(locus_coll_comm_t *cc, const int *world_of)
{
    int size = cc->size, rank = cc->rank;
    int nn = locus_mpi.boot.nnodes > 0 ? locus_mpi.boot.nnodes : 1;
    int *wnode_to_comm = calloc((size_t)nn, sizeof *wnode_to_comm); /* node + 1 */
    cc->node_of = malloc((size_t)size * sizeof *cc->node_of);
    cc->leaders = malloc((size_t)(size < nn ? size : nn) * sizeof *cc->leaders);
    if (!wnode_to_comm || !cc->node_of || !cc->leaders) {
        free(wnode_to_comm);
        return MPI_ERR_NO_MEM;
    }
    for (int r = 0; r < size; r++) {
        int wn = locus_mpi.boot.node_of ? locus_mpi.boot.node_of[world_of[r]] : 0;
        if (wn < 0 || wn >= nn)
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

/* Frees what locus_comm_init allocated. */
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
    c->magic = 0;
}

int locus_comm_init(locus_comm_t *c, int size, int rank, const int *world_of, uint32_t ctx)
{
    memset(c, 0, sizeof *c);
    if (size < 1 || rank < 0 || rank >= size)
        return MPI_ERR_INTERN;
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
    int err = c->world_of ? comm_nodes(&c->coll, world_of) : MPI_ERR_NO_MEM;
    if (err != MPI_SUCCESS) {
        comm_teardown(c);
        return err;
    }
    memcpy(c->world_of, world_of, (size_t)size * sizeof *world_of);
    c->magic = LOCUS_COMM_MAGIC;
    return MPI_SUCCESS;
}

void locus_comm_retain(locus_comm_t *c)
{
    c->refs++;
}

void locus_comm_release(locus_comm_t *c)
{
    if (--c->refs > 0)
        return;
    comm_teardown(c);
    /* The struct is kept (its magic cleared) and reused, so a stale handle
     * is caught as MPI_ERR_COMM instead of touching freed memory. The
     * predefined ones are static. */
    if (!c->predefined) {
        c->pool_next = locus_mpi.comm_pool;
        locus_mpi.comm_pool = c;
    }
}

/* Agrees with the members of parent on a new context pair: the highest id
 * any of them may still use. Collective over parent. */
static int ctx_agree(locus_comm_t *parent, uint32_t *ctx)
{
    uint32_t mine = locus_mpi.next_ctx, all = 0;
    int err = locus_coll_allreduce(&mine, &all, 1, locus_dtype_basic(LOCUS_EL_UINT32),
                                   locus_op_predefined(LOCUS_OP_MAX), &parent->coll);
    if (err != MPI_SUCCESS)
        return err;
    if (all >= CTX_LIMIT) {
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail,
                 "context ids exhausted after %u communicators", all / 2);
        return MPI_ERR_INTERN;
    }
    *ctx = all;
    locus_mpi.next_ctx = all + 2;
    return MPI_SUCCESS;
}

/* A communicator struct from the pool (or new), set up for the members. */
static int comm_new(int size, int rank, const int *world_of, uint32_t ctx,
                    locus_comm_t *parent, locus_comm_t **out)
{
    locus_comm_t *c = locus_mpi.comm_pool;
    if (c)
        locus_mpi.comm_pool = c->pool_next;
    else if (!(c = malloc(sizeof *c)))
        return MPI_ERR_NO_MEM;
    int err = locus_comm_init(c, size, rank, world_of, ctx);
    if (err) {
        c->pool_next = locus_mpi.comm_pool;
        locus_mpi.comm_pool = c;
        return err;
    }
    locus_errh_set(c, parent->errh);
    *out = c;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Comm_rank)
int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    LOCUS_CHECK_INIT("MPI_Comm_rank");
    locus_comm_t *c = locus_comm_of(comm);
    if (!locus_comm_valid(c))
        return locus_mpi_err(c, MPI_ERR_COMM, "MPI_Comm_rank");
    if (!rank)
        return locus_mpi_err(c, MPI_ERR_ARG, "MPI_Comm_rank");
    *rank = c->coll.rank;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Comm_size)
int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    LOCUS_CHECK_INIT("MPI_Comm_size");
    locus_comm_t *c = locus_comm_of(comm);
    if (!locus_comm_valid(c))
        return locus_mpi_err(c, MPI_ERR_COMM, "MPI_Comm_size");
    if (!size)
        return locus_mpi_err(c, MPI_ERR_ARG, "MPI_Comm_size");
    *size = c->coll.size;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Comm_dup)
int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
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

int locus_comm_dup(locus_comm_t *c, locus_comm_t **out)
{
    uint32_t ctx;
    locus_comm_t *n = NULL;
    int err = ctx_agree(c, &ctx);
    if (!err)
        err = comm_new(c->coll.size, c->coll.rank, c->world_of, ctx, c, &n);
    if (!err)
        err = locus_attr_copy(c->attrs, ATTR_COMM, locus_comm_handle(c), &n->attrs);
    if (err && n) {
        n->magic = 0;
        locus_comm_release(n);
        n = NULL;
    }
    *out = n;
    return err;
}

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
        err = ctx_agree(comm, &ctx);
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
        err = comm_new(n, me, world, ctx, comm, newcomm);
    }
    free(all);
    free(world);
    return err;
}

LOCUS_PMPI_WEAK(Comm_split)
int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
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

LOCUS_PMPI_WEAK(Comm_split_type)
int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                         MPI_Comm *newcomm)
{
    (void)info;
    LOCUS_CHECK_INIT("MPI_Comm_split_type");
    locus_comm_t *c = locus_comm_of(comm), *n;
    if (!locus_comm_valid(c))
        return locus_mpi_err(c, MPI_ERR_COMM, "MPI_Comm_split_type");
    if (!newcomm || (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED))
        return locus_mpi_err(c, MPI_ERR_ARG, "MPI_Comm_split_type");
    int color = split_type == MPI_UNDEFINED ? MPI_UNDEFINED : c->coll.node_index;
    int err = locus_comm_split(c, color, key, &n);
    if (err)
        return locus_mpi_err(c, err, "MPI_Comm_split_type");
    *newcomm = locus_comm_handle(n);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Comm_create)
int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    LOCUS_CHECK_INIT("MPI_Comm_create");
    locus_comm_t *c = locus_comm_of(comm), *n = NULL;
    locus_group_t *g = locus_group_of(group);
    if (!locus_comm_valid(c))
        return locus_mpi_err(c, MPI_ERR_COMM, "MPI_Comm_create");
    if (!g)
        return locus_mpi_err(c, MPI_ERR_GROUP, "MPI_Comm_create");
    if (!newcomm)
        return locus_mpi_err(c, MPI_ERR_ARG, "MPI_Comm_create");
    /* Every member of the group must belong to comm. */
    for (int i = 0; i < g->size; i++) {
        int found = 0;
        for (int r = 0; r < c->coll.size && !found; r++)
            found = c->world_of[r] == g->world_of[i];
        if (!found)
            return locus_mpi_err(c, MPI_ERR_GROUP, "MPI_Comm_create");
    }
    uint32_t ctx;
    int err = ctx_agree(c, &ctx);
    if (!err && g->rank != MPI_UNDEFINED)
        err = comm_new(g->size, g->rank, g->world_of, ctx, c, &n);
    if (err)
        return locus_mpi_err(c, err, "MPI_Comm_create");
    *newcomm = locus_comm_handle(n);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Comm_free)
int PMPI_Comm_free(MPI_Comm *comm)
{
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
    c->magic = 0;
    locus_comm_release(c);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int locus_members_compare(int n1, const int *w1, int n2, const int *w2)
{
    if (n1 != n2)
        return MPI_UNEQUAL;
    if (memcmp(w1, w2, (size_t)n1 * sizeof *w1) == 0)
        return MPI_IDENT;
    int *a = malloc((size_t)n1 * 2 * sizeof *a);
    if (!a)
        return MPI_UNEQUAL;
    memcpy(a, w1, (size_t)n1 * sizeof *a);
    memcpy(a + n1, w2, (size_t)n1 * sizeof *a);
    qsort(a, (size_t)n1, sizeof *a, int_cmp);
    qsort(a + n1, (size_t)n1, sizeof *a, int_cmp);
    int same = memcmp(a, a + n1, (size_t)n1 * sizeof *a) == 0;
    free(a);
    return same ? MPI_SIMILAR : MPI_UNEQUAL;
}

LOCUS_PMPI_WEAK(Comm_compare)
int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    LOCUS_CHECK_INIT("MPI_Comm_compare");
    locus_comm_t *c1 = locus_comm_of(comm1), *c2 = locus_comm_of(comm2);
    if (!locus_comm_valid(c1) || !locus_comm_valid(c2))
        return locus_mpi_err(locus_comm_valid(c1) ? c1 : c2, MPI_ERR_COMM, "MPI_Comm_compare");
    if (!result)
        return locus_mpi_err(c1, MPI_ERR_ARG, "MPI_Comm_compare");
    if (c1 == c2) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    int r = locus_members_compare(c1->coll.size, c1->world_of, c2->coll.size, c2->world_of);
    *result = r == MPI_IDENT ? MPI_CONGRUENT : r;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Comm_set_name)
int PMPI_Comm_set_name(MPI_Comm comm, const char *name)
{
    LOCUS_CHECK_INIT("MPI_Comm_set_name");
    locus_comm_t *c = locus_comm_of(comm);
    if (!locus_comm_valid(c))
        return locus_mpi_err(c, MPI_ERR_COMM, "MPI_Comm_set_name");
    if (!name)
        return locus_mpi_err(c, MPI_ERR_ARG, "MPI_Comm_set_name");
    strncpy(c->name, name, MPI_MAX_OBJECT_NAME - 1);
    c->name[MPI_MAX_OBJECT_NAME - 1] = '\0';
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Comm_get_name)
int PMPI_Comm_get_name(MPI_Comm comm, char *name, int *resultlen)
{
    LOCUS_CHECK_INIT("MPI_Comm_get_name");
    locus_comm_t *c = locus_comm_of(comm);
    if (!locus_comm_valid(c))
        return locus_mpi_err(c, MPI_ERR_COMM, "MPI_Comm_get_name");
    if (!name || !resultlen)
        return locus_mpi_err(c, MPI_ERR_ARG, "MPI_Comm_get_name");
    strcpy(name, c->name);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Comm_get_attr)
int PMPI_Comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    /* Predefined attributes are returned as pointers to ints that live as
     * long as the library. */
    static const int tag_ub = LOCUS_TAG_UB, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE;
    static const int wtime_global = 0;
    static int lastused;
    LOCUS_CHECK_INIT("MPI_Comm_get_attr");
    locus_comm_t *c = locus_comm_of(comm);
    if (!locus_comm_valid(c))
        return locus_mpi_err(c, MPI_ERR_COMM, "MPI_Comm_get_attr");
    if (!attribute_val || !flag)
        return locus_mpi_err(c, MPI_ERR_ARG, "MPI_Comm_get_attr");
    locus_mpi.attr_universe = locus_mpi.boot.universe_size ? locus_mpi.boot.universe_size
                                                           : locus_mpi.boot.size;
    locus_mpi.attr_appnum = locus_mpi.boot.appnum;
    lastused = locus_err_lastused();
    const int *v = NULL;
    switch (keyval) {
    case MPI_TAG_UB: v = &tag_ub; break;
    case MPI_HOST: v = &host; break;
    case MPI_IO: v = &io; break;
    case MPI_WTIME_IS_GLOBAL: v = &wtime_global; break;
    case MPI_UNIVERSE_SIZE: v = &locus_mpi.attr_universe; break;
    case MPI_APPNUM: v = &locus_mpi.attr_appnum; break;
    case MPI_LASTUSEDCODE: v = &lastused; break;
    default: {
        int rc = locus_attr_get(c->attrs, ATTR_COMM, keyval, (void **)attribute_val, flag);
        return rc ? locus_mpi_err(c, rc, "MPI_Comm_get_attr") : MPI_SUCCESS;
    }
    }
    *(const int **)attribute_val = v; /* MPI hands out int*; never written through */
    *flag = 1;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Attr_get)
int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    return PMPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}
