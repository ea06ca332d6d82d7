/*
 * mpi_impl.h — inside the MPI API layer: the objects behind the handles,
 * how a handle becomes its object, the layer's state, and the base every
 * chapter calls (errors, argument checks, MPI_Status fields; implemented in
 * env/). Nothing here is visible to applications; below this layer nothing
 * sees MPI handles.
 *
 * ---- Chapters -------------------------------------------------------------
 * The layer has a folder per part of the standard, each with one header
 * that is its contract (<folder>/<folder>.h). A chapter calls only the
 * chapters below it, in this order, bottom first:
 *   env       state, errors and error handlers, info, attributes, handles
 *   datatype  datatypes and reduction operations
 *   pt2pt     point-to-point, requests, buffered sends
 *   comm      communicators, groups, intercommunicators
 *   coll      collective entry points
 *   topo      process topologies, neighbourhood collectives
 *   rma       windows and one-sided communication
 *   mpit      the tool information interface
 *   io        MPI-IO
 *   dynproc   dynamic processes
 *   init      MPI_Init, MPI_Finalize, MPI_Abort
 *   session   sessions, partitioned communication
 * The test mpi_chapters checks the order from the objects' symbols and the
 * sources' includes. The int/large-count twins of every call are generated
 * from the API description (src/api) into the build tree.
 *
 * ---- Handles ---------------------------------------------------------------
 * mpi.h is the MPI-5 standard ABI: a handle is a pointer to an incomplete
 * struct, and a predefined handle is a small integer below 0x1000. Every API
 * function turns its handles into objects first with the locus_*_of()
 * converters below (one compare for a predefined handle, a cast for the
 * others), works on objects, and turns objects back into handles only for
 * what it returns (locus_*_handle()).
 *
 * ---- Conventions for an API file ---------------------------------------------
 *  - Define PMPI_X and make MPI_X its weak alias with LOCUS_PMPI_WEAK(X),
 *    written once at file scope (before or after the definition).
 *  - Inside the library call PMPI_X, never MPI_X (a profiling tool must
 *    see only the user's calls), or better the internal function.
 *  - Start with LOCUS_ENTRY_CS() (the MPI_THREAD_MULTIPLE lock, below),
 *    then LOCUS_CHECK_INIT(fn), convert handles, check arguments with
 *    the locus_check_* helpers; report every failure through
 *    `return locus_mpi_err(c, MPI_ERR_xxx, "MPI_Bcast");` which applies the
 *    communicator's error handler.
 *  - Internal helpers return MPI_SUCCESS or an MPI_ERR_* class (the layers'
 *    LOCUS_ERR_* codes have the same values) and never call the error
 *    handler themselves.
 *
 * ---- Object lifetimes ------------------------------------------------------
 * A communicator is reference counted: the user's handle is one reference,
 * every nonblocking request and schedule on it another, so MPI_Comm_free
 * invalidates the handle at once while pending operations finish on the
 * object. Context ids are never reused within a process: a message still
 * in flight on a freed communicator can never match a later one. A
 * datatype lives as long as its engine type (src/dtype), whose references
 * pending operations hold; operations likewise (src/op).
 */
#ifndef LOCUS_MPI_IMPL_H
#define LOCUS_MPI_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mpi.h"
#include "locus_boot.h"
#include "locus_coll.h"
#include "locus_core.h"
#include "locus_cs.h"
#include "locus_dtype.h"
#include "locus_op.h"

#define LOCUS_PRAGMA_(x) _Pragma(#x)
/* Makes MPI_<name> a weak alias of PMPI_<name> (defined in this file). */
#define LOCUS_PMPI_WEAK(name) LOCUS_PRAGMA_(weak MPI_##name = PMPI_##name)

#define LOCUS_TAG_UB 0x7fffffff
#define LOCUS_COMM_MAGIC 0x4c434f4du
#define LOCUS_DT_MAGIC 0x4c445459u

/* A handle value below this is a predefined handle (the ABI's rule). */
#define LOCUS_PREDEF_LIMIT 0x1000u
#define LOCUS_IS_PREDEF(h) ((uintptr_t)(h) < LOCUS_PREDEF_LIMIT)

/* ---- the table of live handles (env/handle_table.c) ---------------------- */
/* What a live user handle points to; a converter asks before it reads the
 * object, so a handle that is not one is an error class, never a fault. */
enum { LOCUS_HK_COMM = 1, LOCUS_HK_DTYPE, LOCUS_HK_GROUP, LOCUS_HK_OP, LOCUS_HK_ERRH,
       LOCUS_HK_INFO, LOCUS_HK_WIN, LOCUS_HK_MSG };
typedef struct {
    uintptr_t *keys;  /* object addresses, 0: empty slot */
    uint8_t *kinds;   /* LOCUS_HK_* of each */
    size_t mask;      /* slots - 1 (a power of two) */
    size_t count;
} locus_handle_table_t;
extern locus_handle_table_t locus_handles;
/* Enters obj as a live handle of kind (0, or -1 out of memory) / removes it. */
int locus_handle_enter(const void *obj, int kind);
void locus_handle_leave(const void *obj);
/* 1 when h is a live handle of that kind. */
static inline int locus_handle_is(const void *h, int kind)
{
    const locus_handle_table_t *t = &locus_handles;
    uintptr_t key = (uintptr_t)h;
    if (!t->keys)
        return 0;
    for (size_t i = (size_t)((key >> 4) * 0x9e3779b97f4a7c15ull >> 32) & t->mask; t->keys[i];
         i = (i + 1) & t->mask)
        if (t->keys[i] == key)
            return t->kinds[i] == kind;
    return 0;
}

/* ---- error handlers ------------------------------------------------------ */
typedef struct locus_errh locus_errh_t;
struct locus_errh {
    int kind;                    /* ERRH_FATAL, ERRH_ABORT, ERRH_RETURN, ERRH_USER */
    int refs;                    /* user handlers: the handle + objects using it */
    void (*comm_fn)(MPI_Comm *, int *, ...);   /* a user's communicator handler */
    MPI_Errhandler handle;
};
enum { ERRH_FATAL = 1, ERRH_ABORT, ERRH_RETURN, ERRH_USER };
extern locus_errh_t locus_errh_fatal, locus_errh_abort, locus_errh_return;

/* ---- communicators ---------------------------------------------------- */
typedef struct locus_attr locus_attr_t;   /* cached attributes (env/env.h) */
typedef struct locus_ptopo locus_ptopo_t; /* process topology (topo.h) */
typedef struct locus_comm locus_comm_t;
struct locus_comm {
    uint32_t magic;          /* LOCUS_COMM_MAGIC while the user's handle is valid */
    int refs;                /* the handle + pending requests and schedules */
    locus_coll_comm_t coll;  /* rank, size and node layout: what the
                                collectives see (coll.rank is my rank) */
    int *world_of;           /* [size]: comm rank -> MPI_COMM_WORLD rank */
    uint32_t ctx_p2p;        /* context id of user point-to-point traffic */
    uint32_t ctx_coll;       /* context id of collective traffic (ctx_p2p+1) */
    locus_errh_t *errh;      /* holds a reference */
    int predefined;          /* WORLD/SELF: never freed by the user */
    char name[MPI_MAX_OBJECT_NAME];
    locus_attr_t *attrs;     /* cached attributes */
    /* An intercommunicator has its local group here, as an intracommunicator;
     * coll.size and world_of are then the REMOTE group's, so point-to-point
     * addresses remote ranks (intercomm.c). NULL for an intracommunicator. */
    locus_comm_t *local;
    locus_ptopo_t *topo;     /* Cartesian/graph topology or NULL (topo.h) */
    MPI_Info hints;          /* info hints kept by MPI_Comm_set_info (its own copy), NULL: none */
    locus_comm_t *pool_next; /* in the pool of released structs */
    /* Made from a session's group, or from such a communicator: where that
     * session keeps its buffered-send pool (MPI_Session_attach_buffer,
     * pt2pt/bsend.c), which its buffered sends use after its own. */
    void **bsend_slot;
};
extern locus_comm_t locus_comm_world, locus_comm_self;

typedef struct locus_group locus_group_t;
struct locus_group {
    int refcount;            /* the predefined empty group ignores it */
    int size;
    int rank;                /* my rank in the group or MPI_UNDEFINED */
    int *world_of;           /* [size] group rank -> world rank */
    void **bsend_slot;       /* a session's group: its buffered-send pool's slot */
};
extern locus_group_t locus_group_empty;

/* ---- datatypes ------------------------------------------------------------- */
typedef struct locus_mdt locus_mdt_t;
struct locus_mdt {
    uint32_t magic;          /* LOCUS_DT_MAGIC while the user's handle is valid */
    int predefined;
    locus_dtype_t *dt;       /* the engine's type (its owner is this object) */
    MPI_Datatype handle;     /* what the user holds */
    char name[MPI_MAX_OBJECT_NAME];
    struct locus_type_decl *decl; /* how it was made, for MPI_Type_get_contents (datatype/datatype.h) */
    locus_attr_t *attrs;     /* cached attributes */
    uint32_t reduce_ops;     /* predefined types: bit (handle - 0x20) set for each
                                predefined op that may reduce this type */
};
/* The predefined datatypes, indexed by handle - 0x200 (dt NULL: a handle
 * this library does not support, e.g. a 16-byte Fortran REAL). */
extern locus_mdt_t locus_predef_types[256];

/* ---- converters: handle -> object (NULL: null or not a handle) ------------ */
static inline locus_comm_t *locus_comm_of(MPI_Comm h)
{
    if (LOCUS_IS_PREDEF(h))
        return h == MPI_COMM_WORLD ? &locus_comm_world
               : h == MPI_COMM_SELF ? &locus_comm_self : NULL;
    return locus_handle_is(h, LOCUS_HK_COMM) ? (locus_comm_t *)h : NULL;
}
static inline MPI_Comm locus_comm_handle(const locus_comm_t *c)
{
    return c == &locus_comm_world ? MPI_COMM_WORLD
           : c == &locus_comm_self ? MPI_COMM_SELF
           : c ? (MPI_Comm)c : MPI_COMM_NULL;
}
static inline locus_mdt_t *locus_mdt_of(MPI_Datatype h)
{
    uintptr_t v = (uintptr_t)h;
    if (v < LOCUS_PREDEF_LIMIT)
        return v > 0x200 && v < 0x300 && locus_predef_types[v - 0x200].dt
                   ? &locus_predef_types[v - 0x200] : NULL;
    return locus_handle_is(h, LOCUS_HK_DTYPE) ? (locus_mdt_t *)h : NULL;
}
/* The engine type of a datatype handle (NULL when not a valid handle). */
static inline locus_dtype_t *locus_dt_of(MPI_Datatype h)
{
    locus_mdt_t *m = locus_mdt_of(h);
    return m && m->magic == LOCUS_DT_MAGIC ? m->dt : NULL;
}
/* 1: the predefined op may reduce the type, both checked in one look (a
 * reduction of no data has nothing else to check); 0: a user type or op,
 * or a pair MPI forbids: check the long way. */
static inline int locus_predef_reduce_ok(MPI_Datatype dt, MPI_Op op)
{
    uintptr_t bit = (uintptr_t)op - 0x20;
    locus_mdt_t *m = locus_mdt_of(dt);
    return bit < 32 && m && m->magic == LOCUS_DT_MAGIC && ((m->reduce_ops >> bit) & 1);
}
/* The handle of an engine type (its owner's). */
static inline MPI_Datatype locus_dt_handle(const locus_dtype_t *dt)
{
    locus_mdt_t *m = locus_dtype_owner(dt);
    return m ? m->handle : MPI_DATATYPE_NULL;
}
static inline locus_group_t *locus_group_of(MPI_Group h)
{
    if (LOCUS_IS_PREDEF(h))
        return h == MPI_GROUP_EMPTY ? &locus_group_empty : NULL;
    return locus_handle_is(h, LOCUS_HK_GROUP) ? (locus_group_t *)h : NULL;
}
static inline MPI_Group locus_group_handle(locus_group_t *g)
{
    return g == &locus_group_empty ? MPI_GROUP_EMPTY : g ? (MPI_Group)g : MPI_GROUP_NULL;
}
static inline locus_req_t *locus_req_of(MPI_Request h);
static inline MPI_Request locus_req_handle(locus_req_t *r)
{
    return r ? (MPI_Request)r : MPI_REQUEST_NULL;
}
/* The error handler of a handle (NULL: MPI_ERRHANDLER_NULL or bad). */
locus_errh_t *locus_errh_of(MPI_Errhandler h);

/* ---- state ---------------------------------------------------------------- */
typedef struct locus_bsend locus_bsend_t;   /* buffered sends (pt2pt/bsend.c) */

typedef struct {
    int state;                      /* 0 before Init, 1 running, 2 after Finalize */
    int thread_level;
    /* MPI_THREAD_MULTIPLE: every entry point holds cs (LOCUS_ENTRY_CS).
     * Set once by MPI_Init_thread and never cleared, so a call racing
     * MPI_Finalize still pairs its enter and exit. */
    int cs_on;
    locus_cs_t cs;
    unsigned long main_thread;      /* pthread_self() of MPI_Init's caller */
    locus_core_t core;
    locus_boot_t boot;
    uint32_t next_ctx;              /* lowest context id this process may still use */
    locus_bsend_t *bsend;           /* attached buffers, made on first use */
    char hostname[MPI_MAX_PROCESSOR_NAME];
    locus_comm_t *comm_pool;        /* released communicator structs */
    /* Frees a communicator at its last reference (comm/'s locus_comm_free,
     * set by MPI_Init): the chapters below comm/ hold references too (a
     * request names its communicator) and drop them through
     * locus_comm_release without calling up into comm/. */
    void (*comm_free)(locus_comm_t *c);
    int attr_universe, attr_appnum; /* what MPI_Comm_get_attr points to */
    /* Processes of other jobs (dynproc/): the transport that reaches them,
     * and this job's name among jobs (the dyn transport's locus_dyn_name_t). */
    locus_tp_t *dyn;
    uint64_t job;
    char detail[160];               /* why the last error happened, for the fatal message */
    double init_done_realtime;      /* CLOCK_REALTIME at the end of MPI_Init */
} locus_mpi_state_t;

extern locus_mpi_state_t locus_mpi;

static inline locus_core_t *locus_core(void)
{
    return &locus_mpi.core;
}
static inline locus_req_t *locus_req_of(MPI_Request h)
{
    return LOCUS_IS_PREDEF(h) || !locus_core_req_known(&locus_mpi.core, h) ? NULL
           : (locus_req_t *)h;
}

/* ---- communicators' references ---------------------------------------------- */
/* 1 when c is a valid communicator (its handle not freed). */
static inline int locus_comm_valid(const locus_comm_t *c)
{
    return c && c->magic == LOCUS_COMM_MAGIC;
}
/* Adds / drops a reference; the last one frees the communicator. */
static inline void locus_comm_retain(locus_comm_t *c)
{
    c->refs++;
}
static inline void locus_comm_release(locus_comm_t *c)
{
    if (--c->refs == 0)
        locus_mpi.comm_free(c);
}

/* ---- errors and argument checks (env/errh.c) ------------------------------------- */
/*
 * Applies c's error handler to errclass raised in function fn (e.g.
 * "MPI_Bcast") and returns errclass (MPI_ERRORS_RETURN). With
 * MPI_ERRORS_ARE_FATAL it prints one line and aborts the job. A NULL or
 * invalid c uses MPI_COMM_WORLD's handler.
 */
int locus_mpi_err(locus_comm_t *c, int errclass, const char *fn);

/* 1 between MPI_Init and MPI_Finalize. */
static inline int locus_mpi_active(void)
{
    return locus_mpi.state == 1;
}
/* Outside MPI_Init..MPI_Finalize there is no error handler to apply: the
 * call is reported in one line on stderr and the process exits with 2. */
#define LOCUS_CHECK_INIT(fn) \
    do { if (!locus_mpi_active()) locus_mpi_not_active(fn); } while (0)
void locus_mpi_not_active(const char *fn);

/* ---- MPI_THREAD_MULTIPLE ------------------------------------------------------
 * One critical section (locus_mpi.cs, recursive) serializes the library
 * when the job's level is MPI_THREAD_MULTIPLE: every entry point's first
 * line is LOCUS_ENTRY_CS(), which takes it for the rest of the function
 * (released on every return by the cleanup attribute) and costs a single
 * predicted branch at any lower level. A blocking call hands it over while
 * it waits (locus_core_idle, and the collectives' progress in
 * comm/coll_p2p.c), so a thread that waits for another never holds that
 * one out. An MPI call made inside the library, or by a user callback
 * (reduction operations, error handlers, attribute copy and delete,
 * generalized request and datarep callbacks), finds the lock held by its
 * thread and only counts it, as in MPICH: such a callback runs under the
 * lock, so it must not wait for another thread's MPI call. */
static inline int locus_entry_enter(void)
{
    if (__builtin_expect(!locus_mpi.cs_on, 1))
        return 0;
    locus_cs_enter(&locus_mpi.cs);
    return 1;
}
static inline void locus_entry_exit(const int *held)
{
    if (__builtin_expect(*held, 0))
        locus_cs_exit(&locus_mpi.cs);
}
#define LOCUS_ENTRY_CS()                                                              \
    const int locus_entry_held_ __attribute__((cleanup(locus_entry_exit), unused)) = \
        locus_entry_enter()

/* Argument checks: MPI_SUCCESS or the MPI_ERR_* class to report. */
int locus_check_comm(const locus_comm_t *c);         /* MPI_ERR_COMM */
int locus_check_count(int count);                    /* < 0: MPI_ERR_COUNT */
/* NULL/uncommitted: MPI_ERR_TYPE. Inline: every call with data checks one
 * or two, and the call was a tenth of a collective of nothing. */
static inline int locus_check_dtype(MPI_Datatype dt)
{
    locus_dtype_t *d = locus_dt_of(dt);
    return d && locus_dtype_is_committed(d) ? MPI_SUCCESS : MPI_ERR_TYPE;
}
int locus_check_buf(const void *buf, int count, MPI_Datatype dt); /* NULL with data: MPI_ERR_BUFFER */
int locus_check_root(const locus_comm_t *c, int root); /* MPI_ERR_ROOT */
/* Checks of the point-to-point arguments, in MPI's usual order. */
int locus_check_p2p(const void *buf, int count, MPI_Datatype dt, int peer, int tag,
                    const locus_comm_t *c, int is_recv);

/* ---- status ---------------------------------------------------------------- */
/* The five library ints of MPI_Status: bytes received (two halves) and
 * whether the request was cancelled. */
static inline void locus_status_set_bytes(MPI_Status *st, size_t n)
{
    st->MPI_internal[0] = (int)(uint32_t)n;
    st->MPI_internal[1] = (int)(uint32_t)((uint64_t)n >> 32);
}
static inline size_t locus_status_bytes(const MPI_Status *st)
{
    return (size_t)((uint64_t)(uint32_t)st->MPI_internal[1] << 32 |
                    (uint32_t)st->MPI_internal[0]);
}
#define LOCUS_STATUS_CANCELLED(st) ((st)->MPI_internal[2])

/* ---- what the generated entry points hand their implementations ------------------ */
/* The form of an operation: blocking (MPI_Bcast), nonblocking (MPI_Ibcast,
 * MPI_Rput) or persistent (MPI_Bcast_init). */
typedef enum { LOCUS_HOW_BLOCKING, LOCUS_HOW_NONBLOCKING, LOCUS_HOW_PERSISTENT } locus_how_t;

/* An array argument of either width: the int array of a call's classic
 * form or the MPI_Count / MPI_Aint array of its large-count form. */
typedef struct {
    const void *p;
    int wide;
} locus_ivec_t;
_Static_assert(sizeof(MPI_Count) == sizeof(int64_t) && sizeof(MPI_Aint) == sizeof(int64_t),
               "large-count arrays are read as int64_t");
static inline int64_t locus_ivec_at(locus_ivec_t v, int i)
{
    return v.wide ? ((const int64_t *)v.p)[i] : ((const int *)v.p)[i];
}

/* 1 when fn, the name of the entry point called, is a large-count form
 * ("MPI_Type_vector_c"): what the type constructors record for
 * MPI_Type_get_envelope. */
static inline int locus_fn_large(const char *fn)
{
    size_t n = strlen(fn);
    return n > 2 && fn[n - 2] == '_' && fn[n - 1] == 'c';
}

/* The implementations the generated entry points call (src/api/gen_c.py),
 * some of them with the object of a chapter above (declared there). */
typedef struct locus_win locus_win_t;
typedef struct locus_session locus_session_t;
#include "mpi_bindings.h"

#endif
