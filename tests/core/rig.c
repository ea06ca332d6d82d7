/* rig.c — the unit-test bench of rig.h. */
#include "rig.h"

#include <stdlib.h>
#include <string.h>

int rig_errors;

void rig_open(rig_t *t, int size, size_t eager_max)
{
    char err[256];
    memset(t, 0, sizeof *t);
    if (locus_core_init(&t->c, 0, size, 1, err, sizeof err) != 0) {
        fprintf(stderr, "locus_core_init: %s\n", err);
        exit(1);
    }
    t->c.settle_ms = 20; /* the mock delivers at once: nothing to wait for */
    if (mock_attach(&t->m, &t->c, size, eager_max) != 0) {
        fprintf(stderr, "locus_core_add_tp failed\n");
        exit(1);
    }
    /* One request taken and given back makes the first slab: the free
     * list's length from then on is the baseline. */
    rig_put(t, locus_core_req_get(&t->c));
    t->free_base = rig_free_reqs(t);
}

void rig_close(rig_t *t)
{
    locus_core_finalize(&t->c);
    CHECK(t->m.finalized, "the core did not finalize its transport");
    CHECK(t->m.violations == 0, "%d transport contract breaches", t->m.violations);
}

int rig_drain(rig_t *t)
{
    int n = 0;
    for (int i = 0; i < 100; i++)
        if ((n = locus_core_progress(&t->c)) <= 0)
            break;
    return n;
}

void rig_inject(rig_t *t, int src, uint32_t ctx, int tag, uint32_t flags, uint64_t sreq,
                const void *data, size_t len)
{
    locus_hdr_t h = { .ctx = ctx, .src = src, .tag = tag, .flags = flags, .sreq = sreq };
    mock_inject(&t->m, src, &h, flags ? sizeof h : LOCUS_HDR_SHORT, data, len);
}

void rig_inject_ack(rig_t *t, int src, uint64_t sreq)
{
    locus_hdr_t h = { .flags = LOCUS_HDR_ACK, .sreq = sreq };
    mock_inject(&t->m, src, &h, sizeof h, NULL, 0);
}

locus_req_t *rig_recv(rig_t *t, uint32_t ctx, int rank, int tag, void *buf, size_t len)
{
    locus_req_t *r = locus_core_req_get(&t->c);
    if (!r)
        abort();
    r->ctx = ctx;
    r->rank = rank;
    r->tag = tag;
    r->rbuf = buf;
    r->len = len;
    locus_core_irecv(&t->c, r);
    return r;
}

locus_req_t *rig_send(rig_t *t, int world, uint32_t ctx, int tag, uint32_t flags,
                      const void *buf, size_t len)
{
    locus_req_t *r = locus_core_req_get(&t->c);
    if (!r)
        abort();
    r->kind = LOCUS_REQ_SEND;
    r->world = world;
    r->hdr = (locus_hdr_t){ .ctx = ctx, .src = 0, .tag = tag, .flags = flags };
    r->hdrlen = flags ? sizeof r->hdr : LOCUS_HDR_SHORT;
    r->sbuf = buf;
    r->len = len;
    if (locus_core_isend(&t->c, r) != 0)
        abort();
    return r;
}

void rig_put(rig_t *t, locus_req_t *r)
{
    locus_core_req_put(&t->c, r);
}

long rig_free_reqs(rig_t *t)
{
    long n = 0, cap = 1L << 20;
    for (locus_req_t *r = t->c.req_free; r; r = r->next)
        if (++n > cap)
            return -1;
    return n;
}

void rig_fill(void *buf, size_t len, int seed)
{
    unsigned char *p = buf;
    for (size_t i = 0; i < len; i++)
        p[i] = (unsigned char)(seed * 31 + (int)i * 7 + 1);
}

int rig_is(const void *buf, size_t len, int seed)
{
    const unsigned char *p = buf;
    for (size_t i = 0; i < len; i++)
        if (p[i] != (unsigned char)(seed * 31 + (int)i * 7 + 1))
            return 0;
    return 1;
}

int main(int argc, char **argv)
{
    const char *group = argc > 1 ? argv[1] : "";
    if (strcmp(group, "match") == 0) {
        test_match();
    } else if (strcmp(group, "send") == 0) {
        test_send();
    } else if (strcmp(group, "life") == 0) {
        test_life();
    } else {
        fprintf(stderr, "usage: %s match|send|life\n", argv[0]);
        return 2;
    }
    if (rig_errors) {
        printf(" Found %d errors\n", rig_errors);
        return 1;
    }
    printf(" No Errors\n");
    return 0;
}
