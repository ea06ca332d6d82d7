/*
 * locus_dial.h — a TCP connection to "ip:port" (IPv4) within a time bound,
 * for the small control clients that try a list of addresses in turn
 * (a proxy calling back to locusrun, a rank asking the name service), and
 * the request to the launch's service that both make.
 */
#ifndef LOCUS_DIAL_H
#define LOCUS_DIAL_H

#include <stddef.h>

/* A connected, non-blocking, close-on-exec socket to addr ("a.b.c.d:port")
 * within timeout_ms, or -1 (a malformed address, refused, silent). */
int locus_dial_ipv4(const char *addr, int timeout_ms);

/* The longest request line the launch's service takes, newline included. */
#define LOCUS_SERVICE_LINE_MAX 4096

/*
 * One request to the service locusrun's front end runs for a launch (the
 * name service and the slot ledger, src/launch/names.c), which
 * LOCUS_NAME_SERVER locates ("TOKEN@ip:port,..."; each address tried in
 * turn, connect_ms each): sends "TOKEN verb args\n" and reads the
 * one-line answer (no newline) into reply. 0, or -1 with a one-line
 * reason in err.
 */
int locus_service_call(const char *verb, const char *args, char *reply, size_t len,
                       int connect_ms, char *err, size_t errlen);
/* The time a rank's request to the name service gives each address to
 * connect; and the slot ledger's requests (made at every start-up, and by
 * a spawning rank inside MPI), for which an address that cannot be
 * reached must not hold anything up: on the nodes' network a connect
 * takes microseconds. */
#define LOCUS_SERVICE_CONNECT_MS 2000
#define LOCUS_LEDGER_CONNECT_MS 250

#endif
