/*
 * rma_ops.c — the communication calls of one-sided MPI: MPI_Put, MPI_Get,
 * MPI_Accumulate, MPI_Get_accumulate, MPI_Fetch_and_op,
 * MPI_Compare_and_swap, their request-based and large-count forms.
 *
 * One checked description of the operation (rma_op_t), then one of two
 * executions: in memory (the target's window mapped here, or CMA into a
 * node peer), done before the call returns, or through messages
 * (rma_msg.c), completed by the next synchronization.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rma.h"

/* The arguments of every form, before checking. */
typedef struct {
    int kind;                     /* RMA_PUT .. RMA_CAS */
    const void *obuf;
    MPI_Count ocount;
    MPI_Datatype odt;
    void *rbuf;
    MPI_Count rcount;
    MPI_Datatype rdt;
    const void *cbuf;
    int target;
    MPI_Aint disp;
    MPI_Count tcount;
    MPI_Datatype tdt;
    MPI_Op op;
    int fetch_op;                 /* MPI_Fetch_and_op / MPI_Compare_and_swap:
                                     one predefined element */
} rma_args_t;

#define RMA_NOTHING (-1)          /* MPI_PROC_NULL or no data: a no-op */
#define RMA_USE_MSG (-2)          /* CMA refused at run time: go by message */

/* The datatype of a handle that passed locus_check_dtype. */
static locus_dtype_t *dt_of(MPI_Datatype h)
{
    return locus_dt_of(h);
}

static int cas_allowed(locus_elem_t el)
{
    /* C and Fortran integers, logicals and bytes (MPI: not floating point). */
    return el == LOCUS_EL_BOOL || el == LOCUS_EL_BYTE || locus_op_valid(LOCUS_OP_BAND, el);
}

/* Types and the operation; fills o's kind-dependent parts. */
static int check_types(const rma_args_t *a, rma_op_t *o, int uses_origin)
{
    if ((uses_origin && locus_check_dtype(a->odt)) || locus_check_dtype(a->tdt) ||
        (a->kind != RMA_PUT && a->kind != RMA_ACC && locus_check_dtype(a->rdt)))
        return MPI_ERR_TYPE;
    o->odt = uses_origin ? dt_of(a->odt) : NULL;
    o->tdt = dt_of(a->tdt);
    o->rdt = a->kind != RMA_PUT && a->kind != RMA_ACC ? dt_of(a->rdt) : NULL;
    if (a->fetch_op && (!locus_mdt_of(a->tdt)->predefined ||
                        (a->kind == RMA_CAS && !cas_allowed(locus_dtype_elem(o->tdt)))))
        return MPI_ERR_TYPE;
    if (a->kind != RMA_ACC && a->kind != RMA_GACC)
        return MPI_SUCCESS;
    locus_op_t *op = locus_op_of(a->op);
    if (!op || op->id == LOCUS_OP_NULL || op->id >= LOCUS_OP_NPREDEF)
        return MPI_ERR_OP;   /* user operations are not allowed one-sided */
    o->op = op->id;
    return MPI_SUCCESS;
}

/* Accumulates: the one element kind of the data and the op on it. Only
 * asked when data moves: a transfer of 0 bytes has no elements to agree
 * on (a committed type of size 0, or count 0 of any type, as MPICH
 * accepts whatever the other sides' types are). */
static int check_elems(rma_op_t *o)
{
    if (o->kind != RMA_ACC && o->kind != RMA_GACC)
        return MPI_SUCCESS;
    locus_elem_t el = locus_dtype_elem(o->tdt);
    if (el == LOCUS_EL_MIXED || (o->odt && locus_dtype_elem(o->odt) != el) ||
        (o->rdt && locus_dtype_elem(o->rdt) != el))
        return MPI_ERR_TYPE;
    int run = rma_op_elem(o->op, el);
    if (run < 0)
        return MPI_ERR_OP;
    o->el = (locus_elem_t)run;
    return MPI_SUCCESS;
}

/* Bytes each side has; the operation moves what the sender side has (as a
 * send does), which must fit the receiving side. */
static int check_lengths(const rma_args_t *a, rma_op_t *o)
{
    size_t osz = 0, tsz = 0, rsz = 0;
    if ((o->odt && __builtin_mul_overflow(o->ocount, locus_dtype_size(o->odt), &osz)) ||
        __builtin_mul_overflow(o->tcount, locus_dtype_size(o->tdt), &tsz) ||
        (o->rdt && __builtin_mul_overflow(o->rcount, locus_dtype_size(o->rdt), &rsz)))
        return MPI_ERR_COUNT;   /* more bytes than memory has */
    switch (a->kind) {
    case RMA_PUT:
    case RMA_ACC:
        o->len = osz;
        return osz <= tsz ? MPI_SUCCESS : MPI_ERR_TRUNCATE;
    case RMA_GET:
        o->len = tsz;
        return tsz <= rsz ? MPI_SUCCESS : MPI_ERR_TRUNCATE;
    case RMA_GACC:
        o->len = o->odt ? osz : tsz;
        return o->len <= tsz && o->len <= rsz ? MPI_SUCCESS : MPI_ERR_TRUNCATE;
    default:
        o->len = tsz;
        return MPI_SUCCESS;
    }
}

/* The target is in an access epoch of the right kind. */
static int epoch_ok(locus_win_t *w, int target, int request_based)
{
    rma_peer_t *p = &w->peers[target];
    int passive = w->lock_all || p->lock;
    if (request_based)
        return passive;
    return passive || w->fence != RMA_FENCE_NONE || (w->in_start && p->in_start);
}

/* [at, at+len) of a dynamic window's target is attached memory: my own
 * list, or the table the node peer published (*overflow: it has too many
 * regions to publish, only a message can ask it). */
static int dyn_covers(locus_win_t *w, const rma_op_t *o, uint64_t at, uint64_t len,
                      int *overflow)
{
    if (o->target == w->rank)
        return rma_regions_cover(w->regions, w->nregions, at, len);
    return rma_slot_covers(w->peers[o->target].slot, at, len, overflow);
}

/* The target memory of an operation on a dynamic window is attached: its
 * whole span, or else (a type with holes) every piece it touches, as the
 * target checks requests that come by message. MPI error class. */
static int dyn_range(locus_win_t *w, const rma_op_t *o, int64_t lo, int64_t hi, int *use_msg)
{
    int overflow = 0;
    if (dyn_covers(w, o, o->addr + (uint64_t)lo, (uint64_t)(hi - lo), &overflow))
        return MPI_SUCCESS;
    if (overflow || locus_dtype_is_contig(o->tdt)) {
        *use_msg = overflow;
        return overflow ? MPI_SUCCESS : MPI_ERR_RMA_RANGE;
    }
    rma_run_t *runs = NULL;
    size_t nruns = 0;
    int err = rma_runs_of(o->tcount, o->tdt, &runs, &nruns);
    for (size_t i = 0; i < nruns && err == MPI_SUCCESS && !overflow; i++)
        if (!dyn_covers(w, o, o->addr + (uint64_t)runs[i].off, runs[i].len, &overflow))
            err = MPI_ERR_RMA_RANGE;
    free(runs);
    /* The peer attached past what its table holds meanwhile: it checks. */
    *use_msg = overflow;
    return overflow ? MPI_SUCCESS : err;
}

/* The target memory lies in the target's window. */
static int check_range(locus_win_t *w, rma_op_t *o, MPI_Aint disp, int *use_msg)
{
    rma_peer_t *p = &w->peers[o->target];
    int64_t lo, hi;
    rma_span_of(o->tcount, o->tdt, &lo, &hi);
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        o->addr = (uint64_t)disp;
        if (o->len == 0 || p->path == RMA_PATH_MSG)
            return MPI_SUCCESS;   /* by message: the target checks */
        return dyn_range(w, o, lo, hi, use_msg);
    }
    int64_t at;
    if (__builtin_mul_overflow((int64_t)disp, p->disp_unit, &at))
        return MPI_ERR_RMA_RANGE;
    o->addr = (uint64_t)at;
    if (o->len == 0)
        return MPI_SUCCESS;
    if (at + lo < 0 || at > INT64_MAX - hi || at + hi > (int64_t)p->size)
        return MPI_ERR_RMA_RANGE;
    return MPI_SUCCESS;
}

/* Checks the arguments in MPI's usual order and describes the operation. */
static int rma_prepare(locus_win_t *w, const rma_args_t *a, rma_op_t *o, int request_based,
                       int *use_msg)
{
    int uses_origin = a->kind != RMA_GET && !(a->kind == RMA_GACC && a->op == MPI_NO_OP);
    memset(o, 0, sizeof *o);
    o->kind = a->kind;
    if ((uses_origin && a->ocount < 0) || a->tcount < 0 ||
        (a->kind != RMA_PUT && a->kind != RMA_ACC && a->rcount < 0))
        return MPI_ERR_COUNT;
    /* Nothing happens for MPI_PROC_NULL, whatever the buffers say (mpi4py
     * passes no target datatype then). */
    if (a->target == MPI_PROC_NULL)
        return RMA_NOTHING;
    int err = check_types(a, o, uses_origin);
    if (err != MPI_SUCCESS)
        return err;
    if (a->target < 0 || a->target >= w->nranks)
        return MPI_ERR_RANK;
    if (a->disp < 0 && w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return MPI_ERR_DISP;
    if (!epoch_ok(w, a->target, request_based))
        return MPI_ERR_RMA_SYNC;
    o->obuf = a->obuf;
    o->ocount = (size_t)a->ocount;
    o->rbuf = a->rbuf;
    o->rcount = (size_t)a->rcount;
    o->cbuf = a->cbuf;
    o->target = a->target;
    o->tcount = (size_t)a->tcount;
    if ((err = check_lengths(a, o)) != MPI_SUCCESS)
        return err;
    if (o->len && (err = check_elems(o)) != MPI_SUCCESS)
        return err;
    if ((err = check_range(w, o, a->disp, use_msg)) != MPI_SUCCESS)
        return err;
    /* Nothing to move, nothing to complete: not even a message. */
    return o->len ? MPI_SUCCESS : RMA_NOTHING;
}

/* The packed bytes of count x dt in *out: the memory itself when
 * contiguous (NULL may be fine: no data, or MPI_BOTTOM), else a packed copy
 * in *tmp (to free). MPI_ERR_NO_MEM. */
static int stream_of(const void *buf, size_t count, locus_dtype_t *dt, size_t len,
                     const char **out, char **tmp)
{
    *tmp = NULL;
    if (len == 0 || locus_dtype_is_contig(dt)) {
        ptrdiff_t lb = 0, ext;
        if (len)
            locus_dtype_true_extent(dt, &lb, &ext);
        *out = (const char *)((uintptr_t)buf + (uintptr_t)lb);
        return MPI_SUCCESS;
    }
    if (!(*tmp = malloc(len)))
        return MPI_ERR_NO_MEM;
    locus_dtype_pack(buf, count, dt, 0, *tmp, len);
    *out = *tmp;
    return MPI_SUCCESS;
}

/* A CMA errno as an MPI error class (RMA_USE_MSG: try messages). */
static int cma_err(int rc, int target)
{
    if (rc == 0)
        return MPI_SUCCESS;
    if (rc == -EPERM || rc == -ENOSYS)
        return RMA_USE_MSG;
    if (rc == -EFAULT)
        return MPI_ERR_RMA_RANGE;
    snprintf(locus_mpi.detail, sizeof locus_mpi.detail,
             "process_vm_readv/writev to window rank %d: %s", target, strerror(-rc));
    return MPI_ERR_OTHER;
}

/* Read-modify-write under the target's accumulate mutex. */
static int near_atomic(rma_peer_t *p, const rma_op_t *o, const rma_target_t *t)
{
    char *otmp = NULL, *ctmp = NULL, *old = NULL, *cur = NULL;
    const char *in = NULL, *cmp = NULL;
    int err = o->odt ? stream_of(o->obuf, o->ocount, o->odt, o->len, &in, &otmp) : MPI_SUCCESS;
    if (err == MPI_SUCCESS && o->kind == RMA_CAS)
        err = stream_of(o->cbuf, 1, o->odt, o->len, &cmp, &ctmp);
    if (err == MPI_SUCCESS && (!(old = malloc(o->len + 1)) || !(cur = malloc(o->len + 1))))
        err = MPI_ERR_NO_MEM;
    if (err == MPI_SUCCESS)
        err = rma_acc_take(p->slot);
    if (err == MPI_SUCCESS) {
        int rc = rma_target_read(t, old);
        if (rc == 0 && o->kind == RMA_CAS) {
            if (memcmp(old, cmp, o->len) == 0)
                rc = rma_target_write(t, in);
        } else if (rc == 0 && o->op == LOCUS_OP_REPLACE) {
            rc = rma_target_write(t, in);
        } else if (rc == 0 && o->op != LOCUS_OP_NO_OP) {
            memcpy(cur, old, o->len);
            err = rma_apply(o->op, o->el, in, cur, o->len);
            if (err == MPI_SUCCESS)
                rc = rma_target_write(t, cur);
        }
        rma_acc_release(p->slot);
        if (err == MPI_SUCCESS)
            err = cma_err(rc, o->target);
        if (err == MPI_SUCCESS && o->rdt)
            locus_dtype_unpack(o->rbuf, o->rcount, o->rdt, 0, old, o->len);
    }
    free(old);
    free(cur);
    free(otmp);
    free(ctmp);
    return err;
}

/* Executes o in memory: the target's window mapped here, or CMA. */
static int near_exec(rma_peer_t *p, const rma_op_t *o)
{
    rma_target_t t = { .base = (char *)((uintptr_t)p->base + o->addr), .len = o->len };
    rma_run_t *runs = NULL, one;
    if (p->path == RMA_PATH_DIRECT) {
        t.count = o->tcount;
        t.dt = o->tdt;
    } else if (locus_dtype_is_contig(o->tdt)) {
        /* the common case: one piece, no layout to work out */
        int64_t lo, hi;
        rma_span_of(o->tcount, o->tdt, &lo, &hi);
        one = (rma_run_t){ lo, (uint64_t)(hi - lo) };
        t.runs = &one;
        t.nruns = 1;
        t.pid = p->pid;
    } else {
        int err = rma_runs_of(o->tcount, o->tdt, &runs, &t.nruns);
        if (err != MPI_SUCCESS)
            return err;
        t.runs = runs;
        t.pid = p->pid;
    }
    int err = MPI_SUCCESS;
    char *tmp = NULL;
    const char *s = NULL;
    if (o->len == 0) {
        err = MPI_SUCCESS;   /* nothing moves */
    } else if (o->kind == RMA_PUT) {
        err = stream_of(o->obuf, o->ocount, o->odt, o->len, &s, &tmp);
        if (err == MPI_SUCCESS)
            err = cma_err(rma_target_write(&t, s), o->target);
    } else if (o->kind == RMA_GET) {
        /* straight into a contiguous destination, else through a copy */
        int contig = locus_dtype_is_contig(o->rdt);
        err = contig ? stream_of(o->rbuf, o->rcount, o->rdt, o->len, &s, &tmp)
              : (tmp = malloc(o->len)) ? MPI_SUCCESS : MPI_ERR_NO_MEM;
        if (err == MPI_SUCCESS)
            err = cma_err(rma_target_read(&t, contig ? (char *)s : tmp), o->target);
        if (err == MPI_SUCCESS && !contig)
            locus_dtype_unpack(o->rbuf, o->rcount, o->rdt, 0, tmp, o->len);
    } else {
        err = near_atomic(p, o, &t);
    }
    free(tmp);
    free(runs);
    return err;
}

/* Checks and runs one operation of any form. */
static int rma_call(const rma_args_t *a, MPI_Win win, MPI_Request *request, int request_based,
                    const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_win_t *w = locus_win_of(win);
    if (!w)
        return locus_win_err(NULL, MPI_ERR_WIN, fn);
    if (request_based && !request)
        return locus_win_err(w, MPI_ERR_ARG, fn);
    if (rma_poke(w) != MPI_SUCCESS)
        return locus_win_err(w, MPI_ERR_OTHER, fn);
    rma_op_t o;
    int use_msg = 0;
    int err = rma_prepare(w, a, &o, request_based, &use_msg);
    if (err == RMA_NOTHING) {
        err = request_based ? rma_req_make(w, NULL, request) : MPI_SUCCESS;
        return err ? locus_win_err(w, err, fn) : MPI_SUCCESS;
    }
    if (err != MPI_SUCCESS)
        return locus_win_err(w, err, fn);
    if (w->fence == RMA_FENCE_OPEN)
        w->fence = RMA_FENCE_ACTIVE;
    rma_peer_t *p = &w->peers[o.target];
    rma_pend_t *pend = NULL;
    if (p->path != RMA_PATH_MSG && !use_msg) {
        err = near_exec(p, &o);
        if (err == RMA_USE_MSG)
            p->path = RMA_PATH_MSG;   /* the kernel refused CMA: messages from now on */
    }
    if (p->path == RMA_PATH_MSG || use_msg)
        err = rma_msg_issue(w, &o, request_based ? &pend : NULL);
    if (err == MPI_SUCCESS && request_based)
        err = rma_req_make(w, pend, request);
    return err ? locus_win_err(w, err, fn) : MPI_SUCCESS;
}

/* ---- the API ------------------------------------------------------------------ */

#define PUT_ARGS(k, ob, oc, od, t, d, tc, td, o)                                       \
    (rma_args_t){ .kind = k, .obuf = ob, .ocount = oc, .odt = od, .target = t, .disp = d, \
                  .tcount = tc, .tdt = td, .op = o }

/* Every form of each operation (generated entry points: with or without a
 * request, int counts and `_c`). */
int locus_put_impl(locus_how_t how, const void *ob, MPI_Count oc, MPI_Datatype od, int t,
                   MPI_Aint d, MPI_Count tc, MPI_Datatype td, MPI_Win win, MPI_Request *req,
                   const char *fn)
{
    rma_args_t a = PUT_ARGS(RMA_PUT, ob, oc, od, t, d, tc, td, MPI_OP_NULL);
    return rma_call(&a, win, req, how != LOCUS_HOW_BLOCKING, fn);
}

int locus_accumulate_impl(locus_how_t how, const void *ob, MPI_Count oc, MPI_Datatype od, int t,
                          MPI_Aint d, MPI_Count tc, MPI_Datatype td, MPI_Op op, MPI_Win win,
                          MPI_Request *req, const char *fn)
{
    rma_args_t a = PUT_ARGS(RMA_ACC, ob, oc, od, t, d, tc, td, op);
    return rma_call(&a, win, req, how != LOCUS_HOW_BLOCKING, fn);
}

#define GET_ARGS(rb, rc, rd, t, d, tc, td)                                              \
    (rma_args_t){ .kind = RMA_GET, .rbuf = rb, .rcount = rc, .rdt = rd, .target = t,      \
                  .disp = d, .tcount = tc, .tdt = td, .op = MPI_OP_NULL }

int locus_get_impl(locus_how_t how, void *ob, MPI_Count oc, MPI_Datatype od, int t, MPI_Aint d,
                   MPI_Count tc, MPI_Datatype td, MPI_Win win, MPI_Request *req, const char *fn)
{
    rma_args_t a = GET_ARGS(ob, oc, od, t, d, tc, td);
    return rma_call(&a, win, req, how != LOCUS_HOW_BLOCKING, fn);
}

#define GACC_ARGS(ob, oc, od, rb, rc, rd, t, d, tc, td, o)                              \
    (rma_args_t){ .kind = RMA_GACC, .obuf = ob, .ocount = oc, .odt = od, .rbuf = rb,      \
                  .rcount = rc, .rdt = rd, .target = t, .disp = d, .tcount = tc,          \
                  .tdt = td, .op = o }

int locus_get_accumulate_impl(locus_how_t how, const void *ob, MPI_Count oc, MPI_Datatype od,
                              void *rb, MPI_Count rc, MPI_Datatype rd, int t, MPI_Aint d,
                              MPI_Count tc, MPI_Datatype td, MPI_Op op, MPI_Win win,
                              MPI_Request *req, const char *fn)
{
    rma_args_t a = GACC_ARGS(ob, oc, od, rb, rc, rd, t, d, tc, td, op);
    return rma_call(&a, win, req, how != LOCUS_HOW_BLOCKING, fn);
}

LOCUS_PMPI_WEAK(Fetch_and_op)
int PMPI_Fetch_and_op(const void *ob, void *rb, MPI_Datatype dt, int t, MPI_Aint d, MPI_Op op,
                      MPI_Win win)
{
    LOCUS_ENTRY_CS();
    rma_args_t a = GACC_ARGS(ob, 1, dt, rb, 1, dt, t, d, 1, dt, op);
    a.fetch_op = 1;
    return rma_call(&a, win, NULL, 0, "MPI_Fetch_and_op");
}

LOCUS_PMPI_WEAK(Compare_and_swap)
int PMPI_Compare_and_swap(const void *ob, const void *cb, void *rb, MPI_Datatype dt, int t,
                          MPI_Aint d, MPI_Win win)
{
    LOCUS_ENTRY_CS();
    rma_args_t a = { .kind = RMA_CAS, .obuf = ob, .ocount = 1, .odt = dt, .rbuf = rb,
                     .rcount = 1, .rdt = dt, .cbuf = cb, .target = t, .disp = d, .tcount = 1,
                     .tdt = dt, .op = MPI_OP_NULL, .fetch_op = 1 };
    return rma_call(&a, win, NULL, 0, "MPI_Compare_and_swap");
}
