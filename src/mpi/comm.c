/*
 * Communicators: construction (with node-locality tables), context-id
 * agreement, dup/split/split_type/create/free/compare and attributes.
 *
 * Context ids come in pairs (2i for point-to-point, 2i+1 for collectives).
 * A new communicator's pair is the lowest one free on every member of the
 * parent, found by an AND of the members' free masks; disjoint children of
 * one split may share a pair since they never exchange messages.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi_priv.h"

struct locus_comm locus_mpi_comm_world, locus_mpi_comm_self;

enum { TAG_MGMT_GATHER = LOCUS_TAG_RESERVED + 1, TAG_MGMT_BCAST };

int locus_comm_init(struct locus_comm *c, int size, int rank, const int *world_of,
                    uint32_t pair)
{
    memset(c, 0, sizeof *c);
    if (size < 1 || rank < 0 || rank >= size)
        return MPI_ERR_INTERN;
    c->size = size;
    c->rank = rank;
    c->ctx_p2p = 2 * pair;
    c->ctx_coll = 2 * pair + 1;
    c->errh = MPI_ERRORS_ARE_FATAL;
    c->node_comm = c->leader_comm = MPI_COMM_NULL;
    c->world_of = malloc((size_t)size * sizeof *c->world_of);
    c->node_of = malloc((size_t)size * sizeof *c->node_of);
    int nn = locus_mpi.boot.nnodes > 0 ? locus_mpi.boot.nnodes : 1;
    int *wnode_to_comm = calloc((size_t)nn, sizeof *wnode_to_comm); /* node + 1 */
    c->leaders = malloc((size_t)(size < nn ? size : nn) * sizeof *c->leaders);
    if (!c->world_of || !c->node_of || !wnode_to_comm || !c->leaders) {
        free(wnode_to_comm);
        locus_comm_release(c);
        return MPI_ERR_NO_MEM;
    }
    memcpy(c->world_of, world_of, (size_t)size * sizeof *world_of);
    for (int r = 0; r < size; r++) {
        int wn = locus_mpi.boot.node_of ? locus_mpi.boot.node_of[world_of[r]] : 0;
        if (wn < 0 || wn >= nn)
            wn = 0;
        if (wnode_to_comm[wn] == 0) {
            c->leaders[c->num_nodes++] = r;
            wnode_to_comm[wn] = c->num_nodes;
        }
        c->node_of[r] = wnode_to_comm[wn] - 1;
    }
    free(wnode_to_comm);
    c->node_index = c->node_of[rank];
    c->is_leader = c->leaders[c->node_index] == rank;
    for (int r = 0; r < size; r++)
        c->local_size += c->node_of[r] == c->node_index;
    c->local_ranks = malloc((size_t)c->local_size * sizeof *c->local_ranks);
    if (!c->local_ranks) {
        locus_comm_release(c);
        return MPI_ERR_NO_MEM;
    }
    int k = 0;
    for (int r = 0; r < size; r++) {
        if (c->node_of[r] == c->node_index) {
            if (r == rank)
                c->local_rank = k;
            c->local_ranks[k++] = r;
        }
    }
    c->magic = LOCUS_COMM_MAGIC;
    return MPI_SUCCESS;
}

void locus_comm_release(struct locus_comm *c)
{
    if (c->coll_data && c->coll_data_free)
        c->coll_data_free(c->coll_data);
    if (c->node_comm != MPI_COMM_NULL && c->node_comm)
        PMPI_Comm_free(&c->node_comm);
    if (c->leader_comm != MPI_COMM_NULL && c->leader_comm)
        PMPI_Comm_free(&c->leader_comm);
    if (c->ctx_p2p >= 4) {
        uint32_t pair = c->ctx_p2p / 2;
        locus_mpi.ctx_used[pair / 64] &= ~(1ull << (pair % 64));
    }
    free(c->world_of);
    free(c->node_of);
    free(c->leaders);
    free(c->local_ranks);
    c->world_of = c->node_of = c->leaders = c->local_ranks = NULL;
    c->coll_data = NULL;
    c->magic = 0;
}

/* Allgather of n bytes per member through rank 0, on the parent's
 * collective context (tags reserved for communicator management). */
static int mgmt_allgather(MPI_Comm comm, const void *mine, int n, void *all)
{
    char *a = all;
    int err = MPI_SUCCESS;
    if (comm->rank == 0) {
        memcpy(a, mine, (size_t)n);
        for (int r = 1; r < comm->size && !err; r++)
            err = locus_coll_recv(a + (size_t)r * n, n, MPI_BYTE, r, TAG_MGMT_GATHER, comm,
                                  NULL);
        for (int r = 1; r < comm->size && !err; r++)
            err = locus_coll_send(a, n * comm->size, MPI_BYTE, r, TAG_MGMT_BCAST, comm);
    } else {
        err = locus_coll_send(mine, n, MPI_BYTE, 0, TAG_MGMT_GATHER, comm);
        if (!err)
            err = locus_coll_recv(a, n * comm->size, MPI_BYTE, 0, TAG_MGMT_BCAST, comm, NULL);
    }
    return err;
}

/* Agrees on a context pair free on every member of parent; *pair. */
static int ctx_agree(MPI_Comm parent, uint32_t *pair)
{
    uint64_t *all = malloc((size_t)parent->size * sizeof locus_mpi.ctx_used);
    if (!all)
        return MPI_ERR_NO_MEM;
    int err = mgmt_allgather(parent, locus_mpi.ctx_used, (int)sizeof locus_mpi.ctx_used, all);
    if (err) {
        free(all);
        return err;
    }
    err = MPI_ERR_INTERN; /* every pair taken */
    for (int w = 0; w < LOCUS_CTX_WORDS && err; w++) {
        uint64_t used = 0;
        for (int r = 0; r < parent->size; r++)
            used |= all[(size_t)r * LOCUS_CTX_WORDS + w];
        if (~used) {
            int bit = __builtin_ctzll(~used);
            *pair = (uint32_t)(w * 64 + bit);
            locus_mpi.ctx_used[w] |= 1ull << bit;
            err = MPI_SUCCESS;
        }
    }
    free(all);
    return err;
}

/* Makes a communicator of the given members (world ranks) and pair; my
 * rank among them is `rank`. */
static int comm_new(int size, int rank, const int *world_of, uint32_t pair, MPI_Comm *out)
{
    /* Freed communicators are kept (magic cleared) and reused, so a stale
     * handle is caught as MPI_ERR_COMM instead of touching freed memory. */
    MPI_Comm c = locus_mpi.comm_pool;
    if (c)
        locus_mpi.comm_pool = c->coll_data;
    else if (!(c = malloc(sizeof *c)))
        return MPI_ERR_NO_MEM;
    int err = locus_comm_init(c, size, rank, world_of, pair);
    if (err) {
        c->coll_data = locus_mpi.comm_pool;
        locus_mpi.comm_pool = c;
        return err;
    }
    *out = c;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Comm_rank)
int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    LOCUS_CHECK_INIT("MPI_Comm_rank");
    if (!locus_comm_valid(comm))
        return locus_mpi_err(comm, MPI_ERR_COMM, "MPI_Comm_rank");
    if (!rank)
        return locus_mpi_err(comm, MPI_ERR_ARG, "MPI_Comm_rank");
    *rank = comm->rank;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Comm_size)
int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    LOCUS_CHECK_INIT("MPI_Comm_size");
    if (!locus_comm_valid(comm))
        return locus_mpi_err(comm, MPI_ERR_COMM, "MPI_Comm_size");
    if (!size)
        return locus_mpi_err(comm, MPI_ERR_ARG, "MPI_Comm_size");
    *size = comm->size;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Comm_dup)
int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    LOCUS_CHECK_INIT("MPI_Comm_dup");
    if (!locus_comm_valid(comm))
        return locus_mpi_err(comm, MPI_ERR_COMM, "MPI_Comm_dup");
    if (!newcomm)
        return locus_mpi_err(comm, MPI_ERR_ARG, "MPI_Comm_dup");
    uint32_t pair;
    int err = ctx_agree(comm, &pair);
    if (!err)
        err = comm_new(comm->size, comm->rank, comm->world_of, pair, newcomm);
    if (err)
        return locus_mpi_err(comm, err, "MPI_Comm_dup");
    (*newcomm)->errh = comm->errh;
    return MPI_SUCCESS;
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

static int comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    split_ent_t mine = { color, key, comm->rank };
    split_ent_t *all = malloc((size_t)comm->size * sizeof *all);
    int *world = malloc((size_t)comm->size * sizeof *world);
    if (!all || !world) {
        free(all);
        free(world);
        return MPI_ERR_NO_MEM;
    }
    uint32_t pair;
    int err = mgmt_allgather(comm, &mine, (int)sizeof mine, all);
    if (!err)
        err = ctx_agree(comm, &pair);
    *newcomm = MPI_COMM_NULL;
    if (!err && color != MPI_UNDEFINED) {
        int n = 0;
        for (int r = 0; r < comm->size; r++)
            if (all[r].color == color)
                all[n++] = all[r];
        qsort(all, (size_t)n, sizeof *all, split_cmp);
        int me = 0;
        for (int i = 0; i < n; i++) {
            world[i] = comm->world_of[all[i].rank];
            if (all[i].rank == comm->rank)
                me = i;
        }
        err = comm_new(n, me, world, pair, newcomm);
        if (!err)
            (*newcomm)->errh = comm->errh;
    } else if (!err) {
        /* Not a member: the pair stays free here. */
        locus_mpi.ctx_used[pair / 64] &= ~(1ull << (pair % 64));
    }
    free(all);
    free(world);
    return err;
}

LOCUS_PMPI_WEAK(Comm_split)
int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    LOCUS_CHECK_INIT("MPI_Comm_split");
    if (!locus_comm_valid(comm))
        return locus_mpi_err(comm, MPI_ERR_COMM, "MPI_Comm_split");
    if (!newcomm || (color < 0 && color != MPI_UNDEFINED))
        return locus_mpi_err(comm, MPI_ERR_ARG, "MPI_Comm_split");
    int err = comm_split(comm, color, key, newcomm);
    return err ? locus_mpi_err(comm, err, "MPI_Comm_split") : MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Comm_split_type)
int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                         MPI_Comm *newcomm)
{
    (void)info;
    LOCUS_CHECK_INIT("MPI_Comm_split_type");
    if (!locus_comm_valid(comm))
        return locus_mpi_err(comm, MPI_ERR_COMM, "MPI_Comm_split_type");
    if (!newcomm || (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED))
        return locus_mpi_err(comm, MPI_ERR_ARG, "MPI_Comm_split_type");
    int color = split_type == MPI_UNDEFINED ? MPI_UNDEFINED : comm->node_index;
    int err = comm_split(comm, color, key, newcomm);
    return err ? locus_mpi_err(comm, err, "MPI_Comm_split_type") : MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Comm_create)
int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    LOCUS_CHECK_INIT("MPI_Comm_create");
    if (!locus_comm_valid(comm))
        return locus_mpi_err(comm, MPI_ERR_COMM, "MPI_Comm_create");
    if (!group)
        return locus_mpi_err(comm, MPI_ERR_GROUP, "MPI_Comm_create");
    if (!newcomm)
        return locus_mpi_err(comm, MPI_ERR_ARG, "MPI_Comm_create");
    /* Every member of the group must belong to comm. */
    for (int i = 0; i < group->size; i++) {
        int found = 0;
        for (int r = 0; r < comm->size && !found; r++)
            found = comm->world_of[r] == group->world_of[i];
        if (!found)
            return locus_mpi_err(comm, MPI_ERR_GROUP, "MPI_Comm_create");
    }
    uint32_t pair;
    int err = ctx_agree(comm, &pair);
    *newcomm = MPI_COMM_NULL;
    if (!err && group->rank != MPI_UNDEFINED) {
        err = comm_new(group->size, group->rank, group->world_of, pair, newcomm);
        if (!err)
            (*newcomm)->errh = comm->errh;
    } else if (!err) {
        locus_mpi.ctx_used[pair / 64] &= ~(1ull << (pair % 64));
    }
    return err ? locus_mpi_err(comm, err, "MPI_Comm_create") : MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Comm_free)
int PMPI_Comm_free(MPI_Comm *comm)
{
    LOCUS_CHECK_INIT("MPI_Comm_free");
    if (!comm || !locus_comm_valid(*comm) || (*comm)->predefined)
        return locus_mpi_err(comm ? *comm : MPI_COMM_NULL, MPI_ERR_COMM, "MPI_Comm_free");
    locus_comm_release(*comm);
    (*comm)->coll_data = locus_mpi.comm_pool; /* pool link while freed */
    locus_mpi.comm_pool = *comm;
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* MPI_IDENT (same order) / MPI_SIMILAR (same set) / MPI_UNEQUAL of two
 * member lists. */
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
    if (!locus_comm_valid(comm1) || !locus_comm_valid(comm2))
        return locus_mpi_err(locus_comm_valid(comm1) ? comm1 : comm2, MPI_ERR_COMM,
                             "MPI_Comm_compare");
    if (!result)
        return locus_mpi_err(comm1, MPI_ERR_ARG, "MPI_Comm_compare");
    if (comm1 == comm2) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    int r = locus_members_compare(comm1->size, comm1->world_of, comm2->size, comm2->world_of);
    *result = r == MPI_IDENT ? MPI_CONGRUENT : r;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Comm_set_name)
int PMPI_Comm_set_name(MPI_Comm comm, const char *name)
{
    LOCUS_CHECK_INIT("MPI_Comm_set_name");
    if (!locus_comm_valid(comm))
        return locus_mpi_err(comm, MPI_ERR_COMM, "MPI_Comm_set_name");
    if (!name)
        return locus_mpi_err(comm, MPI_ERR_ARG, "MPI_Comm_set_name");
    strncpy(comm->name, name, MPI_MAX_OBJECT_NAME - 1);
    comm->name[MPI_MAX_OBJECT_NAME - 1] = '\0';
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Comm_get_name)
int PMPI_Comm_get_name(MPI_Comm comm, char *name, int *resultlen)
{
    LOCUS_CHECK_INIT("MPI_Comm_get_name");
    if (!locus_comm_valid(comm))
        return locus_mpi_err(comm, MPI_ERR_COMM, "MPI_Comm_get_name");
    if (!name || !resultlen)
        return locus_mpi_err(comm, MPI_ERR_ARG, "MPI_Comm_get_name");
    strcpy(name, comm->name);
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
    LOCUS_CHECK_INIT("MPI_Comm_get_attr");
    if (!locus_comm_valid(comm))
        return locus_mpi_err(comm, MPI_ERR_COMM, "MPI_Comm_get_attr");
    if (!attribute_val || !flag)
        return locus_mpi_err(comm, MPI_ERR_ARG, "MPI_Comm_get_attr");
    locus_mpi.attr_universe = locus_mpi.boot.universe_size ? locus_mpi.boot.universe_size
                                                           : locus_mpi.boot.size;
    locus_mpi.attr_appnum = locus_mpi.boot.appnum;
    const int *v = NULL;
    switch (keyval) {
    case MPI_TAG_UB: v = &tag_ub; break;
    case MPI_HOST: v = &host; break;
    case MPI_IO: v = &io; break;
    case MPI_WTIME_IS_GLOBAL: v = &wtime_global; break;
    case MPI_UNIVERSE_SIZE: v = &locus_mpi.attr_universe; break;
    case MPI_APPNUM: v = &locus_mpi.attr_appnum; break;
    default:
        return locus_mpi_err(comm, MPI_ERR_KEYVAL, "MPI_Comm_get_attr");
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

int locus_comm_hier(MPI_Comm comm, MPI_Comm *node_comm, MPI_Comm *leader_comm)
{
    if (comm->node_comm == MPI_COMM_NULL) {
        int err = comm_split(comm, comm->node_index, comm->rank, &comm->node_comm);
        if (!err)
            err = comm_split(comm, comm->is_leader ? 0 : MPI_UNDEFINED, comm->rank,
                             &comm->leader_comm);
        if (err)
            return err;
    }
    if (node_comm)
        *node_comm = comm->node_comm;
    if (leader_comm)
        *leader_comm = comm->leader_comm;
    return MPI_SUCCESS;
}
