/*
 * dialect.c — Open MPI's and Hydra's mpirun words, turned into locusrun's
 * own before the command line is parsed (opts.c), so that middleware that
 * calls `mpirun` with the options of the MPI an application was certified
 * with runs it on Locus. What Locus can honour becomes its own option;
 * what it cannot is named in one warning line and dropped, never silently.
 *
 *   Open MPI  --mca/-mca/--gmca KEY VAL (and OMPI_MCA_KEY=VAL), --map-by
 *             OBJ:PE=T and its other modifiers, --rank-by, --bind-to
 *             hwthread, --allow-run-as-root, --display-map, --prefix
 *   Hydra     -genv VAR VAL, -env VAR VAL, -genvlist A,B, -genvall,
 *             -genvnone, -bind-to, -map-by, -iface IF, -envall, -l
 *             (and MPIEXEC_TIMEOUT, I_MPI_PIN, I_MPI_PIN_DOMAIN)
 *
 * Options both share with locusrun (-n, -np, -N, -ppn, -H, -hosts, -f,
 * --hostfile, -x, --oversubscribe, --report-bindings, -launcher) are
 * opts.c's already.
 */
#include "launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

/* The words being built; every one is owned here (launch_dialect_free). */
static int word_add(launch_dialect_t *d, const char *w)
{
    char **na = realloc(d->argv, (size_t)(d->argc + 2) * sizeof *na);
    if (!na)
        return -1;
    d->argv = na;
    if (!(na[d->argc] = strdup(w)))
        return -1;
    na[++d->argc] = NULL;
    return 0;
}

static int words_add(launch_dialect_t *d, const char *a, const char *b)
{
    return word_add(d, a) < 0 || (b && word_add(d, b) < 0) ? -1 : 0;
}

static void warn_ignored(const char *what, const char *why)
{
    fprintf(stderr, "locusrun: %s: %s; ignored\n", what, why);
}

/* -genv VAR VAL / -env VAR VAL: the value given. */
static int genv_apply(launch_dialect_t *d, const char *var, const char *val)
{
    size_t len = strlen(var) + strlen(val) + 2;
    char *kv = malloc(len);
    if (!kv)
        return -1;
    snprintf(kv, len, "%s=%s", var, val);
    int rc = words_add(d, "-x", kv);
    free(kv);
    return rc;
}

/* The interfaces MPI traffic may use (Open MPI's btl_tcp_if_include,
 * Hydra's -iface): the tcp transport's own list, which the plan's choice
 * of NIC then does not override. */
static int ifaces_apply(launch_dialect_t *d, const char *list)
{
    return genv_apply(d, "LOCUS_NET_IFACES", list);
}

/* An Open MPI MCA parameter: Locus's equivalent, or a warning. `from` is
 * how it was given, for the message. */
static int mca_apply(launch_dialect_t *d, const char *key, const char *val, const char *from,
                     int warn)
{
    char what[512];
    snprintf(what, sizeof what, "%s %s %s", from, key, val);
    if (!strcmp(key, "btl_tcp_if_include"))
        return ifaces_apply(d, val);
    if (!strcmp(key, "oob_tcp_if_include"))
        return 0; /* Open MPI's own control traffic: locusrun's goes over ssh's stdio */
    if (!strcmp(key, "hwloc_base_binding_policy"))
        return words_add(d, "--bind-to", val);
    if (!strcmp(key, "rmaps_base_mapping_policy"))
        return words_add(d, "--map-by", val);
    if (!strcmp(key, "rmaps_base_oversubscribe") && (!strcmp(val, "1") || !strcmp(val, "true")))
        return word_add(d, "--oversubscribe");
    if (!strcmp(key, "orte_tag_output") && (!strcmp(val, "1") || !strcmp(val, "true")))
        return word_add(d, "--tag-output");
    if (!strcmp(key, "hwloc_base_report_bindings") && (!strcmp(val, "1") || !strcmp(val, "true")))
        return word_add(d, "--report-bindings");
    /* Choices of Open MPI's own components (btl, pml, coll, ...) have no
     * meaning here: Locus picks its transports itself (LOCUS_TRANSPORTS). */
    if (warn)
        warn_ignored(what, "an Open MPI parameter Locus has no equivalent for");
    return 0;
}

/* --map-by OBJ[:MOD[,MOD]...] (Open MPI 4: PE=T, OVERSUBSCRIBE, SPAN, ...;
 * also ppr:N:OBJ:PE=T). */
static int map_apply(launch_dialect_t *d, const char *opt, const char *val)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", val);
    /* The policy is everything before the first modifier: ppr:N:OBJ has
     * two colons of its own. */
    char *mods = NULL;
    int colons = !strncmp(buf, "ppr:", 4) ? 2 : 0;
    for (char *p = buf; *p; p++)
        if (*p == ':' && colons-- == 0) {
            *p = '\0';
            mods = p + 1;
            break;
        }
    if (!strcmp(buf, "hwthread")) {
        /* Each rank on a hardware thread of its own. */
        if (words_add(d, "--map-by", "core") < 0 || words_add(d, "--bind-to", "pu") < 0)
            return -1;
    } else if (!strcmp(buf, "board")) {
        if (words_add(d, "--map-by", "numa") < 0)
            return -1;
    } else if (words_add(d, "--map-by", buf) < 0) {
        return -1;
    }
    char *save = NULL;
    for (char *m = mods ? strtok_r(mods, ",:", &save) : NULL; m; m = strtok_r(NULL, ",:", &save)) {
        if (!strncmp(m, "PE=", 3) || !strncmp(m, "pe=", 3)) {
            if (words_add(d, "--cpus-per-rank", m + 3) < 0)
                return -1;
        } else if (!strcmp(m, "OVERSUBSCRIBE") || !strcmp(m, "oversubscribe")) {
            if (word_add(d, "--oversubscribe") < 0)
                return -1;
        } else if (strcmp(m, "NOOVERSUBSCRIBE") && strcmp(m, "nooversubscribe")) {
            char what[320];
            snprintf(what, sizeof what, "%s %s: modifier %s", opt, val, m);
            warn_ignored(what, "not a modifier Locus honours (PE=T, OVERSUBSCRIBE)");
        }
    }
    return 0;
}

/* Hydra's -genvall: the whole environment of mpiexec, as Hydra passes it
 * (locusrun passes only -x's and its own tunables to other nodes). */
static int genvall_apply(launch_dialect_t *d)
{
    static const char *const skip[] = { "HOSTNAME=", "PWD=", "OLDPWD=", "SHLVL=", "_=", "SSH_" };
    for (char **e = environ; *e; e++) {
        int keep = strchr(*e, '=') != NULL;
        for (size_t i = 0; keep && i < sizeof skip / sizeof skip[0]; i++)
            keep = strncmp(*e, skip[i], strlen(skip[i])) != 0;
        if (keep && words_add(d, "-x", *e) < 0)
            return -1;
    }
    return 0;
}

/* -genvlist A,B: those variables, from this environment. */
static int genvlist_apply(launch_dialect_t *d, const char *val)
{
    char buf[1024], *save = NULL;
    snprintf(buf, sizeof buf, "%s", val);
    for (char *v = strtok_r(buf, ",", &save); v; v = strtok_r(NULL, ",", &save))
        if (words_add(d, "-x", v) < 0)
            return -1;
    return 0;
}


/* What the launching scripts of the two set in the environment, applied
 * ahead of the command line (whose options then win). */
static int env_apply(launch_dialect_t *d)
{
    const char *t = getenv("MPIEXEC_TIMEOUT");
    if (t && *t && words_add(d, "--timeout", t) < 0)
        return -1;
    const char *pin = getenv("I_MPI_PIN");
    if (pin && (!strcmp(pin, "0") || !strcmp(pin, "off") || !strcmp(pin, "no") ||
                !strcmp(pin, "disable")) && words_add(d, "--bind-to", "none") < 0)
        return -1;
    const char *dom = getenv("I_MPI_PIN_DOMAIN");
    if (dom && *dom) {
        static const struct { const char *intel, *locus; } doms[] = {
            { "core", "core" }, { "socket", "socket" }, { "sock", "socket" },
            { "numa", "numa" }, { "node", "none" }, { "cache3", "l3cache" },
        };
        size_t i = 0;
        while (i < sizeof doms / sizeof doms[0] && strcmp(dom, doms[i].intel))
            i++;
        if (i < sizeof doms / sizeof doms[0]) {
            if (words_add(d, "--bind-to", doms[i].locus) < 0)
                return -1;
        } else {
            char what[300];
            snprintf(what, sizeof what, "I_MPI_PIN_DOMAIN=%s", dom);
            warn_ignored(what, "Locus binds to core, socket, numa, cache3 or node domains only");
        }
    }
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "OMPI_MCA_", 9) != 0)
            continue;
        char key[256];
        const char *eq = strchr(*e, '=');
        if (!eq || (size_t)(eq - *e - 9) >= sizeof key)
            continue;
        memcpy(key, *e + 9, (size_t)(eq - *e - 9));
        key[eq - *e - 9] = '\0';
        /* Only what maps, silently: the rest is Open MPI's own business,
         * and its environment reaches the ranks anyway. */
        if (mca_apply(d, key, eq + 1, "OMPI_MCA_", 0) < 0)
            return -1;
    }
    return 0;
}

/* One option word at argv[i] (with its value words): 0 when it is not a
 * dialect option, else how many words it took, or -1 (out of memory or a
 * missing value, with err). */
static int option_apply(launch_dialect_t *d, int argc, char **argv, int i, char *err,
                        size_t errlen)
{
    const char *w = argv[i];
    const char *v1 = i + 1 < argc ? argv[i + 1] : NULL, *v2 = i + 2 < argc ? argv[i + 2] : NULL;
    int two = !strcmp(w, "--mca") || !strcmp(w, "-mca") || !strcmp(w, "--gmca") ||
              !strcmp(w, "-gmca") || !strcmp(w, "-genv") || !strcmp(w, "-env");
    int one = !strcmp(w, "-genvlist") || !strcmp(w, "-envlist") || !strcmp(w, "-bind-to") ||
              !strcmp(w, "-map-by") || !strcmp(w, "-iface") || !strcmp(w, "--rank-by") ||
              !strcmp(w, "-rank-by") || !strcmp(w, "--prefix") || !strcmp(w, "--map-by") ||
              !strncmp(w, "--map-by=", 9);
    if ((two && !v2) || (one && !v1 && strncmp(w, "--map-by=", 9))) {
        snprintf(err, errlen, "%s: needs %s", w, two ? "two values" : "a value");
        return -1;
    }
    if (!strcmp(w, "--mca") || !strcmp(w, "-mca") || !strcmp(w, "--gmca") || !strcmp(w, "-gmca"))
        return mca_apply(d, v1, v2, w, 1) < 0 ? -1 : 3;
    if (!strcmp(w, "-genv") || !strcmp(w, "-env"))
        return genv_apply(d, v1, v2) < 0 ? -1 : 3;
    if (!strcmp(w, "-genvlist") || !strcmp(w, "-envlist"))
        return genvlist_apply(d, v1) < 0 ? -1 : 2;
    if (!strcmp(w, "-genvall") || !strcmp(w, "-envall"))
        return genvall_apply(d) < 0 ? -1 : 1;
    if (!strcmp(w, "-genvnone") || !strcmp(w, "-envnone")) {
        warn_ignored(w, "locusrun passes only -x variables and its own tunables to other nodes "
                     "already");
        return 1;
    }
    if (!strcmp(w, "-bind-to"))
        return words_add(d, "--bind-to", v1) < 0 ? -1 : 2;
    if (!strcmp(w, "-map-by") || !strcmp(w, "--map-by"))
        return map_apply(d, w, v1) < 0 ? -1 : 2;
    if (!strncmp(w, "--map-by=", 9))
        return map_apply(d, "--map-by", w + 9) < 0 ? -1 : 1;
    if (!strcmp(w, "-iface"))
        return ifaces_apply(d, v1) < 0 ? -1 : 2;
    if (!strcmp(w, "--rank-by") || !strcmp(w, "-rank-by")) {
        /* Locus numbers ranks in mapping order: Open MPI's slot and core. */
        if (strcmp(v1, "slot") && strcmp(v1, "core") && strcmp(v1, "fill")) {
            char what[300];
            snprintf(what, sizeof what, "%s %s", w, v1);
            warn_ignored(what, "ranks are numbered in mapping order (--rank-by slot)");
        }
        return 2;
    }
    if (!strcmp(w, "--prefix")) {
        char what[300];
        snprintf(what, sizeof what, "%s %s", w, v1);
        warn_ignored(what, "locusrun finds its proxy and library next to itself");
        return 2;
    }
    if (!strcmp(w, "--allow-run-as-root") || !strcmp(w, "-q") || !strcmp(w, "--quiet"))
        return 1; /* nothing to allow, nothing chatty to silence */
    if (!strcmp(w, "--display-map") || !strcmp(w, "--display-allocation"))
        return word_add(d, "--report-bindings") < 0 ? -1 : 1;
    if (!strcmp(w, "-l") || !strcmp(w, "-prepend-rank"))
        return word_add(d, "--tag-output") < 0 ? -1 : 1;
    return 0;
}

int launch_dialect_translate(launch_dialect_t *d, int argc, char **argv, char *err,
                             size_t errlen)
{
    memset(d, 0, sizeof *d);
    snprintf(err, errlen, "out of memory");
    if (word_add(d, argc > 0 ? argv[0] : "locusrun") < 0)
        return -1;
    /* --proxy and --cleanup are locusrun's own roles: nothing to translate. */
    int role = argc > 1 && (!strcmp(argv[1], "--proxy") || !strcmp(argv[1], "--cleanup") ||
                            !strcmp(argv[1], "--proxy-connect"));
    if (!role && env_apply(d) < 0)
        return -1;
    int i = 1;
    for (; i < argc && !role; ) {
        const char *w = argv[i];
        if (w[0] != '-' || !strcmp(w, "--"))
            break;
        int took = option_apply(d, argc, argv, i, err, errlen);
        if (took < 0)
            return -1;
        if (took > 0) {
            i += took;
            continue;
        }
        /* locusrun's own option: itself and, when it takes one, its value
         * (opts.c knows which; the program's name is never an option). */
        if (word_add(d, w) < 0)
            return -1;
        i++;
        if (i < argc && strchr(w, '=') == NULL && argv[i][0] != '-' && launch_opt_takes_value(w)) {
            if (word_add(d, argv[i]) < 0)
                return -1;
            i++;
        }
    }
    for (; i < argc; i++)
        if (word_add(d, argv[i]) < 0)
            return -1;
    return 0;
}

void launch_dialect_free(launch_dialect_t *d)
{
    for (int i = 0; i < d->argc; i++)
        free(d->argv[i]);
    free(d->argv);
    memset(d, 0, sizeof *d);
}
