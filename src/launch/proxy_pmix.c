/*
 * proxy_pmix.c — the PMIx server of a node's proxy (locusrun --mpi pmix),
 * through OpenPMIx's server library, so that programs whose MPI speaks
 * PMIx (Open MPI's) start under locusrun with its placement, as MPICH's
 * do over PMI-1.
 *
 * The proxy tells the server the job (sizes, every rank's node, local
 * rank and host) and its local ranks before forking them; each rank's
 * environment comes from PMIx_server_setup_fork. libpmix calls back on
 * its own thread: the upcalls only queue a request and wake the proxy's
 * event loop, which does the work. A fence over the whole job goes to the
 * front end like a PMI-1 barrier: this node's data as one key-value pair
 * (hex), then "fence WORLD:pmix<n>"; at barrier_out every node's pair is
 * here and the server gets the concatenation in node order. Data is not
 * fetched on demand (direct modex): fences must collect.
 */
#include "proxy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef LOCUS_HAVE_PMIX
#include <errno.h>
#include <fcntl.h>
#include <pmix.h>
#include <pmix_server.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { REQ_FENCE, REQ_ABORT, REQ_FINALIZED };

#define FINALIZE_WAIT_MS 2000

typedef struct pmix_req {
    int kind;
    int rank;                   /* abort, finalized: the client */
    int status;                 /* abort: its exit code */
    int whole_job;              /* fence: over every rank of the job */
    char *data;                 /* fence: this node's contribution */
    size_t ndata;
    long seq;                   /* fence: its number in the job */
    char msg[256];              /* abort: the client's message */
    pmix_modex_cbfunc_t modex_cb;
    pmix_op_cbfunc_t op_cb;
    void *cbdata;
    struct pmix_req *next;
} pmix_req_t;

struct proxy_pmix {
    pthread_mutex_t mu;         /* guards queue: filled on libpmix's thread */
    pmix_req_t *queue, *queue_tail;
    int wake[2];                /* a byte per queued request */
    pmix_req_t *fences;         /* relayed to the front end, waiting */
    long next_seq;
    int server_up;
    char nspace[PMIX_MAX_NSLEN + 1];
    char dir[256];              /* the server's rendezvous files */
    char shmdir[256];           /* /dev/shm/locus.<jobid>.pmix-n<node>: Open MPI's segments */
};

/* libpmix's upcalls carry no context of ours; one server per proxy. */
static struct proxy_pmix *the_server;

/* ---- upcalls (libpmix's thread) ----------------------------------------- */

static void enqueue(pmix_req_t *r)
{
    struct proxy_pmix *s = the_server;
    r->next = NULL;
    pthread_mutex_lock(&s->mu);
    if (s->queue_tail)
        s->queue_tail->next = r;
    else
        s->queue = r;
    s->queue_tail = r;
    pthread_mutex_unlock(&s->mu);
    char c = 1;
    if (write(s->wake[1], &c, 1) < 0 && errno != EAGAIN) {
        /* the loop also polls the queue every half second */
    }
}

static pmix_status_t up_connected(const pmix_proc_t *proc, void *obj, pmix_op_cbfunc_t cb,
                                  void *cbdata)
{
    (void)proc, (void)obj, (void)cb, (void)cbdata;
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t up_finalized(const pmix_proc_t *proc, void *obj, pmix_op_cbfunc_t cb,
                                  void *cbdata)
{
    (void)obj, (void)cb, (void)cbdata;
    pmix_req_t *r = calloc(1, sizeof *r);
    if (r) {
        r->kind = REQ_FINALIZED;
        r->rank = (int)proc->rank;
        enqueue(r);
    }
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t up_abort(const pmix_proc_t *proc, void *obj, int status, const char msg[],
                              pmix_proc_t procs[], size_t nprocs, pmix_op_cbfunc_t cb,
                              void *cbdata)
{
    (void)obj, (void)procs, (void)nprocs; /* any abort ends the whole job */
    pmix_req_t *r = calloc(1, sizeof *r);
    if (!r)
        return PMIX_ERR_NOMEM;
    r->kind = REQ_ABORT;
    r->rank = (int)proc->rank;
    r->status = status;
    snprintf(r->msg, sizeof r->msg, "%s", msg ? msg : "");
    r->op_cb = cb;
    r->cbdata = cbdata;
    enqueue(r);
    return PMIX_SUCCESS;
}

static pmix_status_t up_fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                              size_t ninfo, char *data, size_t ndata, pmix_modex_cbfunc_t cb,
                              void *cbdata)
{
    (void)info, (void)ninfo;
    pmix_req_t *r = calloc(1, sizeof *r);
    if (!r || (ndata && !(r->data = malloc(ndata)))) {
        free(r);
        return PMIX_ERR_NOMEM;
    }
    r->kind = REQ_FENCE;
    r->whole_job = nprocs == 1 && procs[0].rank == PMIX_RANK_WILDCARD &&
                   strcmp(procs[0].nspace, the_server->nspace) == 0;
    if (ndata)
        memcpy(r->data, data, ndata);
    r->ndata = ndata;
    r->modex_cb = cb;
    r->cbdata = cbdata;
    enqueue(r);
    return PMIX_SUCCESS;
}

static pmix_status_t up_dmodex(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
                               pmix_modex_cbfunc_t cb, void *cbdata)
{
    (void)proc, (void)info, (void)ninfo, (void)cb, (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED; /* fences collect the data */
}

static pmix_server_module_t module = {
    .client_connected = up_connected, .client_finalized = up_finalized, .abort = up_abort,
    .fence_nb = up_fence, .direct_modex = up_dmodex,
};

/* ---- the proxy's side (event loop thread) -------------------------------- */

/* A libpmix operation's completion, waited for in short sleeps. */
typedef struct {
    atomic_int done;
    atomic_int status;
} op_wait_t;

static void op_done(pmix_status_t status, void *cbdata)
{
    op_wait_t *w = cbdata;
    atomic_store(&w->status, status);
    atomic_store(&w->done, 1);
}

static pmix_status_t op_wait(op_wait_t *w, pmix_status_t started)
{
    if (started == PMIX_OPERATION_SUCCEEDED)
        return PMIX_SUCCESS;
    if (started != PMIX_SUCCESS)
        return started;
    for (int i = 0; i < 200000 && !atomic_load(&w->done); i++) {
        struct timespec ts = { 0, 50 * 1000 };
        nanosleep(&ts, NULL);
    }
    return atomic_load(&w->done) ? (pmix_status_t)atomic_load(&w->status) : PMIX_ERR_TIMEOUT;
}

static void release_buf(void *cbdata)
{
    free(cbdata);
}

static prank_t *local_rank(proxy_t *px, int rank)
{
    for (int i = 0; i < px->nlocal; i++)
        if (px->ranks[i].rank == rank)
            return &px->ranks[i];
    return NULL;
}

/* Node `node`'s name in the front end's comma list. */
static void host_of(const proxy_t *px, int node, char *out, size_t cap)
{
    const char *h = px->pmix_hosts;
    for (int i = 0; i < node && h; i++)
        h = (h = strchr(h, ',')) ? h + 1 : NULL;
    size_t n = h ? strcspn(h, ",") : 0;
    snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), h ? h : "");
}

int proxy_pmix_setup(proxy_t *px, const char *hosts, const char *nodes)
{
    free(px->pmix_hosts);
    free(px->pmix_node_of);
    px->pmix_hosts = strdup(hosts);
    px->pmix_node_of = malloc((size_t)px->size * sizeof *px->pmix_node_of);
    if (!px->pmix_hosts || !px->pmix_node_of)
        return -1;
    const char *p = nodes;
    for (int r = 0; r < px->size; r++) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v >= px->nnodes || (*end != ',' && *end != '\0') ||
            (*end == '\0' && r + 1 < px->size))
            return -1;
        px->pmix_node_of[r] = (int)v;
        p = end + (*end == ',');
    }
    return *p == '\0' ? 0 : -1;
}

/* The job as PMIx clients see it: sizes, this node's peers, and for every
 * rank its node, host and local rank (Open MPI reads these at MPI_Init). */
static pmix_status_t register_job(proxy_t *px, struct proxy_pmix *s)
{
    void *job = PMIx_Info_list_start();
    uint32_t u = (uint32_t)px->size, nn = (uint32_t)px->nnodes, nl = (uint32_t)px->nlocal,
             one = 1;
    PMIx_Info_list_add(job, PMIX_UNIV_SIZE, &u, PMIX_UINT32);
    PMIx_Info_list_add(job, PMIX_JOB_SIZE, &u, PMIX_UINT32);
    PMIx_Info_list_add(job, PMIX_MAX_PROCS, &u, PMIX_UINT32);
    PMIx_Info_list_add(job, PMIX_NUM_NODES, &nn, PMIX_UINT32);
    PMIx_Info_list_add(job, PMIX_JOB_NUM_APPS, &one, PMIX_UINT32);
    PMIx_Info_list_add(job, PMIX_LOCAL_SIZE, &nl, PMIX_UINT32);
    PMIx_Info_list_add(job, PMIX_NODE_SIZE, &nl, PMIX_UINT32);
    PMIx_Info_list_add(job, PMIX_JOBID, px->jobid, PMIX_STRING);
    char *peers = malloc(12 * (size_t)px->nlocal + 1);
    if (!peers) {
        PMIx_Info_list_release(job);
        return PMIX_ERR_NOMEM;
    }
    size_t n = 0;
    for (int i = 0; i < px->nlocal; i++)
        n += (size_t)sprintf(peers + n, "%s%d", i ? "," : "", px->ranks[i].rank);
    peers[n] = '\0';
    PMIx_Info_list_add(job, PMIX_LOCAL_PEERS, peers, PMIX_STRING);
    free(peers);
    pmix_rank_t ldr = (pmix_rank_t)px->ranks[0].rank;
    PMIx_Info_list_add(job, PMIX_LOCALLDR, &ldr, PMIX_PROC_RANK);

    int *seen = calloc((size_t)px->nnodes, sizeof *seen);
    pmix_status_t rc = seen ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
    for (int r = 0; r < px->size && rc == PMIX_SUCCESS; r++) {
        int node = px->pmix_node_of[r];
        uint16_t lr = (uint16_t)seen[node]++;
        uint32_t nid = (uint32_t)node, app = 0;
        pmix_rank_t rank = (pmix_rank_t)r;
        char host[256];
        host_of(px, node, host, sizeof host);
        void *pl = PMIx_Info_list_start();
        PMIx_Info_list_add(pl, PMIX_RANK, &rank, PMIX_PROC_RANK);
        PMIx_Info_list_add(pl, PMIX_GLOBAL_RANK, &rank, PMIX_PROC_RANK);
        PMIx_Info_list_add(pl, PMIX_APPNUM, &app, PMIX_UINT32);
        PMIx_Info_list_add(pl, PMIX_LOCAL_RANK, &lr, PMIX_UINT16);
        PMIx_Info_list_add(pl, PMIX_NODE_RANK, &lr, PMIX_UINT16);
        PMIx_Info_list_add(pl, PMIX_NODEID, &nid, PMIX_UINT32);
        PMIx_Info_list_add(pl, PMIX_HOSTNAME, host, PMIX_STRING);
        pmix_data_array_t proc;
        rc = PMIx_Info_list_convert(pl, &proc);
        PMIx_Info_list_release(pl);
        if (rc == PMIX_SUCCESS) {
            rc = PMIx_Info_list_add(job, PMIX_PROC_DATA, &proc, PMIX_DATA_ARRAY);
            PMIX_DATA_ARRAY_DESTRUCT(&proc);
        }
    }
    free(seen);
    pmix_data_array_t all;
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Info_list_convert(job, &all);
    PMIx_Info_list_release(job);
    if (rc != PMIX_SUCCESS)
        return rc;
    op_wait_t w = { 0, 0 };
    rc = op_wait(&w, PMIx_server_register_nspace(s->nspace, px->nlocal, all.array, all.size,
                                                 op_done, &w));
    PMIX_DATA_ARRAY_DESTRUCT(&all);
    for (int i = 0; i < px->nlocal && rc == PMIX_SUCCESS; i++) {
        pmix_proc_t proc;
        PMIX_LOAD_PROCID(&proc, s->nspace, (pmix_rank_t)px->ranks[i].rank);
        op_wait_t wc = { 0, 0 };
        rc = op_wait(&wc, PMIx_server_register_client(&proc, getuid(), getgid(), NULL, op_done,
                                                      &wc));
    }
    return rc;
}

int proxy_pmix_start(proxy_t *px)
{
    if (!px->pmix_hosts)
        return 0; /* no --mpi pmix */
    struct proxy_pmix *s = calloc(1, sizeof *s);
    if (!s || pipe2(s->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
        free(s);
        proxy_fail(px, NULL, 1, "%s: PMIx server: out of resources", px->host);
        return -1;
    }
    pthread_mutex_init(&s->mu, NULL);
    the_server = px->pmix = s;
    snprintf(s->nspace, sizeof s->nspace, "locus.%s", px->jobid);
    snprintf(s->dir, sizeof s->dir, "%s/locus-pmix.%s.%d", launch_tmpdir(), px->jobid,
             px->nodeid);
    if (mkdir(s->dir, 0700) < 0) {
        proxy_fail(px, NULL, 1, "%s: PMIx server: cannot make %s: %s", px->host, s->dir,
                   strerror(errno));
        return -1;
    }
    /* Under the job's /dev/shm prefix, so the node's cleanup removes it. */
    snprintf(s->shmdir, sizeof s->shmdir, "/dev/shm/locus.%s.pmix-n%d", px->jobid, px->nodeid);
    if (mkdir(s->shmdir, 0700) < 0)
        s->shmdir[0] = '\0'; /* Open MPI then uses its default */
    /* No shared-memory data store: its files would outlive a killed proxy. */
    setenv("PMIX_MCA_gds", "hash", 1);
    char host[256];
    host_of(px, px->nodeid, host, sizeof host);
    pmix_rank_t me = (pmix_rank_t)px->nodeid;
    pmix_info_t info[4];
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_TMPDIR, s->dir, PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_SYSTEM_TMPDIR, s->dir, PMIX_STRING);
    PMIX_INFO_LOAD(&info[2], PMIX_HOSTNAME, host, PMIX_STRING);
    PMIX_INFO_LOAD(&info[3], PMIX_SERVER_RANK, &me, PMIX_PROC_RANK);
    pmix_status_t rc = PMIx_server_init(&module, info, 4);
    for (int i = 0; i < 4; i++)
        PMIX_INFO_DESTRUCT(&info[i]);
    if (rc != PMIX_SUCCESS) {
        proxy_fail(px, NULL, 1, "%s: PMIx server: PMIx_server_init failed: %s", px->host,
                   PMIx_Error_string(rc));
        return -1;
    }
    s->server_up = 1;
    rc = register_job(px, s);
    if (rc != PMIX_SUCCESS) {
        proxy_fail(px, NULL, 1, "%s: PMIx server: cannot register the job: %s", px->host,
                   PMIx_Error_string(rc));
        return -1;
    }
    return 0;
}

char **proxy_pmix_fork_env(proxy_t *px, prank_t *p)
{
    if (!px->pmix)
        return NULL;
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, px->pmix->nspace, (pmix_rank_t)p->rank);
    char **env = NULL;
    if (PMIx_server_setup_fork(&proc, &env) != PMIX_SUCCESS) {
        proxy_pmix_env_free(env);
        return NULL;
    }
    return env;
}

void proxy_pmix_env_free(char **env)
{
    if (env)
        PMIX_ARGV_FREE(env);
}

int proxy_pmix_wake_fd(const proxy_t *px)
{
    return px->pmix ? px->pmix->wake[0] : -1;
}

/*
 * Open MPI 4.1 takes a PMIx server for its own mpirun's, or for one of the
 * resource managers it knows (Slurm, IBM's JSM); anything else makes each
 * rank a singleton. JSM's marker leads it down the direct-launch path srun
 * --mpi=pmix takes: everything from PMIx, already bound. Its session
 * directory and its shared-memory segments go in this job's directories,
 * which the job's end (or locusrun's cleanup) removes even when the ranks
 * were killed.
 */
void proxy_pmix_child_env(const proxy_t *px)
{
    if (!px->pmix)
        return;
    setenv("JSM_JSRUN_PORT", "locusrun", 1);
    setenv("OMPI_MCA_orte_tmpdir_base", px->pmix->dir, 1);
    if (px->pmix->shmdir[0])
        setenv("OMPI_MCA_btl_vader_backing_directory", px->pmix->shmdir, 1);
}

static void hex_put(char *out, const char *data, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[(unsigned char)data[i] >> 4];
        out[2 * i + 1] = digits[(unsigned char)data[i] & 15];
    }
    out[2 * n] = '\0';
}

/* Decodes hex into out (n/2 bytes); -1 when it is not hex. */
static int hex_get(const char *hex, size_t n, char *out)
{
    for (size_t i = 0; i < n; i += 2) {
        unsigned v;
        if (sscanf(hex + i, "%2x", &v) != 1)
            return -1;
        out[i / 2] = (char)v;
    }
    return 0;
}

static void fence_key(char *key, size_t cap, long seq, int node)
{
    snprintf(key, cap, "locus.pmix.%ld.%d", seq, node);
}

static void fence_start(proxy_t *px, struct proxy_pmix *s, pmix_req_t *r)
{
    if (!r->whole_job) {
        r->modex_cb(PMIX_ERR_NOT_SUPPORTED, NULL, 0, r->cbdata, NULL, NULL);
        free(r->data);
        free(r);
        return;
    }
    if (px->nnodes == 1) {
        r->modex_cb(PMIX_SUCCESS, r->data, r->ndata, r->cbdata, release_buf, r->data);
        free(r);
        return;
    }
    r->seq = s->next_seq++;
    char key[64], group[64], *val = malloc(2 * r->ndata + 2);
    fence_key(key, sizeof key, r->seq, px->nodeid);
    snprintf(group, sizeof group, "WORLD:pmix%ld", r->seq);
    if (val) {
        val[0] = 'x'; /* never empty */
        hex_put(val + 1, r->data, r->ndata);
    }
    r->next = s->fences;
    s->fences = r;
    /* Queued first: in a tree the fence may complete within the call. */
    if (!val || proxy_up_pair(px, key, val) < 0 || proxy_up_fence(px, group) < 0)
        proxy_fail(px, NULL, 1, "%s: PMIx server: cannot relay a fence", px->host);
    free(val);
}

int proxy_pmix_fence_done(proxy_t *px, const char *group)
{
    struct proxy_pmix *s = px->pmix;
    long seq;
    char tail;
    if (!s || sscanf(group, "WORLD:pmix%ld%c", &seq, &tail) != 1)
        return 0;
    pmix_req_t **pp = &s->fences;
    while (*pp && (*pp)->seq != seq)
        pp = &(*pp)->next;
    pmix_req_t *r = *pp;
    if (!r)
        return 1;
    *pp = r->next;
    /* Every node's contribution, in node order. */
    size_t total = 0;
    const char **vals = calloc((size_t)px->nnodes, sizeof *vals);
    int bad = -1;
    for (int n = 0; vals && n < px->nnodes; n++) {
        char key[64];
        fence_key(key, sizeof key, seq, n);
        if (n == px->nodeid) {
            total += r->ndata;
            continue;
        }
        vals[n] = kvs_get(&px->kvs, key);
        size_t len = vals[n] ? strlen(vals[n]) : 0;
        if (len == 0 || vals[n][0] != 'x' || (len - 1) % 2) {
            bad = n;
            break;
        }
        total += (len - 1) / 2;
    }
    char *buf = vals && bad < 0 ? malloc(total ? total : 1) : NULL;
    size_t at = 0;
    for (int n = 0; buf && n < px->nnodes; n++) {
        if (n == px->nodeid) {
            if (r->ndata)
                memcpy(buf + at, r->data, r->ndata);
            at += r->ndata;
        } else {
            size_t len = strlen(vals[n]) - 1;
            if (hex_get(vals[n] + 1, len, buf + at) < 0) {
                bad = n;
                free(buf);
                buf = NULL;
            }
            at += len / 2;
        }
    }
    free(vals);
    if (buf) {
        r->modex_cb(PMIX_SUCCESS, buf, total, r->cbdata, release_buf, buf);
    } else {
        r->modex_cb(PMIX_ERROR, NULL, 0, r->cbdata, NULL, NULL);
        proxy_fail(px, NULL, 1, "%s: PMIx fence %ld: node %d's data is missing or malformed",
                   px->host, seq, bad);
    }
    free(r->data);
    free(r);
    return 1;
}

void proxy_pmix_progress(proxy_t *px)
{
    struct proxy_pmix *s = px->pmix;
    if (!s)
        return;
    char drain[64];
    while (read(s->wake[0], drain, sizeof drain) > 0)
        ;
    pthread_mutex_lock(&s->mu);
    pmix_req_t *r = s->queue;
    s->queue = s->queue_tail = NULL;
    pthread_mutex_unlock(&s->mu);
    while (r) {
        pmix_req_t *next = r->next;
        prank_t *p = local_rank(px, r->rank);
        if (r->kind == REQ_FENCE) {
            fence_start(px, s, r);
            r = next;
            continue;
        }
        if (r->kind == REQ_FINALIZED && p) {
            p->pmi_state = PMI_ST_FINALIZED;
        } else if (r->kind == REQ_ABORT) {
            if (p)
                proxy_rank_abort(px, p, r->status, r->msg);
            else
                proxy_fail(px, NULL, 1, "%s: rank %d called abort through PMIx", px->host,
                           r->rank);
            if (r->op_cb)
                r->op_cb(PMIX_SUCCESS, r->cbdata);
        }
        free(r);
        r = next;
    }
}

static void *finalize_run(void *done)
{
    PMIx_server_finalize();
    atomic_store((atomic_int *)done, 1);
    return NULL;
}

/* PMIx_server_finalize, bounded: a connection that never finished its
 * handshake (a client of the job's user that is no rank, one that died
 * in it) held it forever, and the job with it. 1: done; 0: abandoned. */
static int server_finalize(proxy_t *px)
{
    static atomic_int done;
    pthread_t t;
    atomic_store(&done, 0);
    if (pthread_create(&t, NULL, finalize_run, &done) != 0) {
        PMIx_server_finalize();
        return 1;
    }
    for (int i = 0; i < FINALIZE_WAIT_MS && !atomic_load(&done); i++) {
        struct timespec ts = { 0, 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    if (atomic_load(&done)) {
        pthread_join(t, NULL);
        return 1;
    }
    pthread_detach(t);
    fprintf(stderr, "locusrun: %s: the PMIx server did not finalize within %d ms (a "
            "connection that is no rank's holds it); ending without it\n", px->host,
            FINALIZE_WAIT_MS);
    return 0;
}

void proxy_pmix_stop(proxy_t *px)
{
    struct proxy_pmix *s = px->pmix;
    if (!s)
        return;
    proxy_pmix_progress(px); /* answer what is queued; fences left fail below */
    for (pmix_req_t *r = s->fences, *next; r; r = next) {
        next = r->next;
        r->modex_cb(PMIX_ERR_LOST_CONNECTION, NULL, 0, r->cbdata, NULL, NULL);
        free(r->data);
        free(r);
    }
    int finalized = !s->server_up || server_finalize(px);
    if (s->dir[0])
        launch_rmtree(s->dir);
    if (s->shmdir[0])
        launch_rmtree(s->shmdir);
    if (!finalized) {
        /* libpmix may still call up: its server and queue stay. */
        px->pmix = NULL;
        return;
    }
    close(s->wake[0]);
    close(s->wake[1]);
    pthread_mutex_destroy(&s->mu);
    free(s);
    px->pmix = NULL;
    the_server = NULL;
}

#else /* built without OpenPMIx: locusrun refuses --mpi pmix */

int proxy_pmix_setup(proxy_t *px, const char *hosts, const char *nodes)
{
    (void)px, (void)hosts, (void)nodes;
    return -1;
}
int proxy_pmix_start(proxy_t *px)
{
    (void)px;
    return 0;
}
char **proxy_pmix_fork_env(proxy_t *px, prank_t *p)
{
    (void)px, (void)p;
    return NULL;
}
void proxy_pmix_env_free(char **env)
{
    (void)env;
}
int proxy_pmix_wake_fd(const proxy_t *px)
{
    (void)px;
    return -1;
}
void proxy_pmix_child_env(const proxy_t *px)
{
    (void)px;
}
void proxy_pmix_progress(proxy_t *px)
{
    (void)px;
}
int proxy_pmix_fence_done(proxy_t *px, const char *group)
{
    (void)px, (void)group;
    return 0;
}
void proxy_pmix_stop(proxy_t *px)
{
    (void)px;
}
#endif
