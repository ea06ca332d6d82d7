/* Internal to src/boot: the roots' allgather over TCP (addr_fabric.c). */
#ifndef LOCUS_BOOT_FABRIC_H
#define LOCUS_BOOT_FABRIC_H
#include <stddef.h>

typedef struct boot_fabric boot_fabric_t;

/* Opens this root's listener and writes its root card, "ip,ip,...:port"
 * (the IPv4 addresses of interfaces that are up, not loopback, within
 * LOCUS_NET_IFACES when set). 0, or -1 with a one-line reason. */
int boot_fabric_listen(boot_fabric_t **f, char *card, size_t cap, char *err, size_t errlen);

/* Bruck's allgather among the nnodes roots: blobs[me] (lens[me] bytes) is
 * this node's; on return every blobs[n] is set (malloc'd, NUL-added) and
 * lens[n] its length. root_card(ctx, node, ...) fetches a root's card (the
 * ceil(log2 N) this root dials). 0, or -1 with a one-line reason; waits
 * at most timeout seconds. */
int boot_fabric_allgather(boot_fabric_t *f, int me, int nnodes, char **blobs, size_t *lens,
                          int (*root_card)(void *ctx, int node, char *out, size_t cap),
                          void *ctx, double timeout, char *err, size_t errlen);

void boot_fabric_close(boot_fabric_t *f);
#endif
