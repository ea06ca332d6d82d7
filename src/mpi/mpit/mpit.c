/*
 * mpit.c — the tool information interface around its variables: MPI_T
 * init/finalize (reference counted, usable before MPI_Init and after
 * MPI_Finalize), the string convention, enumerations, categories (one per
 * layer), events (Locus reports no event types, so every event call that
 * names an event or a registration is refused as the standard says) and
 * one event source: the monotonic clock.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mpit.h"

mpit_state_t locus_mpit;

void mpit_str_out(char *buf, int *len, const char *s)
{
    if (!len)
        return;
    size_t n = strlen(s);
    if (buf && *len > 0) {
        size_t room = (size_t)*len - 1;
        if (n > room)
            n = room;
        memcpy(buf, s, n);
        buf[n] = '\0';
    }
    *len = (int)n + 1;
}

int mpit_enum_count(const mpit_enum_t *e)
{
    int n = 1;
    for (const char *p = e->items; *p; p++)
        n += *p == ',';
    return n;
}

int mpit_enum_item(const mpit_enum_t *e, int i, char *buf, size_t size)
{
    const char *p = e->items;
    for (int k = 0; k < i && p; k++) {
        p = strchr(p, ',');
        if (p)
            p++;
    }
    if (i < 0 || !p || size == 0)
        return -1;
    size_t n = strcspn(p, ",");
    if (n >= size)
        n = size - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return 0;
}

const mpit_enum_t *mpit_enum_of(MPI_T_enum h)
{
    const mpit_enum_t *e = (const mpit_enum_t *)h;
    return e && (mpit_cvar_enum_owns(e) || mpit_pvar_enum_owns(e)) ? e : NULL;
}

/* ---- init and finalize ---- */

LOCUS_PMPI_WEAK(T_init_thread)
int PMPI_T_init_thread(int required, int *provided)
{
    LOCUS_ENTRY_CS();
    if (!provided)
        return MPI_T_ERR_INVALID;
    /* One thread calls it at a time (env.h says why). */
    int level = locus_thread_level_cap(required);
    *provided = level > LOCUS_MPIT_THREAD_MAX ? LOCUS_MPIT_THREAD_MAX : level;
    locus_mpit.refs++;
    return MPI_SUCCESS;
}

int locus_t_finalize_impl(void)
{
    /* The last finalize ends every session and handle of the tool. */
    if (--locus_mpit.refs == 0) {
        mpit_cvar_handles_free();
        mpit_pvar_sessions_free();
    }
    return MPI_SUCCESS;
}

/* ---- enumerations ---- */

LOCUS_PMPI_WEAK(T_enum_get_info)
int PMPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    LOCUS_ENTRY_CS();
    MPIT_CHECK_INIT();
    const mpit_enum_t *e = mpit_enum_of(enumtype);
    if (!e)
        return MPI_T_ERR_INVALID_HANDLE;
    if (num)
        *num = mpit_enum_count(e);
    mpit_str_out(name, name_len, e->name);
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(T_enum_get_item)
int PMPI_T_enum_get_item(MPI_T_enum enumtype, int indx, int *value, char *name, int *name_len)
{
    LOCUS_ENTRY_CS();
    MPIT_CHECK_INIT();
    const mpit_enum_t *e = mpit_enum_of(enumtype);
    if (!e)
        return MPI_T_ERR_INVALID_HANDLE;
    char item[64];
    if (mpit_enum_item(e, indx, item, sizeof item) != 0)
        return MPI_T_ERR_INVALID_ITEM;
    if (value)
        *value = indx;
    mpit_str_out(name, name_len, item);
    return MPI_SUCCESS;
}

/* ---- categories ---- */

static const struct {
    const char *name, *desc;
    int parent;               /* -1: a top-level category */
} categories[MPIT_NCATS] = {
    [MPIT_CAT_LAUNCH] = {"locus_launch", "the launcher (locusrun and its per-node proxies); "
                         "read by locusrun, not by the MPI library", -1},
    [MPIT_CAT_PLACE] = {"locus_place", "rank placement: cores, memory, NICs and GPUs per rank; "
                        "read by locusrun, not by the MPI library", -1},
    [MPIT_CAT_BOOT] = {"locus_boot", "start-up: the PMI client and the address exchange", -1},
    [MPIT_CAT_CORE] = {"locus_core", "requests, matching and progress: the queues of "
                       "point-to-point messages and the idle-polling rule", -1},
    [MPIT_CAT_TRANSPORT] = {"locus_transport", "the transports that move messages between "
                            "ranks (subcategories: self, shm, tcp, ofi)", -1},
    [MPIT_CAT_SELF] = {"locus_self", "the self transport: messages a rank sends to itself",
                       MPIT_CAT_TRANSPORT},
    [MPIT_CAT_SHM] = {"locus_shm", "the shared-memory transport (within a node): per-pair "
                      "rings, a large-message pool per process, single copy (CMA)",
                      MPIT_CAT_TRANSPORT},
    [MPIT_CAT_TCP] = {"locus_tcp", "the tcp transport (between nodes) and transport selection",
                      MPIT_CAT_TRANSPORT},
    [MPIT_CAT_OFI] = {"locus_ofi", "the libfabric transport (between nodes over an HPC "
                      "fabric): provider, domain, rails, eager and registration",
                      MPIT_CAT_TRANSPORT},
    [MPIT_CAT_COLL] = {"locus_coll", "collective algorithms, hierarchical and shared-memory "
                       "paths; counters per communicator", -1},
    [MPIT_CAT_MPI] = {"locus_mpi", "the MPI layer: communicators and topologies", -1},
    [MPIT_CAT_RMA] = {"locus_rma", "one-sided communication (windows)", -1},
    [MPIT_CAT_BENCH] = {"locus_bench", "the benchmark runner (locus bench); not read by the "
                        "MPI library", -1},
};

/* The indices of the members of category cat among total items, whose
 * category category_of tells: how many, the first len of them in out. */
static int cat_members(int cat, int len, int *out, int total, int (*category_of)(int))
{
    int n = 0;
    for (int i = 0; i < total; i++)
        if (category_of(i) == cat) {
            if (out && n < len)
                out[n] = i;
            n++;
        }
    return n;
}

static int cat_parent(int i)
{
    return categories[i].parent;
}

static int cat_cvars(int cat, int len, int *out)
{
    return cat_members(cat, len, out, mpit_cvar_count(), mpit_cvar_category);
}

static int cat_pvars(int cat, int len, int *out)
{
    return cat_members(cat, len, out, mpit_pvar_count(), mpit_pvar_category);
}

static int cat_subcats(int cat, int len, int *out)
{
    return cat_members(cat, len, out, MPIT_NCATS, cat_parent);
}

int locus_t_category_get_num_impl(int *num_cat)
{
    *num_cat = MPIT_NCATS;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(T_category_get_info)
int PMPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc,
                             int *desc_len, int *num_cvars, int *num_pvars, int *num_categories)
{
    LOCUS_ENTRY_CS();
    MPIT_CHECK_INIT();
    if (cat_index < 0 || cat_index >= MPIT_NCATS)
        return MPI_T_ERR_INVALID_INDEX;
    mpit_str_out(name, name_len, categories[cat_index].name);
    mpit_str_out(desc, desc_len, categories[cat_index].desc);
    if (num_cvars)
        *num_cvars = cat_cvars(cat_index, 0, NULL);
    if (num_pvars)
        *num_pvars = cat_pvars(cat_index, 0, NULL);
    if (num_categories)
        *num_categories = cat_subcats(cat_index, 0, NULL);
    return MPI_SUCCESS;
}

int locus_t_category_get_index_impl(const char *name, int *cat_index)
{
    if (!name)
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < MPIT_NCATS; i++)
        if (strcmp(categories[i].name, name) == 0) {
            *cat_index = i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}

/* The common checks of the category_get_<members> calls. */
static int cat_list_check(int cat_index, int len, const int *indices)
{
    if (cat_index < 0 || cat_index >= MPIT_NCATS)
        return MPI_T_ERR_INVALID_INDEX;
    if (len < 0 || (len > 0 && !indices))
        return MPI_T_ERR_INVALID;
    return MPI_SUCCESS;
}

/* MPI_T_category_get_cvars (mode 0), _pvars (1) and _categories (2). */
int locus_t_category_get_cvars_impl(int mode, int cat_index, int len, int indices[])
{
    static int (*const members[])(int, int, int *) = { cat_cvars, cat_pvars, cat_subcats };
    int rc = cat_list_check(cat_index, len, indices);
    if (rc == MPI_SUCCESS)
        members[mode](cat_index, len, indices);
    return rc;
}

LOCUS_PMPI_WEAK(T_category_get_num_events)
int PMPI_T_category_get_num_events(int cat_index, int *num_events)
{
    LOCUS_ENTRY_CS();
    MPIT_CHECK_INIT();
    if (cat_index < 0 || cat_index >= MPIT_NCATS)
        return MPI_T_ERR_INVALID_INDEX;
    if (!num_events)
        return MPI_T_ERR_INVALID;
    *num_events = 0;
    return MPI_SUCCESS;
}

int locus_t_category_get_events_impl(int cat_index, int len, int indices[])
{
    return cat_list_check(cat_index, len, indices); /* no events: nothing to list */
}

int locus_t_category_changed_impl(int *update_number)
{
    *update_number = 0; /* the variables and categories are fixed at build time */
    return MPI_SUCCESS;
}

/* ---- events: no event types, so no registration or instance exists ---- */

int locus_t_event_get_num_impl(int *num_events)
{
    *num_events = 0;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(T_event_get_info)
int PMPI_T_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                          MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[],
                          int *num_elements, MPI_T_enum *enumtype, MPI_Info *info, char *desc,
                          int *desc_len, int *bind)
{
    LOCUS_ENTRY_CS();
    (void)event_index, (void)name, (void)name_len, (void)verbosity, (void)array_of_datatypes;
    (void)array_of_displacements, (void)num_elements, (void)enumtype, (void)info, (void)desc;
    (void)desc_len, (void)bind;
    MPIT_CHECK_INIT();
    return MPI_T_ERR_INVALID_INDEX;
}

int locus_t_event_get_index_impl(const char *name, int *event_index)
{
    (void)event_index;
    if (!name)
        return MPI_T_ERR_INVALID;
    return MPI_T_ERR_INVALID_NAME;
}

LOCUS_PMPI_WEAK(T_event_handle_alloc)
int PMPI_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                              MPI_T_event_registration *event_registration)
{
    LOCUS_ENTRY_CS();
    (void)event_index, (void)obj_handle, (void)info, (void)event_registration;
    MPIT_CHECK_INIT();
    return MPI_T_ERR_INVALID_INDEX;
}

/* Every call on a registration or an event instance: none can exist. */
#define MPIT_NO_EVENT_OBJECT(args_unused)                                       \
    do {                                                                        \
        args_unused;                                                            \
        MPIT_CHECK_INIT();                                                      \
        return MPI_T_ERR_INVALID_HANDLE;                                        \
    } while (0)

LOCUS_PMPI_WEAK(T_event_handle_free)
int PMPI_T_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                             MPI_T_event_free_cb_function free_cb_function)
{
    LOCUS_ENTRY_CS();
    MPIT_NO_EVENT_OBJECT(((void)event_registration, (void)user_data, (void)free_cb_function));
}

LOCUS_PMPI_WEAK(T_event_handle_get_info)
int PMPI_T_event_handle_get_info(MPI_T_event_registration event_registration,
                                 MPI_Info *info_used)
{
    LOCUS_ENTRY_CS();
    MPIT_NO_EVENT_OBJECT(((void)event_registration, (void)info_used));
}

LOCUS_PMPI_WEAK(T_event_handle_set_info)
int PMPI_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info)
{
    LOCUS_ENTRY_CS();
    MPIT_NO_EVENT_OBJECT(((void)event_registration, (void)info));
}

LOCUS_PMPI_WEAK(T_event_register_callback)
int PMPI_T_event_register_callback(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info, void *user_data,
                                   MPI_T_event_cb_function event_cb_function)
{
    LOCUS_ENTRY_CS();
    MPIT_NO_EVENT_OBJECT(((void)event_registration, (void)cb_safety, (void)info,
                          (void)user_data, (void)event_cb_function));
}

LOCUS_PMPI_WEAK(T_event_callback_get_info)
int PMPI_T_event_callback_get_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info *info_used)
{
    LOCUS_ENTRY_CS();
    MPIT_NO_EVENT_OBJECT(((void)event_registration, (void)cb_safety, (void)info_used));
}

LOCUS_PMPI_WEAK(T_event_callback_set_info)
int PMPI_T_event_callback_set_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info)
{
    LOCUS_ENTRY_CS();
    MPIT_NO_EVENT_OBJECT(((void)event_registration, (void)cb_safety, (void)info));
}

LOCUS_PMPI_WEAK(T_event_set_dropped_handler)
int PMPI_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                     MPI_T_event_dropped_cb_function dropped_cb_function)
{
    LOCUS_ENTRY_CS();
    MPIT_NO_EVENT_OBJECT(((void)event_registration, (void)dropped_cb_function));
}

LOCUS_PMPI_WEAK(T_event_read)
int PMPI_T_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer)
{
    LOCUS_ENTRY_CS();
    MPIT_NO_EVENT_OBJECT(((void)event_instance, (void)element_index, (void)buffer));
}

LOCUS_PMPI_WEAK(T_event_copy)
int PMPI_T_event_copy(MPI_T_event_instance event_instance, void *buffer)
{
    LOCUS_ENTRY_CS();
    MPIT_NO_EVENT_OBJECT(((void)event_instance, (void)buffer));
}

LOCUS_PMPI_WEAK(T_event_get_timestamp)
int PMPI_T_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count *event_timestamp)
{
    LOCUS_ENTRY_CS();
    MPIT_NO_EVENT_OBJECT(((void)event_instance, (void)event_timestamp));
}

LOCUS_PMPI_WEAK(T_event_get_source)
int PMPI_T_event_get_source(MPI_T_event_instance event_instance, int *source_index)
{
    LOCUS_ENTRY_CS();
    MPIT_NO_EVENT_OBJECT(((void)event_instance, (void)source_index));
}

/* ---- sources: the node's monotonic clock (the clock of MPI_Wtime) ---- */

int locus_t_source_get_num_impl(int *num_sources)
{
    *num_sources = 1;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(T_source_get_info)
int PMPI_T_source_get_info(int source_index, char *name, int *name_len, char *desc,
                           int *desc_len, MPI_T_source_order *ordering,
                           MPI_Count *ticks_per_second, MPI_Count *max_ticks, MPI_Info *info)
{
    LOCUS_ENTRY_CS();
    MPIT_CHECK_INIT();
    if (source_index != 0)
        return MPI_T_ERR_INVALID_INDEX;
    mpit_str_out(name, name_len, "locus_monotonic_clock");
    mpit_str_out(desc, desc_len, "CLOCK_MONOTONIC of the node in nanoseconds, the clock of "
                 "MPI_Wtime; comparable between the ranks of one node only");
    if (ordering)
        *ordering = MPI_T_SOURCE_ORDERED;
    if (ticks_per_second)
        *ticks_per_second = 1000000000;
    if (max_ticks)
        *max_ticks = INT64_MAX;
    if (info)
        *info = MPI_INFO_NULL; /* nothing more to say (and callable before MPI_Init) */
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(T_source_get_timestamp)
int PMPI_T_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    LOCUS_ENTRY_CS();
    MPIT_CHECK_INIT();
    if (source_index != 0)
        return MPI_T_ERR_INVALID_INDEX;
    if (!timestamp)
        return MPI_T_ERR_INVALID;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    *timestamp = (MPI_Count)ts.tv_sec * 1000000000 + ts.tv_nsec;
    return MPI_SUCCESS;
}
