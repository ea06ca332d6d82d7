/*
 * Buffered sends: a buffered send packs the message into an attached
 * buffer and sends from there, so it returns at once. A buffer is
 * attached to the process (MPI_Buffer_attach) or, since MPI-4.1, to one
 * communicator (MPI_Comm_attach_buffer), which its sends use first; with
 * MPI_BUFFER_AUTOMATIC the library allocates each message's copy itself.
 * Blocks of a user's buffer are handed out first-fit and reclaimed when
 * their send completes; flushing waits until a buffer's sends are out.
 *
 * A communicator's buffer hangs on it as an attribute under a keyval of
 * this file, so MPI_Comm_free flushes and drops it (the delete callback)
 * and duplicates do not inherit it (no copy callback).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pt2pt.h"

typedef struct bblk bblk_t;
struct bblk {
    bblk_t *next;               /* by offset in a user's buffer */
    size_t off, size;
    void *heap;                 /* automatic buffering: the copy's own memory */
    locus_req_t *req;           /* its send */
};

typedef struct bpool bpool_t;
struct bpool {
    char *buf;                  /* the user's buffer, NULL when none */
    size_t size;
    int automatic;              /* MPI_BUFFER_AUTOMATIC attached */
    bblk_t *blks;               /* blocks in use */
    int refs;                   /* its owner + pending MPI_*_iflush_buffer requests */
    int listed;                 /* in the state's list (flushed at MPI_Finalize) */
    bpool_t *next;
};

struct locus_bsend {
    bpool_t *process;           /* MPI_Buffer_attach's */
    bpool_t *pools;             /* every live pool, for MPI_Finalize */
    int keyval;                 /* communicator buffers' attribute, 0 before first use */
};

#define BALIGN 16

/* ---- pools -------------------------------------------------------------------- */

static locus_bsend_t *state(void)
{
    if (!locus_mpi.bsend)
        locus_mpi.bsend = calloc(1, sizeof *locus_mpi.bsend);
    return locus_mpi.bsend;
}

static bpool_t *pool_new(void)
{
    locus_bsend_t *s = state();
    bpool_t *p = s ? calloc(1, sizeof *p) : NULL;
    if (p) {
        p->refs = 1;
        p->listed = 1;
        p->next = s->pools;
        s->pools = p;
    }
    return p;
}

static void pool_unref(bpool_t *p)
{
    if (--p->refs > 0)
        return;
    locus_bsend_t *s = locus_mpi.bsend;
    if (p->listed && s)
        for (bpool_t **pp = &s->pools; *pp; pp = &(*pp)->next)
            if (*pp == p) {
                *pp = p->next;
                break;
            }
    free(p);
}

static int pool_attached(const bpool_t *p)
{
    return p && (p->buf || p->automatic);
}

/* Gives back the blocks whose sends completed. */
static void pool_reclaim(bpool_t *p)
{
    bblk_t **pp = &p->blks;
    while (*pp) {
        bblk_t *b = *pp;
        if (b->req->done) {
            *pp = b->next;
            locus_core_req_put(locus_core(), b->req);
            free(b->heap);
            free(b);
        } else {
            pp = &b->next;
        }
    }
}

/* Progresses until every send from p is out (or the job cannot
 * communicate any more: MPI_ERR_OTHER). */
static int pool_flush(bpool_t *p)
{
    locus_core_t *c = locus_core();
    pool_reclaim(p);
    while (p->blks) {
        if (c->fatal)
            return MPI_ERR_OTHER;
        int n = locus_core_progress(c);
        if (n == 0)
            locus_core_idle(c);
        pool_reclaim(p);
    }
    return MPI_SUCCESS;
}

/* A block of n bytes: first fit in a user's buffer, its own memory when
 * automatic; NULL when there is no room. */
static bblk_t *block_alloc(bpool_t *p, size_t n)
{
    bblk_t *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    if (p->automatic) {
        if (!(b->heap = malloc(n ? n : 1))) {
            free(b);
            return NULL;
        }
        b->size = n;
        b->next = p->blks;
        p->blks = b;
        return b;
    }
    n = (n + BALIGN - 1) & ~(size_t)(BALIGN - 1);
    size_t start = (size_t)(-(uintptr_t)p->buf & (BALIGN - 1));
    for (bblk_t **pp = &p->blks;; pp = &(*pp)->next) {
        size_t end = *pp ? (*pp)->off : p->size;
        if (end >= start && end - start >= n) {
            b->off = start;
            b->size = n;
            b->next = *pp;
            *pp = b;
            return b;
        }
        if (!*pp)
            break;
        start = (*pp)->off + (*pp)->size;
    }
    free(b);
    return NULL;
}

static void *block_mem(const bpool_t *p, const bblk_t *b)
{
    return b->heap ? b->heap : p->buf + b->off;
}

/* ---- communicator buffers: an attribute ------------------------------------------- */

static int comm_pool_delete(void *comm, int keyval, void *val, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    bpool_t *p = val;
    pool_flush(p); /* the user may reuse the memory once the communicator is gone */
    p->buf = NULL;
    p->automatic = 0;
    pool_unref(p);
    return MPI_SUCCESS;
}

static bpool_t *comm_pool(locus_comm_t *comm)
{
    locus_bsend_t *s = locus_mpi.bsend;
    void *val = NULL;
    int flag = 0;
    if (!s || !s->keyval ||
        locus_attr_get(comm->attrs, ATTR_COMM, s->keyval, &val, &flag) != MPI_SUCCESS || !flag)
        return NULL;
    return val;
}

/* The pool a buffered send on comm uses: the communicator's, else its
 * session's, else the process's (NULL when none has a buffer attached). */
static bpool_t *send_pool(locus_comm_t *comm)
{
    bpool_t *p = comm_pool(comm);
    if (pool_attached(p))
        return p;
    if (comm->bsend_slot && pool_attached(*comm->bsend_slot))
        return *comm->bsend_slot;
    p = locus_mpi.bsend ? locus_mpi.bsend->process : NULL;
    return pool_attached(p) ? p : NULL;
}

int locus_bsend_start(const void *buf, size_t count, locus_dtype_t *dt, int dest, int tag,
                      locus_comm_t *comm)
{
    bpool_t *p = send_pool(comm);
    if (!p)
        return MPI_ERR_BUFFER;
    size_t len = count * locus_dtype_size(dt);
    locus_req_t *sr = locus_core_req_get(locus_core());
    if (!sr)
        return MPI_ERR_NO_MEM;
    pool_reclaim(p);
    bblk_t *b = block_alloc(p, len);
    if (!b && !p->automatic) {
        locus_core_progress(locus_core()); /* maybe an older one just finished */
        pool_reclaim(p);
        b = block_alloc(p, len);
    }
    if (!b) {
        locus_core_req_put(locus_core(), sr);
        return p->automatic ? MPI_ERR_NO_MEM : MPI_ERR_BUFFER;
    }
    b->req = sr;
    void *copy = block_mem(p, b);
    if (len)
        locus_dtype_pack(buf, count, dt, 0, copy, len);
    int err = locus_p2p_isend(copy, len, locus_dtype_basic(LOCUS_EL_BYTE), dest, tag, comm,
                              comm->ctx_p2p, 0, sr);
    if (err != MPI_SUCCESS)
        sr->done = 1; /* reclaimed with its block */
    return err;
}

void locus_bsend_drain(void)
{
    locus_bsend_t *s = locus_mpi.bsend;
    if (!s)
        return;
    for (bpool_t *p = s->pools; p; p = p->next)
        pool_flush(p);
    /* Communicator buffers still attached are dropped with their
     * communicators (MPI_COMM_WORLD's later in MPI_Finalize); the state
     * goes now. */
    while (s->pools) {
        bpool_t *p = s->pools;
        s->pools = p->next;
        p->listed = 0;
    }
    if (s->process)
        pool_unref(s->process);
    free(s);
    locus_mpi.bsend = NULL;
}

/* ---- attach, detach, flush ------------------------------------------------------ */

/* Attaches (buffer, size) to p. */
static int pool_attach(bpool_t *p, void *buffer, MPI_Count size)
{
    if (pool_attached(p))
        return MPI_ERR_BUFFER;
    if (buffer == MPI_BUFFER_AUTOMATIC) {
        p->automatic = 1;
        return MPI_SUCCESS;
    }
    if (size < 0 || (!buffer && size > 0) || (uint64_t)size > PTRDIFF_MAX)
        return MPI_ERR_ARG;
    p->buf = buffer;
    p->size = (size_t)size;
    return MPI_SUCCESS;
}

/* Flushes p and detaches its buffer into (*addr, *size); no buffer
 * attached gives NULL and 0. */
static int pool_detach(bpool_t *p, void *addr, MPI_Count *size)
{
    void *buf = NULL;
    *size = 0;
    if (pool_attached(p)) {
        int err = pool_flush(p);
        if (err != MPI_SUCCESS)
            return err;
        buf = p->automatic ? MPI_BUFFER_AUTOMATIC : p->buf;
        *size = p->automatic ? 0 : (MPI_Count)p->size;
        p->buf = NULL;
        p->size = 0;
        p->automatic = 0;
    }
    *(void **)addr = buf;
    return MPI_SUCCESS;
}

static bpool_t *process_pool(void)
{
    locus_bsend_t *s = state();
    if (s && !s->process)
        s->process = pool_new();
    return s ? s->process : NULL;
}

/* The pool of comm, made (and hung on comm) when make is set. */
static bpool_t *comm_pool_get(locus_comm_t *comm, int make)
{
    bpool_t *p = comm_pool(comm);
    if (p || !make)
        return p;
    locus_bsend_t *s = state();
    if (!s || (!s->keyval && locus_keyval_create(ATTR_COMM, NULL, comm_pool_delete, NULL,
                                                 &s->keyval) != MPI_SUCCESS))
        return NULL;
    if (!(p = pool_new()))
        return NULL;
    if (locus_attr_set(&comm->attrs, ATTR_COMM, locus_comm_handle(comm), s->keyval, p) !=
        MPI_SUCCESS) {
        pool_unref(p);
        return NULL;
    }
    return p;
}

/* The functions below serve the process's buffer (MPI_Buffer_*) when
 * process is set, else comm_h's (MPI_Comm_*_buffer). */

static int attach(int process, MPI_Comm comm_h, void *buffer, MPI_Count size, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *comm = process ? NULL : locus_comm_of(comm_h);
    int err = process ? MPI_SUCCESS : locus_check_comm(comm);
    bpool_t *p = NULL;
    if (err == MPI_SUCCESS && !(p = comm ? comm_pool_get(comm, 1) : process_pool()))
        err = MPI_ERR_NO_MEM;
    if (err == MPI_SUCCESS)
        err = pool_attach(p, buffer, size);
    return err ? locus_mpi_err(comm, err, fn) : MPI_SUCCESS;
}

static int detach(int process, MPI_Comm comm_h, void *addr, MPI_Count *size, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *comm = process ? NULL : locus_comm_of(comm_h);
    int err = process ? MPI_SUCCESS : locus_check_comm(comm);
    if (err == MPI_SUCCESS && (!addr || !size))
        err = MPI_ERR_ARG;
    if (err == MPI_SUCCESS) {
        bpool_t *p = comm ? comm_pool_get(comm, 0)
                          : locus_mpi.bsend ? locus_mpi.bsend->process : NULL;
        MPI_Count n = 0;
        if (p)
            err = pool_detach(p, addr, &n);
        else
            *(void **)addr = NULL;
        *size = n;
    }
    return err ? locus_mpi_err(comm, err, fn) : MPI_SUCCESS;
}

/* The int forms of detach: a buffer larger than INT_MAX (attached through
 * a _c call) is still detached, and its size reported as MPI_ERR_COUNT. */
static int detach_int(int process, MPI_Comm comm_h, void *addr, int *size, const char *fn)
{
    MPI_Count n = 0;
    if (!size)
        return detach(process, comm_h, addr, NULL, fn);
    int err = detach(process, comm_h, addr, &n, fn);
    if (err != MPI_SUCCESS)
        return err;
    *size = n > INT_MAX ? INT_MAX : (int)n;
    return n > INT_MAX ? locus_mpi_err(process ? NULL : locus_comm_of(comm_h), MPI_ERR_COUNT, fn)
                       : MPI_SUCCESS;
}

/* MPI_*_iflush_buffer: a polled request done when its pool (NULL: none
 * attached) has no send left. */
static int iflush_poll(void *state)
{
    bpool_t *p = state;
    if (!p)
        return 1;
    pool_reclaim(p);
    return p->blks == NULL;
}

static void iflush_free(void *state)
{
    if (state)
        pool_unref(state);
}

/* Flushes p (NULL: nothing attached) now, or, with a request, makes the
 * request that completes once it is flushed (comm: its owner, or NULL). */
static int pool_flush_or_request(bpool_t *p, locus_comm_t *comm, MPI_Request *request)
{
    if (!request)
        return p ? pool_flush(p) : MPI_SUCCESS;
    /* The request keeps the pool: its buffer may be detached (or its
     * communicator freed) before the request is waited for. */
    if (p)
        p->refs++;
    locus_req_t *r = locus_req_gen_new(comm ? comm : &locus_comm_world, iflush_poll, p,
                                       iflush_free);
    if (!r) {
        iflush_free(p);
        return MPI_ERR_NO_MEM;
    }
    *request = locus_req_handle(r);
    return MPI_SUCCESS;
}

static int flush(int process, MPI_Comm comm_h, MPI_Request *request, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *comm = process ? NULL : locus_comm_of(comm_h);
    int err = process ? MPI_SUCCESS : locus_check_comm(comm);
    if (err != MPI_SUCCESS)
        return locus_mpi_err(comm, err, fn);
    bpool_t *p = comm ? comm_pool_get(comm, 0)
                      : locus_mpi.bsend ? locus_mpi.bsend->process : NULL;
    err = pool_flush_or_request(p, comm, request);
    return err ? locus_mpi_err(comm, err, fn) : MPI_SUCCESS;
}

/* ---- a session's buffer (its slot: the session's, session/) ------------------------ */

int locus_bsend_session_attach(void **slot, void *buffer, MPI_Count size)
{
    if (!*slot && !(*slot = pool_new()))
        return MPI_ERR_NO_MEM;
    return pool_attach(*slot, buffer, size);
}

int locus_bsend_session_detach(void **slot, void *addr, MPI_Count *size)
{
    if (*slot)
        return pool_detach(*slot, addr, size);
    *(void **)addr = NULL;
    *size = 0;
    return MPI_SUCCESS;
}

int locus_bsend_session_flush(void **slot, MPI_Request *request)
{
    return pool_flush_or_request(*slot, NULL, request);
}

void locus_bsend_session_release(void **slot)
{
    bpool_t *p = *slot;
    if (!p)
        return;
    pool_flush(p); /* the user may reuse the memory once the session is gone */
    p->buf = NULL;
    p->automatic = 0;
    pool_unref(p);
    *slot = NULL;
}

/* ---- the entry points (attach's are generated) ------------------------------------ */

int locus_buffer_attach_impl(void *buffer, MPI_Count size, const char *fn)
{
    return attach(1, MPI_COMM_NULL, buffer, size, fn);
}

LOCUS_PMPI_WEAK(Buffer_detach)
int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    LOCUS_ENTRY_CS();
    return detach_int(1, MPI_COMM_NULL, buffer_addr, size, "MPI_Buffer_detach");
}

LOCUS_PMPI_WEAK(Buffer_detach_c)
int PMPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
    LOCUS_ENTRY_CS();
    return detach(1, MPI_COMM_NULL, buffer_addr, size, "MPI_Buffer_detach_c");
}

LOCUS_PMPI_WEAK(Buffer_flush)
int PMPI_Buffer_flush(void)
{
    LOCUS_ENTRY_CS();
    return flush(1, MPI_COMM_NULL, NULL, "MPI_Buffer_flush");
}

LOCUS_PMPI_WEAK(Buffer_iflush)
int PMPI_Buffer_iflush(MPI_Request *request)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Buffer_iflush");
    if (!request)
        return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_Buffer_iflush");
    return flush(1, MPI_COMM_NULL, request, "MPI_Buffer_iflush");
}

int locus_comm_attach_buffer_impl(MPI_Comm comm, void *buffer, MPI_Count size, const char *fn)
{
    return attach(0, comm, buffer, size, fn);
}

LOCUS_PMPI_WEAK(Comm_detach_buffer)
int PMPI_Comm_detach_buffer(MPI_Comm comm, void *buffer_addr, int *size)
{
    LOCUS_ENTRY_CS();
    return detach_int(0, comm, buffer_addr, size, "MPI_Comm_detach_buffer");
}

LOCUS_PMPI_WEAK(Comm_detach_buffer_c)
int PMPI_Comm_detach_buffer_c(MPI_Comm comm, void *buffer_addr, MPI_Count *size)
{
    LOCUS_ENTRY_CS();
    return detach(0, comm, buffer_addr, size, "MPI_Comm_detach_buffer_c");
}

LOCUS_PMPI_WEAK(Comm_flush_buffer)
int PMPI_Comm_flush_buffer(MPI_Comm comm)
{
    LOCUS_ENTRY_CS();
    return flush(0, comm, NULL, "MPI_Comm_flush_buffer");
}

LOCUS_PMPI_WEAK(Comm_iflush_buffer)
int PMPI_Comm_iflush_buffer(MPI_Comm comm, MPI_Request *request)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Comm_iflush_buffer");
    if (!request)
        return locus_mpi_err(locus_comm_of(comm), MPI_ERR_ARG, "MPI_Comm_iflush_buffer");
    return flush(0, comm, request, "MPI_Comm_iflush_buffer");
}
