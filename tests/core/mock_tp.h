/*
 * mock_tp.h — a scripted in-process transport for the core's unit test.
 *
 * The core under test is world rank 0; the test plays every other rank.
 * Messages the test injects are delivered by progress() in injection order
 * (larger than eager_max: announced as rendezvous, their data moved once
 * the core gives a buffer); everything the core sends lands in an outbox
 * the test reads. Switches make send() answer AGAIN, hold rendezvous data
 * or large sends in the transport, or fail send/progress/rndv_recv.
 *
 * The real transports cannot be forced into these orders; this is the one
 * place a mock is right (the core alone, nothing else is replaced).
 */
#ifndef MOCK_TP_H
#define MOCK_TP_H

#include "locus_core.h"

typedef struct mock_msg mock_msg_t;
struct mock_msg {
    mock_msg_t *next;
    int peer;                   /* inbound: the sender; outbound: the destination */
    locus_hdr_t hdr;            /* zero beyond hdrlen */
    size_t hdrlen;
    char *data;
    size_t len;
    /* inbound rendezvous, once the core called rndv_recv() */
    int claimed;
    void *dst;
    size_t dlen;
    void *recv_ctx;
};

typedef struct mock_owned mock_owned_t;   /* a PENDING send */

typedef struct {
    locus_tp_t base;
    const locus_tp_upcalls_t *up;
    void *core;
    int size;                   /* world ranks it reaches */
    size_t eager_max;           /* larger: rendezvous in, PENDING out */
    /* the test's switches */
    int again;                  /* send() answers LOCUS_TP_AGAIN */
    char again_to[64];          /* ...for this destination only */
    int fail_send, fail_progress, fail_rndv_recv;
    int hold_rndv;              /* rendezvous data waits for this to clear */
    int hold_sends;             /* PENDING sends wait for this to clear */
    int quiet_rounds;           /* this many progress() calls deliver nothing
                                   (an ack still on the wire) */
    /* state */
    mock_msg_t *in_head, *in_tail;      /* injected, not yet delivered */
    mock_msg_t *rndv_head;              /* announced, data not yet moved */
    mock_msg_t *out_head, *out_tail;    /* what the core sent, in order */
    mock_owned_t *owned;                /* PENDING sends, oldest first */
    long sends, agains;
    int violations;             /* contract breaches by the core */
    int finalized;
} mock_tp_t;

/* Sets up m for core c reaching `size` ranks and registers it with c. */
int mock_attach(mock_tp_t *m, locus_core_t *c, int size, size_t eager_max);

/* Queues a message from world rank src for the next progress(). */
void mock_inject(mock_tp_t *m, int src, const locus_hdr_t *h, size_t hdrlen,
                 const void *data, size_t len);

/* The oldest message the core sent (NULL: none); free with mock_msg_free. */
mock_msg_t *mock_out_pop(mock_tp_t *m);
int mock_out_count(const mock_tp_t *m);
void mock_msg_free(mock_msg_t *x);

/* PENDING sends the transport still owns. */
int mock_owned_count(const mock_tp_t *m);

#endif
