/*
 * coll_nb.c — non-blocking collectives (MPI_Ibarrier, MPI_Ibcast,
 * MPI_Iallreduce) as schedules: a list of steps, each at most one send and
 * one receive followed by an optional local reduction, advanced by the
 * progress engine through a generalized request. Each operation draws its
 * own tag from comm->coll_seq, so several may be outstanding at once.
 */
#include <stdlib.h>
#include <string.h>

#include "coll_mpi.h"

enum { RED_NONE, RED_IN_ACC, RED_ACC_IN };   /* acc = in op acc | acc = acc op in */

typedef struct {
    int send_peer, recv_peer;   /* -1: none */
    const void *sbuf;
    void *rbuf;
    int red;
} nb_step_t;

typedef struct {
    MPI_Comm comm;
    int tag, count;
    MPI_Datatype dt;
    MPI_Op op;
    char *acc, *tmp;            /* acc: user buffer; tmp: owned scratch */
    void *tmp_mem;
    nb_step_t *steps;
    int nsteps, cap, cur, posted;
    MPI_Request reqs[2];
} nb_sched_t;

static void nb_free(void *p)
{
    nb_sched_t *s = p;
    if (!s)
        return;
    for (int i = 0; i < 2; i++)
        if (s->reqs[i] != MPI_REQUEST_NULL)
            locus_req_free(s->reqs[i]);
    if (s->dt)
        locus_dtype_release(s->dt);
    free(s->tmp_mem);
    free(s->steps);
    free(s);
}

static int nb_add(nb_sched_t *s, int send_peer, const void *sbuf, int recv_peer, void *rbuf,
                  int red)
{
    if (s->nsteps == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        nb_step_t *n = realloc(s->steps, sizeof(*n) * (size_t)cap);
        if (!n)
            return MPI_ERR_NO_MEM;
        s->steps = n;
        s->cap = cap;
    }
    s->steps[s->nsteps++] = (nb_step_t){send_peer, recv_peer, sbuf, rbuf, red};
    return MPI_SUCCESS;
}

/* Never blocks: posts the current step, checks it, moves on when done. */
static int nb_poll(void *p)
{
    nb_sched_t *s = p;
    while (s->cur < s->nsteps) {
        nb_step_t *st = &s->steps[s->cur];
        if (!s->posted) {
            int rc = MPI_SUCCESS;
            if (st->recv_peer >= 0)
                rc = locus_coll_irecv(st->rbuf, s->count, s->dt, st->recv_peer, s->tag, s->comm,
                                      &s->reqs[0]);
            if (rc == MPI_SUCCESS && st->send_peer >= 0)
                rc = locus_coll_isend(st->sbuf, s->count, s->dt, st->send_peer, s->tag, s->comm,
                                      &s->reqs[1]);
            if (rc != MPI_SUCCESS)
                return -rc;
            s->posted = 1;
        }
        for (int i = 0; i < 2; i++)
            if (!locus_req_is_done(s->reqs[i]))
                return 0;
        for (int i = 0; i < 2; i++) {
            if (s->reqs[i] != MPI_REQUEST_NULL)
                locus_req_free(s->reqs[i]);
            s->reqs[i] = MPI_REQUEST_NULL;
        }
        int rc = MPI_SUCCESS;
        if (st->red == RED_IN_ACC) {
            rc = locus_op_reduce(s->op, s->dt, s->count, st->rbuf, s->acc);
        } else if (st->red == RED_ACC_IN) {
            rc = locus_op_reduce(s->op, s->dt, s->count, s->acc, st->rbuf);
            if (rc == MPI_SUCCESS)
                rc = coll_local_copy(st->rbuf, s->count, s->dt, s->acc, s->count, s->dt);
        }
        if (rc != MPI_SUCCESS)
            return -rc;
        s->cur++;
        s->posted = 0;
    }
    return 1;
}

static nb_sched_t *nb_new(MPI_Comm comm, int count, MPI_Datatype dt)
{
    nb_sched_t *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->comm = comm;
    s->count = count;
    s->dt = dt;
    locus_dtype_retain(dt);
    s->reqs[0] = s->reqs[1] = MPI_REQUEST_NULL;
    s->tag = COLL_TAG_NB + (int)(comm->coll_seq++ % COLL_TAG_NB_SPAN);
    return s;
}

static int nb_start(nb_sched_t *s, MPI_Request *request)
{
    *request = locus_req_gen_new(s->comm, nb_poll, s, nb_free);
    if (*request == MPI_REQUEST_NULL) {
        nb_free(s);
        return MPI_ERR_NO_MEM;
    }
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Ibarrier)
int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    static const char fn[] = "MPI_Ibarrier";
    LOCUS_CHECK_INIT(fn);
    int rc = locus_check_comm(comm);
    if (rc == MPI_SUCCESS && !request)
        rc = MPI_ERR_ARG;
    if (rc != MPI_SUCCESS)
        return locus_mpi_err(comm, rc, fn);
    nb_sched_t *s = nb_new(comm, 0, MPI_BYTE);
    if (!s)
        return locus_mpi_err(comm, MPI_ERR_NO_MEM, fn);
    int p = comm->size, r = comm->rank;
    for (int dist = 1; dist < p && rc == MPI_SUCCESS; dist *= 2)
        rc = nb_add(s, (r + dist) % p, NULL, (r - dist + p) % p, NULL, RED_NONE);
    if (rc == MPI_SUCCESS)
        rc = nb_start(s, request);
    else
        nb_free(s);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : locus_mpi_err(comm, rc, fn);
}

LOCUS_PMPI_WEAK(Ibcast)
int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                MPI_Request *request)
{
    static const char fn[] = "MPI_Ibcast";
    LOCUS_CHECK_INIT(fn);
    int rc = coll_check_bcast_args(buffer, count, datatype, root, comm);
    if (rc == MPI_SUCCESS && !request)
        rc = MPI_ERR_ARG;
    if (rc != MPI_SUCCESS)
        return locus_mpi_err(comm, rc, fn);
    nb_sched_t *s = nb_new(comm, count, datatype);
    if (!s)
        return locus_mpi_err(comm, MPI_ERR_NO_MEM, fn);
    /* Binomial tree: receive from the parent, then send to each child. */
    int p = comm->size, vr = (comm->rank - root + p) % p, mask = 1;
    while (mask < p && rc == MPI_SUCCESS) {
        if (vr & mask) {
            rc = nb_add(s, -1, NULL, (vr - mask + root) % p, buffer, RED_NONE);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0 && rc == MPI_SUCCESS; mask >>= 1)
        if (vr + mask < p)
            rc = nb_add(s, (vr + mask + root) % p, buffer, -1, NULL, RED_NONE);
    if (rc == MPI_SUCCESS)
        rc = nb_start(s, request);
    else
        nb_free(s);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : locus_mpi_err(comm, rc, fn);
}

/* Recursive doubling with the non-power-of-two fold, as in coll_reduce.c. */
static int iallreduce_sched(nb_sched_t *s)
{
    int p = s->comm->size, r = s->comm->rank, rc = MPI_SUCCESS;
    int pof2 = coll_pof2(p), rem = p - pof2, newrank;
    if (r < 2 * rem) {
        if (r % 2 == 0) {
            rc = nb_add(s, r + 1, s->acc, -1, NULL, RED_NONE);
            if (rc == MPI_SUCCESS)
                rc = nb_add(s, -1, NULL, r + 1, s->acc, RED_NONE);
            return rc;
        }
        rc = nb_add(s, -1, NULL, r - 1, s->tmp, RED_IN_ACC);
        newrank = r / 2;
    } else {
        newrank = r - rem;
    }
    for (int mask = 1; mask < pof2 && rc == MPI_SUCCESS; mask <<= 1) {
        int nd = newrank ^ mask, dst = nd < rem ? nd * 2 + 1 : nd + rem;
        rc = nb_add(s, dst, s->acc, dst, s->tmp, dst < r ? RED_IN_ACC : RED_ACC_IN);
    }
    if (rc == MPI_SUCCESS && r < 2 * rem)
        rc = nb_add(s, r - 1, s->acc, -1, NULL, RED_NONE);
    return rc;
}

LOCUS_PMPI_WEAK(Iallreduce)
int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    static const char fn[] = "MPI_Iallreduce";
    LOCUS_CHECK_INIT(fn);
    int rc = coll_check_reduce_args(sendbuf, recvbuf, count, datatype, op, -1, comm);
    if (rc == MPI_SUCCESS && !request)
        rc = MPI_ERR_ARG;
    if (rc != MPI_SUCCESS)
        return locus_mpi_err(comm, rc, fn);
    if (sendbuf != MPI_IN_PLACE)
        rc = coll_local_copy(sendbuf, count, datatype, recvbuf, count, datatype);
    nb_sched_t *s = nb_new(comm, count, datatype);
    if (!s)
        return locus_mpi_err(comm, MPI_ERR_NO_MEM, fn);
    s->op = op;
    s->acc = recvbuf;
    s->tmp_mem = coll_tmp_alloc(datatype, count, &s->tmp);
    if (!s->tmp_mem)
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS && count > 0)
        rc = iallreduce_sched(s);
    if (rc == MPI_SUCCESS)
        rc = nb_start(s, request);
    else
        nb_free(s);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : locus_mpi_err(comm, rc, fn);
}
