/*
 * tcp_test.h — helpers shared by the tcp transport tests (built on the shm
 * tests' fork/kvs harness, which also makes the message contents): the
 * clock, and putting a rank into a network namespace with its own
 * LOCUS_NET_IFACES.
 */
#ifndef TCP_TEST_H
#define TCP_TEST_H

#include <stddef.h>
#include <stdint.h>

/* Seconds on the monotonic clock. */
double tt_now(void);

/*
 * Rank `rank` of a test: with netns "a,b" (round-robin over ranks) joins
 * that network namespace (/var/run/netns/NAME); with ifaces "x,y;z" sets
 * LOCUS_NET_IFACES to the rank's ';'-separated entry. Either may be NULL.
 * Returns 0 or -1 (and says why).
 */
int tt_enter(int rank, const char *netns, const char *ifaces);

/* A numbered message's header (its uint32_t number): the number, with *bad
 * raised when the header is not exactly that or the number is not *next;
 * *next moves past it. */
uint32_t tt_seq_take(const void *hdr, size_t hdrlen, uint32_t *next, int *bad);

#endif
