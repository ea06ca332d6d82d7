/*
 * coll_types.c — the MPI datatype calls end to end: every constructor's
 * size/extent/true extent, derived types in point-to-point (a vector sent,
 * received as plain ints; MPI_Get_elements on a partial struct), MPI_Pack /
 * MPI_Unpack in two steps with MPI_Pack_size, and types outliving the types
 * they were built from. Needs 2 ranks (rank 1 only receives).
 */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static int errs;
#define CHECK(c)                                                               \
    do {                                                                       \
        if (!(c)) {                                                            \
            errs++;                                                            \
            fprintf(stderr, "line %d: %s\n", __LINE__, #c);                    \
        }                                                                      \
    } while (0)

static void shape(MPI_Datatype t, int size, MPI_Aint lb, MPI_Aint ext, MPI_Aint tlb,
                  MPI_Aint text, int line)
{
    int s;
    MPI_Aint l, e, tl, te;
    MPI_Type_size(t, &s);
    MPI_Type_get_extent(t, &l, &e);
    MPI_Type_get_true_extent(t, &tl, &te);
    if (s != size || l != lb || e != ext || tl != tlb || te != text) {
        errs++;
        fprintf(stderr, "line %d: size/lb/extent/true_lb/true_extent %d/%ld/%ld/%ld/%ld, "
                        "want %d/%ld/%ld/%ld/%ld\n", line, s, (long)l, (long)e, (long)tl,
                (long)te, size, (long)lb, (long)ext, (long)tlb, (long)text);
    }
}
#define SHAPE(t, ...) shape(t, __VA_ARGS__, __LINE__)

struct rec { char c; double d; int i; };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Datatype contig, vec, hvec, idx, hidx, blk, st, rs, nested;

    MPI_Type_contiguous(4, MPI_INT, &contig);
    SHAPE(contig, 16, 0, 16, 0, 16);
    MPI_Type_vector(3, 2, 4, MPI_INT, &vec);             /* ints 0,1 4,5 8,9 */
    SHAPE(vec, 24, 0, 40, 0, 40);
    MPI_Type_create_hvector(2, 1, 12, MPI_DOUBLE, &hvec);
    SHAPE(hvec, 16, 0, 20, 0, 20);
    int bl[3] = {2, 1, 3}, dis[3] = {5, 0, 10};
    MPI_Type_indexed(3, bl, dis, MPI_INT, &idx);         /* ints 5,6 0 10,11,12 */
    SHAPE(idx, 24, 0, 52, 0, 52);
    MPI_Aint hdis[3] = {-8, 16, 4};
    MPI_Type_create_hindexed(3, bl, hdis, MPI_INT, &hidx);
    SHAPE(hidx, 24, -8, 28, -8, 28);     /* blocks [-8,0) [16,20) [4,16) */
    int bdis[2] = {3, 1};
    MPI_Type_create_indexed_block(2, 2, bdis, MPI_SHORT, &blk);
    SHAPE(blk, 8, 2, 8, 2, 8);
    int sbl[3] = {1, 1, 1};
    MPI_Aint sdis[3] = {offsetof(struct rec, c), offsetof(struct rec, d), offsetof(struct rec, i)};
    MPI_Datatype sty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
    MPI_Type_create_struct(3, sbl, sdis, sty, &st);
    /* The extent is padded like the C struct's. */
    SHAPE(st, 13, 0, (MPI_Aint)sizeof(struct rec), 0,
          (MPI_Aint)(offsetof(struct rec, i) + sizeof(int)));
    MPI_Type_create_resized(MPI_INT, -4, 12, &rs);
    SHAPE(rs, 4, -4, 12, 0, 4);
    MPI_Type_vector(2, 1, 2, st, &nested);               /* nested struct in a vector */
    SHAPE(nested, 26, 0, 3 * (MPI_Aint)sizeof(struct rec), 0,
          2 * (MPI_Aint)sizeof(struct rec) + (MPI_Aint)(offsetof(struct rec, i) + sizeof(int)));
    MPI_Type_commit(&vec);
    MPI_Type_commit(&st);
    MPI_Type_commit(&nested);

    /* The nested type keeps working after its component is freed. */
    MPI_Datatype st_keep = st;
    (void)st_keep;
    MPI_Type_free(&st);
    CHECK(st == MPI_DATATYPE_NULL);

    if (p >= 2 && r == 0) {
        int src[12];
        for (int i = 0; i < 12; i++)
            src[i] = 100 + i;
        MPI_Send(src, 1, vec, 1, 1, MPI_COMM_WORLD);
        struct rec recs[3] = {{'a', 1.5, 10}, {'b', 2.5, 20}, {'c', 3.5, 30}};
        MPI_Send(recs, 1, nested, 1, 2, MPI_COMM_WORLD);
        /* 9 bytes: one char and one double of the struct stream. */
        char raw[9];
        int pos = 0;
        MPI_Pack(&recs[0].c, 1, MPI_CHAR, raw, 9, &pos, MPI_COMM_WORLD);
        MPI_Pack(&recs[0].d, 1, MPI_DOUBLE, raw, 9, &pos, MPI_COMM_WORLD);
        MPI_Send(raw, 9, MPI_PACKED, 1, 3, MPI_COMM_WORLD);
    } else if (p >= 2 && r == 1) {
        int got[6];
        MPI_Status status;
        MPI_Recv(got, 6, MPI_INT, 0, 1, MPI_COMM_WORLD, &status);
        int want[6] = {100, 101, 104, 105, 108, 109}, n;
        CHECK(memcmp(got, want, sizeof(want)) == 0);
        MPI_Get_count(&status, MPI_INT, &n);
        CHECK(n == 6);
        struct rec recs[3];
        memset(recs, 0, sizeof(recs));
        MPI_Recv(recs, 1, nested, 0, 2, MPI_COMM_WORLD, &status);
        CHECK(recs[0].c == 'a' && recs[0].d == 1.5 && recs[0].i == 10);
        CHECK(recs[1].c == 0 && recs[1].i == 0);                     /* skipped */
        CHECK(recs[2].c == 'c' && recs[2].d == 3.5 && recs[2].i == 30);
        MPI_Get_elements(&status, nested, &n);
        CHECK(n == 6);
        MPI_Datatype s2;
        MPI_Type_create_struct(3, sbl, sdis, sty, &s2);
        MPI_Type_commit(&s2);
        struct rec one;
        MPI_Recv(&one, 1, s2, 0, 3, MPI_COMM_WORLD, &status);
        MPI_Get_elements(&status, s2, &n);
        CHECK(n == 2);                       /* partial: char + double */
        MPI_Get_count(&status, s2, &n);
        CHECK(n == MPI_UNDEFINED);
        CHECK(one.c == 'a' && one.d == 1.5);
        MPI_Type_free(&s2);
    }

    /* Pack / Unpack: two pieces into one buffer, back into a fresh layout. */
    int src[12], dst[12], psz, psz2, pos = 0;
    for (int i = 0; i < 12; i++)
        src[i] = i * i;
    char packed[256];
    MPI_Pack_size(1, vec, MPI_COMM_WORLD, &psz);
    MPI_Pack_size(2, MPI_DOUBLE, MPI_COMM_WORLD, &psz2);
    CHECK(psz == 24 && psz2 == 16);
    double dd[2] = {0.25, -8}, dd2[2];
    MPI_Pack(src, 1, vec, packed, sizeof(packed), &pos, MPI_COMM_WORLD);
    CHECK(pos == 24);
    MPI_Pack(dd, 2, MPI_DOUBLE, packed, sizeof(packed), &pos, MPI_COMM_WORLD);
    CHECK(pos == 40);
    memset(dst, 0, sizeof(dst));
    pos = 0;
    MPI_Unpack(packed, 40, &pos, dst, 1, vec, MPI_COMM_WORLD);
    MPI_Unpack(packed, 40, &pos, dd2, 2, MPI_DOUBLE, MPI_COMM_WORLD);
    CHECK(pos == 40 && dd2[0] == 0.25 && dd2[1] == -8);
    for (int i = 0; i < 12; i++)
        CHECK(dst[i] == ((i % 4) < 2 && i < 10 ? src[i] : 0));

    MPI_Type_free(&contig);
    MPI_Type_free(&vec);
    MPI_Type_free(&hvec);
    MPI_Type_free(&idx);
    MPI_Type_free(&hidx);
    MPI_Type_free(&blk);
    MPI_Type_free(&rs);
    MPI_Type_free(&nested);
    int total;
    MPI_Allreduce(&errs, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (r == 0)
        printf(total ? " Found %d errors\n" : " No Errors\n", total);
    MPI_Finalize();
    return total != 0;
}
