/*
 * coll_api_gather.c — the MPI collective calls that move blocks: gather(v),
 * scatter(v), allgather(v), alltoall(v,w): the implementation of their
 * blocking, nonblocking and persistent forms, with int counts and as `_c`
 * forms (generated). The v forms' counts and displacements of either width are
 * converted to the collective layer's sizes for the call (the layer keeps
 * nothing of them).
 */
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "intercomm_coll.h"

#define API_END(rc, comm, fn) return (rc) == MPI_SUCCESS ? MPI_SUCCESS : locus_mpi_err(comm, rc, fn)

static const locus_ivec_t no_vec = { NULL, 0 };

/* A blocking collective of uniform blocks (gather, scatter, allgather,
 * alltoall) whose blocks are empty ends after its checks (COLL_INLINE,
 * coll.h). Whether a blocking call on comm_h may take that short way
 * at all: */
static inline int blocks_short_way(locus_how_t how, MPI_Comm comm_h)
{
    return how == LOCUS_HOW_BLOCKING && locus_mpi_active() && !locus_comm_is_inter(comm_h);
}

/* ---- gather(v), scatter(v) ---- */

/* rcounts.p NULL: MPI_Gather with rcount from each rank. */
COLL_INLINE gather_checks(const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
                          MPI_Count rcount, locus_ivec_t rcounts, locus_ivec_t displs, MPI_Datatype rdt,
                          int root, const locus_comm_t *comm, int vform)
{
    int rc = locus_check_comm(comm);
    if (rc == MPI_SUCCESS)
        rc = locus_check_root(comm, root);
    if (rc == MPI_SUCCESS && !(comm->coll.rank == root && sbuf == MPI_IN_PLACE))
        rc = sbuf == MPI_IN_PLACE ? MPI_ERR_BUFFER : coll_check_part(sbuf, scount, sdt);
    if (rc == MPI_SUCCESS && comm->coll.rank == root)
        rc = vform ? coll_check_counts(rcounts, displs, comm->coll.size, rdt, rbuf)
                   : coll_check_part(rbuf, rcount, rdt);
    return rc;
}

COLL_INLINE scatter_checks(const void *sbuf, MPI_Count scount, locus_ivec_t scounts,
                           locus_ivec_t displs, MPI_Datatype sdt, void *rbuf, MPI_Count rcount,
                           MPI_Datatype rdt, int root, const locus_comm_t *comm, int vform)
{
    int rc = locus_check_comm(comm);
    if (rc == MPI_SUCCESS)
        rc = locus_check_root(comm, root);
    int me_root = rc == MPI_SUCCESS && comm->coll.rank == root;
    if (rc == MPI_SUCCESS && me_root)
        rc = vform ? coll_check_counts(scounts, displs, comm->coll.size, sdt, sbuf)
                   : coll_check_part(sbuf, scount, sdt);
    if (rc == MPI_SUCCESS && !(me_root && rbuf == MPI_IN_PLACE))
        rc = rbuf == MPI_IN_PLACE ? MPI_ERR_BUFFER : coll_check_part(rbuf, rcount, rdt);
    return rc;
}

/* Gather (gathering) or scatter: the root's counts and displacements
 * (the v forms) are on its receive side in a gather, its send side in a
 * scatter. */
COLL_INLINE rooted_checks(int gathering, const void *sbuf, MPI_Count scount, MPI_Datatype sdt,
                          void *rbuf, MPI_Count rcount, MPI_Datatype rdt, locus_ivec_t counts,
                          locus_ivec_t displs, int root, const locus_comm_t *comm, int vform)
{
    return gathering ? gather_checks(sbuf, scount, sdt, rbuf, rcount, counts, displs, rdt, root,
                                     comm, vform)
                     : scatter_checks(sbuf, scount, counts, displs, sdt, rbuf, rcount, rdt, root,
                                      comm, vform);
}

COLL_OUT_OF_LINE rooted_run(int gathering, const void *sbuf, MPI_Count scount, MPI_Datatype sdt,
                            void *rbuf, MPI_Count rcount, MPI_Datatype rdt, locus_ivec_t counts,
                            locus_ivec_t displs, int root, MPI_Comm comm_h, locus_how_t how,
                            MPI_Request *req, const char *fn, int vform)
{
    LOCUS_CHECK_INIT(fn);
    if (locus_comm_is_inter(comm_h))   /* intercommunicators: intercomm_coll.c */
        return gathering ? locus_intercomm_gather(sbuf, scount, sdt, rbuf, rcount, counts, displs,
                                                  rdt, root, comm_h, how, req, fn, vform)
                         : locus_intercomm_scatter(sbuf, scount, counts, displs, sdt, rbuf,
                                                   rcount, rdt, root, comm_h, how, req, fn,
                                                   vform);
    locus_comm_t *comm = locus_comm_of(comm_h);
    int rc = rooted_checks(gathering, sbuf, scount, sdt, rbuf, rcount, rdt, counts, displs, root,
                           comm, vform);
    COLL_CHECK_REQ(rc, how, req);
    if (rc != MPI_SUCCESS)
        API_END(rc, comm, fn);
    /* The root's blocks and each other rank's block have the same size:
     * my receive side tells at a gather's root and a scatter's others. */
    int me_root = comm->coll.rank == root, recv_side = me_root == gathering;
    if (!vform && coll_moves_nothing(how, recv_side ? rcount : scount, recv_side ? rdt : sdt))
        return MPI_SUCCESS;
    locus_dtype_t *sd = locus_dt_of(sdt), *rd = locus_dt_of(rdt);
    if (!vform) {
        if (gathering)
            COLL_RUN(rc, how, req, comm, gather, sbuf, (size_t)scount, sd, rbuf, (size_t)rcount,
                     rd, root, &comm->coll);
        else
            COLL_RUN(rc, how, req, comm, scatter, sbuf, (size_t)scount, sd, rbuf,
                     (size_t)rcount, rd, root, &comm->coll);
        API_END(rc, comm, fn);
    }
    ptrdiff_t *d = NULL;
    size_t *c = me_root ? coll_counts_convert(counts, displs, comm->coll.size, &d) : NULL;
    if (me_root && !c)
        rc = MPI_ERR_NO_MEM;
    else if (gathering)
        COLL_RUN(rc, how, req, comm, gatherv, sbuf, (size_t)scount, sd, rbuf, c, d, rd, root,
                 &comm->coll);
    else
        COLL_RUN(rc, how, req, comm, scatterv, sbuf, c, d, sd, rbuf, (size_t)rcount, rd, root,
                 &comm->coll);
    free(c);
    API_END(rc, comm, fn);
}

/* ---- the gather and scatter calls ---- */

/* MPI_Gather (gathering) or MPI_Scatter: my block may be empty (the
 * root's side that counts is as large: its receive side in a gather, its
 * send side in a scatter). */
COLL_INLINE rooted_entry(int gathering, const void *sbuf, MPI_Count scount, MPI_Datatype sdt,
                         void *rbuf, MPI_Count rcount, MPI_Datatype rdt, int root, MPI_Comm comm_h,
                         locus_how_t how, MPI_Request *req, const char *fn)
{
    if ((scount == 0 || rcount == 0) && blocks_short_way(how, comm_h)) {
        const locus_comm_t *comm = locus_comm_of(comm_h);
        int rc = rooted_checks(gathering, sbuf, scount, sdt, rbuf, rcount, rdt, no_vec, no_vec,
                               root, comm, 0);
        if (rc == MPI_SUCCESS && ((comm->coll.rank == root) == gathering ? rcount : scount) == 0)
            return MPI_SUCCESS;
    }
    return rooted_run(gathering, sbuf, scount, sdt, rbuf, rcount, rdt, no_vec, no_vec, root,
                      comm_h, how, req, fn, 0);
}

int locus_gather_impl(locus_how_t how, const void *sbuf, MPI_Count scount, MPI_Datatype sdt,
                      void *rbuf, MPI_Count rcount, MPI_Datatype rdt, int root, MPI_Comm comm,
                      MPI_Info info, MPI_Request *req, const char *fn)
{
    (void)info;
    return rooted_entry(1, sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, how, req, fn);
}

int locus_gatherv_impl(locus_how_t how, const void *sbuf, MPI_Count scount, MPI_Datatype sdt,
                       void *rbuf, locus_ivec_t rcounts, locus_ivec_t displs, MPI_Datatype rdt,
                       int root, MPI_Comm comm, MPI_Info info, MPI_Request *req, const char *fn)
{
    (void)info;
    return rooted_run(1, sbuf, scount, sdt, rbuf, 0, rdt, rcounts, displs, root, comm, how, req,
                      fn, 1);
}

int locus_scatter_impl(locus_how_t how, const void *sbuf, MPI_Count scount, MPI_Datatype sdt,
                       void *rbuf, MPI_Count rcount, MPI_Datatype rdt, int root, MPI_Comm comm,
                       MPI_Info info, MPI_Request *req, const char *fn)
{
    (void)info;
    return rooted_entry(0, sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, how, req, fn);
}

int locus_scatterv_impl(locus_how_t how, const void *sbuf, locus_ivec_t scounts,
                        locus_ivec_t displs, MPI_Datatype sdt, void *rbuf, MPI_Count rcount,
                        MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Info info, MPI_Request *req,
                        const char *fn)
{
    (void)info;
    return rooted_run(0, sbuf, 0, sdt, rbuf, rcount, rdt, scounts, displs, root, comm, how, req,
                      fn, 1);
}

/* ---- allgather, allgatherv ---- */

COLL_INLINE allgather_checks(const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
                             MPI_Count rcount, locus_ivec_t rcounts, locus_ivec_t displs,
                             MPI_Datatype rdt, const locus_comm_t *comm, int vform)
{
    int rc = locus_check_comm(comm);
    if (rc == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        rc = coll_check_part(sbuf, scount, sdt);
    if (rc == MPI_SUCCESS)
        rc = vform ? coll_check_counts(rcounts, displs, comm->coll.size, rdt, rbuf)
                   : coll_check_part(rbuf, rcount, rdt);
    return rc;
}

COLL_OUT_OF_LINE allgather_run(const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
                               MPI_Count rcount, locus_ivec_t rcounts, locus_ivec_t displs,
                               MPI_Datatype rdt, MPI_Comm comm_h, locus_how_t how, MPI_Request *req,
                               const char *fn, int vform)
{
    LOCUS_CHECK_INIT(fn);
    if (locus_comm_is_inter(comm_h))   /* intercommunicators: intercomm_coll.c */
        return locus_intercomm_allgather(sbuf, scount, sdt, rbuf, rcount, rcounts, displs, rdt,
                                         comm_h, how, req, fn, vform);
    locus_comm_t *comm = locus_comm_of(comm_h);
    int rc = allgather_checks(sbuf, scount, sdt, rbuf, rcount, rcounts, displs, rdt, comm, vform);
    COLL_CHECK_REQ(rc, how, req);
    if (rc != MPI_SUCCESS)
        API_END(rc, comm, fn);
    if (!vform && coll_moves_nothing(how, rcount, rdt))
        return MPI_SUCCESS;
    if (!vform) {
        COLL_RUN(rc, how, req, comm, allgather, sbuf, (size_t)scount, locus_dt_of(sdt), rbuf,
                 (size_t)rcount, locus_dt_of(rdt), &comm->coll);
        API_END(rc, comm, fn);
    }
    ptrdiff_t *d;
    size_t *c = coll_counts_convert(rcounts, displs, comm->coll.size, &d);
    if (!c)
        rc = MPI_ERR_NO_MEM;
    else
        COLL_RUN(rc, how, req, comm, allgatherv, sbuf, (size_t)scount, locus_dt_of(sdt), rbuf, c,
                 d, locus_dt_of(rdt), &comm->coll);
    free(c);
    API_END(rc, comm, fn);
}

/* A blocking allgather or alltoall (whose checks are an allgather's)
 * with empty blocks, well formed: nothing to do. */
COLL_INLINE blocks_empty(const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
                         MPI_Count rcount, MPI_Datatype rdt, MPI_Comm comm_h, locus_how_t how)
{
    return rcount == 0 && blocks_short_way(how, comm_h) &&
           allgather_checks(sbuf, scount, sdt, rbuf, 0, no_vec, no_vec, rdt,
                            locus_comm_of(comm_h), 0) == MPI_SUCCESS;
}

COLL_INLINE allgather_entry(const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
                            MPI_Count rcount, MPI_Datatype rdt, MPI_Comm comm_h, locus_how_t how,
                            MPI_Request *req, const char *fn)
{
    if (blocks_empty(sbuf, scount, sdt, rbuf, rcount, rdt, comm_h, how))
        return MPI_SUCCESS;
    return allgather_run(sbuf, scount, sdt, rbuf, rcount, no_vec, no_vec, rdt, comm_h, how, req,
                         fn, 0);
}

int locus_allgather_impl(locus_how_t how, const void *sbuf, MPI_Count scount, MPI_Datatype sdt,
                         void *rbuf, MPI_Count rcount, MPI_Datatype rdt, MPI_Comm comm,
                         MPI_Info info, MPI_Request *req, const char *fn)
{
    (void)info;
    return allgather_entry(sbuf, scount, sdt, rbuf, rcount, rdt, comm, how, req, fn);
}

int locus_allgatherv_impl(locus_how_t how, const void *sbuf, MPI_Count scount, MPI_Datatype sdt,
                          void *rbuf, locus_ivec_t rcounts, locus_ivec_t displs, MPI_Datatype rdt,
                          MPI_Comm comm, MPI_Info info, MPI_Request *req, const char *fn)
{
    (void)info;
    return allgather_run(sbuf, scount, sdt, rbuf, 0, rcounts, displs, rdt, comm, how, req, fn, 1);
}

/* ---- alltoall, alltoallv, alltoallw ---- */

/* One side of an all-to-all: buffer, per-peer counts and displacements
 * (elements, or bytes for the w form), one type or per-peer types. */
typedef struct {
    const void *buf;
    MPI_Count count;              /* alltoall */
    locus_ivec_t counts, displs;    /* alltoallv/w */
    MPI_Datatype type;            /* alltoall(v) */
    const MPI_Datatype *types;    /* alltoallw */
} a2a_side_t;

static int a2a_side_check(const a2a_side_t *s, int p, int form)
{
    if (form == 0)
        return coll_check_part(s->buf, s->count, s->type);
    if (form == 1)
        return coll_check_counts(s->counts, s->displs, p, s->type, s->buf);
    if (!s->counts.p || !s->displs.p || !s->types)
        return MPI_ERR_ARG;
    int rc = MPI_SUCCESS;
    for (int i = 0; i < p && rc == MPI_SUCCESS; i++)
        rc = coll_check_part(s->buf, locus_ivec_at(s->counts, i), s->types[i]);
    return rc;
}

/* form: 0 alltoall, 1 alltoallv, 2 alltoallw. */
COLL_OUT_OF_LINE alltoall_run(const a2a_side_t *snd, const a2a_side_t *rcv, int form,
                              MPI_Comm comm_h, locus_how_t how, MPI_Request *req, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    if (locus_comm_is_inter(comm_h))   /* intercommunicators: intercomm_coll.c */
        return locus_intercomm_alltoall(snd->buf, snd->count, snd->counts, snd->displs, snd->type,
                                        snd->types, (void *)rcv->buf, rcv->count, rcv->counts,
                                        rcv->displs, rcv->type, rcv->types, form, comm_h, how, req,
                                        fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    int rc = locus_check_comm(comm), p = rc == MPI_SUCCESS ? comm->coll.size : 0;
    int in_place = snd->buf == MPI_IN_PLACE;
    if (rc == MPI_SUCCESS && !in_place)
        rc = a2a_side_check(snd, p, form);
    if (rc == MPI_SUCCESS)
        rc = a2a_side_check(rcv, p, form);
    COLL_CHECK_REQ(rc, how, req);
    if (rc != MPI_SUCCESS)
        API_END(rc, comm, fn);
    if (form == 0) {
        if (coll_moves_nothing(how, rcv->count, rcv->type))
            return MPI_SUCCESS;
        COLL_RUN(rc, how, req, comm, alltoall, snd->buf, (size_t)snd->count,
                 locus_dt_of(snd->type), (void *)rcv->buf, (size_t)rcv->count,
                 locus_dt_of(rcv->type), &comm->coll);
        API_END(rc, comm, fn);
    }
    /* In place, the send side is described by the receive side's arrays. */
    const a2a_side_t *sd_side = in_place ? rcv : snd;
    ptrdiff_t *sd, *rd;
    size_t *sc = coll_counts_convert(sd_side->counts, sd_side->displs, p, &sd);
    size_t *rc_ = coll_counts_convert(rcv->counts, rcv->displs, p, &rd);
    locus_dtype_t **st = form == 2 ? malloc(2 * sizeof *st * (size_t)(p > 0 ? p : 1)) : NULL;
    if (!sc || !rc_ || (form == 2 && !st)) {
        rc = MPI_ERR_NO_MEM;
    } else if (form == 1) {
        COLL_RUN(rc, how, req, comm, alltoallv, snd->buf, in_place ? NULL : sc,
                 in_place ? NULL : sd, locus_dt_of(snd->type), (void *)rcv->buf, rc_, rd,
                 locus_dt_of(rcv->type), &comm->coll);
    } else {
        locus_dtype_t **rt = st + p;
        for (int i = 0; i < p; i++) {
            st[i] = locus_dt_of(sd_side->types[i]);
            rt[i] = locus_dt_of(rcv->types[i]);
        }
        COLL_RUN(rc, how, req, comm, alltoallw, snd->buf, sc, sd, st, (void *)rcv->buf, rc_, rd,
                 rt, &comm->coll);
    }
    free(st);
    free(sc);
    free(rc_);
    API_END(rc, comm, fn);
}

/* The sides of each form, from the arguments as the standard names them. */
#define A2A_SIDE(buf, count, type) (&(a2a_side_t){ (buf), (count), no_vec, no_vec, (type), NULL })
#define A2AV_SIDE(buf, counts, displs, type)                                        \
    (&(a2a_side_t){ (buf), 0, (counts), (displs), (type), NULL })
#define A2AW_SIDE(buf, counts, displs, types)                                       \
    (&(a2a_side_t){ (buf), 0, (counts), (displs), MPI_DATATYPE_NULL, (types) })

/* MPI_Alltoall: the short way without building the sides. */
COLL_INLINE alltoall_entry(const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
                           MPI_Count rcount, MPI_Datatype rdt, MPI_Comm comm_h, locus_how_t how,
                           MPI_Request *req, const char *fn)
{
    if (blocks_empty(sbuf, scount, sdt, rbuf, rcount, rdt, comm_h, how))
        return MPI_SUCCESS;
    return alltoall_run(A2A_SIDE(sbuf, scount, sdt), A2A_SIDE(rbuf, rcount, rdt), 0, comm_h, how,
                        req, fn);
}

int locus_alltoall_impl(locus_how_t how, const void *sbuf, MPI_Count scount, MPI_Datatype sdt,
                        void *rbuf, MPI_Count rcount, MPI_Datatype rdt, MPI_Comm comm,
                        MPI_Info info, MPI_Request *req, const char *fn)
{
    (void)info;
    return alltoall_entry(sbuf, scount, sdt, rbuf, rcount, rdt, comm, how, req, fn);
}

int locus_alltoallv_impl(locus_how_t how, const void *sbuf, locus_ivec_t scounts,
                         locus_ivec_t sdispls, MPI_Datatype sdt, void *rbuf, locus_ivec_t rcounts,
                         locus_ivec_t rdispls, MPI_Datatype rdt, MPI_Comm comm, MPI_Info info,
                         MPI_Request *req, const char *fn)
{
    (void)info;
    return alltoall_run(A2AV_SIDE(sbuf, scounts, sdispls, sdt),
                        A2AV_SIDE(rbuf, rcounts, rdispls, rdt), 1, comm, how, req, fn);
}

int locus_alltoallw_impl(locus_how_t how, const void *sbuf, locus_ivec_t scounts,
                         locus_ivec_t sdispls, const MPI_Datatype sdts[], void *rbuf,
                         locus_ivec_t rcounts, locus_ivec_t rdispls, const MPI_Datatype rdts[],
                         MPI_Comm comm, MPI_Info info, MPI_Request *req, const char *fn)
{
    (void)info;
    return alltoall_run(A2AW_SIDE(sbuf, scounts, sdispls, sdts),
                        A2AW_SIDE(rbuf, rcounts, rdispls, rdts), 2, comm, how, req, fn);
}
