/*
 * coll_halving.c — the pieces shared by the reduce, allreduce and
 * reduce-scatter algorithms: folding a non-power-of-two communicator onto
 * pof2 ranks (order-preserving), and Rabenseifner's reduce-scatter by
 * recursive halving and allgather by recursive doubling over pof2 blocks.
 */
#include "coll_priv.h"

int coll_fold_real(const coll_fold_t *f, int nr)
{
    return nr < f->rem ? nr * 2 + 1 : nr + f->rem;
}

/* Ranks 2i and 2i+1 (i < rem) combine into 2i+1, keeping the rank order. */
void coll_fold_in(locus_coll_sched_t *s, char *acc, char *tmp, size_t count, locus_dtype_t *dt,
                  locus_op_t *op, int tag, locus_coll_comm_t *c, coll_fold_t *f)
{
    int r = c->rank;
    f->pof2 = coll_pof2(c->size);
    f->rem = c->size - f->pof2;
    if (r >= 2 * f->rem) {
        f->newrank = r - f->rem;
        return;
    }
    if (r % 2 == 0) {
        f->newrank = -1;
        coll_send(s, c, acc, count, dt, r + 1, tag);
        coll_fence(s);
        return;
    }
    f->newrank = r / 2;
    coll_recv(s, c, tmp, count, dt, r - 1, tag);
    coll_fence(s);
    coll_reduce_step(s, op, dt, count, tmp, acc);
}

/* Gives the folded-away ranks the result. */
void coll_fold_out(locus_coll_sched_t *s, char *acc, size_t count, locus_dtype_t *dt, int tag,
                   locus_coll_comm_t *c, const coll_fold_t *f)
{
    int r = c->rank;
    if (r >= 2 * f->rem)
        return;
    if (r % 2)
        coll_send(s, c, acc, count, dt, r - 1, tag);
    else
        coll_recv(s, c, acc, count, dt, r + 1, tag);
    coll_fence(s);
}

void coll_blocks_split(size_t count, int n, size_t *cnts, ptrdiff_t *disps)
{
    for (int i = 0; i < n; i++) {
        cnts[i] = count / (size_t)n + ((size_t)i < count % (size_t)n);
        disps[i] = i ? disps[i - 1] + (ptrdiff_t)cnts[i - 1] : 0;
    }
}

size_t coll_blocks_sum(const size_t *cnts, int lo, int hi)
{
    size_t sum = 0;
    for (int i = lo; i < hi; i++)
        sum += cnts[i];
    return sum;
}

/*
 * Reduce-scatter by recursive halving among the remaining ranks: afterwards
 * block bitrev(newrank) of acc is fully reduced, and [*idx, *last) is the
 * block range this rank owns (one block). Commutative ops only.
 */
void coll_rs_halving(locus_coll_sched_t *s, char *acc, char *tmp, locus_dtype_t *dt,
                     locus_op_t *op, int tag, locus_coll_comm_t *c, const coll_fold_t *f,
                     const size_t *cnts, const ptrdiff_t *disps, int *idx_out, int *last_out)
{
    int send_idx = 0, recv_idx = 0, last = f->pof2;
    for (int mask = 1; mask < f->pof2; mask <<= 1) {
        int nd = f->newrank ^ mask, dst = coll_fold_real(f, nd), half = f->pof2 / (mask * 2);
        size_t scnt, rcnt;
        if (f->newrank < nd) {
            /* Keep the lower half, send the upper. */
            send_idx = recv_idx + half;
            scnt = coll_blocks_sum(cnts, send_idx, last);
            rcnt = coll_blocks_sum(cnts, recv_idx, send_idx);
        } else {
            recv_idx = send_idx + half;
            scnt = coll_blocks_sum(cnts, send_idx, recv_idx);
            rcnt = coll_blocks_sum(cnts, recv_idx, last);
        }
        coll_sendrecv(s, c, coll_at(acc, dt, disps[send_idx]), scnt, dt, dst,
                      coll_at(tmp, dt, disps[recv_idx]), rcnt, dt, dst, tag);
        coll_reduce_step(s, op, dt, rcnt, coll_at(tmp, dt, disps[recv_idx]),
                         coll_at(acc, dt, disps[recv_idx]));
        send_idx = recv_idx;
        last = recv_idx + half;
    }
    *idx_out = recv_idx;
    *last_out = last;
}

/* Allgather by recursive doubling, undoing rs_halving's split: my owned
 * range grows from [idx, last) by doubling, walking the masks in reverse. */
void coll_ag_doubling(locus_coll_sched_t *s, char *acc, locus_dtype_t *dt, int tag,
                      locus_coll_comm_t *c, const coll_fold_t *f, const size_t *cnts,
                      const ptrdiff_t *disps, int idx, int last)
{
    for (int mask = f->pof2 / 2; mask > 0; mask >>= 1) {
        int nd = f->newrank ^ mask, dst = coll_fold_real(f, nd), width = last - idx;
        int ridx = f->newrank < nd ? last : idx - width;
        int rlast = f->newrank < nd ? last + width : idx;
        coll_sendrecv(s, c, coll_at(acc, dt, disps[idx]), coll_blocks_sum(cnts, idx, last), dt,
                      dst, coll_at(acc, dt, disps[ridx]), coll_blocks_sum(cnts, ridx, rlast), dt,
                      dst, tag);
        if (ridx < idx)
            idx = ridx;
        else
            last = rlast;
    }
}
