/*
 * coll_reduce.c — MPI_Reduce and MPI_Allreduce.
 *
 * Small messages: binomial tree (reduce) and recursive doubling
 * (allreduce), both keeping the rank order so non-commutative user ops are
 * right. Large messages with commutative ops: Rabenseifner (reduce-scatter
 * by recursive halving, then gather or allgather by recursive doubling) or
 * a ring. Non-power-of-two sizes fold the first 2*rem ranks in pairs first.
 * Hierarchical form: reduce inside each node, across leaders, then bcast.
 * The folding and halving steps live in coll_halving.c.
 */
#include <stdlib.h>
#include <string.h>

#include "coll_mpi.h"

/* Recursive doubling among the pof2 remaining ranks; order-preserving. */
static int allreduce_recdbl(char *acc, char *tmp, int count, MPI_Datatype dt, MPI_Op op,
                            MPI_Comm comm)
{
    coll_fold_t f;
    int rc = coll_fold_in(acc, tmp, count, dt, op, COLL_TAG_ALLREDUCE, comm, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    if (f.newrank >= 0) {
        for (int mask = 1; mask < f.pof2; mask <<= 1) {
            int dst = coll_fold_real(&f, f.newrank ^ mask);
            rc = locus_coll_sendrecv(acc, count, dt, dst, tmp, count, dt, dst,
                                     COLL_TAG_ALLREDUCE, comm);
            if (rc != MPI_SUCCESS)
                return rc;
            if (dst < comm->rank) {
                rc = locus_op_reduce(op, dt, count, tmp, acc);       /* theirs op mine */
            } else {
                rc = locus_op_reduce(op, dt, count, acc, tmp);       /* mine op theirs */
                if (rc == MPI_SUCCESS)
                    rc = coll_local_copy(tmp, count, dt, acc, count, dt);
            }
            if (rc != MPI_SUCCESS)
                return rc;
        }
    }
    return coll_fold_out(acc, count, dt, COLL_TAG_ALLREDUCE, comm, &f);
}

static int allreduce_rabenseifner(char *acc, char *tmp, int count, MPI_Datatype dt, MPI_Op op,
                                  MPI_Comm comm)
{
    coll_fold_t f;
    int rc = coll_fold_in(acc, tmp, count, dt, op, COLL_TAG_ALLREDUCE, comm, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    if (f.newrank >= 0) {
        int *cnts = malloc(sizeof(int) * 2 * (size_t)f.pof2), *disps, idx, last;
        if (!cnts)
            return MPI_ERR_NO_MEM;
        disps = cnts + f.pof2;
        coll_blocks_split(count, f.pof2, cnts, disps);
        rc = coll_rs_halving(acc, tmp, dt, op, COLL_TAG_ALLREDUCE, comm, &f, cnts, disps, &idx,
                             &last);
        if (rc == MPI_SUCCESS)
            rc = coll_ag_doubling(acc, dt, COLL_TAG_ALLREDUCE, comm, &f, cnts, disps, idx, last);
        free(cnts);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return coll_fold_out(acc, count, dt, COLL_TAG_ALLREDUCE, comm, &f);
}

/* Ring: reduce-scatter then allgather around the ring, p-1 steps each;
 * bandwidth-optimal for any p. Commutative ops only. */
static int allreduce_ring(char *acc, char *tmp, int count, MPI_Datatype dt, MPI_Op op,
                          MPI_Comm comm)
{
    int p = comm->size, r = comm->rank, rc = MPI_SUCCESS;
    int *cnts = malloc(sizeof(int) * 2 * (size_t)p), *disps;
    if (!cnts)
        return MPI_ERR_NO_MEM;
    disps = cnts + p;
    coll_blocks_split(count, p, cnts, disps);
    int right = (r + 1) % p, left = (r - 1 + p) % p;
    for (int s = 0; s < p - 1 && rc == MPI_SUCCESS; s++) {
        int sb = (r - s + p) % p, rb = (r - s - 1 + p) % p;
        rc = locus_coll_sendrecv(coll_at(acc, dt, disps[sb]), cnts[sb], dt, right,
                                 coll_at(tmp, dt, disps[rb]), cnts[rb], dt, left,
                                 COLL_TAG_ALLREDUCE, comm);
        if (rc == MPI_SUCCESS)
            rc = locus_op_reduce(op, dt, cnts[rb], coll_at(tmp, dt, disps[rb]),
                                 coll_at(acc, dt, disps[rb]));
    }
    for (int s = 0; s < p - 1 && rc == MPI_SUCCESS; s++) {
        int sb = (r + 1 - s + p) % p, rb = (r - s + p) % p;
        rc = locus_coll_sendrecv(coll_at(acc, dt, disps[sb]), cnts[sb], dt, right,
                                 coll_at(acc, dt, disps[rb]), cnts[rb], dt, left,
                                 COLL_TAG_ALLREDUCE, comm);
    }
    free(cnts);
    return rc;
}

/* ---- reduce ---- */

/*
 * Binomial tree. With a commutative op the tree is rooted at root; with a
 * non-commutative one it is rooted at rank 0 (where subtree k holds ranks
 * k..k+mask-1 in order) and the result moves to root at the end.
 */
static int reduce_binomial(char *acc, char *tmp, int count, MPI_Datatype dt, MPI_Op op, int root,
                           MPI_Comm comm, int *result_in_tmp)
{
    int p = comm->size, commute = locus_op_commutes(op);
    int base = commute ? root : 0;
    int vr = (comm->rank - base + p) % p, rc = MPI_SUCCESS;
    char *a = acc, *b = tmp;
    for (int mask = 1; mask < p; mask <<= 1) {
        if (vr & mask) {
            rc = locus_coll_send(a, count, dt, (vr - mask + base) % p, COLL_TAG_REDUCE, comm);
            break;
        }
        if (vr + mask < p) {
            rc = locus_coll_recv(b, count, dt, (vr + mask + base) % p, COLL_TAG_REDUCE, comm, NULL);
            if (rc != MPI_SUCCESS)
                break;
            /* a holds lower ranks than b: a op b, result in b, then swap. */
            rc = locus_op_reduce(op, dt, count, a, b);
            if (rc != MPI_SUCCESS)
                break;
            char *t = a;
            a = b;
            b = t;
        }
    }
    if (rc == MPI_SUCCESS && base != root) {
        if (comm->rank == 0)
            rc = locus_coll_send(a, count, dt, root, COLL_TAG_REDUCE, comm);
        else if (comm->rank == root)
            rc = locus_coll_recv(a, count, dt, 0, COLL_TAG_REDUCE, comm, NULL);
    }
    *result_in_tmp = a == tmp;
    return rc;
}

/* Root combines everyone's data in rank order (small comms, testing). */
static int reduce_linear(char *acc, char *tmp, int count, MPI_Datatype dt, MPI_Op op, int root,
                         MPI_Comm comm, char *rbuf_root)
{
    int p = comm->size;
    if (comm->rank != root)
        return locus_coll_send(acc, count, dt, root, COLL_TAG_REDUCE, comm);
    /* res = x_{p-1}; res = x_i op res for i from p-2 down to 0. */
    char *res = rbuf_root;
    int rc = MPI_SUCCESS;
    if (root != p - 1)
        rc = locus_coll_recv(res, count, dt, p - 1, COLL_TAG_REDUCE, comm, NULL);
    else
        rc = coll_local_copy(acc, count, dt, res, count, dt);
    for (int i = p - 2; i >= 0 && rc == MPI_SUCCESS; i--) {
        const char *x = acc;
        if (i != root) {
            rc = locus_coll_recv(tmp, count, dt, i, COLL_TAG_REDUCE, comm, NULL);
            x = tmp;
        }
        if (rc == MPI_SUCCESS)
            rc = locus_op_reduce(op, dt, count, x, res);
    }
    return rc;
}

/* Reduce-scatter by halving, then each remaining rank sends its block to root. */
static int reduce_rabenseifner(char *acc, char *tmp, int count, MPI_Datatype dt, MPI_Op op,
                               int root, MPI_Comm comm, char *rbuf_root)
{
    coll_fold_t f;
    int rc = coll_fold_in(acc, tmp, count, dt, op, COLL_TAG_REDUCE, comm, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    int *cnts = malloc(sizeof(int) * 2 * (size_t)f.pof2), *disps, idx = 0, last = 0;
    if (!cnts)
        return MPI_ERR_NO_MEM;
    disps = cnts + f.pof2;
    coll_blocks_split(count, f.pof2, cnts, disps);
    if (f.newrank >= 0)
        rc = coll_rs_halving(acc, tmp, dt, op, COLL_TAG_REDUCE, comm, &f, cnts, disps, &idx, &last);
    if (rc == MPI_SUCCESS && comm->rank != root && f.newrank >= 0)
        rc = locus_coll_send(coll_at(acc, dt, disps[idx]), coll_blocks_sum(cnts, idx, last), dt,
                             root, COLL_TAG_REDUCE, comm);
    if (rc == MPI_SUCCESS && comm->rank == root) {
        /* Block b is owned by the remaining rank whose halving path leads to
         * it; find each owner by replaying the halving choices. */
        for (int nr = 0; nr < f.pof2 && rc == MPI_SUCCESS; nr++) {
            int ri = 0, half, b;
            for (int mask = 1; mask < f.pof2; mask <<= 1) {
                half = f.pof2 / (mask * 2);
                if (nr & mask)
                    ri += half;
            }
            b = ri;
            int src = coll_fold_real(&f, nr);
            if (src == root)
                rc = coll_local_copy(coll_at(acc, dt, disps[b]), cnts[b], dt,
                                     coll_at(rbuf_root, dt, disps[b]), cnts[b], dt);
            else
                rc = locus_coll_recv(coll_at(rbuf_root, dt, disps[b]), cnts[b], dt, src,
                                     COLL_TAG_REDUCE, comm, NULL);
        }
    }
    free(cnts);
    return rc;
}

int coll_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                MPI_Comm comm)
{
    int me_root = comm->rank == root, err = MPI_SUCCESS;
    const void *src = (me_root && sbuf == MPI_IN_PLACE) ? rbuf : sbuf;
    if (count == 0)
        return MPI_SUCCESS;
    if (comm->size == 1)
        return coll_local_copy(src, count, dt, rbuf, count, dt);
    coll_state_t *st = coll_state(comm);
    if (!st)
        return MPI_ERR_NO_MEM;
    size_t bytes = (size_t)count * locus_dtype_size(dt);
    int commute = locus_op_commutes(op);
    if (st->reduce == ALG_AUTO && commute && coll_use_hier(comm, st)) {
        /* Reduce to each node's leader, then among leaders to root's node
         * leader, then hand it to root. */
        int root_node = st->node_of[root], root_leader = st->leader_of[root_node];
        char *t1;
        void *m1 = coll_tmp_alloc(dt, count, &t1);
        if (!m1)
            return MPI_ERR_NO_MEM;
        err = coll_reduce(src, t1, count, dt, op, 0, st->node_comm);
        if (err == MPI_SUCCESS && st->leader_comm != MPI_COMM_NULL)
            err = coll_reduce(st->leader_comm->rank == root_node ? MPI_IN_PLACE : t1, t1, count, dt,
                             op, root_node, st->leader_comm);
        if (err == MPI_SUCCESS && root != root_leader) {
            if (comm->rank == root_leader)
                err = locus_coll_send(t1, count, dt, root, COLL_TAG_REDUCE, comm);
            else if (me_root)
                err = locus_coll_recv(rbuf, count, dt, root_leader, COLL_TAG_REDUCE, comm, NULL);
        } else if (err == MPI_SUCCESS && me_root) {
            err = coll_local_copy(t1, count, dt, rbuf, count, dt);
        }
        free(m1);
        return err;
    }
    int alg = st->reduce;
    if (alg == ALG_AUTO)
        alg = (commute && bytes >= (size_t)st->allreduce_large && count >= coll_pof2(comm->size))
                  ? ALG_RABENSEIFNER : ALG_BINOMIAL;
    if (alg == ALG_RABENSEIFNER && !commute)
        alg = ALG_BINOMIAL;
    /* Working copies: acc (my contribution, overwritten), tmp (incoming). */
    char *acc, *tmp;
    void *macc = coll_tmp_alloc(dt, count, &acc), *mtmp = coll_tmp_alloc(dt, count, &tmp);
    if (!macc || !mtmp) {
        err = MPI_ERR_NO_MEM;
        goto out;
    }
    COLL_TRY(coll_local_copy(src, count, dt, acc, count, dt));
    if (alg == ALG_LINEAR) {
        COLL_TRY(reduce_linear(acc, tmp, count, dt, op, root, comm, rbuf));
    } else if (alg == ALG_RABENSEIFNER) {
        COLL_TRY(reduce_rabenseifner(acc, tmp, count, dt, op, root, comm, rbuf));
    } else {
        int in_tmp = 0;
        COLL_TRY(reduce_binomial(acc, tmp, count, dt, op, root, comm, &in_tmp));
        if (me_root)
            COLL_TRY(coll_local_copy(in_tmp ? tmp : acc, count, dt, rbuf, count, dt));
    }
out:
    free(macc);
    free(mtmp);
    return err;
}

int coll_check_reduce_args(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                           MPI_Op op, int root, MPI_Comm comm)
{
    int rc = locus_check_comm(comm);
    if (rc == MPI_SUCCESS)
        rc = locus_check_count(count);
    if (rc == MPI_SUCCESS)
        rc = locus_check_dtype(dt);
    if (rc == MPI_SUCCESS && root >= 0)
        rc = locus_check_root(comm, root);
    if (rc == MPI_SUCCESS)
        rc = locus_op_check(op, dt);
    if (rc == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        rc = locus_check_buf(sbuf, count, dt);
    if (rc == MPI_SUCCESS && (root < 0 || comm->rank == root))
        rc = locus_check_buf(rbuf, count, dt);
    /* Sending from the receive buffer is only legal as MPI_IN_PLACE. */
    if (rc == MPI_SUCCESS && count > 0 && sbuf == rbuf && (root < 0 || comm->rank == root))
        rc = MPI_ERR_BUFFER;
    return rc;
}

LOCUS_PMPI_WEAK(Reduce)
int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm)
{
    static const char fn[] = "MPI_Reduce";
    LOCUS_CHECK_INIT(fn);
    int rc = locus_check_comm(comm);
    if (rc == MPI_SUCCESS)
        rc = locus_check_root(comm, root);
    if (rc == MPI_SUCCESS)
        rc = coll_check_reduce_args(sendbuf, recvbuf, count, datatype, op, root, comm);
    if (rc == MPI_SUCCESS && sendbuf == MPI_IN_PLACE && comm->rank != root)
        rc = MPI_ERR_BUFFER;
    if (rc == MPI_SUCCESS)
        rc = coll_reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : locus_mpi_err(comm, rc, fn);
}

/* ---- allreduce ---- */

int coll_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                   MPI_Comm comm)
{
    int err = MPI_SUCCESS;
    if (count == 0)
        return MPI_SUCCESS;
    if (sbuf != MPI_IN_PLACE) {
        err = coll_local_copy(sbuf, count, dt, rbuf, count, dt);
        if (err != MPI_SUCCESS)
            return err;
    }
    if (comm->size == 1)
        return MPI_SUCCESS;
    coll_state_t *st = coll_state(comm);
    if (!st)
        return MPI_ERR_NO_MEM;
    size_t bytes = (size_t)count * locus_dtype_size(dt);
    int commute = locus_op_commutes(op);
    if (st->allreduce == ALG_AUTO && commute && coll_use_hier(comm, st)) {
        err = coll_reduce(st->node_comm->rank == 0 ? MPI_IN_PLACE : rbuf, rbuf, count, dt, op, 0,
                          st->node_comm);
        if (err == MPI_SUCCESS && st->leader_comm != MPI_COMM_NULL)
            err = coll_allreduce(MPI_IN_PLACE, rbuf, count, dt, op, st->leader_comm);
        if (err == MPI_SUCCESS)
            err = coll_bcast(rbuf, count, dt, 0, st->node_comm);
        return err;
    }
    int alg = st->allreduce;
    if ((alg == ALG_SHM || (alg == ALG_AUTO && st->shm)) &&
        (bytes <= (size_t)st->shm_max || bytes <= (size_t)st->shm_allreduce_max) &&
        coll_is_node_local(comm, st) &&
        coll_shm_allreduce(MPI_IN_PLACE, rbuf, count, dt, op, comm, st) == MPI_SUCCESS)
        return MPI_SUCCESS;
    if (alg == ALG_AUTO || alg == ALG_SHM)
        alg = (commute && bytes >= (size_t)st->allreduce_large && count >= comm->size)
                  ? ALG_RABENSEIFNER : ALG_RECURSIVE_DOUBLING;
    if ((alg == ALG_RABENSEIFNER || alg == ALG_RING) && !commute)
        alg = ALG_RECURSIVE_DOUBLING;
    if (alg == ALG_REDUCE_BCAST) {
        err = coll_reduce(comm->rank == 0 ? MPI_IN_PLACE : rbuf, rbuf, count, dt, op, 0, comm);
        return err != MPI_SUCCESS ? err : coll_bcast(rbuf, count, dt, 0, comm);
    }
    char *tmp;
    void *mtmp = coll_tmp_alloc(dt, count, &tmp);
    if (!mtmp)
        return MPI_ERR_NO_MEM;
    if (alg == ALG_RING)
        err = allreduce_ring(rbuf, tmp, count, dt, op, comm);
    else if (alg == ALG_RABENSEIFNER)
        err = allreduce_rabenseifner(rbuf, tmp, count, dt, op, comm);
    else
        err = allreduce_recdbl(rbuf, tmp, count, dt, op, comm);
    free(mtmp);
    return err;
}

LOCUS_PMPI_WEAK(Allreduce)
int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm)
{
    static const char fn[] = "MPI_Allreduce";
    LOCUS_CHECK_INIT(fn);
    int rc = coll_check_reduce_args(sendbuf, recvbuf, count, datatype, op, -1, comm);
    if (rc == MPI_SUCCESS)
        rc = coll_allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : locus_mpi_err(comm, rc, fn);
}
