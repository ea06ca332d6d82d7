/*
 * locus_dyn.h — the dyn transport: messages to processes OUTSIDE this job
 * (MPI dynamic processes: ports with Comm_accept/Comm_connect, spawned
 * children and their parents).
 *
 * Peers are added at run time, each with a core peer id from the add_peer
 * upcall (past the world's ranks). A peer is known by its name (its job's
 * id and its world rank there) and reached through its card, a line of
 * text saying where it listens. Correctness, exactly-once in-order
 * delivery and never hanging matter here; speed does not: every message
 * is delivered whole (no rendezvous), send() always copies and returns
 * LOCUS_TP_DONE.
 *
 * Wire: one TCP connection per direction per pair. To send to P this
 * process dials P's listener and only writes on that connection; P's
 * messages come on the connection P dials to us (so two processes dialling
 * each other at once never race). The dialler's first bytes are a hello:
 * "LDYN1", the listener's cookie (from its card: the card is the
 * capability, a wrong cookie is closed at once), the dialler's name and
 * card (so that an unknown dialler can be registered and dialled back).
 * Each message is then uint32 hdrlen, uint64 len (host byte order: both
 * ends run on the same architecture), the header and the data.
 *
 * Card: "dyn1/<cookie, 32 hex digits>/<port>/<ip>,<ip>,..." — printable,
 * no blanks and no ':' (it travels inside port names that use ':'), at
 * most LOCUS_DYN_CARD_MAX bytes with its NUL. Addresses: the IPv4
 * addresses of the interfaces that are up and running, non-loopback first
 * (only those named in LOCUS_NET_IFACES when it is set), 127.0.0.1 last;
 * a dialler tries them in that order.
 *
 * Tunables (environment, read once by locus_tp_dyn_create; a malformed
 * value makes it fail with a line naming the variable):
 *   LOCUS_DYN_CONNECT_MS (5000): milliseconds a dial may take in all, over
 *       every address of the peer's card (an address that does not answer
 *       gets its share of what is left, so later ones are still tried).
 *   LOCUS_DYN_FLUSH_MS (10000): milliseconds finalize() spends writing
 *       output still queued to peers before it gives up on them.
 */
#ifndef LOCUS_DYN_H
#define LOCUS_DYN_H

#include <stddef.h>
#include <stdint.h>

#include "locus_transport.h"

/* Size of a card, its NUL included. */
#define LOCUS_DYN_CARD_MAX 256

/* A process anywhere: its job's id and its world rank in that job. */
typedef struct {
    uint64_t job;
    int32_t rank;
} locus_dyn_name_t;

/*
 * Makes a dyn transport for this process, whose name is `me`. Not
 * collective (it uses no kvs exchange) and opens nothing yet: the listener
 * opens on the first locus_dyn_card(). Only init->up (deliver and add_peer
 * are called; rndv_arrived, rndv_done and send_done never are) and
 * init->core are used. Returns 0 and *out, or -1 with a one-line reason in
 * err (a malformed tunable, no randomness for the cookie, out of memory).
 */
int locus_tp_dyn_create(const locus_tp_init_t *init, locus_dyn_name_t me, locus_tp_t **out,
                        char *err, size_t errlen);

/*
 * This process's card into card (len bytes, LOCUS_DYN_CARD_MAX is always
 * enough): see the top of this file. Opens the listener (0.0.0.0, an
 * ephemeral port, nonblocking) on the first call; later calls give the
 * same card. Returns 0, or -1 with a one-line reason in err.
 */
int locus_dyn_card(locus_tp_t *tp, char *card, size_t len, char *err, size_t errlen);

/*
 * The peer id of process `name`, reached through `card`: the id it already
 * has when the name is known (then card may be NULL, and is not looked
 * at), else a new id from the add_peer upcall. Does not connect. Returns
 * the id, or -1 with a one-line reason in err (a malformed or missing
 * card, out of memory).
 */
int locus_dyn_peer(locus_tp_t *tp, locus_dyn_name_t name, const char *card, char *err,
                   size_t errlen);

/*
 * Dials peer `id` now unless connected already, trying each address of its
 * card in order within LOCUS_DYN_CONNECT_MS in all; blocks meanwhile. For
 * the first message to a port: a port that is gone is then an error the
 * caller can report, not a fatal failure of send(). Returns 0, or -1 with
 * a one-line reason in err naming each address tried and what it said
 * (e.g. "127.0.0.1:40321 connection refused").
 */
int locus_dyn_connect(locus_tp_t *tp, int id, char *err, size_t errlen);

/*
 * The name and card (when card is not NULL: len bytes, NUL-terminated) of
 * peer `id`. Returns 0, or -1 when id is not a peer of this transport.
 */
int locus_dyn_name(locus_tp_t *tp, int id, locus_dyn_name_t *name, char *card, size_t len);

#endif
