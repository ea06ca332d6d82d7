/* MPI_Init/Finalize and Abort: the runtime (boot, core, transports) and
 * the predefined objects set up and torn down. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "locus_tunables.h"
#include "comm/comm.h"
#include "datatype/datatype.h"
#include "dynproc/dynproc.h"
#include "init.h"
#include "locus_dyn.h"
#include "io/io.h"
#include "pt2pt/pt2pt.h"

static int init_fail(const char *why)
{
    fprintf(stderr, "locus: MPI_Init: %s\n", why);
    fflush(stderr);
    if (!locus_mpi.boot.singleton && locus_mpi.boot.pm)
        locus_boot_abort(&locus_mpi.boot, 2, why);
    exit(2);
}

/* This job's name among jobs: its id hashed (FNV-1a), every rank alike; a
 * singleton's is random, since its id (its pid) is only unique on its host. */
static uint64_t locus_job_name(const locus_boot_t *b)
{
    uint64_t h = 0xcbf29ce484222325ull;
    if (b->singleton) {
        if (getentropy(&h, sizeof h) != 0)
            h ^= (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL);
        return h;
    }
    for (const char *s = b->jobid; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static void transports_create(void)
{
    locus_boot_t *b = &locus_mpi.boot;
    char err[256] = "";
    locus_tp_init_t ti = {
        .rank = b->rank, .size = b->size,
        .local_rank = b->local_rank, .local_size = b->local_size,
        .local_ranks = b->local_ranks,
        .kvs = locus_boot_kvs(b),
        .up = &locus_core_upcalls,
        .core = &locus_mpi.core,
        .oversubscribed = locus_mpi.core.oversubscribed,
    };
    locus_tp_t *tp = NULL;
    if (locus_tp_self_create(&ti, &tp, err, sizeof err) != 0)
        init_fail(err);
    locus_core_add_tp(&locus_mpi.core, tp);
    /* Shared-memory segments (transport and collectives) are named after
     * the job id; under Hydra that is the kvs name (every rank of the job
     * sees the same one), for a singleton single<pid>. */
    setenv("LOCUS_JOBID", b->jobid, 0);
    /* LOCUS_TRANSPORTS: auto, or which of self, shm, ofi, tcp. self is
     * always on (a rank's messages to itself) and the order of preference
     * is fixed (self, shm, ofi, tcp: the core routes a peer to the first
     * that reaches it); every rank decides alike, so the creations stay
     * collective. auto: between nodes ofi where libfabric offers a fabric
     * provider, tcp otherwise. */
    const char *want = locus_tunable_str("LOCUS_TRANSPORTS");
    int use_shm = 1, use_tcp = b->nnodes > 1, use_ofi = 0;
#if LOCUS_HAVE_OFI
    if (b->nnodes > 1 && strcmp(want, "auto") == 0) {
        char prov[128];
        locus_ofi_probe(prov, sizeof prov);
        use_ofi = *prov && !locus_ofi_is_software(prov);
        use_tcp = !use_ofi;
    }
#endif
    if (strcmp(want, "auto") != 0) {
        char list[128], *save = NULL;
        use_shm = use_tcp = use_ofi = 0;
        if (strlen(want) >= sizeof list || strspn(want, ",") == strlen(want)) {
            snprintf(err, sizeof err, "LOCUS_TRANSPORTS=%.40s: expected auto or a list of "
                     "self, shm, ofi, tcp", want);
            init_fail(err);
        }
        strcpy(list, want);
        for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (strcmp(t, "shm") == 0) {
                use_shm = 1;
            } else if (strcmp(t, "tcp") == 0) {
                use_tcp = 1;
            } else if (strcmp(t, "ofi") == 0) {
#if LOCUS_HAVE_OFI
                use_ofi = 1;
#else
                snprintf(err, sizeof err, "LOCUS_TRANSPORTS=%s: this Locus was built without "
                         "libfabric (libfabric-dev): no ofi transport", want);
                init_fail(err);
#endif
            } else if (strcmp(t, "self") != 0) {
                snprintf(err, sizeof err, "LOCUS_TRANSPORTS=%s: unknown transport '%s' "
                         "(expected auto or a list of self, shm, ofi, tcp)", want, t);
                init_fail(err);
            }
        }
    }
#ifdef LOCUS_HAVE_SHM
    /* Collective over the job: every rank calls it, even alone on its node. */
    if (use_shm && !b->singleton) {
        locus_boot_phase(b, LOCUS_BOOT_PH_SHM);
        tp = NULL;
        if (locus_tp_shm_create(&ti, &tp, err, sizeof err) != 0)
            init_fail(err);
        if (tp)
            locus_core_add_tp(&locus_mpi.core, tp);
    }
#endif
#if LOCUS_HAVE_OFI
    if (use_ofi && !b->singleton) {
        locus_boot_phase(b, LOCUS_BOOT_PH_NET);
        tp = NULL;
        if (locus_tp_ofi_create(&ti, &tp, err, sizeof err) != 0)
            init_fail(err);
        locus_core_add_tp(&locus_mpi.core, tp);
    }
#endif
#ifdef LOCUS_HAVE_TCP
    if (use_tcp && !b->singleton) {
        locus_boot_phase(b, LOCUS_BOOT_PH_NET);
        tp = NULL;
        if (locus_tp_tcp_create(&ti, &tp, err, sizeof err) != 0)
            init_fail(err);
        locus_core_add_tp(&locus_mpi.core, tp);
    }
#endif
    /* Processes of other jobs (spawn, ports): peers added as they come. */
    locus_dyn_name_t me = { locus_job_name(b), b->rank };
    tp = NULL;
    if (locus_tp_dyn_create(&ti, me, &tp, err, sizeof err) != 0)
        init_fail(err);
    locus_core_add_tp(&locus_mpi.core, tp);
    locus_mpi.dyn = tp;
    locus_mpi.job = me.job;
    for (int p = 0; p < b->size; p++)
        if (!locus_mpi.core.peers[p].tp) {
            snprintf(err, sizeof err, "no transport reaches rank %d (LOCUS_TRANSPORTS=%s)", p,
                     want);
            init_fail(err);
        }
    locus_boot_phase(b, LOCUS_BOOT_PH_REST);
}

/* Releases a predefined communicator at MPI_Finalize, whatever requests
 * the program never completed still name it. */
static void comm_finalize(locus_comm_t *c)
{
    c->refs = 1;
    locus_comm_release(c);
}

/* A request that held a communicator was recycled by the core. */
static void comm_owner_release(void *owner)
{
    locus_comm_release(owner);
}

void locus_network_where(char *buf, size_t len)
{
    locus_core_t *c = &locus_mpi.core;
    snprintf(buf, len, "-");
    for (int t = 0; t < c->ntp; t++) {
        int n = 0;
        for (int p = 0; p < c->size; p++)
            n += c->peers[p].tp == c->tps[t];
        if (n == 0 || !c->tps[t]->ops->where)
            continue;
        char w[160];
        c->tps[t]->ops->where(c->tps[t], w, sizeof w);
        snprintf(buf, len, "%s %s", c->tps[t]->ops->name, w);
        return;
    }
}

/* LOCUS_REPORT_BINDINGS (locusrun --report-bindings): the line that
 * follows the launcher's binding line for this rank. */
static void network_report(void)
{
    const char *host = locus_tunable_str("LOCUS_REPORT_BINDINGS");
    if (!*host || !strcmp(host, "0"))
        return;
    char where[192];
    locus_network_where(where, sizeof where);
    fprintf(stderr, "[%s] rank %d network: %s\n", strcmp(host, "1") ? host : locus_mpi.hostname,
            locus_mpi.boot.rank,
            strcmp(where, "-") ? where : "none (no peer on another node)");
    fflush(stderr);
}

/* LOCUS_VERBOSE=1: one line per rank on stderr saying how it was set up,
 * so a user can see which transport reaches its peers and whether idle
 * polling yields (and why) without a debugger. */
static void verbose_report(void)
{
    long v = 0;
    if (locus_tunable_long("LOCUS_VERBOSE", &v, NULL, 0) != 0 || v <= 0)
        return;
    locus_core_t *c = &locus_mpi.core;
    locus_boot_t *b = &locus_mpi.boot;
    char line[1024];
    size_t k = (size_t)snprintf(line, sizeof line, "locus: rank %d of %d on %s (local %d of %d):",
                                b->rank, b->size, locus_mpi.hostname, b->local_rank,
                                b->local_size);
    for (int t = 0; t < c->ntp && k < sizeof line; t++) {
        int n = 0;
        for (int p = 0; p < c->size; p++)
            n += c->peers[p].tp == c->tps[t];
        char how[320] = "";
        if (c->tps[t]->ops->describe) {
            how[0] = ' ';
            how[1] = '[';
            c->tps[t]->ops->describe(c->tps[t], how + 2, sizeof how - 3);
            strcat(how, "]");
        }
        k += (size_t)snprintf(line + k, sizeof line - k, " %s %d peer%s%s,", c->tps[t]->ops->name,
                              n, n == 1 ? "" : "s", how);
    }
    if (k < sizeof line)
        snprintf(line + k, sizeof line - k, " yield %s (%s; %d local ranks, %d CPUs from %s)\n",
                 c->yield ? "yes" : "no", c->yield_why, c->local_size, c->node_ncpus,
                 c->node_ncpus_from);
    fputs(line, stderr);
    fflush(stderr);
}

LOCUS_PMPI_WEAK(Init_thread)
int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (locus_mpi.state != 0) {
        fprintf(stderr, "locus: MPI_Init called twice\n");
        return MPI_ERR_OTHER;
    }
    char err[256] = "";
    if (locus_boot_init(&locus_mpi.boot, err, sizeof err) != 0)
        init_fail(err);
    locus_boot_t *b = &locus_mpi.boot;
    if (locus_core_init(&locus_mpi.core, b->rank, b->size, b->local_size, err, sizeof err))
        init_fail(err);
    transports_create();
    if (gethostname(locus_mpi.hostname, sizeof locus_mpi.hostname) != 0)
        strcpy(locus_mpi.hostname, "localhost");
    locus_mpi.hostname[sizeof locus_mpi.hostname - 1] = '\0';
    verbose_report();
    network_report();

    locus_mpi.comm_free = locus_comm_free;
    locus_mpi.core.owner_release = comm_owner_release;
    int *all = malloc((size_t)b->size * sizeof *all);
    if (!all)
        init_fail("out of memory");
    for (int r = 0; r < b->size; r++)
        all[r] = r;
    /* Context ids 0/1 are WORLD's, 2/3 SELF's; the rest are agreed on. */
    locus_mpi.next_ctx = 4;
    locus_mpi.state = 1;
    if (locus_types_init() != MPI_SUCCESS ||
        locus_comm_init(&locus_comm_world, b->size, b->rank, all, 0) != MPI_SUCCESS ||
        locus_comm_init(&locus_comm_self, 1, 0, &b->rank, 2) != MPI_SUCCESS)
        init_fail("out of memory");
    free(all);
    strcpy(locus_comm_world.name, "MPI_COMM_WORLD");
    strcpy(locus_comm_self.name, "MPI_COMM_SELF");
    locus_comm_world.predefined = 1;
    locus_comm_self.predefined = 1;
    locus_mpi.thread_level = locus_thread_level_cap(required);
    locus_mpi.main_thread = (unsigned long)pthread_self();
    /* Before any other thread may call in (MPI_Init_thread returns), and
     * only at MULTIPLE: a lower level keeps the unlocked paths. */
    if (locus_mpi.thread_level == MPI_THREAD_MULTIPLE) {
        if (locus_cs_init(&locus_mpi.cs) != 0)
            init_fail("cannot create the MPI_THREAD_MULTIPLE lock");
        locus_mpi.core.cs = &locus_mpi.cs;
        locus_mpi.cs_on = 1;
    }
    if (locus_info_env_init(argc ? *argc : 0, argv ? *argv : NULL) != MPI_SUCCESS)
        init_fail("out of memory");
    /* A spawned child meets its parents (they wait in MPI_Comm_spawn). */
    if (locus_dynproc_init() != MPI_SUCCESS) {
        char why[256];
        snprintf(why, sizeof why, "cannot connect to the parent job: %s", locus_mpi.detail);
        init_fail(why);
    }
    if (provided)
        *provided = locus_mpi.thread_level;
    locus_startup_init_done();
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Init)
int PMPI_Init(int *argc, char ***argv)
{
    int provided;
    return PMPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided);
}

LOCUS_PMPI_WEAK(Initialized)
int PMPI_Initialized(int *flag)
{
    LOCUS_ENTRY_CS();
    if (!flag)
        return MPI_ERR_ARG;
    *flag = locus_mpi.state != 0;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Finalized)
int PMPI_Finalized(int *flag)
{
    LOCUS_ENTRY_CS();
    if (!flag)
        return MPI_ERR_ARG;
    *flag = locus_mpi.state == 2;
    return MPI_SUCCESS;
}

/* The entry points of these two are generated with their checks. */
int locus_query_thread_impl(int *provided)
{
    *provided = locus_mpi.thread_level;
    return MPI_SUCCESS;
}

int locus_is_thread_main_impl(int *flag)
{
    *flag = pthread_equal((pthread_t)locus_mpi.main_thread, pthread_self()) != 0;
    return MPI_SUCCESS;
}

/* One progress round for the fence of MPI_Finalize. */
static int finalize_progress(void *core)
{
    int n = locus_core_progress(core);
    if (n == 0)
        locus_core_idle(core);
    return n;
}

LOCUS_PMPI_WEAK(Finalize)
int PMPI_Finalize(void)
{
    LOCUS_ENTRY_CS();
    LOCUS_CHECK_INIT("MPI_Finalize");
    /* MPI_COMM_SELF's attributes are deleted first, newest first, so a
     * program can hang clean-up on them (as MPI-2 promises). */
    locus_attr_clear(&locus_comm_self.attrs, ATTR_COMM, MPI_COMM_SELF);
    locus_bsend_drain();
    /* MPI_COMM_WORLD's next (as MPICH does), while MPI still works for
     * their callbacks, MPI_COMM_SELF included; after the buffered sends,
     * whose communicator buffers hang on it as attributes. */
    locus_attr_clear(&locus_comm_world.attrs, ATTR_COMM, MPI_COMM_WORLD);
    locus_dynproc_finalize();
    locus_startup_report();
    locus_core_t *c = &locus_mpi.core;
    /* Nobody tears down a transport while a peer may still need it, and
     * peers may need this rank's progress until they too are here: a send
     * whose request was freed moves only while its sender progresses (the
     * pipelined copy), queued sends and acknowledgements need room in a
     * peer's ring. So the fence keeps progressing. */
    int rc = locus_boot_fence_progress(&locus_mpi.boot, finalize_progress, c);
    if (c->fatal)
        return locus_mpi_err(NULL, MPI_ERR_OTHER, "MPI_Finalize");
    /* Every rank has completed its receives now. */
    long lost = rc == 0 ? locus_core_settle(c) : 0;
    if (lost > 0) {
        fprintf(stderr, "locus: rank %d: MPI_Finalize: %ld send%s never received\n",
                locus_mpi.boot.rank, lost, lost == 1 ? " was" : "s were");
        fflush(stderr);
    }
    /* The predefined communicators go first: their collective state holds
     * sub-communicators, which return to the pool. */
    comm_finalize(&locus_comm_self);
    comm_finalize(&locus_comm_world);
    locus_core_finalize(c);
    locus_types_finalize();
    locus_info_env_finalize();
    locus_file_finalize();
    while (locus_mpi.comm_pool) {
        locus_comm_t *pc = locus_mpi.comm_pool;
        locus_mpi.comm_pool = pc->pool_next;
        free(pc);
    }
    locus_boot_finalize(&locus_mpi.boot);
    locus_mpi.state = 2;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Abort)
int PMPI_Abort(MPI_Comm comm, int errorcode)
{
    LOCUS_ENTRY_CS();
    (void)comm; /* aborts the whole job, the most MPI allows */
    fprintf(stderr, "locus: rank %d called MPI_Abort with error code %d\n",
            locus_mpi.boot.rank, errorcode);
    fflush(stderr);
    fflush(stdout);
    locus_boot_abort(&locus_mpi.boot, errorcode, "MPI_Abort");
    return MPI_SUCCESS;
}
