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

#endif
