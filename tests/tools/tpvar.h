/*
 * tpvar.h — the shm transport's counters through MPI_T, for tests that
 * check which path large messages took (after tcheck.h): tp_pvar (or
 * tp_pvar_on, bound to an object) opens a handle in tp_sess, tp_read
 * reads one, tp_init starts a test with MPI_T and tp_end ends it,
 * tp_pair_init starts a 2-rank one with the large-message counters,
 * tp_any_yield
 * says whether ranks share CPUs, tp_split_or_skip (tp_skip_if) ends a
 * test as skipped where the split single copy cannot happen.
 */
#ifndef TPVAR_H
#define TPVAR_H

#include "tcheck.h"

#include <stdlib.h>

static MPI_T_pvar_session tp_sess;

static inline MPI_T_pvar_handle tp_pvar_on(const char *name, int cls, void *obj)
{
    int idx = -1, count = 0;
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    CHECK(MPI_T_pvar_get_index(name, cls, &idx) == MPI_SUCCESS, "no pvar %s", name);
    CHECK(MPI_T_pvar_handle_alloc(tp_sess, idx, obj, &h, &count) == MPI_SUCCESS, "%s", name);
    return h;
}

static inline MPI_T_pvar_handle tp_pvar(const char *name, int cls)
{
    return tp_pvar_on(name, cls, NULL);
}

static inline unsigned long long tp_read(MPI_T_pvar_handle h)
{
    unsigned long long v = 0;
    MPI_T_pvar_read(tp_sess, h, &v);
    return v;
}

/* The counters of large messages received by each path. */
typedef struct {
    MPI_T_pvar_handle cma, split, pipe;
} tp_large_t;

/* MPI_T and MPI started, tp_sess open: my rank, and in *size the job's. */
static inline int tp_init(int *argc, char ***argv, int *size)
{
    int provided, rank;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    tc_rank = rank;
    MPI_T_pvar_session_create(&tp_sess);
    return rank;
}

/* tp_init on exactly 2 ranks (else the job aborts, naming prog), with the
 * large-message counters' handles in *h: my rank. */
static inline int tp_pair_init(int *argc, char ***argv, const char *prog, tp_large_t *h)
{
    int size, rank = tp_init(argc, argv, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "%s: needs 2 ranks\n", prog);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    h->cma = tp_pvar("locus_shm_cma_recv", MPI_T_PVAR_CLASS_COUNTER);
    h->split = tp_pvar("locus_shm_split_recv", MPI_T_PVAR_CLASS_COUNTER);
    h->pipe = tp_pvar("locus_shm_pipe_recv", MPI_T_PVAR_CLASS_COUNTER);
    return rank;
}

/* 1 when some rank of comm yields its CPU while idle (ranks share CPUs),
 * else 0. Collective over comm; needs an open tp_sess. */
static inline int tp_any_yield(MPI_Comm comm)
{
    int idle = 0, any_idle = 0;
    MPI_T_pvar_handle yield = tp_pvar("locus_core_yield", MPI_T_PVAR_CLASS_STATE);
    MPI_T_pvar_read(tp_sess, yield, &idle);
    MPI_Allreduce(&idle, &any_idle, 1, MPI_INT, MPI_MAX, comm);
    return any_idle;
}

/* Why the split single copy cannot happen between the ranks of comm, or
 * NULL. Collective over comm; needs an open tp_sess. Ranks that share a
 * CPU yield while idle and never split (the partner would have to run at
 * once). */
static inline const char *tp_split_skip(MPI_Comm comm)
{
    int single = 0, both = 0;
    MPI_T_pvar_handle on = tp_pvar("locus_shm_single_copy", MPI_T_PVAR_CLASS_STATE);
    MPI_T_pvar_read(tp_sess, on, &single);
    MPI_Allreduce(&single, &both, 1, MPI_INT, MPI_MIN, comm);
    int any_idle = tp_any_yield(comm);
    if (!both)
        return "no single copy (CMA) between the ranks here";
    return any_idle ? "the ranks share a CPU (no split single copy)" : NULL;
}

/* Ends the test as skipped (77, rank 0 saying why) when why is not NULL. */
static inline void tp_skip_if(int rank, const char *why)
{
    if (!why)
        return;
    if (rank == 0)
        printf("SKIPPED: %s\n", why);
    MPI_Finalize();
    exit(77);
}

/* Ends the test as skipped where the split single copy cannot happen
 * between the ranks of MPI_COMM_WORLD. */
static inline void tp_split_or_skip(int rank)
{
    tp_skip_if(rank, tp_split_skip(MPI_COMM_WORLD));
}

/* Ends a tp_init test: the session freed (its handles with it), the
 * checks reported, MPI and MPI_T finalized. Returns the exit status. */
static inline int tp_end(void)
{
    MPI_T_pvar_session_free(&tp_sess);
    int bad = tc_report(MPI_COMM_WORLD);
    MPI_Finalize();
    MPI_T_finalize();
    return bad ? 1 : 0;
}

#endif
