/*
 * MPI_Comm_dup_with_info, MPI_Comm_idup(_with_info) and the info hints of
 * a communicator (MPI_Comm_set_info / MPI_Comm_get_info).
 *
 * MPI_Comm_idup agrees on context ids without blocking: the rounds of
 * comm.h (locus_ctx_rounds) as nonblocking allreduces polled by the
 * request. The rounds run on private views of the parent whose tags were
 * drawn when MPI_Comm_idup was called, every round on the same ones: later
 * collectives on the parent, started while the rounds go on, never meet
 * their messages (a pair's messages of one tag arrive in order, and every
 * member finishes a round before it starts the next).
 */
#include <stdlib.h>
#include <string.h>

#include "comm.h"

/* Tags drawn for the rounds on each view: more than one allreduce (an
 * intercommunicator's inter allreduce included) ever draws. */
#define IDUP_TAGS 16u

typedef struct {
    locus_comm_t *parent;        /* held by the request */
    locus_comm_t *out;           /* the user's new communicator (its ids come at the end) */
    MPI_Info hints;              /* with_info: a copy of the given hints (NULL: none) */
    int with_info;
    locus_attr_t *attrs;         /* copied from the parent when the call was made */
    locus_comm_t view, lview;    /* private views of the parent and its local group */
    unsigned view_seq, lview_seq;
    uint32_t vote[2], grp[2], rem[2]; /* [refuses, highest next id] */
    uint32_t cand;
    int round, phase;            /* phase 1: the intercommunicator's groups trade */
    locus_coll_sched_t *s;
} idup_t;

static void idup_free(void *state)
{
    idup_t *d = state;
    /* On failure the new communicator stays with ids that match nothing
     * (the user frees it). */
    if (d->s)
        locus_coll_sched_free(d->s);
    locus_coll_comm_release(&d->view.coll);
    locus_coll_comm_release(&d->lview.coll);
    locus_attr_clear(&d->attrs, ATTR_COMM, locus_comm_handle(d->parent));
    if (d->hints)
        PMPI_Info_free(&d->hints);
    free(d);
}

/* A view of c that draws tags from seq on: the collective layer's state is
 * its own (none of c's schedules, node communicators or segments). */
static void view_of(locus_comm_t *view, const locus_comm_t *c, unsigned seq)
{
    *view = *c;
    view->coll.state = NULL;
    view->coll.seq = seq;
}

static int round_start(idup_t *d)
{
    locus_dtype_t *u32 = locus_dtype_basic(LOCUS_EL_UINT32);
    locus_op_t *max = locus_op_predefined(LOCUS_OP_MAX);
    d->view.coll.seq = d->view_seq;
    d->lview.coll.seq = d->lview_seq;
    d->phase = 0;
    locus_comm_t *local = d->parent->local ? &d->lview : &d->view;
    return locus_coll_iallreduce(d->vote, d->grp, 2, u32, max, &local->coll, &d->s);
}

/* The new communicator as the user sees it from the call on: c's groups,
 * attributes, topology and hints, on context ids that match nothing until
 * the agreed ones replace them (only MPI_Comm_set_errhandler and such may
 * use it before the request completes). */
static int idup_prepare(idup_t *d)
{
    locus_comm_t *p = d->parent, *n;
    int err = locus_comm_dup_on(p, LOCUS_CTX_LIMIT, &n);
    if (err)
        return err;
    n->attrs = d->attrs;
    d->attrs = NULL;
    if (p->topo)
        err = locus_ptopo_dup(p->topo, &n->topo);
    if (!err)
        err = locus_comm_hints_set(n, d->with_info ? (d->hints ? d->hints : MPI_INFO_NULL)
                                                  : (p->hints ? p->hints : MPI_INFO_NULL));
    if (err)
        locus_comm_discard(n);
    else
        d->out = n;
    return err;
}

static int idup_poll(void *state)
{
    idup_t *d = state;
    int err = MPI_SUCCESS;
    if (!locus_coll_sched_poll(d->s, &err))
        return 0;
    locus_coll_sched_free(d->s);
    d->s = NULL;
    if (err)
        return -err;
    if (d->parent->local && d->phase == 0) {
        /* The groups' results meet (the remote group's lands in rem). */
        d->phase = 1;
        err = locus_coll_iinter_allreduce(d->grp, d->rem, 2, locus_dtype_basic(LOCUS_EL_UINT32),
                                          locus_op_predefined(LOCUS_OP_MAX), &d->view.coll,
                                          &d->lview.coll, &d->s);
        return err ? -err : 0;
    }
    if (d->parent->local) {
        for (int i = 0; i < 2; i++)
            if (d->rem[i] > d->grp[i])
                d->grp[i] = d->rem[i];
    }
    uint32_t n = d->parent->local ? LOCUS_CTX_INTER : LOCUS_CTX_INTRA;
    if (d->round > 0 && d->grp[0] == 0) {
        locus_comm_set_ctx(d->out, d->cand);
        return 1;
    }
    /* A new candidate: reserved if I never went past it. */
    d->cand = d->grp[1];
    if ((err = locus_ctx_vote(d->cand, n, d->vote)) != MPI_SUCCESS)
        return -err;
    d->round++;
    err = round_start(d);
    return err ? -err : 0;
}

/* Starts the duplication of c into the struct *newcomm will point to. */
static int idup_start(locus_comm_t *c, MPI_Info info, int with_info, MPI_Comm *newcomm,
                      MPI_Request *request)
{
    idup_t *d = calloc(1, sizeof *d);
    if (!d)
        return MPI_ERR_NO_MEM;
    d->parent = c;
    d->with_info = with_info;
    int err = with_info && info != MPI_INFO_NULL ? locus_info_dup_impl(info, &d->hints)
                                                 : MPI_SUCCESS;
    if (!err)
        err = locus_attr_copy(c->attrs, ATTR_COMM, locus_comm_handle(c), &d->attrs);
    if (!err)
        err = idup_prepare(d);
    if (err) {
        locus_attr_clear(&d->attrs, ATTR_COMM, locus_comm_handle(c));
        if (d->hints)
            PMPI_Info_free(&d->hints);
        free(d);
        return err;
    }
    /* The tags of every round, drawn now, in the order of the parent's
     * collectives. */
    d->view_seq = c->coll.seq;
    c->coll.seq += IDUP_TAGS;
    view_of(&d->view, c, d->view_seq);
    if (c->local) {
        d->lview_seq = c->local->coll.seq;
        c->local->coll.seq += IDUP_TAGS;
        view_of(&d->lview, c->local, d->lview_seq);
    }
    d->vote[0] = 1;
    d->vote[1] = locus_mpi.next_ctx;
    err = round_start(d);
    locus_req_t *r = err ? NULL : locus_req_gen_new(c, idup_poll, d, idup_free);
    if (!r) {
        locus_comm_discard(d->out);
        idup_free(d);
        return err ? err : MPI_ERR_NO_MEM;
    }
    *newcomm = locus_comm_handle(d->out);
    *request = locus_req_handle(r);
    return MPI_SUCCESS;
}

static int idup_call(MPI_Comm comm, MPI_Info info, int with_info, MPI_Comm *newcomm,
                     MPI_Request *request, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *c = locus_comm_of(comm);
    if (!locus_comm_valid(c))
        return locus_mpi_err(c, MPI_ERR_COMM, fn);
    if (!newcomm || !request)
        return locus_mpi_err(c, MPI_ERR_ARG, fn);
    int err = idup_start(c, info, with_info, newcomm, request);
    return err ? locus_mpi_err(c, err, fn) : MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Comm_idup)
int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    LOCUS_ENTRY_CS();
    return idup_call(comm, MPI_INFO_NULL, 0, newcomm, request, "MPI_Comm_idup");
}

LOCUS_PMPI_WEAK(Comm_idup_with_info)
int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
                             MPI_Request *request)
{
    LOCUS_ENTRY_CS();
    return idup_call(comm, info, 1, newcomm, request, "MPI_Comm_idup_with_info");
}

/* The entry points of the calls written as locus_<x>_impl below are
 * generated with their checks (MPI initialized, a live communicator,
 * somewhere to write); errors return to them, which raise them on it. */

int locus_comm_dup_with_info_impl(locus_comm_t *c, MPI_Info info, MPI_Comm *newcomm)
{
    locus_comm_t *n = NULL;
    int err = locus_comm_dup(c, &n);
    /* The given hints replace the parent's (MPI_INFO_NULL: none). */
    if (!err && (err = locus_comm_hints_set(n, info)) != MPI_SUCCESS)
        locus_comm_discard(n);
    if (!err)
        *newcomm = locus_comm_handle(n);
    return err;
}

/* ---- hints -------------------------------------------------------------------------- */

int locus_comm_set_info_impl(locus_comm_t *c, MPI_Info info)
{
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    if (!c->hints)
        return locus_comm_hints_set(c, info) == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_INFO;
    /* New values replace old ones; hints not named stay. */
    return locus_info_update(&c->hints, info);
}

int locus_comm_get_info_impl(locus_comm_t *c, MPI_Info *info_used)
{
    return c->hints ? locus_info_dup_impl(c->hints, info_used)
                    : locus_info_create_impl(info_used);
}
