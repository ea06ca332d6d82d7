/*
 * MPI_T control variables are the LOCUS_* tunables: the same names, docs
 * and values in force as `locus info --json` (argv[1] is the locus
 * binary), in the same order; every variable in exactly one category;
 * enumeration words taken from the docs; typed reads of values set in
 * the environment (LOCUS_SHM_EAGER_MAX=8k, LOCUS_COLL_BCAST=linear from
 * the test's environment); a write before MPI_Init that MPI_Init acts on
 * (LOCUS_YIELD=always, seen through the core's locus_core_yield);
 * writes refused with the right code; errors for bad indices and handles.
 */
#include <stdlib.h>
#include <string.h>

#include "tcheck.h"

#define MAXV 256

typedef struct {
    char name[128], value[1024], doc[1024];
} row_t;

/* Reads the JSON string at p (just after its opening quote) into out. */
static const char *json_string(const char *p, char *out, size_t cap)
{
    size_t n = 0;
    for (; *p && *p != '"'; p++) {
        if (*p == '\\' && p[1])
            p++;
        if (n + 1 < cap)
            out[n++] = *p;
    }
    out[n] = '\0';
    return *p ? p + 1 : p;
}

static int field(const char *line, const char *key, char *out, size_t cap)
{
    char pat[32];
    snprintf(pat, sizeof pat, "\"%s\": \"", key);
    const char *p = strstr(line, pat);
    if (!p)
        return -1;
    json_string(p + strlen(pat), out, cap);
    return 0;
}

/* The tunables as `locus info --json` lists them. */
static int info_rows(const char *locus, row_t *rows, int max)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s info --json", locus);
    FILE *f = popen(cmd, "r");
    if (!f)
        return -1;
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f))
        if (n < max && strstr(line, "{\"name\": ") && !field(line, "name", rows[n].name, 128) &&
            !field(line, "value", rows[n].value, 1024) && !field(line, "doc", rows[n].doc, 1024))
            n++;
    return pclose(f) == 0 ? n : -1;
}

static long parse_size(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s)
        return -1;
    switch (*end) {
    case 'k': case 'K': return v << 10;
    case 'm': case 'M': return v << 20;
    case 'g': case 'G': return v << 30;
    case '\0': return v;
    }
    return -1;
}

static int cvar_index(const char *name)
{
    int i = -1;
    int rc = MPI_T_cvar_get_index(name, &i);
    CHECK(rc == MPI_SUCCESS, "MPI_T_cvar_get_index(%s) = %d", name, rc);
    return i;
}

/* Writes v (of the cvar's type) to the variable named; the return code. */
static int cvar_write(const char *name, const void *v)
{
    MPI_T_cvar_handle h;
    int count;
    int rc = MPI_T_cvar_handle_alloc(cvar_index(name), NULL, &h, &count);
    CHECK(rc == MPI_SUCCESS, "handle_alloc(%s) = %d", name, rc);
    rc = MPI_T_cvar_write(h, v);
    MPI_T_cvar_handle_free(&h);
    return rc;
}

static void check_against_info(const row_t *rows, int nrows)
{
    int num = 0;
    CHECK(MPI_T_cvar_get_num(&num) == MPI_SUCCESS, "get_num");
    CHECK(num == nrows && num > 20, "MPI_T has %d cvars, locus info %d", num, nrows);
    for (int i = 0; i < num && i < nrows; i++) {
        char name[128], desc[1024];
        int name_len = 0, desc_len = 0, verb, bind, scope;
        MPI_Datatype dt;
        MPI_T_enum en;
        /* Lengths first (no buffers), then the strings. */
        CHECK(MPI_T_cvar_get_info(i, NULL, &name_len, NULL, NULL, NULL, NULL, &desc_len, NULL,
                                  NULL) == MPI_SUCCESS, "lengths of %d", i);
        CHECK(name_len == (int)strlen(rows[i].name) + 1, "%s: name_len %d", rows[i].name,
              name_len);
        name_len = sizeof name;
        desc_len = sizeof desc;
        CHECK(MPI_T_cvar_get_info(i, name, &name_len, &verb, &dt, &en, desc, &desc_len, &bind,
                                  &scope) == MPI_SUCCESS, "info of %d", i);
        CHECK(strcmp(name, rows[i].name) == 0, "cvar %d is %s, locus info says %s", i, name,
              rows[i].name);
        CHECK(strcmp(desc, rows[i].doc) == 0, "%s: doc differs: '%s' vs '%s'", name, desc,
              rows[i].doc);
        CHECK(bind == MPI_T_BIND_NO_OBJECT, "%s: bind %d", name, bind);
        /* The value in force, typed. */
        MPI_T_cvar_handle h;
        int count;
        CHECK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count) == MPI_SUCCESS, "alloc %s", name);
        if (dt == MPI_CHAR) {
            char v[1024];
            CHECK(count == 1024 && en == MPI_T_ENUM_NULL, "%s: count %d", name, count);
            CHECK(MPI_T_cvar_read(h, v) == MPI_SUCCESS && strcmp(v, rows[i].value) == 0,
                  "%s reads '%s', locus info '%s'", name, v, rows[i].value);
        } else if (dt == MPI_UNSIGNED_LONG) {
            unsigned long v = 0;
            CHECK(count == 1, "%s: count %d", name, count);
            CHECK(MPI_T_cvar_read(h, &v) == MPI_SUCCESS && (long)v == parse_size(rows[i].value),
                  "%s reads %lu, locus info '%s'", name, v, rows[i].value);
        } else {
            int v = -1, num_items = 0, len = 64;
            char item[64], ename[128];
            int elen = sizeof ename;
            CHECK(dt == MPI_INT && en != MPI_T_ENUM_NULL, "%s: type", name);
            CHECK(MPI_T_cvar_read(h, &v) == MPI_SUCCESS, "read %s", name);
            CHECK(MPI_T_enum_get_info(en, &num_items, ename, &elen) == MPI_SUCCESS &&
                  strcmp(ename, name) == 0, "%s: enum '%s'", name, ename);
            CHECK(MPI_T_enum_get_item(en, v, &v, item, &len) == MPI_SUCCESS &&
                  strcmp(item, rows[i].value) == 0, "%s reads %s, locus info '%s'", name, item,
                  rows[i].value);
            /* Every word is one the doc names (the docs are the table's truth). */
            for (int k = 0; k < num_items; k++) {
                len = sizeof item;
                MPI_T_enum_get_item(en, k, &v, item, &len);
                CHECK(v == k && strstr(rows[i].doc, item), "%s: word %s not in its doc", name,
                      item);
            }
            len = sizeof item;
            CHECK(MPI_T_enum_get_item(en, num_items, &v, item, &len) == MPI_T_ERR_INVALID_ITEM,
                  "%s: item past the end", name);
        }
        MPI_T_cvar_handle_free(&h);
        CHECK(h == MPI_T_CVAR_HANDLE_NULL, "freed handle not nulled");
    }
}

/* Every cvar belongs to exactly one category. */
static void check_categories(int num)
{
    int ncat = 0, seen[MAXV] = {0};
    MPI_T_category_get_num(&ncat);
    for (int c = 0; c < ncat; c++) {
        int nc = -1, idx[MAXV];
        MPI_T_category_get_info(c, NULL, NULL, NULL, NULL, &nc, NULL, NULL);
        CHECK(nc >= 0 && nc <= MAXV, "category %d: %d cvars", c, nc);
        CHECK(MPI_T_category_get_cvars(c, nc, idx) == MPI_SUCCESS, "get_cvars %d", c);
        for (int k = 0; k < nc && k < MAXV; k++)
            if (idx[k] >= 0 && idx[k] < MAXV)
                seen[idx[k]]++;
    }
    for (int i = 0; i < num && i < MAXV; i++)
        CHECK(seen[i] == 1, "cvar %d is in %d categories", i, seen[i]);
}

static void check_typed(void)
{
    int i = cvar_index("LOCUS_SHM_EAGER_MAX"), scope, cat;
    MPI_Datatype dt;
    MPI_T_cvar_get_info(i, NULL, NULL, NULL, &dt, NULL, NULL, NULL, NULL, &scope);
    CHECK(dt == MPI_UNSIGNED_LONG && scope == MPI_T_SCOPE_LOCAL, "LOCUS_SHM_EAGER_MAX type");
    MPI_T_cvar_handle h;
    int count;
    unsigned long v = 0;
    MPI_T_cvar_handle_alloc(i, NULL, &h, &count);
    CHECK(MPI_T_cvar_read(h, &v) == MPI_SUCCESS && v == 8192, "8k from the environment: %lu", v);
    MPI_T_cvar_handle_free(&h);
    /* Its category is the shm layer's. */
    CHECK(MPI_T_category_get_index("locus_shm", &cat) == MPI_SUCCESS, "locus_shm category");
    int idx[MAXV], n = 0, found = 0;
    MPI_T_category_get_info(cat, NULL, NULL, NULL, NULL, &n, NULL, NULL);
    MPI_T_category_get_cvars(cat, n, idx);
    for (int k = 0; k < n; k++)
        found |= idx[k] == i;
    CHECK(found, "LOCUS_SHM_EAGER_MAX not in locus_shm");

    i = cvar_index("LOCUS_COLL_BCAST");
    MPI_T_enum en;
    MPI_T_cvar_get_info(i, NULL, NULL, NULL, &dt, &en, NULL, NULL, NULL, &scope);
    CHECK(dt == MPI_INT && scope == MPI_T_SCOPE_ALL_EQ, "LOCUS_COLL_BCAST type/scope");
    int e = -1;
    MPI_T_cvar_handle_alloc(i, NULL, &h, &count);
    MPI_T_cvar_read(h, &e);
    CHECK(e == 3, "LOCUS_COLL_BCAST=linear is item 3, read %d", e);
    MPI_T_cvar_handle_free(&h);
}

int main(int argc, char **argv)
{
    int provided, rc;
    row_t *rows = calloc(MAXV, sizeof *rows);
    if (argc < 2 || !rows) {
        fprintf(stderr, "usage: mpit_cvars LOCUS_BINARY\n");
        return 2;
    }
    int nrows = info_rows(argv[1], rows, MAXV);
    CHECK(nrows > 0, "locus info --json gave %d rows", nrows);

    /* Nothing works before MPI_T_init_thread. */
    int num;
    CHECK(MPI_T_cvar_get_num(&num) == MPI_T_ERR_NOT_INITIALIZED, "before init");
    CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS, "T_init");

    check_against_info(rows, nrows);
    check_categories(nrows);
    check_typed();

    /* Before MPI_Init: what MPI_Init reads can be written... */
    int always = 1;
    CHECK(cvar_write("LOCUS_YIELD", &always) == MPI_SUCCESS, "write LOCUS_YIELD before init");
    int bad_item = 3;
    CHECK(cvar_write("LOCUS_YIELD", &bad_item) == MPI_T_ERR_INVALID, "LOCUS_YIELD item 3");
    /* ...what only locusrun reads, or sets for the ranks, never. */
    CHECK(cvar_write("LOCUS_KILL_GRACE", "2") == MPI_T_ERR_CVAR_SET_NEVER, "launcher cvar");
    CHECK(cvar_write("LOCUS_JOBID", "x") == MPI_T_ERR_CVAR_SET_NEVER, "LOCUS_JOBID");

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &tc_rank);
    /* MPI_Init took LOCUS_YIELD=always: one rank on this node would not
     * yield otherwise. */
    MPI_T_pvar_session s;
    MPI_T_pvar_handle ph;
    int pi = -1, count, yield = -1;
    CHECK(MPI_T_pvar_get_index("locus_core_yield", MPI_T_PVAR_CLASS_STATE, &pi) == MPI_SUCCESS,
          "locus_core_yield");
    MPI_T_pvar_session_create(&s);
    MPI_T_pvar_handle_alloc(s, pi, NULL, &ph, &count);
    CHECK(MPI_T_pvar_read(s, ph, &yield) == MPI_SUCCESS && yield == 1,
          "LOCUS_YIELD=always written before MPI_Init, yet yield = %d", yield);
    MPI_T_pvar_session_free(&s);

    /* After MPI_Init: MPI_Init's variables are fixed, the collective
     * choices still apply to communicators made later. */
    unsigned long eager = 65536;
    CHECK(cvar_write("LOCUS_SHM_EAGER_MAX", &eager) == MPI_T_ERR_CVAR_SET_NOT_NOW,
          "shm eager after init");
    int binomial = 1, e = -1;
    CHECK(cvar_write("LOCUS_COLL_BCAST", &binomial) == MPI_SUCCESS, "bcast after init");
    MPI_T_cvar_handle h;
    MPI_T_cvar_handle_alloc(cvar_index("LOCUS_COLL_BCAST"), NULL, &h, &count);
    CHECK(MPI_T_cvar_read(h, &e) == MPI_SUCCESS && e == 1, "bcast reads back %d", e);
    CHECK(strcmp(getenv("LOCUS_COLL_BCAST"), "binomial") == 0, "the environment the layer reads");
    char transports[1024];
    int ti = cvar_index("LOCUS_TRANSPORTS");
    MPI_T_cvar_handle th;
    MPI_T_cvar_handle_alloc(ti, NULL, &th, &count);
    CHECK(MPI_T_cvar_read(th, transports) == MPI_SUCCESS && strcmp(transports, "auto") == 0,
          "LOCUS_TRANSPORTS '%s'", transports);
    MPI_T_cvar_handle_free(&th);

    /* Errors. */
    char name[64];
    int len = sizeof name;
    CHECK(MPI_T_cvar_get_info(-1, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL) ==
          MPI_T_ERR_INVALID_INDEX, "index -1");
    CHECK(MPI_T_cvar_get_info(nrows, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL) ==
          MPI_T_ERR_INVALID_INDEX, "index num");
    CHECK(MPI_T_cvar_get_index("LOCUS_NO_SUCH", &pi) == MPI_T_ERR_INVALID_NAME, "bad name");
    CHECK(MPI_T_cvar_handle_alloc(nrows, NULL, &th, &count) == MPI_T_ERR_INVALID_INDEX,
          "alloc bad index");
    MPI_T_cvar_handle stale = h;
    MPI_T_cvar_handle_free(&h);
    CHECK(MPI_T_cvar_read(stale, &e) == MPI_T_ERR_INVALID_HANDLE, "read freed handle");
    CHECK(MPI_T_cvar_handle_free(&stale) == MPI_T_ERR_INVALID_HANDLE, "double free");
    CHECK(MPI_T_cvar_write(MPI_T_CVAR_HANDLE_NULL, &e) == MPI_T_ERR_INVALID_HANDLE, "null handle");
    len = 4; /* truncated, still terminated */
    MPI_T_cvar_get_info(0, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    CHECK(len == 4 && strlen(name) == 3, "truncated name '%s' len %d", name, len);

    CHECK(MPI_T_finalize() == MPI_SUCCESS, "T_finalize");
    CHECK(MPI_T_cvar_get_num(&num) == MPI_T_ERR_NOT_INITIALIZED, "after T_finalize");
    CHECK(MPI_T_finalize() == MPI_T_ERR_NOT_INITIALIZED, "extra T_finalize");
    free(rows);
    rc = tc_report(MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
}
