/* Groups: ordered sets of world ranks. Set operations and ranges are in
 * group_ops.c. */
#include <stdlib.h>
#include <string.h>

#include "comm.h"

int locus_group_make(int size, const int *world_of, MPI_Group *out)
{
    if (size == 0) {
        *out = MPI_GROUP_EMPTY;
        return MPI_SUCCESS;
    }
    locus_group_t *g = malloc(sizeof *g);
    int *w = malloc((size_t)size * sizeof *w);
    if (!g || !w) {
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

LOCUS_PMPI_WEAK(Comm_group)
int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    LOCUS_CHECK_INIT("MPI_Comm_group");
    locus_comm_t *c = locus_comm_of(comm);
    if (!locus_comm_valid(c))
        return locus_mpi_err(c, MPI_ERR_COMM, "MPI_Comm_group");
    if (!group)
        return locus_mpi_err(c, MPI_ERR_ARG, "MPI_Comm_group");
    locus_comm_t *l = locus_comm_local(c);
    int err = locus_group_make(l->coll.size, l->world_of, group);
    return err ? locus_mpi_err(c, err, "MPI_Comm_group") : MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Comm_remote_group)
int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    LOCUS_CHECK_INIT("MPI_Comm_remote_group");
    locus_comm_t *c = locus_comm_of(comm);
    if (!locus_comm_valid(c) || !c->local)
        return locus_mpi_err(c, MPI_ERR_COMM, "MPI_Comm_remote_group");
    if (!group)
        return locus_mpi_err(c, MPI_ERR_ARG, "MPI_Comm_remote_group");
    int err = locus_group_make(c->coll.size, c->world_of, group);
    return err ? locus_mpi_err(c, err, "MPI_Comm_remote_group") : MPI_SUCCESS;
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

LOCUS_PMPI_WEAK(Group_incl)
int PMPI_Group_incl(MPI_Group group_h, int n, const int ranks[], MPI_Group *newgroup)
{
    LOCUS_CHECK_INIT("MPI_Group_incl");
    locus_group_t *group = locus_group_of(group_h);
    if (!group)
        return locus_mpi_err(NULL, MPI_ERR_GROUP, "MPI_Group_incl");
    int err = newgroup ? ranks_check(group, n, ranks) : MPI_ERR_ARG;
    int *w = NULL;
    if (!err && n > 0 && !(w = malloc((size_t)n * sizeof *w)))
        err = MPI_ERR_NO_MEM;
    if (!err) {
        for (int i = 0; i < n; i++)
            w[i] = group->world_of[ranks[i]];
        err = locus_group_make(n, w, newgroup);
    }
    free(w);
    return err ? locus_mpi_err(NULL, err, "MPI_Group_incl") : MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Group_excl)
int PMPI_Group_excl(MPI_Group group_h, int n, const int ranks[], MPI_Group *newgroup)
{
    LOCUS_CHECK_INIT("MPI_Group_excl");
    locus_group_t *group = locus_group_of(group_h);
    if (!group)
        return locus_mpi_err(NULL, MPI_ERR_GROUP, "MPI_Group_excl");
    int err = newgroup ? ranks_check(group, n, ranks) : MPI_ERR_ARG;
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
    return err ? locus_mpi_err(NULL, err, "MPI_Group_excl") : MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Group_size)
int PMPI_Group_size(MPI_Group group_h, int *size)
{
    locus_group_t *group = locus_group_of(group_h);
    if (!group)
        return locus_mpi_err(NULL, MPI_ERR_GROUP, "MPI_Group_size");
    if (!size)
        return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_Group_size");
    *size = group->size;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Group_rank)
int PMPI_Group_rank(MPI_Group group_h, int *rank)
{
    locus_group_t *group = locus_group_of(group_h);
    if (!group)
        return locus_mpi_err(NULL, MPI_ERR_GROUP, "MPI_Group_rank");
    if (!rank)
        return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_Group_rank");
    *rank = group->rank;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Group_translate_ranks)
int PMPI_Group_translate_ranks(MPI_Group h1, int n, const int ranks1[], MPI_Group h2,
                               int ranks2[])
{
    locus_group_t *g1 = locus_group_of(h1), *g2 = locus_group_of(h2);
    if (!g1 || !g2)
        return locus_mpi_err(NULL, MPI_ERR_GROUP, "MPI_Group_translate_ranks");
    if (n < 0 || (n > 0 && (!ranks1 || !ranks2)))
        return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_Group_translate_ranks");
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        if (ranks1[i] < 0 || ranks1[i] >= g1->size)
            return locus_mpi_err(NULL, MPI_ERR_RANK, "MPI_Group_translate_ranks");
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

LOCUS_PMPI_WEAK(Group_compare)
int PMPI_Group_compare(MPI_Group h1, MPI_Group h2, int *result)
{
    locus_group_t *g1 = locus_group_of(h1), *g2 = locus_group_of(h2);
    if (!g1 || !g2)
        return locus_mpi_err(NULL, MPI_ERR_GROUP, "MPI_Group_compare");
    if (!result)
        return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_Group_compare");
    *result = locus_members_compare(g1->size, g1->world_of, g2->size, g2->world_of);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Group_free)
int PMPI_Group_free(MPI_Group *group)
{
    locus_group_t *g = group ? locus_group_of(*group) : NULL;
    if (!g)
        return locus_mpi_err(NULL, MPI_ERR_GROUP, "MPI_Group_free");
    if (g != &locus_group_empty && --g->refcount == 0) {
        free(g->world_of);
        free(g);
    }
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}
