/*
 * coll_halving.c — the pieces shared by the reduce and allreduce
 * algorithms: folding a non-power-of-two communicator onto pof2 ranks
 * (order-preserving), and Rabenseifner's reduce-scatter by recursive
 * halving and allgather by recursive doubling over pof2 blocks.
 */
#include <stdlib.h>

#include "coll_mpi.h"

int coll_fold_real(const coll_fold_t *f, int nr)
{
    return nr < f->rem ? nr * 2 + 1 : nr + f->rem;
}

/* Ranks 2i and 2i+1 (i < rem) combine into 2i+1, keeping the rank order. */
int coll_fold_in(char *acc, char *tmp, int count, MPI_Datatype dt, MPI_Op op, int tag,
                   MPI_Comm comm, coll_fold_t *f)
{
    int r = comm->rank, rc;
    f->pof2 = coll_pof2(comm->size);
    f->rem = comm->size - f->pof2;
    if (r >= 2 * f->rem) {
        f->newrank = r - f->rem;
        return MPI_SUCCESS;
    }
    if (r % 2 == 0) {
        f->newrank = -1;
        return locus_coll_send(acc, count, dt, r + 1, tag, comm);
    }
    f->newrank = r / 2;
    rc = locus_coll_recv(tmp, count, dt, r - 1, tag, comm, NULL);
    return rc != MPI_SUCCESS ? rc : locus_op_reduce(op, dt, count, tmp, acc);
}

/* Gives the folded-away ranks the result. */
int coll_fold_out(char *acc, int count, MPI_Datatype dt, int tag, MPI_Comm comm,
                    const coll_fold_t *f)
{
    int r = comm->rank;
    if (r >= 2 * f->rem)
        return MPI_SUCCESS;
    if (r % 2)
        return locus_coll_send(acc, count, dt, r - 1, tag, comm);
    return locus_coll_recv(acc, count, dt, r + 1, tag, comm, NULL);
}

/* Element counts and displacements of the pof2 blocks of count. */
void coll_blocks_split(int count, int pof2, int *cnts, int *disps)
{
    for (int i = 0; i < pof2; i++) {
        cnts[i] = count / pof2 + (i < count % pof2);
        disps[i] = i ? disps[i - 1] + cnts[i - 1] : 0;
    }
}

int coll_blocks_sum(const int *cnts, int lo, int hi)
{
    int s = 0;
    for (int i = lo; i < hi; i++)
        s += cnts[i];
    return s;
}

/*
 * Reduce-scatter by recursive halving among the remaining ranks: on return
 * block bitrev(newrank) of acc is fully reduced, and *idx and *last give the
 * block range [idx, last) this rank owns (one block). Commutative ops only.
 */
int coll_rs_halving(char *acc, char *tmp, MPI_Datatype dt, MPI_Op op, int tag, MPI_Comm comm,
                      const coll_fold_t *f, const int *cnts, const int *disps, int *idx_out,
                      int *last_out)
{
    int send_idx = 0, recv_idx = 0, last = f->pof2, mask;
    for (mask = 1; mask < f->pof2; mask <<= 1) {
        int nd = f->newrank ^ mask, dst = coll_fold_real(f, nd), half = f->pof2 / (mask * 2);
        int scnt, rcnt, sfrom;
        if (f->newrank < nd) {
            /* Keep the lower half, send the upper. */
            send_idx = recv_idx + half;
            sfrom = send_idx;
            scnt = coll_blocks_sum(cnts, send_idx, last);
            rcnt = coll_blocks_sum(cnts, recv_idx, send_idx);
        } else {
            recv_idx = send_idx + half;
            sfrom = send_idx;
            scnt = coll_blocks_sum(cnts, send_idx, recv_idx);
            rcnt = coll_blocks_sum(cnts, recv_idx, last);
        }
        int rc = locus_coll_sendrecv(coll_at(acc, dt, disps[sfrom]), scnt, dt, dst,
                                     coll_at(tmp, dt, disps[recv_idx]), rcnt, dt, dst, tag, comm);
        if (rc == MPI_SUCCESS)
            rc = locus_op_reduce(op, dt, rcnt, coll_at(tmp, dt, disps[recv_idx]),
                                 coll_at(acc, dt, disps[recv_idx]));
        if (rc != MPI_SUCCESS)
            return rc;
        send_idx = recv_idx;
        last = recv_idx + half;
    }
    *idx_out = recv_idx;
    *last_out = last;
    return MPI_SUCCESS;
}

/* Allgather by recursive doubling, undoing rs_halving's split. */
int coll_ag_doubling(char *acc, MPI_Datatype dt, int tag, MPI_Comm comm, const coll_fold_t *f,
                       const int *cnts, const int *disps, int idx, int last)
{
    /* My owned range grows from [idx, last) by doubling each step, walking
     * the masks in reverse. */
    for (int mask = f->pof2 / 2; mask > 0; mask >>= 1) {
        int nd = f->newrank ^ mask, dst = coll_fold_real(f, nd);
        int width = last - idx;
        int ridx, rlast;
        if (f->newrank < nd) {
            ridx = last;
            rlast = last + width;
        } else {
            ridx = idx - width;
            rlast = idx;
        }
        int rc = locus_coll_sendrecv(coll_at(acc, dt, disps[idx]),
                                     coll_blocks_sum(cnts, idx, last), dt,
                                     dst, coll_at(acc, dt, disps[ridx]),
                                     coll_blocks_sum(cnts, ridx, rlast), dt, dst, tag, comm);
        if (rc != MPI_SUCCESS)
            return rc;
        if (ridx < idx)
            idx = ridx;
        else
            last = rlast;
    }
    return MPI_SUCCESS;
}
