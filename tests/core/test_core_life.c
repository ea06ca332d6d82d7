/*
 * test_core_life.c — request lifetimes: abandoning posted, queued and
 * transport-owned requests (after a fatal error and without one), a core
 * failure that sticks, generalized requests (completion, errors, polls
 * that progress or abandon, abandon itself), and finalize/init leaving
 * nothing behind (run under LeakSanitizer in the sanitizer build).
 */
#include <stdlib.h>
#include <string.h>

#include "rig.h"

#define EAGER 64
#define BIG 300

/* A strided type the core must hold while a receive uses it. */
static locus_dtype_t *strided(void)
{
    locus_dtype_t *dt;
    if (locus_dtype_hvector(10, 1, 2, locus_dtype_basic(LOCUS_EL_BYTE), &dt))
        abort();
    locus_dtype_commit(dt);
    return dt;
}

static locus_req_t *recv_strided(rig_t *t, void *buf, int tag)
{
    locus_req_t *r = locus_core_req_get(&t->c);
    r->ctx = 1;
    r->rank = 1;
    r->tag = tag;
    r->len = 10;
    r->ubuf = buf;
    r->ucount = 1;
    r->udt = strided();
    locus_core_irecv(&t->c, r);
    locus_dtype_release(r->udt);  /* the core holds its own reference */
    return r;
}

/* A send with a packed copy of len bytes the request owns. */
static locus_req_t *send_owning(rig_t *t, int world, uint32_t flags, size_t len)
{
    locus_req_t *r = locus_core_req_get(&t->c);
    r->kind = LOCUS_REQ_SEND;
    r->world = world;
    r->hdr.flags = flags;
    r->hdrlen = sizeof r->hdr;
    r->tmp = calloc(1, len);
    r->sbuf = r->tmp;
    r->len = len;
    locus_core_isend(&t->c, r);
    return r;
}

/* After a transport failure every kind of pending request is abandoned:
 * none stays linked, those the core alone holds are recycled at once. */
static void abandon_after_fatal(void)
{
    rig_t t;
    rig_open(&t, 4, EAGER);
    char rbuf[32], big[BIG] = {0}, small[8] = {0};
    locus_req_t *posted = recv_strided(&t, rbuf, 5);
    locus_req_t *wild = rig_recv(&t, 2, LOCUS_ANY, LOCUS_ANY, rbuf, 8);
    t.m.again_to[2] = 1;
    locus_req_t *queued = send_owning(&t, 2, 0, 16);
    locus_req_t *queued_sync = send_owning(&t, 2, LOCUS_HDR_SYNC, 16);
    t.m.hold_sends = 1;
    t.m.hold_rndv = 1;
    locus_req_t *owned = rig_send(&t, 3, 0, 0, 0, big, BIG);
    locus_req_t *unacked = rig_send(&t, 1, 0, 0, LOCUS_HDR_SYNC, small, 8);
    locus_req_t *rndv = rig_recv(&t, 1, 1, 9, big, BIG);
    rig_inject(&t, 1, 1, 9, 0, 0, big, BIG);
    rig_drain(&t);
    CHECK(rndv->tp_busy && !rndv->done, "rendezvous receive not in the transport");
    CHECK(queued->queued && queued_sync->queued, "sends not queued");
    t.m.fail_progress = 1;
    CHECK(locus_core_progress(&t.c) == -1 && t.c.fatal, "transport failure not reported");
    CHECK(strstr(t.c.fatal_msg, "mock: told to fail"), "reason '%s'", t.c.fatal_msg);
    locus_req_t *all[] = {posted, wild, queued, queued_sync, owned, unacked, rndv};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        locus_core_abandon(&t.c, all[i]);
    CHECK(t.c.nposted == 0, "%ld receives still posted", t.c.nposted);
    CHECK(!t.c.peers[2].pq_head && !t.c.peers[2].pq_tail, "sends still queued");
    /* posted, wild, queued, queued_sync back now; owned, unacked, rndv wait
     * for their transport or acknowledgement (which never come). */
    CHECK(rig_free_reqs(&t) == t.free_base - 3, "free list %ld, want %ld",
          rig_free_reqs(&t), t.free_base - 3);
    rig_close(&t);  /* LeakSanitizer: tmp buffers, the datatype, the mock's */
}

/* Without a failure, abandoned transport-owned requests are recycled
 * exactly once, when the transport lets go. */
static void abandon_then_complete(void)
{
    rig_t t;
    rig_open(&t, 3, EAGER);
    char big[BIG] = {0}, small[8] = {0};
    t.m.hold_sends = 1;
    t.m.hold_rndv = 1;
    locus_req_t *owned = rig_send(&t, 2, 0, 0, 0, big, BIG);
    locus_req_t *unacked = rig_send(&t, 1, 0, 0, LOCUS_HDR_SYNC, small, 8);
    mock_msg_t *x = mock_out_pop(&t.m);
    mock_msg_free(x);
    x = mock_out_pop(&t.m);
    uint64_t sreq = x ? x->hdr.sreq : 0;
    mock_msg_free(x);
    locus_req_t *rndv = rig_recv(&t, 1, 1, 9, big, BIG);
    rig_inject(&t, 1, 1, 9, 0, 0, big, BIG);
    rig_drain(&t);
    locus_core_abandon(&t.c, owned);
    locus_core_abandon(&t.c, unacked);
    locus_core_abandon(&t.c, rndv);
    CHECK(rig_free_reqs(&t) == t.free_base - 3, "recycled while still owned");
    t.m.hold_sends = 0;
    t.m.hold_rndv = 0;
    rig_inject_ack(&t, 1, sreq);
    rig_drain(&t);
    CHECK(!t.c.fatal, "failed: %s", t.c.fatal_msg);
    CHECK(rig_free_reqs(&t) == t.free_base, "free list %ld, want %ld", rig_free_reqs(&t),
          t.free_base);
    locus_req_t *a = locus_core_req_get(&t.c), *b = locus_core_req_get(&t.c),
                *c = locus_core_req_get(&t.c), *d = locus_core_req_get(&t.c);
    CHECK(a != b && a != c && a != d && b != c && b != d && c != d,
          "a request was recycled twice");
    rig_put(&t, a);
    rig_put(&t, b);
    rig_put(&t, c);
    rig_put(&t, d);
    rig_close(&t);
}

/* A queued synchronous send was never sent: no acknowledgement will come,
 * so abandoning it recycles it and ends its count at once. */
static void abandon_queued_ssend(void)
{
    rig_t t;
    rig_open(&t, 2, EAGER);
    char small[8] = {0};
    t.m.again = 1;
    locus_req_t *r = rig_send(&t, 1, 0, 0, LOCUS_HDR_SYNC, small, 8);
    locus_core_abandon(&t.c, r);
    CHECK(rig_free_reqs(&t) == t.free_base && t.c.nsend == 0, "queued ssend kept (nsend %ld)",
          t.c.nsend);
    t.m.again = 0;
    rig_drain(&t);
    CHECK(mock_out_count(&t.m) == 0, "an abandoned send left");
    rig_close(&t);
}

/* A failure the core itself finds (a send refused) sticks: every later
 * progress (and so every wait) returns -1 instead of waiting forever. */
static void core_failure_sticks(void)
{
    rig_t t;
    rig_open(&t, 2, EAGER);
    char buf[8] = {0};
    locus_req_t *rr = rig_recv(&t, 1, 1, 0, buf, 8);
    t.m.fail_send = 1;
    locus_req_t *s = rig_send(&t, 1, 0, 0, 0, buf, 8);
    CHECK(s->done && s->st_error == LOCUS_ERR_OTHER, "failed send: done %d error %d", s->done,
          s->st_error);
    CHECK(t.c.fatal && strstr(t.c.fatal_msg, "send to rank 1"), "reason '%s'", t.c.fatal_msg);
    int rc = locus_core_progress(&t.c);
    CHECK(rc == -1, "progress after a failed send: %d", rc);
    if (rc == -1) /* else the wait would never end */
        CHECK(locus_core_wait(&t.c, rr) == -1, "wait after a failed send");
    rig_put(&t, s);
    locus_core_abandon(&t.c, rr);
    rig_close(&t);
}

/* A rendezvous the transport refuses to receive completes its receive
 * with an error (nothing would ever complete it) and fails the core. */
static void rndv_recv_failure(void)
{
    rig_t t;
    rig_open(&t, 2, EAGER);
    char big[BIG] = {0};
    t.m.fail_rndv_recv = 1;
    locus_req_t *r = rig_recv(&t, 1, 1, 0, big, BIG);
    rig_inject(&t, 1, 1, 0, 0, 0, big, BIG);
    CHECK(rig_drain(&t) == -1 && t.c.fatal, "rendezvous failure not reported");
    CHECK(r->done && r->st_error == LOCUS_ERR_OTHER && !r->tp_busy, "receive: done %d error %d",
          r->done, r->st_error);
    rig_put(&t, r);
    rig_close(&t);
}

/* ---- generalized requests ---- */

typedef struct {
    rig_t *t;
    int polls, freed, finish_at, result, nest, depth;
    locus_req_t *victim;        /* abandoned by the poll */
} gen_state_t;

static int gen_poll_fn(void *p)
{
    gen_state_t *g = p;
    g->polls++;
    if (g->nest && g->depth++ == 0)
        locus_core_progress(&g->t->c);
    g->depth = 0;
    if (g->victim) {
        locus_core_abandon(&g->t->c, g->victim);
        g->victim = NULL;
    }
    return g->polls >= g->finish_at ? g->result : 0;
}

static void gen_state_free(void *p)
{
    ((gen_state_t *)p)->freed++;
}

static locus_req_t *gen_new(rig_t *t, gen_state_t *g, int finish_at, int result)
{
    memset(g, 0, sizeof *g);
    g->t = t;
    g->finish_at = finish_at;
    g->result = result;
    locus_req_t *r = locus_core_req_get(&t->c);
    r->kind = LOCUS_REQ_GEN;
    r->poll = gen_poll_fn;
    r->state = g;
    r->state_free = gen_state_free;
    locus_core_gen_add(&t->c, r);
    return r;
}

static void gen_requests(void)
{
    rig_t t;
    rig_open(&t, 2, EAGER);
    gen_state_t ga, gb, gy, gx, gq, gp;
    locus_req_t *a = gen_new(&t, &ga, 3, 1);
    locus_req_t *b = gen_new(&t, &gb, 1, -LOCUS_ERR_TRUNCATE);
    locus_core_progress(&t.c);
    CHECK(b->done && b->st_error == LOCUS_ERR_TRUNCATE && gb.freed == 1, "failing gen request");
    CHECK(!a->done, "gen request done early");
    locus_core_progress(&t.c);
    locus_core_progress(&t.c);
    CHECK(a->done && a->st_error == 0 && ga.freed == 1 && ga.polls == 3, "gen request: %d polls",
          ga.polls);
    rig_put(&t, a);
    rig_put(&t, b);

    /* A poll that progresses (a blocking step) must not re-poll anything
     * in a nested round, nor poll a request completed in one. */
    locus_req_t *y = gen_new(&t, &gy, 1, 1);
    y->freed = 1;
    gen_new(&t, &gx, 2, 1)->freed = 1;
    gx.nest = 1;
    locus_core_progress(&t.c);
    CHECK(gy.polls == 1 && gy.freed == 1, "polled %d times, freed %d", gy.polls, gy.freed);
    CHECK(gx.polls == 1, "a poll ran inside itself (%d polls)", gx.polls);
    locus_core_progress(&t.c);
    CHECK(gx.polls == 2 && gx.freed == 1 && !t.c.gen_head, "nesting request");

    /* A poll that abandons the request the round visits next. */
    locus_req_t *q = gen_new(&t, &gq, 100, 1);
    locus_req_t *p = gen_new(&t, &gp, 1, 1);
    p->freed = 1;
    gp.victim = q;
    locus_core_progress(&t.c);
    CHECK(gq.polls == 0 && gq.freed == 1, "abandoned request polled %d times", gq.polls);
    CHECK(!t.c.gen_head && rig_free_reqs(&t) == t.free_base, "gen requests left");
    rig_close(&t);
}

/* MPI_Finalize (settle, then finalize) with everything still pending:
 * posted receives holding a datatype, unexpected eager and rendezvous
 * messages, a queued send and one the transport never let go of, both
 * owning packed copies, a generalized request nobody waited for. */
static void finalize_pending(void)
{
    rig_t t;
    rig_open(&t, 3, EAGER);
    static char buf[32], big[2000];
    recv_strided(&t, buf, 77);
    rig_inject(&t, 1, 4, 0, 0, 0, big, 12);
    rig_inject(&t, 2, 4, 0, 0, 0, big, 2000);
    rig_inject(&t, 2, 4, 0, 0, 0, big, BIG);
    rig_drain(&t);
    CHECK(t.c.nunexp == 3, "%ld unexpected", t.c.nunexp);
    t.m.hold_sends = 1;
    send_owning(&t, 2, 0, BIG);
    t.m.again = 1;
    send_owning(&t, 1, 0, 16);
    gen_state_t g;
    gen_new(&t, &g, 1000, 1);
    CHECK(locus_core_settle(&t.c) == 2, "settle: %ld lost", t.c.nsend);
    rig_close(&t);
    CHECK(g.freed == 1, "gen state freed %d times at finalize", g.freed);
}

/* A bad tunable fails init with a reason and leaves nothing allocated. */
static void init_failure(void)
{
    locus_core_t c;
    char err[200] = "";
    setenv("LOCUS_YIELD", "sometimes", 1);
    CHECK(locus_core_init(&c, 0, 4, 1, err, sizeof err) == -1 &&
              strstr(err, "LOCUS_YIELD=sometimes"), "init: '%s'", err);
    unsetenv("LOCUS_YIELD");
}

void test_life(void)
{
    abandon_after_fatal();
    abandon_then_complete();
    abandon_queued_ssend();
    core_failure_sticks();
    rndv_recv_failure();
    gen_requests();
    finalize_pending();
    init_failure();
}
