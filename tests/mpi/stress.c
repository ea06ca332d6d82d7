/*
 * Randomized stress: every rank sends N messages (argv[1], default 1500)
 * of random sizes (0 B .. 1 MiB, mostly small), tags and destinations
 * (itself included) with Isend/Issend/Send, while receiving with
 * ANY_SOURCE/ANY_TAG (several posted at once) and with probe-then-receive
 * of a specific source and tag. Every rank computes every sender's plan
 * from its seed, so each receiver knows what must arrive: each message is
 * checked byte for byte, delivered exactly once, and in order per
 * (source, tag) in the order the receives were posted (zero-byte messages,
 * which carry no id, are counted, not ordered).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define NTAGS 6
#define MAXLEN (1 << 20)
#define NPOST 4
#define WINDOW 16

typedef struct {
    int dest, tag, len, mode;
} msg_t;

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void plan_make(int src, int size, int n, msg_t *plan)
{
    uint64_t s = 0x1234567ull + (uint64_t)src * 7777;
    for (int i = 0; i < n; i++) {
        uint64_t r = rng_next(&s);
        int cls = (int)(r % 100);
        int len = cls < 70 ? (int)(rng_next(&s) % 257)
                : cls < 90 ? (int)(rng_next(&s) % 16384)
                : cls < 99 ? (int)(rng_next(&s) % 262144)
                           : (int)(rng_next(&s) % MAXLEN);
        plan[i].len = len < 8 ? (len == 0 ? 0 : 8) : len; /* room for (src, seq) */
        plan[i].dest = (int)(rng_next(&s) % (uint64_t)size);
        plan[i].tag = (int)(rng_next(&s) % NTAGS);
        int m = (int)(rng_next(&s) % 100);
        plan[i].mode = m < 80 ? 0 : m < 90 ? 1 : (plan[i].len <= 1024 ? 2 : 0);
    }
}

static void payload(unsigned char *b, int len, int src, int seq)
{
    if (len == 0)
        return;
    int32_t id[2] = { src, seq };
    memcpy(b, id, 8);
    uint64_t s = ((uint64_t)src << 32 | (uint32_t)seq) * 0x9e3779b97f4a7c15ull + 1;
    for (int i = 8; i < len; i++)
        b[i] = (unsigned char)(rng_next(&s) >> 24);
}

static int rank, size, nmsg;
static msg_t **plans;       /* [size][nmsg] */
static char **got;          /* [size][nmsg] received flags */
static long expected, received, post_seq;
static unsigned char *check;
static long (*last_post)[NTAGS]; /* [size][tag]: post id of the last match */
static int (*last_seq)[NTAGS];

/* Validates one received message (posted as receive number `post`). */
static void accept(const unsigned char *buf, int len, int src, int tag, long post)
{
    int32_t id[2] = { -1, -1 };
    if (len >= 8)
        memcpy(id, buf, 8);
    int seq = id[1];
    if (len == 0) {
        /* Zero-byte messages carry no id: take the first unreceived one of
         * (src, tag) to me with length 0. */
        for (seq = 0; seq < nmsg; seq++) {
            msg_t *m = &plans[src][seq];
            if (!got[src][seq] && m->dest == rank && m->tag == tag && m->len == 0)
                break;
        }
        id[0] = src;
    }
    if (id[0] != src || seq < 0 || seq >= nmsg) {
        CHECK(0, "message from %d tag %d len %d carries id (%d,%d)", src, tag, len, id[0], seq);
        return;
    }
    msg_t *m = &plans[src][seq];
    CHECK(m->dest == rank && m->tag == tag && m->len == len,
          "message (%d,%d): dest %d tag %d len %d, expected %d/%d/%d", src, seq, rank, tag, len,
          m->dest, m->tag, m->len);
    CHECK(!got[src][seq], "message (%d,%d) delivered twice", src, seq);
    got[src][seq] = 1;
    received++;
    payload(check, len, src, seq);
    CHECK(memcmp(check, buf, (size_t)len) == 0, "message (%d,%d): content differs", src, seq);
    /* Non-overtaking: later posts of (src, tag) get later messages. A
     * zero-byte message carries no id: which of two it is was guessed
     * above in the order the test looked at the receives, not the order
     * they were posted (a probe's receive is looked at at once, an earlier
     * wildcard receive at its next test), so its order cannot be checked. */
    if (len == 0)
        return;
    if (post > last_post[src][tag]) {
        CHECK(seq > last_seq[src][tag], "(%d, tag %d): seq %d after %d", src, tag, seq,
              last_seq[src][tag]);
        last_post[src][tag] = post;
        last_seq[src][tag] = seq;
    } else {
        CHECK(seq < last_seq[src][tag], "(%d, tag %d): seq %d posted earlier than seq %d",
              src, tag, seq, last_seq[src][tag]);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    nmsg = argc > 1 ? atoi(argv[1]) : 1500;
    /* Test traffic on its own communicator: the wildcard receives must not
     * take mtest_finish()'s messages from ranks that are done early. */
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    plans = malloc(sizeof *plans * (size_t)size);
    got = malloc(sizeof *got * (size_t)size);
    last_post = malloc(sizeof *last_post * (size_t)size);
    last_seq = malloc(sizeof *last_seq * (size_t)size);
    for (int s = 0; s < size; s++) {
        plans[s] = malloc(sizeof(msg_t) * (size_t)nmsg);
        got[s] = calloc((size_t)nmsg, 1);
        plan_make(s, size, nmsg, plans[s]);
        for (int i = 0; i < nmsg; i++)
            expected += plans[s][i].dest == rank;
        for (int t = 0; t < NTAGS; t++) {
            last_post[s][t] = -1;
            last_seq[s][t] = -1;
        }
    }
    check = malloc(MAXLEN);
    unsigned char *rbuf[NPOST + 1], *sbuf[WINDOW];
    MPI_Request rreq[NPOST], sreq[WINDOW];
    long rpost[NPOST];
    for (int i = 0; i <= NPOST; i++)
        rbuf[i] = malloc(MAXLEN);
    for (int i = 0; i < WINDOW; i++) {
        sbuf[i] = malloc(MAXLEN);
        sreq[i] = MPI_REQUEST_NULL;
    }
    for (int i = 0; i < NPOST; i++)
        rreq[i] = MPI_REQUEST_NULL;
    uint64_t rs = 99 + (uint64_t)rank;
    int next = 0;
    double t0 = MPI_Wtime();
    while (next < nmsg || received < expected) {
        /* Start sends while the window has room. */
        for (int w = 0; w < WINDOW && next < nmsg; w++) {
            int flag = 1;
            if (sreq[w] != MPI_REQUEST_NULL)
                MPI_Test(&sreq[w], &flag, MPI_STATUS_IGNORE);
            if (!flag)
                continue;
            msg_t *m = &plans[rank][next];
            payload(sbuf[w], m->len, rank, next);
            if (m->mode == 0)
                MPI_Isend(sbuf[w], m->len, MPI_BYTE, m->dest, m->tag, comm, &sreq[w]);
            else if (m->mode == 1)
                MPI_Issend(sbuf[w], m->len, MPI_BYTE, m->dest, m->tag, comm, &sreq[w]);
            else
                MPI_Send(sbuf[w], m->len, MPI_BYTE, m->dest, m->tag, comm);
            next++;
        }
        /* Keep wildcard receives posted; complete whichever are done. */
        long outstanding = 0;
        for (int i = 0; i < NPOST; i++)
            outstanding += rreq[i] != MPI_REQUEST_NULL;
        for (int i = 0; i < NPOST; i++) {
            if (rreq[i] == MPI_REQUEST_NULL) {
                if (received + outstanding >= expected)
                    continue;
                rpost[i] = post_seq++;
                MPI_Irecv(rbuf[i], MAXLEN, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm,
                          &rreq[i]);
                outstanding++;
                continue;
            }
            int flag;
            MPI_Status st;
            MPI_Test(&rreq[i], &flag, &st);
            if (flag) {
                int len;
                MPI_Get_count(&st, MPI_BYTE, &len);
                accept(rbuf[i], len, st.MPI_SOURCE, st.MPI_TAG, rpost[i]);
                outstanding--;
            }
        }
        /* Sometimes: probe, then receive exactly that source and tag. */
        if (rng_next(&rs) % 4 == 0) {
            int flag;
            MPI_Status st;
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &st);
            if (flag) {
                int len, plen;
                MPI_Get_count(&st, MPI_BYTE, &plen);
                long post = post_seq++;
                MPI_Recv(rbuf[NPOST], plen, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, comm, &st);
                MPI_Get_count(&st, MPI_BYTE, &len);
                CHECK(len == plen, "probed %d bytes, received %d", plen, len);
                accept(rbuf[NPOST], len, st.MPI_SOURCE, st.MPI_TAG, post);
            }
        }
        if (MPI_Wtime() - t0 > 200) {
            CHECK(0, "stuck: sent %d/%d, received %ld/%ld", next, nmsg, received, expected);
            break;
        }
    }
    MPI_Waitall(WINDOW, sreq, MPI_STATUSES_IGNORE);
    /* Wildcard receives left over (the probe path took the last messages)
     * must cancel cleanly, or they would steal later traffic. */
    for (int i = 0; i < NPOST; i++) {
        if (rreq[i] == MPI_REQUEST_NULL)
            continue;
        MPI_Status st;
        int flag;
        MPI_Cancel(&rreq[i]);
        MPI_Wait(&rreq[i], &st);
        MPI_Test_cancelled(&st, &flag);
        CHECK(flag, "a spare wildcard receive got a message from %d", st.MPI_SOURCE);
    }
    for (int s = 0; s < size; s++)
        for (int i = 0; i < nmsg; i++)
            CHECK(plans[s][i].dest != rank || got[s][i], "message (%d,%d) never arrived", s, i);
    if (rank == 0)
        printf("%d ranks x %d messages in %.2f s\n", size, nmsg, MPI_Wtime() - t0);
    for (int i = 0; i <= NPOST; i++)
        free(rbuf[i]);
    for (int i = 0; i < WINDOW; i++)
        free(sbuf[i]);
    for (int s = 0; s < size; s++) {
        free(plans[s]);
        free(got[s]);
    }
    free(plans);
    free(got);
    free(last_post);
    free(last_seq);
    free(check);
    MPI_Comm_free(&comm);
    return mtest_finish();
}
