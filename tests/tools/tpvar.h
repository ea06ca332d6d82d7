/*
 * tpvar.h — the shm transport's counters through MPI_T, for tests that
 * check which path large messages took (after tcheck.h): tp_pvar opens a
 * handle in tp_sess, tp_read reads one, tp_split_skip says why the split
 * single copy cannot happen between the ranks of comm (NULL: it can).
 */
#ifndef TPVAR_H
#define TPVAR_H

#include "tcheck.h"

static MPI_T_pvar_session tp_sess;

static MPI_T_pvar_handle tp_pvar(const char *name, int cls)
{
    int idx = -1, count = 0;
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    CHECK(MPI_T_pvar_get_index(name, cls, &idx) == MPI_SUCCESS, "no pvar %s", name);
    CHECK(MPI_T_pvar_handle_alloc(tp_sess, idx, NULL, &h, &count) == MPI_SUCCESS, "%s", name);
    return h;
}

static unsigned long long tp_read(MPI_T_pvar_handle h)
{
    unsigned long long v = 0;
    MPI_T_pvar_read(tp_sess, h, &v);
    return v;
}

/* Collective over comm; needs an open tp_sess. Ranks that share a CPU
 * yield while idle and never split (the partner would have to run at
 * once). */
static const char *tp_split_skip(MPI_Comm comm)
{
    int single = 0, both = 0, idle = 0, any_idle = 0;
    MPI_T_pvar_handle on = tp_pvar("locus_shm_single_copy", MPI_T_PVAR_CLASS_STATE);
    MPI_T_pvar_handle yield = tp_pvar("locus_core_yield", MPI_T_PVAR_CLASS_STATE);
    MPI_T_pvar_read(tp_sess, on, &single);
    MPI_Allreduce(&single, &both, 1, MPI_INT, MPI_MIN, comm);
    MPI_T_pvar_read(tp_sess, yield, &idle);
    MPI_Allreduce(&idle, &any_idle, 1, MPI_INT, MPI_MAX, comm);
    if (!both)
        return "no single copy (CMA) between the ranks here";
    return any_idle ? "the ranks share a CPU (no split single copy)" : NULL;
}

#endif
