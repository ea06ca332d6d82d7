/* Groups: ordered sets of world ranks. Set operations and ranges are in
 * group_ops.c. The entry points are generated with their checks (a live
 * group or communicator, somewhere to write): these are what the calls
 * do, returning an error class. */
#include <stdlib.h>
#include <string.h>

#include "comm.h"

int locus_group_make(int size, const int *world_of, MPI_Group *out)
{
    if (size == 0) {
        *out = MPI_GROUP_EMPTY;
        return MPI_SUCCESS;
    }
    locus_group_t *g = calloc(1, sizeof *g);
    int *w = malloc((size_t)size * sizeof *w);
    if (!g || !w || locus_handle_enter(g, LOCUS_HK_GROUP) < 0) {
        free(g);
        free(w);
        return MPI_ERR_NO_MEM;
    }
    memcpy(w, world_of, (size_t)size * sizeof *w);
    g->refcount = 1;
    g->size = size;
    g->world_of = w;
    g->rank = MPI_UNDEFINED;
    for (int i = 0; i < size; i++)
        if (w[i] == locus_mpi.core.rank)
            g->rank = i;
    *out = (MPI_Group)g;
    return MPI_SUCCESS;
}

int locus_comm_group_impl(locus_comm_t *c, MPI_Group *group)
{
    locus_comm_t *l = locus_comm_local(c);
    return locus_group_make(l->coll.size, l->world_of, group);
}

int locus_comm_remote_group_impl(locus_comm_t *c, MPI_Group *group)
{
    if (!c->local)
        return MPI_ERR_COMM;   /* an intracommunicator has no remote group */
    return locus_group_make(c->coll.size, c->world_of, group);
}

/* Checks that ranks[0..n) are distinct valid ranks of g. */
static int ranks_check(const locus_group_t *g, int n, const int ranks[])
{
    if (n < 0 || n > g->size || (n > 0 && !ranks))
        return MPI_ERR_ARG;
    char *seen = calloc((size_t)g->size + 1, 1);
    if (!seen)
        return MPI_ERR_NO_MEM;
    int err = MPI_SUCCESS;
    for (int i = 0; i < n && !err; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size || seen[ranks[i]])
            err = MPI_ERR_RANK;
        else
            seen[ranks[i]] = 1;
    }
    free(seen);
    return err;
}

int locus_group_incl_impl(locus_group_t *group, int n, const int ranks[], MPI_Group *newgroup)
{
    int err = ranks_check(group, n, ranks);
    int *w = NULL;
    if (!err && n > 0 && !(w = malloc((size_t)n * sizeof *w)))
        err = MPI_ERR_NO_MEM;
    if (!err) {
        for (int i = 0; i < n; i++)
            w[i] = group->world_of[ranks[i]];
        err = locus_group_make(n, w, newgroup);
    }
    free(w);
    return err;
}

int locus_group_excl_impl(locus_group_t *group, int n, const int ranks[], MPI_Group *newgroup)
{
    int err = ranks_check(group, n, ranks);
    int *w = NULL;
    char *drop = NULL;
    if (!err && group->size > 0 &&
        (!(w = malloc((size_t)group->size * sizeof *w)) ||
         !(drop = calloc((size_t)group->size, 1))))
        err = MPI_ERR_NO_MEM;
    if (!err) {
        for (int i = 0; i < n; i++)
            drop[ranks[i]] = 1;
        int k = 0;
        for (int i = 0; i < group->size; i++)
            if (!drop[i])
                w[k++] = group->world_of[i];
        err = locus_group_make(k, w, newgroup);
    }
    free(w);
    free(drop);
    return err;
}

int locus_group_size_impl(locus_group_t *group, int *size)
{
    *size = group->size;
    return MPI_SUCCESS;
}

int locus_group_rank_impl(locus_group_t *group, int *rank)
{
    *rank = group->rank;
    return MPI_SUCCESS;
}

int locus_group_translate_ranks_impl(locus_group_t *g1, int n, const int ranks1[],
                                     MPI_Group h2, int ranks2[])
{
    locus_group_t *g2 = locus_group_of(h2);
    if (!g2)
        return MPI_ERR_GROUP;
    if (n < 0 || (n > 0 && (!ranks1 || !ranks2)))
        return MPI_ERR_ARG;
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        if (ranks1[i] < 0 || ranks1[i] >= g1->size)
            return MPI_ERR_RANK;
        int w = g1->world_of[ranks1[i]];
        ranks2[i] = MPI_UNDEFINED;
        for (int j = 0; j < g2->size; j++)
            if (g2->world_of[j] == w) {
                ranks2[i] = j;
                break;
            }
    }
    return MPI_SUCCESS;
}

int locus_group_compare_impl(locus_group_t *g1, MPI_Group h2, int *result)
{
    locus_group_t *g2 = locus_group_of(h2);
    if (!g2)
        return MPI_ERR_GROUP;
    *result = locus_members_compare(g1->size, g1->world_of, g2->size, g2->world_of);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Group_free)
int PMPI_Group_free(MPI_Group *group)
{
    LOCUS_ENTRY_CS();
    locus_group_t *g = group ? locus_group_of(*group) : NULL;
    if (!g)
        return locus_mpi_err(NULL, MPI_ERR_GROUP, "MPI_Group_free");
    if (g != &locus_group_empty && --g->refcount == 0) {
        locus_handle_leave(g);
        free(g->world_of);
        free(g);
    }
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}
