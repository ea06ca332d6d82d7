/*
 * rma_sync.c — synchronization of one-sided communication: fence,
 * post/start/complete/wait/test (PSCW), lock/unlock (shared, exclusive,
 * all), flush, flush_local, sync.
 *
 * Operations in memory (DIRECT, CMA) are complete when their call
 * returns, so for them an epoch's end is a memory fence and, for passive
 * target, the release of the lock word. Operations sent as messages are
 * complete when the target answers a later request of the same origin
 * (unlock, flush): it serves each origin's requests in order.
 */
#include <stdatomic.h>

#include "rma.h"

int rma_wait_step(void)
{
    locus_core_t *c = locus_core();
    int n = locus_core_progress(c);
    if (n < 0)
        return MPI_ERR_OTHER;
    if (n == 0)
        locus_core_idle(c);
    else
        c->idle = 0;
    return MPI_SUCCESS;
}

int rma_poke(locus_win_t *w)
{
    if (w->poke && locus_core_progress(locus_core()) < 0)
        return MPI_ERR_OTHER;
    return MPI_SUCCESS;
}

/* An epoch call's outcome: err, or what a target refused in the epoch. */
static int finish(locus_win_t *w, int err)
{
    if (err == MPI_SUCCESS && w->err_deferred) {
        err = w->err_deferred;   /* a target refused an operation of this epoch */
        w->err_deferred = MPI_SUCCESS;
    }
    return err;
}

/* Remote completion of everything sent to target t (in-memory operations
 * are complete already: a fence orders them). */
static int complete_target(locus_win_t *w, int t)
{
    int err = MPI_SUCCESS;
    if (w->peers[t].msg_ops || w->peers[t].npend)
        err = rma_msg_flush(w, t);
    atomic_thread_fence(memory_order_seq_cst);
    return err;
}

/* An active-target or lock epoch may begin: no fence epoch with operations
 * is open (one without is simply left, as MPICH does). */
static int begin_epoch(locus_win_t *w)
{
    if (w->fence == RMA_FENCE_ACTIVE)
        return MPI_ERR_RMA_SYNC;
    w->fence = RMA_FENCE_NONE;
    return MPI_SUCCESS;
}

/* ---- fence ---- */

int locus_win_fence_impl(int assert, locus_win_t *w)
{
    int err = rma_poke(w);
    if (err != MPI_SUCCESS)
        return err;
    if (assert & ~(MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED))
        return MPI_ERR_ASSERT;
    if (w->in_start || w->in_post || w->nlocked || w->lock_all)
        return MPI_ERR_RMA_SYNC;
    for (int t = 0; t < w->nranks && err == MPI_SUCCESS; t++)
        err = complete_target(w, t);
    /* After the barrier every origin's operations on my memory are done,
     * and my own stores are visible to theirs. */
    if (err == MPI_SUCCESS)
        err = locus_coll_barrier(&w->comm->coll);
    atomic_thread_fence(memory_order_seq_cst);
    w->fence = assert & MPI_MODE_NOSUCCEED ? RMA_FENCE_NONE : RMA_FENCE_OPEN;
    return finish(w, err);
}

/* ---- post / start / complete / wait ---- */

/* Marks the group's members as in the start (or post) group;
 * MPI_ERR_GROUP when one is not in the window. */
static int group_mark(locus_win_t *w, MPI_Group gh, int start)
{
    locus_group_t *g = locus_group_of(gh);
    if (!g)
        return MPI_ERR_GROUP;
    for (int i = 0; i < g->size; i++) {
        int wr = g->world_of[i];
        if (wr < 0 || wr >= w->nworld || w->rank_of_world[wr] < 0)
            return MPI_ERR_GROUP;
    }
    for (int i = 0; i < g->size; i++) {
        rma_peer_t *p = &w->peers[w->rank_of_world[g->world_of[i]]];
        if (start)
            p->in_start = 1;
        else
            p->in_post = 1;
    }
    return MPI_SUCCESS;
}

int locus_win_post_impl(MPI_Group group, int assert, locus_win_t *w)
{
    int err = rma_poke(w);
    if (err != MPI_SUCCESS)
        return err;
    if (assert & ~(MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT))
        return MPI_ERR_ASSERT;
    if (w->in_post || (err = begin_epoch(w)) != MPI_SUCCESS)
        return MPI_ERR_RMA_SYNC;
    if ((err = group_mark(w, group, 0)) != MPI_SUCCESS)
        return err;
    w->in_post = 1;
    /* My stores before the post are visible to the origins' accesses. */
    atomic_thread_fence(memory_order_seq_cst);
    for (int r = 0; r < w->nranks && err == MPI_SUCCESS; r++)
        if (w->peers[r].in_post && !(assert & MPI_MODE_NOCHECK))
            err = rma_msg_notify(w, r, RMA_CTL_POST);
    return finish(w, err);
}

int locus_win_start_impl(MPI_Group group, int assert, locus_win_t *w)
{
    int err = rma_poke(w);
    if (err != MPI_SUCCESS)
        return err;
    if (assert & ~MPI_MODE_NOCHECK)
        return MPI_ERR_ASSERT;
    if (w->in_start || w->nlocked || w->lock_all || begin_epoch(w) != MPI_SUCCESS)
        return MPI_ERR_RMA_SYNC;
    if ((err = group_mark(w, group, 1)) != MPI_SUCCESS)
        return err;
    w->in_start = 1;
    /* Access begins once every target has posted (MPI allows start to
     * wait for that). */
    for (int r = 0; r < w->nranks && err == MPI_SUCCESS; r++) {
        rma_peer_t *p = &w->peers[r];
        if (!p->in_start || (assert & MPI_MODE_NOCHECK))
            continue;
        while (p->posted == 0 && err == MPI_SUCCESS)
            err = rma_wait_step();
        if (err == MPI_SUCCESS)
            p->posted--;
    }
    atomic_thread_fence(memory_order_seq_cst);
    return finish(w, err);
}

int locus_win_complete_impl(locus_win_t *w)
{
    int err = rma_poke(w);
    if (err != MPI_SUCCESS)
        return err;
    if (!w->in_start)
        return MPI_ERR_RMA_SYNC;
    /* Gets finished here; puts reach the target before the notice (it
     * serves an origin's messages in order). */
    for (int r = 0; r < w->nranks && err == MPI_SUCCESS; r++)
        if (w->peers[r].in_start && w->peers[r].npend)
            err = rma_msg_wait_replies(w, r);
    atomic_thread_fence(memory_order_seq_cst);
    for (int r = 0; r < w->nranks; r++) {
        rma_peer_t *p = &w->peers[r];
        if (!p->in_start)
            continue;
        if (err == MPI_SUCCESS)
            err = rma_msg_notify(w, r, RMA_CTL_COMPLETE);
        p->in_start = 0;
        p->msg_ops = 0;
    }
    w->in_start = 0;
    return finish(w, err);
}

/* Ends the exposure epoch when every origin has completed: 1, else 0. */
static int post_done(locus_win_t *w)
{
    for (int r = 0; r < w->nranks; r++)
        if (w->peers[r].in_post && w->peers[r].completed == 0)
            return 0;
    for (int r = 0; r < w->nranks; r++) {
        if (w->peers[r].in_post) {
            w->peers[r].completed--;
            w->peers[r].in_post = 0;
        }
    }
    w->in_post = 0;
    atomic_thread_fence(memory_order_seq_cst);
    return 1;
}

int locus_win_wait_impl(locus_win_t *w)
{
    int err = rma_poke(w);
    if (err != MPI_SUCCESS)
        return err;
    if (!w->in_post)
        return MPI_ERR_RMA_SYNC;
    while (!post_done(w) && err == MPI_SUCCESS)
        err = rma_wait_step();
    return finish(w, err);
}

int locus_win_test_impl(locus_win_t *w, int *flag)
{
    int err = rma_poke(w);
    if (err != MPI_SUCCESS)
        return err;
    if (!w->in_post)
        return MPI_ERR_RMA_SYNC;
    if (locus_core_progress(locus_core()) < 0)
        return MPI_ERR_OTHER;
    *flag = post_done(w);
    return finish(w, MPI_SUCCESS);
}

/* ---- passive target ---- */

static int lock_take(locus_win_t *w, int t, int type)
{
    rma_peer_t *p = &w->peers[t];
    return p->slot ? rma_lock_take(p->slot, type) : rma_msg_lock(w, t, type);
}

/* Completes what was sent to t and gives its lock back. */
static int lock_give(locus_win_t *w, int t, int type, int nocheck)
{
    rma_peer_t *p = &w->peers[t];
    if (nocheck || p->slot) {
        int err = complete_target(w, t);
        if (!nocheck)
            rma_lock_release(p->slot, type);
        return err;
    }
    return rma_msg_unlock(w, t, type);
}

static int lock_check(locus_win_t *w, int type, int rank, int assert)
{
    if (type != MPI_LOCK_SHARED && type != MPI_LOCK_EXCLUSIVE)
        return MPI_ERR_LOCKTYPE;
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w->nranks))
        return MPI_ERR_RANK;
    if (assert & ~MPI_MODE_NOCHECK)
        return MPI_ERR_ASSERT;
    return MPI_SUCCESS;
}

int locus_win_lock_impl(int type, int rank, int assert, locus_win_t *w)
{
    int err = rma_poke(w);
    if (err != MPI_SUCCESS)
        return err;
    if ((err = lock_check(w, type, rank, assert)) != MPI_SUCCESS)
        return err;
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    rma_peer_t *p = &w->peers[rank];
    if (p->lock || w->lock_all || w->in_start || begin_epoch(w) != MPI_SUCCESS)
        return MPI_ERR_RMA_SYNC;
    if (!(assert & MPI_MODE_NOCHECK) && (err = lock_take(w, rank, type)) != MPI_SUCCESS)
        return err;
    p->lock = type;
    p->lock_nocheck = (assert & MPI_MODE_NOCHECK) != 0;
    w->nlocked++;
    return MPI_SUCCESS;
}

int locus_win_unlock_impl(int rank, locus_win_t *w)
{
    int err = rma_poke(w);
    if (err != MPI_SUCCESS)
        return err;
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (rank < 0 || rank >= w->nranks)
        return MPI_ERR_RANK;
    rma_peer_t *p = &w->peers[rank];
    if (!p->lock)
        return MPI_ERR_RMA_SYNC;
    err = lock_give(w, rank, p->lock, p->lock_nocheck);
    p->lock = 0;
    w->nlocked--;
    return finish(w, err);
}

int locus_win_lock_all_impl(int assert, locus_win_t *w)
{
    int err = rma_poke(w);
    if (err != MPI_SUCCESS)
        return err;
    if (assert & ~MPI_MODE_NOCHECK)
        return MPI_ERR_ASSERT;
    if (w->lock_all || w->nlocked || w->in_start || begin_epoch(w) != MPI_SUCCESS)
        return MPI_ERR_RMA_SYNC;
    int nocheck = (assert & MPI_MODE_NOCHECK) != 0, t = 0;
    for (; t < w->nranks && !nocheck && err == MPI_SUCCESS; t++)
        err = lock_take(w, t, MPI_LOCK_SHARED);
    if (err != MPI_SUCCESS) {
        for (int u = 0; u < t - 1; u++)
            lock_give(w, u, MPI_LOCK_SHARED, 0);
        return err;
    }
    w->lock_all = 1;
    w->lock_all_nocheck = nocheck;
    return MPI_SUCCESS;
}

int locus_win_unlock_all_impl(locus_win_t *w)
{
    int err = rma_poke(w);
    if (err != MPI_SUCCESS)
        return err;
    if (!w->lock_all)
        return MPI_ERR_RMA_SYNC;
    for (int t = 0; t < w->nranks; t++) {
        int e = lock_give(w, t, MPI_LOCK_SHARED, w->lock_all_nocheck);
        if (err == MPI_SUCCESS)
            err = e;
    }
    w->lock_all = 0;
    return finish(w, err);
}

/* flush and flush_local on one target or on all (all = 1). */
static int flush(locus_win_t *w, int rank, int all, int local)
{
    int err = rma_poke(w);
    if (err != MPI_SUCCESS)
        return err;
    if (!all && rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (!all && (rank < 0 || rank >= w->nranks))
        return MPI_ERR_RANK;
    if (!w->lock_all && (all ? w->nlocked == 0 : !w->peers[rank].lock))
        return MPI_ERR_RMA_SYNC;
    int lo = all ? 0 : rank, hi = all ? w->nranks : rank + 1;
    for (int t = lo; t < hi && err == MPI_SUCCESS; t++) {
        if (!w->lock_all && !w->peers[t].lock)
            continue;
        /* Locally complete: the replies are in (puts left with a copy). */
        err = local ? rma_msg_wait_replies(w, t) : complete_target(w, t);
    }
    return finish(w, err);
}

/* MPI_Win_flush, and MPI_Win_flush_local with local set. */
int locus_win_flush_impl(int local, int rank, locus_win_t *w)
{
    return flush(w, rank, 0, local);
}

/* MPI_Win_flush_all, and MPI_Win_flush_local_all with local set. */
int locus_win_flush_all_impl(int local, locus_win_t *w)
{
    return flush(w, 0, 1, local);
}

int locus_win_sync_impl(locus_win_t *w)
{
    int err = rma_poke(w);
    if (err != MPI_SUCCESS)
        return err;
    /* The unified model: public and private copies are one memory; only
     * the order of this process's loads and stores matters. */
    atomic_thread_fence(memory_order_seq_cst);
    return MPI_SUCCESS;
}
