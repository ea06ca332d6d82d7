/*
 * Group set operations (union, intersection, difference) and rank ranges
 * (range_incl, range_excl). Groups are ordered lists of world ranks; the
 * set operations keep the order MPI prescribes (the first group's order,
 * then the second's for the union).
 */
#include <stdlib.h>
#include <string.h>

#include "comm.h"

/* Whether world rank w is a member of g (groups are small enough that a
 * scan per member costs less than building an index). */
static int group_has(const locus_group_t *g, int w)
{
    for (int i = 0; i < g->size; i++)
        if (g->world_of[i] == w)
            return 1;
    return 0;
}

enum { SET_UNION, SET_INTERSECTION, SET_DIFFERENCE };

static int group_set_op(MPI_Group h1, MPI_Group h2, MPI_Group *out, int op, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_group_t *g1 = locus_group_of(h1), *g2 = locus_group_of(h2);
    if (!g1 || !g2)
        return locus_mpi_err(NULL, MPI_ERR_GROUP, fn);
    if (!out)
        return locus_mpi_err(NULL, MPI_ERR_ARG, fn);
    int *w = malloc(((size_t)g1->size + (size_t)g2->size + 1) * sizeof *w);
    if (!w)
        return locus_mpi_err(NULL, MPI_ERR_NO_MEM, fn);
    int n = 0;
    for (int i = 0; i < g1->size; i++) {
        int in2 = group_has(g2, g1->world_of[i]);
        if (op == SET_UNION || (op == SET_INTERSECTION) == in2)
            w[n++] = g1->world_of[i];
    }
    if (op == SET_UNION)
        for (int i = 0; i < g2->size; i++)
            if (!group_has(g1, g2->world_of[i]))
                w[n++] = g2->world_of[i];
    int err = locus_group_make(n, w, out);
    free(w);
    return err ? locus_mpi_err(NULL, err, fn) : MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Group_union)
int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return group_set_op(group1, group2, newgroup, SET_UNION, "MPI_Group_union");
}

LOCUS_PMPI_WEAK(Group_intersection)
int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return group_set_op(group1, group2, newgroup, SET_INTERSECTION, "MPI_Group_intersection");
}

LOCUS_PMPI_WEAK(Group_difference)
int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return group_set_op(group1, group2, newgroup, SET_DIFFERENCE, "MPI_Group_difference");
}

/*
 * Expands n (first, last, stride) triplets over g into the ranks they
 * name, in order, marking them in taken[g->size]: MPI_ERR_ARG for a zero
 * stride, MPI_ERR_RANK for a rank outside g or named twice. *count gets
 * the number of ranks; ranks may be NULL (count only).
 */
static int ranges_expand(const locus_group_t *g, int n, int ranges[][3], char *taken,
                         int *ranks, int *count)
{
    if (n < 0 || (n > 0 && !ranges))
        return MPI_ERR_ARG;
    int k = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0)
            return MPI_ERR_ARG;
        if (first < 0 || first >= g->size || last < 0 || last >= g->size)
            return MPI_ERR_RANK;
        /* A stride pointing away from last never gets there (MPICH's
         * "range does not terminate"). */
        if ((stride > 0 && first > last) || (stride < 0 && first < last))
            return MPI_ERR_ARG;
        for (long r = first; stride > 0 ? r <= last : r >= last; r += stride) {
            if (taken[r])
                return MPI_ERR_RANK;
            taken[r] = 1;
            if (ranks)
                ranks[k] = (int)r;
            k++;
        }
    }
    *count = k;
    return MPI_SUCCESS;
}

static int group_range(MPI_Group h, int n, int ranges[][3], MPI_Group *out, int exclude,
                       const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_group_t *g = locus_group_of(h);
    if (!g)
        return locus_mpi_err(NULL, MPI_ERR_GROUP, fn);
    if (!out)
        return locus_mpi_err(NULL, MPI_ERR_ARG, fn);
    char *taken = calloc((size_t)g->size + 1, 1);
    int *ranks = malloc(((size_t)g->size + 1) * sizeof *ranks);
    int *w = malloc(((size_t)g->size + 1) * sizeof *w);
    int count = 0, err = taken && ranks && w ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (!err)
        err = ranges_expand(g, n, ranges, taken, ranks, &count);
    if (!err) {
        int k = 0;
        if (exclude) {
            for (int r = 0; r < g->size; r++)
                if (!taken[r])
                    w[k++] = g->world_of[r];
        } else {
            for (int i = 0; i < count; i++)
                w[k++] = g->world_of[ranks[i]];
        }
        err = locus_group_make(k, w, out);
    }
    free(taken);
    free(ranks);
    free(w);
    return err ? locus_mpi_err(NULL, err, fn) : MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Group_range_incl)
int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return group_range(group, n, ranges, newgroup, 0, "MPI_Group_range_incl");
}

LOCUS_PMPI_WEAK(Group_range_excl)
int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return group_range(group, n, ranges, newgroup, 1, "MPI_Group_range_excl");
}
