/*
 * coll_util.c — what every collective shares: scratch buffers, local
 * copies, the per-communicator state (algorithm choices from LOCUS_COLL_*,
 * the node/leader communicators of the hierarchical path).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_mpi.h"
#include "locus_tunables.h"

void *coll_tmp_alloc(MPI_Datatype dt, int count, char **origin)
{
    ptrdiff_t tlb, text, ext = coll_extent(dt);
    locus_dtype_true_extent(dt, &tlb, &text);
    size_t span = count > 0 ? (size_t)text + (size_t)(count - 1) * (size_t)(ext < 0 ? -ext : ext)
                            : 0;
    char *p = malloc(span ? span : 1);
    if (!p)
        return NULL;
    /* With a negative extent the last element sits lowest in memory. */
    ptrdiff_t shift = ext < 0 && count > 1 ? (ptrdiff_t)(count - 1) * -ext : 0;
    *origin = p - tlb + shift;
    return p;
}

int coll_local_copy(const void *src, int scount, MPI_Datatype sdt, void *dst, int rcount,
                    MPI_Datatype rdt)
{
    size_t sbytes = (size_t)scount * locus_dtype_size(sdt);
    size_t rbytes = (size_t)rcount * locus_dtype_size(rdt);
    size_t n = sbytes < rbytes ? sbytes : rbytes;
    if (n == 0 || src == dst)
        return MPI_SUCCESS;
    if (locus_dtype_is_contig(sdt) && locus_dtype_is_contig(rdt)) {
        ptrdiff_t slb, rlb, e;
        locus_dtype_true_extent(sdt, &slb, &e);
        locus_dtype_true_extent(rdt, &rlb, &e);
        memmove((char *)dst + rlb, (const char *)src + slb, n);
        return MPI_SUCCESS;
    }
    /* Through the packed stream, a bounded chunk at a time. */
    char chunk[8192];
    for (size_t off = 0; off < n;) {
        size_t len = n - off < sizeof(chunk) ? n - off : sizeof(chunk);
        size_t got = locus_dtype_pack(src, (size_t)scount, sdt, off, chunk, len);
        locus_dtype_unpack(dst, (size_t)rcount, rdt, off, chunk, got);
        off += got;
    }
    return sbytes > rbytes ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
}

/* ---- algorithm choices ---- */

typedef struct {
    const char *name;
    int alg;
} alg_name_t;

static const alg_name_t alg_names[] = {
    {"auto", ALG_AUTO}, {"binomial", ALG_BINOMIAL}, {"linear", ALG_LINEAR},
    {"scatter_allgather", ALG_SCATTER_ALLGATHER},
    {"recursive_doubling", ALG_RECURSIVE_DOUBLING}, {"rabenseifner", ALG_RABENSEIFNER},
    {"ring", ALG_RING}, {"reduce_bcast", ALG_REDUCE_BCAST}, {"gather_bcast", ALG_GATHER_BCAST},
    {"pairwise", ALG_PAIRWISE}, {"reduce_scatterv", ALG_REDUCE_SCATTERV},
    {"dissemination", ALG_DISSEMINATION}, {"shm", ALG_SHM},
};

/* A bad value is bad input: one line naming the variable, exit status 2
 * (every rank reads the same environment, so all of them stop). */
static int alg_read(const char *var, const int *allowed, int nallowed)
{
    const char *v = locus_tunable_str(var);
    for (size_t i = 0; i < sizeof(alg_names) / sizeof(alg_names[0]); i++) {
        if (strcmp(v, alg_names[i].name) != 0)
            continue;
        if (alg_names[i].alg == ALG_AUTO)
            return ALG_AUTO;
        for (int j = 0; j < nallowed; j++)
            if (allowed[j] == alg_names[i].alg)
                return alg_names[i].alg;
    }
    const locus_tunable_t *t = locus_tunable_find(var);
    fprintf(stderr, "locus: %s=%s is not a valid choice (%s)\n", var, v, t ? t->doc : "");
    exit(2);
}

static long size_read(const char *var)
{
    long v;
    char err[256];
    if (locus_tunable_long(var, &v, err, sizeof(err)) != 0 || v < 0) {
        fprintf(stderr, "locus: %s\n", err);
        exit(2);
    }
    return v;
}

static int onoff_read(const char *var, int allow_auto)
{
    const char *v = locus_tunable_str(var);
    if (!strcmp(v, "on") || !strcmp(v, "1") || !strcmp(v, "yes"))
        return 1;
    if (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "no"))
        return 0;
    if (allow_auto && !strcmp(v, "auto"))
        return -1;
    fprintf(stderr, "locus: %s=%s is not a valid choice (on, off%s)\n", var, v,
            allow_auto ? ", auto" : "");
    exit(2);
}

#define ALGS(var, ...)                                                         \
    alg_read(var, (const int[]){__VA_ARGS__},                                  \
             (int)(sizeof((const int[]){__VA_ARGS__}) / sizeof(int)))

static void coll_state_free(void *p)
{
    coll_state_t *st = p;
    if (!st)
        return;
    if (st->shm_seg)
        coll_shm_free(st->shm_seg);
    if (st->node_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&st->node_comm);
    if (st->leader_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&st->leader_comm);
    free(st->node_of);
    free(st->leader_of);
    free(st->node_rank_of);
    free(st);
}

coll_state_t *coll_state(MPI_Comm comm)
{
    if (comm->coll_data)
        return comm->coll_data;
    coll_state_t *st = calloc(1, sizeof(*st));
    if (!st)
        return NULL;
    st->barrier = ALGS("LOCUS_COLL_BARRIER", ALG_DISSEMINATION, ALG_SHM);
    st->bcast = ALGS("LOCUS_COLL_BCAST", ALG_BINOMIAL, ALG_SCATTER_ALLGATHER, ALG_LINEAR, ALG_SHM);
    st->reduce = ALGS("LOCUS_COLL_REDUCE", ALG_BINOMIAL, ALG_RABENSEIFNER, ALG_LINEAR);
    st->allreduce = ALGS("LOCUS_COLL_ALLREDUCE", ALG_RECURSIVE_DOUBLING, ALG_RABENSEIFNER,
                         ALG_RING, ALG_REDUCE_BCAST, ALG_SHM);
    st->allgather = ALGS("LOCUS_COLL_ALLGATHER", ALG_RECURSIVE_DOUBLING, ALG_RING,
                         ALG_GATHER_BCAST);
    st->alltoall = ALGS("LOCUS_COLL_ALLTOALL", ALG_LINEAR, ALG_PAIRWISE);
    st->gather = ALGS("LOCUS_COLL_GATHER", ALG_LINEAR, ALG_BINOMIAL);
    st->reduce_scatter = ALGS("LOCUS_COLL_REDUCE_SCATTER", ALG_REDUCE_SCATTERV, ALG_RING);
    st->scan = ALGS("LOCUS_COLL_SCAN", ALG_RECURSIVE_DOUBLING, ALG_LINEAR);
    st->bcast_large = size_read("LOCUS_COLL_BCAST_LARGE");
    st->allreduce_large = size_read("LOCUS_COLL_ALLREDUCE_LARGE");
    st->allgather_large = size_read("LOCUS_COLL_ALLGATHER_LARGE");
    st->alltoall_small = size_read("LOCUS_COLL_ALLTOALL_SMALL");
    st->shm_max = size_read("LOCUS_COLL_SHM_MAX");
    st->shm_bcast_max = size_read("LOCUS_COLL_SHM_BCAST_MAX");
    st->shm_allreduce_max = size_read("LOCUS_COLL_SHM_ALLREDUCE_MAX");
    st->node_size = size_read("LOCUS_COLL_NODE_SIZE");
    const char *layout = locus_tunable_str("LOCUS_COLL_NODE_LAYOUT");
    st->node_cyclic = !strcmp(layout, "cyclic");
    if (!st->node_cyclic && strcmp(layout, "block")) {
        fprintf(stderr, "locus: LOCUS_COLL_NODE_LAYOUT=%s is not a valid choice (block, cyclic)\n",
                layout);
        exit(2);
    }
    st->hier = onoff_read("LOCUS_COLL_HIER", 1);
    st->shm = onoff_read("LOCUS_COLL_SHM", 0);
    st->node_comm = MPI_COMM_NULL;
    st->leader_comm = MPI_COMM_NULL;
    comm->coll_data = st;
    comm->coll_data_free = coll_state_free;
    return st;
}

static int node_of_rank(MPI_Comm comm, coll_state_t *st, int r)
{
    if (st->node_size <= 0)
        return comm->node_of[r];
    if (st->node_cyclic)
        return (int)(r % ((comm->size + st->node_size - 1) / st->node_size));
    return (int)(r / st->node_size);
}

int coll_is_node_local(MPI_Comm comm, coll_state_t *st)
{
    (void)st;
    return comm->num_nodes <= 1;
}

/* Builds the node and leader communicators (collective over comm). */
static int hier_build(MPI_Comm comm, coll_state_t *st)
{
    int n = comm->size;
    st->node_of = malloc(sizeof(int) * (size_t)n);
    st->node_rank_of = malloc(sizeof(int) * (size_t)n);
    st->leader_of = malloc(sizeof(int) * (size_t)n);
    if (!st->node_of || !st->node_rank_of || !st->leader_of)
        return -1;
    /* Nodes numbered in the order of their lowest rank (their leader). */
    int *map = malloc(sizeof(int) * (size_t)n), *fill = calloc((size_t)n, sizeof(int));
    if (!map || !fill) {
        free(map);
        free(fill);
        return -1;
    }
    for (int i = 0; i < n; i++)
        map[i] = -1;
    st->nnodes = 0;
    for (int r = 0; r < n; r++) {
        int raw = node_of_rank(comm, st, r);
        if (raw < 0 || raw >= n) {
            free(map);
            free(fill);
            return -1;
        }
        if (map[raw] < 0) {
            map[raw] = st->nnodes;
            st->leader_of[st->nnodes++] = r;
        }
        st->node_of[r] = map[raw];
        st->node_rank_of[r] = fill[map[raw]]++;
    }
    free(map);
    free(fill);
    st->my_node = st->node_of[comm->rank];
    int leader = st->leader_of[st->my_node] == comm->rank;
    if (PMPI_Comm_split(comm, st->my_node, comm->rank, &st->node_comm) != MPI_SUCCESS ||
        PMPI_Comm_split(comm, leader ? 0 : MPI_UNDEFINED, comm->rank, &st->leader_comm) !=
            MPI_SUCCESS)
        return -1;
    coll_state_t *ns = coll_state(st->node_comm);
    if (!ns)
        return -1;
    ns->sub = 1;
    if (st->leader_comm != MPI_COMM_NULL) {
        coll_state_t *ls = coll_state(st->leader_comm);
        if (!ls)
            return -1;
        ls->sub = 1;
    }
    return 0;
}

int coll_use_hier(MPI_Comm comm, coll_state_t *st)
{
    if (st->sub || st->hier == 0 || st->hier_state == 2 || comm->size < 2)
        return 0;
    if (st->hier_state == 0) {
        /* Decide from the shape, identically on every rank. */
        int nodes = 0, multi = 0;
        int *seen = calloc((size_t)comm->size, sizeof(int));
        if (!seen)
            return 0;
        for (int r = 0; r < comm->size; r++) {
            int nd = node_of_rank(comm, st, r);
            if (nd < 0 || nd >= comm->size)
                continue;
            if (seen[nd]++ == 0)
                nodes++;
            else
                multi = 1;
        }
        free(seen);
        int want = st->hier == 1 ? nodes > 1 : nodes > 1 && multi;
        if (!want) {
            st->hier_state = -1;
            return 0;
        }
        st->hier_state = 2;   /* the splits below run collectives: go flat */
        st->hier_state = hier_build(comm, st) == 0 ? 1 : -1;
    }
    return st->hier_state == 1;
}

int *coll_uniform_counts(int p, int count)
{
    int *cd = malloc(sizeof(int) * 2 * (size_t)p);
    if (!cd)
        return NULL;
    for (int i = 0; i < p; i++) {
        cd[i] = count;
        cd[p + i] = i * count;
    }
    return cd;
}
