/*
 * win_create.c — windows: MPI_Win_create, MPI_Win_allocate,
 * MPI_Win_allocate_shared, MPI_Win_create_dynamic (and their large-count
 * forms), MPI_Win_free, MPI_Win_shared_query, MPI_Win_attach/detach.
 *
 * Creation is collective over the communicator: a private copy of its
 * group (own context: the window's messages never meet the program's),
 * the node segment, one exchange of every rank's facts (memory, size,
 * displacement unit, pid, a CMA probe cookie), the choice of a path to
 * every target (rma.h), and the start of the window's service.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "locus_tunables.h"
#include "rma.h"

/* What every rank tells the others at creation. */
typedef struct {
    uint64_t base;                /* its window memory (dynamic: 0) */
    uint64_t size;
    int64_t disp_unit;
    uint64_t cookie_addr, cookie; /* 8 bytes a CMA probe must read */
    uint64_t userns;              /* CMA works within one user namespace */
    int32_t pid;
    int32_t pad;
} win_card_t;

static uint64_t userns_inode(void)
{
    char link[64] = "";
    ssize_t n = readlink("/proc/self/ns/user", link, sizeof link - 1);
    unsigned long long ino = 0;
    if (n > 0 && sscanf(link, "user:[%llu]", &ino) == 1)
        return ino;
    return 0;
}

/* LOCUS_RMA_PATH: auto, msg (every peer by message) or nocma. */
static int path_mode(int *msg, int *nocma)
{
    const char *v = locus_tunable_str("LOCUS_RMA_PATH");
    *msg = strcmp(v, "msg") == 0;
    *nocma = strcmp(v, "nocma") == 0;
    if (!*msg && !*nocma && strcmp(v, "auto") != 0) {
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail,
                 "LOCUS_RMA_PATH=%.40s: expected auto, msg or nocma", v);
        return MPI_ERR_ARG;
    }
    return MPI_SUCCESS;
}

/* The window object with its private communicator. Collective. */
static int win_new(locus_comm_t *c, int flavor, MPI_Info info, locus_win_t **out)
{
    locus_win_t *w = calloc(1, sizeof *w);
    int wsize = locus_mpi.core.size;
    if (w && locus_handle_enter(w, LOCUS_HK_WIN) < 0) {
        free(w);
        w = NULL;
    }
    if (!w)
        return MPI_ERR_NO_MEM;
    int err = locus_comm_split(c, 0, c->coll.rank, &w->comm);
    if (err != MPI_SUCCESS) {
        locus_handle_leave(w);
        free(w);
        return err;
    }
    locus_errh_set(w->comm, &locus_errh_fatal);  /* MPI: a window's default */
    w->flavor = flavor;
    w->model = MPI_WIN_UNIFIED;
    w->rank = w->comm->coll.rank;
    w->nranks = w->comm->coll.size;
    w->info = MPI_INFO_NULL;
    w->peers = calloc((size_t)w->nranks, sizeof *w->peers);
    w->rank_of_world = malloc((size_t)wsize * sizeof *w->rank_of_world);
    w->nworld = wsize;
    if (info != MPI_INFO_NULL && locus_info_dup_impl(info, &w->info) != MPI_SUCCESS)
        w->info = MPI_INFO_NULL;
    *out = w;
    if (!w->peers || !w->rank_of_world)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < wsize; i++)
        w->rank_of_world[i] = -1;
    for (int r = 0; r < w->nranks; r++)
        if (w->comm->world_of[r] >= 0 && w->comm->world_of[r] < wsize)
            w->rank_of_world[w->comm->world_of[r]] = r;
    if (w->info != MPI_INFO_NULL) {
        char v[16];
        int len = sizeof v, flag = 0;
        locus_info_get_string_impl(w->info, "alloc_shared_noncontig", &len, v, &flag);
        w->noncontig = flag && strcmp(v, "true") == 0;
    }
    return MPI_SUCCESS;
}

/* Frees what win_new and the set-up made (not the service). */
static void win_release(locus_win_t *w)
{
    if (w->info != MPI_INFO_NULL)
        PMPI_Info_free(&w->info);
    win_seg_free(w);
    if (w->comm)
        locus_comm_release(w->comm);
    free(w->peers);
    free(w->rank_of_world);
    free(w->regions);
    w->magic = 0;
    locus_handle_leave(w);
    free(w);
}

/* The path to every target, from the exchanged cards. */
static void paths_choose(locus_win_t *w, const win_card_t *cards, char **data_of, int direct,
                         int msg, int nocma)
{
    locus_coll_comm_t *cc = &w->comm->coll;
    uint64_t ns = userns_inode();
    int li = 0;
    for (int r = 0; r < w->nranks; r++) {
        rma_peer_t *p = &w->peers[r];
        const win_card_t *k = &cards[r];
        int local = cc->node_of[r] == cc->node_index;
        p->size = k->size;
        p->disp_unit = k->disp_unit;
        p->base = (char *)(uintptr_t)k->base;
        p->pid = k->pid;
        p->path = RMA_PATH_MSG;
        if (local && (!msg || r == w->rank))
            p->slot = (rma_slot_t *)w->seg + li;
        /* Memory Locus allocated is mapped here for every node peer:
         * MPI_Win_shared_query hands out these addresses. */
        if (local && direct)
            p->base = data_of[li];
        p->mapped = r == w->rank || (local && direct);
        if (r == w->rank || (local && !msg && direct)) {
            p->path = RMA_PATH_DIRECT;
        } else if (local && !msg && !nocma && ns && k->userns == ns &&
                   rma_cma_probe(k->pid, k->cookie_addr, k->cookie) == 0) {
            p->path = RMA_PATH_CMA;
        }
        li += local;
    }
}

/*
 * Makes a window of any flavor. size/disp_unit are mine (dynamic: 0/1);
 * for the allocated flavors *mem gets my memory. Collective over c.
 */
static int win_make(locus_comm_t *c, int flavor, void *base, MPI_Aint size, MPI_Aint disp_unit,
                    MPI_Info info, void **mem, locus_win_t **out)
{
    int msg, nocma, err = path_mode(&msg, &nocma);
    if (err != MPI_SUCCESS)
        return err;
    locus_win_t *w = NULL;
    if ((err = win_new(c, flavor, info, &w)) != MPI_SUCCESS) {
        if (w)
            win_release(w);
        return err;
    }
    locus_coll_comm_t *cc = &w->comm->coll;
    int alloc = flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED;
    MPI_Aint *sizes = calloc((size_t)w->nranks, sizeof *sizes);
    MPI_Aint *lsizes = calloc((size_t)cc->local_size, sizeof *lsizes);
    char **data_of = calloc((size_t)cc->local_size, sizeof *data_of);
    win_card_t *cards = calloc((size_t)w->nranks, sizeof *cards);
    locus_dtype_t *bytes = locus_dtype_basic(LOCUS_EL_BYTE);
    if (!sizes || !lsizes || !data_of || !cards)
        err = MPI_ERR_NO_MEM;
    /* The allocated flavors put everyone's memory in the node segment:
     * the node's ranks learn each other's sizes first. */
    if (err == MPI_SUCCESS && alloc)
        err = locus_coll_allgather(&size, sizeof size, bytes, sizes, sizeof size, bytes, cc);
    if (err == MPI_SUCCESS) {
        for (int i = 0; i < cc->local_size; i++)
            lsizes[i] = alloc ? sizes[cc->local_ranks[i]] : 0;
        int layout = flavor == MPI_WIN_FLAVOR_SHARED && !w->noncontig ? RMA_LAYOUT_CONTIG
                                                                       : RMA_LAYOUT_ALIGNED;
        err = win_seg_create(w, lsizes, layout, data_of);
        if (alloc && err == MPI_SUCCESS)
            base = data_of[cc->local_rank];
    }
    if (err == MPI_SUCCESS) {
        w->base = base;
        w->size = size;
        w->cookie = ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)w ^ (uint64_t)time(NULL);
        win_card_t me = { (uint64_t)(uintptr_t)base, (uint64_t)size, disp_unit,
                          (uint64_t)(uintptr_t)&w->cookie, w->cookie, userns_inode(),
                          (int32_t)getpid(), 0 };
        err = locus_coll_allgather(&me, sizeof me, bytes, cards, sizeof me, bytes, cc);
    }
    if (err == MPI_SUCCESS) {
        paths_choose(w, cards, data_of, alloc, msg, nocma);
        err = rma_svc_start(w);
    }
    /* Everyone or no one (a rank out of memory fails the window on all);
     * and whether anyone reaches anyone by message. */
    int mine[2] = { err == MPI_SUCCESS, 0 }, all[2] = { 0, 0 };
    for (int r = 0; r < w->nranks && err == MPI_SUCCESS; r++)
        if (w->peers[r].path == RMA_PATH_MSG)
            mine[1] = -1;
    if (locus_coll_allreduce(mine, all, 2, locus_dtype_basic(LOCUS_EL_INT),
                             locus_op_predefined(LOCUS_OP_MIN), cc) != MPI_SUCCESS || !all[0]) {
        if (err == MPI_SUCCESS)
            err = MPI_ERR_OTHER;
    }
    w->poke = all[1] < 0;
    free(sizes);
    free(lsizes);
    free(data_of);
    free(cards);
    if (err != MPI_SUCCESS) {
        rma_svc_stop(w);
        win_release(w);
        return err;
    }
    w->disp_unit = disp_unit > 0x7fffffff ? 0x7fffffff : (int)disp_unit;
    w->attr_flavor = flavor;
    w->attr_model = w->model;
    w->attr_size = size;
    w->attr_disp_unit = w->disp_unit;
    if (mem)
        *(void **)mem = base;
    w->magic = LOCUS_WIN_MAGIC;
    *out = w;
    return MPI_SUCCESS;
}

/* Argument checks and creation for every creating call. */
static int create_call(int flavor, void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                       MPI_Comm comm, void *mem, MPI_Win *win, const char *fn)
{
    LOCUS_CHECK_INIT(fn);
    locus_comm_t *c = locus_comm_of(comm);
    if (!locus_comm_valid(c))
        return locus_mpi_err(NULL, MPI_ERR_COMM, fn);
    if (c->local)   /* windows are made over intracommunicators only */
        return locus_mpi_err(c, MPI_ERR_COMM, fn);
    if (!win || ((flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED) && !mem))
        return locus_mpi_err(c, MPI_ERR_ARG, fn);
    if (size < 0)
        return locus_mpi_err(c, MPI_ERR_SIZE, fn);
    if (disp_unit <= 0)
        return locus_mpi_err(c, MPI_ERR_DISP, fn);
    if (flavor == MPI_WIN_FLAVOR_SHARED && c->coll.num_nodes > 1) {
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail,
                 "the communicator spans %d nodes: no memory all its ranks can share",
                 c->coll.num_nodes);
        return locus_mpi_err(c, MPI_ERR_RMA_SHARED, fn);
    }
    locus_win_t *w = NULL;
    int err = win_make(c, flavor, base, size, disp_unit, info, mem, &w);
    if (err != MPI_SUCCESS)
        return locus_mpi_err(c, err, fn);
    *win = locus_win_handle(w);
    return MPI_SUCCESS;
}

/* The three flavors with memory, each in its int and _c form (generated). */
int locus_win_create_impl(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                          MPI_Comm comm, MPI_Win *win, const char *fn)
{
    return create_call(MPI_WIN_FLAVOR_CREATE, base, size, disp_unit, info, comm, NULL, win, fn);
}

int locus_win_allocate_impl(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                            void *baseptr, MPI_Win *win, const char *fn)
{
    return create_call(MPI_WIN_FLAVOR_ALLOCATE, NULL, size, disp_unit, info, comm, baseptr, win,
                       fn);
}

int locus_win_allocate_shared_impl(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                                   MPI_Comm comm, void *baseptr, MPI_Win *win, const char *fn)
{
    return create_call(MPI_WIN_FLAVOR_SHARED, NULL, size, disp_unit, info, comm, baseptr, win,
                       fn);
}

LOCUS_PMPI_WEAK(Win_create_dynamic)
int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    LOCUS_ENTRY_CS();
    return create_call(MPI_WIN_FLAVOR_DYNAMIC, MPI_BOTTOM, 0, 1, info, comm, NULL, win,
                       "MPI_Win_create_dynamic");
}

LOCUS_PMPI_WEAK(Win_free)
int PMPI_Win_free(MPI_Win *win)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Win_free");
    locus_win_t *w = win ? locus_win_of(*win) : NULL;
    if (!w)
        return locus_win_err(NULL, MPI_ERR_WIN, "MPI_Win_free");
    if (w->nlocked || w->lock_all || w->in_start || w->in_post)
        return locus_win_err(w, MPI_ERR_RMA_SYNC, "MPI_Win_free");
    /* Operations an erroneous program left unsynchronized still land. */
    int err = MPI_SUCCESS;
    for (int t = 0; t < w->nranks && err == MPI_SUCCESS; t++)
        if (w->peers[t].msg_ops || w->peers[t].npend)
            err = rma_msg_flush(w, t);
    /* Nobody frees memory another rank may still be accessing. */
    if (err == MPI_SUCCESS)
        err = locus_coll_barrier(&w->comm->coll);
    int aerr = locus_attr_clear(&w->attrs, ATTR_WIN, *win);
    int e = err != MPI_SUCCESS ? err : aerr != MPI_SUCCESS ? aerr : w->err_deferred;
    /* Reported while the window (and its handler) still exists; it goes
     * anyway: the program cannot use it after this call. */
    if (e != MPI_SUCCESS)
        locus_win_err(w, e, "MPI_Win_free");
    rma_svc_stop(w);
    win_release(w);
    *win = MPI_WIN_NULL;
    return e;
}

/*
 * MPI-4.1: any window but a dynamic one may be queried. A rank whose
 * memory this process can load and store (a node peer of a window Locus
 * allocated, or itself) gives its address here; another gives size 0 and
 * NULL.
 */
LOCUS_PMPI_WEAK(Win_shared_query_c)
int PMPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit,
                            void *baseptr)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Win_shared_query");
    locus_win_t *w = locus_win_of(win);
    if (!w)
        return locus_win_err(NULL, MPI_ERR_WIN, "MPI_Win_shared_query");
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return locus_win_err(w, MPI_ERR_RMA_FLAVOR, "MPI_Win_shared_query");
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w->nranks))
        return locus_win_err(w, MPI_ERR_RANK, "MPI_Win_shared_query");
    if (!size || !disp_unit || !baseptr)
        return locus_win_err(w, MPI_ERR_ARG, "MPI_Win_shared_query");
    if (rank == MPI_PROC_NULL) {
        /* The lowest rank with memory (rank 0 when none has). */
        rank = 0;
        for (int r = 0; r < w->nranks; r++) {
            if (w->peers[r].size > 0) {
                rank = r;
                break;
            }
        }
    }
    rma_peer_t *p = &w->peers[rank];
    *size = p->mapped ? (MPI_Aint)p->size : 0;
    *disp_unit = (MPI_Aint)p->disp_unit;
    *(void **)baseptr = p->mapped ? p->base : NULL;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Win_shared_query)
int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    LOCUS_ENTRY_CS();
    MPI_Aint du = 0;
    int err = PMPI_Win_shared_query_c(win, rank, size, disp_unit ? &du : NULL, baseptr);
    if (err == MPI_SUCCESS)
        *disp_unit = du > 0x7fffffff ? 0x7fffffff : (int)du;
    return err;
}

LOCUS_PMPI_WEAK(Win_attach)
int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Win_attach");
    locus_win_t *w = locus_win_of(win);
    if (!w)
        return locus_win_err(NULL, MPI_ERR_WIN, "MPI_Win_attach");
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return locus_win_err(w, MPI_ERR_RMA_FLAVOR, "MPI_Win_attach");
    if (size < 0)
        return locus_win_err(w, MPI_ERR_SIZE, "MPI_Win_attach");
    if (!base && size > 0)
        return locus_win_err(w, MPI_ERR_ARG, "MPI_Win_attach");
    uintptr_t b = (uintptr_t)base;
    for (int i = 0; i < w->nregions; i++) {
        rma_region_t *r = &w->regions[i];
        if (b < r->base + r->len && r->base < b + (size_t)size)
            return locus_win_err(w, MPI_ERR_RMA_ATTACH, "MPI_Win_attach");
    }
    if (w->nregions == w->capregions) {
        int cap = w->capregions ? 2 * w->capregions : 8;
        rma_region_t *n = realloc(w->regions, (size_t)cap * sizeof *n);
        if (!n)
            return locus_win_err(w, MPI_ERR_NO_MEM, "MPI_Win_attach");
        w->regions = n;
        w->capregions = cap;
    }
    w->regions[w->nregions++] = (rma_region_t){ b, (size_t)size };
    rma_regions_publish(w);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Win_detach)
int PMPI_Win_detach(MPI_Win win, const void *base)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Win_detach");
    locus_win_t *w = locus_win_of(win);
    if (!w)
        return locus_win_err(NULL, MPI_ERR_WIN, "MPI_Win_detach");
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return locus_win_err(w, MPI_ERR_RMA_FLAVOR, "MPI_Win_detach");
    for (int i = 0; i < w->nregions; i++) {
        if (w->regions[i].base == (uintptr_t)base) {
            w->regions[i] = w->regions[--w->nregions];
            rma_regions_publish(w);
            return MPI_SUCCESS;
        }
    }
    return locus_win_err(w, MPI_ERR_ARG, "MPI_Win_detach");
}
