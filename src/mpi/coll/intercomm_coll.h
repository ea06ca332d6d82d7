/*
 * intercomm_coll.h — collectives on intercommunicators, as hooks the
 * collective API files (coll_api*.c) call at the top of each collective's
 * run function, with that function's own arguments:
 *
 *     if (locus_comm_is_inter(comm_h))   // intercommunicators: intercomm_coll.c
 *         return locus_intercomm_bcast(buf, count, dt, root, comm_h, how, req, fn);
 *
 * Each hook checks the call with the intercommunicator's rules (roots
 * MPI_ROOT / MPI_PROC_NULL / a rank of the remote group, vectors over the
 * remote group, no MPI_IN_PLACE), runs the collective layer's
 * intercommunicator algorithm (blocking, nonblocking or persistent, as
 * `how` says) and reports errors through the communicator's handler.
 */
#ifndef LOCUS_INTERCOMM_COLL_H
#define LOCUS_INTERCOMM_COLL_H

#include "coll.h"

/* 1 when h is a valid intercommunicator. */
static inline int locus_comm_is_inter(MPI_Comm h)
{
    locus_comm_t *c = locus_comm_of(h);
    return locus_comm_valid(c) && c->local != NULL;
}

int locus_intercomm_barrier(MPI_Comm comm, locus_how_t how, MPI_Request *req, const char *fn);
int locus_intercomm_bcast(void *buf, MPI_Count count, MPI_Datatype dt, int root, MPI_Comm comm,
                          locus_how_t how, MPI_Request *req, const char *fn);
/* root as the user gave it. */
int locus_intercomm_reduce(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt,
                           MPI_Op op, int root, MPI_Comm comm, locus_how_t how,
                           MPI_Request *req, const char *fn);
int locus_intercomm_allreduce(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt,
                              MPI_Op op, MPI_Comm comm, locus_how_t how, MPI_Request *req,
                              const char *fn);
/* rcounts.p NULL: reduce_scatter_block with rcount each (over my group). */
int locus_intercomm_reduce_scatter(const void *sbuf, void *rbuf, locus_ivec_t rcounts,
                                   MPI_Count rcount, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                                   locus_how_t how, MPI_Request *req, const char *fn);
/* vform 0: gather with rcount from each remote process. */
int locus_intercomm_gather(const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
                           MPI_Count rcount, locus_ivec_t rcounts, locus_ivec_t displs,
                           MPI_Datatype rdt, int root, MPI_Comm comm, locus_how_t how,
                           MPI_Request *req, const char *fn, int vform);
int locus_intercomm_scatter(const void *sbuf, MPI_Count scount, locus_ivec_t scounts,
                            locus_ivec_t displs, MPI_Datatype sdt, void *rbuf, MPI_Count rcount,
                            MPI_Datatype rdt, int root, MPI_Comm comm, locus_how_t how,
                            MPI_Request *req, const char *fn, int vform);
int locus_intercomm_allgather(const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
                              MPI_Count rcount, locus_ivec_t rcounts, locus_ivec_t displs,
                              MPI_Datatype rdt, MPI_Comm comm, locus_how_t how,
                              MPI_Request *req, const char *fn, int vform);
/* form 0 alltoall (count, type), 1 alltoallv (counts, displacements in
 * elements, type), 2 alltoallw (counts, displacements in bytes, types). */
int locus_intercomm_alltoall(const void *sbuf, MPI_Count scount, locus_ivec_t scounts,
                             locus_ivec_t sdispls, MPI_Datatype sdt, const MPI_Datatype *sdts,
                             void *rbuf, MPI_Count rcount, locus_ivec_t rcounts,
                             locus_ivec_t rdispls, MPI_Datatype rdt, const MPI_Datatype *rdts,
                             int form, MPI_Comm comm, locus_how_t how, MPI_Request *req,
                             const char *fn);
/* Scan and exscan do not exist on intercommunicators: MPI_ERR_COMM. */
int locus_intercomm_scan(MPI_Comm comm, const char *fn);

#endif
