/*
 * Collectives on intercommunicators: the hooks of intercomm_coll.h. Each
 * checks the call with the intercommunicator's rules, brings vectors to
 * the collective layer's form and runs its inter_* algorithm (coll_inter.c)
 * on the two views of the communicator: the remote group (c->coll) and the
 * local group (c->local->coll).
 */
#include <stdlib.h>

#include "comm/comm.h"
#include "intercomm_coll.h"

/* Roots pass to the collective layer as they are. */
_Static_assert(MPI_ROOT == LOCUS_COLL_ROOT && MPI_PROC_NULL == LOCUS_COLL_NO_ROOT,
               "the collective layer's root markers are MPI's");

/* Runs inter_<name>(args..., views) to completion or as a request. */
#define INTER_RUN(rc, how, c, req, name, ...)                                       \
    do {                                                                            \
        if ((how) == LOCUS_HOW_BLOCKING) {                                               \
            (rc) = locus_coll_inter_##name(__VA_ARGS__, &(c)->coll, &(c)->local->coll); \
        } else {                                                                    \
            locus_coll_sched_t *s_;                                                 \
            (rc) = locus_coll_iinter_##name(__VA_ARGS__, &(c)->coll, &(c)->local->coll, \
                                            &s_);                                   \
            if ((rc) == MPI_SUCCESS)                                                \
                (rc) = coll_request((c), s_, (how), (req));                         \
        }                                                                           \
    } while (0)

static int inter_end(locus_comm_t *c, int rc, const char *fn)
{
    return rc == MPI_SUCCESS ? MPI_SUCCESS : locus_mpi_err(c, rc, fn);
}

/* The communicator (an intercommunicator) and the request argument. */
static int inter_check(MPI_Comm comm, locus_how_t how, MPI_Request *req, locus_comm_t **c)
{
    *c = locus_comm_of(comm);
    if (!locus_comm_valid(*c) || !(*c)->local)
        return MPI_ERR_COMM;
    return how != LOCUS_HOW_BLOCKING && !req ? MPI_ERR_ARG : MPI_SUCCESS;
}

static int root_check(const locus_comm_t *c, int root)
{
    if (root == MPI_ROOT || root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    return root >= 0 && root < c->coll.size ? MPI_SUCCESS : MPI_ERR_ROOT;
}

/* A (count, type, buffer) that matters on this process. No MPI_IN_PLACE;
 * NULL is MPI_BOTTOM in the ABI (absolute addresses), so it is no error. */
static int part_check(const void *buf, MPI_Count count, MPI_Datatype dt)
{
    if (buf == MPI_IN_PLACE)
        return MPI_ERR_BUFFER;
    if (count < 0)
        return MPI_ERR_COUNT;
    return locus_check_dtype(dt);
}

static int op_check(MPI_Op op, MPI_Datatype dt)
{
    locus_op_t *o = locus_op_of(op);
    return o ? locus_op_check(o, locus_dt_of(dt)) : MPI_ERR_OP;
}

/*
 * n counts (and, with dsp, displacements times `unit` bytes) as the
 * collective layer takes them: one allocation, counts first. *total gets
 * the counts' sum.
 */
static int vec_get(locus_ivec_t counts, locus_ivec_t displs, int n, ptrdiff_t unit, size_t **cnt,
                   ptrdiff_t **dsp, MPI_Count *total)
{
    *cnt = NULL;
    *total = 0;
    if (!counts.p || (dsp && !displs.p))
        return MPI_ERR_ARG;
    size_t *c = malloc((sizeof *c + sizeof(ptrdiff_t)) * (size_t)(n + 1));
    if (!c)
        return MPI_ERR_NO_MEM;
    ptrdiff_t *d = (ptrdiff_t *)(c + n + 1);
    for (int i = 0; i < n; i++) {
        MPI_Count k = locus_ivec_at(counts, i);
        if (k < 0) {
            free(c);
            return MPI_ERR_COUNT;
        }
        c[i] = (size_t)k;
        *total += k;
        if (dsp)
            d[i] = unit * (ptrdiff_t)locus_ivec_at(displs, i);
    }
    *cnt = c;
    if (dsp)
        *dsp = d;
    return MPI_SUCCESS;
}

/* n uniform counts and displacements (i * count * unit). */
static size_t *vec_uniform(MPI_Count count, int n, ptrdiff_t unit, ptrdiff_t **dsp)
{
    size_t *c = malloc((sizeof *c + sizeof **dsp) * (size_t)(n + 1));
    if (!c)
        return NULL;
    *dsp = (ptrdiff_t *)(c + n + 1);
    for (int i = 0; i < n; i++) {
        c[i] = (size_t)count;
        (*dsp)[i] = (ptrdiff_t)i * (ptrdiff_t)count * unit;
    }
    return c;
}

/* Either form's counts: the vector, or count for each of n. */
static int counts_of(int vform, MPI_Count count, locus_ivec_t counts, locus_ivec_t displs, int n,
                     ptrdiff_t unit, size_t **cnt, ptrdiff_t **dsp, MPI_Count *total)
{
    if (vform)
        return vec_get(counts, displs, n, unit, cnt, dsp, total);
    if (count < 0)
        return MPI_ERR_COUNT;
    *total = count;   /* what one block needs (the buffer check's size) */
    *cnt = vec_uniform(count, n, unit, dsp);
    return *cnt ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static ptrdiff_t extent_of(MPI_Datatype dt)
{
    ptrdiff_t lb, ext;
    locus_dtype_extent(locus_dt_of(dt), &lb, &ext);
    return ext;
}

static locus_dtype_t *byte_type(void)
{
    return locus_dtype_basic(LOCUS_EL_BYTE);
}

/* ---- barrier, bcast ---- */

int locus_intercomm_barrier(MPI_Comm comm, locus_how_t how, MPI_Request *req, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *c;
    int rc = inter_check(comm, how, req, &c);
    if (!rc && how == LOCUS_HOW_BLOCKING) {
        rc = locus_coll_inter_barrier(&c->coll, &c->local->coll);
    } else if (!rc) {
        locus_coll_sched_t *s;
        rc = locus_coll_iinter_barrier(&c->coll, &c->local->coll, &s);
        if (!rc)
            rc = coll_request(c, s, how, req);
    }
    return inter_end(c, rc, fn);
}

int locus_intercomm_bcast(void *buf, MPI_Count count, MPI_Datatype dt, int root, MPI_Comm comm,
                          locus_how_t how, MPI_Request *req, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *c;
    int rc = inter_check(comm, how, req, &c);
    if (!rc)
        rc = root_check(c, root);
    /* The buffer matters at the root and in the other group. */
    int part = root != MPI_PROC_NULL;
    if (!rc && part)
        rc = part_check(buf, count, dt);
    if (!rc)
        INTER_RUN(rc, how, c, req, bcast, buf, part ? (size_t)count : 0,
                  part ? locus_dt_of(dt) : byte_type(), root);
    return inter_end(c, rc, fn);
}

/* ---- reductions ---- */

/* The checks of a reduction on the processes that send or receive. */
static int reduce_check(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt,
                        MPI_Op op, int sends, int receives)
{
    int rc = locus_check_dtype(dt);
    if (!rc)
        rc = op_check(op, dt);
    if (!rc && sends)
        rc = part_check(sbuf, count, dt);
    if (!rc && receives)
        rc = part_check(rbuf, count, dt);
    return rc;
}

int locus_intercomm_reduce(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt,
                           MPI_Op op, int root, MPI_Comm comm, locus_how_t how,
                           MPI_Request *req, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *c;
    int rc = inter_check(comm, how, req, &c);
    if (!rc)
        rc = root_check(c, root);
    int sends = root >= 0, receives = root == MPI_ROOT, part = sends || receives;
    if (!rc && part)
        rc = reduce_check(sbuf, rbuf, count, dt, op, sends, receives);
    if (!rc)
        INTER_RUN(rc, how, c, req, reduce, sbuf, rbuf, part ? (size_t)count : 0,
                  part ? locus_dt_of(dt) : byte_type(),
                  part ? locus_op_of(op) : locus_op_predefined(LOCUS_OP_MAX), root);
    return inter_end(c, rc, fn);
}

int locus_intercomm_allreduce(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt,
                              MPI_Op op, MPI_Comm comm, locus_how_t how, MPI_Request *req,
                              const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *c;
    int rc = inter_check(comm, how, req, &c);
    if (!rc)
        rc = reduce_check(sbuf, rbuf, count, dt, op, 1, 1);
    if (!rc)
        INTER_RUN(rc, how, c, req, allreduce, sbuf, rbuf, (size_t)count, locus_dt_of(dt),
                  locus_op_of(op));
    return inter_end(c, rc, fn);
}

int locus_intercomm_reduce_scatter(const void *sbuf, void *rbuf, locus_ivec_t rcounts,
                                   MPI_Count rcount, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                                   locus_how_t how, MPI_Request *req, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *c;
    int rc = inter_check(comm, how, req, &c);
    int n = rc ? 0 : c->local->coll.size;
    size_t *cnt = NULL;
    ptrdiff_t *dsp;
    MPI_Count total = 0;
    if (!rc && rcounts.p) {
        rc = vec_get(rcounts, rcounts, n, 1, &cnt, NULL, &total);
    } else if (!rc) {
        rc = rcount < 0 ? MPI_ERR_COUNT : MPI_SUCCESS;
        if (!rc && !(cnt = vec_uniform(rcount, n, 1, &dsp)))
            rc = MPI_ERR_NO_MEM;
        total = rcount * n;
    }
    /* The send buffer holds the whole vector, the receive buffer my block. */
    if (!rc)
        rc = reduce_check(sbuf, rbuf, total, dt, op, 1, 0);
    if (!rc)
        rc = part_check(rbuf, (MPI_Count)cnt[c->local->coll.rank], dt);
    if (!rc)
        INTER_RUN(rc, how, c, req, reduce_scatter, sbuf, rbuf, cnt, locus_dt_of(dt),
                  locus_op_of(op));
    free(cnt);
    return inter_end(c, rc, fn);
}

/* ---- gather, scatter: the root with every remote process ---- */

/* A gather's or scatter's vector (the root's side) in the collective
 * layer's form, and the types each side moves: bytes where nothing moves. */
typedef struct {
    size_t *cnt;
    ptrdiff_t *dsp;
    locus_dtype_t *vdt, *bdt;
} rooted_t;

/* The checks of a gather (scatter): at the root its receive (send) vector
 * vbuf, at a remote process its one send (receive) block buf. */
static int rooted_get(const locus_comm_t *c, int root, int vform, const void *vbuf,
                      MPI_Count vcount, locus_ivec_t vcounts, locus_ivec_t displs, MPI_Datatype vdt,
                      const void *buf, MPI_Count count, MPI_Datatype dt, rooted_t *r)
{
    *r = (rooted_t){ NULL, NULL, byte_type(), byte_type() };
    int rc = root_check(c, root);
    if (!rc && root == MPI_ROOT) {
        MPI_Count total = 0;
        rc = counts_of(vform, vcount, vcounts, displs, c->coll.size, 1, &r->cnt, &r->dsp,
                       &total);
        if (!rc)
            rc = part_check(vbuf, total, vdt);
        r->vdt = rc ? r->vdt : locus_dt_of(vdt);
    } else if (!rc && root != MPI_PROC_NULL) {
        rc = part_check(buf, count, dt);
        r->bdt = rc ? r->bdt : locus_dt_of(dt);
    }
    return rc;
}

int locus_intercomm_gather(const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
                           MPI_Count rcount, locus_ivec_t rcounts, locus_ivec_t displs,
                           MPI_Datatype rdt, int root, MPI_Comm comm, locus_how_t how,
                           MPI_Request *req, const char *fn, int vform)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *c;
    rooted_t r = { NULL, NULL, NULL, NULL };
    int rc = inter_check(comm, how, req, &c);
    if (!rc)
        rc = rooted_get(c, root, vform, rbuf, rcount, rcounts, displs, rdt, sbuf, scount, sdt, &r);
    if (!rc)
        INTER_RUN(rc, how, c, req, gatherv, sbuf, root >= 0 ? (size_t)scount : 0, r.bdt, rbuf,
                  r.cnt, r.dsp, r.vdt, root);
    free(r.cnt);
    return inter_end(c, rc, fn);
}

int locus_intercomm_scatter(const void *sbuf, MPI_Count scount, locus_ivec_t scounts,
                            locus_ivec_t displs, MPI_Datatype sdt, void *rbuf, MPI_Count rcount,
                            MPI_Datatype rdt, int root, MPI_Comm comm, locus_how_t how,
                            MPI_Request *req, const char *fn, int vform)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *c;
    rooted_t r = { NULL, NULL, NULL, NULL };
    int rc = inter_check(comm, how, req, &c);
    if (!rc)
        rc = rooted_get(c, root, vform, sbuf, scount, scounts, displs, sdt, rbuf, rcount, rdt, &r);
    if (!rc)
        INTER_RUN(rc, how, c, req, scatterv, sbuf, r.cnt, r.dsp, r.vdt, rbuf,
                  root >= 0 ? (size_t)rcount : 0, r.bdt, root);
    free(r.cnt);
    return inter_end(c, rc, fn);
}

/* ---- allgather, alltoall: every process with every remote one ---- */

int locus_intercomm_allgather(const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
                              MPI_Count rcount, locus_ivec_t rcounts, locus_ivec_t displs,
                              MPI_Datatype rdt, MPI_Comm comm, locus_how_t how,
                              MPI_Request *req, const char *fn, int vform)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *c;
    int rc = inter_check(comm, how, req, &c);
    if (!rc)
        rc = part_check(sbuf, scount, sdt);
    size_t *cnt = NULL;
    ptrdiff_t *dsp = NULL;
    MPI_Count total = 0;
    if (!rc)
        rc = counts_of(vform, rcount, rcounts, displs, c->coll.size, 1, &cnt, &dsp, &total);
    if (!rc)
        rc = part_check(rbuf, total, rdt);
    if (!rc)
        INTER_RUN(rc, how, c, req, allgatherv, sbuf, (size_t)scount, locus_dt_of(sdt), rbuf, cnt,
                  dsp, locus_dt_of(rdt));
    free(cnt);
    return inter_end(c, rc, fn);
}

/* One side of an all-to-all in the collective layer's form. */
typedef struct {
    size_t *cnt;
    ptrdiff_t *dsp;
    locus_dtype_t **dts;
} a2a_side_t;

static int a2a_side(const void *buf, MPI_Count count, locus_ivec_t counts, locus_ivec_t displs,
                    MPI_Datatype dt, const MPI_Datatype *dts, int form, int n, a2a_side_t *s)
{
    if (form == 2 && !dts)
        return MPI_ERR_ARG;
    if (form < 2 && locus_check_dtype(dt) != MPI_SUCCESS)
        return MPI_ERR_TYPE;
    if (!(s->dts = malloc(sizeof *s->dts * (size_t)(n + 1))))
        return MPI_ERR_NO_MEM;
    MPI_Count total;
    /* alltoall/v: displacements in elements of dt; w: in bytes. */
    int rc = counts_of(form > 0, count, counts, displs, n, form == 2 ? 1 : extent_of(dt),
                       &s->cnt, &s->dsp, &total);
    for (int i = 0; !rc && i < n; i++) {
        MPI_Datatype t = form == 2 ? dts[i] : dt;
        rc = part_check(buf, (MPI_Count)s->cnt[i], t);
        s->dts[i] = locus_dt_of(t);
    }
    return rc;
}

int locus_intercomm_alltoall(const void *sbuf, MPI_Count scount, locus_ivec_t scounts,
                             locus_ivec_t sdispls, MPI_Datatype sdt, const MPI_Datatype *sdts,
                             void *rbuf, MPI_Count rcount, locus_ivec_t rcounts,
                             locus_ivec_t rdispls, MPI_Datatype rdt, const MPI_Datatype *rdts,
                             int form, MPI_Comm comm, locus_how_t how, MPI_Request *req,
                             const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *c;
    int rc = inter_check(comm, how, req, &c);
    a2a_side_t s = { NULL, NULL, NULL }, r = { NULL, NULL, NULL };
    int n = rc ? 0 : c->coll.size;
    if (!rc)
        rc = a2a_side(sbuf, scount, scounts, sdispls, sdt, sdts, form, n, &s);
    if (!rc)
        rc = a2a_side(rbuf, rcount, rcounts, rdispls, rdt, rdts, form, n, &r);
    if (!rc)
        INTER_RUN(rc, how, c, req, alltoallw, sbuf, s.cnt, s.dsp, s.dts, rbuf, r.cnt, r.dsp,
                  r.dts);
    free(s.cnt);
    free(s.dts);
    free(r.cnt);
    free(r.dts);
    return inter_end(c, rc, fn);
}

int locus_intercomm_scan(MPI_Comm comm, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    return locus_mpi_err(locus_comm_of(comm), MPI_ERR_COMM, fn);
}
