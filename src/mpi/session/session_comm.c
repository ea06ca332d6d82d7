/*
 * session_comm.c — communicators made from groups alone (MPI-4):
 * MPI_Comm_create_from_group, collective over the group's members, and
 * MPI_Intercomm_create_from_groups, collective over both groups.
 *
 * Without a parent communicator the members agree on context ids over a
 * context of their own: CTX_FROM_GROUP, above every id comm.c hands out.
 * Its messages are addressed by world rank (source and destination), so
 * two creations over different groups can never take each other's
 * messages; one process's creations follow each other in program order,
 * and messages between two processes do not overtake, so successive
 * creations over overlapping groups pair up too. The agreement is a
 * binomial reduction to the first member and a broadcast back: the
 * highest context id any member may still use (comm.h's rule), and
 * fingerprints of the string tag and the member list, whose mismatch is
 * reported as MPI_ERR_ARG on every member instead of a hang later.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "session.h"

#define CTX_FROM_GROUP (LOCUS_CTX_LIMIT + 4u)
#define FROM_GROUP_TAG 0

typedef struct {
    uint32_t ctx;              /* highest next_ctx so far */
    uint32_t tag_hash, members_hash;
    uint32_t mismatch;
} agree_t;

static uint32_t fnv1a(const void *p, size_t n, uint32_t h)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 16777619u;
    return h;
}

/* One agreement message to or from world rank `world` (blocking). */
static int agree_xfer(agree_t *a, int world, int send)
{
    locus_req_t *r = locus_core_req_get(locus_core());
    if (!r)
        return MPI_ERR_NO_MEM;
    locus_dtype_t *u32 = locus_dtype_basic(LOCUS_EL_UINT32);
    if (send) {
        int err = locus_p2p_isend(a, 4, u32, world, FROM_GROUP_TAG, &locus_comm_world,
                                  CTX_FROM_GROUP, 0, r);
        if (err != MPI_SUCCESS) {
            locus_core_req_put(locus_core(), r);
            return err;
        }
    } else {
        locus_p2p_irecv(a, 4, u32, world, FROM_GROUP_TAG, &locus_comm_world, CTX_FROM_GROUP, r);
    }
    return locus_p2p_finish(r, NULL);
}

static unsigned pow2_at_least(int n)
{
    unsigned p = 1;
    while (p < (unsigned)n)
        p <<= 1;
    return p;
}

/* Collective over the members world[n] (I am world[me]): the first of
 * nids agreed context ids into *ctx. */
static int from_group_agree(const int *world, int n, int me, const char *tag, uint32_t nids,
                            uint32_t *ctx)
{
    int err = MPI_SUCCESS;
    agree_t a = {locus_mpi.next_ctx, fnv1a(tag, strlen(tag), 2166136261u),
                 fnv1a(world, (size_t)n * sizeof *world, 2166136261u), 0};
    /* Up the binomial tree rooted at the first member... */
    for (unsigned mask = 1; mask < (unsigned)n && !err; mask <<= 1) {
        if ((unsigned)me & mask) {
            err = agree_xfer(&a, world[me - (int)mask], 1);
            break;
        }
        if ((unsigned)me + mask < (unsigned)n) {
            agree_t c;
            err = agree_xfer(&c, world[me + (int)mask], 0);
            a.mismatch |= c.mismatch | (c.tag_hash != a.tag_hash) |
                          (c.members_hash != a.members_hash);
            if (c.ctx > a.ctx)
                a.ctx = c.ctx;
        }
    }
    /* ...and the answer down the same tree. */
    unsigned low = me ? ((unsigned)me & -(unsigned)me) : pow2_at_least(n);
    if (me && !err)
        err = agree_xfer(&a, world[me - (int)low], 0);
    for (unsigned m = low >> 1; m > 0 && !err; m >>= 1)
        if ((unsigned)me + m < (unsigned)n)
            err = agree_xfer(&a, world[me + (int)m], 1);
    if (err)
        return err;
    if (a.mismatch) {
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail,
                 "the members gave different string tags or groups");
        return MPI_ERR_ARG;
    }
    if ((err = locus_ctx_check(a.ctx, nids)) != MPI_SUCCESS)
        return err;
    locus_ctx_take(a.ctx, nids);
    *ctx = a.ctx;
    return MPI_SUCCESS;
}

/* The common checks: the handler to report to (*e, NULL: the default) or
 * the error. */
static int args_check(MPI_Errhandler errhandler, const char *stringtag, const void *out,
                      locus_errh_t **e)
{
    *e = errhandler == MPI_ERRHANDLER_NULL ? NULL : locus_errh_of(errhandler);
    if (!*e && errhandler != MPI_ERRHANDLER_NULL)
        return MPI_ERR_ARG;
    if (!out || !stringtag || strlen(stringtag) >= MPI_MAX_STRINGTAG_LEN)
        return MPI_ERR_ARG;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Comm_create_from_group)
int PMPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                                MPI_Errhandler errhandler, MPI_Comm *newcomm)
{
    LOCUS_ENTRY_CS();
    (void)info; /* no hints are used */
    static const char fn[] = "MPI_Comm_create_from_group";
    LOCUS_CHECK_INIT(fn);
    /* Errors go to the handler given (MPI-4 7.4.2), the default without
     * one; the new communicator gets it (MPI_ERRORS_ARE_FATAL without). */
    locus_errh_t *e;
    MPI_Comm none = MPI_COMM_NULL;
    int err = args_check(errhandler, stringtag, newcomm, &e);
    locus_group_t *g = locus_group_of(group);
    if (!err && !g)
        err = MPI_ERR_GROUP;
    if (!err && g->size > 0 && g->rank == MPI_UNDEFINED) {
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail, "the caller is not in the group");
        err = MPI_ERR_GROUP;
    }
    if (err)
        return locus_errh_raise(e, ERRH_ON_COMM, &none, err, fn);
    if (g->size == 0) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    uint32_t ctx;
    locus_comm_t *c = NULL;
    err = from_group_agree(g->world_of, g->size, g->rank, stringtag, LOCUS_CTX_INTRA, &ctx);
    if (!err)
        err = locus_comm_new(g->size, g->rank, g->world_of, ctx, NULL, &c);
    if (err)
        return locus_errh_raise(e, ERRH_ON_COMM, &none, err, fn);
    locus_errh_set(c, e ? e : &locus_errh_fatal);
    c->bsend_slot = g->bsend_slot;
    *newcomm = locus_comm_handle(c);
    return MPI_SUCCESS;
}

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Both groups' members in world-rank order (the same list on both sides)
 * into *out, my position in it into *me; MPI_ERR_GROUP when they overlap. */
static int groups_union(const locus_group_t *l, const locus_group_t *r, int **out, int *me)
{
    int n = l->size + r->size;
    int *u = malloc((size_t)n * sizeof *u);
    if (!u)
        return MPI_ERR_NO_MEM;
    memcpy(u, l->world_of, (size_t)l->size * sizeof *u);
    memcpy(u + l->size, r->world_of, (size_t)r->size * sizeof *u);
    qsort(u, (size_t)n, sizeof *u, int_cmp);
    for (int i = 0; i < n; i++) {
        if (i > 0 && u[i] == u[i - 1]) {
            free(u);
            snprintf(locus_mpi.detail, sizeof locus_mpi.detail, "the two groups overlap");
            return MPI_ERR_GROUP;
        }
        if (u[i] == l->world_of[l->rank])
            *me = i;
    }
    *out = u;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Intercomm_create_from_groups)
int PMPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader,
                                      MPI_Group remote_group, int remote_leader,
                                      const char *stringtag, MPI_Info info,
                                      MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    LOCUS_ENTRY_CS();
    (void)info;
    static const char fn[] = "MPI_Intercomm_create_from_groups";
    LOCUS_CHECK_INIT(fn);
    locus_errh_t *e;
    MPI_Comm none = MPI_COMM_NULL;
    int err = args_check(errhandler, stringtag, newintercomm, &e);
    locus_group_t *l = locus_group_of(local_group), *r = locus_group_of(remote_group);
    if (!err && (!l || !r || l->size == 0 || r->size == 0 || l->rank == MPI_UNDEFINED))
        err = MPI_ERR_GROUP;
    /* The leaders only have to exist: every member takes part in the
     * agreement, so no leader relays anything. */
    if (!err && (local_leader < 0 || local_leader >= l->size || remote_leader < 0 ||
                 remote_leader >= r->size))
        err = MPI_ERR_RANK;
    int *all = NULL, me = 0;
    if (!err)
        err = groups_union(l, r, &all, &me);
    uint32_t ctx;
    locus_comm_t *c = NULL;
    if (!err)
        err = from_group_agree(all, l->size + r->size, me, stringtag, LOCUS_CTX_INTER, &ctx);
    free(all);
    if (!err && !(err = locus_comm_alloc(&c)))
        err = locus_intercomm_setup(c, l->world_of, l->size, l->rank, r->world_of, r->size, ctx,
                                    NULL);
    if (err)
        return locus_errh_raise(e, ERRH_ON_COMM, &none, err, fn);
    locus_errh_set(c, e ? e : &locus_errh_fatal);
    *newintercomm = locus_comm_handle(c);
    return MPI_SUCCESS;
}
