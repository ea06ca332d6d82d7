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
#include <sys/uio.h>
#include <unistd.h>

#include "io.h"

/* Two-phase's large buffers (the aggregator's block, each round's data),
 * kept for the next rounds and calls: glibc gives a freed block at the top
 * of the heap back to the system, and faulting 16 MiB back in page by page
 * every round cost an aggregator more than its copies (perf: 28 % of its
 * time in page faults). Taken and given back under the MPI entry lock, so
 * two threads never hold one; at most IO_SPARE_MAX bytes each are kept. */
#define IO_SPARE_MAX (256u << 20)
static struct {
    char *p;
    size_t len;
    int used;
} spare[2];

static char *spare_take(size_t len)
{
    for (int i = 0; i < 2; i++)
        if (spare[i].p && !spare[i].used && spare[i].len >= len) {
            spare[i].used = 1;
            return spare[i].p;
        }
    return malloc(len ? len : 1);
}

static void spare_give(char *p, size_t len)
{
    if (!p)
        return;
    for (int i = 0; i < 2; i++)
        if (spare[i].p == p) {
            spare[i].used = 0;
            return;
        }
    for (int i = 0; i < 2 && len <= IO_SPARE_MAX; i++)
        if (!spare[i].used && spare[i].len < len) {
            free(spare[i].p);
            spare[i].p = p, spare[i].len = len;
            return;
        }
    free(p);
}

void io_coll_finalize(void)
{
    for (int i = 0; i < 2; i++) {
        free(spare[i].p);
        spare[i].p = NULL, spare[i].len = 0, spare[i].used = 0;
    }
}

typedef struct {
    int64_t off, len;
    const char *data; /* where its bytes are (a write) or go (a read) */
} pair_t;

/* Mean piece from which collective reads on one node are done in place. */
#define IO_READ_IN_PLACE_PIECE 4096

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
static int interleaved(const int64_t *all, int size, int stride)
{
    int64_t *r = malloc((size_t)size * 2 * sizeof *r);
    int n = 0, res = 0;
    if (!r)
        return 1;
    for (int i = 0; i < size; i++)
        if (all[stride * i] < all[stride * i + 1]) {
            r[2 * n] = all[stride * i];
            r[2 * n + 1] = all[stride * i + 1];
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

/* Pieces sorted by offset that follow each other without a gap or an
 * overlap: moved with pwritev/preadv straight between the file and where
 * their bytes are, without the staging block's extra copy. A read past
 * the end of the file leaves zeros, as a block read does. */
static int vec_move(int fd, int write, const pair_t *s, size_t np)
{
    int64_t off = s[0].off;
    size_t i = 0, skip = 0; /* bytes of s[i] already moved */
    for (;;) {
        while (i < np && s[i].len == 0) /* an empty piece moves nothing */
            i++;
        if (i == np)
            return MPI_SUCCESS;
        struct iovec v[256];
        int nv = 0;
        for (size_t k = i; k < np && nv < 256; k++, nv++) {
            v[nv].iov_base = (char *)s[k].data + (k == i ? skip : 0);
            v[nv].iov_len = (size_t)s[k].len - (k == i ? skip : 0);
        }
        ssize_t got = write ? pwritev(fd, v, nv, off) : preadv(fd, v, nv, off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return io_errno_class(errno);
        if (got == 0 && write)
            return MPI_ERR_IO;
        if (got == 0) { /* end of file */
            for (; i < np; i++, skip = 0)
                memset((char *)s[i].data + skip, 0, (size_t)s[i].len - skip);
            return MPI_SUCCESS;
        }
        off += got;
        for (size_t n = (size_t)got; n > 0 && i < np;) {
            size_t left = (size_t)s[i].len - skip;
            if (n < left) {
                skip += n;
                break;
            }
            n -= left, i++, skip = 0;
        }
    }
}

/* The aggregator's part of one round: pairs[np] received, each with
 * where its bytes are (a write) or go (a read). */
static int agg_round(tp_t *t, pair_t *pairs, size_t np)
{
    if (np == 0)
        return MPI_SUCCESS;
    locus_file_t *f = t->f;
    pair_t *s = malloc(np * sizeof *s);
    if (!s)
        return MPI_ERR_NO_MEM;
    memcpy(s, pairs, np * sizeof *s);
    qsort(s, np, sizeof *s, cmp_pair);
    int64_t mn = s[0].off, mx = s[0].off, cur = s[0].off;
    int holes = 0, tiled = 1; /* tiled: no hole and no overlap */
    for (size_t i = 0; i < np; i++) {
        holes |= s[i].off > cur;
        tiled &= s[i].off == cur;
        if (s[i].off + s[i].len > cur)
            cur = s[i].off + s[i].len;
    }
    mx = cur;
    int err = MPI_SUCCESS, locked = 0;
    uint64_t span = (uint64_t)(mx - mn);
    if (tiled) {
        err = vec_move(f->fd, t->write, s, np);
        free(s);
        return err;
    }
    free(s);
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
        for (size_t i = 0; i < np; i++)
            memcpy((char *)pairs[i].data, t->block + (pairs[i].off - mn), (size_t)pairs[i].len);
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
    char *data = spare_take(bytes_in + 1);
    if (!sm || !rm || !pairs || !data) {
        free(sm), free(rm), free(pairs), spare_give(data, bytes_in + 1);
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
    /* the data: bytes of each source in pair order; the aggregator's own
     * stay in its stream (no copy to itself) */
    int me = cc->rank;
    size_t k = 0, d_at = 0;
    for (int i = 0; i < size; i++) {
        char *from = i == me ? t->stream + t->d2[me] : data + d_at;
        t->c2[i] = i == me ? 0 : t->rcnt[2 * i + 1];
        t->d1[i] = (ptrdiff_t)d_at;
        for (size_t j = 0; j < t->rcnt[2 * i]; j++, k++) {
            pairs[k] = (pair_t){ rm[2 * k], rm[2 * k + 1], from };
            from += (size_t)rm[2 * k + 1];
        }
        d_at += t->c2[i];
        t->c1[i] = i == me ? 0 : t->cnt[2 * i + 1];
    }
    if (e == MPI_SUCCESS && t->write) {
        e = locus_coll_alltoallv(t->stream, t->c1, t->d2, byte, data, t->c2, t->d1, byte, cc);
        if (e == MPI_SUCCESS)
            err = err != MPI_SUCCESS ? err : agg_round(t, pairs, nin);
    } else if (e == MPI_SUCCESS) {
        int ae = agg_round(t, pairs, nin);
        err = err != MPI_SUCCESS ? err : ae;
        /* back from the aggregators, into the stream where each block's
         * data lies */
        e = locus_coll_alltoallv(data, t->c2, t->d1, byte, t->stream, t->c1, t->d2, byte, cc);
    }
    free(sm), free(rm), free(pairs), free(sd);
    spare_give(data, bytes_in + 1);
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
    t.block = is_agg ? spare_take((size_t)t.cb) : NULL;
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
    free(t.meta);
    spare_give(t.block, (size_t)t.cb);
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
    uint64_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += p[i].len;
    enum { W = 6 }; /* lo, hi, error, several pieces, pieces, bytes */
    int64_t mine[W] = { n ? p[0].off : INT64_MAX, n ? p[n - 1].off + (int64_t)p[n - 1].len : 0,
                        err, n > 1, (int64_t)n, (int64_t)bytes };
    int64_t *all = malloc((size_t)size * W * sizeof *all);
    if (!all)
        return io_agree(f, MPI_ERR_NO_MEM);
    locus_dtype_t *i64 = locus_dtype_basic(LOCUS_EL_INT64);
    int e = locus_coll_allgather(mine, W, i64, all, W, i64, cc);
    if (e != MPI_SUCCESS) {
        free(all);
        return e;
    }
    int64_t glo = INT64_MAX, ghi = 0, multi = 0, pieces = 0, total = 0;
    for (int i = 0; i < size; i++) {
        int64_t *a = all + W * i;
        if (a[2] > err)
            err = (int)a[2];
        if (a[0] < a[1]) {
            glo = a[0] < glo ? a[0] : glo;
            ghi = a[1] > ghi ? a[1] : ghi;
        }
        multi |= a[3];
        pieces += a[4];
        total += a[5];
    }
    int mode = write ? f->hints.cb_write : f->hints.cb_read;
    int use2 = !f->atomic && glo < ghi &&
               (mode == IO_CB_ENABLE || (mode == IO_CB_AUTO && (multi || interleaved(all, size, W))));
    /* Reads on one node: the ranks share one page cache and no network
     * lies between them, so two-phase's exchange is only an extra copy
     * and one reader where all could read; with pieces of a page or more
     * each rank reads its own in place (measured: 10-11 GB/s against 4-6
     * with one or with every rank aggregating, 2 ranks, 16-256 MiB). */
    int in_place = use2 && !write && mode == IO_CB_AUTO && cc->num_nodes <= 1 &&
                   pieces > 0 && total / pieces >= IO_READ_IN_PLACE_PIECE;
    use2 &= !in_place;
    free(all);
    if (err != MPI_SUCCESS || glo >= ghi)
        return err;
    io_hints_t keep = f->hints;
    if (in_place)
        f->hints.ds_read = IO_CB_DISABLE;
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
    f->hints = keep;
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
