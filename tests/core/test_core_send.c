/*
 * test_core_send.c — sends: the direct path, AGAIN queueing (per peer, in
 * order, no overtaking by a later send), sends with no request (gone at
 * once or not at all, never ahead of a queue), sends the transport owns,
 * synchronous-send acknowledgements both ways, malformed acknowledgements
 * and headers, cancels of sends both ways, and what MPI_Finalize's settle
 * does with queued sends.
 */
#include <stdlib.h>
#include <string.h>

#include "rig.h"

#define EAGER 64
#define BIG 300

/* Pops the next outbox message and checks its destination and tag. */
static mock_msg_t *out_expect(rig_t *t, int peer, int tag, const char *what)
{
    mock_msg_t *x = mock_out_pop(&t->m);
    CHECK(x && x->peer == peer && x->hdr.tag == tag, "%s: sent %d/%d, want %d/%d", what,
          x ? x->peer : -1, x ? x->hdr.tag : -1, peer, tag);
    return x;
}

static void direct(void)
{
    rig_t t;
    rig_open(&t, 3, EAGER);
    char buf[16];
    rig_fill(buf, sizeof buf, 1);
    locus_req_t *r = rig_send(&t, 2, 9, 4, 0, buf, sizeof buf);
    CHECK(r->done && r->st_error == 0, "eager send not complete at once");
    CHECK(t.c.nsend == 0, "%ld sends in flight", t.c.nsend);
    mock_msg_t *x = out_expect(&t, 2, 4, "direct");
    CHECK(x && x->hdr.ctx == 9 && x->hdrlen == LOCUS_HDR_SHORT && x->len == 16 &&
              rig_is(x->data, 16, 1), "direct: header or payload");
    mock_msg_free(x);
    rig_put(&t, r);
    rig_close(&t);
}

/* No room: sends queue per peer and leave in order; a send started while
 * its peer's queue is not empty waits behind it even if there is room. */
static void again_queue(void)
{
    rig_t t;
    rig_open(&t, 4, EAGER);
    char buf[8] = {0};
    t.m.again = 1;
    locus_req_t *a = rig_send(&t, 1, 0, 1, 0, buf, 8);
    locus_req_t *b = rig_send(&t, 2, 0, 2, 0, buf, 8);
    locus_req_t *c = rig_send(&t, 1, 0, 3, 0, buf, 8);
    CHECK(!a->done && !b->done && !c->done, "sends completed without room");
    CHECK(a->queued && b->queued && c->queued && t.c.npend == 2, "queued %d%d%d, %d peers",
          a->queued, b->queued, c->queued, t.c.npend);
    CHECK(rig_drain(&t) == 0 && mock_out_count(&t.m) == 0, "sent while the ring was full");
    t.m.again = 0;
    locus_req_t *d = rig_send(&t, 1, 0, 4, 0, buf, 8);
    CHECK(!d->done && mock_out_count(&t.m) == 0, "a later send overtook the queue");
    rig_drain(&t);
    CHECK(a->done && b->done && c->done && d->done, "queued sends not complete");
    CHECK(t.c.npend == 0 && t.c.nsend == 0, "npend %d nsend %ld", t.c.npend, t.c.nsend);
    int seen1 = 0, seen2 = 0;
    mock_msg_t *x;
    while ((x = mock_out_pop(&t.m))) {
        if (x->peer == 1) {
            static const int want[] = {1, 3, 4};
            CHECK(seen1 < 3 && x->hdr.tag == want[seen1], "peer 1 got tag %d at %d",
                  x->hdr.tag, seen1);
            seen1++;
        } else {
            CHECK(x->peer == 2 && x->hdr.tag == 2, "peer %d tag %d", x->peer, x->hdr.tag);
            seen2++;
        }
        mock_msg_free(x);
    }
    CHECK(seen1 == 3 && seen2 == 1, "sent %d + %d", seen1, seen2);
    rig_put(&t, a);
    rig_put(&t, b);
    rig_put(&t, c);
    rig_put(&t, d);
    rig_close(&t);
}

/* locus_core_send_now: a small send goes at once and takes no request; a
 * large one, one without room, or one behind its peer's queue does not go
 * at all (the caller then sends it with a request). */
static void send_now(void)
{
    rig_t t;
    rig_open(&t, 4, EAGER);
    char buf[BIG];
    rig_fill(buf, sizeof buf, 7);
    locus_hdr_t h = { .ctx = 3, .src = 0, .tag = 11 };
    long free0 = rig_free_reqs(&t);
    CHECK(locus_core_send_now(&t.c, 1, &h, LOCUS_HDR_SHORT, buf, 16) == 1, "small: not sent");
    CHECK(rig_free_reqs(&t) == free0 && t.c.nsend == 0, "small: a request was used");
    mock_msg_t *x = out_expect(&t, 1, 11, "send_now");
    CHECK(x && x->hdr.ctx == 3 && x->len == 16 && rig_is(x->data, 16, 7), "send_now: payload");
    mock_msg_free(x);
    CHECK(locus_core_send_now(&t.c, 1, &h, LOCUS_HDR_SHORT, buf, BIG) == 0 &&
              mock_out_count(&t.m) == 0 && mock_owned_count(&t.m) == 0, "large: sent");
    t.m.again = 1;
    CHECK(locus_core_send_now(&t.c, 1, &h, LOCUS_HDR_SHORT, buf, 8) == 0, "no room: sent");
    /* Rank 2's queue holds a send: a request-free one must not pass it,
     * even once there is room; rank 3's has none. */
    locus_req_t *q = rig_send(&t, 2, 3, 1, 0, buf, 8);
    t.m.again = 0;
    CHECK(q->queued && locus_core_send_now(&t.c, 2, &h, LOCUS_HDR_SHORT, buf, 8) == 0 &&
              mock_out_count(&t.m) == 0, "overtook the queue");
    CHECK(locus_core_send_now(&t.c, 3, &h, LOCUS_HDR_SHORT, buf, 8) == 1, "other peer");
    mock_msg_free(out_expect(&t, 3, 11, "other peer"));
    rig_drain(&t);
    CHECK(q->done && locus_core_send_now(&t.c, 2, &h, LOCUS_HDR_SHORT, buf, 8) == 1,
          "after the queue drained");
    mock_msg_free(out_expect(&t, 2, 1, "queued first"));
    mock_msg_free(out_expect(&t, 2, 11, "then the request-free one"));
    CHECK(t.c.peers[2].sent_msgs == 2 && t.c.peers[1].sent_msgs == 1, "sent_msgs %ld %ld",
          (long)t.c.peers[2].sent_msgs, (long)t.c.peers[1].sent_msgs);
    rig_put(&t, q);
    rig_close(&t);
}

/* A large send is the transport's until send_done(). */
static void pending(void)
{
    rig_t t;
    rig_open(&t, 2, EAGER);
    char buf[BIG] = {0};
    t.m.hold_sends = 1;
    locus_req_t *r = rig_send(&t, 1, 0, 0, 0, buf, BIG);
    rig_drain(&t);
    CHECK(!r->done && r->tp_busy && mock_owned_count(&t.m) == 1, "large send");
    t.m.hold_sends = 0;
    rig_drain(&t);
    CHECK(r->done && !r->tp_busy && t.c.nsend == 0, "large send after send_done");
    rig_put(&t, r);
    rig_close(&t);
}

/* Synchronous sends complete only with the receiver's acknowledgement, and
 * (large ones) the transport's send_done, in either order. */
static void ssend_acked(void)
{
    for (int mode = 0; mode < 3; mode++) {
        rig_t t;
        rig_open(&t, 3, EAGER);
        char buf[BIG] = {0};
        size_t len = mode ? BIG : 8;
        t.m.hold_sends = 1;
        locus_req_t *r = rig_send(&t, 2, 1, 6, LOCUS_HDR_SYNC, buf, len);
        mock_msg_t *x = out_expect(&t, 2, 6, "ssend");
        uint64_t sreq = x ? x->hdr.sreq : 0;
        CHECK(x && (x->hdr.flags & LOCUS_HDR_SYNC) && x->hdrlen == sizeof(locus_hdr_t) &&
                  sreq != 0, "ssend header");
        mock_msg_free(x);
        rig_drain(&t);
        CHECK(!r->done, "mode %d: ssend complete without its acknowledgement", mode);
        if (mode == 2)
            t.m.hold_sends = 0;     /* send_done before the ack */
        rig_drain(&t);
        CHECK(!r->done, "mode %d: complete before the ack", mode);
        rig_inject_ack(&t, 2, sreq);
        rig_drain(&t);
        CHECK(r->done == (mode != 1), "mode %d: done %d after the ack", mode, r->done);
        t.m.hold_sends = 0;
        rig_drain(&t);
        CHECK(r->done && r->st_error == 0 && !t.c.fatal, "mode %d: ssend end", mode);
        rig_put(&t, r);
        rig_close(&t);
    }
}

/* The receiving side acknowledges when a receive matches, not on arrival. */
static void ssend_received(void)
{
    for (int big = 0; big < 2; big++) {
        rig_t t;
        rig_open(&t, 3, EAGER);
        char data[BIG], buf[BIG];
        size_t len = big ? BIG : 12;
        rig_fill(data, len, 5);
        rig_inject(&t, 1, 3, 2, LOCUS_HDR_SYNC, 0xabc0000001ull, data, len);
        rig_drain(&t);
        CHECK(mock_out_count(&t.m) == 0, "acknowledged before matched");
        locus_req_t *r = rig_recv(&t, 3, LOCUS_ANY, 2, buf, BIG);
        mock_msg_t *x = mock_out_pop(&t.m);
        CHECK(x && x->peer == 1 && (x->hdr.flags & LOCUS_HDR_ACK) &&
                  x->hdr.sreq == 0xabc0000001ull, "acknowledgement");
        mock_msg_free(x);
        rig_drain(&t);
        CHECK(r->done && r->st_bytes == len && rig_is(buf, len, 5), "synchronous data");
        rig_put(&t, r);
        CHECK(rig_free_reqs(&t) == t.free_base, "the ack's request was not recycled");
        rig_close(&t);
    }
}

/* Acknowledgements are wire input: one naming no waiting send, a second
 * one for the same send, and a header too short fail the core loudly. */
static void bad_wire(void)
{
    for (int mode = 0; mode < 4; mode++) {
        rig_t t;
        rig_open(&t, 3, EAGER);
        char buf[8] = {0};
        locus_req_t *r = rig_send(&t, 1, 0, 0, LOCUS_HDR_SYNC, buf, 8);
        mock_msg_t *x = mock_out_pop(&t.m);
        uint64_t sreq = x ? x->hdr.sreq : 0;
        mock_msg_free(x);
        if (mode == 0) {
            rig_inject_ack(&t, 1, 0xdeadbeef12345ull);
        } else if (mode == 1) {
            rig_inject_ack(&t, 1, sreq);
            rig_inject_ack(&t, 1, sreq);
        } else if (mode == 2) {
            rig_inject_ack(&t, 2, sreq);    /* not the rank it was sent to */
        } else {
            locus_hdr_t h = { .ctx = 1 };
            mock_inject(&t.m, 1, &h, 8, NULL, 0);
        }
        CHECK(rig_drain(&t) == -1 && t.c.fatal, "mode %d: bad input accepted", mode);
        CHECK(strstr(t.c.fatal_msg, mode == 3 ? "malformed" : "acknowledged"),
              "mode %d: reason '%s'", mode, t.c.fatal_msg);
        CHECK(locus_core_progress(&t.c) == -1, "mode %d: failure did not stick", mode);
        CHECK(r->done == (mode == 1), "mode %d: ssend done %d", mode, r->done);
        locus_core_abandon(&t.c, r);
        rig_close(&t);
    }
}

/* The answer the receiver sent to a cancel: flags, sreq and tag (1
 * withdrawn, 0 matched). */
static void answer_expect(rig_t *t, int peer, uint64_t sreq, int withdrawn, const char *what)
{
    mock_msg_t *x = mock_out_pop(&t->m);
    CHECK(x && x->peer == peer && x->hdr.flags == LOCUS_HDR_CANCEL_REPLY &&
              x->hdr.sreq == sreq && x->hdr.tag == withdrawn,
          "%s: answer flags %#x tag %d, want withdrawn %d", what, x ? x->hdr.flags : 0,
          x ? x->hdr.tag : -1, withdrawn);
    mock_msg_free(x);
}

/* Cancels of sends. Sender: a queued send is withdrawn at once; a
 * synchronous one asks the receiver and completes with the answer (a
 * standard send that left is not cancelled); an answer naming nothing
 * waiting fails the core. Receiver: an unmatched synchronous message is
 * withdrawn and never matched, an unknown one is answered "matched", a
 * malformed control message fails the core. */
static void cancel(void)
{
    rig_t t;
    rig_open(&t, 3, EAGER);
    char buf[8] = {0};
    t.m.again = 1;
    locus_req_t *q = rig_send(&t, 1, 0, 0, LOCUS_HDR_SYNC, buf, 8);
    CHECK(locus_core_cancel(&t.c, q) == 1 && q->done && q->st_cancelled && !q->queued,
          "queued send not withdrawn");
    t.m.again = 0;
    rig_drain(&t);
    CHECK(mock_out_count(&t.m) == 0, "a withdrawn send left");
    rig_put(&t, q);

    locus_req_t *std = rig_send(&t, 1, 0, 0, 0, buf, 8);
    mock_msg_free(mock_out_pop(&t.m));
    CHECK(locus_core_cancel(&t.c, std) == 0 && std->done && !std->st_cancelled,
          "a standard send that left");
    rig_put(&t, std);

    for (int withdrawn = 0; withdrawn < 2; withdrawn++) {
        locus_req_t *r = rig_send(&t, 2, 4, 7, LOCUS_HDR_SYNC, buf, 8);
        mock_msg_t *x = mock_out_pop(&t.m);
        uint64_t sreq = x ? x->hdr.sreq : 0;
        mock_msg_free(x);
        CHECK(locus_core_cancel(&t.c, r) == 0 && locus_core_cancel(&t.c, r) == 0 && !r->done,
              "cancel answered before the receiver");
        x = mock_out_pop(&t.m);
        CHECK(x && x->peer == 2 && x->hdr.flags == LOCUS_HDR_CANCEL && x->hdr.sreq == sreq &&
                  x->hdr.ctx == 4 && mock_out_count(&t.m) == 0,
              "one cancel naming the send");
        mock_msg_free(x);
        if (!withdrawn)
            rig_inject_ack(&t, 2, sreq);   /* matched first: the ack comes before the answer */
        rig_drain(&t);
        CHECK(!r->done, "complete before the answer");
        locus_hdr_t a = { .ctx = 4, .flags = LOCUS_HDR_CANCEL_REPLY, .tag = withdrawn, .sreq = sreq };
        mock_inject(&t.m, 2, &a, sizeof a, NULL, 0);
        rig_drain(&t);
        CHECK(r->done && r->st_cancelled == withdrawn && !t.c.fatal, "answer %d: done %d",
              withdrawn, r->done);
        rig_put(&t, r);
    }

    /* Receiver side. */
    rig_inject(&t, 1, 3, 2, LOCUS_HDR_SYNC, 0xabc0000001ull, "withdraw", 8);
    rig_inject(&t, 1, 3, 2, LOCUS_HDR_CANCEL, 0xabc0000001ull, NULL, 0);
    rig_inject(&t, 1, 3, 2, LOCUS_HDR_CANCEL, 0xabc0000002ull, NULL, 0);
    rig_drain(&t);
    answer_expect(&t, 1, 0xabc0000001ull, 1, "unmatched");
    answer_expect(&t, 1, 0xabc0000002ull, 0, "unknown");
    char in[8];
    locus_req_t *rv = rig_recv(&t, 3, LOCUS_ANY, LOCUS_ANY, in, sizeof in);
    rig_drain(&t);
    CHECK(!rv->done && mock_out_count(&t.m) == 0, "a withdrawn message was matched");
    locus_core_cancel(&t.c, rv);
    rig_put(&t, rv);
    CHECK(rig_free_reqs(&t) == t.free_base, "requests not recycled");

    locus_hdr_t bad = { .flags = LOCUS_HDR_CANCEL_REPLY, .tag = 7, .sreq = 1 };
    mock_inject(&t.m, 1, &bad, sizeof bad, NULL, 0);
    CHECK(rig_drain(&t) == -1 && strstr(t.c.fatal_msg, "malformed control"),
          "malformed answer: '%s'", t.c.fatal_msg);
    rig_close(&t);

    rig_open(&t, 3, EAGER);
    locus_hdr_t stray = { .flags = LOCUS_HDR_CANCEL_REPLY, .tag = 1, .sreq = 0x500000001ull };
    mock_inject(&t.m, 1, &stray, sizeof stray, NULL, 0);
    CHECK(rig_drain(&t) == -1 && strstr(t.c.fatal_msg, "answered a cancel"),
          "stray answer: '%s'", t.c.fatal_msg);
    rig_close(&t);
}

/* MPI_Finalize's settle: sends that can never leave complete with an
 * error and are counted, freed ones recycled; an acknowledgement that
 * trails the fence (quiet progress rounds first) is still taken. */
static void settle(void)
{
    {
        rig_t t;
        rig_open(&t, 2, EAGER);
        char small[8] = {0};
        locus_req_t *r = rig_send(&t, 1, 0, 0, LOCUS_HDR_SYNC, small, 8);
        mock_msg_t *x = mock_out_pop(&t.m);
        uint64_t sreq = x ? x->hdr.sreq : 0;
        mock_msg_free(x);
        locus_core_abandon(&t.c, r);   /* MPI_Request_free */
        rig_inject_ack(&t, 1, sreq);
        t.m.quiet_rounds = 50;
        CHECK(locus_core_settle(&t.c) == 0 && t.c.nsend == 0,
              "an ack after quiet rounds: %ld counted lost", t.c.nsend);
        CHECK(rig_free_reqs(&t) == t.free_base, "the freed ssend was not recycled");
        rig_close(&t);
    }
    rig_t t;
    rig_open(&t, 3, EAGER);
    char buf[8] = {0};
    t.m.again = 1;
    locus_req_t *gone = rig_send(&t, 1, 0, 0, 0, buf, 8);
    gone->freed = 1;        /* MPI_Request_free */
    locus_req_t *kept = rig_send(&t, 2, 0, 0, LOCUS_HDR_SYNC, buf, 8);
    CHECK(locus_core_settle(&t.c) == 2, "settle counted %ld lost", t.c.nsend);
    CHECK(kept->done && kept->st_error == LOCUS_ERR_OTHER && !kept->queued, "queued send");
    CHECK(t.c.npend == 0 && t.c.nsend == 0, "npend %d nsend %ld", t.c.npend, t.c.nsend);
    rig_put(&t, kept);
    CHECK(rig_free_reqs(&t) == t.free_base, "requests not recycled");
    rig_close(&t);
}

void test_send(void)
{
    direct();
    again_queue();
    send_now();
    pending();
    ssend_acked();
    ssend_received();
    bad_wire();
    cancel();
    settle();
}
