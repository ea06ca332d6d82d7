/*
 * coll/coll.h — the collective entry points chapter (coll_api.c,
 * coll_api_gather.c: blocking and nonblocking; coll_api_init.c:
 * persistent; intercomm_coll.c: on intercommunicators) over the collective
 * layer (src/coll). It lies above comm/; the neighbourhood collectives are
 * the topologies chapter's (topo/). What its files, and topo/'s
 * neighbourhood collectives, share: the checks of their arguments, the
 * counts and displacements of either width, and the one way the blocking,
 * nonblocking and persistent forms hand their work to the collective
 * layer.
 *
 * Every collective has up to six entry points: MPI_X, MPI_IX, MPI_X_init
 * (MPI-4 persistent), each also as its `_c` form with MPI_Count counts
 * and MPI_Aint displacements. All six are generated (src/api/gen_c.py)
 * and call one implementation per collective, locus_<x>_impl, which takes
 * MPI_Count scalars, locus_ivec_t arrays and the form (locus_how_t).
 */
#ifndef LOCUS_MPI_COLL_H
#define LOCUS_MPI_COLL_H

#include <stdint.h>

#include "comm/comm.h"
#include "datatype/datatype.h"

/*
 * Runs collective `name` of src/coll into rc (an MPI error class): the
 * blocking locus_coll_<name>, or the schedule of locus_coll_i<name> handed
 * to the user as a request in *req (coll_request). The arguments are those
 * of locus_coll_<name> (the last one the communicator's collective view).
 */
#define COLL_RUN(rc, how, req, comm, name, ...)                                 \
    do {                                                                        \
        if ((how) == LOCUS_HOW_BLOCKING) {                                      \
            (rc) = locus_coll_##name(__VA_ARGS__);                              \
        } else {                                                                \
            locus_coll_sched_t *s_;                                             \
            (rc) = locus_coll_i##name(__VA_ARGS__, &s_);                        \
            if ((rc) == MPI_SUCCESS)                                            \
                (rc) = coll_request((comm), s_, (how), (req));                  \
        }                                                                       \
    } while (0)

/* A built schedule as the user's request: a nonblocking collective's
 * (started) or a persistent one's (inactive until MPI_Start). Frees s on
 * failure. */
int coll_request(locus_comm_t *comm, locus_coll_sched_t *s, locus_how_t how, MPI_Request *req);
/* The persistent form (coll_api_init.c). */
int coll_persist_request(locus_comm_t *comm, locus_coll_sched_t *s, MPI_Request *req);

/* A nonblocking or persistent form needs somewhere to put its request. */
#define COLL_CHECK_REQ(rc, how, req)                                            \
    do {                                                                        \
        if ((rc) == MPI_SUCCESS && (how) != LOCUS_HOW_BLOCKING && !(req))       \
            (rc) = MPI_ERR_ARG;                                                 \
    } while (0)

/*
 * A blocking collective whose data is `count` elements of `dt` on this
 * rank moves nothing when that is zero bytes, and returns once its
 * arguments are checked, as the peers do: only MPI_Barrier must
 * synchronize. The type-signature rules make the answer the same on every
 * rank, so none waits for a rank that left. A call without data was 35 ns
 * through the schedule; the peers' took 4.
 */
static inline int coll_moves_nothing(locus_how_t how, MPI_Count count, MPI_Datatype dt)
{
    return how == LOCUS_HOW_BLOCKING && (count == 0 || locus_dtype_size(locus_dt_of(dt)) == 0);
}

/* The buffer and size checks of a part whose count (at least 0) and type
 * are known good. */
int coll_check_data(const void *buf, MPI_Count count, MPI_Datatype dt);
/* Checks of a (count, type, buffer) triple that matters on this rank.
 * Inline: a collective of no data checks two, and has nothing else to do. */
static inline int coll_check_part(const void *buf, MPI_Count count, MPI_Datatype dt)
{
    int rc = count < 0 ? MPI_ERR_COUNT : locus_check_dtype(dt);
    return rc == MPI_SUCCESS && count > 0 ? coll_check_data(buf, count, dt) : rc;
}
/* Checks of counts/displacements arrays of comm's size. */
int coll_check_counts(locus_ivec_t counts, locus_ivec_t displs, int p, MPI_Datatype dt,
                      const void *buf);
/* A call with a short way (nothing to move) is three functions: its
 * checks and its _entry, which looks for nothing to move, inlined into
 * the MPI function; its _run out of line, so that the _run's frame (three
 * ways, the v form, the intercommunicator path) is built only when there
 * is work. Such calls took 13-18 ns, Open MPI's 6-7. */
#define COLL_INLINE static inline __attribute__((always_inline)) int
#define COLL_OUT_OF_LINE static __attribute__((noinline)) int

/* Checks of a reduction: count, type, op (allowed on the type), buffers;
 * root < 0: every rank receives. */
int coll_check_reduce_args(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt,
                           MPI_Op op, int root, const locus_comm_t *comm);
/* The same, ending at once for no data of a predefined type and op: that
 * call was 70 of the 120 instructions of a reduction of nothing. */
static inline int coll_check_reduce(const void *sbuf, void *rbuf, MPI_Count count,
                                    MPI_Datatype dt, MPI_Op op, int root,
                                    const locus_comm_t *comm)
{
    if (count == 0 && locus_predef_reduce_ok(dt, op))
        return MPI_SUCCESS;
    return coll_check_reduce_args(sbuf, rbuf, count, dt, op, root, comm);
}

/* Counts/displacements as the collective layer takes them: one
 * allocation (free the returned pointer) holding p sizes then p
 * displacements; NULL when out of memory. displs.p may be NULL (then only
 * the counts are converted). */
size_t *coll_counts_convert(locus_ivec_t counts, locus_ivec_t displs, int p,
                            ptrdiff_t **out_displs);

#endif
