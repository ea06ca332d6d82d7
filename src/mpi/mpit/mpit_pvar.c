/*
 * mpit_pvar.c — MPI_T performance variables: counters and levels read from
 * the layers' own bookkeeping, nothing counted here. Sources:
 *  - the core: messages and bytes sent per peer (summed per transport),
 *    the unexpected and posted queues, sends in flight and queued, the
 *    idle-polling decision;
 *  - the shm transport's counters (shm.h): eager and rendezvous sends,
 *    single-copy and pipelined receives, full rings, exhausted pools;
 *  - the collective layer: collectives started per kind, per communicator
 *    (these variables are bound to MPI_T_BIND_MPI_COMM).
 *
 * This file holds the variables and their sources; their sessions and
 * handles, with the semantics of each class, are mpit_pvar_handle.c's.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mpit.h"
#ifdef LOCUS_HAVE_SHM
#include "shm.h"
#endif

enum {
    SRC_TP_MSGS, SRC_TP_BYTES,   /* core, per transport (pv->tp) */
    SRC_SHM,                     /* shm_stats_t field at pv->off */
    SRC_UNEXPECTED, SRC_POSTED, SRC_IN_FLIGHT, SRC_QUEUED, SRC_YIELD,
    SRC_COLL,                    /* collectives of kind pv->off started */
    SRC_COLL_APART               /* locus_coll_shm_ranks_apart */
};

typedef struct {
    const char *name, *desc;
    int cls, cat, src;
    const char *tp;              /* SRC_TP_*: the transport's name */
    size_t off;                  /* SRC_SHM: field offset; SRC_COLL: kind */
    const mpit_enum_t *en;       /* STATE variables */
} pvar_t;

static const mpit_enum_t pvar_enums[] = {{"locus_no_yes", "no,yes"}};

#define SHM_FIELD(f) offsetof(shm_stats_t, f)
#define TP_PVARS(t, cat)                                                        \
    {"locus_" t "_msgs_sent", "messages sent through the " t " transport "      \
     "(synchronous-send acknowledgements included)", MPI_T_PVAR_CLASS_COUNTER,  \
     cat, SRC_TP_MSGS, t, 0, NULL},                                             \
    {"locus_" t "_bytes_sent", "payload bytes sent through the " t " transport",\
     MPI_T_PVAR_CLASS_COUNTER, cat, SRC_TP_BYTES, t, 0, NULL}
#define COLL_PVAR(k)                                                            \
    {"locus_coll_" #k "_started", #k " collectives started on the communicator, "\
     "blocking and nonblocking, with those the library runs on it itself (an "  \
     "allreduce per communicator made from it, a bcast and an allreduce when "  \
     "its shared-memory path is set up)", MPI_T_PVAR_CLASS_COUNTER,             \
     MPIT_CAT_COLL, SRC_COLL, NULL, LOCUS_COLL_KIND_##k, NULL},

static const pvar_t pvars[] = {
    TP_PVARS("self", MPIT_CAT_SELF),
    TP_PVARS("shm", MPIT_CAT_SHM),
    TP_PVARS("tcp", MPIT_CAT_TCP),
#ifdef LOCUS_HAVE_SHM
    {"locus_shm_eager_sent", "messages sent through a shm ring in one piece (eager)",
     MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_SHM, SRC_SHM, NULL, SHM_FIELD(eager_sent), NULL},
    {"locus_shm_eager_pooled", "eager messages whose payload went in a chunk of the "
     "sender's pool, the ring cell holding only the header",
     MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_SHM, SRC_SHM, NULL, SHM_FIELD(eager_pooled), NULL},
    {"locus_shm_rndv_sent", "large messages announced to the receiver (rendezvous)",
     MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_SHM, SRC_SHM, NULL, SHM_FIELD(rndv_sent), NULL},
    {"locus_shm_cma_recv", "large messages received by single copy (process_vm_readv)",
     MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_SHM, SRC_SHM, NULL, SHM_FIELD(cma_recv), NULL},
    {"locus_shm_split_recv", "large messages received by single copy split between both "
     "sides (the sender wrote the first half with process_vm_writev)",
     MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_SHM, SRC_SHM, NULL, SHM_FIELD(split_recv), NULL},
    {"locus_shm_written_recv", "large messages received by single copy that their sender "
     "wrote whole (process_vm_writev), one of many converging on a gather's root",
     MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_SHM, SRC_SHM, NULL, SHM_FIELD(written_recv), NULL},
    {"locus_shm_pipe_recv", "large messages received through the sender's pool chunks",
     MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_SHM, SRC_SHM, NULL, SHM_FIELD(pipe_recv), NULL},
    {"locus_shm_ring_full", "send attempts refused because the peer's ring was full "
     "(the send waits in the core's queue and is tried again)", MPI_T_PVAR_CLASS_COUNTER,
     MPIT_CAT_SHM, SRC_SHM, NULL, SHM_FIELD(again), NULL},
    {"locus_shm_pool_full", "progress rounds in which a pipelined send found this "
     "process's large-message pool exhausted", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_SHM,
     SRC_SHM, NULL, SHM_FIELD(pool_full), NULL},
    {"locus_shm_ahead_waits", "times a pipelined send waited because it held as many "
     "chunks of the pool ahead of its receiver as one send may (1 MiB)",
     MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_SHM, SRC_SHM, NULL, SHM_FIELD(ahead_waits), NULL},
    {"locus_shm_single_copy", "whether single copy (CMA) is in use with at least one peer",
     MPI_T_PVAR_CLASS_STATE, MPIT_CAT_SHM, SRC_SHM, NULL, SHM_FIELD(cma_enabled),
     &pvar_enums[0]},
    {"locus_shm_eager_limit", "largest message (bytes) sent eagerly, the smallest over "
     "the peers", MPI_T_PVAR_CLASS_SIZE, MPIT_CAT_SHM, SRC_SHM, NULL, SHM_FIELD(eager_max),
     NULL},
    {"locus_shm_segment_bytes", "bytes of this process's shared segment (rings and pool)",
     MPI_T_PVAR_CLASS_SIZE, MPIT_CAT_SHM, SRC_SHM, NULL, SHM_FIELD(seg_bytes), NULL},
#endif
    {"locus_core_unexpected", "messages that arrived before their receive was posted "
     "and wait in the unexpected queue", MPI_T_PVAR_CLASS_LEVEL, MPIT_CAT_CORE,
     SRC_UNEXPECTED, NULL, 0, NULL},
    {"locus_core_posted", "receives posted and not yet matched", MPI_T_PVAR_CLASS_LEVEL,
     MPIT_CAT_CORE, SRC_POSTED, NULL, 0, NULL},
    {"locus_core_sends_in_flight", "sends started and not yet complete (freed ones too)",
     MPI_T_PVAR_CLASS_LEVEL, MPIT_CAT_CORE, SRC_IN_FLIGHT, NULL, 0, NULL},
    {"locus_core_sends_queued", "sends waiting in the core for room in a transport",
     MPI_T_PVAR_CLASS_LEVEL, MPIT_CAT_CORE, SRC_QUEUED, NULL, 0, NULL},
    {"locus_core_yield", "whether idle polling yields the CPU (LOCUS_YIELD and the "
     "node's ranks per CPU)", MPI_T_PVAR_CLASS_STATE, MPIT_CAT_CORE, SRC_YIELD, NULL, 0,
     &pvar_enums[0]},
    LOCUS_COLL_KINDS(COLL_PVAR)
    {"locus_coll_shm_ranks_apart", "ranks of the communicator that this one's waits on "
     "its shared-memory collective path poll for longer before yielding: on an "
     "oversubscribed node, those bound to CPUs none of which are this rank's (0 before the "
     "path is set up)", MPI_T_PVAR_CLASS_SIZE, MPIT_CAT_COLL, SRC_COLL_APART, NULL, 0, NULL},
};
#define NPVARS ((int)(sizeof pvars / sizeof pvars[0]))

static int pvar_bind(const pvar_t *v)
{
    return v->src == SRC_COLL || v->src == SRC_COLL_APART ? MPI_T_BIND_MPI_COMM
                                                          : MPI_T_BIND_NO_OBJECT;
}

/* Only counters can be written, reset, started and stopped. */
static int pvar_readonly(const pvar_t *v)
{
    return v->cls != MPI_T_PVAR_CLASS_COUNTER;
}

int mpit_pvar_class(int index)
{
    return pvars[index].cls;
}

int mpit_pvar_binding(int index)
{
    return pvar_bind(&pvars[index]);
}

int mpit_pvar_count(void)
{
    return NPVARS;
}

int mpit_pvar_category(int index)
{
    return index >= 0 && index < NPVARS ? pvars[index].cat : -1;
}

int mpit_pvar_enum_owns(const mpit_enum_t *e)
{
    for (size_t i = 0; i < sizeof pvar_enums / sizeof pvar_enums[0]; i++)
        if (e == &pvar_enums[i])
            return 1;
    return 0;
}

/* ---- sources ---- */

static uint64_t tp_sent(const char *tp, int bytes)
{
    const locus_core_t *c = &locus_mpi.core;
    uint64_t n = 0;
    for (int p = 0; p < c->size; p++)
        if (c->peers[p].tp && strcmp(c->peers[p].tp->ops->name, tp) == 0)
            n += bytes ? c->peers[p].sent_bytes : c->peers[p].sent_msgs;
    return n;
}

static uint64_t shm_field(size_t off)
{
#ifdef LOCUS_HAVE_SHM
    const locus_core_t *c = &locus_mpi.core;
    for (int t = 0; t < c->ntp; t++)
        if (strcmp(c->tps[t]->ops->name, "shm") == 0) {
            shm_stats_t st;
            shm_tp_stats(c->tps[t], &st);
            if (off == SHM_FIELD(cma_enabled))
                return (uint64_t)st.cma_enabled;
            uint64_t v;
            memcpy(&v, (const char *)&st + off, sizeof v);
            return v;
        }
#endif
    (void)off;
    return 0; /* no shm transport here (one rank on the node) */
}

static uint64_t queued_sends(const locus_core_t *c)
{
    uint64_t n = 0;
    for (int i = 0; i < c->npend; i++)
        for (const locus_req_t *r = c->peers[c->pend[i]].pq_head; r; r = r->next)
            n++;
    return n;
}

int mpit_pvar_source(const mpit_pvar_handle_t *h, uint64_t *out)
{
    const pvar_t *v = &pvars[h->index];
    if (pvar_bind(v) == MPI_T_BIND_MPI_COMM) {
        if (locus_mpi.state != 1 || !locus_comm_valid(h->comm) || h->comm->ctx_p2p != h->ctx)
            return -1;
        *out = v->src == SRC_COLL ? h->comm->coll.started[v->off]
                                  : (uint64_t)locus_coll_shm_ranks_apart(&h->comm->coll);
        return 0;
    }
    if (locus_mpi.state != 1)
        return 1;
    const locus_core_t *c = &locus_mpi.core;
    uint64_t n = 0;
    switch (v->src) {
    case SRC_TP_MSGS: n = tp_sent(v->tp, 0); break;
    case SRC_TP_BYTES: n = tp_sent(v->tp, 1); break;
    case SRC_SHM: n = shm_field(v->off); break;
    case SRC_UNEXPECTED: n = c->nunexp > 0 ? (uint64_t)c->nunexp : 0; break;
    case SRC_POSTED: n = c->nposted > 0 ? (uint64_t)c->nposted : 0; break;
    case SRC_IN_FLIGHT: n = c->nsend > 0 ? (uint64_t)c->nsend : 0; break;
    case SRC_QUEUED: n = queued_sends(c); break;
    case SRC_YIELD: n = c->yield != 0; break;
    }
    *out = n;
    return 0;
}

int locus_t_pvar_get_num_impl(int *num_pvar)
{
    *num_pvar = NPVARS;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(T_pvar_get_info)
int PMPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity,
                         int *var_class, MPI_Datatype *datatype, MPI_T_enum *enumtype,
                         char *desc, int *desc_len, int *bind, int *readonly, int *continuous,
                         int *atomic)
{
    LOCUS_ENTRY_CS();
    MPIT_CHECK_INIT();
    if (pvar_index < 0 || pvar_index >= NPVARS)
        return MPI_T_ERR_INVALID_INDEX;
    const pvar_t *v = &pvars[pvar_index];
    mpit_str_out(name, name_len, v->name);
    mpit_str_out(desc, desc_len, v->desc);
    if (verbosity)
        *verbosity = v->src == SRC_COLL ? MPI_T_VERBOSITY_USER_DETAIL
                                        : MPI_T_VERBOSITY_TUNER_BASIC;
    if (var_class)
        *var_class = v->cls;
    if (datatype)
        *datatype = v->cls == MPI_T_PVAR_CLASS_STATE ? MPI_INT : MPI_UNSIGNED_LONG_LONG;
    if (enumtype)
        *enumtype = v->en ? (MPI_T_enum)v->en : MPI_T_ENUM_NULL;
    if (bind)
        *bind = pvar_bind(v);
    if (readonly)
        *readonly = pvar_readonly(v);
    if (continuous)
        *continuous = pvar_readonly(v);
    if (atomic)
        *atomic = !pvar_readonly(v);
    return MPI_SUCCESS;
}

int locus_t_pvar_get_index_impl(const char *name, int var_class, int *pvar_index)
{
    if (!name)
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < NPVARS; i++)
        if (pvars[i].cls == var_class && strcmp(pvars[i].name, name) == 0) {
            *pvar_index = i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}
