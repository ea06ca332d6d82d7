/*
 * coll_gather.c — MPI_Gather(v), MPI_Scatter(v), MPI_Allgather(v).
 *
 * Gather/scatter: binomial trees over packed bytes for small equal-count
 * messages (log p steps at the root instead of p), direct (linear) otherwise
 * and for the v forms. Allgather: recursive doubling (power-of-two sizes,
 * small data), ring (large or any size), or gather + bcast.
 */
#include <stdlib.h>
#include <string.h>

#include "coll_mpi.h"

/* Binomial trees stop paying once the root's log p copies of the data
 * outweigh p direct messages; past this many bytes per rank go direct. */
#define GATHER_BINOMIAL_MAX 2048

/* ---- gather ---- */

int coll_gatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                 const int *rcounts, const int *displs, MPI_Datatype rdt, int root,
                 MPI_Comm comm)
{
    int p = comm->size, err = MPI_SUCCESS;
    if (comm->rank != root)
        return locus_coll_send(sbuf, scount, sdt, root, COLL_TAG_GATHER, comm);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)p);
    if (!reqs)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < p; i++) {
        reqs[i] = MPI_REQUEST_NULL;
        char *dst = coll_at(rbuf, rdt, displs[i]);
        if (i == root) {
            if (sbuf != MPI_IN_PLACE && err == MPI_SUCCESS)
                err = coll_local_copy(sbuf, scount, sdt, dst, rcounts[i], rdt);
        } else if (err == MPI_SUCCESS) {
            err = locus_coll_irecv(dst, rcounts[i], rdt, i, COLL_TAG_GATHER, comm, &reqs[i]);
        }
    }
    int err2 = locus_req_waitall(p, reqs);
    free(reqs);
    return err != MPI_SUCCESS ? err : err2;
}

/* Subtree of relative rank vr: vr .. vr+n-1 with n = lowest set bit (or p). */
static int subtree_size(int vr, int p)
{
    int mask = 1;
    while (mask < p && !(vr & mask))
        mask <<= 1;
    return (vr + mask > p ? p - vr : mask);
}

static int gather_binomial(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                           int rcount, MPI_Datatype rdt, int root, MPI_Comm comm)
{
    int p = comm->size, vr = (comm->rank - root + p) % p, err = MPI_SUCCESS;
    int me_root = comm->rank == root;
    size_t nb = me_root ? (size_t)rcount * locus_dtype_size(rdt)
                        : (size_t)scount * locus_dtype_size(sdt);
    char *tmp = malloc((size_t)subtree_size(vr, p) * nb + 1);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    if (me_root && sbuf == MPI_IN_PLACE)
        locus_dtype_pack(coll_at(rbuf, rdt, (long)root * rcount), (size_t)rcount, rdt, 0, tmp, nb);
    else
        locus_dtype_pack(sbuf, (size_t)scount, sdt, 0, tmp, nb);
    int have = 1;
    for (int mask = 1; mask < p; mask <<= 1) {
        if (vr & mask) {
            COLL_TRY(coll_send_bytes(tmp, (size_t)have * nb, (vr - mask + root) % p,
                                     COLL_TAG_GATHER, comm));
            break;
        }
        if (vr + mask < p) {
            int n = subtree_size(vr + mask, p);
            COLL_TRY(coll_recv_bytes(tmp + (size_t)mask * nb, (size_t)n * nb,
                                     (vr + mask + root) % p, COLL_TAG_GATHER, comm));
            have = mask + n;
        }
    }
    if (me_root)
        for (int v = 0; v < p; v++) {
            int r = (v + root) % p;
            locus_dtype_unpack(coll_at(rbuf, rdt, (long)r * rcount), (size_t)rcount, rdt, 0,
                               tmp + (size_t)v * nb, nb);
        }
out:
    free(tmp);
    return err;
}

static int coll_gather(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                       MPI_Datatype rdt, int root, MPI_Comm comm)
{
    coll_state_t *st = coll_state(comm);
    if (!st)
        return MPI_ERR_NO_MEM;
    size_t nb = comm->rank == root ? (size_t)rcount * locus_dtype_size(rdt)
                                   : (size_t)scount * locus_dtype_size(sdt);
    int alg = st->gather;
    /* Every rank must choose alike: decide from sizes all ranks know. */
    if (alg == ALG_AUTO)
        alg = (nb <= GATHER_BINOMIAL_MAX && comm->size > 2) ? ALG_BINOMIAL : ALG_LINEAR;
    if (alg == ALG_BINOMIAL)
        return gather_binomial(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm);
    int p = comm->size;
    int *cd = coll_uniform_counts(p, rcount);
    if (!cd)
        return MPI_ERR_NO_MEM;
    int rc = coll_gatherv(sbuf, scount, sdt, rbuf, cd, cd + p, rdt, root, comm);
    free(cd);
    return rc;
}

/* ---- scatter ---- */

int coll_scatterv(const void *sbuf, const int *scounts, const int *displs, MPI_Datatype sdt,
                  void *rbuf, int rcount, MPI_Datatype rdt, int root, MPI_Comm comm)
{
    int p = comm->size, err = MPI_SUCCESS;
    if (comm->rank != root)
        return locus_coll_recv(rbuf, rcount, rdt, root, COLL_TAG_SCATTER, comm, NULL);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)p);
    if (!reqs)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < p; i++) {
        reqs[i] = MPI_REQUEST_NULL;
        const char *src = coll_at(sbuf, sdt, displs[i]);
        if (i == root) {
            if (rbuf != MPI_IN_PLACE && err == MPI_SUCCESS)
                err = coll_local_copy(src, scounts[i], sdt, rbuf, rcount, rdt);
        } else if (err == MPI_SUCCESS) {
            err = locus_coll_isend(src, scounts[i], sdt, i, COLL_TAG_SCATTER, comm, &reqs[i]);
        }
    }
    int err2 = locus_req_waitall(p, reqs);
    free(reqs);
    return err != MPI_SUCCESS ? err : err2;
}

static int scatter_binomial(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                            int rcount, MPI_Datatype rdt, int root, MPI_Comm comm)
{
    int p = comm->size, vr = (comm->rank - root + p) % p, err = MPI_SUCCESS;
    int me_root = comm->rank == root;
    size_t nb = me_root ? (size_t)scount * locus_dtype_size(sdt)
                        : (size_t)rcount * locus_dtype_size(rdt);
    int n = subtree_size(vr, p);
    char *tmp = malloc((size_t)n * nb + 1);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    if (me_root) {
        for (int v = 0; v < p; v++)
            locus_dtype_pack(coll_at(sbuf, sdt, (long)((v + root) % p) * scount), (size_t)scount,
                             sdt, 0, tmp + (size_t)v * nb, nb);
    }
    int mask = 1;
    while (mask < p) {
        if (vr & mask) {
            COLL_TRY(coll_recv_bytes(tmp, (size_t)n * nb, (vr - mask + root) % p,
                                     COLL_TAG_SCATTER, comm));
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < p)
            COLL_TRY(coll_send_bytes(tmp + (size_t)mask * nb,
                                     (size_t)subtree_size(vr + mask, p) * nb,
                                     (vr + mask + root) % p, COLL_TAG_SCATTER, comm));
    if (!(me_root && rbuf == MPI_IN_PLACE))
        locus_dtype_unpack(rbuf, (size_t)rcount, rdt, 0, tmp, nb);
out:
    free(tmp);
    return err;
}

static int coll_scatter(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                        MPI_Datatype rdt, int root, MPI_Comm comm)
{
    coll_state_t *st = coll_state(comm);
    if (!st)
        return MPI_ERR_NO_MEM;
    size_t nb = comm->rank == root ? (size_t)scount * locus_dtype_size(sdt)
                                   : (size_t)rcount * locus_dtype_size(rdt);
    int alg = st->gather;
    if (alg == ALG_AUTO)
        alg = (nb <= GATHER_BINOMIAL_MAX && comm->size > 2) ? ALG_BINOMIAL : ALG_LINEAR;
    if (alg == ALG_BINOMIAL)
        return scatter_binomial(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm);
    int p = comm->size;
    int *cd = coll_uniform_counts(p, scount);
    if (!cd)
        return MPI_ERR_NO_MEM;
    int rc = coll_scatterv(sbuf, cd, cd + p, sdt, rbuf, rcount, rdt, root, comm);
    free(cd);
    return rc;
}

/* ---- allgather ---- */

/* Ring over arbitrary counts/displacements (allgatherv and large data). */
static int allgather_ring(void *rbuf, const int *rcounts, const int *displs, MPI_Datatype rdt,
                          MPI_Comm comm)
{
    int p = comm->size, r = comm->rank;
    int right = (r + 1) % p, left = (r - 1 + p) % p;
    for (int s = 0; s < p - 1; s++) {
        int sb = (r - s + p) % p, rb = (r - s - 1 + p) % p;
        int rc = locus_coll_sendrecv(coll_at(rbuf, rdt, displs[sb]), rcounts[sb], rdt, right,
                                     coll_at(rbuf, rdt, displs[rb]), rcounts[rb], rdt, left,
                                     COLL_TAG_ALLGATHER, comm);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* Recursive doubling on a power-of-two size: blocks of my group double. */
static int allgather_recdbl(void *rbuf, int rcount, MPI_Datatype rdt, MPI_Comm comm)
{
    int r = comm->rank;
    for (int mask = 1; mask < comm->size; mask <<= 1) {
        int peer = r ^ mask, mine = r & ~(mask - 1), theirs = peer & ~(mask - 1);
        int rc = locus_coll_sendrecv(coll_at(rbuf, rdt, (long)mine * rcount), mask * rcount, rdt,
                                     peer, coll_at(rbuf, rdt, (long)theirs * rcount),
                                     mask * rcount, rdt, peer, COLL_TAG_ALLGATHER, comm);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/*
 * Across nodes: every node gathers its blocks at its leader, the leaders
 * exchange whole nodes' blocks (ring allgatherv, so one message per node
 * pair crosses the network instead of one per rank pair), each leader
 * scatters them into place and broadcasts the result inside its node.
 * Works on packed bytes, so node members need not be consecutive ranks.
 */
static int allgather_hier(void *rbuf, int rcount, MPI_Datatype rdt, MPI_Comm comm,
                          coll_state_t *st)
{
    int p = comm->size, err = MPI_SUCCESS, nn = st->nnodes;
    size_t nb = (size_t)rcount * locus_dtype_size(rdt);
    int leader = st->leader_comm != MPI_COMM_NULL;
    int *cnt = calloc((size_t)nn * 2, sizeof(int));
    char *mine = malloc(nb), *all = leader ? malloc((size_t)p * nb) : NULL;
    if (!cnt || !mine || (leader && !all)) {
        err = MPI_ERR_NO_MEM;
        goto out;
    }
    int *displs = cnt + nn;
    for (int r = 0; r < p; r++)
        cnt[st->node_of[r]] += (int)nb;
    for (int k = 1; k < nn; k++)
        displs[k] = displs[k - 1] + cnt[k - 1];
    locus_dtype_pack(coll_at(rbuf, rdt, (long)comm->rank * rcount), (size_t)rcount, rdt, 0, mine,
                     nb);
    COLL_TRY(coll_gather(mine, (int)nb, MPI_BYTE, leader ? all + displs[st->my_node] : NULL,
                         (int)nb, MPI_BYTE, 0, st->node_comm));
    if (leader) {
        COLL_TRY(allgather_ring(all, cnt, displs, MPI_BYTE, st->leader_comm));
        for (int r = 0; r < p; r++)
            locus_dtype_unpack(coll_at(rbuf, rdt, (long)r * rcount), (size_t)rcount, rdt, 0,
                               all + displs[st->node_of[r]] + (size_t)st->node_rank_of[r] * nb,
                               nb);
    }
    COLL_TRY(coll_bcast(rbuf, p * rcount, rdt, 0, st->node_comm));
out:
    free(cnt);
    free(mine);
    free(all);
    return err;
}

int coll_allgather(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                   MPI_Datatype rdt, MPI_Comm comm)
{
    int p = comm->size, err;
    if (sbuf != MPI_IN_PLACE) {
        err = coll_local_copy(sbuf, scount, sdt, coll_at(rbuf, rdt, (long)comm->rank * rcount),
                              rcount, rdt);
        if (err != MPI_SUCCESS)
            return err;
    }
    if (p == 1 || rcount == 0)
        return MPI_SUCCESS;
    coll_state_t *st = coll_state(comm);
    if (!st)
        return MPI_ERR_NO_MEM;
    size_t total = (size_t)p * (size_t)rcount * locus_dtype_size(rdt);
    int pow2 = coll_pof2(p) == p;
    int alg = st->allgather;
    if (alg == ALG_AUTO && coll_use_hier(comm, st))
        return allgather_hier(rbuf, rcount, rdt, comm, st);
    if (alg == ALG_AUTO)
        alg = (pow2 && total < (size_t)st->allgather_large) ? ALG_RECURSIVE_DOUBLING : ALG_RING;
    if (alg == ALG_RECURSIVE_DOUBLING && !pow2)
        alg = ALG_RING;
    if (alg == ALG_RECURSIVE_DOUBLING)
        return allgather_recdbl(rbuf, rcount, rdt, comm);
    if (alg == ALG_GATHER_BCAST) {
        /* My block is in rbuf already: send it from there. */
        const void *gs = comm->rank == 0 ? MPI_IN_PLACE
                                         : coll_at(rbuf, rdt, (long)comm->rank * rcount);
        err = coll_gather(gs, rcount, rdt, rbuf, rcount, rdt, 0, comm);
        return err != MPI_SUCCESS ? err : coll_bcast(rbuf, p * rcount, rdt, 0, comm);
    }
    int *cd = coll_uniform_counts(p, rcount);
    if (!cd)
        return MPI_ERR_NO_MEM;
    err = allgather_ring(rbuf, cd, cd + p, rdt, comm);
    free(cd);
    return err;
}

/* ---- API ---- */

/* Checks of a (count, type, buffer) triple that matters on this rank. */
static int check_part(const void *buf, int count, MPI_Datatype dt)
{
    int rc = locus_check_count(count);
    if (rc == MPI_SUCCESS)
        rc = locus_check_dtype(dt);
    if (rc == MPI_SUCCESS)
        rc = locus_check_buf(buf, count, dt);
    return rc;
}

static int check_counts(const int *counts, const int *displs, int p, MPI_Datatype dt,
                        const void *buf)
{
    if (!counts || !displs)
        return MPI_ERR_ARG;
    int rc = locus_check_dtype(dt);
    for (int i = 0; i < p && rc == MPI_SUCCESS; i++) {
        rc = locus_check_count(counts[i]);
        if (rc == MPI_SUCCESS)
            rc = locus_check_buf(buf, counts[i], dt);
    }
    return rc;
}

#define API_END(fn) return rc == MPI_SUCCESS ? MPI_SUCCESS : locus_mpi_err(comm, rc, fn)

LOCUS_PMPI_WEAK(Gather)
int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    static const char fn[] = "MPI_Gather";
    LOCUS_CHECK_INIT(fn);
    int rc = locus_check_comm(comm);
    if (rc == MPI_SUCCESS)
        rc = locus_check_root(comm, root);
    int me_root = rc == MPI_SUCCESS && comm->rank == root;
    if (rc == MPI_SUCCESS && !(me_root && sendbuf == MPI_IN_PLACE))
        rc = sendbuf == MPI_IN_PLACE ? MPI_ERR_BUFFER : check_part(sendbuf, sendcount, sendtype);
    if (rc == MPI_SUCCESS && me_root)
        rc = check_part(recvbuf, recvcount, recvtype);
    if (rc == MPI_SUCCESS)
        rc = coll_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    API_END(fn);
}

LOCUS_PMPI_WEAK(Gatherv)
int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm)
{
    static const char fn[] = "MPI_Gatherv";
    LOCUS_CHECK_INIT(fn);
    int rc = locus_check_comm(comm);
    if (rc == MPI_SUCCESS)
        rc = locus_check_root(comm, root);
    int me_root = rc == MPI_SUCCESS && comm->rank == root;
    if (rc == MPI_SUCCESS && !(me_root && sendbuf == MPI_IN_PLACE))
        rc = sendbuf == MPI_IN_PLACE ? MPI_ERR_BUFFER : check_part(sendbuf, sendcount, sendtype);
    if (rc == MPI_SUCCESS && me_root)
        rc = check_counts(recvcounts, displs, comm->size, recvtype, recvbuf);
    if (rc == MPI_SUCCESS)
        rc = coll_gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                          root, comm);
    API_END(fn);
}

LOCUS_PMPI_WEAK(Scatter)
int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    static const char fn[] = "MPI_Scatter";
    LOCUS_CHECK_INIT(fn);
    int rc = locus_check_comm(comm);
    if (rc == MPI_SUCCESS)
        rc = locus_check_root(comm, root);
    int me_root = rc == MPI_SUCCESS && comm->rank == root;
    if (rc == MPI_SUCCESS && me_root)
        rc = check_part(sendbuf, sendcount, sendtype);
    if (rc == MPI_SUCCESS && !(me_root && recvbuf == MPI_IN_PLACE))
        rc = recvbuf == MPI_IN_PLACE ? MPI_ERR_BUFFER : check_part(recvbuf, recvcount, recvtype);
    if (rc == MPI_SUCCESS)
        rc = coll_scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    API_END(fn);
}

LOCUS_PMPI_WEAK(Scatterv)
int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm)
{
    static const char fn[] = "MPI_Scatterv";
    LOCUS_CHECK_INIT(fn);
    int rc = locus_check_comm(comm);
    if (rc == MPI_SUCCESS)
        rc = locus_check_root(comm, root);
    int me_root = rc == MPI_SUCCESS && comm->rank == root;
    if (rc == MPI_SUCCESS && me_root)
        rc = check_counts(sendcounts, displs, comm->size, sendtype, sendbuf);
    if (rc == MPI_SUCCESS && !(me_root && recvbuf == MPI_IN_PLACE))
        rc = recvbuf == MPI_IN_PLACE ? MPI_ERR_BUFFER : check_part(recvbuf, recvcount, recvtype);
    if (rc == MPI_SUCCESS)
        rc = coll_scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                           root, comm);
    API_END(fn);
}

LOCUS_PMPI_WEAK(Allgather)
int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    static const char fn[] = "MPI_Allgather";
    LOCUS_CHECK_INIT(fn);
    int rc = locus_check_comm(comm);
    if (rc == MPI_SUCCESS && sendbuf != MPI_IN_PLACE)
        rc = check_part(sendbuf, sendcount, sendtype);
    if (rc == MPI_SUCCESS)
        rc = check_part(recvbuf, recvcount, recvtype);
    if (rc == MPI_SUCCESS)
        rc = coll_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    API_END(fn);
}

LOCUS_PMPI_WEAK(Allgatherv)
int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm)
{
    static const char fn[] = "MPI_Allgatherv";
    LOCUS_CHECK_INIT(fn);
    int rc = locus_check_comm(comm);
    if (rc == MPI_SUCCESS && sendbuf != MPI_IN_PLACE)
        rc = check_part(sendbuf, sendcount, sendtype);
    if (rc == MPI_SUCCESS)
        rc = check_counts(recvcounts, displs, comm->size, recvtype, recvbuf);
    if (rc == MPI_SUCCESS && sendbuf != MPI_IN_PLACE)
        rc = coll_local_copy(sendbuf, sendcount, sendtype,
                             coll_at(recvbuf, recvtype, displs[comm->rank]),
                             recvcounts[comm->rank], recvtype);
    if (rc == MPI_SUCCESS && comm->size > 1)
        rc = allgather_ring(recvbuf, recvcounts, displs, recvtype, comm);
    API_END(fn);
}
