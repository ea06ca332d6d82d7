/*
 * file_coll.c — collective access by two-phase I/O (ROMIO's "generalized
 * two-phase", del Rosario, Bordawekar and Choudhary): the ranks' pieces,
 * scattered and interleaved in the file, are exchanged with a few
 * aggregators (file_info.c chooses them by node) which each own one
 * contiguous file domain and touch it in large blocks of cb_buffer_size.
 *
 * Every rank first learns every rank's extent and error (one allgather):
 * an error anywhere ends the call on all ranks before any exchange, and
 * the extents decide whether two-phase pays ("automatic": some rank's
 * access is non-contiguous or the ranks' extents interleave). Then, round
 * by round, each rank sends every aggregator the (offset, length) list of
 * its pieces in that aggregator's current block, and the data (write) or
 * receives it (read): an alltoall of counts and two alltoallv's. A rank's
 * data for one block is one contiguous range of its stream (the pieces
 * are in file order), so it is sent from and received into the stream
 * without copies. An aggregator whose block has holes reads it first
 * (read-modify-write, under a write lock).
 */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"

typedef struct {
    int64_t off, len;
    const char *data; /* write: where the source's bytes are */
} pair_t;

/* The first piece that ends after lo. */
static size_t first_piece(const rma_run_t *p, size_t n, int64_t lo)
{
    size_t a = 0, b = n;
    while (a < b) {
        size_t m = (a + b) / 2;
        if (p[m].off + (int64_t)p[m].len <= lo)
            a = m + 1;
        else
            b = m;
    }
    return a;
}

static int cmp_range(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

static int cmp_pair(const void *a, const void *b)
{
    const pair_t *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* 1 when two ranks' extents interleave (sorted by start, one starts
 * before the previous ends). */
static int interleaved(const int64_t *all, int size)
{
    int64_t *r = malloc((size_t)size * 2 * sizeof *r);
    int n = 0, res = 0;
    if (!r)
        return 1;
    for (int i = 0; i < size; i++)
        if (all[4 * i] < all[4 * i + 1]) {
            r[2 * n] = all[4 * i];
            r[2 * n + 1] = all[4 * i + 1];
            n++;
        }
    qsort(r, (size_t)n, 2 * sizeof *r, cmp_range);
    for (int i = 1; i < n && !res; i++)
        res = r[2 * i] < r[2 * i - 1];
    free(r);
    return res;
}

/* The state of one two-phase call. */
typedef struct {
    locus_file_t *f;
    int write;
    const rma_run_t *p;
    size_t n;
    uint64_t *spos;         /* [n]: stream position of each piece */
    char *stream;
    int64_t base, dom, cb;  /* domains: base + a*dom, blocks of cb */
    int64_t glo, ghi;
    size_t *cnt;            /* [2*size] per peer: pairs, bytes (sent) */
    size_t *rcnt;           /* [2*size] received */
    size_t *c1, *c2;        /* [size] scratch counts */
    ptrdiff_t *d1, *d2;     /* [size] scratch displacements */
    pair_t *meta;           /* my pairs this round, by aggregator */
    size_t nmeta, capmeta;
    char *block;            /* aggregator: the block */
} tp_t;

/* The block of aggregator a in round r: [*lo, *hi) (empty when lo >= hi). */
static void block_of(const tp_t *t, int a, int64_t r, int64_t *lo, int64_t *hi)
{
    int64_t dlo = t->base + a * t->dom, dhi = dlo + t->dom;
    if (dlo < t->glo)
        dlo = t->glo;
    if (dhi > t->ghi)
        dhi = t->ghi;
    *lo = t->base + a * t->dom + r * t->cb;
    if (*lo < dlo)
        *lo = dlo;
    *hi = t->base + a * t->dom + (r + 1) * t->cb;
    if (*hi > dhi)
        *hi = dhi;
}

/* My pairs for every aggregator in round r: t->meta, counts in t->cnt,
 * the stream displacement of each aggregator's data in t->d2. */
static int my_pairs(tp_t *t, int64_t r)
{
    locus_file_t *f = t->f;
    int size = f->comm->coll.size;
    t->nmeta = 0;
    memset(t->cnt, 0, 2 * (size_t)size * sizeof *t->cnt);
    memset(t->d2, 0, (size_t)size * sizeof *t->d2);
    for (int a = 0; a < f->naggs; a++) {
        int64_t lo, hi;
        block_of(t, a, r, &lo, &hi);
        int dest = f->aggs[a];
        if (lo >= hi)
            continue;
        for (size_t i = first_piece(t->p, t->n, lo); i < t->n && t->p[i].off < hi; i++) {
            int64_t s = t->p[i].off > lo ? t->p[i].off : lo;
            int64_t e = t->p[i].off + (int64_t)t->p[i].len;
            if (e > hi)
                e = hi;
            if (t->nmeta == t->capmeta) {
                size_t c = t->capmeta ? 2 * t->capmeta : 64;
                pair_t *m = realloc(t->meta, c * sizeof *m);
                if (!m)
                    return MPI_ERR_NO_MEM;
                t->meta = m;
                t->capmeta = c;
            }
            uint64_t at = t->spos[i] + (uint64_t)(s - t->p[i].off);
            if (t->cnt[2 * dest] == 0)
                t->d2[dest] = (ptrdiff_t)at;
            t->meta[t->nmeta++] = (pair_t){ s, e - s, NULL };
            t->cnt[2 * dest]++;
            t->cnt[2 * dest + 1] += (size_t)(e - s);
        }
    }
    return MPI_SUCCESS;
}

/* The aggregator's part of one round: pairs[np] received (data set for
 * a write); for a read it fills out (the bytes to send back, in pair
 * order). */
static int agg_round(tp_t *t, pair_t *pairs, size_t np, char *out)
{
    if (np == 0)
        return MPI_SUCCESS;
    int64_t mn = pairs[0].off, mx = pairs[0].off + pairs[0].len;
    for (size_t i = 1; i < np; i++) {
        if (pairs[i].off < mn)
            mn = pairs[i].off;
        if (pairs[i].off + pairs[i].len > mx)
            mx = pairs[i].off + pairs[i].len;
    }
    locus_file_t *f = t->f;
    int err = MPI_SUCCESS, locked = 0;
    uint64_t span = (uint64_t)(mx - mn);
    int holes = 0;
    if (t->write) {
        pair_t *s = malloc(np * sizeof *s);
        if (!s)
            return MPI_ERR_NO_MEM;
        memcpy(s, pairs, np * sizeof *s);
        qsort(s, np, sizeof *s, cmp_pair);
        int64_t cur = mn;
        for (size_t i = 0; i < np && !holes; i++) {
            holes = s[i].off > cur;
            if (s[i].off + s[i].len > cur)
                cur = s[i].off + s[i].len;
        }
        free(s);
    }
    if (!t->write || holes) {
        if (t->write && (err = io_lock(f, F_WRLCK, mn, (int64_t)span)) != MPI_SUCCESS)
            return err;
        locked = t->write;
        rma_run_t whole = { mn, span };
        uint64_t got = 0;
        err = io_pieces_read(f, &whole, 1, t->block, &got);
        if (err == MPI_SUCCESS && got < span)
            memset(t->block + got, 0, span - got);
        if (err != MPI_SUCCESS && t->write && !f->fd_rw)
            err = MPI_ERR_ACCESS;
    }
    if (err == MPI_SUCCESS && t->write) {
        for (size_t i = 0; i < np; i++)
            memcpy(t->block + (pairs[i].off - mn), pairs[i].data, (size_t)pairs[i].len);
        rma_run_t whole = { mn, span };
        io_hints_t keep = f->hints;
        f->hints.ds_write = IO_CB_DISABLE; /* one piece: written as it is */
        int atomic = f->atomic;
        f->atomic = 1;                     /* no second lock inside */
        err = io_pieces_write(f, &whole, 1, t->block);
        f->atomic = atomic;
        f->hints = keep;
    } else if (err == MPI_SUCCESS) {
        for (size_t i = 0; i < np; i++) {
            memcpy(out, t->block + (pairs[i].off - mn), (size_t)pairs[i].len);
            out += pairs[i].len;
        }
    }
    if (locked)
        io_lock(f, F_UNLCK, mn, (int64_t)span);
    return err;
}

/* One round: exchange the pairs, then the data. */
static int round_run(tp_t *t, int64_t r)
{
    locus_file_t *f = t->f;
    locus_coll_comm_t *cc = &f->comm->coll;
    int size = cc->size;
    locus_dtype_t *u64 = locus_dtype_basic(LOCUS_EL_UINT64), *byte = locus_dtype_basic(LOCUS_EL_BYTE);
    int err = my_pairs(t, r), e;
    /* counts (even a rank out of memory takes part, sending nothing) */
    if (err != MPI_SUCCESS)
        memset(t->cnt, 0, 2 * (size_t)size * sizeof *t->cnt);
    e = locus_coll_alltoall(t->cnt, 2, u64, t->rcnt, 2, u64, cc);
    if (e != MPI_SUCCESS)
        return e;
    /* the pairs, as (off, len) int64 pairs */
    size_t nin = 0, bytes_in = 0, at = 0;
    for (int i = 0; i < size; i++) {
        t->c1[i] = t->cnt[2 * i] * 2;
        t->d1[i] = (ptrdiff_t)at;
        at += t->c1[i];
        nin += t->rcnt[2 * i];
        bytes_in += t->rcnt[2 * i + 1];
    }
    int64_t *sm = malloc((at + 1) * sizeof *sm), *rm = malloc((2 * nin + 1) * sizeof *rm);
    pair_t *pairs = malloc((nin + 1) * sizeof *pairs);
    char *data = malloc(bytes_in + 1);
    if (!sm || !rm || !pairs || !data) {
        free(sm), free(rm), free(pairs), free(data);
        return MPI_ERR_NO_MEM; /* the peers' alltoallv would wait: the job is in trouble */
    }
    for (size_t i = 0; i < t->nmeta; i++) {
        sm[2 * i] = t->meta[i].off;
        sm[2 * i + 1] = t->meta[i].len;
    }
    at = 0;
    for (int i = 0; i < size; i++) {
        t->c2[i] = t->rcnt[2 * i] * 2;
        t->d1[i] = (ptrdiff_t)at;
        at += t->c2[i];
    }
    /* send displacements were overwritten: recompute */
    ptrdiff_t *sd = malloc((size_t)size * sizeof *sd);
    size_t s_at = 0;
    for (int i = 0; sd && i < size; i++) {
        sd[i] = (ptrdiff_t)s_at;
        s_at += t->c1[i];
    }
    e = sd ? locus_coll_alltoallv(sm, t->c1, sd, locus_dtype_basic(LOCUS_EL_INT64), rm, t->c2,
                                  t->d1, locus_dtype_basic(LOCUS_EL_INT64), cc)
           : MPI_ERR_NO_MEM;
    /* the data: bytes of each source in pair order */
    size_t k = 0, d_at = 0;
    for (int i = 0; i < size; i++) {
        t->c2[i] = t->rcnt[2 * i + 1];
        t->d1[i] = (ptrdiff_t)d_at;
        for (size_t j = 0; j < t->rcnt[2 * i]; j++, k++) {
            pairs[k] = (pair_t){ rm[2 * k], rm[2 * k + 1], data + d_at };
            d_at += (size_t)rm[2 * k + 1];
        }
        t->c1[i] = t->cnt[2 * i + 1];
    }
    if (e == MPI_SUCCESS && t->write) {
        e = locus_coll_alltoallv(t->stream, t->c1, t->d2, byte, data, t->c2, t->d1, byte, cc);
        if (e == MPI_SUCCESS)
            err = err != MPI_SUCCESS ? err : agg_round(t, pairs, nin, NULL);
    } else if (e == MPI_SUCCESS) {
        int ae = agg_round(t, pairs, nin, data);
        err = err != MPI_SUCCESS ? err : ae;
        /* back from the aggregators, into the stream where each block's
         * data lies */
        e = locus_coll_alltoallv(data, t->c2, t->d1, byte, t->stream, t->c1, t->d2, byte, cc);
    }
    free(sm), free(rm), free(pairs), free(data), free(sd);
    return e != MPI_SUCCESS ? e : err;
}

static int two_phase(locus_file_t *f, int write, const rma_run_t *p, size_t n, char *stream,
                     int64_t glo, int64_t ghi)
{
    int size = f->comm->coll.size;
    tp_t t = { .f = f, .write = write, .p = p, .n = n, .stream = stream, .glo = glo, .ghi = ghi };
    int64_t su = f->hints.striping_unit > 0 ? f->hints.striping_unit : 1;
    t.base = glo / su * su;
    int64_t span = ghi - t.base;
    t.dom = (span + f->naggs - 1) / f->naggs;
    t.dom = (t.dom + su - 1) / su * su;
    t.cb = (int64_t)f->hints.cb_buffer_size;
    if (t.cb > t.dom)
        t.cb = t.dom;
    int64_t rounds = (t.dom + t.cb - 1) / t.cb;
    t.spos = malloc((n + 1) * sizeof *t.spos);
    t.cnt = malloc(2 * (size_t)size * sizeof *t.cnt);
    t.rcnt = malloc(2 * (size_t)size * sizeof *t.rcnt);
    t.c1 = malloc((size_t)size * sizeof *t.c1);
    t.c2 = malloc((size_t)size * sizeof *t.c2);
    t.d1 = malloc((size_t)size * sizeof *t.d1);
    t.d2 = malloc((size_t)size * sizeof *t.d2);
    int is_agg = 0;
    for (int a = 0; a < f->naggs; a++)
        is_agg |= f->aggs[a] == f->comm->coll.rank;
    t.block = is_agg ? malloc((size_t)t.cb) : NULL;
    int err = MPI_SUCCESS;
    if (!t.spos || !t.cnt || !t.rcnt || !t.c1 || !t.c2 || !t.d1 || !t.d2 || (is_agg && !t.block))
        err = MPI_ERR_NO_MEM;
    /* Nobody may skip the rounds (the others would wait on it): agree on
     * the allocations first. */
    err = io_agree(f, err);
    if (err == MPI_SUCCESS) {
        uint64_t at = 0;
        for (size_t i = 0; i < n; i++) {
            t.spos[i] = at;
            at += p[i].len;
        }
        for (int64_t r = 0; r < rounds; r++) {
            int e = round_run(&t, r);
            err = err != MPI_SUCCESS ? err : e;
        }
    }
    free(t.spos), free(t.cnt), free(t.rcnt), free(t.c1), free(t.c2), free(t.d1), free(t.d2);
    free(t.meta), free(t.block);
    return err;
}

int io_coll(locus_file_t *f, int write, int err, const rma_run_t *p, size_t n, char *stream,
            uint64_t *got)
{
    locus_coll_comm_t *cc = &f->comm->coll;
    int size = cc->size;
    *got = 0;
    if (err != MPI_SUCCESS)
        n = 0;
    int64_t mine[4] = { n ? p[0].off : INT64_MAX, n ? p[n - 1].off + (int64_t)p[n - 1].len : 0,
                        err, n > 1 };
    int64_t *all = malloc((size_t)size * 4 * sizeof *all);
    if (!all)
        return io_agree(f, MPI_ERR_NO_MEM);
    locus_dtype_t *i64 = locus_dtype_basic(LOCUS_EL_INT64);
    int e = locus_coll_allgather(mine, 4, i64, all, 4, i64, cc);
    if (e != MPI_SUCCESS) {
        free(all);
        return e;
    }
    int64_t glo = INT64_MAX, ghi = 0, multi = 0;
    for (int i = 0; i < size; i++) {
        if (all[4 * i + 2] > err)
            err = (int)all[4 * i + 2];
        if (all[4 * i] < all[4 * i + 1]) {
            glo = all[4 * i] < glo ? all[4 * i] : glo;
            ghi = all[4 * i + 1] > ghi ? all[4 * i + 1] : ghi;
        }
        multi |= all[4 * i + 3];
    }
    int mode = write ? f->hints.cb_write : f->hints.cb_read;
    int use2 = !f->atomic && glo < ghi &&
               (mode == IO_CB_ENABLE || (mode == IO_CB_AUTO && (multi || interleaved(all, size))));
    free(all);
    if (err != MPI_SUCCESS || glo >= ghi)
        return err;
    if (use2) {
        err = two_phase(f, write, p, n, stream, glo, ghi);
    } else if (n > 0) {
        /* Each rank alone; in atomic mode each access under its lock. */
        int64_t lo = p[0].off, hi = p[n - 1].off + (int64_t)p[n - 1].len;
        if (f->atomic)
            err = io_lock(f, write ? F_WRLCK : F_RDLCK, lo, hi - lo);
        if (err == MPI_SUCCESS) {
            err = write ? io_pieces_write(f, p, n, stream) : io_pieces_read(f, p, n, stream, got);
            if (f->atomic)
                io_lock(f, F_UNLCK, lo, hi - lo);
        }
    }
    err = io_agree(f, err);
    if (err == MPI_SUCCESS && !write && use2 && n > 0) {
        /* what lay before the end of file; the rest was read as zeros */
        struct stat sb;
        if (fstat(f->fd, &sb) == 0)
            *got = io_pieces_before(p, n, sb.st_size);
        else
            err = io_errno_class(errno);
    }
    return err;
}
