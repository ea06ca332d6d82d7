/*
 * fence.h — PMI barriers that span nodes, combined where the nodes' streams
 * meet: in the front end, and in every inner proxy of a tree (internal to
 * src/launch; fence.c says how).
 */
#ifndef LOCUS_FENCE_H
#define LOCUS_FENCE_H

#include <stddef.h>

/* A KVS pair put on one node, waiting to be sent to the others at the
 * next completed fence. */
typedef struct {
    char *key, *val;
    int origin;                /* node it came from (-1: from above, in a tree) */
    unsigned char up;          /* still to send up (fence_take_up) */
    unsigned char sent;        /* sent down at a completed fence */
} fe_pair_t;

/* A fence (relayed PMI barrier) waiting for its nodes. */
typedef struct {
    char *group;               /* "WORLD:tag" or "r1,r2,..:tag" */
    unsigned char *member;     /* [nnodes] node takes part */
    unsigned char *in;         /* [nnodes] node's fence arrived */
    int expected, arrived;
} fe_fence_t;

typedef struct {
    int nnodes, size;
    const int *node_of;        /* [size] */
    fe_fence_t *fences;
    int nfences, fences_cap, fences_max;
    fe_pair_t *pairs;
    size_t npairs, cap;
    size_t bytes, bytes_max;   /* pending KVS bytes and the bound on them */
    /* what the proxies sent, for LOCUS_STARTUP_REPORT: pairs, their bytes,
     * and node-scoped ones (PMI_WIRE_NODE_KEY), which should be none */
    long pairs_in, node_pairs_in;
    size_t pair_bytes_in;
    int relay_up;              /* an inner proxy's: its nodes' pairs also go up */
} fe_fences_t;

void fence_init(fe_fences_t *f, int nnodes, int size, const int *node_of, size_t bytes_max,
                int fences_max);
void fence_free(fe_fences_t *f);
/* A pair from node. Returns 0, or -1 when the node sent more than its
 * ranks may put (a broken or hostile proxy). */
int fence_pair(fe_fences_t *f, int node, const char *key, const char *val);
/* Node arrived at the fence for group. Returns 1 when that completes it
 * (the caller then runs fence_complete), 0 when still waiting, -1 with a
 * reason in err for a group the node cannot be in. */
int fence_arrive(fe_fences_t *f, int node, const char *group, char *err, size_t errlen);
/* Sends every pending pair to each node but its origin, then barrier_out
 * to the group's nodes, through send(ctx, node, verb, w1, w2). node_of
 * may map a rank to -1 (not below this proxy); pair origin -1 is "from
 * above". */
void fence_complete(fe_fences_t *f, const char *group,
                    void (*send)(void *ctx, int node, const char *verb, const char *w1,
                                 const char *w2),
                    void *ctx);
/* relay_up: sends up every pair of this subtree not sent up yet (before
 * the subtree's `fence`). */
void fence_take_up(fe_fences_t *f, void (*send)(void *ctx, const char *key, const char *val),
                   void *ctx);

#endif
