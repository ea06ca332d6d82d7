/*
 * coll_p2p.c — the point-to-point interface the collective layer runs on
 * (locus_coll_p2p_t), over the core: messages on the communicator's
 * collective context, core requests as the layer's requests, the core's
 * progress and idle rule, and communicator splits.
 */
#include <sched.h>
#include <stddef.h>

#include "comm.h"

static locus_comm_t *comm_of(locus_coll_comm_t *cc)
{
    return (locus_comm_t *)((char *)cc - offsetof(locus_comm_t, coll));
}

static int cp_isend(locus_coll_comm_t *cc, const void *buf, size_t count, locus_dtype_t *dt,
                    int peer, int tag, locus_coll_req_t **req)
{
    locus_comm_t *c = comm_of(cc);
    locus_req_t *r = locus_core_req_get(locus_core());
    if (!r)
        return MPI_ERR_NO_MEM;
    int err = locus_p2p_isend(buf, count, dt, peer, tag, c, c->ctx_coll, 0, r);
    if (err != MPI_SUCCESS) {
        locus_core_req_put(locus_core(), r);
        return err;
    }
    *req = (locus_coll_req_t *)r;
    return MPI_SUCCESS;
}

static int cp_irecv(locus_coll_comm_t *cc, void *buf, size_t count, locus_dtype_t *dt, int peer,
                    int tag, int hints, locus_coll_req_t **req)
{
    locus_comm_t *c = comm_of(cc);
    locus_req_t *r = locus_core_req_get(locus_core());
    if (!r)
        return MPI_ERR_NO_MEM;
    /* Collective traffic of more than two ranks: the sender is busy with
     * other transfers of the same collective, so the transport reads it by
     * plain CMA where this machine's CMA is fast (LOCUS_TP_RECV_BULK). The
     * partner of a pair waits on this very exchange: the receive takes the
     * measured paths like any message, the split single copy included,
     * unless the data is reduced on arrival or the sender has its own copy
     * to make (LOCUS_COLL_RECV_BULK).
     * Measured on 2 ranks of the 2-vCPU VM, 1 MiB, plain CMA
     * against the measured paths, in its fast / slow state: bcast
     * 120-131 / 483-528 us against 35-50 / 259-260, gather 105 / 104-108
     * against 55 / 67, allreduce 144-168 / 590 against 86-106 / 558-606;
     * but reduce 110 / 108-112 against 60-75 / 222-228. */
    r->bulk = cc->size > 2 || (hints & LOCUS_COLL_RECV_BULK);
    r->fanin = cc->size > 2 && (hints & LOCUS_COLL_RECV_FANIN);
    locus_p2p_irecv(buf, count, dt, peer, tag, c, c->ctx_coll, r);
    *req = (locus_coll_req_t *)r;
    return MPI_SUCCESS;
}

static int cp_test(locus_coll_req_t *req, int *err)
{
    locus_req_t *r = (locus_req_t *)req;
    if (!r->done)
        return 0;
    *err = r->st_error;
    return 1;
}

static void cp_release(locus_coll_req_t *req)
{
    locus_core_abandon(locus_core(), (locus_req_t *)req);
}

static void cp_pause(void *arg)
{
    (void)arg;
    sched_yield();
}

static int cp_progress(void)
{
    locus_core_t *c = locus_core();
    int n = locus_core_progress(c);
    /* The shared-memory collectives wait on their segment between rounds
     * and idle by themselves, not through cp_idle: under
     * MPI_THREAD_MULTIPLE a quiet round is where they let the threads
     * blocked on the lock in (the peer a thread waits for may itself wait
     * for one of them). */
    if (n == 0 && c->cs && locus_cs_contended(c->cs))
        locus_cs_yield(c->cs, cp_pause, NULL);
    return n;
}

static void cp_idle(void)
{
    locus_core_idle(locus_core());
}

static int cp_split(locus_coll_comm_t *cc, int color, int key, locus_coll_comm_t **out)
{
    locus_comm_t *n = NULL;
    int err = locus_comm_split(comm_of(cc), color < 0 ? MPI_UNDEFINED : color, key, &n);
    *out = err == MPI_SUCCESS && n ? &n->coll : NULL;
    return err;
}

static void cp_free(locus_coll_comm_t *cc)
{
    locus_comm_t *c = comm_of(cc);
    c->magic = 0;
    locus_comm_release(c);
}

const locus_coll_p2p_t locus_coll_p2p = {
    .isend = cp_isend, .irecv = cp_irecv, .test = cp_test, .release = cp_release,
    .progress = cp_progress, .idle = cp_idle, .split = cp_split, .free = cp_free,
};
