/*
 * mpit_cvar.c — MPI_T control variables: the LOCUS_* tunables, the same
 * table `locus info` prints (name, doc), in the same order.
 *
 * What MPI_T needs beyond the table comes from where a row lives: the
 * tunables_<layer>.def file that holds it gives its category and when the
 * library reads it, so a new row needs nothing here. Only what no file can
 * say is listed below: the words of the variables that take one of a
 * fixed set (enumerations), the variables locusrun sets for the ranks, and
 * those every rank must agree on.
 *
 * Reading gives the value in force (environment, else default). Writing
 * sets the variable in this process's environment, which is where the
 * layers read it: before MPI_Init for what MPI_Init reads
 * (MPI_T_ERR_CVAR_SET_NOT_NOW after), at any time for what each
 * communicator or window reads (the collective choices at its first
 * collective, the MPI layer's and one-sided settings when it is made),
 * never for what only locusrun or locus bench read
 * (MPI_T_ERR_CVAR_SET_NEVER).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "locus_tunables.h"
#include "mpit.h"

/* Longest string value a handle reads or writes, terminator included. */
#define CVAR_STR_MAX 1024

enum {
    WHEN_NEVER,  /* not read by the MPI library (locusrun, locus bench) */
    WHEN_INIT,   /* read by MPI_Init */
    WHEN_OBJECT  /* read for each communicator or window: when it is made, or
                    (the collective choices) at its first collective */
};

/* Every tunable's name, layer by layer: a layer's .def file, then one row
 * with no name that holds what is true of all its variables (category,
 * when the library reads them, verbosity). */
typedef struct {
    const char *name;
    int cat, when, verbosity;
} layer_row_t;

#define LOCUS_TUNABLE(name, def, doc) {name, 0, 0, 0},
static const layer_row_t layer_rows[] = {
#include "tunables_launch.def"
    {NULL, MPIT_CAT_LAUNCH, WHEN_NEVER, MPI_T_VERBOSITY_USER_BASIC},
#include "tunables_place.def"
    {NULL, MPIT_CAT_PLACE, WHEN_NEVER, MPI_T_VERBOSITY_USER_BASIC},
#include "tunables_boot.def"
    {NULL, MPIT_CAT_BOOT, WHEN_INIT, MPI_T_VERBOSITY_USER_DETAIL},
#include "tunables_core.def"
    {NULL, MPIT_CAT_CORE, WHEN_INIT, MPI_T_VERBOSITY_TUNER_BASIC},
#include "tunables_shm.def"
    {NULL, MPIT_CAT_SHM, WHEN_INIT, MPI_T_VERBOSITY_TUNER_BASIC},
#include "tunables_tcp.def"
    {NULL, MPIT_CAT_TCP, WHEN_INIT, MPI_T_VERBOSITY_TUNER_BASIC},
#include "tunables_ofi.def"
    {NULL, MPIT_CAT_OFI, WHEN_INIT, MPI_T_VERBOSITY_TUNER_BASIC},
#include "tunables_coll.def"
    {NULL, MPIT_CAT_COLL, WHEN_OBJECT, MPI_T_VERBOSITY_TUNER_BASIC},
#include "tunables_mpi.def"
    {NULL, MPIT_CAT_MPI, WHEN_OBJECT, MPI_T_VERBOSITY_TUNER_BASIC},
#include "tunables_rma.def"
    {NULL, MPIT_CAT_RMA, WHEN_OBJECT, MPI_T_VERBOSITY_TUNER_BASIC},
#include "tunables_bench.def"
    {NULL, MPIT_CAT_BENCH, WHEN_NEVER, MPI_T_VERBOSITY_USER_BASIC},
};
#undef LOCUS_TUNABLE

/* Variables that take one of a fixed set of words: an MPI_INT whose value
 * is the word's position (the enumeration is named after the variable). */
static const mpit_enum_t cvar_enums[] = {
    {"LOCUS_YIELD", "auto,always,never"},
    {"LOCUS_SINGLE_COPY", "auto,cma,none"},
    {"LOCUS_COLL_BARRIER", "auto,dissemination,shm"},
    {"LOCUS_COLL_BCAST", "auto,binomial,scatter_allgather,linear,shm"},
    {"LOCUS_COLL_REDUCE", "auto,binomial,rabenseifner,linear"},
    {"LOCUS_COLL_ALLREDUCE", "auto,recursive_doubling,rabenseifner,ring,reduce_bcast,shm"},
    {"LOCUS_COLL_ALLGATHER", "auto,recursive_doubling,ring,gather_bcast"},
    {"LOCUS_COLL_ALLTOALL", "auto,linear,pairwise"},
    {"LOCUS_COLL_GATHER", "auto,linear,binomial"},
    {"LOCUS_COLL_REDUCE_SCATTER", "auto,reduce_scatterv,ring"},
    {"LOCUS_COLL_SCAN", "auto,recursive_doubling,linear"},
    {"LOCUS_COLL_HIER", "auto,on,off"},
    {"LOCUS_COLL_SHM", "on,off"},
    {"LOCUS_COLL_NODE_LAYOUT", "block,cyclic"},
    {"LOCUS_RMA_PATH", "auto,nocma,msg"},
    {"LOCUS_OFI_RMA", "auto,on,off"},
    {"LOCUS_OFI_MR_CACHE", "auto,on,off"},
    {"LOCUS_OFI_INJECT", "auto,on,off"},
    {"LOCUS_OFI_PUSH", "auto,on,off"},
    {"LOCUS_OFI_BATCH", "auto,on,off"},
    {"LOCUS_OFI_COMPACT", "auto,on,off"},
};

/* Set by locusrun for each rank: never written through MPI_T. */
static const char *const set_by_launcher[] = {
    "LOCUS_JOBID", "LOCUS_NODE_NCPUS", "LOCUS_NET_IFACES", NULL};
/* Read at MPI_Init and decided alike on every rank: equal everywhere. */
static const char *const all_equal[] = {"LOCUS_TRANSPORTS", NULL};

typedef struct {
    const locus_tunable_t *t;
    int cat, when, verbosity, scope;
    const mpit_enum_t *en;
    MPI_Datatype type;
} cvar_meta_t;

static int listed(const char *const *list, const char *name)
{
    for (; *list; list++)
        if (strcmp(*list, name) == 0)
            return 1;
    return 0;
}

/* The row of the layer whose file holds `name`, or NULL. */
static const layer_row_t *layer_of(const char *name)
{
    int found = 0;
    for (size_t i = 0; i < sizeof layer_rows / sizeof layer_rows[0]; i++) {
        if (!layer_rows[i].name) {
            if (found)
                return &layer_rows[i];
        } else if (strcmp(layer_rows[i].name, name) == 0) {
            found = 1;
        }
    }
    return NULL;
}

/* Everything MPI_T says about control variable i; -1 when there is none. */
static int cvar_meta(int i, cvar_meta_t *m)
{
    int n;
    const locus_tunable_t *tab = locus_tunables(&n);
    if (i < 0 || i >= n)
        return -1;
    memset(m, 0, sizeof *m);
    m->t = &tab[i];
    m->cat = -1;   /* a .def file missing above: the tools test notices */
    m->when = WHEN_NEVER;
    m->verbosity = MPI_T_VERBOSITY_USER_BASIC;
    const layer_row_t *layer = layer_of(m->t->name);
    if (layer) {
        m->cat = layer->cat;
        m->when = layer->when;
        m->verbosity = layer->verbosity;
    }
    if (strncmp(m->t->doc, "testing", 7) == 0)
        m->verbosity = MPI_T_VERBOSITY_MPIDEV_DETAIL;
    if (listed(set_by_launcher, m->t->name)) {
        m->when = WHEN_NEVER;
        m->verbosity = MPI_T_VERBOSITY_MPIDEV_BASIC;
    }
    m->scope = m->when == WHEN_NEVER ? MPI_T_SCOPE_READONLY
               : m->when == WHEN_OBJECT || listed(all_equal, m->t->name) ? MPI_T_SCOPE_ALL_EQ
               : MPI_T_SCOPE_LOCAL;
    for (size_t e = 0; e < sizeof cvar_enums / sizeof cvar_enums[0]; e++)
        if (strcmp(cvar_enums[e].name, m->t->name) == 0)
            m->en = &cvar_enums[e];
    long v;
    m->type = m->en ? MPI_INT
              : locus_parse_size(m->t->default_val, &v) == 0 ? MPI_UNSIGNED_LONG : MPI_CHAR;
    return 0;
}

int mpit_cvar_count(void)
{
    int n;
    locus_tunables(&n);
    return n;
}

int mpit_cvar_category(int index)
{
    cvar_meta_t m;
    return cvar_meta(index, &m) == 0 ? m.cat : -1;
}

const mpit_enum_t *mpit_cvar_enum(int index)
{
    cvar_meta_t m;
    return cvar_meta(index, &m) == 0 ? m.en : NULL;
}

int mpit_cvar_enum_owns(const mpit_enum_t *e)
{
    for (size_t i = 0; i < sizeof cvar_enums / sizeof cvar_enums[0]; i++)
        if (e == &cvar_enums[i])
            return 1;
    return 0;
}

/* The handle when it is one of the live ones, else NULL. */
static mpit_cvar_handle_t *cvar_handle_find(MPI_T_cvar_handle h)
{
    for (mpit_cvar_handle_t *c = locus_mpit.cvar_handles; c; c = c->next)
        if ((MPI_T_cvar_handle)c == h)
            return c;
    return NULL;
}

void mpit_cvar_handles_free(void)
{
    while (locus_mpit.cvar_handles) {
        mpit_cvar_handle_t *c = locus_mpit.cvar_handles;
        locus_mpit.cvar_handles = c->next;
        free(c);
    }
}

int locus_t_cvar_get_num_impl(int *num_cvar)
{
    *num_cvar = mpit_cvar_count();
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(T_cvar_get_info)
int PMPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                         int *bind, int *scope)
{
    LOCUS_ENTRY_CS();
    MPIT_CHECK_INIT();
    cvar_meta_t m;
    if (cvar_meta(cvar_index, &m) != 0)
        return MPI_T_ERR_INVALID_INDEX;
    mpit_str_out(name, name_len, m.t->name);
    mpit_str_out(desc, desc_len, m.t->doc);
    if (verbosity)
        *verbosity = m.verbosity;
    if (datatype)
        *datatype = m.type;
    if (enumtype)
        *enumtype = m.en ? (MPI_T_enum)m.en : MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (scope)
        *scope = m.scope;
    return MPI_SUCCESS;
}

int locus_t_cvar_get_index_impl(const char *name, int *cvar_index)
{
    if (!name)
        return MPI_T_ERR_INVALID;
    int n;
    const locus_tunable_t *tab = locus_tunables(&n);
    const locus_tunable_t *t = locus_tunable_find(name);
    if (!t)
        return MPI_T_ERR_INVALID_NAME;
    *cvar_index = (int)(t - tab);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(T_cvar_handle_alloc)
int PMPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle,
                             int *count)
{
    LOCUS_ENTRY_CS();
    (void)obj_handle; /* every control variable is bound to no object */
    MPIT_CHECK_INIT();
    cvar_meta_t m;
    if (cvar_meta(cvar_index, &m) != 0)
        return MPI_T_ERR_INVALID_INDEX;
    if (!handle || !count)
        return MPI_T_ERR_INVALID;
    mpit_cvar_handle_t *c = calloc(1, sizeof *c);
    if (!c)
        return MPI_T_ERR_MEMORY;
    c->index = cvar_index;
    c->next = locus_mpit.cvar_handles;
    locus_mpit.cvar_handles = c;
    *handle = (MPI_T_cvar_handle)c;
    *count = m.type == MPI_CHAR ? CVAR_STR_MAX : 1;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(T_cvar_handle_free)
int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    LOCUS_ENTRY_CS();
    MPIT_CHECK_INIT();
    mpit_cvar_handle_t *c = handle ? cvar_handle_find(*handle) : NULL;
    if (!c)
        return MPI_T_ERR_INVALID_HANDLE;
    for (mpit_cvar_handle_t **pp = &locus_mpit.cvar_handles; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    free(c);
    *handle = MPI_T_CVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}

/* The variable behind a live handle, for a read or write through buf. */
static int handle_meta(MPI_T_cvar_handle handle, const void *buf, cvar_meta_t *m)
{
    MPIT_CHECK_INIT();
    mpit_cvar_handle_t *c = cvar_handle_find(handle);
    if (!c)
        return MPI_T_ERR_INVALID_HANDLE;
    if (!buf)
        return MPI_T_ERR_INVALID;
    cvar_meta(c->index, m);
    return MPI_SUCCESS;
}

/* The position of word v in e, or -1. */
static int enum_position(const mpit_enum_t *e, const char *v)
{
    char item[64];
    for (int i = 0; mpit_enum_item(e, i, item, sizeof item) == 0; i++)
        if (strcmp(item, v) == 0)
            return i;
    return -1;
}

LOCUS_PMPI_WEAK(T_cvar_read)
int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    LOCUS_ENTRY_CS();
    cvar_meta_t m;
    int rc = handle_meta(handle, buf, &m);
    if (rc != MPI_SUCCESS)
        return rc;
    /* A secret reads as locus info shows it: a tool logging every cvar
     * must not log the job's key. */
    const char *v = locus_tunable_shown(m.t->name);
    if (m.type == MPI_CHAR) {
        snprintf(buf, CVAR_STR_MAX, "%s", v);
    } else if (m.en) {
        /* A word the layer would refuse at MPI_Init has no value here. */
        int pos = enum_position(m.en, v);
        if (pos < 0)
            return MPI_T_ERR_INVALID;
        *(int *)buf = pos;
    } else {
        long n;
        if (locus_parse_size(v, &n) != 0)
            return MPI_T_ERR_INVALID;
        *(unsigned long *)buf = (unsigned long)n;
    }
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(T_cvar_write)
int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    LOCUS_ENTRY_CS();
    cvar_meta_t m;
    int rc = handle_meta(handle, buf, &m);
    if (rc != MPI_SUCCESS)
        return rc;
    if (m.when == WHEN_NEVER)
        return MPI_T_ERR_CVAR_SET_NEVER;
    /* What MPI_Init read stays in force until the process ends. */
    if (m.when == WHEN_INIT && locus_mpi.state != 0)
        return MPI_T_ERR_CVAR_SET_NOT_NOW;
    char word[CVAR_STR_MAX];
    if (m.type == MPI_CHAR) {
        if (memchr(buf, '\0', CVAR_STR_MAX) == NULL)
            return MPI_T_ERR_INVALID;
        snprintf(word, sizeof word, "%s", (const char *)buf);
    } else if (m.en) {
        if (mpit_enum_item(m.en, *(const int *)buf, word, sizeof word) != 0)
            return MPI_T_ERR_INVALID;
    } else {
        snprintf(word, sizeof word, "%lu", *(const unsigned long *)buf);
    }
    /* An empty string restores the default (the table's rule for empty). */
    if (setenv(m.t->name, word, 1) != 0)
        return errno == ENOMEM ? MPI_T_ERR_MEMORY : MPI_T_ERR_INVALID;
    return MPI_SUCCESS;
}
