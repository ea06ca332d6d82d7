/*
 * Buffered sends: MPI_Bsend copies (packs) the message into the attached
 * buffer and sends from there, so it returns at once. Blocks are handed
 * out first-fit and reclaimed when their send completes.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

struct locus_bblk {
    locus_bblk_t *next;         /* by offset */
    size_t off, size;
    locus_req_t *req;
};

#define BALIGN 16

static void reclaim(void)
{
    locus_bblk_t **pp = &locus_mpi.bblks;
    while (*pp) {
        locus_bblk_t *b = *pp;
        if (b->req->done) {
            *pp = b->next;
            locus_core_req_put(locus_core(), b->req);
            free(b);
        } else {
            pp = &b->next;
        }
    }
}

/* First-fit block of n bytes; NULL when the buffer has no room. */
static locus_bblk_t *block_alloc(size_t n)
{
    n = (n + BALIGN - 1) & ~(size_t)(BALIGN - 1);
    reclaim();
    size_t start = (size_t)(-(uintptr_t)locus_mpi.bbuf & (BALIGN - 1));
    locus_bblk_t **pp = &locus_mpi.bblks;
    for (;;) {
        size_t end = *pp ? (*pp)->off : locus_mpi.bsize;
        if (end >= start && end - start >= n) {
            locus_bblk_t *b = malloc(sizeof *b);
            if (!b)
                return NULL;
            b->off = start;
            b->size = n;
            b->next = *pp;
            *pp = b;
            return b;
        }
        if (!*pp)
            return NULL;
        start = (*pp)->off + (*pp)->size;
        pp = &(*pp)->next;
    }
}

/* Copies the message into the attached buffer and starts its send. */
static int bsend_start(const void *buf, int count, locus_dtype_t *dt, int dest, int tag,
                       locus_comm_t *comm)
{
    size_t len = (size_t)count * locus_dtype_size(dt);
    locus_req_t *sr = locus_core_req_get(locus_core());
    if (!sr)
        return MPI_ERR_NO_MEM;
    locus_bblk_t *b = block_alloc(len);
    if (!b) {
        locus_core_progress(locus_core()); /* maybe an older one just finished */
        b = block_alloc(len);
    }
    if (!b) {
        locus_core_req_put(locus_core(), sr);
        return MPI_ERR_BUFFER;
    }
    b->req = sr;
    char *copy = locus_mpi.bbuf + b->off;
    if (len)
        locus_dtype_pack(buf, (size_t)count, dt, 0, copy, len);
    int err = locus_p2p_isend(copy, len, locus_dtype_basic(LOCUS_EL_BYTE), dest, tag, comm,
                              comm->ctx_p2p, 0, b->req);
    if (err != MPI_SUCCESS)
        b->req->done = 1;   /* reclaimed with its block */
    return err;
}

static int bsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                 MPI_Comm comm_h, MPI_Request *request, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *comm = locus_comm_of(comm_h);
    int err = locus_check_p2p(buf, count, dt, dest, tag, comm, 0);
    if (err != MPI_SUCCESS)
        return locus_mpi_err(comm, err, fn);
    if (dest != MPI_PROC_NULL) {
        err = bsend_start(buf, count, locus_dt_of(dt), dest, tag, comm);
        if (err != MPI_SUCCESS)
            return locus_mpi_err(comm, err, fn);
    }
    if (request) {
        /* The data was copied: the user's request is complete at once. */
        locus_req_t *r = locus_core_req_get(locus_core());
        if (!r)
            return locus_mpi_err(comm, MPI_ERR_NO_MEM, fn);
        r->kind = LOCUS_REQ_SEND;
        r->comm = comm;
        locus_comm_retain(comm);
        r->done = 1;
        *request = locus_req_handle(r);
    }
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Bsend)
int PMPI_Bsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return bsend(buf, count, dt, dest, tag, comm, NULL, "MPI_Bsend");
}

LOCUS_PMPI_WEAK(Ibsend)
int PMPI_Ibsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                MPI_Request *request)
{
    if (!request)
        return locus_mpi_err(locus_comm_of(comm), MPI_ERR_ARG, "MPI_Ibsend");
    return bsend(buf, count, dt, dest, tag, comm, request, "MPI_Ibsend");
}

LOCUS_PMPI_WEAK(Buffer_attach)
int PMPI_Buffer_attach(void *buffer, int size)
{
    LOCUS_CHECK_INIT("MPI_Buffer_attach");
    if (size < 0 || (!buffer && size > 0))
        return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_Buffer_attach");
    if (locus_mpi.bbuf)
        return locus_mpi_err(NULL, MPI_ERR_BUFFER, "MPI_Buffer_attach");
    locus_mpi.bbuf = buffer;
    locus_mpi.bsize = (size_t)size;
    return MPI_SUCCESS;
}

void locus_bsend_drain(void)
{
    locus_core_t *c = locus_core();
    reclaim();
    while (locus_mpi.bblks && !c->fatal) {
        if (locus_core_progress(c) == 0)
            locus_core_idle(c);
        reclaim();
    }
}

LOCUS_PMPI_WEAK(Buffer_detach)
int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    LOCUS_CHECK_INIT("MPI_Buffer_detach");
    if (!buffer_addr || !size)
        return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_Buffer_detach");
    locus_bsend_drain(); /* detach blocks until the buffered sends are out */
    *(void **)buffer_addr = locus_mpi.bbuf;
    *size = (int)locus_mpi.bsize;
    locus_mpi.bbuf = NULL;
    locus_mpi.bsize = 0;
    return MPI_SUCCESS;
}
