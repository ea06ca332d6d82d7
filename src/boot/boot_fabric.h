/* Internal to src/boot: the roots' allgather over TCP (addr_fabric.c). */
#ifndef LOCUS_BOOT_FABRIC_H
#define LOCUS_BOOT_FABRIC_H
#include <stddef.h>

#include "locus_auth.h"

typedef struct boot_fabric boot_fabric_t;

/* Opens this root's listeners, one per address it advertises (never the
 * wildcard address), all on one port, and writes its root card,
 * "ip,ip,...:port" (the IPv4 addresses of interfaces that are up, not
 * loopback, within LOCUS_NET_IFACES when set). A connection is admitted
 * only after it proves `key` (copied), context "fabric". 0, or -1 with a
 * one-line reason. */
int boot_fabric_listen(boot_fabric_t **f, const locus_auth_key_t *key, char *card, size_t cap,
                       char *err, size_t errlen);

/* Bruck's allgather among the nnodes roots: blobs[me] (lens[me] bytes) is
 * this node's; on return every blobs[n] is set (malloc'd, NUL-added) and
 * lens[n] its length. root_card(ctx, node, ...) fetches a root's card (the
 * ceil(log2 N) this root dials). 0, or -1 with a one-line reason; waits
 * at most timeout seconds. */
int boot_fabric_allgather(boot_fabric_t *f, int me, int nnodes, char **blobs, size_t *lens,
                          int (*root_card)(void *ctx, int node, char *out, size_t cap),
                          void *ctx, double timeout, char *err, size_t errlen);

/* What strangers cost this root so far. */
typedef struct {
    long refused;        /* connections whose first bytes or answer did not prove the key */
    long timeouts;       /* closed silent: no proof within LOCUS_AUTH_TIMEOUT_MS */
    long evicted;        /* unproven, closed for a newer one (LOCUS_AUTH_PENDING_MAX) */
    long accept_errors;  /* accept() short of descriptors or memory: listeners rested */
} boot_fabric_stats_t;

void boot_fabric_stats(const boot_fabric_t *f, boot_fabric_stats_t *out);

void boot_fabric_close(boot_fabric_t *f);
#endif
