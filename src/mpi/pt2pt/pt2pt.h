/*
 * p2p_api.h — what the point-to-point API files (p2p*.c, bsend.c, part.c)
 * share: the checks of a large count, starting one send or receive as a
 * core request, and buffered sends.
 *
 * Every call exists with an int count and as its MPI-4 `_c` form with an
 * MPI_Count; both forms call one internal function that takes the
 * MPI_Count, so there is one implementation per behaviour.
 */
#ifndef LOCUS_P2P_API_H
#define LOCUS_P2P_API_H

#include <limits.h>

#include "mpi_impl.h"

/* Send modes. */
enum { P2P_STANDARD, P2P_SYNC, P2P_READY, P2P_BUFFERED };

/* A count of the large-count interface as the int-count checks see it
 * (they only look at its sign and whether it is zero). */
static inline int p2p_count_arg(MPI_Count n)
{
    return n < 0 ? -1 : n > INT_MAX ? INT_MAX : (int)n;
}

/* MPI_ERR_COUNT when count elements of dt (a valid type) hold more bytes
 * than a buffer can (PTRDIFF_MAX); MPI_SUCCESS otherwise. */
int p2p_check_size(MPI_Count count, MPI_Datatype dt);

/* locus_check_p2p for a count of any size (then p2p_check_size). */
int p2p_check(const void *buf, MPI_Count count, MPI_Datatype dt, int peer, int tag,
              const locus_comm_t *c, int is_recv);

/*
 * Starts a send of count x dt to dest in mode (P2P_*) on comm's user
 * context: *out is the running core request, or NULL when nothing is left
 * to wait for (dest is MPI_PROC_NULL, or the message was buffered).
 * Arguments are checked. MPI error class.
 */
int p2p_send_start(const void *buf, size_t count, locus_dtype_t *dt, int dest, int tag,
                   locus_comm_t *comm, int mode, locus_req_t **out);
/* Starts a receive likewise (*out NULL for source MPI_PROC_NULL). */
int p2p_recv_start(void *buf, size_t count, locus_dtype_t *dt, int source, int tag,
                   locus_comm_t *comm, locus_req_t **out);

/* The arguments of a probe: MPI_SUCCESS or MPI_ERR_COMM/TAG/RANK. */
int p2p_probe_check(int source, int tag, const locus_comm_t *comm);
/* The status of a probed message (st may be NULL). */
void p2p_status_probed(MPI_Status *st, int src, int tag, size_t bytes);

/* The status of a receive from MPI_PROC_NULL (st may be NULL). */
static inline void p2p_status_null(MPI_Status *st)
{
    locus_status_empty(st, MPI_PROC_NULL);
}

/*
 * Buffered send (bsend.c): packs the message into the buffer attached to
 * comm (MPI_Comm_attach_buffer) or else to the process
 * (MPI_Buffer_attach) and starts its send from there. MPI_ERR_BUFFER when
 * none is attached or it has no room. dest is a real rank.
 */
int locus_bsend_start(const void *buf, size_t count, locus_dtype_t *dt, int dest, int tag,
                      locus_comm_t *comm);

#endif
