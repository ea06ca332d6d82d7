/*
 * reorder = true: which process plays which vertex of a topology.
 *
 * The machine is a two-level tree here: nodes (the communicator's node
 * table), and NUMA nodes inside them (each process's binding, comm/comm_hw.c).
 * The graph is cut into one part per node, of exactly as many vertices as
 * the node has processes, by greedy graph growing: a part starts at the
 * lowest free vertex and repeatedly takes the free vertex with the most
 * edge weight into the part, ties going to the one nearest the start (so a
 * grid is cut into compact blocks, not strips) and then to the lowest
 * index. Each part is cut the same way among the node's NUMA nodes. A
 * node's processes, in rank order, take their part's vertices in order.
 *
 * Everything is integer arithmetic over inputs every member has, so all
 * members compute the same mapping. The identity stays unless the
 * mapping keeps strictly more edge weight inside nodes (or, equal there,
 * inside NUMA nodes): reordering never makes an already good order worse.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "topo.h"

/* The graph made undirected: u's neighbours adj[xadj[u] .. xadj[u+1]) with
 * weights w (an edge listed either way, or both, counts for both ends). */
typedef struct {
    int n;
    int *xadj, *adj, *w;
} ugraph_t;

static void ugraph_free(ugraph_t *u)
{
    free(u->xadj);
    free(u->adj);
    free(u->w);
}

static int ugraph_make(const locus_topo_graph_t *g, ugraph_t *u)
{
    int n = g->n, m = g->xadj[n];
    u->n = n;
    u->xadj = calloc((size_t)n + 2, sizeof *u->xadj);
    u->adj = malloc(sizeof *u->adj * (2 * (size_t)m + 1));
    u->w = malloc(sizeof *u->w * (2 * (size_t)m + 1));
    int *fill = calloc((size_t)n + 1, sizeof *fill);
    if (!u->xadj || !u->adj || !u->w || !fill) {
        free(fill);
        return -1;
    }
    for (int v = 0; v < n; v++)
        for (int k = g->xadj[v]; k < g->xadj[v + 1]; k++)
            if (g->adj[k] != v && g->adj[k] >= 0 && g->adj[k] < n) {
                u->xadj[v + 1]++;
                u->xadj[g->adj[k] + 1]++;
            }
    for (int v = 0; v < n; v++)
        u->xadj[v + 1] += u->xadj[v];
    for (int v = 0; v < n; v++)
        for (int k = g->xadj[v]; k < g->xadj[v + 1]; k++) {
            int x = g->adj[k], wt = g->w ? g->w[k] : 1;
            if (x == v || x < 0 || x >= n)
                continue;
            int a = u->xadj[v] + fill[v]++, b = u->xadj[x] + fill[x]++;
            u->adj[a] = x;
            u->w[a] = wt;
            u->adj[b] = v;
            u->w[b] = wt;
        }
    free(fill);
    return 0;
}

/* Edge weight (both directions) between vertices whose players share a
 * domain: dom[proc_of[v]]. */
static long local_weight(const ugraph_t *u, const int *proc_of, const int *dom)
{
    long s = 0;
    for (int v = 0; v < u->n; v++)
        for (int k = u->xadj[v]; k < u->xadj[v + 1]; k++)
            if (dom[proc_of[v]] == dom[proc_of[u->adj[k]]])
                s += u->w[k];
    return s;
}

/* Scratch for the growing of parts. */
typedef struct {
    const ugraph_t *u;
    long *gain;       /* [n] edge weight into the part being grown */
    int *dist;        /* [n] hops from the part's start (INT_MAX: unreached) */
    int *queue;       /* [n] */
    int *free_;       /* [n] 1 while in the vertex set and not yet placed */
} grow_t;

static void bfs_from(grow_t *gr, int seed)
{
    const ugraph_t *u = gr->u;
    for (int v = 0; v < u->n; v++)
        gr->dist[v] = INT_MAX;
    int head = 0, tail = 0;
    gr->dist[seed] = 0;
    gr->queue[tail++] = seed;
    while (head < tail) {
        int v = gr->queue[head++];
        for (int k = u->xadj[v]; k < u->xadj[v + 1]; k++) {
            int x = u->adj[k];
            if (gr->free_[x] && gr->dist[x] == INT_MAX) {
                gr->dist[x] = gr->dist[v] + 1;
                gr->queue[tail++] = x;
            }
        }
    }
}

/*
 * Cuts the vertex set set[0..ns) (ascending) into parts of sizes cap[0..m)
 * (summing to ns): part_of[v] for each v in set.
 */
static void grow_parts(grow_t *gr, const int *set, int ns, const int *cap, int m, int *part_of)
{
    const ugraph_t *u = gr->u;
    for (int i = 0; i < ns; i++) {
        gr->free_[set[i]] = 1;
        gr->gain[set[i]] = 0;
    }
    int next_seed = 0;
    for (int p = 0; p < m; p++) {
        if (cap[p] == 0)
            continue;
        while (!gr->free_[set[next_seed]])
            next_seed++;
        bfs_from(gr, set[next_seed]);
        for (int got = 0; got < cap[p]; got++) {
            int best = -1;
            for (int i = next_seed; i < ns; i++) {
                int v = set[i];
                if (!gr->free_[v])
                    continue;
                if (best < 0 || gr->gain[v] > gr->gain[best] ||
                    (gr->gain[v] == gr->gain[best] && gr->dist[v] < gr->dist[best]))
                    best = v;
            }
            gr->free_[best] = 0;
            part_of[best] = p;
            for (int k = u->xadj[best]; k < u->xadj[best + 1]; k++)
                gr->gain[u->adj[k]] += u->w[k];
        }
        /* Gains were towards this part only. */
        for (int i = 0; i < ns; i++)
            gr->gain[set[i]] = 0;
    }
}

/* Domains of the first n processes in order of first appearance: dense
 * ids dom_id[p], and their count. */
static int domains(const int *key, int n, int *dom_id)
{
    int nd = 0;
    for (int p = 0; p < n; p++) {
        int q = 0;
        while (q < p && key[q] != key[p])
            q++;
        dom_id[p] = q < p ? dom_id[q] : nd++;
    }
    return nd;
}

/* The mapping proper (see the top of the file), into proc_of. */
static int map_greedy(const ugraph_t *u, const int *node_id, int nnodes, const int *numa_id,
                      int *proc_of)
{
    int n = u->n, err = 0;
    grow_t gr = { u, calloc((size_t)n, sizeof(long)), malloc(sizeof(int) * (size_t)n),
                  malloc(sizeof(int) * (size_t)n), calloc((size_t)n, sizeof(int)) };
    int *cap = calloc((size_t)n + 1, sizeof *cap), *part = malloc(sizeof *part * (size_t)n);
    int *set = malloc(sizeof *set * (size_t)n), *sub = malloc(sizeof *sub * (size_t)n);
    int *procs = malloc(sizeof *procs * (size_t)n), *subcap = malloc(sizeof *subcap * (size_t)n);
    if (!gr.gain || !gr.dist || !gr.queue || !gr.free_ || !cap || !part || !set || !sub ||
        !procs || !subcap) {
        err = -1;
        goto out;
    }
    for (int p = 0; p < n; p++) {
        cap[node_id[p]]++;
        set[p] = p;
    }
    grow_parts(&gr, set, n, cap, nnodes, part);
    for (int k = 0; k < nnodes; k++) {
        /* The node's vertices (ascending) and processes, grouped by NUMA
         * node in order of first appearance, ranks ascending within. */
        int nv = 0, np = 0, nsub = 0;
        for (int v = 0; v < n; v++)
            if (part[v] == k)
                set[nv++] = v;
        for (int p = 0; p < n; p++)
            if (node_id[p] == k)
                procs[np++] = p;
        for (int i = 0; i < np; i++) {
            int j = 0;
            while (j < i && numa_id[procs[j]] != numa_id[procs[i]])
                j++;
            sub[i] = j < i ? sub[j] : nsub++;
        }
        memset(subcap, 0, sizeof *subcap * (size_t)n);
        for (int i = 0; i < np; i++)
            subcap[sub[i]]++;
        int *vpart = cap; /* reused: the NUMA part of each vertex */
        grow_parts(&gr, set, nv, subcap, nsub, vpart);
        /* NUMA part s's vertices, ascending, to its processes in order. */
        for (int s = 0; s < nsub; s++)
            for (int i = 0, at = 0; i < np; i++) {
                if (sub[i] != s)
                    continue;
                while (vpart[set[at]] != s)
                    at++;
                proc_of[set[at++]] = procs[i];
            }
    }
out:
    free(gr.gain);
    free(gr.dist);
    free(gr.queue);
    free(gr.free_);
    free(cap);
    free(part);
    free(set);
    free(sub);
    free(procs);
    free(subcap);
    return err;
}

int locus_topo_map(const locus_topo_graph_t *g, int nprocs, const int *node_of,
                   const int *numa_of, int *proc_of)
{
    int n = g->n;
    if (n <= 0)
        return MPI_SUCCESS;
    if (n > nprocs)
        return MPI_ERR_INTERN;
    ugraph_t u = { 0, NULL, NULL, NULL };
    size_t bytes = sizeof(int) * (size_t)n;
    int *node_id = malloc(bytes), *numa_key = malloc(bytes), *numa_id = malloc(bytes);
    int *ident = malloc(bytes), *mapped = malloc(bytes);
    int err = node_id && numa_key && numa_id && ident && mapped && !ugraph_make(g, &u)
                  ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (!err) {
        int nnodes = domains(node_of, n, node_id);
        /* A NUMA domain is a (node, NUMA node) pair; unknown NUMA nodes
         * count as one domain per node. */
        for (int p = 0; p < n; p++)
            numa_key[p] = node_id[p] * 1024 +
                          (numa_of && numa_of[p] >= 0 ? numa_of[p] % 1023 + 1 : 0);
        domains(numa_key, n, numa_id);
        for (int v = 0; v < n; v++)
            ident[v] = v;
        if (map_greedy(&u, node_id, nnodes, numa_id, mapped))
            err = MPI_ERR_NO_MEM;
        long in_id = err ? 0 : local_weight(&u, ident, node_id);
        long in_map = err ? 0 : local_weight(&u, mapped, node_id);
        int better = in_map > in_id ||
                     (in_map == in_id &&
                      local_weight(&u, mapped, numa_id) > local_weight(&u, ident, numa_id));
        if (!err)
            memcpy(proc_of, better ? mapped : ident, sizeof *proc_of * (size_t)n);
    }
    ugraph_free(&u);
    free(node_id);
    free(numa_key);
    free(numa_id);
    free(ident);
    free(mapped);
    return err;
}

int locus_topo_numa_gather(locus_comm_t *c, int **numa_of)
{
    int where[LOCUS_HW_NLEVELS];
    locus_hw_where(where);
    *numa_of = malloc(sizeof **numa_of * (size_t)c->coll.size);
    if (!*numa_of)
        return MPI_ERR_NO_MEM;
    locus_dtype_t *ints = locus_dtype_basic(LOCUS_EL_INT);
    int err = locus_coll_allgather(&where[LOCUS_HW_NUMA], 1, ints, *numa_of, 1, ints, &c->coll);
    if (err) {
        free(*numa_of);
        *numa_of = NULL;
    }
    return err;
}

int locus_topo_reorder(locus_comm_t *old, const locus_topo_graph_t *g, int *proc_of)
{
    int *numa_of = NULL;
    int err = locus_topo_numa_gather(old, &numa_of);
    if (!err)
        err = locus_topo_map(g, old->coll.size, old->coll.node_of, numa_of, proc_of);
    free(numa_of);
    return err;
}

int locus_topo_vertex_of(const int *proc_of, int n, int proc)
{
    for (int v = 0; v < n; v++)
        if (proc_of[v] == proc)
            return v;
    return MPI_UNDEFINED;
}

int locus_topo_place(locus_comm_t *c, const locus_topo_graph_t *g, int collective, int *proc_of)
{
    return collective ? locus_topo_reorder(c, g, proc_of)
                      : locus_topo_map(g, c->coll.size, c->coll.node_of, NULL, proc_of);
}
