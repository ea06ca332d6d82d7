/*
 * file_req.c — the requests of nonblocking file access. An access runs to
 * completion inside the call that starts it (the data is in the file or
 * in the buffer when MPI_File_iwrite returns), and the request it hands
 * back is already complete: MPI_Wait and MPI_Test report its status and
 * error. MPI allows that; what it buys is that no progress thread and no
 * half-done access ever sits between the program's calls.
 */
#include <stdlib.h>

#include "io.h"

typedef struct {
    locus_xreq_t x;  /* first: the handle's object */
    MPI_Status st;
    int err;
} io_req_t;

static int req_test(locus_xreq_t *x)
{
    (void)x;
    return 1;
}

static int req_status(locus_xreq_t *x, MPI_Status *st)
{
    io_req_t *r = (io_req_t *)x;
    *st = r->st;
    return r->err;
}

static int req_cancel(locus_xreq_t *x)
{
    (void)x; /* already complete: nothing to cancel (MPI allows it) */
    return MPI_SUCCESS;
}

static int req_release(locus_xreq_t *x)
{
    return locus_xreq_free(x);
}

static const locus_xreq_ops_t io_req_ops = {
    .persistent = 0, .start = NULL, .test = req_test, .status = req_status,
    .cancel = req_cancel, .release = req_release,
};

int io_req_done(const MPI_Status *st, int err, MPI_Request *request)
{
    io_req_t *r = calloc(1, sizeof *r);
    if (!r)
        return MPI_ERR_NO_MEM;
    r->x.ops = &io_req_ops;
    r->x.active = 1;
    r->st = *st;
    r->st.MPI_ERROR = err;
    r->err = err;
    /* bound to MPI_COMM_SELF: the request outlives the file if need be */
    int e = locus_xreq_bind(&r->x, &locus_comm_self, request);
    if (e != MPI_SUCCESS)
        free(r);
    return e;
}
