/*
 * locus_boot.h — how a rank learns who it is and where its peers are: the
 * PMI-1 client (PMI_FD from locusrun or Hydra, or PMI_PORT + PMI_ID), the
 * node map (PMI_process_mapping, checked against locusrun's LOCUS_NODE_ID;
 * else an exchange of node ids, or host names without locusrun) and the
 * key-value exchange the transports use for their addresses. A node is
 * what the launcher says it is: two network namespaces sharing a kernel
 * and a host name are two nodes, and only ranks of one node share memory.
 *
 * Without PMI_FD/PMI_PORT the process is a singleton: rank 0 of 1.
 */
#ifndef LOCUS_BOOT_H
#define LOCUS_BOOT_H

#include <stddef.h>

#include "locus_transport.h"
#include "pmi_wire.h"

typedef struct {
    int rank, size;
    int appnum;
    int universe_size;
    int singleton;            /* no process manager */
    int fd;                   /* PMI socket, -1 for a singleton */
    pmi_reader_t rd;
    char kvsname[PMI_WIRE_KVSNAME_MAX + 1];
    char jobid[PMI_WIRE_KVSNAME_MAX + 1]; /* LOCUS_JOBID or the kvs name, [A-Za-z0-9_.-] */
    int *node_of;             /* [size] node number of every world rank */
    int nnodes;
    int local_rank, local_size;
    int *local_ranks;         /* [local_size] world ranks on this node, ascending */
    int mapping_from;         /* 1: PMI_process_mapping, 2: exchange of node ids (locusrun's
                                 LOCUS_NODE_ID, else host names), 0: singleton */
} locus_boot_t;

/*
 * Connects to the process manager (if any), does the PMI-1 handshake and
 * builds the node map. Returns 0, or -1 with a one-line reason in err.
 */
int locus_boot_init(locus_boot_t *b, char *err, size_t errlen);

/* The kvs (put/get/fence over PMI) for locus_tp_init_t. */
locus_tp_kvs_t locus_boot_kvs(locus_boot_t *b);

/* PMI put (kvs), get (blocks until the value exists after a fence) and
 * barrier. Return 0 or -1. Singletons keep puts in no store: get fails. */
int locus_boot_put(locus_boot_t *b, const char *key, const char *val);
int locus_boot_get(locus_boot_t *b, const char *key, char *val, size_t vallen);
int locus_boot_fence(locus_boot_t *b);

/* A fence that keeps calling progress(arg) while it waits, so peers that
 * still need this process (MPI_Finalize) are served. Returns 0; -1 when
 * the fence failed or progress returned a negative value. */
int locus_boot_fence_progress(locus_boot_t *b, int (*progress)(void *arg), void *arg);

/* Asks the process manager to kill the job with exit code `code` (PMI
 * abort; no reply), then exits. Never returns. */
void locus_boot_abort(locus_boot_t *b, int code, const char *msg);

/* PMI finalize handshake and cleanup. */
void locus_boot_finalize(locus_boot_t *b);

/*
 * Parses a PMI_process_mapping value "(vector,(n,N,ppn),...)" into
 * node_of[size] (node ids as given, renumbered 0.. in first-appearance
 * order). Returns the number of nodes, or -1 when the string is malformed,
 * empty or describes fewer than `size` ranks.
 */
int locus_boot_parse_mapping(const char *s, int size, int *node_of);

#endif
