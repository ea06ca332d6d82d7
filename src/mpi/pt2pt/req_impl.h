/*
 * req_impl.h — the helpers the completion calls (req.c, req_status.c)
 * share: what a handle's request is (valid, active, done) and how a
 * complete one is reported, whatever its kind (pt2pt.h).
 */
#ifndef LOCUS_REQ_IMPL_H
#define LOCUS_REQ_IMPL_H

#include "pt2pt.h"

/* 1 when r is a request the user may still name (not freed). */
int req_valid(const locus_req_t *r);
/* The communicator whose error handler applies: the request's own (alive
 * while the request holds its reference, even if the user freed it). */
locus_comm_t *req_comm(const locus_req_t *r);
/* 0 for an inactive persistent request: the any/some calls treat it like
 * a null handle, the all calls give it an empty status. */
int req_active(const locus_req_t *r);
/* 1 when r's operation is complete, or r is inactive. Makes no progress. */
int req_done(locus_req_t *r);
/* The status (st may be NULL) and error code of a done request, which
 * stays as it is (MPI_Request_get_status). */
int req_peek(locus_req_t *r, MPI_Status *st);
/* Reports a done request: its status and error code; a non-persistent one
 * is freed (*h becomes MPI_REQUEST_NULL), a persistent one inactive. */
int req_report(MPI_Request *h, MPI_Status *st);
/* The MPI_ERROR fields of a multiple-completion call, fed status k's
 * error code in order (st may be NULL): MPI-4.1 writes them only when the
 * call returns MPI_ERR_IN_STATUS, and then all of them, so nothing is
 * written until one fails (*failed, 0 at the start) and then the earlier
 * ones get MPI_SUCCESS. Single-completion calls never write the field. */
void req_status_error(MPI_Status st[], int k, int err, int *failed);

/* One progress round, idling when nothing moved; -1 once the job can no
 * longer communicate. */
int req_progress_round(void);
/* MPI_SUCCESS, or MPI_ERR_COUNT / MPI_ERR_ARG / MPI_ERR_REQUEST for an
 * array of handles (null handles allowed). */
int req_check_array(int count, const MPI_Request reqs[]);
/* The communicator of the first non-null handle (MPI_COMM_WORLD if none). */
locus_comm_t *req_array_comm(int count, const MPI_Request reqs[]);
/* What MPI_Test and MPI_Request_get_status share: *flag whether request
 * is complete after at most one progress round; *r NULL for a null handle
 * (complete, status empty). MPI_SUCCESS, or the error reported as fn. */
int req_test_begin(MPI_Request request, int *flag, MPI_Status *status, locus_req_t **r,
                   const char *fn);
/* The index of the first done active request, -1 when none is done, -2
 * when none is active. */
int req_find_done(int count, const MPI_Request reqs[]);
/* The indices of every done active request, in order, into indices[];
 * their number, or -1 when none is active. */
int req_find_some(int count, const MPI_Request reqs[], int indices[]);

#endif
