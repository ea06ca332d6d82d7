/*
 * coll_scan.c — MPI_Reduce_scatter(_block), MPI_Scan, MPI_Exscan.
 *
 * Reduce-scatter: a ring (p-1 steps, each moving one block; commutative
 * ops) or reduce + scatterv (any op). Scans: recursive doubling (log p
 * rounds, order-preserving) or a linear chain.
 */
#include <stdlib.h>
#include <string.h>

#include "coll_mpi.h"

/* ---- reduce_scatter ---- */

static int redscat_ring(char *acc, char *tmp, const int *cnts, const int *disps, MPI_Datatype dt,
                        MPI_Op op, MPI_Comm comm)
{
    int p = comm->size, r = comm->rank;
    int right = (r + 1) % p, left = (r - 1 + p) % p;
    /* Step s sends block r-s-1 (reduced so far) and receives block r-s-2;
     * after p-1 steps block r has everyone's contribution. */
    for (int s = 0; s < p - 1; s++) {
        int sb = (r - s - 1 + 2 * p) % p, rb = (r - s - 2 + 2 * p) % p;
        int rc = locus_coll_sendrecv(coll_at(acc, dt, disps[sb]), cnts[sb], dt, right,
                                     coll_at(tmp, dt, disps[rb]), cnts[rb], dt, left,
                                     COLL_TAG_REDSCAT, comm);
        if (rc == MPI_SUCCESS)
            rc = locus_op_reduce(op, dt, cnts[rb], coll_at(tmp, dt, disps[rb]),
                                 coll_at(acc, dt, disps[rb]));
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

static int coll_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts, MPI_Datatype dt,
                               MPI_Op op, MPI_Comm comm)
{
    int p = comm->size, r = comm->rank, err = MPI_SUCCESS;
    int *disps = malloc(sizeof(int) * (size_t)p);
    if (!disps)
        return MPI_ERR_NO_MEM;
    long total = 0;
    for (int i = 0; i < p; i++) {
        disps[i] = (int)total;
        total += rcounts[i];
    }
    const void *src = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    char *acc = NULL, *tmp = NULL;
    void *macc = NULL, *mtmp = NULL;
    coll_state_t *st = coll_state(comm);
    if (!st) {
        err = MPI_ERR_NO_MEM;
        goto out;
    }
    int alg = st->reduce_scatter;
    if (alg == ALG_AUTO || (alg == ALG_RING && !locus_op_commutes(op)))
        alg = locus_op_commutes(op) ? ALG_RING : ALG_REDUCE_SCATTERV;
    macc = coll_tmp_alloc(dt, (int)total, &acc);
    if (!macc) {
        err = MPI_ERR_NO_MEM;
        goto out;
    }
    if (alg == ALG_RING && p > 1) {
        mtmp = coll_tmp_alloc(dt, (int)total, &tmp);
        if (!mtmp) {
            err = MPI_ERR_NO_MEM;
            goto out;
        }
        COLL_TRY(coll_local_copy(src, (int)total, dt, acc, (int)total, dt));
        COLL_TRY(redscat_ring(acc, tmp, rcounts, disps, dt, op, comm));
        COLL_TRY(coll_local_copy(coll_at(acc, dt, disps[r]), rcounts[r], dt, rbuf, rcounts[r], dt));
    } else {
        /* Whole reduction at rank 0, then each rank its part. */
        if (r == 0)
            COLL_TRY(coll_local_copy(src, (int)total, dt, acc, (int)total, dt));
        COLL_TRY(coll_reduce(r == 0 ? MPI_IN_PLACE : src, acc, (int)total, dt, op, 0, comm));
        COLL_TRY(coll_scatterv(acc, rcounts, disps, dt, rbuf, rcounts[r], dt, 0, comm));
    }
out:
    free(disps);
    free(macc);
    free(mtmp);
    return err;
}

static int redscat_check(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                         MPI_Comm comm)
{
    int rc = locus_check_count(count);
    if (rc == MPI_SUCCESS)
        rc = locus_check_dtype(dt);
    if (rc == MPI_SUCCESS)
        rc = locus_op_check(op, dt);
    if (rc == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        rc = locus_check_buf(sbuf, count, dt);
    if (rc == MPI_SUCCESS)
        rc = locus_check_buf(rbuf, count, dt);
    (void)comm;
    return rc;
}

LOCUS_PMPI_WEAK(Reduce_scatter)
int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    static const char fn[] = "MPI_Reduce_scatter";
    LOCUS_CHECK_INIT(fn);
    int rc = locus_check_comm(comm);
    if (rc == MPI_SUCCESS && !recvcounts)
        rc = MPI_ERR_ARG;
    for (int i = 0; rc == MPI_SUCCESS && i < comm->size; i++)
        rc = locus_check_count(recvcounts[i]);
    if (rc == MPI_SUCCESS)
        rc = redscat_check(sendbuf, recvbuf, recvcounts[comm->rank], datatype, op, comm);
    if (rc == MPI_SUCCESS)
        rc = coll_reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : locus_mpi_err(comm, rc, fn);
}

LOCUS_PMPI_WEAK(Reduce_scatter_block)
int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    static const char fn[] = "MPI_Reduce_scatter_block";
    LOCUS_CHECK_INIT(fn);
    int rc = locus_check_comm(comm);
    if (rc == MPI_SUCCESS)
        rc = redscat_check(sendbuf, recvbuf, recvcount, datatype, op, comm);
    if (rc != MPI_SUCCESS)
        return locus_mpi_err(comm, rc, fn);
    int *cnts = malloc(sizeof(int) * (size_t)comm->size);
    if (!cnts)
        return locus_mpi_err(comm, MPI_ERR_NO_MEM, fn);
    for (int i = 0; i < comm->size; i++)
        cnts[i] = recvcount;
    rc = coll_reduce_scatter(sendbuf, recvbuf, cnts, datatype, op, comm);
    free(cnts);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : locus_mpi_err(comm, rc, fn);
}

/* ---- scan / exscan ---- */

/*
 * Recursive doubling: `partial` is the reduction of my current group of
 * ranks; lower partners' partials are folded into the result. With
 * exclusive, the result never includes my own contribution.
 */
static int scan_recdbl(const void *src, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                       int exclusive, MPI_Comm comm)
{
    int p = comm->size, r = comm->rank, err = MPI_SUCCESS, have = !exclusive;
    char *partial, *tmp;
    void *mp = coll_tmp_alloc(dt, count, &partial), *mt = coll_tmp_alloc(dt, count, &tmp);
    if (!mp || !mt) {
        err = MPI_ERR_NO_MEM;
        goto out;
    }
    COLL_TRY(coll_local_copy(src, count, dt, partial, count, dt));
    if (!exclusive && src != rbuf)
        COLL_TRY(coll_local_copy(src, count, dt, rbuf, count, dt));
    int tag = exclusive ? COLL_TAG_EXSCAN : COLL_TAG_SCAN;
    for (int mask = 1; mask < p; mask <<= 1) {
        int dst = r ^ mask;
        if (dst >= p)
            continue;
        COLL_TRY(locus_coll_sendrecv(partial, count, dt, dst, tmp, count, dt, dst, tag, comm));
        if (dst < r) {
            /* Their ranks come before mine. */
            COLL_TRY(locus_op_reduce(op, dt, count, tmp, partial));
            if (have) {
                COLL_TRY(locus_op_reduce(op, dt, count, tmp, rbuf));
            } else {
                COLL_TRY(coll_local_copy(tmp, count, dt, rbuf, count, dt));
                have = 1;
            }
        } else {
            COLL_TRY(locus_op_reduce(op, dt, count, partial, tmp));
            COLL_TRY(coll_local_copy(tmp, count, dt, partial, count, dt));
        }
    }
out:
    free(mp);
    free(mt);
    return err;
}

/* Chain: rank r waits for the prefix of 0..r-1, passes on 0..r. */
static int scan_linear(const void *src, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                       int exclusive, MPI_Comm comm)
{
    int p = comm->size, r = comm->rank, err = MPI_SUCCESS;
    int tag = exclusive ? COLL_TAG_EXSCAN : COLL_TAG_SCAN;
    char *pre, *mine;
    void *mp = coll_tmp_alloc(dt, count, &pre), *mm = coll_tmp_alloc(dt, count, &mine);
    if (!mp || !mm) {
        err = MPI_ERR_NO_MEM;
        goto out;
    }
    COLL_TRY(coll_local_copy(src, count, dt, mine, count, dt));
    if (r > 0) {
        COLL_TRY(locus_coll_recv(pre, count, dt, r - 1, tag, comm, NULL));
        if (exclusive)
            COLL_TRY(coll_local_copy(pre, count, dt, rbuf, count, dt));
        COLL_TRY(locus_op_reduce(op, dt, count, pre, mine));   /* prefix op mine */
    }
    if (!exclusive)
        COLL_TRY(coll_local_copy(mine, count, dt, rbuf, count, dt));
    if (r + 1 < p)
        COLL_TRY(locus_coll_send(mine, count, dt, r + 1, tag, comm));
out:
    free(mp);
    free(mm);
    return err;
}

static int scan_common(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                       int exclusive, MPI_Comm comm, const char *fn)
{
    int rc = locus_check_comm(comm);
    if (rc == MPI_SUCCESS)
        rc = redscat_check(sendbuf, recvbuf, count, dt, op, comm);
    if (rc == MPI_SUCCESS && count > 0) {
        const void *src = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
        coll_state_t *st = coll_state(comm);
        if (!st)
            rc = MPI_ERR_NO_MEM;
        else if (st->scan == ALG_LINEAR)
            rc = scan_linear(src, recvbuf, count, dt, op, exclusive, comm);
        else
            rc = scan_recdbl(src, recvbuf, count, dt, op, exclusive, comm);
    }
    return rc == MPI_SUCCESS ? MPI_SUCCESS : locus_mpi_err(comm, rc, fn);
}

LOCUS_PMPI_WEAK(Scan)
int PMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm)
{
    LOCUS_CHECK_INIT("MPI_Scan");
    return scan_common(sendbuf, recvbuf, count, datatype, op, 0, comm, "MPI_Scan");
}

LOCUS_PMPI_WEAK(Exscan)
int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm)
{
    LOCUS_CHECK_INIT("MPI_Exscan");
    return scan_common(sendbuf, recvbuf, count, datatype, op, 1, comm, "MPI_Exscan");
}
