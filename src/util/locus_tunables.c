#include "locus_tunables.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define LOCUS_TUNABLE(name, def, doc) { name, def, doc },
static const locus_tunable_t table[] = {
#include "tunables_launch.def"
#include "tunables_place.def"
#include "tunables_boot.def"
#include "tunables_core.def"
#include "tunables_shm.def"
#include "tunables_tcp.def"
#include "tunables_coll.def"
#include "tunables_mpi.def"
#include "tunables_rma.def"
#include "tunables_bench.def"
};
#undef LOCUS_TUNABLE

const locus_tunable_t *locus_tunables(int *count)
{
    *count = (int)(sizeof table / sizeof table[0]);
    return table;
}

const locus_tunable_t *locus_tunable_find(const char *name)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].name, name) == 0)
            return &table[i];
    return NULL;
}

const char *locus_tunable_str(const char *name)
{
    const locus_tunable_t *t = locus_tunable_find(name);
    if (!t) {
        fprintf(stderr, "locus: internal error: %s is not in the tunables table\n", name);
        abort();
    }
    const char *v = getenv(name);
    return (v && *v) ? v : t->default_val;
}

int locus_parse_size(const char *s, long *out)
{
    if (!s || !*s)
        return -1;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno || end == s || v < 0)
        return -1;
    long mult = 1;
    switch (*end) {
    case '\0': break;
    case 'k': case 'K': mult = 1L << 10; end++; break;
    case 'm': case 'M': mult = 1L << 20; end++; break;
    case 'g': case 'G': mult = 1L << 30; end++; break;
    default: return -1;
    }
    if (*end != '\0' || (v > 0 && mult > 1 && v > (long)(0x7fffffffffffffffL / mult)))
        return -1;
    *out = v * mult;
    return 0;
}

int locus_tunable_long(const char *name, long *out, char *err, size_t errlen)
{
    const char *v = locus_tunable_str(name);
    if (locus_parse_size(v, out) != 0) {
        snprintf(err, errlen, "%s=%s is not a non-negative integer (suffixes k, M, G allowed)",
                 name, v);
        return -1;
    }
    return 0;
}

void locus_tunables_print(FILE *out)
{
    int n;
    const locus_tunable_t *t = locus_tunables(&n);
    fprintf(out, "%-28s %-12s %-12s %s\n", "VARIABLE", "VALUE", "DEFAULT", "MEANING");
    for (int i = 0; i < n; i++) {
        const char *env = getenv(t[i].name);
        int set = env && *env;
        char val[64];
        snprintf(val, sizeof val, "%s%s", set ? env : t[i].default_val, set ? "*" : "");
        fprintf(out, "%-28s %-12s %-12s %s\n", t[i].name, val, t[i].default_val, t[i].doc);
    }
    fprintf(out, "(* = set in the environment)\n");
}
