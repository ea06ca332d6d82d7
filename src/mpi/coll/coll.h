/*
 * coll_api.h — what the collective API files (coll_api*.c) share: the
 * checks of their arguments, the counts and displacements of either width,
 * and the one way the blocking, nonblocking and persistent forms hand
 * their work to the collective layer.
 *
 * Every collective has up to six entry points: MPI_X, MPI_IX, MPI_X_init
 * (MPI-4 persistent), each also as its `_c` form with MPI_Count counts
 * and MPI_Aint displacements. All six call one run function per
 * collective that takes MPI_Count scalars and coll_vec_t arrays, and
 * COLL_API writes the six from one signature.
 */
#ifndef LOCUS_COLL_API_H
#define LOCUS_COLL_API_H

#include <stdint.h>

#include "mpi_impl.h"

/* How a call runs: to completion, as a request, or built for MPI_Start. */
typedef enum { COLL_BLOCKING, COLL_NONBLOCKING, COLL_PERSISTENT } coll_how_t;

/*
 * Runs collective `name` of src/coll into rc (an MPI error class): the
 * blocking locus_coll_<name>, or the schedule of locus_coll_i<name> handed
 * to the user as a request in *req (coll_request). The arguments are those
 * of locus_coll_<name> (the last one the communicator's collective view).
 */
#define COLL_RUN(rc, how, req, comm, name, ...)                                 \
    do {                                                                        \
        if ((how) == COLL_BLOCKING) {                                           \
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
int coll_request(locus_comm_t *comm, locus_coll_sched_t *s, coll_how_t how, MPI_Request *req);
/* The persistent form (coll_api_init.c). */
int coll_persist_request(locus_comm_t *comm, locus_coll_sched_t *s, MPI_Request *req);

/* A nonblocking or persistent form needs somewhere to put its request. */
#define COLL_CHECK_REQ(rc, how, req)                                            \
    do {                                                                        \
        if ((rc) == MPI_SUCCESS && (how) != COLL_BLOCKING && !(req))            \
            (rc) = MPI_ERR_ARG;                                                 \
    } while (0)

/*
 * A counts or displacements argument: the int array of the classic form
 * or the MPI_Count / MPI_Aint array of the `_c` form (both 64-bit, the
 * same type on the ABI's LP64 targets). COLL_VEC(a) picks by a's type.
 */
typedef struct {
    const void *p;
    int wide;
} coll_vec_t;
_Static_assert(sizeof(MPI_Count) == sizeof(int64_t) && sizeof(MPI_Aint) == sizeof(int64_t),
               "large-count arrays are read as int64_t");
#define COLL_VEC(a)                                                             \
    ((coll_vec_t){ (a), _Generic((a), const int *: 0, int *: 0, const MPI_Count *: 1,        \
                                 MPI_Count *: 1) })
static inline int64_t coll_vec_at(coll_vec_t v, int i)
{
    return v.wide ? ((const int64_t *)v.p)[i] : ((const int *)v.p)[i];
}

/*
 * A blocking collective whose data is `count` elements of `dt` on this
 * rank moves nothing when that is zero bytes, and returns once its
 * arguments are checked, as the peers do: only MPI_Barrier must
 * synchronize. The type-signature rules make the answer the same on every
 * rank, so none waits for a rank that left. A call without data was 35 ns
 * through the schedule; the peers' took 4.
 */
static inline int coll_moves_nothing(coll_how_t how, MPI_Count count, MPI_Datatype dt)
{
    return how == COLL_BLOCKING && (count == 0 || locus_dtype_size(locus_dt_of(dt)) == 0);
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
int coll_check_counts(coll_vec_t counts, coll_vec_t displs, int p, MPI_Datatype dt,
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
size_t *coll_counts_convert(coll_vec_t counts, coll_vec_t displs, int p, ptrdiff_t **out_displs);

#define COLL_UNPAREN(...) __VA_ARGS__
/*
 * Defines MPI_<Name><S>, MPI_<IName><S> and MPI_<Name>_init<S> (S: empty
 * or _c) with the parameters PARAMS (parenthesized, without request and
 * info) that all three share; each returns CALL, an expression in which
 * how_, req_ and fn_ are the form, its request pointer and its name.
 */
#define COLL_API(Name, IName, S, PARAMS, CALL)                                  \
    LOCUS_PMPI_WEAK(Name##S)                                                    \
    int PMPI_##Name##S(COLL_UNPAREN PARAMS)                                     \
    {                                                                           \
        const coll_how_t how_ = COLL_BLOCKING;                                  \
        MPI_Request *const req_ = NULL;                                         \
        const char *const fn_ = "MPI_" #Name #S;                                \
        return CALL;                                                            \
    }                                                                           \
    LOCUS_PMPI_WEAK(IName##S)                                                   \
    int PMPI_##IName##S(COLL_UNPAREN PARAMS, MPI_Request *req_)                 \
    {                                                                           \
        const coll_how_t how_ = COLL_NONBLOCKING;                               \
        const char *const fn_ = "MPI_" #IName #S;                               \
        return CALL;                                                            \
    }                                                                           \
    LOCUS_PMPI_WEAK(Name##_init##S)                                             \
    int PMPI_##Name##_init##S(COLL_UNPAREN PARAMS, MPI_Info info_, MPI_Request *req_) \
    {                                                                           \
        const coll_how_t how_ = COLL_PERSISTENT;                                \
        const char *const fn_ = "MPI_" #Name "_init" #S;                        \
        (void)info_;                                                            \
        return CALL;                                                            \
    }

#endif
