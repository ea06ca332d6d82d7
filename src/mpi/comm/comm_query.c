/*
 * What a communicator says about itself: rank, size, remote size,
 * intercommunicator or not, comparison, name, predefined attributes.
 */
#include <stdlib.h>
#include <string.h>

#include "comm.h"

/* The checks the queries written by hand start with: a valid communicator,
 * an out argument. */
static int query_check(locus_comm_t *c, const void *out, const char *fn)
{
    if (!locus_comm_valid(c))
        return locus_mpi_err(c, MPI_ERR_COMM, fn);
    if (!out)
        return locus_mpi_err(c, MPI_ERR_ARG, fn);
    return MPI_SUCCESS;
}

/* The entry points of these are generated with their checks (a live
 * communicator, somewhere to write). */
int locus_comm_rank_impl(locus_comm_t *c, int *rank)
{
    *rank = c->coll.rank;
    return MPI_SUCCESS;
}

int locus_comm_size_impl(locus_comm_t *c, int *size)
{
    *size = locus_comm_local(c)->coll.size;
    return MPI_SUCCESS;
}

int locus_comm_test_inter_impl(locus_comm_t *c, int *flag)
{
    *flag = c->local != NULL;
    return MPI_SUCCESS;
}

int locus_comm_remote_size_impl(locus_comm_t *c, int *size)
{
    if (!c->local)
        return MPI_ERR_COMM;   /* an intracommunicator has no remote group */
    *size = c->coll.size;
    return MPI_SUCCESS;
}

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int locus_members_compare(int n1, const int *w1, int n2, const int *w2)
{
    if (n1 != n2)
        return MPI_UNEQUAL;
    if (n1 == 0 || memcmp(w1, w2, (size_t)n1 * sizeof *w1) == 0)
        return MPI_IDENT;
    int *a = malloc((size_t)n1 * 2 * sizeof *a);
    if (!a)
        return MPI_UNEQUAL;
    memcpy(a, w1, (size_t)n1 * sizeof *a);
    memcpy(a + n1, w2, (size_t)n1 * sizeof *a);
    qsort(a, (size_t)n1, sizeof *a, int_cmp);
    qsort(a + n1, (size_t)n1, sizeof *a, int_cmp);
    int same = memcmp(a, a + n1, (size_t)n1 * sizeof *a) == 0;
    free(a);
    return same ? MPI_SIMILAR : MPI_UNEQUAL;
}

LOCUS_PMPI_WEAK(Comm_compare)
int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Comm_compare");
    locus_comm_t *c1 = locus_comm_of(comm1), *c2 = locus_comm_of(comm2);
    if (!locus_comm_valid(c1) || !locus_comm_valid(c2))
        return locus_mpi_err(locus_comm_valid(c1) ? c1 : c2, MPI_ERR_COMM, "MPI_Comm_compare");
    if (!result)
        return locus_mpi_err(c1, MPI_ERR_ARG, "MPI_Comm_compare");
    if (c1 == c2) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if (!c1->local != !c2->local) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    /* Intercommunicators compare both groups: the weaker result wins. */
    locus_comm_t *l1 = locus_comm_local(c1), *l2 = locus_comm_local(c2);
    int r = locus_members_compare(l1->coll.size, l1->world_of, l2->coll.size, l2->world_of);
    if (c1->local) {
        int rr = locus_members_compare(c1->coll.size, c1->world_of, c2->coll.size,
                                       c2->world_of);
        if (rr > r)
            r = rr;   /* MPI_IDENT < MPI_SIMILAR < MPI_UNEQUAL (values) */
    }
    *result = r == MPI_IDENT ? MPI_CONGRUENT : r;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Comm_set_name)
int PMPI_Comm_set_name(MPI_Comm comm, const char *name)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Comm_set_name");
    locus_comm_t *c = locus_comm_of(comm);
    int err = query_check(c, name, "MPI_Comm_set_name");
    if (!err) {
        strncpy(c->name, name, MPI_MAX_OBJECT_NAME - 1);
        c->name[MPI_MAX_OBJECT_NAME - 1] = '\0';
    }
    return err;
}

LOCUS_PMPI_WEAK(Comm_get_name)
int PMPI_Comm_get_name(MPI_Comm comm, char *name, int *resultlen)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Comm_get_name");
    if (comm == MPI_COMM_NULL && name && resultlen) {
        /* MPI_COMM_NULL has a name too (mpi4py asks for it). */
        strcpy(name, "MPI_COMM_NULL");
        *resultlen = (int)strlen(name);
        return MPI_SUCCESS;
    }
    locus_comm_t *c = locus_comm_of(comm);
    int err = query_check(c, name, "MPI_Comm_get_name");
    if (!err && !resultlen)
        err = locus_mpi_err(c, MPI_ERR_ARG, "MPI_Comm_get_name");
    if (!err) {
        strcpy(name, c->name);
        *resultlen = (int)strlen(name);
    }
    return err;
}

LOCUS_PMPI_WEAK(Comm_get_attr)
int PMPI_Comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    LOCUS_ENTRY_CS();
    /* Predefined attributes are returned as pointers to ints that live as
     * long as the library. */
    static const int tag_ub = LOCUS_TAG_UB, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE;
    static const int wtime_global = 0;
    static int lastused;
    LOCUS_CHECK_INIT("MPI_Comm_get_attr");
    locus_comm_t *c = locus_comm_of(comm);
    if (!locus_comm_valid(c))
        return locus_mpi_err(c, MPI_ERR_COMM, "MPI_Comm_get_attr");
    if (!attribute_val || !flag)
        return locus_mpi_err(c, MPI_ERR_ARG, "MPI_Comm_get_attr");
    locus_mpi.attr_universe = locus_mpi.boot.universe_size ? locus_mpi.boot.universe_size
                                                           : locus_mpi.boot.size;
    locus_mpi.attr_appnum = locus_mpi.boot.appnum;
    lastused = locus_err_lastused();
    const int *v = NULL;
    switch (keyval) {
    case MPI_TAG_UB: v = &tag_ub; break;
    case MPI_HOST: v = &host; break;
    case MPI_IO: v = &io; break;
    case MPI_WTIME_IS_GLOBAL: v = &wtime_global; break;
    case MPI_UNIVERSE_SIZE: v = &locus_mpi.attr_universe; break;
    case MPI_APPNUM: v = &locus_mpi.attr_appnum; break;
    case MPI_LASTUSEDCODE: v = &lastused; break;
    default: {
        int rc = locus_attr_get(c->attrs, ATTR_COMM, keyval, (void **)attribute_val, flag);
        return rc ? locus_mpi_err(c, rc, "MPI_Comm_get_attr") : MPI_SUCCESS;
    }
    }
    *(const int **)attribute_val = v; /* MPI hands out int*; never written through */
    *flag = 1;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Attr_get)
int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    LOCUS_ENTRY_CS();
    return PMPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}
