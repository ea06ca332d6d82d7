/*
 * `locus tune`: measures this machine's large-message paths (the pipelined
 * copy at several chunk sizes, CMA single copy) between two ranks on two
 * cores, and how two ranks move a small allreduce best (the shared segment
 * or messages); chooses LOCUS_SHM_CHUNK_SIZE, LOCUS_SHM_CMA_MIN/MAX and
 * LOCUS_COLL_PAIR_MSG_MIN from them and caches them for this machine
 * (locus_tune.h); `--show` prints the cache. The runs are osu_bw and imb
 * jobs under locusrun (tune_run.h).
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
    int pair_rounds;     /* of the pair's allreduce (imb -msglog 11:14) */
    const char *pair_iters;
    double pair_budget_s;
} tune_plan_t;

/* Five rounds of each: the median of five stands where a VM's speed
 * swings (keep_round); 25 jobs of osu_bw took 8.5 s on a 2-vCPU VM. */
static const tune_plan_t plan_full = { "full", "16384:4194304", "8", "16", 16384, 4194304, 5, 30,
                                       5, "2000", 8 };
static const tune_plan_t plan_quick = { "quick", "65536:262144", "2", "8", 65536, 262144, 1, 18,
                                        1, "200", 8 };

/* The pair's sizes (imb -msglog 11:14): where the shipped default moves
 * allreduce vectors as messages (2 KiB) up to the largest the segment
 * takes on 2 ranks (16 KiB). */
#define PAIR_MSGLOG "11:14"
#define PAIR_MIN 2048
#define PAIR_MAX 16384

/* The eager limit while the paths are measured: below plan_full's and
 * plan_quick's smallest size. */
#define PATH_EAGER_MAX 8192L

static const long chunks[] = { 32768, 65536, 131072, 262144 };
#define NCHUNKS ((int)(sizeof chunks / sizeof chunks[0]))

static void tune_usage(FILE *out)
{
    fprintf(out,
            "usage: locus tune [--quick] [--json]\n"
            "       locus tune --show [--json]\n"
            "  Measures the shared-memory transport's large-message paths on this\n"
            "  machine (pipelined copy with 32k/64k/128k/256k chunks, CMA single copy;\n"
            "  16 KiB..4 MiB, 2 ranks on 2 cores; seconds, 30 at most) and a 2-rank\n"
            "  allreduce of 2..16 KiB through the shared segment and as messages (8 s\n"
            "  at most), chooses LOCUS_SHM_CHUNK_SIZE, LOCUS_SHM_CMA_MIN/MAX and\n"
            "  LOCUS_COLL_PAIR_MSG_MIN and caches them for this machine\n"
            "  (LOCUS_TUNE_FILE, else ~/.cache/locus); they become the defaults of\n"
            "  those variables here. The environment still overrides them.\n"
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
                           "LOCUS_SINGLE_COPY=auto takes CMA for every large message untuned); "
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

#define TUNE_MAX_ROUNDS 8
_Static_assert(TUNE_MAX_ROUNDS >= 5, "a config holds every round of the plans (5 at most)");

/* One configuration measured: what it sets, where its value per size
 * goes, whether it failed. */
typedef struct {
    char name[16];
    char env[4][64]; /* "NAME=VALUE"; "" unused */
    double runs[TUNE_MAX_ROUNDS][LOCUS_TUNE_MAX_SIZES]; /* each round's; 0 none */
    int nruns;
    /* Per size, from the runs once measured (settle_rounds): */
    double *value;   /* the median over the rounds, 0 none */
    double lo[LOCUS_TUNE_MAX_SIZES], hi[LOCUS_TUNE_MAX_SIZES]; /* 0 none */
    int failed;
    char why[200];
} tune_cfg_t;

/* A series of jobs: one program's table, its sizes, how values compare. */
typedef struct {
    const char *prog;
    int column;            /* the value's column in the program's rows */
    const char *args[12];  /* NULL-terminated */
    const long *sizes;
    int nsizes, rounds;
    double scale;          /* of the program's values, into the table's units */
    double budget_s;
    int oversubscribe;
} tune_series_t;

static int make_path_cfgs(locus_tune_t *t, tune_cfg_t *cfg)
{
    char s[32];
    int n = 0;
    for (int i = 0; i < NCHUNKS; i++, n++) {
        locus_size_str(s, sizeof s, chunks[i]);
        snprintf(cfg[n].name, sizeof cfg[n].name, "pipe-%.10s", s);
        snprintf(cfg[n].env[0], sizeof cfg[n].env[0], "LOCUS_SINGLE_COPY=none");
        snprintf(cfg[n].env[1], sizeof cfg[n].env[1], "LOCUS_SHM_CHUNK_SIZE=%s", s);
        t->paths[n].chunk = chunks[i];
    }
    snprintf(cfg[n].name, sizeof cfg[n].name, "cma");
    snprintf(cfg[n].env[0], sizeof cfg[n].env[0], "LOCUS_SINGLE_COPY=cma");
    snprintf(cfg[n].env[1], sizeof cfg[n].env[1], "LOCUS_SHM_CHUNK_SIZE=128k");
    t->paths[n].chunk = 0;
    n++;
    for (int i = 0; i < n; i++) {
        /* Every size measured must be a large message, whatever the eager
         * limit (16 KiB by default, or the caller's): at or below it the
         * paths would all time the eager copy. */
        snprintf(cfg[i].env[2], sizeof cfg[i].env[2], "LOCUS_SHM_EAGER_MAX=%ld", PATH_EAGER_MAX);
        memcpy(t->paths[i].name, cfg[i].name, sizeof t->paths[i].name);
        cfg[i].value = t->paths[i].gbs;
    }
    t->npaths = n;
    return n;
}

/* The pair's two ways, each with the transport values just chosen and the
 * caller's eager limit (the messages of 8-16 KiB go as they will here:
 * eagerly at the default). */
static int make_pair_cfgs(locus_tune_t *t, const locus_tune_t *chosen, tune_cfg_t *cfg)
{
    static const char *const ways[LOCUS_TUNE_PAIR_WAYS][2] = {
        { "segment", "1024G" }, { "messages", "0" } };
    static const char *const shm[] = { "LOCUS_SHM_CHUNK_SIZE", "LOCUS_SHM_CMA_MIN",
                                       "LOCUS_SHM_CMA_MAX" };
    for (int w = 0; w < LOCUS_TUNE_PAIR_WAYS; w++) {
        snprintf(t->ways[w].name, sizeof t->ways[w].name, "%s", ways[w][0]);
        snprintf(cfg[w].name, sizeof cfg[w].name, "pair-%.10s", ways[w][0]);
        snprintf(cfg[w].env[0], sizeof cfg[w].env[0], "LOCUS_COLL_PAIR_MSG_MIN=%s", ways[w][1]);
        for (int i = 0, e = 1; i < 3; i++) {
            const char *v = locus_tune_value(chosen, shm[i]);
            if (v)
                snprintf(cfg[w].env[e++], sizeof cfg[w].env[0], "%s=%.30s", shm[i], v);
        }
        cfg[w].value = t->ways[w].us;
    }
    t->nways = LOCUS_TUNE_PAIR_WAYS;
    return LOCUS_TUNE_PAIR_WAYS;
}

/* Untimed windows (osu -x), enough to go once through the sender's pool
 * at the smallest size: its pages are mapped at their first use, and 4 MiB
 * of page faults inside the timed windows put the pipeline at 3-8 GB/s at
 * 64 KiB where it then ran 30. (Larger sizes thus get more than they need:
 * about a second more in all on the 2-vCPU VM.) */
static void warmup_windows(const tune_plan_t *plan, char *out, size_t len)
{
    long pool = 0;
    locus_shm_pool_size(2, &pool, NULL, 0);
    long per_window = plan->min * atol(plan->window);
    snprintf(out, len, "%ld", 1 + (pool + per_window - 1) / per_window);
}

static void keep_round(const tune_series_t *series, tune_cfg_t *cfg, const double *got)
{
    if (cfg->nruns == TUNE_MAX_ROUNDS) /* (the plans stay within it: above) */
        return;
    double *run = cfg->runs[cfg->nruns++];
    for (int i = 0; i < series->nsizes; i++)
        run[i] = got[i] > 0 ? got[i] * series->scale : 0;
}

/* Each config's value per size is the median of its rounds, not the best
 * round: on a 2-vCPU EPYC VM (family 25 model 17) the pipeline ran at 2-27
 * GB/s from one round to the next while CMA stayed within 10 % of 21; the
 * best of three picked the pipeline, which osu_bw then ran at 10 GB/s,
 * half of CMA's. Where the machine is steady the median is the best
 * within noise. lo and hi (note_unsteady) come from the same rounds. */
static void settle_rounds(const tune_series_t *series, tune_cfg_t *cfg, int ncfg)
{
    for (int c = 0; c < ncfg; c++)
        for (int i = 0; i < series->nsizes; i++) {
            double col[TUNE_MAX_ROUNDS];
            int n = 0;
            for (int r = 0; r < cfg[c].nruns; r++)
                if (cfg[c].runs[r][i] > 0)
                    col[n++] = cfg[c].runs[r][i];
            cfg[c].value[i] = locus_tune_median(col, n); /* sorts col */
            cfg[c].lo[i] = n ? col[0] : 0;
            cfg[c].hi[i] = n ? col[n - 1] : 0;
        }
}

/* A note when some configuration's rounds disagreed by more than
 * LOCUS_TUNE_UNSTEADY at some size (the widest such spread). */
static void note_unsteady(locus_tune_t *t, const tune_series_t *series, const tune_cfg_t *cfg,
                          int ncfg, const char *unit)
{
    int worst = -1, at = -1;
    double widest = 1;
    for (int c = 0; c < ncfg; c++) {
        double ratio;
        int i = locus_tune_unsteady(cfg[c].lo, cfg[c].hi, series->nsizes, &ratio);
        if (i >= 0 && ratio > widest) {
            widest = ratio;
            worst = c;
            at = i;
        }
    }
    if (worst < 0)
        return;
    char size[32];
    locus_size_str(size, sizeof size, series->sizes[at]);
    locus_tune_note(t, "rounds disagreed: %s at %s took %.2f to %.2f %s (%.1fx) from one "
                       "round to another; the machine's speed changed while measuring, so "
                       "run 'locus tune' again when it is idle",
                    cfg[worst].name, size, cfg[worst].lo[at], cfg[worst].hi[at], unit, widest);
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

/* Runs rounds x configs jobs, config order rotating from round to round so
 * that the machine's moods fall on every config alike; keeps the median
 * value of each config and size (settle_rounds). Returns the number of
 * jobs run or skipped (a config that failed is not run again): less than
 * rounds x configs when the time budget ran out. */
static int measure(const tune_series_t *series, const tune_tools_t *tools,
                          tune_cfg_t *cfg, int ncfg, char *bindings, size_t blen)
{
    double start = tune_now();
    int total = series->rounds * ncfg, done = 0;
    /* (A round cut short by the budget ends the series.) */
    for (int r = 0; r < series->rounds && done == r * ncfg; r++) {
        for (int k = 0; k < ncfg; k++) {
            int c = (k + r) % ncfg;
            double left = series->budget_s - (tune_now() - start);
            if (left < 1)
                break;
            /* An even share of what is left, so that a slow config (a busy
             * machine) cannot starve the others: cut short, it keeps the
             * sizes it finished. */
            double share = left / (total - done);
            if (share < 1)
                share = 1;
            if (cfg[c].failed) { /* it failed once: it will again */
                done++;
                continue;
            }
            tune_job_t job = { .prog = series->prog, .column = series->column,
                               .oversubscribe = series->oversubscribe,
                               .report_bindings = done == 0 && bindings,
                               .timeout_s = share };
            int e = 0;
            for (int i = 0; i < 4; i++)
                if (cfg[c].env[i][0])
                    job.env[e++] = cfg[c].env[i];
            job.env[e++] = "LOCUS_TRANSPORTS=self,shm";
            job.env[e++] = "LOCUS_TUNE_FILE=none";
            job.env[e++] = "LOCUS_VERBOSE=0";
            memcpy(job.args, series->args, sizeof job.args);
            double got[LOCUS_TUNE_MAX_SIZES], t0 = tune_now();
            char b[128], err[200];
            int rc = tune_job_run(tools, &job, series->sizes, series->nsizes, got, b, sizeof b,
                                  err, sizeof err);
            done++;
            if (b[0] && bindings)
                snprintf(bindings, blen, "%s", b);
            fprintf(stderr, "locus tune: [%d/%d] %-13s %5.1f s%s%s\n", done, total, cfg[c].name,
                    tune_now() - t0, rc == -1 ? "  failed: " : rc ? "  cut short: " : "",
                    rc ? err : "");
            keep_round(series, &cfg[c], got);
            if (rc == -1) {
                cfg[c].failed = 1;
                snprintf(cfg[c].why, sizeof cfg[c].why, "%s", err);
            }
        }
    }
    settle_rounds(series, cfg, ncfg);
    return done;
}

/* Notes of what went wrong in a series that ran `done` jobs: the time
 * budget (of `what`) running out, configs that failed. */
static void note_trouble(locus_tune_t *t, const tune_series_t *series, const tune_cfg_t *cfg,
                         int ncfg, int done, const char *what)
{
    if (done < series->rounds * ncfg)
        locus_tune_note(t, "time budget of %.0f s reached after %d of %d %s", series->budget_s,
                        done, series->rounds * ncfg, what);
    note_failures(t, cfg, ncfg);
}

/* The large-message paths: osu_bw with each chunk size and with CMA. */
static void measure_paths(locus_tune_t *t, const tune_plan_t *plan, const tune_tools_t *tools,
                          int oversubscribe)
{
    tune_cfg_t cfg[NCHUNKS + 1];
    memset(cfg, 0, sizeof cfg);
    int ncfg = make_path_cfgs(t, cfg);
    char warmup[24], bindings[128] = "";
    warmup_windows(plan, warmup, sizeof warmup);
    tune_series_t series = { .prog = tools->osu_bw, .column = 1,
                             .args = { "-m", plan->range, "-i", plan->iters, "-x", warmup, "-W",
                                       plan->window, NULL },
                             .sizes = t->sizes, .nsizes = t->nsizes, .rounds = plan->rounds,
                             .scale = 1e-3, /* MB/s to GB/s */
                             .budget_s = plan->budget_s, .oversubscribe = oversubscribe };
    fprintf(stderr, "locus tune: %d runs of osu_bw on 2 ranks, %s mode, at most %.0f s\n",
            plan->rounds * ncfg, plan->mode, plan->budget_s);
    double t0 = tune_now();
    int done = measure(&series, tools, cfg, ncfg, bindings, sizeof bindings);
    /* Notes: the setting, then what went wrong, then (choose) what is left out. */
    locus_tune_note(t, "osu_bw -m %s -i %s -x %s -W %s under locusrun -n 2%s%s%s with "
                    "LOCUS_SHM_EAGER_MAX=%ld (every size a large message), median of %d "
                    "round%s, %.1f s", plan->range, plan->iters, warmup, plan->window,
                    bindings[0] ? " (" : "", bindings, bindings[0] ? ")" : "", PATH_EAGER_MAX,
                    plan->rounds,
                    plan->rounds > 1 ? "s" : "", tune_now() - t0);
    note_trouble(t, &series, cfg, ncfg, done, "runs");
    note_unsteady(t, &series, cfg, ncfg, "GB/s");
}

/* The pair's allreduce both ways (imb), with the paths' values chosen. */
static void measure_pair(locus_tune_t *t, const tune_plan_t *plan, const tune_tools_t *tools)
{
    static locus_tune_t chosen;
    chosen = *t;
    locus_tune_choose(&chosen);
    for (long s = PAIR_MIN; s <= PAIR_MAX; s *= 2)
        t->pair_sizes[t->npair_sizes++] = s;
    tune_cfg_t cfg[LOCUS_TUNE_PAIR_WAYS];
    memset(cfg, 0, sizeof cfg);
    int ncfg = make_pair_cfgs(t, &chosen, cfg);
    tune_series_t series = { .prog = tools->imb, .column = 4, /* t_avg */
                             .args = { "-npmin", "2", "-msglog", PAIR_MSGLOG, "-iter",
                                       plan->pair_iters, "-time", "1", "Allreduce", NULL },
                             .sizes = t->pair_sizes, .nsizes = t->npair_sizes,
                             .rounds = plan->pair_rounds, .scale = 1,
                             .budget_s = plan->pair_budget_s };
    fprintf(stderr, "locus tune: %d runs of imb Allreduce on 2 ranks, at most %.0f s\n",
            plan->pair_rounds * ncfg, plan->pair_budget_s);
    double t0 = tune_now();
    int done = measure(&series, tools, cfg, ncfg, NULL, 0);
    locus_tune_note(t, "imb -msglog %s -iter %s Allreduce under locusrun -n 2 through the "
                    "segment and as messages, median of %d round%s, %.1f s", PAIR_MSGLOG,
                    plan->pair_iters, plan->pair_rounds, plan->pair_rounds > 1 ? "s" : "",
                    tune_now() - t0);
    note_trouble(t, &series, cfg, ncfg, done, "pair runs");
    note_unsteady(t, &series, cfg, ncfg, "us");
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
    measure_paths(&t, plan, &tools, oversubscribe);
    /* One CPU: the pair never has a core each, so its way is moot. */
    if (!oversubscribe)
        measure_pair(&t, plan, &tools);
    time_t now = time(NULL);
    struct tm tm;
    strftime(t.date, sizeof t.date, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    note_cpus(&t, pus, cores, load);
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
