/*
 * coll_inter.c — collectives on intercommunicators (locus_coll.h): the
 * local group's intracommunicator algorithms joined by its leader (local
 * rank 0) talking to the remote leader, or direct messages across the
 * groups where every process must hear from every remote one (the v and w
 * forms). One schedule per call, so blocking and nonblocking forms are one
 * piece of code, like every other collective.
 *
 * Every member of both groups draws one tag on the intercommunicator view
 * per call, whatever its part, so the groups stay in step.
 */
#include <stdint.h>
#include <stdlib.h>

#include "coll_priv.h"

/* Blocking: a schedule of its own (the intercommunicator view has no
 * reusable one), run to completion. */
static int inter_run(locus_coll_sched_t *s)
{
    int rc = s->oom ? LOCUS_ERR_NO_MEM : coll_sched_run(s);
    locus_coll_sched_free(s);
    return rc;
}

static int inter_start(locus_coll_sched_t *s, locus_coll_sched_t **out)
{
    if (s->oom) {
        locus_coll_sched_free(s);
        return LOCUS_ERR_NO_MEM;
    }
    *out = s;
    return LOCUS_SUCCESS;
}

#define INTER_UNPAREN(...) __VA_ARGS__
/* Defines locus_coll_inter_<name> and locus_coll_iinter_<name> from BUILD
 * (appending to s_) and HOLD (the nonblocking form's references). */
#define INTER_ENTRY(name, params, HOLD, BUILD)                                   \
    int locus_coll_inter_##name params                                           \
    {                                                                            \
        locus_coll_sched_t *s_ = coll_sched_new(1);                              \
        (void)local;                                                             \
        if (!s_)                                                                 \
            return LOCUS_ERR_NO_MEM;                                             \
        BUILD;                                                                   \
        return inter_run(s_);                                                    \
    }                                                                            \
    int locus_coll_iinter_##name(INTER_UNPAREN params, locus_coll_sched_t **out_) \
    {                                                                            \
        locus_coll_sched_t *s_ = coll_sched_new(0);                              \
        (void)local;                                                             \
        if (!s_)                                                                 \
            return LOCUS_ERR_NO_MEM;                                             \
        HOLD;                                                                    \
        BUILD;                                                                   \
        return inter_start(s_, out_);                                            \
    }

static locus_dtype_t *byte_type(void)
{
    return locus_dtype_basic(LOCUS_EL_BYTE);
}

/* ---- barrier ---- */

/* Local barrier (my group has arrived), leaders trade tokens (so has the
 * other one), local barrier again (nobody leaves before its leader heard). */
static void build_barrier(locus_coll_sched_t *s, locus_coll_comm_t *inter,
                          locus_coll_comm_t *local)
{
    int tag = coll_tag(inter);
    coll_build_barrier(s, local);
    coll_fence(s);
    if (local->rank == 0)
        coll_sendrecv(s, inter, NULL, 0, byte_type(), 0, NULL, 0, byte_type(), 0, tag);
    coll_build_barrier(s, local);
    coll_fence(s);
}

INTER_ENTRY(barrier, (locus_coll_comm_t *inter, locus_coll_comm_t *local), (void)0,
            build_barrier(s_, inter, local))

/* ---- bcast, reduce ---- */

static void build_bcast(locus_coll_sched_t *s, void *buf, size_t count, locus_dtype_t *dt,
                        int root, locus_coll_comm_t *inter, locus_coll_comm_t *local)
{
    int tag = coll_tag(inter);
    if (root == LOCUS_COLL_NO_ROOT)
        return;
    if (root == LOCUS_COLL_ROOT) {
        coll_send(s, inter, buf, count, dt, 0, tag);
        coll_fence(s);
        return;
    }
    if (local->rank == 0) {
        coll_recv(s, inter, buf, count, dt, root, tag);
        coll_fence(s);
    }
    coll_build_bcast(s, buf, count, dt, 0, local);
    coll_fence(s);
}

INTER_ENTRY(bcast, (void *buf, size_t count, locus_dtype_t *dt, int root,
                    locus_coll_comm_t *inter, locus_coll_comm_t *local),
            coll_sched_hold(s_, dt, NULL), build_bcast(s_, buf, count, dt, root, inter, local))

/* The other group reduces to its rank 0, which hands the result over. */
static void build_reduce(locus_coll_sched_t *s, const void *sbuf, void *rbuf, size_t count,
                         locus_dtype_t *dt, locus_op_t *op, int root,
                         locus_coll_comm_t *inter, locus_coll_comm_t *local)
{
    int tag = coll_tag(inter);
    if (root == LOCUS_COLL_NO_ROOT)
        return;
    if (root == LOCUS_COLL_ROOT) {
        coll_recv(s, inter, rbuf, count, dt, 0, tag);
        coll_fence(s);
        return;
    }
    char *tmp = local->rank == 0 ? coll_sched_tmp(s, dt, count) : NULL;
    if (local->rank == 0 && !tmp)
        return;
    coll_build_reduce(s, sbuf, tmp, count, dt, op, 0, local);
    coll_fence(s);
    if (local->rank == 0) {
        coll_send(s, inter, tmp, count, dt, root, tag);
        coll_fence(s);
    }
}

INTER_ENTRY(reduce, (const void *sbuf, void *rbuf, size_t count, locus_dtype_t *dt,
                     locus_op_t *op, int root, locus_coll_comm_t *inter,
                     locus_coll_comm_t *local),
            coll_sched_hold(s_, dt, op),
            build_reduce(s_, sbuf, rbuf, count, dt, op, root, inter, local))

/* ---- allreduce, reduce_scatter ---- */

/* Each group reduces to its leader; leaders trade; the remote group's
 * result goes out in the local group: as a whole (rcounts NULL:
 * allreduce) or in blocks of rcounts[local size] (reduce_scatter). */
static void build_allreduce(locus_coll_sched_t *s, const void *sbuf, void *rbuf,
                            const size_t *rcounts, size_t count, locus_dtype_t *dt,
                            locus_op_t *op, locus_coll_comm_t *inter, locus_coll_comm_t *local)
{
    int tag = coll_tag(inter), lead = local->rank == 0;
    if (rcounts) {
        count = 0;
        for (int i = 0; i < local->size; i++)
            count += rcounts[i];
    }
    char *mine = lead ? coll_sched_tmp(s, dt, count) : NULL;
    char *theirs = lead && rcounts ? coll_sched_tmp(s, dt, count) : (char *)rbuf;
    if (lead && (!mine || !theirs))
        return;
    coll_build_reduce(s, sbuf, mine, count, dt, op, 0, local);
    coll_fence(s);
    if (lead)
        coll_sendrecv(s, inter, mine, count, dt, 0, theirs, count, dt, 0, tag);
    if (!rcounts) {
        coll_build_bcast(s, rbuf, count, dt, 0, local);
        coll_fence(s);
        return;
    }
    ptrdiff_t *displs = malloc(sizeof *displs * (size_t)local->size);
    if (!displs) {
        s->oom = 1;
        return;
    }
    ptrdiff_t at = 0;
    for (int i = 0; i < local->size; i++) {
        displs[i] = at;
        at += (ptrdiff_t)rcounts[i];
    }
    coll_build_scatterv(s, theirs, rcounts, displs, dt, rbuf, rcounts[local->rank], dt, 0,
                        local);
    coll_fence(s);
    free(displs);
}

INTER_ENTRY(allreduce, (const void *sbuf, void *rbuf, size_t count, locus_dtype_t *dt,
                        locus_op_t *op, locus_coll_comm_t *inter, locus_coll_comm_t *local),
            coll_sched_hold(s_, dt, op),
            build_allreduce(s_, sbuf, rbuf, NULL, count, dt, op, inter, local))

INTER_ENTRY(reduce_scatter, (const void *sbuf, void *rbuf, const size_t *rcounts,
                             locus_dtype_t *dt, locus_op_t *op, locus_coll_comm_t *inter,
                             locus_coll_comm_t *local),
            coll_sched_hold(s_, dt, op),
            build_allreduce(s_, sbuf, rbuf, rcounts, 0, dt, op, inter, local))

/* ---- gatherv, scatterv: the root talks to every remote process ---- */

static void build_rooted(locus_coll_sched_t *s, int gathering, void *buf, size_t count,
                         locus_dtype_t *dt, char *rootbuf, const size_t *counts,
                         const ptrdiff_t *displs, locus_dtype_t *rootdt, int root,
                         locus_coll_comm_t *inter)
{
    int tag = coll_tag(inter);
    if (root == LOCUS_COLL_NO_ROOT)
        return;
    if (root != LOCUS_COLL_ROOT) {
        if (gathering)
            coll_send(s, inter, buf, count, dt, root, tag);
        else
            coll_recv(s, inter, buf, count, dt, root, tag);
    } else {
        for (int i = 0; i < inter->size; i++) {
            char *at = coll_at(rootbuf, rootdt, displs[i]);
            if (gathering)
                coll_recv(s, inter, at, counts[i], rootdt, i, tag);
            else
                coll_send(s, inter, at, counts[i], rootdt, i, tag);
        }
    }
    coll_fence(s);
}

INTER_ENTRY(gatherv, (const void *sbuf, size_t scount, locus_dtype_t *sdt, void *rbuf,
                      const size_t *rcounts, const ptrdiff_t *displs, locus_dtype_t *rdt,
                      int root, locus_coll_comm_t *inter, locus_coll_comm_t *local),
            (coll_sched_hold(s_, sdt, NULL), coll_sched_hold(s_, rdt, NULL)),
            build_rooted(s_, 1, (void *)sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root,
                         inter))

INTER_ENTRY(scatterv, (const void *sbuf, const size_t *scounts, const ptrdiff_t *displs,
                       locus_dtype_t *sdt, void *rbuf, size_t rcount, locus_dtype_t *rdt,
                       int root, locus_coll_comm_t *inter, locus_coll_comm_t *local),
            (coll_sched_hold(s_, sdt, NULL), coll_sched_hold(s_, rdt, NULL)),
            build_rooted(s_, 0, rbuf, rcount, rdt, (char *)sbuf, scounts, displs, sdt, root,
                         inter))

/* ---- allgatherv, alltoallw: every process with every remote one ---- */

/* Per-peer blocks (byte displacements); sbuf with sdispls NULL sends the
 * same block to everyone (allgather). Peers are visited from my own rank
 * on, so the remote ranks are not all hit in the same order. */
static void build_exchange(locus_coll_sched_t *s, const void *sbuf, const size_t *scounts,
                           const ptrdiff_t *sdispls, locus_dtype_t *const *sdts, void *rbuf,
                           const size_t *rcounts, const ptrdiff_t *rdispls,
                           locus_dtype_t *const *rdts, locus_coll_comm_t *inter)
{
    int tag = coll_tag(inter), p = inter->size;
    /* Buffers may be MPI_BOTTOM (NULL) with absolute displacements. */
    for (int k = 0; k < p; k++) {
        int i = (inter->rank + k) % p;
        coll_recv(s, inter, (void *)((uintptr_t)rbuf + (uintptr_t)rdispls[i]), rcounts[i],
                  rdts[i], i, tag);
    }
    for (int k = 0; k < p; k++) {
        int i = (inter->rank + k) % p;
        coll_send(s, inter, (const void *)((uintptr_t)sbuf + (uintptr_t)(sdispls ? sdispls[i] : 0)),
                  scounts[sdispls ? i : 0], sdts[sdispls ? i : 0], i, tag);
    }
    coll_fence(s);
}

static void build_allgatherv(locus_coll_sched_t *s, const void *sbuf, size_t scount,
                             locus_dtype_t *sdt, void *rbuf, const size_t *rcounts,
                             const ptrdiff_t *displs, locus_dtype_t *rdt,
                             locus_coll_comm_t *inter)
{
    int p = inter->size;
    ptrdiff_t *bytes = malloc(sizeof *bytes * (size_t)p);
    locus_dtype_t **rdts = malloc(sizeof *rdts * (size_t)p);
    if (!bytes || !rdts) {
        s->oom = 1;
    } else {
        for (int i = 0; i < p; i++) {
            bytes[i] = displs[i] * coll_extent(rdt);
            rdts[i] = rdt;
        }
        build_exchange(s, sbuf, &scount, NULL, &sdt, rbuf, rcounts, bytes, rdts, inter);
    }
    free(bytes);
    free(rdts);
}

INTER_ENTRY(allgatherv, (const void *sbuf, size_t scount, locus_dtype_t *sdt, void *rbuf,
                         const size_t *rcounts, const ptrdiff_t *displs, locus_dtype_t *rdt,
                         locus_coll_comm_t *inter, locus_coll_comm_t *local),
            (coll_sched_hold(s_, sdt, NULL), coll_sched_hold(s_, rdt, NULL)),
            build_allgatherv(s_, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, inter))

static void hold_per_peer(locus_coll_sched_t *s, locus_dtype_t *const *sdts,
                          locus_dtype_t *const *rdts, int p)
{
    for (int i = 0; i < p; i++) {
        coll_sched_hold(s, sdts[i], NULL);
        coll_sched_hold(s, rdts[i], NULL);
    }
}

INTER_ENTRY(alltoallw, (const void *sbuf, const size_t *scounts, const ptrdiff_t *sdispls,
                        locus_dtype_t *const *sdts, void *rbuf, const size_t *rcounts,
                        const ptrdiff_t *rdispls, locus_dtype_t *const *rdts,
                        locus_coll_comm_t *inter, locus_coll_comm_t *local),
            (hold_per_peer(s_, sdts, rdts, inter->size)),
            build_exchange(s_, sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts,
                           inter))
