/*
 * coll_check.c — every collective × several datatypes (basic, strided
 * vector, padded struct, pair types) × several communicators (world, a dup,
 * a parity split, a reversed-order split), checked on every rank against a
 * serial computation of what every rank contributed.
 *
 *   coll_check [max_count]
 *
 * Run under different LOCUS_COLL_* settings by ctest, so every algorithm is
 * exercised; prints " No Errors" when all checks pass.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static int errs;
static int wrank;
#define FAIL(...)                                                              \
    do {                                                                       \
        if (errs++ < 20) {                                                     \
            fprintf(stderr, "[%d] ", wrank);                                   \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
        }                                                                      \
    } while (0)

/* ---- test types: a logical stream of small integers in a typed buffer ---- */

typedef struct {
    const char *name;
    MPI_Datatype dt;
    int per;                  /* logical values per element */
    long ext;                 /* extent in bytes */
    void (*set)(void *buf, long i, long v);
    long (*get)(const void *buf, long i);
    int reducible;            /* predefined arithmetic ops apply */
} ttype_t;

static void int_set(void *b, long i, long v) { ((int *)b)[i] = (int)v; }
static long int_get(const void *b, long i) { return ((const int *)b)[i]; }
static void dbl_set(void *b, long i, long v) { ((double *)b)[i] = (double)v; }
static long dbl_get(const void *b, long i) { return (long)((const double *)b)[i]; }
/* vector(3, 1, 2, MPI_INT): ints 0, 2, 4 of every 5 (extent 5 ints). */
static void vec_set(void *b, long i, long v) { ((int *)b)[i / 3 * 5 + i % 3 * 2] = (int)v; }
static long vec_get(const void *b, long i) { return ((const int *)b)[i / 3 * 5 + i % 3 * 2]; }
typedef struct { int a; double d; } pad_t;    /* 4 bytes of padding inside */
static void pad_set(void *b, long i, long v)
{
    pad_t *p = (pad_t *)b + i / 2;
    if (i % 2)
        p->d = (double)v;
    else
        p->a = (int)v;
}
static long pad_get(const void *b, long i)
{
    const pad_t *p = (const pad_t *)b + i / 2;
    return i % 2 ? (long)p->d : p->a;
}
typedef struct { short v; int i; } si_t;
static void si_set(void *b, long i, long v)
{
    si_t *p = (si_t *)b + i / 2;
    if (i % 2)
        p->i = (int)v;
    else
        p->v = (short)v;
}
static long si_get(const void *b, long i)
{
    const si_t *p = (const si_t *)b + i / 2;
    return i % 2 ? p->i : p->v;
}

enum { T_INT, T_DBL, T_VEC, T_PAD, T_SI, NTYPES };
static ttype_t types[NTYPES];

static void types_make(void)
{
    MPI_Datatype vec, pad, padr;
    MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
    MPI_Datatype vr;
    MPI_Type_create_resized(vec, 0, 5 * sizeof(int), &vr);
    MPI_Type_free(&vec);
    MPI_Type_commit(&vr);
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {offsetof(pad_t, a), offsetof(pad_t, d)};
    MPI_Datatype ts[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(2, bl, d, ts, &pad);
    MPI_Type_create_resized(pad, 0, sizeof(pad_t), &padr);
    MPI_Type_free(&pad);
    MPI_Type_commit(&padr);
    types[T_INT] = (ttype_t){"int", MPI_INT, 1, sizeof(int), int_set, int_get, 1};
    types[T_DBL] = (ttype_t){"double", MPI_DOUBLE, 1, sizeof(double), dbl_set, dbl_get, 1};
    types[T_VEC] = (ttype_t){"vector", vr, 3, 5 * sizeof(int), vec_set, vec_get, 1};
    types[T_PAD] = (ttype_t){"struct", padr, 2, sizeof(pad_t), pad_set, pad_get, 0};
    types[T_SI] = (ttype_t){"short_int", MPI_SHORT_INT, 2, sizeof(si_t), si_set, si_get, 0};
}

static void types_free(void)
{
    MPI_Type_free(&types[T_VEC].dt);
    MPI_Type_free(&types[T_PAD].dt);
}

/* The value rank r contributes at logical position i (small, so sums and
 * products of up to 8 ranks stay exact in every type). */
static long val(int r, long i, int salt)
{
    return (long)((r * 7 + i * 3 + salt) % 11) - 3;
}

/* Buffers: allocated with room, filled with a sentinel first so writes
 * outside the data (vector gaps, struct padding) would be seen. */
static void *tbuf(const ttype_t *t, long count)
{
    size_t n = (size_t)(count > 0 ? count : 1) * (size_t)t->ext;
    void *b = malloc(n);
    memset(b, 0x5c, n);
    return b;
}

static void fill(const ttype_t *t, void *b, long count, int r, int salt)
{
    for (long i = 0; i < count * t->per; i++)
        t->set(b, i, val(r, i, salt));
}

/* Vector gaps must still hold the sentinel. */
static int gaps_ok(const ttype_t *t, const void *b, long count)
{
    if (t->dt != types[T_VEC].dt)
        return 1;
    const int *p = b;
    int sentinel;
    memset(&sentinel, 0x5c, sizeof(sentinel));
    for (long e = 0; e < count; e++)
        if (p[e * 5 + 1] != sentinel || p[e * 5 + 3] != sentinel)
            return 0;
    return 1;
}

static int check_vals(const char *what, const ttype_t *t, const void *b, long count, long first,
                      long (*want)(long i, void *ctx), void *ctx)
{
    for (long i = 0; i < count * t->per; i++) {
        long got = t->get(b, i), w = want(first + i, ctx);
        if (got != w) {
            FAIL("%s (%s): element %ld got %ld want %ld", what, t->name, i, got, w);
            return 0;
        }
    }
    if (!gaps_ok(t, b, count)) {
        FAIL("%s (%s): wrote into vector gaps", what, t->name);
        return 0;
    }
    return 1;
}

/* ---- expected values ---- */

typedef struct {
    int rank, size, salt;
    MPI_Op op;
    int lo, hi;        /* ranks lo..hi-1 contribute (scans) */
} want_t;

static long w_rank(long i, void *c)
{
    want_t *w = c;
    return val(w->rank, i, w->salt);
}

static long combine(MPI_Op op, long a, long b)
{
    if (op == MPI_SUM) return a + b;
    if (op == MPI_PROD) return a * b;
    if (op == MPI_MAX) return a > b ? a : b;
    if (op == MPI_MIN) return a < b ? a : b;
    if (op == MPI_BAND) return a & b;
    if (op == MPI_BOR) return a | b;
    if (op == MPI_BXOR) return a ^ b;
    if (op == MPI_LAND) return (a != 0) && (b != 0);
    if (op == MPI_LOR) return (a != 0) || (b != 0);
    if (op == MPI_LXOR) return (a != 0) != (b != 0);
    abort();
}

static long w_reduce(long i, void *c)
{
    want_t *w = c;
    long acc = val(w->lo, i, w->salt);
    for (int r = w->lo + 1; r < w->hi; r++)
        acc = combine(w->op, acc, val(r, i, w->salt));
    return acc;
}

/* MINLOC/MAXLOC over short_int pairs: logical 2k is the value, 2k+1 the
 * index; every rank contributes (val, its rank). */
static long w_loc(long i, void *c)
{
    want_t *w = c;
    long k = i / 2, best = -1, bi = 0;
    for (int r = 0; r < w->size; r++) {
        long v = val(r, 2 * k, w->salt);
        if (r == 0 || (w->op == MPI_MINLOC ? v < best : v > best)) {
            best = v;
            bi = r;
        }
    }
    return i % 2 ? bi : best;
}

/* ---- collectives ---- */

static void t_bcast(MPI_Comm comm, const ttype_t *t, int count)
{
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    for (int root = 0; root < p; root += (p > 3 ? p / 2 : 1)) {
        void *b = tbuf(t, count);
        if (r == root)
            fill(t, b, count, root, 1);
        MPI_Bcast(b, count, t->dt, root, comm);
        want_t w = {root, p, 1, 0, 0, 0};
        check_vals("bcast", t, b, count, 0, w_rank, &w);
        free(b);
    }
}

static void t_reduce(MPI_Comm comm, const ttype_t *t, int count, MPI_Op op, int inplace)
{
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    int root = p - 1;
    void *s = tbuf(t, count), *b = tbuf(t, count);
    fill(t, s, count, r, 2);
    if (inplace && r == root)
        fill(t, b, count, r, 2);
    MPI_Reduce(inplace && r == root ? MPI_IN_PLACE : s, b, count, t->dt, op, root, comm);
    want_t w = {r, p, 2, op, 0, p};
    if (r == root)
        check_vals("reduce", t, b, count, 0, w_reduce, &w);
    free(s);
    free(b);
}

static void t_allreduce(MPI_Comm comm, const ttype_t *t, int count, MPI_Op op, int inplace)
{
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    void *s = tbuf(t, count), *b = tbuf(t, count);
    fill(t, inplace ? b : s, count, r, 3);
    if (t->dt == MPI_SHORT_INT)   /* pairs carry (value, my rank) */
        for (long k = 0; k < count; k++)
            t->set(inplace ? b : s, 2 * k + 1, r);
    MPI_Allreduce(inplace ? MPI_IN_PLACE : s, b, count, t->dt, op, comm);
    want_t w = {r, p, 3, op, 0, p};
    check_vals(inplace ? "allreduce in place" : "allreduce", t, b, count, 0,
               t->dt == MPI_SHORT_INT ? w_loc : w_reduce, &w);
    /* Non-blocking form, with a second one outstanding at the same time. */
    void *b2 = tbuf(t, count), *s2 = tbuf(t, count);
    fill(t, s2, count, r, 3);
    if (t->dt == MPI_SHORT_INT)
        for (long k = 0; k < count; k++)
            t->set(s2, 2 * k + 1, r);
    MPI_Request rq[2];
    MPI_Iallreduce(s2, b2, count, t->dt, op, comm, &rq[0]);
    MPI_Ibarrier(comm, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    check_vals("iallreduce", t, b2, count, 0, t->dt == MPI_SHORT_INT ? w_loc : w_reduce, &w);
    free(s);
    free(b);
    free(s2);
    free(b2);
}

static void t_scan(MPI_Comm comm, const ttype_t *t, int count, MPI_Op op, int exclusive)
{
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    for (int inplace = 0; inplace < 2; inplace++) {
        void *s = tbuf(t, count), *b = tbuf(t, count);
        fill(t, inplace ? b : s, count, r, 4);
        const void *src = inplace ? MPI_IN_PLACE : s;
        if (exclusive)
            MPI_Exscan(src, b, count, t->dt, op, comm);
        else
            MPI_Scan(src, b, count, t->dt, op, comm);
        want_t w = {r, p, 4, op, 0, exclusive ? r : r + 1};
        if (w.hi > 0)
            check_vals(exclusive ? "exscan" : "scan", t, b, count, 0, w_reduce, &w);
        free(s);
        free(b);
    }
}

static void t_reduce_scatter(MPI_Comm comm, const ttype_t *t, int count, MPI_Op op, int block)
{
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    int *cnts = malloc(sizeof(int) * p), total = 0, before = 0;
    for (int i = 0; i < p; i++) {
        cnts[i] = block ? count : (count + i) % (count + 2);
        if (i < r)
            before += cnts[i];
        total += cnts[i];
    }
    for (int inplace = 0; inplace < 2; inplace++) {
        /* In place, the input is the whole receive buffer. */
        void *s = tbuf(t, total), *b = tbuf(t, inplace ? total : cnts[r]);
        fill(t, inplace ? b : s, total, r, 5);
        const void *src = inplace ? MPI_IN_PLACE : s;
        if (block)
            MPI_Reduce_scatter_block(src, b, count, t->dt, op, comm);
        else
            MPI_Reduce_scatter(src, b, cnts, t->dt, op, comm);
        want_t w = {r, p, 5, op, 0, p};
        check_vals(block ? "reduce_scatter_block" : "reduce_scatter", t, b, cnts[r],
                   (long)before * t->per, w_reduce, &w);
        free(s);
        free(b);
    }
    free(cnts);
}

/* Logical value j of the block rank `from` sends to rank `to`. */
static long pairval(int from, int to, long j) { return (from * 13 + to * 5 + j) % 17; }

typedef struct { int from, to; } pv_t;
static long w_pair(long i, void *c)
{
    pv_t *v = c;
    return pairval(v->from, v->to, i);
}

static void t_gather_family(MPI_Comm comm, const ttype_t *t, int count)
{
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    long per = (long)count * t->per;
    int root = (p + 1) / 3;   /* not rank 0 from 2 ranks on */
    /* gather: rank r's block is pairval(r, root, .) */
    void *s = tbuf(t, count), *all = tbuf(t, (long)count * p);
    for (long j = 0; j < per; j++)
        t->set(s, j, pairval(r, root, j));
    for (int inplace = 0; inplace < 2; inplace++) {
        memset(all, 0x5c, (size_t)count * p * t->ext);
        if (inplace && r == root)
            for (long j = 0; j < per; j++)
                t->set((char *)all + (long)r * count * t->ext, j, pairval(r, root, j));
        MPI_Gather(inplace && r == root ? MPI_IN_PLACE : s, count, t->dt, all, count, t->dt, root,
                   comm);
        if (r == root)
            for (int q = 0; q < p; q++) {
                pv_t v = {q, root};
                check_vals(inplace ? "gather in place" : "gather", t,
                           (char *)all + (long)q * count * t->ext, count, 0, w_pair, &v);
            }
    }
    /* scatter: root sends pairval(root, q, .) to q */
    void *got = tbuf(t, count);
    if (r == root)
        for (int q = 0; q < p; q++)
            for (long j = 0; j < per; j++)
                t->set((char *)all + (long)q * count * t->ext, j, pairval(root, q, j));
    MPI_Scatter(all, count, t->dt, got, count, t->dt, root, comm);
    pv_t v = {root, r};
    check_vals("scatter", t, got, count, 0, w_pair, &v);
    if (r == root)   /* in place at root: its block stays */
        MPI_Scatter(all, count, t->dt, MPI_IN_PLACE, count, t->dt, root, comm);
    else
        MPI_Scatter(NULL, 0, MPI_INT, got, count, t->dt, root, comm);
    check_vals("scatter in place", t, got, count, 0, w_pair, &v);
    /* allgather (plain and in place): block q is pairval(q, -1, .) */
    for (long j = 0; j < per; j++)
        t->set(s, j, pairval(r, 99, j));
    for (int inplace = 0; inplace < 2; inplace++) {
        memset(all, 0x5c, (size_t)count * p * t->ext);
        if (inplace)
            for (long j = 0; j < per; j++)
                t->set((char *)all + (long)r * count * t->ext, j, pairval(r, 99, j));
        MPI_Allgather(inplace ? MPI_IN_PLACE : s, count, t->dt, all, count, t->dt, comm);
        for (int q = 0; q < p; q++) {
            pv_t w = {q, 99};
            check_vals(inplace ? "allgather in place" : "allgather", t,
                       (char *)all + (long)q * count * t->ext, count, 0, w_pair, &w);
        }
    }
    /* v forms: rank q contributes q % 3 + count elements, placed in reverse
     * rank order with a gap of one element between blocks. */
    int *cnts = malloc(sizeof(int) * p), *displs = malloc(sizeof(int) * p), total = 0;
    for (int q = 0; q < p; q++)
        cnts[q] = q % 3 + count;
    for (int q = p - 1; q >= 0; q--) {
        displs[q] = total;
        total += cnts[q] + 1;
    }
    void *vs = tbuf(t, cnts[r]), *vall = tbuf(t, total);
    for (long j = 0; j < (long)cnts[r] * t->per; j++)
        t->set(vs, j, pairval(r, 7, j));
    MPI_Gatherv(vs, cnts[r], t->dt, vall, cnts, displs, t->dt, root, comm);
    if (r == root)
        for (int q = 0; q < p; q++) {
            pv_t w = {q, 7};
            check_vals("gatherv", t, (char *)vall + (long)displs[q] * t->ext, cnts[q], 0, w_pair,
                       &w);
        }
    for (int inplace = 0; inplace < 2; inplace++) {
        memset(vall, 0x5c, (size_t)total * t->ext);
        if (inplace)
            for (long j = 0; j < (long)cnts[r] * t->per; j++)
                t->set((char *)vall + (long)displs[r] * t->ext, j, pairval(r, 7, j));
        MPI_Allgatherv(inplace ? MPI_IN_PLACE : vs, cnts[r], t->dt, vall, cnts, displs, t->dt,
                       comm);
        for (int q = 0; q < p; q++) {
            pv_t w = {q, 7};
            check_vals(inplace ? "allgatherv in place" : "allgatherv", t,
                       (char *)vall + (long)displs[q] * t->ext, cnts[q], 0, w_pair, &w);
        }
    }
    if (r == root)
        for (int q = 0; q < p; q++)
            for (long j = 0; j < (long)cnts[q] * t->per; j++)
                t->set((char *)vall + (long)displs[q] * t->ext, j, pairval(root, q, j));
    void *vgot = tbuf(t, cnts[r]);
    MPI_Scatterv(vall, cnts, displs, t->dt, vgot, cnts[r], t->dt, root, comm);
    pv_t w = {root, r};
    check_vals("scatterv", t, vgot, cnts[r], 0, w_pair, &w);
    free(s);
    free(all);
    free(got);
    free(cnts);
    free(displs);
    free(vs);
    free(vall);
    free(vgot);
}

static void t_alltoall(MPI_Comm comm, const ttype_t *t, int count)
{
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    long per = (long)count * t->per;
    void *s = tbuf(t, (long)count * p), *b = tbuf(t, (long)count * p);
    for (int q = 0; q < p; q++)
        for (long j = 0; j < per; j++)
            t->set((char *)s + (long)q * count * t->ext, j, pairval(r, q, j));
    for (int inplace = 0; inplace < 2; inplace++) {
        if (inplace)
            memcpy(b, s, (size_t)count * p * t->ext);
        else
            memset(b, 0x5c, (size_t)count * p * t->ext);
        MPI_Alltoall(inplace ? MPI_IN_PLACE : s, count, t->dt, b, count, t->dt, comm);
        for (int q = 0; q < p; q++) {
            pv_t v = {q, r};
            check_vals(inplace ? "alltoall in place" : "alltoall", t,
                       (char *)b + (long)q * count * t->ext, count, 0, w_pair, &v);
        }
    }
    /* alltoallv: rank a sends (a + b) % 3 elements to b, blocks reversed. */
    int *sc = malloc(sizeof(int) * p), *sd = malloc(sizeof(int) * p);
    int *rc = malloc(sizeof(int) * p), *rd = malloc(sizeof(int) * p), st = 0, rt = 0;
    for (int q = p - 1; q >= 0; q--) {
        sc[q] = (r + q) % 3 + (count > 0);
        rc[q] = (q + r) % 3 + (count > 0);
        sd[q] = st;
        rd[q] = rt;
        st += sc[q];
        rt += rc[q];
    }
    void *vs = tbuf(t, st), *vr = tbuf(t, rt);
    for (int q = 0; q < p; q++)
        for (long j = 0; j < (long)sc[q] * t->per; j++)
            t->set((char *)vs + (long)sd[q] * t->ext, j, pairval(r, q, j));
    MPI_Alltoallv(vs, sc, sd, t->dt, vr, rc, rd, t->dt, comm);
    for (int q = 0; q < p; q++) {
        pv_t v = {q, r};
        check_vals("alltoallv", t, (char *)vr + (long)rd[q] * t->ext, rc[q], 0, w_pair, &v);
    }
    free(s);
    free(b);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(vs);
    free(vr);
}

/* ---- user operations ---- */

/* Affine maps x -> a*x + b composed left to right: non-commutative. */
static void affine_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    unsigned *u = in, *v = inout;
    for (int i = 0; i < *len; i++) {
        unsigned a = u[2 * i] * v[2 * i], b = v[2 * i] * u[2 * i + 1] + v[2 * i + 1];
        v[2 * i] = a;
        v[2 * i + 1] = b;
    }
}

/* Sum over the strided vector type (the user sees the user layout). */
static void vec_sum_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (long i = 0; i < (long)*len * 3; i++)
        vec_set(inout, i, vec_get(in, i) + vec_get(inout, i));
}

static void t_user_ops(MPI_Comm comm, int count)
{
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_UNSIGNED, &pair);
    MPI_Type_commit(&pair);
    MPI_Op aff, vsum;
    MPI_Op_create(affine_op, 0, &aff);
    MPI_Op_create(vec_sum_op, 1, &vsum);
    size_t bytes = sizeof(unsigned) * 2 * (size_t)(count + 1);
    unsigned *s = malloc(bytes), *b = malloc(bytes);
    for (int i = 0; i < count; i++) {
        s[2 * i] = (unsigned)(r + i) % 3 + 1;
        s[2 * i + 1] = (unsigned)(r * 5 + i) % 7;
    }
    /* serial: compose ranks 0..hi-1 in order */
    unsigned *want = malloc(sizeof(unsigned) * 2 * (count + 1));
    for (int kind = 0; kind < 3; kind++) {
        int hi = p;
        if (kind == 0)
            MPI_Allreduce(s, b, count, pair, aff, comm);
        else if (kind == 1)
            MPI_Reduce(s, b, count, pair, aff, 0, comm);
        else {
            MPI_Scan(s, b, count, pair, aff, comm);
            hi = r + 1;
        }
        if (kind == 1 && r != 0)
            continue;
        for (int i = 0; i < count; i++) {
            unsigned a = 1, c = 0;
            for (int q = 0; q < hi; q++) {
                unsigned qa = (unsigned)(q + i) % 3 + 1, qb = (unsigned)(q * 5 + i) % 7;
                c = qa * c + qb;
                a = a * qa;
            }
            want[2 * i] = a;
            want[2 * i + 1] = c;
        }
        if (memcmp(b, want, sizeof(unsigned) * 2 * count))
            FAIL("user non-commutative op (%s) wrong", kind == 0 ? "allreduce"
                                                      : kind == 1 ? "reduce" : "scan");
    }
    const ttype_t *t = &types[T_VEC];
    void *vs = tbuf(t, count), *vb = tbuf(t, count);
    fill(t, vs, count, r, 6);
    MPI_Allreduce(vs, vb, count, t->dt, vsum, comm);
    want_t w = {r, p, 6, MPI_SUM, 0, p};
    check_vals("user op on vector", t, vb, count, 0, w_reduce, &w);
    MPI_Op_free(&aff);
    MPI_Op_free(&vsum);
    if (aff != MPI_OP_NULL)
        FAIL("MPI_Op_free did not reset the handle");
    MPI_Type_free(&pair);
    free(s);
    free(b);
    free(want);
    free(vs);
    free(vb);
}

/* ---- driver ---- */

static void run_all(MPI_Comm comm, int maxcount)
{
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    int counts[] = {0, 1, 5, maxcount};
    MPI_Op int_ops[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_BAND, MPI_BOR, MPI_BXOR,
                        MPI_LAND, MPI_LOR, MPI_LXOR};
    for (int ci = 0; ci < 4; ci++) {
        int count = counts[ci];
        MPI_Barrier(comm);
        for (int ti = 0; ti < NTYPES; ti++) {
            const ttype_t *t = &types[ti];
            t_bcast(comm, t, count);
            t_gather_family(comm, t, count);
            t_alltoall(comm, t, count);
            if (t->dt == MPI_SHORT_INT) {
                t_allreduce(comm, t, count, MPI_MINLOC, 0);
                t_allreduce(comm, t, count, MPI_MAXLOC, 1);
            }
            if (!t->reducible)
                continue;
            for (size_t oi = 0; oi < sizeof(int_ops) / sizeof(int_ops[0]); oi++) {
                MPI_Op op = int_ops[oi];
                int is_int = t->dt != MPI_DOUBLE;
                if (!is_int && op != MPI_SUM && op != MPI_PROD && op != MPI_MAX && op != MPI_MIN)
                    continue;
                /* The full matrix for small counts; SUM/MAX on the large one. */
                if (count == maxcount && op != MPI_SUM && op != MPI_MAX)
                    continue;
                t_allreduce(comm, t, count, op, (int)oi % 2);
                t_reduce(comm, t, count, op, (int)oi % 2);
                if (op == MPI_SUM || op == MPI_MAX || op == MPI_BXOR) {
                    t_scan(comm, t, count, op, 0);
                    t_scan(comm, t, count, op, 1);
                    t_reduce_scatter(comm, t, count, op, 0);
                    t_reduce_scatter(comm, t, count, op, 1);
                }
            }
        }
        if (count > 0)
            t_user_ops(comm, count);
    }
    /* Ibcast with several outstanding, different roots. */
    int n = maxcount, *a = malloc(sizeof(int) * (n + 1)), *b = malloc(sizeof(int) * (n + 1));
    for (int i = 0; i < n; i++) {
        a[i] = r == 0 ? i * 3 : -1;
        b[i] = r == p - 1 ? i * 5 : -1;
    }
    MPI_Request rq[2];
    MPI_Ibcast(a, n, MPI_INT, 0, comm, &rq[0]);
    MPI_Ibcast(b, n, MPI_INT, p - 1, comm, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    for (int i = 0; i < n; i++)
        if (a[i] != i * 3 || b[i] != i * 5) {
            FAIL("ibcast element %d: %d %d", i, a[i], b[i]);
            break;
        }
    free(a);
    free(b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int maxcount = argc > 1 ? atoi(argv[1]) : 300;
    int p;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    types_make();
    run_all(MPI_COMM_WORLD, maxcount);
    MPI_Comm dup, par, rev;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    run_all(dup, maxcount / 3);
    /* A collective on the dup must not see traffic of the world one. */
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &par);
    run_all(par, maxcount / 3);
    MPI_Comm_split(MPI_COMM_WORLD, 0, p - wrank, &rev);
    run_all(rev, maxcount / 3);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&par);
    MPI_Comm_free(&rev);
    types_free();
    int total;
    MPI_Allreduce(&errs, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0) {
        if (total)
            printf(" Found %d errors\n", total);
        else
            printf(" No Errors\n");
    }
    MPI_Finalize();
    return total != 0;
}
