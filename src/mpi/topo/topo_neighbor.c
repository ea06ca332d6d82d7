/*
 * topo_neighbor.c — the neighbourhood collectives (MPI_Neighbor_
 * allgather(v), alltoall(v,w)) on Cartesian, graph and distributed-graph
 * communicators: one implementation for the blocking, nonblocking
 * (MPI_Ineighbor_*), persistent (MPI_Neighbor_*_init) and `_c` forms of
 * each (generated). Every form becomes the collective layer's one
 * neighbourhood schedule (src/coll/coll_neighbor.c) over the neighbours
 * the topology lists (topo.c): per-neighbour counts, byte displacements
 * and types.
 */
#include <stdlib.h>

#include "coll/coll.h"
#include "topo.h"

static const locus_ivec_t no_vec = { NULL, 0 };

/* Forms: how the blocks of each side are laid out. */
enum { NB_ALLGATHER, NB_ALLGATHERV, NB_ALLTOALL, NB_ALLTOALLV, NB_ALLTOALLW };

/* One side as the user gave it. */
typedef struct {
    const void *buf;
    MPI_Count count;              /* allgather, alltoall */
    locus_ivec_t counts, displs;    /* the v and w forms */
    MPI_Datatype type;            /* all but w */
    const MPI_Datatype *types;    /* w */
} nb_side_t;

/* One side in the collective layer's form, for n neighbours. */
typedef struct {
    size_t *cnt;
    ptrdiff_t *dsp;
    locus_dtype_t **dts;
} nb_blocks_t;

static void blocks_free(nb_blocks_t *b)
{
    free(b->cnt);
    free(b->dsp);
    free(b->dts);
}

/*
 * The blocks of side s for n neighbours: `repeat` sends the same block to
 * every neighbour (allgather's send side); `vector` takes per-neighbour
 * counts and displacements (in elements of the type, or in bytes with
 * per-neighbour types). Checks counts and types; the buffer may be
 * MPI_BOTTOM (NULL in the ABI), so NULL is no error.
 */
static int blocks_make(const nb_side_t *s, int n, int repeat, int vector, nb_blocks_t *b)
{
    b->cnt = malloc(sizeof *b->cnt * (size_t)(n + 1));
    b->dsp = malloc(sizeof *b->dsp * (size_t)(n + 1));
    b->dts = malloc(sizeof *b->dts * (size_t)(n + 1));
    if (!b->cnt || !b->dsp || !b->dts)
        return MPI_ERR_NO_MEM;
    if (s->buf == MPI_IN_PLACE)
        return MPI_ERR_BUFFER;
    if (vector && (!s->counts.p || !s->displs.p))
        return MPI_ERR_ARG;
    if (!s->types && locus_check_dtype(s->type) != MPI_SUCCESS)
        return MPI_ERR_TYPE;
    ptrdiff_t ext = 0, lb;
    if (!s->types)
        locus_dtype_extent(locus_dt_of(s->type), &lb, &ext);
    for (int i = 0; i < n; i++) {
        MPI_Datatype t = s->types ? s->types[i] : s->type;
        MPI_Count k = vector ? locus_ivec_at(s->counts, i) : s->count;
        /* A NULL buffer is MPI_BOTTOM (absolute displacements): legal. */
        if (k < 0)
            return MPI_ERR_COUNT;
        if (locus_check_dtype(t) != MPI_SUCCESS)
            return MPI_ERR_TYPE;
        b->cnt[i] = (size_t)k;
        b->dts[i] = locus_dt_of(t);
        if (repeat)
            b->dsp[i] = 0;
        else if (!vector)
            b->dsp[i] = (ptrdiff_t)i * (ptrdiff_t)k * ext;
        else
            b->dsp[i] = (ptrdiff_t)locus_ivec_at(s->displs, i) * (s->types ? 1 : ext);
    }
    return MPI_SUCCESS;
}

static int neighbor_run(const nb_side_t *snd, const nb_side_t *rcv, int form, MPI_Comm comm_h,
                        locus_how_t how, MPI_Request *req, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    int rc = locus_check_comm(comm);
    if (rc == MPI_SUCCESS && comm->local)
        rc = MPI_ERR_COMM;
    locus_ptopo_t *t = rc == MPI_SUCCESS ? locus_ptopo_of(comm, 0) : NULL;
    if (rc == MPI_SUCCESS && !t)
        rc = MPI_ERR_TOPOLOGY;
    COLL_CHECK_REQ(rc, how, req);
    nb_blocks_t s = { NULL, NULL, NULL }, r = { NULL, NULL, NULL };
    int allgather = form == NB_ALLGATHER || form == NB_ALLGATHERV;
    if (rc == MPI_SUCCESS)
        rc = blocks_make(snd, t->nbrs.ndst, allgather,
                         form == NB_ALLTOALLV || form == NB_ALLTOALLW, &s);
    if (rc == MPI_SUCCESS)
        rc = blocks_make(rcv, t->nbrs.nsrc, 0,
                         form == NB_ALLGATHERV || form == NB_ALLTOALLV || form == NB_ALLTOALLW,
                         &r);
    if (rc == MPI_SUCCESS)
        COLL_RUN(rc, how, req, comm, neighbor_alltoallw, snd->buf, s.cnt, s.dsp, s.dts,
                 (void *)rcv->buf, r.cnt, r.dsp, r.dts, &t->nbrs, &comm->coll);
    blocks_free(&s);
    blocks_free(&r);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : locus_mpi_err(comm, rc, fn);
}

/* The sides of each form, from the arguments as the standard names them. */
#define NB_ONE(buf, count, type) (&(nb_side_t){ (buf), (count), no_vec, no_vec, (type), NULL })
#define NB_V(buf, counts, displs, type)                                             \
    (&(nb_side_t){ (buf), 0, (counts), (displs), (type), NULL })
/* MPI_Neighbor_alltoallw's byte displacements are MPI_Aint in both forms. */
#define NB_W(buf, counts, displs, types)                                            \
    (&(nb_side_t){ (buf), 0, (counts), (locus_ivec_t){ (displs), 1 }, MPI_DATATYPE_NULL, (types) })

int locus_neighbor_allgather_impl(locus_how_t how, const void *sbuf, MPI_Count scount,
                                  MPI_Datatype sdt, void *rbuf, MPI_Count rcount, MPI_Datatype rdt,
                                  MPI_Comm comm, MPI_Info info, MPI_Request *req, const char *fn)
{
    (void)info;
    return neighbor_run(NB_ONE(sbuf, scount, sdt), NB_ONE(rbuf, rcount, rdt), NB_ALLGATHER, comm,
                        how, req, fn);
}

int locus_neighbor_allgatherv_impl(locus_how_t how, const void *sbuf, MPI_Count scount,
                                   MPI_Datatype sdt, void *rbuf, locus_ivec_t rcounts,
                                   locus_ivec_t displs, MPI_Datatype rdt, MPI_Comm comm,
                                   MPI_Info info, MPI_Request *req, const char *fn)
{
    (void)info;
    return neighbor_run(NB_ONE(sbuf, scount, sdt), NB_V(rbuf, rcounts, displs, rdt), NB_ALLGATHERV,
                        comm, how, req, fn);
}

int locus_neighbor_alltoall_impl(locus_how_t how, const void *sbuf, MPI_Count scount,
                                 MPI_Datatype sdt, void *rbuf, MPI_Count rcount, MPI_Datatype rdt,
                                 MPI_Comm comm, MPI_Info info, MPI_Request *req, const char *fn)
{
    (void)info;
    return neighbor_run(NB_ONE(sbuf, scount, sdt), NB_ONE(rbuf, rcount, rdt), NB_ALLTOALL, comm,
                        how, req, fn);
}

int locus_neighbor_alltoallv_impl(locus_how_t how, const void *sbuf, locus_ivec_t scounts,
                                  locus_ivec_t sdispls, MPI_Datatype sdt, void *rbuf,
                                  locus_ivec_t rcounts, locus_ivec_t rdispls, MPI_Datatype rdt,
                                  MPI_Comm comm, MPI_Info info, MPI_Request *req, const char *fn)
{
    (void)info;
    return neighbor_run(NB_V(sbuf, scounts, sdispls, sdt), NB_V(rbuf, rcounts, rdispls, rdt),
                        NB_ALLTOALLV, comm, how, req, fn);
}

int locus_neighbor_alltoallw_impl(locus_how_t how, const void *sbuf, locus_ivec_t scounts,
                                  const MPI_Aint sdispls[], const MPI_Datatype sdts[], void *rbuf,
                                  locus_ivec_t rcounts, const MPI_Aint rdispls[],
                                  const MPI_Datatype rdts[], MPI_Comm comm, MPI_Info info,
                                  MPI_Request *req, const char *fn)
{
    (void)info;
    return neighbor_run(NB_W(sbuf, scounts, sdispls, sdts), NB_W(rbuf, rcounts, rdispls, rdts),
                        NB_ALLTOALLW, comm, how, req, fn);
}
