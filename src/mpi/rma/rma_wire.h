/*
 * rma_wire.h — the message path of one-sided communication: its wire
 * format and what its two sides share (rma_msg.c: origins; rma_svc.c: the
 * target's service).
 *
 * Requests travel on the window's own point-to-point context with tag
 * RMA_TAG_REQ: a header, the target layout as runs, then the origin's
 * packed data. Replies (data, lock grants, acknowledgements) go back with
 * a tag the origin chose, to a receive it posted beforehand.
 */
#ifndef LOCUS_RMA_WIRE_H
#define LOCUS_RMA_WIRE_H

#include "rma.h"

#define RMA_TAG_REQ 0
#define RMA_TAG_FIRST 1
#define RMA_TAG_LAST 0x3fffffff

enum { MSG_PUT = 1, MSG_GET, MSG_ACC, MSG_GACC, MSG_CAS, MSG_LOCK, MSG_UNLOCK, MSG_FLUSH,
       MSG_POST, MSG_COMPLETE, MSG_KINDS };

typedef struct {
    uint8_t kind;             /* MSG_* */
    uint8_t lock;             /* LOCK/UNLOCK: 1 shared, 2 exclusive */
    uint8_t elem;             /* accumulates: the element kind */
    uint8_t op;               /* accumulates: the LOCUS_OP_* id */
    int32_t reply_tag;        /* 0: no reply wanted */
    uint64_t addr;            /* offset in the window (dynamic: address) */
    uint64_t nruns;           /* rma_run_t that follow */
    uint64_t len;             /* target bytes touched */
    uint64_t dlen;            /* origin bytes after the runs (CAS: value, compare) */
} rma_msg_t;

typedef struct {
    int32_t err;              /* MPI error class at the target */
    int32_t pad;
} rma_reply_t;

/* A reply the origin waits for. */
struct rma_pend {
    rma_pend_t *next;
    locus_req_t *rreq;        /* the posted receive */
    char *buf;                /* rma_reply_t + data */
    size_t cap;
    int target;
    void *res;                /* where the data goes: rcount x rdt (held) */
    size_t rcount;
    locus_dtype_t *rdt;
    size_t rlen;
    int done, err;
    int for_req;              /* a request-based op's request frees it */
};

/* The wire's element type. */
static inline locus_dtype_t *rma_bytes(void)
{
    return locus_dtype_basic(LOCUS_EL_BYTE);
}

/* Sends len bytes of buf (malloc'ed: this takes it) to window rank dest
 * with tag. MPI error class. */
int rma_send_owned(locus_win_t *w, int dest, int tag, char *buf, size_t len);
/* Takes the replies that have arrived: data to its destination, errors
 * noted (w->err_deferred, or the pending entry of a request-based op). */
void rma_pend_sweep(locus_win_t *w);
/* Gives up the replies still awaited (a window freed with operations
 * outstanding: an erroneous program); a request-based op's request then
 * completes with MPI_ERR_RMA_SYNC. */
void rma_pend_drop_all(locus_win_t *w);

#endif
