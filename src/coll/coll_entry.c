/*
 * coll_entry.c — the entry points of locus_coll.h: each collective's
 * blocking form builds into the communicator's reusable schedule and runs
 * it; its nonblocking form builds a schedule of its own, holding
 * references on the datatypes and operation, for the caller to poll.
 */
#include <stdint.h>
#include <stdlib.h>

#include "coll_priv.h"

static locus_coll_sched_t *blocking_get(locus_coll_comm_t *c, int *owned)
{
    coll_state_t *st = coll_state(c);
    *owned = 0;
    if (st && !st->blocking_busy) {
        if (!st->blocking && (st->blocking = coll_sched_new(1)))
            st->blocking->keep_scratch = 1;
        if (st->blocking) {
            st->blocking_busy = 1;
            return st->blocking;
        }
    }
    *owned = 1;
    return coll_sched_new(1);
}

static int blocking_run(locus_coll_comm_t *c, locus_coll_sched_t *s, int owned)
{
    /* Nothing left to run (no data, or one call that ran while it was
     * built: coll_call): no run loop, nothing to clear. */
    if (!owned && s->nsteps == 0 && s->nbufs == 0 && !s->oom) {
        int rc = s->err;
        s->err = LOCUS_SUCCESS;
        c->state->blocking_busy = 0;
        return rc;
    }
    /* A schedule that ran out of memory while building is incomplete:
     * running half of it would leave peers waiting on the other half. */
    int rc = s->oom ? LOCUS_ERR_NO_MEM : coll_sched_run(s);
    if (owned) {
        locus_coll_sched_free(s);
    } else {
        coll_sched_reset(s);
        c->state->blocking_busy = 0;
    }
    return rc;
}

static int nonblocking_start(locus_coll_sched_t *s, locus_coll_sched_t **out)
{
    if (s->oom) {
        locus_coll_sched_free(s);
        return LOCUS_ERR_NO_MEM;
    }
    *out = s;
    return LOCUS_SUCCESS;
}

#define COLL_UNPAREN(...) __VA_ARGS__
/* Defines locus_coll_<name> and locus_coll_i<name>: BUILD appends the
 * collective's steps to s_; HOLD takes the nonblocking form's references. */
#define COLL_ENTRY(name, params, comm, HOLD, BUILD)                               \
    int locus_coll_##name params                                                  \
    {                                                                             \
        int owned_;                                                               \
        (comm)->started[LOCUS_COLL_KIND_##name]++;                                \
        locus_coll_sched_t *s_ = blocking_get(comm, &owned_);                     \
        if (!s_)                                                                  \
            return LOCUS_ERR_NO_MEM;                                              \
        BUILD;                                                                    \
        return blocking_run(comm, s_, owned_);                                    \
    }                                                                             \
    int locus_coll_i##name(COLL_UNPAREN params, locus_coll_sched_t **out_)        \
    {                                                                             \
        (comm)->started[LOCUS_COLL_KIND_##name]++;                                \
        locus_coll_sched_t *s_ = coll_sched_new(0);                               \
        if (!s_)                                                                  \
            return LOCUS_ERR_NO_MEM;                                              \
        HOLD;                                                                     \
        BUILD;                                                                    \
        return nonblocking_start(s_, out_);                                       \
    }

COLL_ENTRY(barrier, (locus_coll_comm_t *c), c, (void)0, coll_build_barrier(s_, c))

COLL_ENTRY(bcast, (void *buf, size_t count, locus_dtype_t *dt, int root, locus_coll_comm_t *c),
           c, coll_sched_hold(s_, dt, NULL), coll_build_bcast(s_, buf, count, dt, root, c))

COLL_ENTRY(reduce, (const void *sbuf, void *rbuf, size_t count, locus_dtype_t *dt,
                    locus_op_t *op, int root, locus_coll_comm_t *c),
           c, coll_sched_hold(s_, dt, op),
           coll_build_reduce(s_, sbuf, rbuf, count, dt, op, root, c))

COLL_ENTRY(allreduce, (const void *sbuf, void *rbuf, size_t count, locus_dtype_t *dt,
                       locus_op_t *op, locus_coll_comm_t *c),
           c, coll_sched_hold(s_, dt, op), coll_build_allreduce(s_, sbuf, rbuf, count, dt, op, c))

COLL_ENTRY(gather, (const void *sbuf, size_t scount, locus_dtype_t *sdt, void *rbuf,
                    size_t rcount, locus_dtype_t *rdt, int root, locus_coll_comm_t *c),
           c, (coll_sched_hold(s_, sdt, NULL), coll_sched_hold(s_, rdt, NULL)),
           coll_build_gather(s_, sbuf, scount, sdt, rbuf, rcount, rdt, root, c))

COLL_ENTRY(gatherv, (const void *sbuf, size_t scount, locus_dtype_t *sdt, void *rbuf,
                     const size_t *rcounts, const ptrdiff_t *displs, locus_dtype_t *rdt,
                     int root, locus_coll_comm_t *c),
           c, (coll_sched_hold(s_, sdt, NULL), coll_sched_hold(s_, rdt, NULL)),
           coll_build_gatherv(s_, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, c))

COLL_ENTRY(scatter, (const void *sbuf, size_t scount, locus_dtype_t *sdt, void *rbuf,
                     size_t rcount, locus_dtype_t *rdt, int root, locus_coll_comm_t *c),
           c, (coll_sched_hold(s_, sdt, NULL), coll_sched_hold(s_, rdt, NULL)),
           coll_build_scatter(s_, sbuf, scount, sdt, rbuf, rcount, rdt, root, c))

COLL_ENTRY(scatterv, (const void *sbuf, const size_t *scounts, const ptrdiff_t *displs,
                      locus_dtype_t *sdt, void *rbuf, size_t rcount, locus_dtype_t *rdt,
                      int root, locus_coll_comm_t *c),
           c, (coll_sched_hold(s_, sdt, NULL), coll_sched_hold(s_, rdt, NULL)),
           coll_build_scatterv(s_, sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, c))

COLL_ENTRY(allgather, (const void *sbuf, size_t scount, locus_dtype_t *sdt, void *rbuf,
                       size_t rcount, locus_dtype_t *rdt, locus_coll_comm_t *c),
           c, (coll_sched_hold(s_, sdt, NULL), coll_sched_hold(s_, rdt, NULL)),
           coll_build_allgather(s_, sbuf, scount, sdt, rbuf, rcount, rdt, c))

COLL_ENTRY(allgatherv, (const void *sbuf, size_t scount, locus_dtype_t *sdt, void *rbuf,
                        const size_t *rcounts, const ptrdiff_t *displs, locus_dtype_t *rdt,
                        locus_coll_comm_t *c),
           c, (coll_sched_hold(s_, sdt, NULL), coll_sched_hold(s_, rdt, NULL)),
           coll_build_allgatherv(s_, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, c))

/* Alltoall and alltoallv as the w form: per-peer arrays for the build only. */
typedef struct {
    size_t *scounts, *rcounts;
    ptrdiff_t *sdispls, *rdispls;
    locus_dtype_t **sdts, **rdts;
} a2a_arrays_t;

static int a2a_arrays(a2a_arrays_t *a, int p, const size_t *sc, const ptrdiff_t *sd,
                      size_t suni, locus_dtype_t *sdt, const size_t *rc, const ptrdiff_t *rd,
                      size_t runi, locus_dtype_t *rdt)
{
    size_t one = sizeof(size_t) + sizeof(ptrdiff_t) + sizeof(locus_dtype_t *);
    char *m = malloc(2 * one * (size_t)p);
    if (!m)
        return -1;
    a->scounts = (size_t *)m;
    a->rcounts = a->scounts + p;
    a->sdispls = (ptrdiff_t *)(a->rcounts + p);
    a->rdispls = a->sdispls + p;
    a->sdts = (locus_dtype_t **)(a->rdispls + p);
    a->rdts = a->sdts + p;
    ptrdiff_t sext = sdt ? coll_extent(sdt) : 0, rext = coll_extent(rdt);
    for (int i = 0; i < p; i++) {
        a->scounts[i] = sc ? sc[i] : suni;
        a->sdispls[i] = (sd ? sd[i] : (ptrdiff_t)i * (ptrdiff_t)suni) * sext;
        a->sdts[i] = sdt;
        a->rcounts[i] = rc ? rc[i] : runi;
        a->rdispls[i] = (rd ? rd[i] : (ptrdiff_t)i * (ptrdiff_t)runi) * rext;
        a->rdts[i] = rdt;
    }
    return 0;
}

static void build_alltoallv(locus_coll_sched_t *s, const void *sbuf, const size_t *sc,
                            const ptrdiff_t *sd, size_t suni, locus_dtype_t *sdt, void *rbuf,
                            const size_t *rc, const ptrdiff_t *rd, size_t runi,
                            locus_dtype_t *rdt, locus_coll_comm_t *c)
{
    /* Matching signatures: uniform blocks without data mean none anywhere. */
    size_t per = runi * locus_dtype_size(rdt);
    if (!rc && per == 0)
        return;
    a2a_arrays_t a;
    if (a2a_arrays(&a, c->size, sc, sd, suni, sbuf == LOCUS_COLL_IN_PLACE ? NULL : sdt, rc, rd,
                   runi, rdt) != 0) {
        s->oom = 1;
        return;
    }
    /* Per-peer sizes of the v form differ by rank, so the automatic choice
     * must not depend on them: every rank pairs up unless told. */
    coll_build_alltoallw(s, sbuf, a.scounts, a.sdispls, a.sdts, rbuf, a.rcounts, a.rdispls,
                         a.rdts, rc ? SIZE_MAX : per, c);
    free(a.scounts);
}

static int shm_alltoall_call(const coll_step_t *st)
{
    return coll_shm_alltoall(st->src, st->count, st->dt, st->dst, st->count2, st->dt2, st->comm);
}

/* Small uniform blocks on one node: every rank's blocks in one slot (or
 * flag record), one wait; else as the v form. */
static void build_alltoall(locus_coll_sched_t *s, const void *sbuf, size_t scount,
                           locus_dtype_t *sdt, void *rbuf, size_t rcount, locus_dtype_t *rdt,
                           locus_coll_comm_t *c)
{
    size_t all = rcount * locus_dtype_size(rdt) * (size_t)c->size;
    coll_state_t *st = all && c->size > 1 ? coll_state(c) : NULL;
    /* On an oversubscribed node the larger slots take alltoalls of up to
     * LOCUS_COLL_SHM_OVERSUB_MAX bytes per rank (4 ranks on 2 cores, 8
     * KiB blocks: 21 us against 35-38 by messages, Open MPI 25), less
     * where CMA is fast (coll_state.c). */
    if (st && coll_shm_usable(s, c, st, st->alltoall, all,
                              all <= st->alltoall_slot_max ? COLL_SHM_SLOT : 0)) {
        coll_call(s, &(coll_step_t){ .comm = c, .src = sbuf, .count = scount, .dt = sdt,
                                     .dst = rbuf, .count2 = rcount, .dt2 = rdt,
                                     .call = shm_alltoall_call });
        return;
    }
    build_alltoallv(s, sbuf, NULL, NULL, scount, sdt, rbuf, NULL, NULL, rcount, rdt, c);
}

COLL_ENTRY(alltoall, (const void *sbuf, size_t scount, locus_dtype_t *sdt, void *rbuf,
                      size_t rcount, locus_dtype_t *rdt, locus_coll_comm_t *c),
           c, (coll_sched_hold(s_, sdt, NULL), coll_sched_hold(s_, rdt, NULL)),
           build_alltoall(s_, sbuf, scount, sdt, rbuf, rcount, rdt, c))

COLL_ENTRY(alltoallv, (const void *sbuf, const size_t *scounts, const ptrdiff_t *sdispls,
                       locus_dtype_t *sdt, void *rbuf, const size_t *rcounts,
                       const ptrdiff_t *rdispls, locus_dtype_t *rdt, locus_coll_comm_t *c),
           c, (coll_sched_hold(s_, sdt, NULL), coll_sched_hold(s_, rdt, NULL)),
           build_alltoallv(s_, sbuf, scounts, sdispls, 0, sdt, rbuf, rcounts, rdispls, 0, rdt,
                           c))

static void hold_types(locus_coll_sched_t *s, locus_dtype_t *const *sdts,
                       locus_dtype_t *const *rdts, int p, int in_place)
{
    for (int i = 0; i < p; i++) {
        if (!in_place)
            coll_sched_hold(s, sdts[i], NULL);
        coll_sched_hold(s, rdts[i], NULL);
    }
}

COLL_ENTRY(alltoallw, (const void *sbuf, const size_t *scounts, const ptrdiff_t *sdispls,
                       locus_dtype_t *const *sdts, void *rbuf, const size_t *rcounts,
                       const ptrdiff_t *rdispls, locus_dtype_t *const *rdts,
                       locus_coll_comm_t *c),
           c, hold_types(s_, sdts, rdts, c->size, sbuf == LOCUS_COLL_IN_PLACE),
           coll_build_alltoallw(s_, sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts,
                                SIZE_MAX, c))

COLL_ENTRY(reduce_scatter, (const void *sbuf, void *rbuf, const size_t *rcounts,
                            locus_dtype_t *dt, locus_op_t *op, locus_coll_comm_t *c),
           c, coll_sched_hold(s_, dt, op),
           coll_build_reduce_scatter(s_, sbuf, rbuf, rcounts, dt, op, c))

static void build_reduce_scatter_block(locus_coll_sched_t *s, const void *sbuf, void *rbuf,
                                       size_t rcount, locus_dtype_t *dt, locus_op_t *op,
                                       locus_coll_comm_t *c)
{
    size_t *counts = malloc(sizeof *counts * (size_t)c->size);
    if (!counts) {
        s->oom = 1;
        return;
    }
    for (int i = 0; i < c->size; i++)
        counts[i] = rcount;
    coll_build_reduce_scatter(s, sbuf, rbuf, counts, dt, op, c);
    free(counts);
}

COLL_ENTRY(reduce_scatter_block, (const void *sbuf, void *rbuf, size_t rcount,
                                  locus_dtype_t *dt, locus_op_t *op, locus_coll_comm_t *c),
           c, coll_sched_hold(s_, dt, op),
           build_reduce_scatter_block(s_, sbuf, rbuf, rcount, dt, op, c))

COLL_ENTRY(scan, (const void *sbuf, void *rbuf, size_t count, locus_dtype_t *dt, locus_op_t *op,
                  locus_coll_comm_t *c),
           c, coll_sched_hold(s_, dt, op), coll_build_scan(s_, sbuf, rbuf, count, dt, op, 0, c))

COLL_ENTRY(exscan, (const void *sbuf, void *rbuf, size_t count, locus_dtype_t *dt,
                    locus_op_t *op, locus_coll_comm_t *c),
           c, coll_sched_hold(s_, dt, op), coll_build_scan(s_, sbuf, rbuf, count, dt, op, 1, c))
