/*
 * Group set operations (union, intersection, difference) and rank ranges
 * (range_incl, range_excl). Groups are ordered lists of world ranks; the
 * set operations keep the order MPI prescribes (the first group's order,
 * then the second's for the union). Their entry points are generated with
 * the checks (a live first group, somewhere to write).
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

/* MPI_Group_union, _intersection and _difference (op: LOCUS_GROUP_*). */
int locus_group_union_impl(int op, locus_group_t *g1, MPI_Group h2, MPI_Group *out)
{
    locus_group_t *g2 = locus_group_of(h2);
    if (!g2)
        return MPI_ERR_GROUP;
    int *w = malloc(((size_t)g1->size + (size_t)g2->size + 1) * sizeof *w);
    if (!w)
        return MPI_ERR_NO_MEM;
    int n = 0;
    for (int i = 0; i < g1->size; i++) {
        int in2 = group_has(g2, g1->world_of[i]);
        if (op == LOCUS_GROUP_UNION || (op == LOCUS_GROUP_INTERSECTION) == in2)
            w[n++] = g1->world_of[i];
    }
    if (op == LOCUS_GROUP_UNION)
        for (int i = 0; i < g2->size; i++)
            if (!group_has(g1, g2->world_of[i]))
                w[n++] = g2->world_of[i];
    int err = locus_group_make(n, w, out);
    free(w);
    return err;
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

/* MPI_Group_range_incl and, with exclude, MPI_Group_range_excl. */
int locus_group_range_incl_impl(int exclude, locus_group_t *g, int n, int ranges[][3],
                                MPI_Group *out)
{
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
    return err;
}
