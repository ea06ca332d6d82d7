/* Internal to src/boot. */
#ifndef LOCUS_BOOT_PRIV_H
#define LOCUS_BOOT_PRIV_H
#include "locus_boot.h"

/*
 * One process-manager interface (PMI-1, PMI-2, PMIx). pm.c counts, handles
 * singletons and picks the backend; a backend only talks to its server.
 * Every function returns 0 (or what it says), -1 on failure.
 */
typedef struct boot_pm {
    const char *name;                        /* LOCUS_PMI's word for it */
    /* Handshake: sets rank, size, appnum, universe_size, kvsname,
     * vallen_max; err gets a one-line reason. */
    int (*connect)(locus_boot_t *b, char *err, size_t errlen);
    int (*put)(locus_boot_t *b, const char *key, const char *val);
    /* Blocks until the key exists (after a fence), as PMI-1's get does. */
    int (*get)(locus_boot_t *b, int owner, const char *key, char *val, size_t vallen);
    /* Node of every rank (ids as the server gives them, renumbered by
     * first appearance): the number of nodes, 0 when the server does not
     * say (the caller exchanges node names instead). */
    int (*node_map)(locus_boot_t *b, int *node_of);
    /* A fence in two steps so the caller can make progress while it
     * waits: begin sends it, test waits up to wait_ms (-1: no limit) and
     * returns 1 when it completed, 0 when not yet, -1 when it failed. */
    int (*fence_begin)(locus_boot_t *b);
    int (*fence_test)(locus_boot_t *b, int wait_ms);
    /* A barrier of the node's ranks (completed with fence_test), where the
     * server may have one (b->node_barrier says it does); NULL: none. */
    int (*node_fence_begin)(locus_boot_t *b);
    void (*abort)(locus_boot_t *b, int code, const char *msg); /* returns; caller exits */
    void (*finalize)(locus_boot_t *b);
} boot_pm_t;

extern const boot_pm_t boot_pm_pmi1, boot_pm_pmi2, boot_pm_pmix;

/* PMI-1/PMI-2 wire helpers (pmi_client.c): send one formatted message and
 * read the reply, which must be `expect` with rc=0 (or no rc). */
int boot_call(locus_boot_t *b, const char *line, int len, const char *expect,
              pmi_msg_t *reply, char *err, size_t errlen);
/* Fence completion over the wire: waits for `expect` (barrier_out,
 * kvs-fence-response) with rc=0 unless any_rc; boot_pm_t.fence_test's
 * contract. */
int boot_wire_fence_test(locus_boot_t *b, const char *expect, int any_rc, int wait_ms);
int boot_parse_int(const char *s, int *out);
/* PMI_FD, PMI_RANK and PMI_SIZE into b (fd, rank, size, reader). */
int boot_take_fd(locus_boot_t *b, char *err, size_t errlen);
/* A get reply's value into val: 0, or -1 when not found or too long. */
int boot_wire_value(const pmi_msg_t *m, char *val, size_t vallen);
/* Sends the finalize message `line`, waits for `expect`, closes fd. */
void boot_wire_finalize(locus_boot_t *b, const char *line, int len, const char *expect);

/* pm.c: picks the backend (LOCUS_PMI) and connects; singleton when the
 * environment offers none. */
int boot_pm_connect(locus_boot_t *b, char *err, size_t errlen);
int boot_pm_node_map(locus_boot_t *b, int *node_of);

/* Node names seen so far, numbered by first appearance (as the PMI
 * mapping's reader numbers node ids): the index of `name`, added when new. */
enum { BOOT_NODE_NAME = 256 };
int boot_node_index(char (*names)[BOOT_NODE_NAME], int *nnodes, const char *name);

/* Monotonic seconds (phase clocks, bounded waits). */
double boot_now(void);
/* PMI put/get of a value that may hold any byte (escaped as %XX). */
int boot_kvs_put(locus_boot_t *b, const char *key, const char *val);
int boot_kvs_get(locus_boot_t *b, int owner, const char *key, char *val, size_t vallen);
#endif
