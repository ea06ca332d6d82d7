/*
 * coll_bcast.c — MPI_Barrier and MPI_Bcast: dissemination barrier, binomial
 * and scatter + ring-allgather broadcast, their hierarchical forms (node,
 * then node leaders, then node) and the shared-memory fast path.
 */
#include <stdlib.h>
#include <string.h>

#include "coll_mpi.h"

/* ---- barrier ---- */

/* Dissemination: ceil(log2 p) rounds of zero-byte messages, any p. */
static int barrier_dissemination(MPI_Comm comm)
{
    int p = comm->size, r = comm->rank;
    for (int dist = 1; dist < p; dist *= 2) {
        int rc = locus_coll_sendrecv(NULL, 0, MPI_BYTE, (r + dist) % p, NULL, 0, MPI_BYTE,
                                     (r - dist + p) % p, COLL_TAG_BARRIER, comm);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

int coll_barrier(MPI_Comm comm)
{
    if (comm->size == 1)
        return MPI_SUCCESS;
    coll_state_t *st = coll_state(comm);
    if (!st)
        return MPI_ERR_NO_MEM;
    if (st->barrier == ALG_DISSEMINATION)
        return barrier_dissemination(comm);
    if (coll_use_hier(comm, st)) {
        /* Everyone on a node arrives, leaders meet, leaders release. */
        int rc = coll_barrier(st->node_comm);
        if (rc == MPI_SUCCESS && st->leader_comm != MPI_COMM_NULL)
            rc = coll_barrier(st->leader_comm);
        if (rc == MPI_SUCCESS)
            rc = coll_barrier(st->node_comm);
        return rc;
    }
    if ((st->shm || st->barrier == ALG_SHM) && coll_is_node_local(comm, st) &&
        coll_shm_barrier(comm, st) == MPI_SUCCESS)
        return MPI_SUCCESS;
    return barrier_dissemination(comm);
}

LOCUS_PMPI_WEAK(Barrier)
int PMPI_Barrier(MPI_Comm comm)
{
    LOCUS_CHECK_INIT("MPI_Barrier");
    int rc = locus_check_comm(comm);
    if (rc == MPI_SUCCESS)
        rc = coll_barrier(comm);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : locus_mpi_err(comm, rc, "MPI_Barrier");
}

/* ---- bcast ---- */

/* Binomial tree over ranks relative to root. */
static int bcast_binomial(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    int p = comm->size, vr = (comm->rank - root + p) % p, mask = 1, rc;
    while (mask < p) {
        if (vr & mask) {
            rc = locus_coll_recv(buf, count, dt, (vr - mask + root) % p, COLL_TAG_BCAST, comm,
                                 NULL);
            if (rc != MPI_SUCCESS)
                return rc;
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < p) {
            rc = locus_coll_send(buf, count, dt, (vr + mask + root) % p, COLL_TAG_BCAST, comm);
            if (rc != MPI_SUCCESS)
                return rc;
        }
    return MPI_SUCCESS;
}

/* Root sends to everyone directly (tests and tiny communicators). */
static int bcast_linear(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    if (comm->rank != root)
        return locus_coll_recv(buf, count, dt, root, COLL_TAG_BCAST, comm, NULL);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)comm->size);
    if (!reqs)
        return MPI_ERR_NO_MEM;
    int rc = MPI_SUCCESS;
    for (int i = 0; i < comm->size; i++) {
        reqs[i] = MPI_REQUEST_NULL;
        if (i != root && rc == MPI_SUCCESS)
            rc = locus_coll_isend(buf, count, dt, i, COLL_TAG_BCAST, comm, &reqs[i]);
    }
    int rc2 = locus_req_waitall(comm->size, reqs);
    free(reqs);
    return rc != MPI_SUCCESS ? rc : rc2;
}

/* Bytes [lo, hi) of n split in p chunks of `chunk`. */
static size_t chunk_len(size_t n, size_t chunk, long first, long nchunks)
{
    size_t lo = (size_t)first * chunk, hi = (size_t)(first + nchunks) * chunk;
    if (lo >= n)
        return 0;
    return (hi > n ? n : hi) - lo;
}

/*
 * Van de Geijn: binomial scatter of p chunks, then ring allgather; moves
 * about 2n bytes per rank instead of n log p. Works on the packed bytes.
 */
static int bcast_scatter_allgather(char *bytes, size_t n, int root, MPI_Comm comm)
{
    int p = comm->size, vr = (comm->rank - root + p) % p, rc;
    size_t chunk = (n + (size_t)p - 1) / (size_t)p;
    /* Scatter: my subtree is vr .. vr+mask-1 where mask is my lowest bit. */
    int mask = 1;
    while (mask < p) {
        if (vr & mask) {
            size_t len = chunk_len(n, chunk, vr, mask);
            rc = coll_recv_bytes(len ? bytes + (size_t)vr * chunk : bytes, len,
                                 (vr - mask + root) % p, COLL_TAG_BCAST, comm);
            if (rc != MPI_SUCCESS)
                return rc;
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < p) {
            size_t len = chunk_len(n, chunk, vr + mask, mask);
            rc = coll_send_bytes(len ? bytes + (size_t)(vr + mask) * chunk : bytes, len,
                                 (vr + mask + root) % p, COLL_TAG_BCAST, comm);
            if (rc != MPI_SUCCESS)
                return rc;
        }
    /* Ring allgather of the chunks (in relative ranks). */
    int right = (comm->rank + 1) % p, left = (comm->rank - 1 + p) % p;
    for (int s = 0; s < p - 1; s++) {
        int sc = (vr - s + p) % p, rcv = (vr - s - 1 + p) % p;
        size_t slen = chunk_len(n, chunk, sc, 1), rlen = chunk_len(n, chunk, rcv, 1);
        rc = locus_coll_sendrecv(slen ? bytes + (size_t)sc * chunk : bytes, (int)slen, MPI_BYTE,
                                 right, rlen ? bytes + (size_t)rcv * chunk : bytes, (int)rlen,
                                 MPI_BYTE, left, COLL_TAG_BCAST, comm);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

static int bcast_flat(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                      coll_state_t *st)
{
    size_t n = (size_t)count * locus_dtype_size(dt);
    int alg = st->bcast;
    if (alg == ALG_AUTO || alg == ALG_SHM)
        alg = (n >= (size_t)st->bcast_large && comm->size > 2) ? ALG_SCATTER_ALLGATHER
                                                               : ALG_BINOMIAL;
    if (alg == ALG_LINEAR)
        return bcast_linear(buf, count, dt, root, comm);
    if (alg == ALG_BINOMIAL || n == 0)
        return bcast_binomial(buf, count, dt, root, comm);
    /* Scatter + allgather works on bytes: pack non-contiguous data. */
    if (locus_dtype_is_contig(dt)) {
        ptrdiff_t tlb, text;
        locus_dtype_true_extent(dt, &tlb, &text);
        return bcast_scatter_allgather((char *)buf + tlb, n, root, comm);
    }
    char *tmp = malloc(n);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    if (comm->rank == root)
        locus_dtype_pack(buf, (size_t)count, dt, 0, tmp, n);
    int rc = bcast_scatter_allgather(tmp, n, root, comm);
    if (rc == MPI_SUCCESS && comm->rank != root)
        locus_dtype_unpack(buf, (size_t)count, dt, 0, tmp, n);
    free(tmp);
    return rc;
}

int coll_bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    size_t n = (size_t)count * locus_dtype_size(dt);
    /* Signatures match on every rank, so no data means nothing to do. */
    if (comm->size == 1 || n == 0)
        return MPI_SUCCESS;
    coll_state_t *st = coll_state(comm);
    if (!st)
        return MPI_ERR_NO_MEM;
    if (st->bcast == ALG_AUTO && coll_use_hier(comm, st)) {
        /* Root's node first (so its leader has the data), then the leaders,
         * then every other node from its leader. */
        int root_node = st->node_of[root];
        int rc = MPI_SUCCESS;
        if (st->my_node == root_node)
            rc = coll_bcast(buf, count, dt, st->node_rank_of[root], st->node_comm);
        if (rc == MPI_SUCCESS && st->leader_comm != MPI_COMM_NULL)
            rc = coll_bcast(buf, count, dt, root_node, st->leader_comm);
        if (rc == MPI_SUCCESS && st->my_node != root_node)
            rc = coll_bcast(buf, count, dt, 0, st->node_comm);
        return rc;
    }
    if ((st->bcast == ALG_SHM || (st->bcast == ALG_AUTO && st->shm)) &&
        (n <= (size_t)st->shm_max || n <= (size_t)st->shm_bcast_max) &&
        coll_is_node_local(comm, st) &&
        coll_shm_bcast(buf, count, dt, root, comm, st) == MPI_SUCCESS)
        return MPI_SUCCESS;
    return bcast_flat(buf, count, dt, root, comm, st);
}

int coll_check_bcast_args(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    int rc = locus_check_comm(comm);
    if (rc == MPI_SUCCESS)
        rc = locus_check_count(count);
    if (rc == MPI_SUCCESS)
        rc = locus_check_dtype(dt);
    if (rc == MPI_SUCCESS)
        rc = locus_check_root(comm, root);
    if (rc == MPI_SUCCESS)
        rc = locus_check_buf(buf, count, dt);
    return rc;
}

LOCUS_PMPI_WEAK(Bcast)
int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    static const char fn[] = "MPI_Bcast";
    LOCUS_CHECK_INIT(fn);
    int rc = coll_check_bcast_args(buffer, count, datatype, root, comm);
    if (rc == MPI_SUCCESS)
        rc = coll_bcast(buffer, count, datatype, root, comm);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : locus_mpi_err(comm, rc, fn);
}
