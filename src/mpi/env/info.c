/*
 * info.c — MPI_Info objects (ordered key/value lists), MPI_INFO_ENV and the
 * ABI's MPI_Abi_get_info. Like MPI-4 says, the MPI_Info calls work at any
 * time, before MPI_Init and after MPI_Finalize too (sessions and MPI_T
 * take info objects); an error outside them is fatal (the initial
 * error handler).
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "env.h"

#define INFO_MAGIC 0x4c494e46u

typedef struct {
    uint32_t magic;
    int n, cap;
    char **keys, **vals;
    int predefined;
} info_t;

static info_t info_env;

static info_t *info_of(MPI_Info h)
{
    if (LOCUS_IS_PREDEF(h))
        return h == MPI_INFO_ENV ? &info_env : NULL;
    info_t *i = (info_t *)h;
    return locus_handle_is(i, LOCUS_HK_INFO) && i->magic == INFO_MAGIC ? i : NULL;
}

static int info_find(const info_t *in, const char *key)
{
    for (int i = 0; i < in->n; i++)
        if (strcmp(in->keys[i], key) == 0)
            return i;
    return -1;
}

static int info_put(info_t *in, const char *key, const char *val)
{
    int i = info_find(in, key);
    char *v = strdup(val);
    if (!v)
        return MPI_ERR_NO_MEM;
    if (i >= 0) {
        free(in->vals[i]);
        in->vals[i] = v;
        return MPI_SUCCESS;
    }
    if (in->n == in->cap) {
        int cap = in->cap ? 2 * in->cap : 8;
        char **k = realloc(in->keys, (size_t)cap * sizeof *k);
        if (k)
            in->keys = k;
        char **vv = realloc(in->vals, (size_t)cap * sizeof *vv);
        if (vv)
            in->vals = vv;
        if (!k || !vv) {
            free(v);
            return MPI_ERR_NO_MEM;
        }
        in->cap = cap;
    }
    if (!(in->keys[in->n] = strdup(key))) {
        free(v);
        return MPI_ERR_NO_MEM;
    }
    in->vals[in->n++] = v;
    return MPI_SUCCESS;
}

static info_t *info_new(void)
{
    info_t *in = calloc(1, sizeof *in);
    if (in && locus_handle_enter(in, LOCUS_HK_INFO) < 0) {
        free(in);
        return NULL;
    }
    if (in)
        in->magic = INFO_MAGIC;
    return in;
}

static void info_clear(info_t *in)
{
    for (int i = 0; i < in->n; i++) {
        free(in->keys[i]);
        free(in->vals[i]);
    }
    free(in->keys);
    free(in->vals);
    in->keys = in->vals = NULL;
    in->n = in->cap = 0;
}

/* An info of the user's goes, and its handle with it (NULL: nothing). */
static void info_gone(info_t *in)
{
    if (!in)
        return;
    info_clear(in);
    in->magic = 0;
    locus_handle_leave(in);
    free(in);
}

/* Checks of a key: MPI_ERR_INFO_KEY when empty or too long. */
static int key_check(const char *key)
{
    size_t n = key ? strlen(key) : 0;
    return n == 0 || n >= MPI_MAX_INFO_KEY ? MPI_ERR_INFO_KEY : MPI_SUCCESS;
}

/* The entry points of the calls written as locus_info_<x>_impl are
 * generated (they check that each result has somewhere to go, and raise
 * what these return); the other chapters call these for their own infos
 * and get the error class back. */

int locus_info_create_impl(MPI_Info *info)
{
    info_t *in = info_new();
    if (!in)
        return MPI_ERR_NO_MEM;
    *info = (MPI_Info)in;
    return MPI_SUCCESS;
}

int locus_info_set_impl(MPI_Info info, const char *key, const char *value)
{
    info_t *in = info_of(info);
    if (!in || in->predefined)
        return MPI_ERR_INFO;
    int rc = key_check(key);
    if (rc == MPI_SUCCESS && (!value || strlen(value) >= MPI_MAX_INFO_VAL))
        rc = MPI_ERR_INFO_VALUE;
    return rc == MPI_SUCCESS ? info_put(in, key, value) : rc;
}

int locus_info_delete_impl(MPI_Info info, const char *key)
{
    info_t *in = info_of(info);
    if (!in || in->predefined)
        return MPI_ERR_INFO;
    int rc = key_check(key);
    if (rc)
        return rc;
    int i = info_find(in, key);
    if (i < 0)
        return MPI_ERR_INFO_NOKEY;
    free(in->keys[i]);
    free(in->vals[i]);
    memmove(in->keys + i, in->keys + i + 1, (size_t)(in->n - i - 1) * sizeof *in->keys);
    memmove(in->vals + i, in->vals + i + 1, (size_t)(in->n - i - 1) * sizeof *in->vals);
    in->n--;
    return MPI_SUCCESS;
}

/* Copies val into value[buflen] (truncated), MPI_Info_get_string style. */
static void copy_out(const char *val, char *value, int buflen)
{
    if (buflen <= 0)
        return;
    snprintf(value, (size_t)buflen, "%s", val);
}

int locus_info_get_string_impl(MPI_Info info, const char *key, int *buflen, char *value,
                               int *flag)
{
    info_t *in = info_of(info);
    if (!in)
        return MPI_ERR_INFO;
    int rc = key_check(key);
    if (rc == MPI_SUCCESS && (*buflen < 0 || (*buflen > 0 && !value)))
        rc = MPI_ERR_ARG;
    if (rc)
        return rc;
    int i = info_find(in, key);
    *flag = i >= 0;
    if (i < 0)
        return MPI_SUCCESS;
    copy_out(in->vals[i], value, *buflen);
    *buflen = (int)strlen(in->vals[i]) + 1;
    return MPI_SUCCESS;
}

int locus_info_get_impl(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    info_t *in = info_of(info);
    if (!in)
        return MPI_ERR_INFO;
    int rc = key_check(key);
    if (rc == MPI_SUCCESS && (valuelen < 0 || !value))
        rc = MPI_ERR_ARG;
    if (rc)
        return rc;
    int i = info_find(in, key);
    *flag = i >= 0;
    if (i >= 0)
        copy_out(in->vals[i], value, valuelen + 1);  /* valuelen excludes the NUL */
    return MPI_SUCCESS;
}

int locus_info_get_valuelen_impl(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    info_t *in = info_of(info);
    if (!in)
        return MPI_ERR_INFO;
    int rc = key_check(key);
    if (rc)
        return rc;
    int i = info_find(in, key);
    *flag = i >= 0;
    if (i >= 0)
        *valuelen = (int)strlen(in->vals[i]);
    return MPI_SUCCESS;
}

int locus_info_get_nkeys_impl(MPI_Info info, int *nkeys)
{
    info_t *in = info_of(info);
    if (!in)
        return MPI_ERR_INFO;
    *nkeys = in->n;
    return MPI_SUCCESS;
}

int locus_info_get_nthkey_impl(MPI_Info info, int n, char *key)
{
    info_t *in = info_of(info);
    if (!in)
        return MPI_ERR_INFO;
    if (!key || n < 0 || n >= in->n)
        return MPI_ERR_ARG;
    snprintf(key, MPI_MAX_INFO_KEY, "%s", in->keys[n]);
    return MPI_SUCCESS;
}

int locus_info_dup_impl(MPI_Info info, MPI_Info *newinfo)
{
    info_t *in = info_of(info);
    if (!in)
        return MPI_ERR_INFO;
    info_t *d = info_new();
    if (!d)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < in->n; i++)
        if (info_put(d, in->keys[i], in->vals[i]) != MPI_SUCCESS) {
            info_gone(d);
            return MPI_ERR_NO_MEM;
        }
    *newinfo = (MPI_Info)d;
    return MPI_SUCCESS;
}

int locus_info_update(MPI_Info *dst, MPI_Info src)
{
    info_t *from = info_of(src);
    if (!from)
        return MPI_ERR_INFO;
    int rc = *dst == MPI_INFO_NULL ? locus_info_create_impl(dst) : MPI_SUCCESS;
    info_t *to = info_of(*dst);
    for (int i = 0; rc == MPI_SUCCESS && i < from->n; i++)
        rc = info_put(to, from->keys[i], from->vals[i]);
    return rc;
}

LOCUS_PMPI_WEAK(Info_free)
int PMPI_Info_free(MPI_Info *info)
{
    LOCUS_ENTRY_CS();
    info_t *in = info ? info_of(*info) : NULL;
    /* MPI_INFO_ENV is predefined: it cannot be freed. */
    if (!in || in->predefined)
        return locus_mpi_err(NULL, MPI_ERR_INFO, "MPI_Info_free");
    info_gone(in);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}

/*
 * What the environment's info says besides command and argv, found once
 * for the whole process: MPI_Info_create_env may come before MPI_Init
 * (when the library knows neither the job's size nor the node's name) and
 * after the program changed directory, and every call, MPI_INFO_ENV
 * included, must give the same values (MPI-4.1 11.2.4: "the same
 * construction as MPI_INFO_ENV"). So the size comes from the launcher's
 * environment when MPI_Init has not read it yet, and the rest is read
 * from the system the first time.
 */
typedef struct {
    pthread_once_t once;
    char maxprocs[24];
    char host[256];
    char arch[sizeof ((struct utsname *)0)->machine];
    char wdir[4096];
} env_facts_t;

static env_facts_t env_facts = { .once = PTHREAD_ONCE_INIT };

/* The job's size: MPI_Init's when it ran, else what the launchers export
 * (PMI-1/2 under locusrun, Hydra and Slurm; Open MPI's mpirun), else 1
 * (a singleton). */
static int env_size(void)
{
    if (locus_mpi.boot.size > 0)
        return locus_mpi.boot.size;
    static const char *const vars[] = { "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "LOCUS_SIZE" };
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i]);
        char *end;
        long n = v ? strtol(v, &end, 10) : 0;
        if (v && *v && !*end && n > 0 && n <= INT_MAX)
            return (int)n;
    }
    return 1;
}

static void env_facts_read(void)
{
    env_facts_t *f = &env_facts;
    snprintf(f->maxprocs, sizeof f->maxprocs, "%d", env_size());
    if (gethostname(f->host, sizeof f->host) != 0)
        strcpy(f->host, "localhost");
    f->host[sizeof f->host - 1] = '\0';
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(f->arch, sizeof f->arch, "%s", u.machine);
    if (!getcwd(f->wdir, sizeof f->wdir))
        f->wdir[0] = '\0';
}

/* command and argv: from the call's own arguments (none: no such keys). */
static int env_args(info_t *in, int argc, char **argv)
{
    int rc = MPI_SUCCESS;
    if (argc > 0 && argv && argv[0])
        rc = info_put(in, "command", argv[0]);
    if (rc != MPI_SUCCESS || argc < 2 || !argv)
        return rc;
    size_t len = 0;
    for (int i = 1; i < argc && argv[i]; i++)
        len += strlen(argv[i]) + 1;
    char *all = calloc(1, len + 1);
    if (!all)
        return MPI_ERR_NO_MEM;
    for (int i = 1; i < argc && argv[i]; i++) {
        if (i > 1)
            strcat(all, " ");
        strcat(all, argv[i]);
    }
    rc = strlen(all) < MPI_MAX_INFO_VAL ? info_put(in, "argv", all) : MPI_SUCCESS;
    free(all);
    return rc;
}

/* The keys of MPI-4.1's list that Locus can answer; "file" is left out
 * (locusrun takes no such file). "soft" is maxprocs: the launcher starts
 * exactly that many. "thread_level" is the level asked for before the
 * program started (none can be: the default of MPI_Init), not what
 * MPI_Init_thread later gives, which MPI_Query_thread tells. */
static int env_fill(info_t *in, int argc, char **argv)
{
    pthread_once(&env_facts.once, env_facts_read);
    const env_facts_t *f = &env_facts;
    int rc = env_args(in, argc, argv);
    if (rc == MPI_SUCCESS)
        rc = info_put(in, "maxprocs", f->maxprocs);
    if (rc == MPI_SUCCESS)
        rc = info_put(in, "soft", f->maxprocs);
    if (rc == MPI_SUCCESS)
        rc = info_put(in, "host", f->host);
    if (rc == MPI_SUCCESS && f->arch[0])
        rc = info_put(in, "arch", f->arch);
    if (rc == MPI_SUCCESS && f->wdir[0])
        rc = info_put(in, "wdir", f->wdir);
    if (rc == MPI_SUCCESS)
        rc = info_put(in, "thread_level", locus_thread_level_name(MPI_THREAD_SINGLE));
    return rc;
}

int locus_info_env_init(int argc, char **argv)
{
    info_clear(&info_env);
    info_env.magic = INFO_MAGIC;
    info_env.predefined = 1;
    return env_fill(&info_env, argc, argv);
}

void locus_info_env_finalize(void)
{
    info_clear(&info_env);
}

LOCUS_PMPI_WEAK(Info_create_env)
int PMPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
    LOCUS_ENTRY_CS();
    if (!info)
        return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_Info_create_env");
    info_t *in = info_new();
    if (!in || env_fill(in, argc, argv) != MPI_SUCCESS) {
        info_gone(in);
        return locus_mpi_err(NULL, MPI_ERR_NO_MEM, "MPI_Info_create_env");
    }
    *info = (MPI_Info)in;
    return MPI_SUCCESS;
}

LOCUS_PMPI_WEAK(Abi_get_info)
int PMPI_Abi_get_info(MPI_Info *info)
{
    LOCUS_ENTRY_CS();
    if (!info)
        return locus_mpi_err(NULL, MPI_ERR_ARG, "MPI_Abi_get_info");
    info_t *in = info_new();
    char buf[32];
    int rc = in ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    const struct { const char *key; size_t size; } sizes[] = {
        {"mpi_aint_size", sizeof(MPI_Aint)}, {"mpi_count_size", sizeof(MPI_Count)},
        {"mpi_offset_size", sizeof(MPI_Offset)},
    };
    for (size_t i = 0; rc == MPI_SUCCESS && i < sizeof sizes / sizeof sizes[0]; i++) {
        snprintf(buf, sizeof buf, "%zu", sizes[i].size);
        rc = info_put(in, sizes[i].key, buf);
    }
    if (rc != MPI_SUCCESS) {
        info_gone(in);
        return locus_mpi_err(NULL, rc, "MPI_Abi_get_info");
    }
    *info = (MPI_Info)in;
    return MPI_SUCCESS;
}
