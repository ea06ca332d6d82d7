/*
 * coll_api.c — the MPI collective calls with one root or a reduction:
 * barrier, bcast, reduce, allreduce, reduce_scatter(_block), scan, exscan
 * in their blocking, nonblocking and persistent forms, with int counts
 * and as `_c` forms (COLL_API in coll_api.h), and MPI_Reduce_local. Each
 * checks its arguments and hands the work to the collective layer
 * (src/coll) through one run function per collective.
 */
#include <limits.h>
#include <stdlib.h>

#include "coll_api.h"
#include "intercomm_coll.h"
#include "p2p_api.h"

int coll_check_data(const void *buf, MPI_Count count, MPI_Datatype dt)
{
    /* No data: any buffer will do, and no size overflows. */
    if (count == 0)
        return MPI_SUCCESS;
    int rc = locus_check_buf(buf, p2p_count_arg(count), dt);
    if (rc == MPI_SUCCESS)
        rc = p2p_check_size(count, dt);
    return rc;
}

int coll_check_counts(coll_vec_t counts, coll_vec_t displs, int p, MPI_Datatype dt,
                      const void *buf)
{
    if (!counts.p || !displs.p)
        return MPI_ERR_ARG;
    int rc = locus_check_dtype(dt);
    for (int i = 0; i < p && rc == MPI_SUCCESS; i++)
        rc = coll_check_part(buf, coll_vec_at(counts, i), dt);
    return rc;
}

int coll_check_reduce_args(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt,
                           MPI_Op op, int root, const locus_comm_t *comm)
{
    if (count < 0)
        return MPI_ERR_COUNT;
    /* The type resolved once for every check, and nothing more to check
     * with no data: a reduce of nothing took 17.6 ns, Open MPI's 6.9. */
    locus_dtype_t *d = locus_dt_of(dt);
    if (!d || !locus_dtype_is_committed(d))
        return MPI_ERR_TYPE;
    locus_op_t *o = locus_op_of(op);
    int rc = o ? locus_op_check(o, d) : MPI_ERR_OP;
    if (rc != MPI_SUCCESS || count == 0)
        return rc;
    int receives = root < 0 || comm->coll.rank == root;
    if (sbuf != MPI_IN_PLACE)
        rc = coll_check_data(sbuf, count, dt);
    if (rc == MPI_SUCCESS && receives)
        rc = coll_check_data(rbuf, count, dt);
    /* Sending from the receive buffer is only legal as MPI_IN_PLACE. */
    if (rc == MPI_SUCCESS && sbuf == rbuf && receives)
        rc = MPI_ERR_BUFFER;
    return rc;
}

size_t *coll_counts_convert(coll_vec_t counts, coll_vec_t displs, int p, ptrdiff_t **out_displs)
{
    size_t *c = malloc((sizeof(size_t) + sizeof(ptrdiff_t)) * (size_t)(p > 0 ? p : 1));
    if (!c)
        return NULL;
    ptrdiff_t *d = (ptrdiff_t *)(c + p);
    for (int i = 0; i < p; i++) {
        c[i] = (size_t)coll_vec_at(counts, i);
        d[i] = displs.p ? (ptrdiff_t)coll_vec_at(displs, i) : 0;
    }
    if (out_displs)
        *out_displs = d;
    return c;
}

int coll_request(locus_comm_t *comm, locus_coll_sched_t *s, coll_how_t how, MPI_Request *req)
{
    if (how == COLL_PERSISTENT)
        return coll_persist_request(comm, s, req);
    return locus_req_of_sched(comm, s, req);
}

#define API_END(rc, comm, fn) return (rc) == MPI_SUCCESS ? MPI_SUCCESS : locus_mpi_err(comm, rc, fn)

/* ---- barrier, bcast ---- */

static int barrier_run(MPI_Comm comm_h, coll_how_t how, MPI_Request *req, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    if (locus_comm_is_inter(comm_h))   /* intercommunicators: intercomm_coll.c */
        return locus_intercomm_barrier(comm_h, how, req, fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    int rc = locus_check_comm(comm);
    COLL_CHECK_REQ(rc, how, req);
    if (rc == MPI_SUCCESS)
        COLL_RUN(rc, how, req, comm, barrier, &comm->coll);
    API_END(rc, comm, fn);
}

COLL_API(Barrier, Ibarrier, , (MPI_Comm comm), barrier_run(comm, how_, req_, fn_))

static int bcast_run(void *buf, MPI_Count count, MPI_Datatype dt, int root, MPI_Comm comm_h,
                     coll_how_t how, MPI_Request *req, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    if (locus_comm_is_inter(comm_h))   /* intercommunicators: intercomm_coll.c */
        return locus_intercomm_bcast(buf, count, dt, root, comm_h, how, req, fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    int rc = locus_check_comm(comm);
    if (rc == MPI_SUCCESS)
        rc = locus_check_root(comm, root);
    if (rc == MPI_SUCCESS)
        rc = coll_check_part(buf, count, dt);
    COLL_CHECK_REQ(rc, how, req);
    if (rc == MPI_SUCCESS && coll_moves_nothing(how, count, dt))
        return MPI_SUCCESS;
    if (rc == MPI_SUCCESS)
        COLL_RUN(rc, how, req, comm, bcast, buf, (size_t)count, locus_dt_of(dt), root,
                 &comm->coll);
    API_END(rc, comm, fn);
}

#define BCAST_API(S, CT)                                                            \
    COLL_API(Bcast, Ibcast, S,                                                      \
             (void *buf, CT count, MPI_Datatype dt, int root, MPI_Comm comm),       \
             bcast_run(buf, count, dt, root, comm, how_, req_, fn_))
BCAST_API(, int)
BCAST_API(_c, MPI_Count)

/* ---- reduce, allreduce ---- */

/* The checks of a reduce (root >= 0) or allreduce (root < 0) on an
 * intracommunicator. */
COLL_INLINE reduce_checks(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op,
                          int root, const locus_comm_t *comm)
{
    int rc = locus_check_comm(comm);
    if (rc == MPI_SUCCESS && root >= 0)
        rc = locus_check_root(comm, root);
    if (rc == MPI_SUCCESS)
        rc = coll_check_reduce(sbuf, rbuf, count, dt, op, root, comm);
    if (rc == MPI_SUCCESS && root >= 0 && sbuf == MPI_IN_PLACE && comm->coll.rank != root)
        rc = MPI_ERR_BUFFER;
    return rc;
}

/* root < 0: an allreduce. */
COLL_OUT_OF_LINE reduce_run(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt,
                            MPI_Op op, int root, MPI_Comm comm_h, coll_how_t how, MPI_Request *req,
                            const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    if (locus_comm_is_inter(comm_h))   /* intercommunicators (MPI_Allreduce): intercomm_coll.c */
        return locus_intercomm_allreduce(sbuf, rbuf, count, dt, op, comm_h, how, req, fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    int rc = reduce_checks(sbuf, rbuf, count, dt, op, root, comm);
    COLL_CHECK_REQ(rc, how, req);
    if (rc == MPI_SUCCESS && coll_moves_nothing(how, count, dt))
        return MPI_SUCCESS;
    if (rc == MPI_SUCCESS && root >= 0)
        COLL_RUN(rc, how, req, comm, reduce, sbuf, rbuf, (size_t)count, locus_dt_of(dt),
                 locus_op_of(op), root, &comm->coll);
    else if (rc == MPI_SUCCESS)
        COLL_RUN(rc, how, req, comm, allreduce, sbuf, rbuf, (size_t)count, locus_dt_of(dt),
                 locus_op_of(op), &comm->coll);
    API_END(rc, comm, fn);
}

/* A blocking reduction of nothing ends after its checks (17.6 ns a call
 * took, Open MPI's 6.9). */
COLL_INLINE reduce_entry(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op,
                         int root, MPI_Comm comm_h, coll_how_t how, MPI_Request *req,
                         const char *fn)
{
    if (how == COLL_BLOCKING && count == 0 && locus_mpi_active() &&
        !locus_comm_is_inter(comm_h) &&
        reduce_checks(sbuf, rbuf, 0, dt, op, root, locus_comm_of(comm_h)) == MPI_SUCCESS)
        return MPI_SUCCESS;
    return reduce_run(sbuf, rbuf, count, dt, op, root, comm_h, how, req, fn);
}

/* A negative root of MPI_Reduce is MPI_ERR_ROOT, not "every rank". */
static int reduce_root(int root)
{
    return root < 0 ? INT_MAX : root;
}

#define REDUCE_API(S, CT)                                                           \
    COLL_API(Reduce, Ireduce, S,                                                    \
             (const void *sbuf, void *rbuf, CT count, MPI_Datatype dt, MPI_Op op, int root, \
              MPI_Comm comm),                                                       \
             locus_comm_is_inter(comm) /* intercommunicators: intercomm_coll.c */ \
                 ? locus_intercomm_reduce(sbuf, rbuf, count, dt, op, root, comm, how_, req_, fn_) \
                 : reduce_entry(sbuf, rbuf, count, dt, op, reduce_root(root), comm, how_, req_, \
                                fn_))                                               \
    COLL_API(Allreduce, Iallreduce, S,                                              \
             (const void *sbuf, void *rbuf, CT count, MPI_Datatype dt, MPI_Op op,   \
              MPI_Comm comm),                                                       \
             reduce_entry(sbuf, rbuf, count, dt, op, -1, comm, how_, req_, fn_))
REDUCE_API(, int)
REDUCE_API(_c, MPI_Count)

/* ---- reduce_scatter, reduce_scatter_block ---- */

/* rcounts.p NULL: the block form with rcount each. */
#define REDSCAT_FEW 64

/* The checks of a reduce_scatter on an intracommunicator. *rcount: the
 * block form's count, then this rank's block; *total: nonzero when any
 * rank's block has elements. */
COLL_INLINE
redscat_checks(const void *sbuf, void *rbuf, coll_vec_t rcounts, MPI_Count *rcount,
               MPI_Count *total, MPI_Datatype dt, MPI_Op op, const locus_comm_t *comm)
{
    int rc = locus_check_comm(comm);
    *total = *rcount;
    if (rc == MPI_SUCCESS && rcounts.p) {
        *total = 0;
        for (int i = 0; rc == MPI_SUCCESS && i < comm->coll.size; i++) {
            rc = coll_vec_at(rcounts, i) < 0 ? MPI_ERR_COUNT : MPI_SUCCESS;
            *total |= coll_vec_at(rcounts, i);
        }
        *rcount = rc == MPI_SUCCESS ? coll_vec_at(rcounts, comm->coll.rank) : 0;
    }
    return rc == MPI_SUCCESS ? coll_check_reduce(sbuf, rbuf, *rcount, dt, op, -1, comm) : rc;
}

COLL_OUT_OF_LINE redscat_run(const void *sbuf, void *rbuf, coll_vec_t rcounts, MPI_Count rcount,
                             MPI_Datatype dt, MPI_Op op, MPI_Comm comm_h, coll_how_t how,
                             MPI_Request *req, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    if (locus_comm_is_inter(comm_h))   /* intercommunicators: intercomm_coll.c */
        return locus_intercomm_reduce_scatter(sbuf, rbuf, rcounts, rcount, dt, op, comm_h, how,
                                              req, fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    int vform = rcounts.p != NULL;
    MPI_Count total;
    int rc = redscat_checks(sbuf, rbuf, rcounts, &rcount, &total, dt, op, comm);
    COLL_CHECK_REQ(rc, how, req);
    /* total: nonzero when any rank's block has elements. */
    if (rc == MPI_SUCCESS && coll_moves_nothing(how, total, dt))
        return MPI_SUCCESS;
    if (rc == MPI_SUCCESS && vform) {
        /* Small communicators' counts on the stack: a malloc was a third
         * of a call with no data. */
        int p = comm->coll.size;
        size_t few[REDSCAT_FEW], *cnt = p <= REDSCAT_FEW ? few : malloc(sizeof *cnt * (size_t)p);
        for (int i = 0; cnt && i < p; i++)
            cnt[i] = (size_t)coll_vec_at(rcounts, i);
        if (!cnt)
            rc = MPI_ERR_NO_MEM;
        else
            COLL_RUN(rc, how, req, comm, reduce_scatter, sbuf, rbuf, cnt, locus_dt_of(dt),
                     locus_op_of(op), &comm->coll);
        if (cnt != few)
            free(cnt);
    } else if (rc == MPI_SUCCESS) {
        COLL_RUN(rc, how, req, comm, reduce_scatter_block, sbuf, rbuf, (size_t)rcount,
                 locus_dt_of(dt), locus_op_of(op), &comm->coll);
    }
    API_END(rc, comm, fn);
}

/* A blocking reduce_scatter of nothing (first block empty: worth
 * looking) ends after its checks, before redscat_run's frame: 21 ns a
 * call took, Open MPI's 8.6. */
COLL_INLINE
redscat_entry(const void *sbuf, void *rbuf, coll_vec_t rcounts, MPI_Count rcount,
              MPI_Datatype dt, MPI_Op op, MPI_Comm comm_h, coll_how_t how, MPI_Request *req,
              const char *fn)
{
    MPI_Count mine = rcount, total;
    if (how == COLL_BLOCKING && (rcounts.p ? coll_vec_at(rcounts, 0) : rcount) == 0 &&
        locus_mpi_active() && !locus_comm_is_inter(comm_h) &&
        redscat_checks(sbuf, rbuf, rcounts, &mine, &total, dt, op, locus_comm_of(comm_h)) ==
            MPI_SUCCESS &&
        total == 0)
        return MPI_SUCCESS;
    return redscat_run(sbuf, rbuf, rcounts, rcount, dt, op, comm_h, how, req, fn);
}

/* The v form needs its counts (a NULL array is not the block form). */
COLL_INLINE
redscat_v(const void *sbuf, void *rbuf, coll_vec_t rcounts, MPI_Datatype dt, MPI_Op op,
          MPI_Comm comm, coll_how_t how, MPI_Request *req, const char *fn)
{
    if (!rcounts.p) {
        LOCUS_CHECK_INIT(fn);
        return locus_mpi_err(locus_comm_of(comm), MPI_ERR_ARG, fn);
    }
    return redscat_entry(sbuf, rbuf, rcounts, 0, dt, op, comm, how, req, fn);
}

#define REDSCAT_API(S, CT)                                                          \
    COLL_API(Reduce_scatter, Ireduce_scatter, S,                                    \
             (const void *sbuf, void *rbuf, const CT rcounts[], MPI_Datatype dt, MPI_Op op, \
              MPI_Comm comm),                                                       \
             redscat_v(sbuf, rbuf, COLL_VEC(rcounts), dt, op, comm, how_, req_, fn_)) \
    COLL_API(Reduce_scatter_block, Ireduce_scatter_block, S,                        \
             (const void *sbuf, void *rbuf, CT rcount, MPI_Datatype dt, MPI_Op op,  \
              MPI_Comm comm),                                                       \
             redscat_entry(sbuf, rbuf, (coll_vec_t){ 0 }, rcount, dt, op, comm, how_, req_, fn_))
REDSCAT_API(, int)
REDSCAT_API(_c, MPI_Count)

/* ---- scan, exscan ---- */

static int scan_run(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op,
                    int exclusive, MPI_Comm comm_h, coll_how_t how, MPI_Request *req,
                    const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    if (locus_comm_is_inter(comm_h))   /* intercommunicators: intercomm_coll.c */
        return locus_intercomm_scan(comm_h, fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    int rc = locus_check_comm(comm);
    if (rc == MPI_SUCCESS)
        rc = coll_check_reduce(sbuf, rbuf, count, dt, op, -1, comm);
    COLL_CHECK_REQ(rc, how, req);
    if (rc == MPI_SUCCESS && exclusive)
        COLL_RUN(rc, how, req, comm, exscan, sbuf, rbuf, (size_t)count, locus_dt_of(dt),
                 locus_op_of(op), &comm->coll);
    else if (rc == MPI_SUCCESS)
        COLL_RUN(rc, how, req, comm, scan, sbuf, rbuf, (size_t)count, locus_dt_of(dt),
                 locus_op_of(op), &comm->coll);
    API_END(rc, comm, fn);
}

#define SCAN_API(S, CT)                                                             \
    COLL_API(Scan, Iscan, S,                                                        \
             (const void *sbuf, void *rbuf, CT count, MPI_Datatype dt, MPI_Op op,   \
              MPI_Comm comm),                                                       \
             scan_run(sbuf, rbuf, count, dt, op, 0, comm, how_, req_, fn_))         \
    COLL_API(Exscan, Iexscan, S,                                                    \
             (const void *sbuf, void *rbuf, CT count, MPI_Datatype dt, MPI_Op op,   \
              MPI_Comm comm),                                                       \
             scan_run(sbuf, rbuf, count, dt, op, 1, comm, how_, req_, fn_))
SCAN_API(, int)
SCAN_API(_c, MPI_Count)

/* ---- MPI_Reduce_local ---- */

static int reduce_local(const void *in, void *inout, MPI_Count count, MPI_Datatype dt,
                        MPI_Op op, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    int rc = count < 0 ? MPI_ERR_COUNT : locus_check_dtype(dt);
    locus_op_t *o = rc == MPI_SUCCESS ? locus_op_of(op) : NULL;
    if (rc == MPI_SUCCESS)
        rc = o ? locus_op_check(o, locus_dt_of(dt)) : MPI_ERR_OP;
    if (rc == MPI_SUCCESS)
        rc = coll_check_part(in, count, dt);
    if (rc == MPI_SUCCESS)
        rc = coll_check_part(inout, count, dt);
    if (rc == MPI_SUCCESS)
        rc = locus_op_reduce(o, locus_dt_of(dt), (size_t)count, in, inout);
    API_END(rc, NULL, fn);
}

LOCUS_PMPI_WEAK(Reduce_local)
int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
                      MPI_Op op)
{
    return reduce_local(inbuf, inoutbuf, count, datatype, op, "MPI_Reduce_local");
}

LOCUS_PMPI_WEAK(Reduce_local_c)
int PMPI_Reduce_local_c(const void *inbuf, void *inoutbuf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Op op)
{
    return reduce_local(inbuf, inoutbuf, count, datatype, op, "MPI_Reduce_local_c");
}
