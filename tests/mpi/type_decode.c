/*
 * type_decode.c — MPI_Type_get_envelope/get_contents (and their _c forms)
 * for every combiner: the counts the standard's table gives, the recorded
 * arguments themselves, and a round trip that rebuilds each type (and its
 * derived components, recursively) from its contents and compares the
 * rebuilt type's bounds and pack stream with the original's. Components
 * freed before decoding still decode; returned derived handles are new
 * objects the caller frees; predefined ones come back as themselves.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

/* The error class of a return code (an MPI may return codes, not classes). */
static int ecls(int rc)
{
    int c = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

static int is_named_or_predef(MPI_Datatype t)
{
    MPI_Count ni, na, nc, nd;
    int comb;
    MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &comb);
    return comb == MPI_COMBINER_NAMED || comb == MPI_COMBINER_F90_REAL ||
           comb == MPI_COMBINER_F90_COMPLEX || comb == MPI_COMBINER_F90_INTEGER ||
           comb == MPI_COMBINER_VALUE_INDEX;
}

/* A new type built from t's contents (t itself when named). */
static MPI_Datatype rebuild(MPI_Datatype t)
{
    MPI_Count ni, na, nc, nd;
    int comb;
    MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &comb);
    if (comb == MPI_COMBINER_NAMED)
        return t;
    int *in = malloc(sizeof(int) * (size_t)(ni + 1));
    MPI_Aint *a = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    MPI_Count *c = malloc(sizeof(MPI_Count) * (size_t)(nc + 1));
    MPI_Datatype *d = malloc(sizeof(MPI_Datatype) * (size_t)(nd + 1));
    MPI_Datatype *sub = malloc(sizeof(MPI_Datatype) * (size_t)(nd + 1));
    CHECK(MPI_Type_get_contents_c(t, ni, na, nc, nd, in, a, c, d) == MPI_SUCCESS, "contents");
    for (MPI_Count i = 0; i < nd; i++)
        sub[i] = rebuild(d[i]);
    MPI_Datatype r = MPI_DATATYPE_NULL;
    int large = nc > 0;
    switch (comb) {
    case MPI_COMBINER_DUP: MPI_Type_dup(sub[0], &r); break;
    case MPI_COMBINER_CONTIGUOUS:
        if (large) MPI_Type_contiguous_c(c[0], sub[0], &r);
        else MPI_Type_contiguous(in[0], sub[0], &r);
        break;
    case MPI_COMBINER_VECTOR:
        if (large) MPI_Type_vector_c(c[0], c[1], c[2], sub[0], &r);
        else MPI_Type_vector(in[0], in[1], in[2], sub[0], &r);
        break;
    case MPI_COMBINER_HVECTOR:
        if (large) MPI_Type_create_hvector_c(c[0], c[1], c[2], sub[0], &r);
        else MPI_Type_create_hvector(in[0], in[1], a[0], sub[0], &r);
        break;
    case MPI_COMBINER_INDEXED:
        if (large) MPI_Type_indexed_c(c[0], c + 1, c + 1 + c[0], sub[0], &r);
        else MPI_Type_indexed(in[0], in + 1, in + 1 + in[0], sub[0], &r);
        break;
    case MPI_COMBINER_HINDEXED:
        if (large) MPI_Type_create_hindexed_c(c[0], c + 1, c + 1 + c[0], sub[0], &r);
        else MPI_Type_create_hindexed(in[0], in + 1, a, sub[0], &r);
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        if (large) MPI_Type_create_indexed_block_c(c[0], c[1], c + 2, sub[0], &r);
        else MPI_Type_create_indexed_block(in[0], in[1], in + 2, sub[0], &r);
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        if (large) MPI_Type_create_hindexed_block_c(c[0], c[1], c + 2, sub[0], &r);
        else MPI_Type_create_hindexed_block(in[0], in[1], a, sub[0], &r);
        break;
    case MPI_COMBINER_STRUCT:
        if (large) MPI_Type_create_struct_c(c[0], c + 1, c + 1 + c[0], sub, &r);
        else MPI_Type_create_struct(in[0], in + 1, a, sub, &r);
        break;
    case MPI_COMBINER_SUBARRAY: {
        int n = in[0];
        if (large) MPI_Type_create_subarray_c(n, c, c + n, c + 2 * n, in[1], sub[0], &r);
        else MPI_Type_create_subarray(n, in + 1, in + 1 + n, in + 1 + 2 * n, in[1 + 3 * n],
                                      sub[0], &r);
        break;
    }
    case MPI_COMBINER_DARRAY: {
        int n = in[2];
        if (large) MPI_Type_create_darray_c(in[0], in[1], n, c, in + 3, in + 3 + n,
                                            in + 3 + 2 * n, in[3 + 3 * n], sub[0], &r);
        else MPI_Type_create_darray(in[0], in[1], n, in + 3, in + 3 + n, in + 3 + 2 * n,
                                    in + 3 + 3 * n, in[3 + 4 * n], sub[0], &r);
        break;
    }
    case MPI_COMBINER_RESIZED:
        if (large) MPI_Type_create_resized_c(sub[0], c[0], c[1], &r);
        else MPI_Type_create_resized(sub[0], a[0], a[1], &r);
        break;
    case MPI_COMBINER_F90_REAL: MPI_Type_create_f90_real(in[0], in[1], &r); break;
    case MPI_COMBINER_F90_COMPLEX: MPI_Type_create_f90_complex(in[0], in[1], &r); break;
    case MPI_COMBINER_F90_INTEGER: MPI_Type_create_f90_integer(in[0], &r); break;
    default: CHECK(0, "unknown combiner %d", comb);
    }
    CHECK(r != MPI_DATATYPE_NULL, "rebuilding combiner %d", comb);
    for (MPI_Count i = 0; i < nd; i++) {
        if (!is_named_or_predef(sub[i]))
            MPI_Type_free(&sub[i]);
        if (!is_named_or_predef(d[i]))
            MPI_Type_free(&d[i]);
    }
    free(in); free(a); free(c); free(d); free(sub);
    return r;
}

/* Same bounds, size and pack stream (of two elements over patterned memory). */
static void same_layout(const char *what, MPI_Datatype x, MPI_Datatype y)
{
    MPI_Count xs, ys, xl, xe, yl, ye, xtl, xte, ytl, yte;
    MPI_Type_size_c(x, &xs);
    MPI_Type_size_c(y, &ys);
    MPI_Type_get_extent_c(x, &xl, &xe);
    MPI_Type_get_extent_c(y, &yl, &ye);
    MPI_Type_get_true_extent_c(x, &xtl, &xte);
    MPI_Type_get_true_extent_c(y, &ytl, &yte);
    CHECK(xs == ys && xl == yl && xe == ye && xtl == ytl && xte == yte,
          "%s: size %lld/%lld lb %lld/%lld extent %lld/%lld", what, (long long)xs, (long long)ys,
          (long long)xl, (long long)yl, (long long)xe, (long long)ye);
    if (xs != ys || xs == 0)
        return;
    MPI_Count lo = xtl < xe + xtl ? xtl : xe + xtl;
    MPI_Count hi = xtl + xte > xe + xtl + xte ? xtl + xte : xe + xtl + xte;
    unsigned char *mem = malloc((size_t)(hi - lo));
    for (MPI_Count i = 0; i < hi - lo; i++)
        mem[i] = (unsigned char)(i * 7 + 3);
    unsigned char *origin = mem - lo;
    MPI_Datatype cx = x, cy = y;
    MPI_Type_dup(x, &cx);
    MPI_Type_dup(y, &cy);
    MPI_Type_commit(&cx);
    MPI_Type_commit(&cy);
    size_t n = 2 * (size_t)xs;
    unsigned char *px = malloc(n), *py = malloc(n);
    int pos = 0;
    MPI_Pack(origin, 2, cx, px, (int)n, &pos, MPI_COMM_SELF);
    pos = 0;
    MPI_Pack(origin, 2, cy, py, (int)n, &pos, MPI_COMM_SELF);
    CHECK(memcmp(px, py, n) == 0, "%s: pack streams differ", what);
    MPI_Type_free(&cx);
    MPI_Type_free(&cy);
    free(mem); free(px); free(py);
}

static void round_trip(const char *what, MPI_Datatype t)
{
    MPI_Datatype r = rebuild(t);
    same_layout(what, t, r);
    /* The rebuilt type decodes to the same contents. */
    MPI_Count e1[4], e2[4];
    int c1, c2;
    MPI_Type_get_envelope_c(t, &e1[0], &e1[1], &e1[2], &e1[3], &c1);
    MPI_Type_get_envelope_c(r, &e2[0], &e2[1], &e2[2], &e2[3], &c2);
    CHECK(c1 == c2 && memcmp(e1, e2, sizeof e1) == 0, "%s: envelopes differ", what);
    if (!is_named_or_predef(r))
        MPI_Type_free(&r);
}

/* Envelope of t against the standard's table. */
static void envelope_is(const char *what, MPI_Datatype t, int comb, int ni, int na, int nc,
                        int nd)
{
    MPI_Count i, a, c, d;
    int k;
    CHECK(MPI_Type_get_envelope_c(t, &i, &a, &c, &d, &k) == MPI_SUCCESS, "%s", what);
    CHECK(k == comb && i == ni && a == na && c == nc && d == nd,
          "%s: combiner %d (%lld,%lld,%lld,%lld), want %d (%d,%d,%d,%d)", what, k, (long long)i,
          (long long)a, (long long)c, (long long)d, comb, ni, na, nc, nd);
    int ii, aa, dd, kk;
    int rc = MPI_Type_get_envelope(t, &ii, &aa, &dd, &kk);
    if (nc > 0)   /* made by a large-count constructor: only the _c calls decode it */
        CHECK(ecls(rc) == MPI_ERR_TYPE, "%s: int envelope gave %d", what, rc);
    else
        CHECK(rc == MPI_SUCCESS && kk == comb && ii == ni && aa == na && dd == nd,
              "%s: int envelope", what);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype t, v, s, ts[3];

    /* Named types: NAMED, no contents. */
    envelope_is("MPI_INT", MPI_INT, MPI_COMBINER_NAMED, 0, 0, 0, 0);
    envelope_is("MPI_SHORT_INT", MPI_SHORT_INT, MPI_COMBINER_NAMED, 0, 0, 0, 0);
    envelope_is("MPI_COMPLEX16", MPI_COMPLEX16, MPI_COMBINER_NAMED, 0, 0, 0, 0);
    int ibuf[4];
    MPI_Aint abuf[4];
    MPI_Datatype dbuf[4];
    CHECK(ecls(MPI_Type_get_contents(MPI_INT, 4, 4, 4, ibuf, abuf, dbuf)) == MPI_ERR_TYPE,
          "contents of a named type");

    /* Each combiner, int form: envelope, contents, round trip. */
    MPI_Type_contiguous(3, MPI_DOUBLE, &t);
    envelope_is("contiguous", t, MPI_COMBINER_CONTIGUOUS, 1, 0, 0, 1);
    CHECK(MPI_Type_get_contents(t, 1, 0, 1, ibuf, abuf, dbuf) == MPI_SUCCESS && ibuf[0] == 3 &&
          dbuf[0] == MPI_DOUBLE, "contiguous contents");
    CHECK(ecls(MPI_Type_get_contents(t, 0, 0, 1, ibuf, abuf, dbuf)) == MPI_ERR_ARG,
          "contents into too small arrays");
    round_trip("contiguous", t);

    MPI_Type_vector(4, 2, -3, t, &v);   /* negative stride, derived old type */
    envelope_is("vector", v, MPI_COMBINER_VECTOR, 3, 0, 0, 1);
    CHECK(MPI_Type_get_contents(v, 3, 0, 1, ibuf, abuf, dbuf) == MPI_SUCCESS &&
          ibuf[0] == 4 && ibuf[1] == 2 && ibuf[2] == -3, "vector contents");
    /* The derived component comes back as a new handle with t's layout. */
    CHECK(dbuf[0] != t, "a derived component is a new handle");
    same_layout("vector's component", dbuf[0], t);
    MPI_Type_free(&dbuf[0]);
    round_trip("vector", v);
    MPI_Type_free(&v);

    MPI_Type_create_hvector(3, 1, 20, MPI_SHORT, &v);
    envelope_is("hvector", v, MPI_COMBINER_HVECTOR, 2, 1, 0, 1);
    CHECK(MPI_Type_get_contents(v, 2, 1, 1, ibuf, abuf, dbuf) == MPI_SUCCESS && abuf[0] == 20,
          "hvector contents");
    round_trip("hvector", v);
    MPI_Type_free(&v);

    MPI_Type_indexed(3, (int[]){1, 0, 2}, (int[]){5, 1, -2}, MPI_INT, &v);
    envelope_is("indexed", v, MPI_COMBINER_INDEXED, 7, 0, 0, 1);
    {
        int want[7] = {3, 1, 0, 2, 5, 1, -2}, got[7];
        CHECK(MPI_Type_get_contents(v, 7, 0, 1, got, abuf, dbuf) == MPI_SUCCESS &&
              memcmp(got, want, sizeof want) == 0 && dbuf[0] == MPI_INT, "indexed contents");
    }
    round_trip("indexed", v);
    MPI_Type_free(&v);

    MPI_Type_create_hindexed(2, (int[]){2, 1}, (MPI_Aint[]){16, 0}, t, &v);
    envelope_is("hindexed", v, MPI_COMBINER_HINDEXED, 3, 2, 0, 1);
    round_trip("hindexed", v);
    MPI_Type_free(&v);

    MPI_Type_create_indexed_block(3, 2, (int[]){0, 5, 9}, MPI_FLOAT, &v);
    envelope_is("indexed_block", v, MPI_COMBINER_INDEXED_BLOCK, 5, 0, 0, 1);
    round_trip("indexed_block", v);
    MPI_Type_free(&v);

    MPI_Type_create_hindexed_block(2, 3, (MPI_Aint[]){40, 0}, MPI_CHAR, &v);
    envelope_is("hindexed_block", v, MPI_COMBINER_HINDEXED_BLOCK, 2, 2, 0, 1);
    round_trip("hindexed_block", v);

    ts[0] = MPI_CHAR;
    ts[1] = v;
    ts[2] = t;
    MPI_Type_create_struct(3, (int[]){3, 1, 2}, (MPI_Aint[]){0, 8, 200}, ts, &s);
    envelope_is("struct", s, MPI_COMBINER_STRUCT, 4, 3, 0, 3);
    round_trip("struct", s);
    MPI_Type_free(&v);

    MPI_Type_create_subarray(3, (int[]){4, 5, 6}, (int[]){2, 3, 1}, (int[]){1, 2, 5},
                             MPI_ORDER_FORTRAN, MPI_INT, &v);
    envelope_is("subarray", v, MPI_COMBINER_SUBARRAY, 11, 0, 0, 1);
    {
        int want[11] = {3, 4, 5, 6, 2, 3, 1, 1, 2, 5, MPI_ORDER_FORTRAN}, got[11];
        CHECK(MPI_Type_get_contents(v, 11, 0, 1, got, abuf, dbuf) == MPI_SUCCESS &&
              memcmp(got, want, sizeof want) == 0, "subarray contents");
    }
    round_trip("subarray", v);
    MPI_Type_free(&v);

    MPI_Type_create_darray(6, 4, 2, (int[]){9, 10},
                           (int[]){MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK},
                           (int[]){2, MPI_DISTRIBUTE_DFLT_DARG}, (int[]){3, 2}, MPI_ORDER_C,
                           MPI_DOUBLE, &v);
    envelope_is("darray", v, MPI_COMBINER_DARRAY, 4 * 2 + 4, 0, 0, 1);
    round_trip("darray", v);
    MPI_Type_free(&v);

    MPI_Type_create_resized(s, -8, 300, &v);
    envelope_is("resized", v, MPI_COMBINER_RESIZED, 0, 2, 0, 1);
    round_trip("resized", v);
    MPI_Type_free(&v);

    MPI_Type_dup(s, &v);
    envelope_is("dup", v, MPI_COMBINER_DUP, 0, 0, 0, 1);
    round_trip("dup", v);
    MPI_Type_free(&v);
    MPI_Type_dup(MPI_LONG_DOUBLE_INT, &v);
    CHECK(MPI_Type_get_contents(v, 0, 0, 1, ibuf, abuf, dbuf) == MPI_SUCCESS &&
          dbuf[0] == MPI_LONG_DOUBLE_INT, "a predefined component comes back as itself");
    MPI_Type_free(&v);

    /* Components freed before their user is decoded. */
    MPI_Type_contiguous(2, s, &v);
    MPI_Type_free(&s);
    MPI_Type_free(&t);
    round_trip("contiguous of freed struct of freed contiguous", v);
    MPI_Type_free(&v);

    /* Large-count forms: counts in array_of_large_counts, the int calls refuse. */
    MPI_Type_contiguous_c(5, MPI_INT, &t);
    envelope_is("contiguous_c", t, MPI_COMBINER_CONTIGUOUS, 0, 0, 1, 1);
    CHECK(ecls(MPI_Type_get_contents(t, 1, 1, 1, ibuf, abuf, dbuf)) == MPI_ERR_TYPE,
          "int contents of a _c type");
    round_trip("contiguous_c", t);
    MPI_Type_vector_c(3, 2, 4, t, &v);
    envelope_is("vector_c", v, MPI_COMBINER_VECTOR, 0, 0, 3, 1);
    round_trip("vector_c", v);
    MPI_Type_free(&v);
    MPI_Type_create_hvector_c(3, 2, 100, t, &v);
    envelope_is("hvector_c", v, MPI_COMBINER_HVECTOR, 0, 0, 3, 1);
    round_trip("hvector_c", v);
    MPI_Type_free(&v);
    MPI_Type_indexed_c(2, (MPI_Count[]){1, 3}, (MPI_Count[]){4, 0}, t, &v);
    envelope_is("indexed_c", v, MPI_COMBINER_INDEXED, 0, 0, 5, 1);
    round_trip("indexed_c", v);
    MPI_Type_free(&v);
    MPI_Type_create_hindexed_c(2, (MPI_Count[]){1, 3}, (MPI_Count[]){400, 0}, t, &v);
    envelope_is("hindexed_c", v, MPI_COMBINER_HINDEXED, 0, 0, 5, 1);
    round_trip("hindexed_c", v);
    MPI_Type_free(&v);
    MPI_Type_create_indexed_block_c(2, 2, (MPI_Count[]){7, 0}, t, &v);
    envelope_is("indexed_block_c", v, MPI_COMBINER_INDEXED_BLOCK, 0, 0, 4, 1);
    round_trip("indexed_block_c", v);
    MPI_Type_free(&v);
    MPI_Type_create_hindexed_block_c(2, 2, (MPI_Count[]){70, 0}, t, &v);
    envelope_is("hindexed_block_c", v, MPI_COMBINER_HINDEXED_BLOCK, 0, 0, 4, 1);
    round_trip("hindexed_block_c", v);
    MPI_Type_free(&v);
    ts[0] = t;
    ts[1] = MPI_BYTE;
    MPI_Type_create_struct_c(2, (MPI_Count[]){1, 5}, (MPI_Count[]){0, 64}, ts, &v);
    envelope_is("struct_c", v, MPI_COMBINER_STRUCT, 0, 0, 5, 2);
    round_trip("struct_c", v);
    MPI_Type_free(&v);
    MPI_Type_create_subarray_c(2, (MPI_Count[]){5, 6}, (MPI_Count[]){2, 2}, (MPI_Count[]){3, 1},
                               MPI_ORDER_C, t, &v);
    envelope_is("subarray_c", v, MPI_COMBINER_SUBARRAY, 2, 0, 6, 1);
    round_trip("subarray_c", v);
    MPI_Type_free(&v);
    MPI_Type_create_darray_c(4, 3, 2, (MPI_Count[]){7, 5},
                             (int[]){MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
                             (int[]){MPI_DISTRIBUTE_DFLT_DARG, 2}, (int[]){2, 2}, MPI_ORDER_FORTRAN,
                             t, &v);
    envelope_is("darray_c", v, MPI_COMBINER_DARRAY, 3 * 2 + 4, 0, 2, 1);
    round_trip("darray_c", v);
    MPI_Type_free(&v);
    MPI_Type_create_resized_c(t, 4, 100, &v);
    envelope_is("resized_c", v, MPI_COMBINER_RESIZED, 0, 0, 2, 1);
    round_trip("resized_c", v);
    MPI_Type_free(&v);
    MPI_Type_free(&t);

    /* F90 types: predefined (cannot be freed), cached per (p, r), decoded
     * to their (p, r). */
    MPI_Datatype f1, f2;
    CHECK(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &f1) == MPI_SUCCESS, "f90_real");
    CHECK(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &f2) == MPI_SUCCESS && f1 == f2,
          "f90 types are cached");
    envelope_is("f90_real", f1, MPI_COMBINER_F90_REAL, 2, 0, 0, 0);
    CHECK(MPI_Type_get_contents(f1, 2, 0, 0, ibuf, abuf, dbuf) == MPI_SUCCESS && ibuf[0] == 6 &&
          ibuf[1] == MPI_UNDEFINED, "f90_real contents");
    CHECK(ecls(MPI_Type_free(&f1)) == MPI_ERR_TYPE, "an f90 type cannot be freed");
    round_trip("f90_real", f1);
    MPI_Type_create_f90_complex(15, 300, &f1);
    envelope_is("f90_complex", f1, MPI_COMBINER_F90_COMPLEX, 2, 0, 0, 0);
    round_trip("f90_complex", f1);
    MPI_Type_create_f90_integer(9, &f1);
    envelope_is("f90_integer", f1, MPI_COMBINER_F90_INTEGER, 1, 0, 0, 0);
    round_trip("f90_integer", f1);
    /* A struct holding an f90 type: the component comes back as itself. */
    MPI_Type_create_struct(1, (int[]){2}, (MPI_Aint[]){0}, &f1, &v);
    CHECK(MPI_Type_get_contents(v, 2, 1, 1, ibuf, abuf, dbuf) == MPI_SUCCESS && dbuf[0] == f1,
          "f90 component");
    MPI_Type_free(&v);

    /* MPI_Type_get_value_index: the named pair types only. */
    MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &v);
    CHECK(v == MPI_DOUBLE_INT, "value_index(double, int) is MPI_DOUBLE_INT");
    envelope_is("value_index", v, MPI_COMBINER_NAMED, 0, 0, 0, 0);
    MPI_Type_get_value_index(MPI_DOUBLE, MPI_UINT64_T, &v);
    CHECK(v == MPI_DATATYPE_NULL, "value_index(double, uint64): no pair type");

    return mtest_finish();
}
