/*
 * `locus tune`: measures this machine's large-message paths (the pipelined
 * copy at several chunk sizes, CMA single copy) between two ranks on two
 * cores, chooses LOCUS_SHM_CHUNK_SIZE and LOCUS_SHM_CMA_MIN/MAX from the rates
 * and caches them for this machine (locus_tune.h); `--show` prints the
 * cache. The runs are osu_bw jobs under locusrun (tune_run.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "locus_cli.h"
#include "locus_topo.h"
#include "locus_tunables.h"
#include "locus_tune.h"
#include "tune_print.h"
#include "tune_run.h"

/* How much to measure. The whole run stays within budget_s: a job gets
 * what is left, and what did not fit is left out (and said). */
typedef struct {
    const char *mode, *range, *iters, *window;
    long min, max;
    int rounds;
    double budget_s;
} tune_plan_t;

static const tune_plan_t plan_full = { "full", "16384:4194304", "8", "16", 16384, 4194304, 3, 18 };
static const tune_plan_t plan_quick = { "quick", "65536:262144", "2", "8", 65536, 262144, 1, 18 };

static const long chunks[] = { 32768, 65536, 131072, 262144 };
#define NCHUNKS ((int)(sizeof chunks / sizeof chunks[0]))

static void tune_usage(FILE *out)
{
    fprintf(out,
            "usage: locus tune [--quick] [--json]\n"
            "       locus tune --show [--json]\n"
            "  Measures the shared-memory transport's large-message paths on this\n"
            "  machine (pipelined copy with 32k/64k/128k/256k chunks, CMA single copy;\n"
            "  16 KiB..4 MiB, 2 ranks on 2 cores; seconds, 18 at most), chooses\n"
            "  LOCUS_SHM_CHUNK_SIZE and LOCUS_SHM_CMA_MIN/MAX and caches them for this\n"
            "  machine (LOCUS_TUNE_FILE, else ~/.cache/locus); they become the defaults\n"
            "  of those variables here. The environment still overrides them.\n"
            "  --quick   fewer sizes (64k..256k) and one round: a smoke test\n"
            "  --show    print the cached table without measuring\n"
            "  --json    machine-readable output\n");
}

/* Allowed PUs and cores (the binding locusrun can give), or -1. */
static int allowed_cpus(int *pus, int *cores)
{
    char err[256];
    locus_topo_t *topo = locus_topo_load(NULL, err, sizeof err);
    if (!topo) {
        fprintf(stderr, "locus tune: %s\n", err);
        return -1;
    }
    *pus = locus_topo_allowed_pus(topo);
    *cores = locus_topo_allowed_cores(topo);
    locus_topo_free(topo);
    return 0;
}

/* The 1-minute load average, read before measuring (the runs add 2). */
static double load_average(void)
{
    double load = 0;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &load) != 1)
            load = 0;
        fclose(f);
    }
    return load;
}

static void note_cpus(locus_tune_t *t, int pus, int cores, double load)
{
    if (pus - load < 1.5) /* fewer than the 2 CPUs the runs need were idle */
        locus_tune_note(t, "the machine was busy (load average %.1f on %d allowed CPU%s): rates "
                           "are low and unsteady; run 'locus tune' again when it is idle",
                        load, pus, pus == 1 ? "" : "s");
    if (pus < 2)
        locus_tune_note(t, "only one allowed CPU: both ranks ran on it (oversubscribed, where "
                           "LOCUS_SINGLE_COPY=auto takes CMA for every large message anyway); "
                           "rates recorded, nothing chosen");
    else if (cores < 2)
        locus_tune_note(t, "only one allowed core: the ranks ran on two hardware threads of it");
}

/* Yama's ptrace scope, for the note when CMA is refused (-1: no Yama). */
static int ptrace_scope(void)
{
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    int scope = -1;
    if (f) {
        if (fscanf(f, "%d", &scope) != 1)
            scope = -1;
        fclose(f);
    }
    return scope;
}

typedef struct {
    char name[16], chunk_env[64];
    const char *single_copy;
    int failed;
    char why[200];
} tune_cfg_t;

static int make_cfgs(locus_tune_t *t, tune_cfg_t *cfg)
{
    char s[32];
    int n = 0;
    for (int i = 0; i < NCHUNKS; i++, n++) {
        locus_size_str(s, sizeof s, chunks[i]);
        snprintf(cfg[n].name, sizeof cfg[n].name, "pipe-%.10s", s);
        snprintf(cfg[n].chunk_env, sizeof cfg[n].chunk_env, "LOCUS_SHM_CHUNK_SIZE=%s", s);
        cfg[n].single_copy = "LOCUS_SINGLE_COPY=none";
        t->paths[n].chunk = chunks[i];
    }
    snprintf(cfg[n].name, sizeof cfg[n].name, "cma");
    snprintf(cfg[n].chunk_env, sizeof cfg[n].chunk_env, "LOCUS_SHM_CHUNK_SIZE=128k");
    cfg[n].single_copy = "LOCUS_SINGLE_COPY=cma";
    t->paths[n].chunk = 0;
    n++;
    for (int i = 0; i < n; i++)
        memcpy(t->paths[i].name, cfg[i].name, sizeof t->paths[i].name);
    t->npaths = n;
    return n;
}

/* Untimed windows (osu -x), enough to go once through the sender's pool
 * at the smallest size: its pages are mapped at their first use, and 4 MiB
 * of page faults inside the timed windows put the pipeline at 3-8 GB/s at
 * 64 KiB where it then ran 30. (Larger sizes thus get more than they need:
 * about a second more in all on the 2-vCPU VM.) */
static void warmup_windows(const tune_plan_t *plan, char *out, size_t len)
{
    long pool = 0;
    locus_tunable_long("LOCUS_SHM_POOL_SIZE", &pool, NULL, 0);
    long per_window = plan->min * atol(plan->window);
    snprintf(out, len, "%ld", 1 + (pool + per_window - 1) / per_window);
}

/* Runs rounds x configs jobs, config order rotating from round to round so
 * that the machine's moods fall on every path alike; keeps the best rate
 * of each path and size. Returns the number of jobs run or skipped (a
 * config that failed is not run again): less than rounds x configs when
 * the time budget ran out. */
static int measure(locus_tune_t *t, const tune_plan_t *plan, const char *warmup,
                   const tune_tools_t *tools, int oversubscribe, tune_cfg_t *cfg, int ncfg,
                   char *bindings, size_t blen)
{
    double start = tune_now();
    int total = plan->rounds * ncfg, done = 0;
    for (int r = 0; r < plan->rounds; r++) {
        for (int k = 0; k < ncfg; k++) {
            int c = (k + r) % ncfg;
            double left = plan->budget_s - (tune_now() - start);
            if (left < 1)
                return done;
            /* An even share of what is left, so that a slow path (a busy
             * machine) cannot starve the others: cut short, it keeps the
             * sizes it finished. */
            double share = left / (total - done);
            if (share < 1)
                share = 1;
            if (cfg[c].failed) { /* it failed once: it will again */
                done++;
                continue;
            }
            tune_job_t job = { .env = { cfg[c].single_copy, cfg[c].chunk_env,
                                        "LOCUS_TRANSPORTS=self,shm", "LOCUS_TUNE_FILE=none",
                                        "LOCUS_VERBOSE=0", NULL },
                               .osu = { "-m", plan->range, "-i", plan->iters, "-x", warmup,
                                        "-W", plan->window, NULL },
                               .oversubscribe = oversubscribe,
                               .report_bindings = done == 0,
                               .timeout_s = share };
            double mbs[LOCUS_TUNE_MAX_SIZES], t0 = tune_now();
            char b[128], err[200];
            int rc = tune_job_run(tools, &job, t->sizes, t->nsizes, mbs, b, sizeof b, err,
                                  sizeof err);
            done++;
            if (b[0])
                snprintf(bindings, blen, "%s", b);
            fprintf(stderr, "locus tune: [%d/%d] %-10s %5.1f s%s%s\n", done, total, cfg[c].name,
                    tune_now() - t0, rc == -1 ? "  failed: " : rc ? "  cut short: " : "",
                    rc ? err : "");
            for (int i = 0; i < t->nsizes; i++)
                if (mbs[i] / 1e3 > t->paths[c].gbs[i])
                    t->paths[c].gbs[i] = mbs[i] / 1e3;
            if (rc == -1) {
                cfg[c].failed = 1;
                snprintf(cfg[c].why, sizeof cfg[c].why, "%s", err);
            }
        }
    }
    return done;
}

static void note_failures(locus_tune_t *t, const tune_cfg_t *cfg, int ncfg)
{
    for (int c = 0; c < ncfg; c++) {
        if (!cfg[c].failed)
            continue;
        if (!strcmp(cfg[c].name, "cma")) {
            int scope = ptrace_scope();
            char why[64] = "";
            if (scope >= 0)
                snprintf(why, sizeof why, " (Yama ptrace_scope is %d)", scope);
            locus_tune_note(t, "CMA refused or failed here%s: %s", why, cfg[c].why);
        } else {
            locus_tune_note(t, "%s failed: %s", cfg[c].name, cfg[c].why);
        }
    }
}

static int tune_measure(const tune_plan_t *plan, int json)
{
    tune_tools_t tools;
    char err[512];
    if (tune_tools_find(&tools, err, sizeof err) != 0) {
        fprintf(stderr, "locus tune: %s\n", err);
        return 1;
    }
    static locus_tune_t t;
    memset(&t, 0, sizeof t);
    locus_tune_key_this(&t.key);
    snprintf(t.mode, sizeof t.mode, "%s", plan->mode);
    for (long s = plan->min; s <= plan->max && t.nsizes < LOCUS_TUNE_MAX_SIZES; s *= 2)
        t.sizes[t.nsizes++] = s;
    int pus, cores;
    if (allowed_cpus(&pus, &cores) != 0)
        return 1;
    int oversubscribe = pus < 2;
    double load = load_average();
    tune_cfg_t cfg[NCHUNKS + 1];
    memset(cfg, 0, sizeof cfg);
    int ncfg = make_cfgs(&t, cfg);
    fprintf(stderr, "locus tune: %d runs of osu_bw on 2 ranks, %s mode, at most %.0f s\n",
            plan->rounds * ncfg, plan->mode, plan->budget_s);
    double t0 = tune_now();
    char bindings[128] = "";
    char warmup[24];
    warmup_windows(plan, warmup, sizeof warmup);
    int done = measure(&t, plan, warmup, &tools, oversubscribe, cfg, ncfg, bindings,
                       sizeof bindings);
    time_t now = time(NULL);
    struct tm tm;
    strftime(t.date, sizeof t.date, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    /* Notes: the setting, then what went wrong, then (choose) what is left out. */
    locus_tune_note(&t, "osu_bw -m %s -i %s -x %s -W %s under locusrun -n 2%s%s%s, best of %d "
                    "round%s, %.1f s", plan->range, plan->iters, warmup, plan->window,
                    bindings[0] ? " (" : "", bindings, bindings[0] ? ")" : "", plan->rounds,
                    plan->rounds > 1 ? "s" : "", tune_now() - t0);
    note_cpus(&t, pus, cores, load);
    if (done < plan->rounds * ncfg)
        locus_tune_note(&t, "time budget of %.0f s reached after %d of %d runs", plan->budget_s,
                        done, plan->rounds * ncfg);
    note_failures(&t, cfg, ncfg);
    if (oversubscribe)
        t.nvalues = 0;
    else
        locus_tune_choose(&t);

    char path[4096];
    int where = locus_tune_path(path, sizeof path), saved = 0, rc = 0;
    if (where == 0 && locus_tune_write(path, &t, err, sizeof err) == 0) {
        saved = 1;
    } else if (where == 0) {
        fprintf(stderr, "locus tune: %s\n", err);
        rc = 1;
    } else if (where < 0) {
        fprintf(stderr, "locus tune: not saved: no HOME or XDG_CACHE_HOME (set LOCUS_TUNE_FILE)\n");
        rc = 1;
    }
    if (json) {
        tune_print_json(&t, where == 0 ? path : "", saved, stdout);
    } else {
        tune_print_text(&t, saved ? path : NULL, stdout);
        if (where > 0)
            printf("Not saved (LOCUS_TUNE_FILE=none).\n");
    }
    return rc;
}

static int tune_show(int json)
{
    char path[4096], err[300];
    int where = locus_tune_path(path, sizeof path);
    if (where != 0) {
        fprintf(stderr, "locus tune: no cache (%s)\n",
                where > 0 ? "LOCUS_TUNE_FILE=none" : "no HOME or XDG_CACHE_HOME");
        return 1;
    }
    static locus_tune_t t;
    int rc = locus_tune_read(path, &t, err, sizeof err);
    if (rc == -1) {
        fprintf(stderr, "locus tune: this machine is not calibrated yet (no %s): run 'locus tune'\n",
                path);
        return 1;
    }
    if (rc != 0) {
        fprintf(stderr, "locus tune: %s is unreadable (%s): run 'locus tune' again\n", path, err);
        return 1;
    }
    locus_tune_key_t me;
    locus_tune_key_this(&me);
    if (!locus_tune_key_equal(&me, &t.key)) {
        fprintf(stderr, "locus tune: %s was measured on another machine (%s, %d CPUs, Linux %s): "
                        "ignored here; run 'locus tune'\n", path, t.key.cpu, t.key.ncpus,
                t.key.kernel);
        return 1;
    }
    if (json)
        tune_print_json(&t, path, 1, stdout);
    else
        tune_print_text(&t, path, stdout);
    return 0;
}

int locus_cmd_tune(int argc, char **argv)
{
    int json = 0, show = 0, quick = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--show")) {
            show = 1;
        } else if (!strcmp(a, "--quick")) {
            quick = 1;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            tune_usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "locus tune: unknown %s '%s' (try 'locus tune --help')\n",
                    a[0] == '-' ? "option" : "argument", a);
            return 2;
        }
    }
    if (show && quick) {
        fprintf(stderr, "locus tune: --show measures nothing: --quick does not go with it\n");
        return 2;
    }
    return show ? tune_show(json) : tune_measure(quick ? &plan_quick : &plan_full, json);
}
