/*
 * coll_api.h — what the collective API files (coll_api*.c) share: the
 * checks of their arguments and the one way blocking and nonblocking forms
 * hand their work to the collective layer.
 */
#ifndef LOCUS_COLL_API_H
#define LOCUS_COLL_API_H

#include "mpi_impl.h"

/*
 * Runs collective `name` of src/coll into rc (an MPI error class):
 * blocking when req is NULL, else started as a nonblocking collective
 * whose request goes to *req. The arguments are those of
 * locus_coll_<name> (the last one the communicator's collective view).
 */
#define COLL_RUN(rc, req, comm, name, ...)                                      \
    do {                                                                        \
        if (!(req)) {                                                           \
            (rc) = locus_coll_##name(__VA_ARGS__);                              \
        } else {                                                                \
            locus_coll_sched_t *s_;                                             \
            (rc) = locus_coll_i##name(__VA_ARGS__, &s_);                        \
            if ((rc) == MPI_SUCCESS)                                            \
                (rc) = locus_req_of_sched((comm), s_, (req));                   \
        }                                                                       \
    } while (0)

/* A nonblocking form needs somewhere to put its request. */
#define COLL_CHECK_REQ(rc, nonblocking, req)                                    \
    do {                                                                        \
        if ((rc) == MPI_SUCCESS && (nonblocking) && !(req))                     \
            (rc) = MPI_ERR_ARG;                                                 \
    } while (0)

/* Checks of a (count, type, buffer) triple that matters on this rank. */
int coll_check_part(const void *buf, int count, MPI_Datatype dt);
/* Checks of counts/displacements arrays of comm's size. */
int coll_check_counts(const int *counts, const int *displs, int p, MPI_Datatype dt,
                      const void *buf);
/* Checks of a reduction: count, type, op (allowed on the type), buffers;
 * root < 0: every rank receives. */
int coll_check_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                      int root, const locus_comm_t *comm);

/* int counts/displacements as the collective layer takes them: one
 * allocation (free the returned pointer) holding p sizes then p
 * displacements; NULL when out of memory. displs may be NULL (then only
 * the counts are converted). */
size_t *coll_counts_convert(const int *counts, const int *displs, int p, ptrdiff_t **out_displs);

#endif
