/*
 * abi_core.c — the part of every legacy-ABI layer written by hand and
 * alike for each: loading Locus's library, value maps, error classes, and
 * the entry points the generator leaves to hand (strings of the ABI's
 * sizes, statuses read, MPI_Wtime). Compiled once per layer, against that
 * ABI's mpi.h (abi_layer.h of its folder). See ../abi.h.
 */
#include "abi_layer.h"
#include "abi_locus_values.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

abi_locus_t abi_locus;

static const struct { const char *name; size_t off; } own_fns[] = {
#define F(field, sym) { sym, offsetof(abi_locus_t, field) }
    F(comm_toint, "MPI_Comm_toint"), F(type_toint, "MPI_Type_toint"),
    F(group_toint, "MPI_Group_toint"), F(op_toint, "MPI_Op_toint"),
    F(req_toint, "MPI_Request_toint"), F(errh_toint, "MPI_Errhandler_toint"),
    F(info_toint, "MPI_Info_toint"), F(comm_fromint, "MPI_Comm_fromint"),
    F(msg_toint, "MPI_Message_toint"), F(msg_fromint, "MPI_Message_fromint"),
    F(win_toint, "MPI_Win_toint"), F(win_fromint, "MPI_Win_fromint"),
    F(file_toint, "MPI_File_toint"), F(file_fromint, "MPI_File_fromint"),
    F(session_toint, "MPI_Session_toint"), F(session_fromint, "MPI_Session_fromint"),
    F(win_get_name, "PMPI_Win_get_name"), F(win_set_name, "PMPI_Win_set_name"),
    F(open_port, "PMPI_Open_port"), F(lookup_name, "PMPI_Lookup_name"),
    F(file_get_view, "PMPI_File_get_view"),
    F(info_get_nthkey, "PMPI_Info_get_nthkey"),
    F(type_fromint, "MPI_Type_fromint"), F(group_fromint, "MPI_Group_fromint"),
    F(op_fromint, "MPI_Op_fromint"), F(req_fromint, "MPI_Request_fromint"),
    F(errh_fromint, "MPI_Errhandler_fromint"), F(info_fromint, "MPI_Info_fromint"),
    F(error_class, "PMPI_Error_class"), F(get_count_c, "PMPI_Get_count_c"),
    F(get_elements_c, "PMPI_Get_elements_c"),
    F(test_cancelled, "PMPI_Test_cancelled"),
    F(processor_name, "PMPI_Get_processor_name"),
    F(library_version, "PMPI_Get_library_version"), F(error_string, "PMPI_Error_string"),
    F(comm_get_name, "PMPI_Comm_get_name"), F(comm_set_name, "PMPI_Comm_set_name"),
    F(type_get_name, "PMPI_Type_get_name"), F(type_set_name, "PMPI_Type_set_name"),
    F(wtime, "PMPI_Wtime"), F(wtick, "PMPI_Wtick"), F(op_create, "PMPI_Op_create"),
    F(op_free, "PMPI_Op_free"), F(op_create_c, "PMPI_Op_create_c"),
    F(create_errhandler[ABI_ERRH_COMM], "PMPI_Comm_create_errhandler"),
    F(create_errhandler[ABI_ERRH_WIN], "PMPI_Win_create_errhandler"),
    F(create_errhandler[ABI_ERRH_FILE], "PMPI_File_create_errhandler"),
    F(create_errhandler[ABI_ERRH_SESSION], "PMPI_Session_create_errhandler"),
    F(info_create_env, "PMPI_Info_create_env"),
    F(abi_get_fortran_info, "PMPI_Abi_get_fortran_info"),
    F(comm_create_keyval, "PMPI_Comm_create_keyval"),
    F(comm_free_keyval, "PMPI_Comm_free_keyval"),
    F(type_create_keyval, "PMPI_Type_create_keyval"), F(type_free_keyval, "PMPI_Type_free_keyval"),
    F(win_create_keyval, "PMPI_Win_create_keyval"), F(win_free_keyval, "PMPI_Win_free_keyval"), F(comm_test_inter, "PMPI_Comm_test_inter"),
    F(comm_size, "PMPI_Comm_size"), F(comm_remote_size, "PMPI_Comm_remote_size"),
#define W(c, s)                                                                                \
    F(alltoallw[c][0][0], "PMPI_Alltoallw" s), F(alltoallw[c][0][1], "PMPI_Ialltoallw" s),     \
    F(alltoallw[c][0][2], "PMPI_Alltoallw_init" s),                                            \
    F(alltoallw[c][1][0], "PMPI_Neighbor_alltoallw" s),                                        \
    F(alltoallw[c][1][1], "PMPI_Ineighbor_alltoallw" s),                                       \
    F(alltoallw[c][1][2], "PMPI_Neighbor_alltoallw_init" s)
    W(0, ""), W(1, "_c"),
#undef W
    F(topo_test, "PMPI_Topo_test"),
    F(cartdim_get, "PMPI_Cartdim_get"), F(comm_rank, "PMPI_Comm_rank"),
    F(graph_neighbors_count, "PMPI_Graph_neighbors_count"),
    F(dist_graph_neighbors_count, "PMPI_Dist_graph_neighbors_count"),
    F(grequest_start, "PMPI_Grequest_start"), F(register_datarep, "PMPI_Register_datarep"),
    F(register_datarep_c, "PMPI_Register_datarep_c"),
#undef F
};

static void die(const char *what, const char *why)
{
    fprintf(stderr, "locus (" ABI_NAME " ABI): %s: %s\n", what, why);
    _exit(127);
}

/* Locus's library beside this one (LOCUS_ABI_LIBMPI names another). Its
 * own calls must stay inside it: RTLD_DEEPBIND, so that Locus's
 * MPI_Comm_rank is never this layer's. */
__attribute__((constructor)) static void abi_load(void)
{
    char path[4096];
    const char *env = getenv("LOCUS_ABI_LIBMPI");
    Dl_info me;
    if (env && *env) {
        snprintf(path, sizeof path, "%s", env);
    } else if (dladdr((void *)abi_load, &me) && me.dli_fname && strrchr(me.dli_fname, '/')) {
        /* Loaded as lib/<soname> (a link to lib/abi/...): Locus's is beside. */
        snprintf(path, sizeof path, "%.*s/liblocusmpi.so.0",
                 (int)(strrchr(me.dli_fname, '/') - me.dli_fname), me.dli_fname);
        if (access(path, R_OK) != 0)
            snprintf(path, sizeof path, "%.*s/../liblocusmpi.so.0",
                     (int)(strrchr(me.dli_fname, '/') - me.dli_fname), me.dli_fname);
    } else {
        snprintf(path, sizeof path, "liblocusmpi.so.0");
    }
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (!lib)
        die("cannot load Locus's library", dlerror());
    for (int i = 0; abi_fn_names[i]; i++)
        if (!(abi_fn[i] = dlsym(lib, abi_fn_names[i])))
            die(abi_fn_names[i], "not in Locus's library");
    for (size_t i = 0; i < sizeof own_fns / sizeof own_fns[0]; i++) {
        void *f = dlsym(lib, own_fns[i].name);
        if (!f)
            die(own_fns[i].name, "not in Locus's library");
        memcpy((char *)&abi_locus + own_fns[i].off, &f, sizeof f);
    }
}

/* ---- arrays for one call ---- */

void *abi_temp(void *stack, size_t size, int n)
{
    if (n <= ABI_STACK_MAX)
        return stack;
    return malloc(size * (size_t)n);
}

void abi_temp_free(void *p, void *stack)
{
    if (p != stack)
        free(p);
}

int abi_no_mem(const char *fn)
{
    (void)fn;
    return MPI_ERR_NO_MEM;
}

/* ---- predefined handles ---- */

/* The ABI's predefined handles (its values: ints, or addresses of its
 * objects, known only at load) beside Locus's: the pairs (a legacy value
 * two names of a kind share once), and by Locus's value, sorted. */
static abi_pair_t by_legacy[512], by_locus[512];
static int npairs;

/* Every call converts a handle or two, mostly predefined ones
 * (MPI_COMM_WORLD, MPI_INT): legacy to Locus goes through an
 * open-addressed hash of the pairs (one or two probes), not a search. */
#define ABI_HASH_SLOTS 2048
static const abi_pair_t *legacy_hash[ABI_HASH_SLOTS];

static unsigned pair_hash(intptr_t legacy, int kind)
{
    uint64_t x = (uint64_t)legacy * 0x9e3779b97f4a7c15ull + (uint64_t)kind;
    return (unsigned)(x >> 53) & (ABI_HASH_SLOTS - 1);
}

static int cmp_locus(const void *a, const void *b)
{
    int x = ((const abi_pair_t *)a)->locus, y = ((const abi_pair_t *)b)->locus;
    return (x > y) - (x < y);
}

__attribute__((constructor)) static void pairs_sort(void)
{
    /* A legacy value two names of a kind share is the first's (the null
     * handles come first): it is one handle. */
    for (int i = 0; i < abi_npredef && npairs < 512; i++) {
        int seen = 0;
        for (int j = 0; j < npairs && !seen; j++)
            seen = by_legacy[j].legacy == abi_predef[i].legacy &&
                   by_legacy[j].kind == abi_predef[i].kind;
        if (!seen)
            by_legacy[npairs++] = abi_predef[i];
    }
    memcpy(by_locus, by_legacy, (size_t)npairs * sizeof *by_locus);
    for (int i = 0; i < npairs; i++) {
        unsigned h = pair_hash(by_legacy[i].legacy, by_legacy[i].kind);
        while (legacy_hash[h])
            h = (h + 1) & (ABI_HASH_SLOTS - 1);
        legacy_hash[h] = &by_legacy[i];
    }
    qsort(by_locus, (size_t)npairs, sizeof *by_locus, cmp_locus);
}

static const abi_pair_t *pair_find(const abi_pair_t *t, int n, int v)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (t[mid].locus == v)
            return &t[mid];
        if (t[mid].locus < v)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

int abi_predef_in(intptr_t legacy, int kind, int *locus)
{
    for (unsigned h = pair_hash(legacy, kind); legacy_hash[h]; h = (h + 1) & (ABI_HASH_SLOTS - 1))
        if (legacy_hash[h]->legacy == legacy && legacy_hash[h]->kind == kind) {
            *locus = legacy_hash[h]->locus;
            return 1;
        }
    return 0;
}

int abi_predef_out(int locus, intptr_t *legacy)
{
    const abi_pair_t *p = pair_find(by_locus, npairs, locus);
    if (p)
        *legacy = p->legacy;
    return p != NULL;
}

/* ---- values ---- */

int abi_sum(const int *v, int n)
{
    int s = 0;
    for (int i = 0; v && i < n; i++)
        s += v[i];
    return s;
}

const int *abi_weights_in(const int *w)
{
    if (w == MPI_UNWEIGHTED)
        return (const int *)(intptr_t)LOCUS_MPI_UNWEIGHTED_VALUE;
    if (w == MPI_WEIGHTS_EMPTY)
        return (const int *)(intptr_t)LOCUS_MPI_WEIGHTS_EMPTY_VALUE;
    return w;
}

const void *abi_buf_in(const void *buf)
{
    return buf == MPI_IN_PLACE ? (const void *)(intptr_t)LOCUS_MPI_IN_PLACE_VALUE : buf;
}

int abi_map(const int (*pairs)[2], int n, int v, int to_locus)
{
    for (int i = 0; i < n; i++)
        if (pairs[i][!to_locus] == v)
            return pairs[i][to_locus];
    return v;
}

int abi_bits(const int (*pairs)[2], int n, int v, int to_locus)
{
    int out = 0;
    for (int i = 0; i < n; i++)
        if (v & pairs[i][!to_locus])
            out |= pairs[i][to_locus];
    return out;
}

/* User classes and codes (MPI_Add_error_class, _code) lie past each
 * side's MPI_ERR_LASTCODE, at the same distance from it. */
int abi_class_in(int cls)
{
    if (cls > MPI_ERR_LASTCODE)
        return cls - MPI_ERR_LASTCODE + LOCUS_MPI_ERR_LASTCODE;
    for (int i = 0; i < abi_nclasses; i++)
        if (abi_classes[i].legacy == cls)
            return abi_classes[i].locus;
    return cls;
}

int abi_class_out(int cls)
{
    if (cls == 0)
        return MPI_SUCCESS;
    if (cls > LOCUS_MPI_ERR_LASTCODE)
        return cls - LOCUS_MPI_ERR_LASTCODE + MPI_ERR_LASTCODE;
    for (int i = 0; i < abi_nclasses; i++)
        if (abi_classes[i].locus == cls)
            return abi_classes[i].legacy;
    return cls; /* a user's class (MPI_Add_error_class) */
}

int abi_err_out(int rc)
{
    if (rc == 0)
        return MPI_SUCCESS;
    if (rc > LOCUS_MPI_ERR_LASTCODE)
        return abi_class_out(rc); /* a user's code: itself, the ABI's number */
    int cls = rc;
    abi_locus.error_class(rc, &cls);
    return abi_class_out(cls);
}

int abi_in_status(int rc)
{
    int cls = rc;
    abi_locus.error_class(rc, &cls);
    return cls == LOCUS_MPI_ERR_IN_STATUS;
}

/* Values handed out by pointer: each distinct one kept once, for the
 * process's life (a program may keep the pointer). */
static int *interned(int v)
{
    static int values[64];
    static int n;
    for (int i = 0; i < n; i++)
        if (values[i] == v)
            return &values[i];
    if (n == 64)
        return NULL;
    values[n] = v;
    return &values[n++];
}

void abi_attr_out(int lkey, void *attribute_val)
{
    int (*conv)(int);
    switch (lkey) {
    case LOCUS_MPI_HOST:
    case LOCUS_MPI_IO:
        conv = abi_rank_out;
        break;
    case LOCUS_MPI_LASTUSEDCODE:
        conv = abi_class_out;
        break;
    case LOCUS_MPI_WIN_CREATE_FLAVOR:
        conv = abi_flavor_out;
        break;
    case LOCUS_MPI_WIN_MODEL:
        conv = abi_model_out;
        break;
    default:
        return;
    }
    int *v = interned(conv(**(int **)attribute_val));
    if (v)
        *(int **)attribute_val = v;
}

/* ---- statuses: what both layouts hold ---- */

/* Every MPI_Recv and MPI_Wait pays for this: the fields are read where
 * Locus keeps them (abi_locus_status_t), not through two calls. */
void abi_status_read(const abi_locus_status_t *l, abi_status_fields_t *f)
{
    f->bytes = (MPI_Count)((uint64_t)(uint32_t)l->internal[ABI_STATUS_BYTES_HI] << 32 |
                           (uint32_t)l->internal[ABI_STATUS_BYTES_LO]);
    f->cancelled = l->internal[ABI_STATUS_CANCELLED];
    f->source = abi_rank_out(l->source);
    f->tag = abi_tag_out(l->tag);
    f->error = abi_class_out(l->error); /* a field, maybe never set: no lookup that can fail */
}

void abi_status_write(const abi_status_fields_t *f, abi_locus_status_t *l)
{
    memset(l, 0, sizeof *l);
    l->internal[ABI_STATUS_BYTES_LO] = (int)(uint32_t)(uint64_t)f->bytes;
    l->internal[ABI_STATUS_BYTES_HI] = (int)(uint32_t)((uint64_t)f->bytes >> 32);
    l->internal[ABI_STATUS_CANCELLED] = f->cancelled;
    l->source = abi_rank_in(f->source);
    l->tag = abi_tag_in(f->tag);
    l->error = abi_class_in(f->error);
}

/* ---- by hand ---- */

/* A count from the ABI's status by Locus's function `get` (_c form). */
static int status_count(const MPI_Status *status, MPI_Datatype datatype, int *count,
                        int (*get)(const void *, void *, MPI_Count *))
{
    abi_locus_status_t l;
    MPI_Count c = 0;
    abi_status_in(status, &l);
    int rc = get(&l, abi_dtype_in(datatype), &c);
    if (rc == 0)
        *count = c > 0x7fffffff ? MPI_UNDEFINED : (int)c;
    return abi_err_out(rc);
}

int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    return status_count(status, datatype, count, abi_locus.get_count_c);
}
#pragma weak MPI_Get_count = PMPI_Get_count

int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    return status_count(status, datatype, count, abi_locus.get_elements_c);
}
#pragma weak MPI_Get_elements = PMPI_Get_elements

int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    abi_locus_status_t l;
    abi_status_in(status, &l);
    return abi_err_out(abi_locus.test_cancelled(&l, flag));
}
#pragma weak MPI_Test_cancelled = PMPI_Test_cancelled

int PMPI_Error_class(int errorcode, int *errorclass)
{
    if (!errorclass)
        return MPI_ERR_ARG;
    if (errorcode <= MPI_ERR_LASTCODE) {
        /* The layer's own codes are the ABI's classes already. */
        *errorclass = errorcode;
        return MPI_SUCCESS;
    }
    int cls = 0, rc = abi_locus.error_class(abi_class_in(errorcode), &cls);
    if (rc == 0)
        *errorclass = abi_class_out(cls);
    return abi_err_out(rc);
}
#pragma weak MPI_Error_class = PMPI_Error_class

/* A string of Locus's into the ABI's (smaller) buffer, truncated. */
static int string_out(int rc, const char *l, int llen, char *out, int *len, int cap)
{
    if (rc != 0)
        return abi_err_out(rc);
    int n = llen < cap - 1 ? llen : cap - 1;
    memcpy(out, l, (size_t)n);
    out[n] = '\0';
    *len = n;
    return MPI_SUCCESS;
}

int PMPI_Get_processor_name(char *name, int *resultlen)
{
    char l[8192];
    int n = 0;
    int rc = abi_locus.processor_name(l, &n);
    return string_out(rc, l, n, name, resultlen, MPI_MAX_PROCESSOR_NAME);
}
#pragma weak MPI_Get_processor_name = PMPI_Get_processor_name

int PMPI_Get_library_version(char *version, int *resultlen)
{
    char l[8192];
    int n = 0;
    int rc = abi_locus.library_version(l, &n);
    if (rc == 0)
        n = snprintf(l + n, sizeof l - (size_t)n, " (through its " ABI_NAME " ABI layer)") + n;
    return string_out(rc, l, n, version, resultlen, MPI_MAX_LIBRARY_VERSION_STRING);
}
#pragma weak MPI_Get_library_version = PMPI_Get_library_version

int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    char l[8192];
    int n = 0;
    int known = 0;
    for (int i = 0; i < abi_nclasses && !known; i++)
        known = abi_classes[i].legacy == errorcode;
    if (errorcode > 0 && errorcode < MPI_ERR_LASTCODE && !known) {
        /* A class of the ABI's that Locus has not (Open MPI's ULFM ones):
         * its own number, named. */
        n = snprintf(l, sizeof l, "error class %d of the " ABI_NAME " ABI (none of Locus's)",
                     errorcode);
        return string_out(0, l, n, string, resultlen, MPI_MAX_ERROR_STRING);
    }
    int rc = abi_locus.error_string(abi_class_in(errorcode), l, &n);
    return string_out(rc, l, n, string, resultlen, MPI_MAX_ERROR_STRING);
}
#pragma weak MPI_Error_string = PMPI_Error_string

/* MPI_<Kind>_get_name / _set_name of the objects with names. */
#define OBJECT_NAME(Kind, type, conv, getter, setter)                                          \
    int PMPI_##Kind##_get_name(type obj, char *name, int *resultlen)                           \
    {                                                                                          \
        char l[8192];                                                                          \
        int n = 0;                                                                             \
        int rc = abi_locus.getter(abi_##conv##_in(obj), l, &n);                                        \
        return string_out(rc, l, n, name, resultlen, MPI_MAX_OBJECT_NAME);                    \
    }                                                                                          \
    int PMPI_##Kind##_set_name(type obj, const char *name)                                     \
    {                                                                                          \
        return abi_err_out(abi_locus.setter(abi_##conv##_in(obj), name));                              \
    }
OBJECT_NAME(Comm, MPI_Comm, comm, comm_get_name, comm_set_name)
OBJECT_NAME(Type, MPI_Datatype, dtype, type_get_name, type_set_name)
OBJECT_NAME(Win, MPI_Win, win, win_get_name, win_set_name)
#pragma weak MPI_Comm_get_name = PMPI_Comm_get_name
#pragma weak MPI_Comm_set_name = PMPI_Comm_set_name
#pragma weak MPI_Type_get_name = PMPI_Type_get_name
#pragma weak MPI_Type_set_name = PMPI_Type_set_name
#pragma weak MPI_Win_get_name = PMPI_Win_get_name
#pragma weak MPI_Win_set_name = PMPI_Win_set_name

int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    char l[8192];
    int rc = abi_locus.info_get_nthkey(abi_info_in(info), n, l);
    int len;
    return rc ? abi_err_out(rc) : string_out(0, l, (int)strlen(l), key, &len, MPI_MAX_INFO_KEY);
}
#pragma weak MPI_Info_get_nthkey = PMPI_Info_get_nthkey

/* Names whose buffer the ABI sizes (MPI_MAX_PORT_NAME, ..._DATAREP_STRING). */
int PMPI_Open_port(MPI_Info info, char *port_name)
{
    char l[8192];
    int rc = abi_locus.open_port(abi_info_in(info), l), len;
    return string_out(rc, l, (int)strnlen(l, sizeof l), port_name, &len, MPI_MAX_PORT_NAME);
}
#pragma weak MPI_Open_port = PMPI_Open_port

int PMPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name)
{
    char l[8192];
    int rc = abi_locus.lookup_name(service_name, abi_info_in(info), l), len;
    return string_out(rc, l, (int)strnlen(l, sizeof l), port_name, &len, MPI_MAX_PORT_NAME);
}
#pragma weak MPI_Lookup_name = PMPI_Lookup_name

int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype,
                       MPI_Datatype *filetype, char *datarep)
{
    char l[8192] = "";
    void *le = NULL, *lf = NULL;
    int rc = abi_locus.file_get_view(abi_file_in(fh), disp, &le, &lf, l), len;
    if (rc == 0) {
        *etype = abi_dtype_out(le);
        *filetype = abi_dtype_out(lf);
    }
    return string_out(rc, l, (int)strnlen(l, sizeof l), datarep, &len,
                      MPI_MAX_DATAREP_STRING);
}
#pragma weak MPI_File_get_view = PMPI_File_get_view

/* A Fortran status is the C status's ints, in both legacy ABIs. */
int PMPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    memcpy(f_status, c_status, sizeof *c_status);
    return MPI_SUCCESS;
}
#pragma weak MPI_Status_c2f = PMPI_Status_c2f

int PMPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    memcpy(c_status, f_status, sizeof *c_status);
    return MPI_SUCCESS;
}
#pragma weak MPI_Status_f2c = PMPI_Status_f2c

double PMPI_Wtime(void)
{
    return abi_locus.wtime();
}
#pragma weak MPI_Wtime = PMPI_Wtime

double PMPI_Wtick(void)
{
    return abi_locus.wtick();
}
#pragma weak MPI_Wtick = PMPI_Wtick

int PMPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
    void *l = NULL;
    int rc = abi_locus.info_create_env(argc, argv, &l);
    if (rc == 0 && info)
        *info = abi_info_out(l);
    return abi_err_out(rc);
}
#pragma weak MPI_Info_create_env = PMPI_Info_create_env

/* A legacy ABI is not the standard one: what MPI-5 has a library without
 * it answer (mpi4py's wheel reads a positive major as "the standard ABI"). */
int PMPI_Abi_get_version(int *abi_major, int *abi_minor)
{
    if (!abi_major || !abi_minor)
        return MPI_ERR_ARG;
    *abi_major = -1;
    *abi_minor = -1;
    return MPI_SUCCESS;
}
#pragma weak MPI_Abi_get_version = PMPI_Abi_get_version

/* The newest version of the standard whose constants the ABI can say
 * (abi_layer.h): a program built against it (mpi4py's wheel) takes the
 * version for what it may use, and Locus's 5.0 has names these ABIs lack. */
int PMPI_Get_version(int *version, int *subversion)
{
    if (!version || !subversion)
        return MPI_ERR_ARG;
    *version = ABI_MPI_VERSION;
    *subversion = ABI_MPI_SUBVERSION;
    return MPI_SUCCESS;
}
#pragma weak MPI_Get_version = PMPI_Get_version

/* Locus's answer, less the Fortran types this ABI's header lacks (or
 * makes MPI_DATATYPE_NULL): "mpi_<type>_supported" false for those. */
int PMPI_Abi_get_fortran_info(MPI_Info *info)
{
#define FT(name, NAME) { name, NAME }
    static const struct { const char *name; MPI_Datatype type; } types[] = {
#ifdef MPI_LOGICAL1
        FT("logical1", MPI_LOGICAL1),
#endif
#ifdef MPI_LOGICAL2
        FT("logical2", MPI_LOGICAL2),
#endif
#ifdef MPI_LOGICAL4
        FT("logical4", MPI_LOGICAL4),
#endif
#ifdef MPI_LOGICAL8
        FT("logical8", MPI_LOGICAL8),
#endif
#ifdef MPI_LOGICAL16
        FT("logical16", MPI_LOGICAL16),
#endif
#ifdef MPI_INTEGER1
        FT("integer1", MPI_INTEGER1),
#endif
#ifdef MPI_INTEGER2
        FT("integer2", MPI_INTEGER2),
#endif
#ifdef MPI_INTEGER4
        FT("integer4", MPI_INTEGER4),
#endif
#ifdef MPI_INTEGER8
        FT("integer8", MPI_INTEGER8),
#endif
#ifdef MPI_INTEGER16
        FT("integer16", MPI_INTEGER16),
#endif
#ifdef MPI_REAL2
        FT("real2", MPI_REAL2),
#endif
#ifdef MPI_REAL4
        FT("real4", MPI_REAL4),
#endif
#ifdef MPI_REAL8
        FT("real8", MPI_REAL8),
#endif
#ifdef MPI_REAL16
        FT("real16", MPI_REAL16),
#endif
#ifdef MPI_COMPLEX4
        FT("complex4", MPI_COMPLEX4),
#endif
#ifdef MPI_COMPLEX8
        FT("complex8", MPI_COMPLEX8),
#endif
#ifdef MPI_COMPLEX16
        FT("complex16", MPI_COMPLEX16),
#endif
#ifdef MPI_COMPLEX32
        FT("complex32", MPI_COMPLEX32),
#endif
    };
#undef FT
    static const char *const all[] = { "logical1", "logical2", "logical4", "logical8",
                                       "logical16", "integer1", "integer2", "integer4",
                                       "integer8", "integer16", "real2", "real4", "real8",
                                       "real16", "complex4", "complex8", "complex16",
                                       "complex32" };
    if (!info)
        return MPI_ERR_ARG;
    void *l = NULL;
    int rc = abi_locus.abi_get_fortran_info(&l);
    if (rc != 0)
        return abi_err_out(rc);
    *info = abi_info_out(l);
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        int have = 0;
        for (size_t j = 0; j < sizeof types / sizeof types[0] && !have; j++)
            have = !strcmp(types[j].name, all[i]) && types[j].type != MPI_DATATYPE_NULL;
        char key[64];
        snprintf(key, sizeof key, "mpi_%s_supported", all[i]);
        if (!have && (rc = PMPI_Info_set(*info, key, "false")) != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}
#pragma weak MPI_Abi_get_fortran_info = PMPI_Abi_get_fortran_info

/* The sizes of this ABI's integer types, under the standard's keys. */
int PMPI_Abi_get_info(MPI_Info *info)
{
    static const struct { const char *key; size_t size; } sizes[] = {
        { "mpi_aint_size", sizeof(MPI_Aint) }, { "mpi_count_size", sizeof(MPI_Count) },
        { "mpi_offset_size", sizeof(MPI_Offset) },
    };
    if (!info)
        return MPI_ERR_ARG;
    int rc = PMPI_Info_create(info);
    for (size_t i = 0; rc == MPI_SUCCESS && i < sizeof sizes / sizeof sizes[0]; i++) {
        char v[8];
        snprintf(v, sizeof v, "%zu", sizes[i].size);
        rc = PMPI_Info_set(*info, sizes[i].key, v);
    }
    return rc;
}
#pragma weak MPI_Abi_get_info = PMPI_Abi_get_info

/* Address arithmetic: the same in every ABI whose MPI_Aint is an address
 * (Open MPI 4.1's header makes them macros; Open MPI 5's binaries call them). */
#undef MPI_Aint_add
#undef MPI_Aint_diff
#undef PMPI_Aint_add
#undef PMPI_Aint_diff
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp);
MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2);
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}
#pragma weak MPI_Aint_add = PMPI_Aint_add

MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}
#pragma weak MPI_Aint_diff = PMPI_Aint_diff
