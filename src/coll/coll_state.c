/*
 * coll_state.c — what the collective layer keeps per communicator: the
 * algorithm choices (from the LOCUS_COLL_* variables), the node and leader
 * communicators of the hierarchical path, and their release.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_priv.h"
#include "locus_tunables.h"

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

static size_t size_read(const char *var)
{
    long v;
    char err[256];
    if (locus_tunable_long(var, &v, err, sizeof(err)) != 0 || v < 0) {
        fprintf(stderr, "locus: %s\n", err);
        exit(2);
    }
    return (size_t)v;
}

/* Where this machine's single copy beats the shm transport's two-copy
 * pipeline from mid sizes on (`locus tune` set LOCUS_SHM_CMA_MIN to 128
 * KiB or less), alltoalls of more than 128 KiB a rank go by messages, read
 * by CMA, not through the grown slots' two copies: Xeon VM, 4 ranks on 2
 * cores, blocks of 32 / 64 / 128 KiB 24-35 / 33-51 / 70-112 us by
 * messages, 26-27 / 75-81 / 134 through the slots (Open MPI 19-24 / 29-42
 * / 66-138). On the AMD VM, whose CMA never kept up, the slots won (32-128
 * KiB blocks 23-82 against 45-163). */
#define ALLTOALL_CMA_SLOT_MAX ((size_t)128 << 10)

static size_t alltoall_slot_max(void)
{
    return size_read("LOCUS_SHM_CMA_MIN") <= ALLTOALL_CMA_SLOT_MAX &&
                   strcmp(locus_tunable_str("LOCUS_SINGLE_COPY"), "none")
               ? ALLTOALL_CMA_SLOT_MAX : SIZE_MAX;
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

coll_state_t *coll_state(locus_coll_comm_t *c)
{
    if (c->state)
        return c->state;
    coll_state_t *st = calloc(1, sizeof(*st));
    if (!st)
        return NULL;
    st->barrier = ALGS("LOCUS_COLL_BARRIER", ALG_DISSEMINATION, ALG_SHM);
    st->bcast = ALGS("LOCUS_COLL_BCAST", ALG_BINOMIAL, ALG_SCATTER_ALLGATHER, ALG_LINEAR, ALG_SHM);
    st->reduce = ALGS("LOCUS_COLL_REDUCE", ALG_BINOMIAL, ALG_RABENSEIFNER, ALG_LINEAR, ALG_SHM);
    st->allreduce = ALGS("LOCUS_COLL_ALLREDUCE", ALG_RECURSIVE_DOUBLING, ALG_RABENSEIFNER,
                         ALG_RING, ALG_REDUCE_BCAST, ALG_SHM);
    st->allgather = ALGS("LOCUS_COLL_ALLGATHER", ALG_RECURSIVE_DOUBLING, ALG_RING, ALG_LINEAR,
                         ALG_GATHER_BCAST, ALG_SHM);
    st->alltoall = ALGS("LOCUS_COLL_ALLTOALL", ALG_LINEAR, ALG_PAIRWISE, ALG_SHM);
    st->gather = ALGS("LOCUS_COLL_GATHER", ALG_LINEAR, ALG_BINOMIAL, ALG_SHM);
    st->reduce_scatter = ALGS("LOCUS_COLL_REDUCE_SCATTER", ALG_REDUCE_SCATTERV, ALG_RING);
    st->scan = ALGS("LOCUS_COLL_SCAN", ALG_RECURSIVE_DOUBLING, ALG_LINEAR);
    st->bcast_large = size_read("LOCUS_COLL_BCAST_LARGE");
    st->allreduce_large = size_read("LOCUS_COLL_ALLREDUCE_LARGE");
    st->reduce_segment = size_read("LOCUS_COLL_REDUCE_SEGMENT");
    st->allgather_large = size_read("LOCUS_COLL_ALLGATHER_LARGE");
    st->alltoall_small = size_read("LOCUS_COLL_ALLTOALL_SMALL");
    st->shm_max = size_read("LOCUS_COLL_SHM_MAX");
    st->shm_bcast_max = size_read("LOCUS_COLL_SHM_BCAST_MAX");
    st->shm_allreduce_max = size_read("LOCUS_COLL_SHM_ALLREDUCE_MAX");
    st->shm_allreduce_set =
        locus_tunable_source("LOCUS_COLL_SHM_ALLREDUCE_MAX") != LOCUS_TUNABLE_DEFAULT;
    st->shm_oversub_max = size_read("LOCUS_COLL_SHM_OVERSUB_MAX");
    st->alltoall_slot_max = alltoall_slot_max();
    st->pair_msg_min = size_read("LOCUS_COLL_PAIR_MSG_MIN");
    st->node_size = (long)size_read("LOCUS_COLL_NODE_SIZE");
    const char *layout = locus_tunable_str("LOCUS_COLL_NODE_LAYOUT");
    st->node_cyclic = !strcmp(layout, "cyclic");
    if (!st->node_cyclic && strcmp(layout, "block")) {
        fprintf(stderr, "locus: LOCUS_COLL_NODE_LAYOUT=%s is not a valid choice (block, cyclic)\n",
                layout);
        exit(2);
    }
    st->hier = onoff_read("LOCUS_COLL_HIER", 1);
    st->shm = onoff_read("LOCUS_COLL_SHM", 0);
    c->state = st;
    return st;
}

/* The shipped 2 KiB is a Xeon VM's crossover (allreduce of 2 / 4 / 8 / 16
 * KiB: 0.94 / 1.37 / 2.19 / 3.66 us as messages against 1.20 / 1.96 / 2.50
 * / 4.21 through the segment; allgather of 2 / 4 KiB blocks 0.74-0.77 /
 * 0.97-1.01 against 0.81-0.85 / 1.33); on the EPYC VM the segment won the
 * allreduce up to 16 KiB (2 / 4 / 8 KiB: 0.52 / 0.72 / 1.19-1.30 against
 * 0.62-0.75 / 0.87-1.05 / 1.63-1.79), so `locus tune` measures it. */
int coll_pair_msgs(const locus_coll_comm_t *c, const coll_state_t *st, int alg, size_t bytes)
{
    return c->size == 2 && !c->yield && alg == ALG_AUTO && bytes >= st->pair_msg_min;
}

coll_state_t *coll_state_for(locus_coll_sched_t *s, locus_coll_comm_t *c)
{
    coll_state_t *st = coll_state(c);
    if (!st)
        s->oom = 1;
    return st;
}

int locus_coll_shm_ranks_apart(const locus_coll_comm_t *c)
{
    return c->state && c->state->shm_state == 1 ? coll_shm_ranks_apart(c->state->shm_seg) : 0;
}

void locus_coll_comm_release(locus_coll_comm_t *c)
{
    coll_state_t *st = c->state;
    if (!st)
        return;
    c->state = NULL;
    coll_shm_free(st->shm_seg);
    if (st->node_comm)
        c->p2p->free(st->node_comm);
    if (st->leader_comm)
        c->p2p->free(st->leader_comm);
    locus_coll_sched_free(st->blocking);
    free(st->node_of);
    free(st->leader_of);
    free(st->node_rank_of);
    free(st);
}

static int node_of_rank(const locus_coll_comm_t *c, const coll_state_t *st, int r)
{
    if (st->node_size <= 0)
        return c->node_of[r];
    if (st->node_cyclic)
        return (int)(r % ((c->size + st->node_size - 1) / st->node_size));
    return (int)(r / st->node_size);
}

int coll_is_node_local(const locus_coll_comm_t *c)
{
    return c->num_nodes <= 1;
}

/* Builds the node and leader communicators (collective over c). */
static int hier_build(locus_coll_comm_t *c, coll_state_t *st)
{
    int n = c->size;
    st->node_of = malloc(sizeof(int) * (size_t)n);
    st->node_rank_of = malloc(sizeof(int) * (size_t)n);
    st->leader_of = malloc(sizeof(int) * (size_t)n);
    int *map = malloc(sizeof(int) * (size_t)n), *fill = calloc((size_t)n, sizeof(int));
    int rc = st->node_of && st->node_rank_of && st->leader_of && map && fill ? 0 : -1;
    for (int i = 0; rc == 0 && i < n; i++)
        map[i] = -1;
    /* Nodes numbered in the order of their lowest rank (their leader). */
    st->nnodes = 0;
    for (int r = 0; rc == 0 && r < n; r++) {
        int raw = node_of_rank(c, st, r);
        if (raw < 0 || raw >= n) {
            rc = -1;
            break;
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
    if (rc != 0)
        return -1;
    st->my_node = st->node_of[c->rank];
    int leader = st->leader_of[st->my_node] == c->rank;
    if (c->p2p->split(c, st->my_node, c->rank, &st->node_comm) != LOCUS_SUCCESS ||
        c->p2p->split(c, leader ? 0 : -1, c->rank, &st->leader_comm) != LOCUS_SUCCESS)
        return -1;
    coll_state_t *ns = coll_state(st->node_comm);
    if (!ns)
        return -1;
    ns->sub = 1;
    if (st->leader_comm) {
        coll_state_t *ls = coll_state(st->leader_comm);
        if (!ls)
            return -1;
        ls->sub = 1;
    }
    return 0;
}

/* Whether the shape of c calls for the hierarchy (identical on every rank). */
static int hier_wanted(const locus_coll_comm_t *c, const coll_state_t *st)
{
    int nodes = 0, multi = 0;
    int *seen = calloc((size_t)c->size, sizeof(int));
    if (!seen)
        return 0;
    for (int r = 0; r < c->size; r++) {
        int nd = node_of_rank(c, st, r);
        if (nd < 0 || nd >= c->size)
            continue;
        if (seen[nd]++ == 0)
            nodes++;
        else
            multi = 1;
    }
    free(seen);
    return st->hier == 1 ? nodes > 1 : nodes > 1 && multi;
}

int coll_use_hier(locus_coll_comm_t *c, coll_state_t *st, int blocking)
{
    if (st->sub || st->hier == 0 || st->hier_state == 2 || c->size < 2)
        return 0;
    if (st->hier_state == 0) {
        /* Making the sub-communicators is collective: only a blocking call
         * may do it (every rank reaches the same first blocking one). */
        if (!blocking)
            return 0;
        if (!hier_wanted(c, st)) {
            st->hier_state = -1;
            return 0;
        }
        st->hier_state = 2;   /* the splits below run collectives: go flat */
        st->hier_state = hier_build(c, st) == 0 ? 1 : -1;
    }
    return st->hier_state == 1;
}
