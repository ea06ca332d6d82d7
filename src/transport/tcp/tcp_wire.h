/*
 * tcp_wire.h — what travels on a Locus TCP connection.
 *
 * A connection starts with the job key's challenge-response (locus_auth.h,
 * context "tcp": the acceptor's CHAL, the dialler's RESP, the acceptor's
 * PROOF), then a handshake: the side that dialled sends a hello right
 * behind its RESP, the side that accepted answers with a hello_ack right
 * behind its PROOF. Nothing but RESP is read from a dialler before it
 * proved the key, and the dialler reads the ack only after the proof. Then both
 * directions carry frames: a 32-byte frame head, then (by type) the core's
 * header and a payload. Fields are in the host's byte order; the hello's
 * magic catches a peer that differs (the whole job runs one build).
 *
 *   MSG   a = per-pair sequence  b = payload bytes   + core header + payload
 *   RTS   a = per-pair sequence  b = message bytes   c = sender's request id
 *         + core header (the data waits at the sender until a CTS)
 *   CTS   a = sender's request id  b = bytes wanted  c = receiver's request id
 *   DATA  a = receiver's request id  b = offset  c = bytes  + that many bytes
 *         (chunks of one message may travel on several rails, any order)
 *   BYE   nothing follows on this connection (clean shutdown)
 *   PING  a = probe id  b = sender's clock (adaptive QoS: on the normal class)
 *   PONG  a, b echoed (on the latency class, so only the way out queues)
 *   ACK   a = lane  b = its generation  c = frames received on it (any lane)
 *   FAILOVER  a = lane  b = its generation  c = frames received on it before
 *         the sender stopped reading it (sent on another lane of the pair)
 *
 * Every frame head also carries `ack`: the frames (all but ACK) received so
 * far on the connection it travels on. A pair with several rails keeps each
 * frame it wrote until the peer has it, so that when a connection fails the
 * frames the peer did not get go again on another rail (tcp_failover.c).
 *
 * MSG and RTS go on the lowest open rail of their traffic class, numbered
 * per pair: the receiver delivers them in sequence order whatever lane each
 * came by, and a repeated (or, with one rail and one class, overtaken)
 * sequence fails the job.
 */
#ifndef TCP_WIRE_H
#define TCP_WIRE_H

#include <stdint.h>

#define TCP_HELLO_MAGIC 0x314c434cu /* "LCL1" read as little-endian */
#define TCP_WIRE_VERSION 4 /* 3: the key's challenge-response first; 4: acks, failover */

typedef struct {
    uint32_t magic;
    uint16_t version;
    uint8_t rail;         /* which of the dialler's rails this connection is */
    uint8_t nconn;        /* rails the dialler opens with this peer */
    int32_t src, dst;     /* world ranks: dialler, acceptor */
    uint32_t eager_max;   /* dialler's eager limit (the pair uses the smaller) */
    uint8_t cls;          /* the traffic class of this connection */
    uint8_t ncls;         /* classes the dialler opens with this peer (1: no QoS) */
    uint16_t gen;         /* times this lane was dialled before (redials after a failover) */
    uint64_t src_nonce;   /* dialler's nonce (from its card) */
    uint64_t dst_nonce;   /* acceptor's nonce as read from its card: proves the
                             dialler read this job's kvs */
} tcp_hello_t;

enum {
    TCP_HELLO_OK = 1,     /* accepted: frames follow */
    TCP_HELLO_LOST = 2,   /* both dialled at once and the lower rank's dial wins:
                             the acceptor's own connection will arrive instead */
    TCP_HELLO_BAD = 3     /* not a peer of this job, or an impossible hello */
};

typedef struct {
    uint32_t magic;
    uint32_t status;      /* TCP_HELLO_* */
} tcp_hello_ack_t;

enum { TCP_F_MSG = 1, TCP_F_RTS, TCP_F_CTS, TCP_F_DATA, TCP_F_BYE, TCP_F_PING, TCP_F_PONG,
       TCP_F_ACK, TCP_F_FAILOVER };

typedef struct {
    uint8_t type;
    uint8_t hdrlen;       /* MSG, RTS: bytes of core header that follow */
    uint16_t rsv;         /* 0 */
    uint32_t a;
    uint64_t b;
    uint64_t c;
    uint32_t ack;         /* frames received so far on this connection (mod 2^32) */
    uint32_t rsv2;        /* 0 */
} tcp_frame_t;

_Static_assert(sizeof(tcp_hello_t) == 40, "hello layout");
_Static_assert(sizeof(tcp_frame_t) == 32, "frame layout");

#endif
