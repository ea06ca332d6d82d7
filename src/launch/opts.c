/*
 * opts.c — locusrun's command line (mpirun conventions). Everything is
 * validated here, before anything is started, so bad input always ends
 * with one line and exit status 2.
 */
#include "launch.h"
#include "locus_place.h"
#include "locus_tunables.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NRANKS_MAX 100000

/* How proxies start through Slurm: one step of one task per node, sharing
 * the allocation's resources with the job's other steps, no PMI plugin of
 * Slurm's, output unbuffered (it carries the control stream). */
#define SLURM_PREFIX "srun --nodes=1 --ntasks=1 --overlap --mpi=none --unbuffered --nodelist"

static const char usage[] =
    "usage: locusrun -n N [--host H1[:S],H2[:S]... | --hostfile FILE] [--ppn K]\n"
    "                [--map-by node|slot|POLICY] [--bind-to LEVEL] [--cpus-per-rank T]\n"
    "                [--oversubscribe] [--nic LIST] [--rails R] [--mem-on NODE]\n"
    "                [--launcher ssh|exec|slurm|local] [--launcher-exec CMD]\n"
    "                [--report-bindings] [--tag-output] [--timeout SEC] [--no-abi-swap]\n"
    "                [--startup-report] [--mpi pmi1|pmix]\n"
    "                [-x VAR[=VAL]] [--topology FILE.xml --dry-run] prog [args...]\n"
    "       locusrun --name-server   a name service for several launches: prints\n"
    "                LOCUS_NAME_SERVER=... to export to them, serves until SIGTERM\n"
    "  -n, -np N          number of ranks (default 1; with hosts: all their slots)\n"
    "  -H, --host LIST    nodes to run on, HOST or HOST:SLOTS, comma-separated\n"
    "  --hostfile FILE    nodes from a file (\"host slots=N\" or \"host:N\" lines)\n"
    "  -N, --ppn K        K ranks per node\n"
    "  --map-by node      ranks round-robin over nodes (default: fill each node's slots)\n"
    "  --launcher L       how proxies reach nodes: ssh (default with hosts), exec, local,\n"
    "                     slurm (srun; the default inside a Slurm allocation, whose\n"
    "                     SLURM_JOB_NODELIST and SLURM_TASKS_PER_NODE are the hosts)\n"
    "  --launcher-exec C  the ssh command, or the exec launcher's prefix (C HOST CMD...)\n"
    "  --report-bindings  print each rank's PUs, NUMA node, NIC and GPU before start\n"
    "  --tag-output       prefix every output line with \"[rank] \"\n"
    "  --timeout SEC      kill the job after SEC seconds (exit status 124)\n"
    "  -x VAR[=VAL]       export VAR (from this environment, or set to VAL) to ranks\n"
    "  --topology FILE    plan for the machine in an hwloc XML (only with --dry-run)\n"
    "  --dry-run          print the placement plan and start nothing\n"
    "  --no-abi-swap      do not put Locus's libmpi_abi.so.1 first on the ranks' loader path\n"
    "  --startup-report   print what start-up cost (LOCUS_STARTUP_REPORT=1): per phase from\n"
    "                     rank 0 at MPI_Finalize, and what each node's PMI server served\n"
    "  --mpi pmix         serve PMIx too (OpenPMIx), for programs built with Open MPI;\n"
    "                     pmi1 (default): PMI-1 only (Locus, MPICH)\n"
    "See docs/locusrun.md.\n";

static int parse_nranks(const char *opt, const char *val, int *out, char *err,
                        size_t errlen)
{
    char *end;
    errno = 0;
    long v = strtol(val, &end, 10);
    if (val[0] == '\0' || *end != '\0' || errno != 0 || v <= 0 || v > NRANKS_MAX) {
        snprintf(err, errlen, "%s: '%s' is not a positive integer%s", opt, val,
                 (errno == 0 && *end == '\0' && v > NRANKS_MAX) ? " up to 100000" : "");
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int parse_timeout(const char *val, double *out, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    double v = strtod(val, &end);
    if (val[0] == '\0' || *end != '\0' || errno != 0 || !(v > 0) || v > 1e7) {
        snprintf(err, errlen, "--timeout: '%s' is not a positive number of seconds", val);
        return -1;
    }
    *out = v;
    return 0;
}

/* Finds prog like execvp would; returns a malloc'd path or NULL + reason. */
static char *resolve_program(const char *prog, char *err, size_t errlen)
{
    struct stat st;
    if (strchr(prog, '/') != NULL) {
        if (stat(prog, &st) != 0) {
            snprintf(err, errlen, "%s: %s", prog, strerror(errno));
            return NULL;
        }
        if (!S_ISREG(st.st_mode) || access(prog, X_OK) != 0) {
            snprintf(err, errlen, "%s: is not an executable file", prog);
            return NULL;
        }
        return strdup(prog);
    }
    const char *path = getenv("PATH");
    if (path == NULL || path[0] == '\0')
        path = "/usr/local/bin:/usr/bin:/bin";
    size_t plen = strlen(prog);
    for (const char *p = path; ; p = strchr(p, ':') + 1) {
        const char *q = strchr(p, ':');
        size_t dlen = q ? (size_t)(q - p) : strlen(p);
        char *cand = malloc(dlen + plen + 3);
        if (cand == NULL)
            break;
        snprintf(cand, dlen + plen + 3, "%.*s/%s", (int)(dlen ? dlen : 1),
                 dlen ? p : ".", prog);
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
            return cand;
        free(cand);
        if (q == NULL)
            break;
    }
    snprintf(err, errlen, "%s: command not found", prog);
    return NULL;
}

/* Splits "--opt=value" so both spellings are accepted. */
static const char *split_eq(const char *word, char *opt, size_t optlen)
{
    const char *eq = strchr(word, '=');
    if (word[0] != '-' || word[1] != '-' || eq == NULL ||
        (size_t)(eq - word) >= optlen) {
        snprintf(opt, optlen, "%s", word);
        return NULL;
    }
    memcpy(opt, word, (size_t)(eq - word));
    opt[eq - word] = '\0';
    return eq + 1;
}

static int push(char ***arr, int *n, const char *s)
{
    char **na = realloc(*arr, (size_t)(*n + 2) * sizeof *na);
    if (na == NULL)
        return -1;
    *arr = na;
    na[(*n)++] = (char *)s;
    na[*n] = NULL;
    return 0;
}

enum { HOPT_NONE, HOPT_HOST, HOPT_HOSTFILE, HOPT_PPN, HOPT_LAUNCHER, HOPT_LAUNCHER_EXEC };

/* Options about nodes and launchers, with Open MPI's and Hydra's names. */
static int host_option(const char *opt)
{
    static const struct { const char *name; int kind; } names[] = {
        { "-H", HOPT_HOST }, { "--host", HOPT_HOST }, { "--hosts", HOPT_HOST },
        { "-host", HOPT_HOST }, { "-hosts", HOPT_HOST },
        { "--hostfile", HOPT_HOSTFILE }, { "--machinefile", HOPT_HOSTFILE },
        { "-hostfile", HOPT_HOSTFILE }, { "-machinefile", HOPT_HOSTFILE }, { "-f", HOPT_HOSTFILE },
        { "-N", HOPT_PPN }, { "--ppn", HOPT_PPN }, { "-ppn", HOPT_PPN }, { "--npernode", HOPT_PPN },
        { "--launcher", HOPT_LAUNCHER }, { "-launcher", HOPT_LAUNCHER },
        { "--launcher-exec", HOPT_LAUNCHER_EXEC }, { "-launcher-exec", HOPT_LAUNCHER_EXEC },
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(opt, names[i].name))
            return names[i].kind;
    return HOPT_NONE;
}

static int parse_host_option(launch_opts_t *o, const char *opt, const char *val, char *err,
                             size_t errlen)
{
    char why[600];
    switch (host_option(opt)) {
    case HOPT_HOST:
        if (hosts_parse_list(&o->hosts, val, why, sizeof why) < 0) {
            snprintf(err, errlen, "%s: %s", opt, why);
            return -1;
        }
        return 0;
    case HOPT_HOSTFILE:
        if (hosts_parse_file(&o->hosts, val, why, sizeof why) < 0) {
            snprintf(err, errlen, "%s: %s", opt, why);
            return -1;
        }
        return 0;
    case HOPT_PPN:
        return parse_nranks(opt, val, &o->ppn, err, errlen);
    case HOPT_LAUNCHER:
        o->launcher_given = 1;
        if (!strcmp(val, "ssh") || !strcmp(val, "rsh")) {
            o->launcher = LAUNCHER_SSH;
        } else if (!strcmp(val, "exec")) {
            o->launcher = LAUNCHER_EXEC;
        } else if (!strcmp(val, "local") || !strcmp(val, "fork")) {
            o->launcher = LAUNCHER_LOCAL;
        } else if (!strcmp(val, "slurm") || !strcmp(val, "srun")) {
            o->launcher = LAUNCHER_EXEC; /* srun ... -w HOST CMD: an exec prefix */
            o->launcher_exec = SLURM_PREFIX;
            o->launcher_slurm = 1;
        } else {
            snprintf(err, errlen, "%s: '%s' is not a launcher (ssh, exec, slurm or local)", opt,
                     val);
            return -1;
        }
        return 0;
    case HOPT_LAUNCHER_EXEC:
        if (strspn(val, " \t") == strlen(val)) {
            snprintf(err, errlen, "%s: empty command", opt);
            return -1;
        }
        o->launcher_exec = val;
        o->launcher_slurm = 0; /* a prefix of the user's own */
        return 0;
    }
    return -1;
}

static int is_nranks(const char *opt)
{
    return !strcmp(opt, "-n") || !strcmp(opt, "-np") || !strcmp(opt, "--np") ||
           !strcmp(opt, "--n");
}

/* locusrun's own options that take a value (placement's aside). */
static int own_takes_value(const char *opt)
{
    return is_nranks(opt) || !strcmp(opt, "--timeout") || !strcmp(opt, "-x") ||
           !strcmp(opt, "--topology") || !strcmp(opt, "--mpi") || host_option(opt) != HOPT_NONE;
}

int launch_opt_takes_value(const char *opt)
{
    return own_takes_value(opt) || locus_place_opt_takes_value(opt);
}

/* --mpi pmi|pmi1|pmix (srun's option): which process-manager interfaces
 * the proxies serve. PMI-1 always; PMIx besides it with pmix. */
static int parse_mpi(const char *val, launch_opts_t *o, char *err, size_t errlen)
{
    if (!strcmp(val, "pmi") || !strcmp(val, "pmi1") || !strcmp(val, "none")) {
        o->mpi_pmix = 0;
        return 0;
    }
    if (!strcmp(val, "pmix")) {
#ifdef LOCUS_HAVE_PMIX
        o->mpi_pmix = 1;
        return 0;
#else
        snprintf(err, errlen, "--mpi pmix: this locusrun was built without OpenPMIx "
                 "(install libpmix-dev and rebuild)");
        return -1;
#endif
    }
    snprintf(err, errlen, "--mpi %s: expected pmi1 or pmix (locusrun serves PMI-1 to every "
             "rank, and PMIx too with pmix)", val);
    return -1;
}

/* Whether exe is built with Open MPI 4: it names libmpi.so.40, or (a
 * Fortran program, linked --as-needed) only Open MPI's Fortran libraries,
 * which name it. */
static int open_mpi_built(const char *exe)
{
    static const char *const sonames[] = { "libmpi.so.40", "libmpi_mpifh.so.40",
                                           "libmpi_usempif08.so.40",
                                           "libmpi_usempi_ignore_tkr.so.40" };
    for (size_t i = 0; i < sizeof sonames / sizeof sonames[0]; i++)
        if (launch_elf_needs(exe, sonames[i]))
            return 1;
    return 0;
}

/* An Open MPI program kept on Open MPI's own library (--no-abi-swap) finds
 * its job only through PMIx: without it each rank would start, silently,
 * as a singleton. So locusrun serves PMIx unasked, or refuses. */
static int open_mpi_own(launch_opts_t *o, char *err, size_t errlen)
{
    if (!o->no_abi_swap || o->mpi_pmix || !open_mpi_built(o->exe))
        return 0;
    if (o->mpi_given) {
        snprintf(err, errlen, "--mpi: %s is built with Open MPI and --no-abi-swap keeps it on "
                 "Open MPI's library, which finds its job only through PMIx: give --mpi pmix "
                 "(or each rank runs alone)", o->exe);
        return -1;
    }
#ifdef LOCUS_HAVE_PMIX
    o->mpi_pmix = 1;
    return 0;
#else
    snprintf(err, errlen, "--no-abi-swap: %s is built with Open MPI, whose library needs "
             "PMIx, and this locusrun was built without OpenPMIx (install libpmix-dev and "
             "rebuild)", o->exe);
    return -1;
#endif
}

/* Defaults and cross-checks of the node options, once all are read. */
static int opts_finish_hosts(launch_opts_t *o, char *err, size_t errlen)
{
    /* Inside a Slurm allocation (sbatch, salloc) without hosts of our own:
     * its nodes and task counts, and proxies started by srun (as Open
     * MPI's mpirun and Hydra do there). */
    const char *nodelist = getenv("SLURM_JOB_NODELIST");
    if (o->hosts.n == 0 && nodelist && *nodelist && strcmp(locus_tunable_str("LOCUS_SLURM"), "0")) {
        if (hosts_from_slurm(&o->hosts, nodelist, getenv("SLURM_TASKS_PER_NODE"), err,
                             errlen) < 0)
            return -1;
        if (!o->launcher_given) {
            o->launcher = LAUNCHER_EXEC;
            o->launcher_exec = SLURM_PREFIX;
            o->launcher_slurm = 1;
        }
    }
    if (o->launcher == LAUNCHER_EXEC && o->launcher_exec == NULL) {
        snprintf(err, errlen, "--launcher exec: needs --launcher-exec 'COMMAND PREFIX' "
                 "(run as PREFIX HOST CMD...)");
        return -1;
    }
    if (o->launcher == LAUNCHER_LOCAL && o->launcher_exec != NULL) {
        snprintf(err, errlen, "--launcher-exec: only with --launcher ssh or exec");
        return -1;
    }
    if (!o->nranks_given) {
        long n = 1;
        if (o->hosts.n > 0) {
            n = 0;
            for (int h = 0; h < o->hosts.n; h++)
                n += o->ppn > 0 ? o->ppn : o->hosts.hosts[h].slots;
        } else if (o->ppn > 0) {
            n = o->ppn;
        }
        if (n > NRANKS_MAX) {
            snprintf(err, errlen, "%ld ranks (all slots) is more than 100000; give -n", n);
            return -1;
        }
        o->nranks = (int)n;
    }
    return 0;
}

int launch_opts_parse(launch_opts_t *o, int argc, char **argv, char *err,
                      size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->nranks = 1;
    locus_place_request_t probe;
    locus_place_request_init(&probe);
    int i = 1;
    for (; i < argc; i++) {
        const char *w = argv[i];
        if (strcmp(w, "--") == 0) {
            i++;
            break;
        }
        if (w[0] != '-' || w[1] == '\0')
            break;
        char opt[64];
        const char *inl = split_eq(w, opt, sizeof opt);
        const char *val = inl ? inl : (i + 1 < argc ? argv[i + 1] : NULL);
        int takes = inl ? 0 : 1;  /* words consumed after the option word */
        if (!strcmp(opt, "-h") || !strcmp(opt, "--help")) {
            fputs(usage, stdout);
            return 1;
        }
        if (!strcmp(opt, "--version") || !strcmp(opt, "-V")) {
            printf("locusrun (Locus) %s\n", LOCUS_VERSION);
            return 1;
        }
        int flag = 1;
        if (!strcmp(opt, "--report-bindings")) o->report_bindings = 1;
        else if (!strcmp(opt, "--tag-output")) o->tag_output = 1;
        else if (!strcmp(opt, "--dry-run")) o->dry_run = 1;
        else if (!strcmp(opt, "--no-abi-swap")) o->no_abi_swap = 1;
        else if (!strcmp(opt, "--startup-report")) o->startup_report = 1;
        else flag = 0;
        if (flag) {
            if (inl) {
                snprintf(err, errlen, "%s: takes no value", opt);
                return 2;
            }
            continue;
        }
        int is_n = is_nranks(opt);
        if (own_takes_value(opt)) {
            if (val == NULL) {
                snprintf(err, errlen, "%s: needs a value", opt);
                return 2;
            }
            if (is_n && parse_nranks(opt, val, &o->nranks, err, errlen) < 0)
                return 2;
            o->nranks_given |= is_n;
            if (host_option(opt) != HOPT_NONE && parse_host_option(o, opt, val, err, errlen) < 0)
                return 2;
            if (!strcmp(opt, "--timeout") && parse_timeout(val, &o->timeout_s, err, errlen) < 0)
                return 2;
            if (!strcmp(opt, "-x")) {
                const char *eq = strchr(val, '=');
                size_t nlen = eq ? (size_t)(eq - val) : strlen(val);
                if (nlen == 0 || val[0] == '-') {
                    snprintf(err, errlen, "-x: '%s' is not VAR or VAR=VALUE", val);
                    return 2;
                }
                if (push(&o->exports, &o->nexports, val) < 0)
                    return 2;
            }
            if (!strcmp(opt, "--topology"))
                o->topology = val;
            if (!strcmp(opt, "--mpi") && parse_mpi(val, o, err, errlen) < 0)
                return 2;
            o->mpi_given |= !strcmp(opt, "--mpi");
            i += takes;
            continue;
        }
        /* --map-by node|slot chooses how ranks spread over nodes; every
         * other policy is the node-local placement engine's. */
        if (!strcmp(opt, "--map-by") && val && (!strcmp(val, "node") || !strcmp(val, "slot"))) {
            o->map_by_node = !strcmp(val, "node");
            i += takes;
            continue;
        }
        /* Placement options are parsed by the placement engine itself, so
         * `locus map` and locusrun accept the same words; checked here on a
         * probe request, replayed on the real one by the planner. */
        char perr[256];
        int used = locus_place_opt_parse(&probe, opt, inl ? inl : val, perr, sizeof perr);
        if (used < 0) {
            snprintf(err, errlen, "%s", perr);
            return 2;
        }
        if (used == 0) {
            snprintf(err, errlen, "%s: unknown option (see locusrun --help)", opt);
            return 2;
        }
        if (inl && used == 1) {
            snprintf(err, errlen, "%s: takes no value", opt);
            return 2;
        }
        /* The original words (the engine splits "--opt=value" itself). */
        push(&o->place_argv, &o->place_argc, w);
        if (used == 2 && !inl) {
            push(&o->place_argv, &o->place_argc, val);
            i += takes;
        }
    }
    o->oversubscribe = probe.oversubscribe;
    if (opts_finish_hosts(o, err, errlen) < 0)
        return 2;
    if (o->topology && !o->dry_run) {
        snprintf(err, errlen, "--topology: only with --dry-run (a plan for another machine cannot be launched here)");
        return 2;
    }
    if (i >= argc) {
        if (o->dry_run)
            return 0;
        snprintf(err, errlen, "no program given (see locusrun --help)");
        return 2;
    }
    if (!o->dry_run) {
        o->exe = resolve_program(argv[i], err, errlen);
        if (o->exe == NULL)
            return 2;
        if (open_mpi_own(o, err, errlen) < 0)
            return 2;
    }
    o->argc = argc - i;
    o->argv = argv + i;
    return 0;
}

void launch_opts_free(launch_opts_t *o)
{
    hosts_free(&o->hosts);
    free(o->exports);
    free(o->place_argv);
    free(o->exe);
    memset(o, 0, sizeof *o);
}
