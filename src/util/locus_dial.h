/*
 * locus_dial.h — a TCP connection to "ip:port" (IPv4) within a time bound,
 * for the small control clients that try a list of addresses in turn
 * (a proxy calling back to locusrun, a rank asking the name service).
 */
#ifndef LOCUS_DIAL_H
#define LOCUS_DIAL_H

/* A connected, non-blocking, close-on-exec socket to addr ("a.b.c.d:port")
 * within timeout_ms, or -1 (a malformed address, refused, silent). */
int locus_dial_ipv4(const char *addr, int timeout_ms);

#endif
