/*
 * attr_delete.c — attribute delete callbacks that delete attributes of
 * the same object (a library's clean-up): on MPI_Comm_delete_attr, on
 * MPI_Comm_free and MPI_Type_free, and on MPI_COMM_SELF and
 * MPI_COMM_WORLD in MPI_Finalize; two callbacks that delete each other's
 * attribute included. Every callback runs exactly once, nothing is freed
 * twice (the sanitized build says so) and no callback recurses forever.
 * Checked after MPI_Finalize: prints " No Errors".
 */
#include <stdint.h>
#include <stdio.h>

#include <mpi.h>

/* What each keyval's delete callback also deletes: its extra_state is the
 * index of that keyval here (-1: nothing), on the same object, or on
 * MPI_COMM_WORLD with WORLD_BIT. */
enum { A, B, C, D, S1, S2, S3, W1, W2, W3, T1, T2, NKEYS };
#define WORLD_BIT 0x100
static int keys[NKEYS], deletes[NKEYS], errs;

static int index_of(int keyval)
{
    for (int i = 0; i < NKEYS; i++)
        if (keys[i] == keyval)
            return i;
    return -1;
}

static int comm_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)val;
    int i = index_of(keyval), other = (int)(intptr_t)extra;
    if (i < 0)
        return MPI_ERR_OTHER;
    deletes[i]++;
    /* The other attribute may be gone already (MPI_ERR_KEYVAL, returned:
     * MPI_COMM_WORLD's handler is MPI_ERRORS_RETURN). */
    if (other >= 0 && (other & WORLD_BIT))
        MPI_Comm_delete_attr(MPI_COMM_WORLD, keys[other & ~WORLD_BIT]);
    else if (other >= 0)
        MPI_Comm_delete_attr(comm, keys[other]);
    return MPI_SUCCESS;
}

static int type_delete(MPI_Datatype type, int keyval, void *val, void *extra)
{
    (void)val;
    int i = index_of(keyval), other = (int)(intptr_t)extra;
    if (i < 0)
        return MPI_ERR_OTHER;
    deletes[i]++;
    return other >= 0 ? MPI_Type_delete_attr(type, keys[other]) : MPI_SUCCESS;
}

static void comm_keyval(int i, int other)
{
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_delete, &keys[i],
                           (void *)(intptr_t)other);
}

static void expect(int i, int n, const char *what)
{
    if (deletes[i] != n) {
        fprintf(stderr, "%s: delete callback %d ran %d times, not %d\n", what, i, deletes[i], n);
        errs++;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    comm_keyval(A, B);   /* A's deletion deletes B */
    comm_keyval(B, -1);
    comm_keyval(C, D);   /* C and D delete each other */
    comm_keyval(D, C);
    comm_keyval(S1, S2);
    comm_keyval(S2, S1);
    comm_keyval(S3, W3 | WORLD_BIT);
    comm_keyval(W1, W2);
    comm_keyval(W2, W1);
    comm_keyval(W3, -1);
    MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, type_delete, &keys[T1], (void *)(intptr_t)T2);
    MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, type_delete, &keys[T2], (void *)(intptr_t)T1);

    /* B is newer than A: it comes first on the communicator's list. */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_attr(dup, keys[A], NULL);
    MPI_Comm_set_attr(dup, keys[B], NULL);
    MPI_Comm_delete_attr(dup, keys[A]);
    expect(A, 1, "MPI_Comm_delete_attr");
    expect(B, 1, "MPI_Comm_delete_attr (the other attribute)");
    int flag = 1;
    void *v = NULL;
    MPI_Comm_get_attr(dup, keys[B], &v, &flag);
    if (flag) {
        fprintf(stderr, "the attribute a callback deleted is still there\n");
        errs++;
    }
    /* The same again, then replaced: MPI_Comm_set_attr deletes first. */
    MPI_Comm_set_attr(dup, keys[A], NULL);
    MPI_Comm_set_attr(dup, keys[B], NULL);
    MPI_Comm_set_attr(dup, keys[A], NULL);
    expect(A, 2, "MPI_Comm_set_attr replacing");
    expect(B, 2, "MPI_Comm_set_attr replacing (the other attribute)");
    MPI_Comm_set_attr(dup, keys[C], NULL);
    MPI_Comm_set_attr(dup, keys[D], NULL);
    MPI_Comm_free(&dup); /* A deletes B, gone already */
    expect(A, 3, "MPI_Comm_free");
    expect(C, 1, "MPI_Comm_free");
    expect(D, 1, "MPI_Comm_free");

    MPI_Datatype t;
    MPI_Type_contiguous(2, MPI_INT, &t);
    MPI_Type_set_attr(t, keys[T1], NULL);
    MPI_Type_set_attr(t, keys[T2], NULL);
    MPI_Type_free(&t);
    expect(T1, 1, "MPI_Type_free");
    expect(T2, 1, "MPI_Type_free");

    /* Left for MPI_Finalize: S3 (MPI_COMM_SELF's) deletes W3 on
     * MPI_COMM_WORLD, which MPI_Finalize deletes next. */
    MPI_Comm_set_attr(MPI_COMM_WORLD, keys[W3], NULL);
    MPI_Comm_set_attr(MPI_COMM_WORLD, keys[W1], NULL);
    MPI_Comm_set_attr(MPI_COMM_WORLD, keys[W2], NULL);
    MPI_Comm_set_attr(MPI_COMM_SELF, keys[S1], NULL);
    MPI_Comm_set_attr(MPI_COMM_SELF, keys[S2], NULL);
    MPI_Comm_set_attr(MPI_COMM_SELF, keys[S3], NULL);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Finalize();
    int finalize_errs = errs;
    for (int i = S1; i <= W3; i++)
        expect(i, 1, "MPI_Finalize");
    if (errs > finalize_errs)
        fprintf(stderr, "MPI_COMM_SELF's and MPI_COMM_WORLD's attributes\n");
    if (rank == 0 && errs == 0)
        printf(" No Errors\n");
    return errs != 0;
}
