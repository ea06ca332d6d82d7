/*
 * rma/rma.h — the one-sided communication chapter: windows (win_create.c,
 * win_seg.c, win_attr.c), RMA operations (rma_ops.c, rma_layout.c,
 * rma_region.c), synchronization (rma_sync.c) and the messages that reach
 * targets on other nodes (rma_msg.c, rma_svc.c, rma_wire.h). It lies above
 * comm/. The window object and the contract between the win*.c and rma*.c
 * files.
 *
 * ---- How an origin reaches a target -------------------------------------
 * Every target of a window is reached by one of three paths, chosen per
 * (origin, target) pair when the window is made:
 *
 *  RMA_PATH_DIRECT  the target's window memory is mapped in the origin:
 *                   itself, or a node peer of a window whose memory Locus
 *                   allocated (MPI_Win_allocate, MPI_Win_allocate_shared)
 *                   in one shared segment per node. Plain loads and stores.
 *  RMA_PATH_CMA     a node peer's own memory (MPI_Win_create,
 *                   MPI_Win_create_dynamic): the origin reads and writes it
 *                   with process_vm_readv/writev (Cross Memory Attach),
 *                   when the kernel allows it (probed at creation).
 *  RMA_PATH_MSG     anything else (another node, CMA refused, or
 *                   LOCUS_RMA_PATH=msg): requests on the window's own
 *                   context (rma_msg.c, wire format rma_wire.h), served by
 *                   the target inside its progress engine (rma_svc.c).
 *
 * On DIRECT and CMA the origin does all the work itself, so passive target
 * needs nothing from the target process. Synchronization state that must
 * be shared lives in the node segment: one slot per node-local rank with
 * its passive-target lock word, its accumulate mutex and (dynamic windows)
 * the table of its attached regions. Targets reached through messages take
 * the same lock word and mutex on behalf of their remote origins, so both
 * kinds of origin exclude each other correctly.
 *
 * One thread at a time (MPI_THREAD_SERIALIZED), like the rest of the layer.
 */
#ifndef LOCUS_MPI_RMA_H
#define LOCUS_MPI_RMA_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "comm/comm.h"
#include "datatype/datatype.h"

#define LOCUS_WIN_MAGIC 0x4c57494eu

enum { RMA_PATH_DIRECT = 1, RMA_PATH_CMA, RMA_PATH_MSG };

/* Passive-target lock word: shared holders in the low bits, two flags. */
#define RMA_LOCK_EXCL 0x80000000u   /* held exclusively */
#define RMA_LOCK_WAIT 0x40000000u   /* an exclusive locker waits: no new shared */

/* Attached regions of a dynamic window published in the node segment;
 * a rank with more falls back to messages for its node peers. */
#define RMA_REG_MAX 32
#define RMA_REG_OVERFLOW 0xffffffffu

/* A region attached to a dynamic window (an address in its owner's
 * memory): the owner's list and the tables published for node peers have
 * the same form, so one function decides coverage for both. */
typedef struct {
    uint64_t base, len;
} rma_region_t;

/* One node-local rank's slot in the node segment. */
typedef struct {
    _Alignas(64) atomic_uint lock;  /* passive-target lock word */
    _Alignas(64) atomic_uint acc;   /* accumulate mutex: 0 free, 1 held */
    atomic_uint reg_seq;            /* odd while the region table changes */
    uint32_t nreg;                  /* regions in reg[], or RMA_REG_OVERFLOW */
    rma_region_t reg[RMA_REG_MAX];
} rma_slot_t;

/* What an origin knows of one target, and its epoch state towards it. */
typedef struct {
    int path;                 /* RMA_PATH_* (may drop to MSG at run time) */
    pid_t pid;                /* CMA: the target process */
    char *base;               /* DIRECT: its memory here; CMA: address there */
    uint64_t size;
    int64_t disp_unit;
    rma_slot_t *slot;         /* its slot when mapped here (node peer, not
                                 LOCUS_RMA_PATH=msg); NULL: locks by message */
    int mapped;               /* its window memory is mapped here at base
                                 (itself; a node peer's Locus memory) */
    int lock;                 /* 0 or the MPI_LOCK_* type held */
    int lock_nocheck;         /* locked with MPI_MODE_NOCHECK: nothing taken */
    int in_start;             /* in the current MPI_Win_start group */
    int in_post;              /* in the current MPI_Win_post group */
    int msg_ops;              /* message ops since the target last acked */
    int npend;                /* replies still to come from it */
    int posted;               /* MPI_Win_post notices received from it */
    int completed;            /* MPI_Win_complete notices received from it */
} rma_peer_t;

enum { RMA_FENCE_NONE = 0, RMA_FENCE_OPEN, RMA_FENCE_ACTIVE };

typedef struct rma_pend rma_pend_t;
typedef struct rma_svc rma_svc_t;
typedef struct locus_win locus_win_t;

struct locus_win {
    uint32_t magic;               /* LOCUS_WIN_MAGIC while the handle is valid */
    int flavor;                   /* MPI_WIN_FLAVOR_* */
    int model;                    /* MPI_WIN_UNIFIED */
    locus_comm_t *comm;           /* private copy of the group: own context;
                                     its error handler is the window's */
    void *base;                   /* my memory (MPI_BOTTOM for dynamic) */
    MPI_Aint size;
    int disp_unit;                /* as the MPI_WIN_DISP_UNIT attribute */
    int rank, nranks;
    rma_peer_t *peers;            /* [nranks] */
    int *rank_of_world;           /* [nworld]: window rank or -1 */
    int nworld;                   /* peer ids when the window was made (ids of
                                     processes connected later are past it) */
    /* node segment (slots, then the data of the allocated flavors) */
    void *seg;
    size_t seg_len;
    int seg_shm;                  /* 1: a shared file, 0: private (alone on the node) */
    rma_slot_t *myslot;
    uint64_t cookie;              /* read by node peers to probe CMA */
    /* epochs (origin side, and exposure for PSCW) */
    int fence;                    /* RMA_FENCE_* */
    int lock_all;                 /* in an MPI_Win_lock_all epoch */
    int lock_all_nocheck;
    int nlocked;                  /* targets locked with MPI_Win_lock */
    int in_start, in_post;
    int err_deferred;             /* an error a target reported: raised at the
                                     next synchronization */
    int poke;                     /* some rank reaches some target by message:
                                     every RMA call makes a progress round */
    /* dynamic windows */
    rma_region_t *regions;
    int nregions, capregions;
    /* the message path */
    rma_svc_t *svc;               /* target side: state of its service request */
    rma_pend_t *pend;             /* origin side: replies awaited */
    int next_tag;
    /* attributes, names, hints */
    char name[MPI_MAX_OBJECT_NAME];
    locus_attr_t *attrs;
    MPI_Info info;                /* hints set (a private copy) or MPI_INFO_NULL */
    int noncontig;                /* alloc_shared_noncontig */
    int attr_flavor, attr_model;  /* what MPI_Win_get_attr points to */
    MPI_Aint attr_size;
    int attr_disp_unit;
};

/* ---- handles ----------------------------------------------------------- */
static inline locus_win_t *locus_win_of(MPI_Win h)
{
    if (LOCUS_IS_PREDEF(h))
        return NULL;
    locus_win_t *w = (locus_win_t *)h;
    return locus_handle_is(w, LOCUS_HK_WIN) && w->magic == LOCUS_WIN_MAGIC ? w : NULL;
}
static inline MPI_Win locus_win_handle(locus_win_t *w)
{
    return w ? (MPI_Win)w : MPI_WIN_NULL;
}

/* Applies the window's error handler (w NULL: an invalid window, reported
 * on MPI_COMM_WORLD's) to errclass raised in fn; returns errclass. */
int locus_win_err(locus_win_t *w, int errclass, const char *fn);

/* ---- waiting (rma_sync.c) ----------------------------------------------- */
/* One step of a wait loop: a progress round (which serves every window's
 * requests), idling as the node-resource decision says. MPI_ERR_OTHER when
 * the job can no longer communicate. */
int rma_wait_step(void);
/* At the start of every RMA call: a progress round when the window has
 * message traffic, so a rank spinning on RMA calls that complete locally
 * (a compare-and-swap loop on its own memory, MPI_Win_sync polling) still
 * serves the requests others send it. MPI error class. */
int rma_poke(locus_win_t *w);

/* ---- node segment and locks (win_seg.c) -------------------------------- */
/*
 * Makes the node segment of w, collective over w->comm: one slot per
 * node-local rank, then data_len[i] bytes of window memory for local rank
 * i (the allocated flavors; zeros otherwise) placed by `layout`
 * (RMA_LAYOUT_*). Shared memory (a job-scoped /dev/shm file, unlinked
 * once all have mapped it) when several ranks share the node, else plain
 * memory. *data_of[i] gets each local rank's memory. MPI error class.
 */
enum { RMA_LAYOUT_ALIGNED = 0, RMA_LAYOUT_CONTIG };
int win_seg_create(locus_win_t *w, const MPI_Aint *data_len, int layout, char **data_of);
void win_seg_free(locus_win_t *w);

/* Lock words and the accumulate mutex: try once (1 taken, 0 not). */
int rma_lock_try(rma_slot_t *s, int type);
void rma_lock_release(rma_slot_t *s, int type);
int rma_acc_try(rma_slot_t *s);
void rma_acc_release(rma_slot_t *s);
/* Takes the lock / mutex, progressing while waiting. MPI error class. */
int rma_lock_take(rma_slot_t *s, int type);
int rma_acc_take(rma_slot_t *s);

/* Dynamic windows: publishes my region list in my slot. */
void rma_regions_publish(locus_win_t *w);
/* 1 when [addr, addr+len) lies in the union of the regions of the list /
 * of a peer's published table (*overflow set when its table overflowed):
 * regions attached back to back (the two halves of one array) join, so
 * one access may run from one into the next; a gap between them does not.
 * len 0: addr lies in a region or at its end. */
int rma_regions_cover(const rma_region_t *r, int n, uint64_t addr, uint64_t len);
int rma_slot_covers(rma_slot_t *s, uint64_t addr, uint64_t len, int *overflow);

/* ---- data movement (rma_region.c, rma_layout.c) --------------------------- */
/* A contiguous piece of target memory, `off` bytes from displacement 0. */
typedef struct {
    int64_t off;
    uint64_t len;
} rma_run_t;

/* The target memory an operation touches: `len` bytes (packed order) of
 * either a datatype layout in this process's memory, or runs in this
 * process's memory, or runs in another process (CMA). */
typedef struct {
    char *base;                   /* displacement 0 (local or remote address) */
    size_t count;                 /* datatype form: count x dt */
    locus_dtype_t *dt;
    const rma_run_t *runs;        /* run form (dt NULL) */
    size_t nruns;
    pid_t pid;                    /* > 0: runs are in that process (CMA) */
    size_t len;
} rma_target_t;

/*
 * The runs of count x dt in packed order (adjacent ones merged), offsets
 * from displacement 0 (rma_layout.c): *runs is malloc'ed (NULL when there
 * is no data). MPI_ERR_NO_MEM.
 */
int rma_runs_of(size_t count, locus_dtype_t *dt, rma_run_t **runs, size_t *nruns);
/* The byte range [*lo, *hi) that count x dt touches around displacement 0
 * (both 0 for no data). */
void rma_span_of(size_t count, locus_dtype_t *dt, int64_t *lo, int64_t *hi);

/* Copies the target's first t->len bytes to / from a packed stream.
 * 0, or a negative errno from CMA (-EPERM, -EFAULT, ...). */
int rma_target_read(const rma_target_t *t, void *stream);
int rma_target_write(const rma_target_t *t, const void *stream);

/* CMA of runs in another process; 0 or a negative errno. */
int rma_cma_probe(pid_t pid, uint64_t addr, uint64_t cookie);

/* inout = in op inout over len bytes of packed elements of kind el
 * (op a LOCUS_OP_* id; REPLACE and NO_OP included). MPI error class. */
int rma_apply(int op, locus_elem_t el, const void *in, void *inout, size_t len);
/* The element kind an op runs on for el: MPI_BYTE counts as unsigned char
 * for the arithmetic ops (as MPICH allows in one-sided accumulates); -1
 * when the pair is not allowed. */
int rma_op_elem(int op, locus_elem_t el);

/* ---- operations (rma_ops.c, rma_msg.c) ----------------------------------- */
enum { RMA_PUT = 1, RMA_GET, RMA_ACC, RMA_GACC, RMA_CAS };

/* An operation as the API calls describe it (after argument checks). */
typedef struct {
    int kind;
    const void *obuf;             /* origin data (CAS: the new value) */
    size_t ocount;
    locus_dtype_t *odt;
    void *rbuf;                   /* GET: destination; GACC/CAS: result */
    size_t rcount;
    locus_dtype_t *rdt;
    const void *cbuf;             /* CAS: compare value */
    int target;
    uint64_t addr;                /* byte offset in the target's window (dynamic:
                                     its address) */
    size_t tcount;
    locus_dtype_t *tdt;
    int op;                       /* LOCUS_OP_* for ACC/GACC */
    locus_elem_t el;              /* element kind the op works on */
    size_t len;                   /* bytes of target data touched */
} rma_op_t;

/* Through messages: sends the request; an op with a reply gets a pending
 * entry (*pend when the caller wants it for a request-based op).
 * MPI error class. */
int rma_msg_issue(locus_win_t *w, const rma_op_t *o, rma_pend_t **pend);

/* ---- the message path (rma_msg.c, rma_svc.c) ---------------------------- */
/* Starts / stops the target-side service of w (a generalized request that
 * the progress engine polls: it serves the requests that arrive); stopping
 * also gives up replies still awaited. */
int rma_svc_start(locus_win_t *w);
void rma_svc_stop(locus_win_t *w);

/* Control messages. MPI error class. */
enum { RMA_CTL_POST = 1, RMA_CTL_COMPLETE };
int rma_msg_notify(locus_win_t *w, int target, int what);
/* Takes / releases a lock at target through messages (waits for the
 * grant / the acknowledgement). */
int rma_msg_lock(locus_win_t *w, int target, int type);
int rma_msg_unlock(locus_win_t *w, int target, int type);
/* Remote completion of everything sent to target (waits for its ack). */
int rma_msg_flush(locus_win_t *w, int target);
/* Local completion: waits for the replies still to come from target. */
int rma_msg_wait_replies(locus_win_t *w, int target);

/* Request-based operations: the request completes with the pending entry
 * (NULL: already complete). */
int rma_req_make(locus_win_t *w, rma_pend_t *p, MPI_Request *request);

#endif
