/*
 * startup_report.c — LOCUS_STARTUP_REPORT: what start-up cost the job, per
 * phase (locus_boot.h), reduced over the ranks at MPI_Finalize (while the
 * transports still run) and printed by rank 0: wall time (max, min, sum:
 * a collective phase's min is its cost seen by the last rank to arrive,
 * without the wait for the others), PMI
 * puts, gets and fences, bytes, and the memory the address tables hold.
 * The counts of the run phase are the cards fetched after MPI_Init.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "locus_tunables.h"
#include "init.h"

enum { M_SECONDS, M_PUTS, M_GETS, M_FENCES, M_PUT_BYTES, M_GET_BYTES, M_TABLE, M_NODE_PUTS,
       M_NODE_GETS, NMETRICS };
static const char *const metric_names[NMETRICS] = {
    "seconds", "puts", "gets", "fences", "put_bytes", "get_bytes", "table_bytes", "node_puts",
    "node_gets" };

/* Phases plus one row for MPI_Init as a whole, and "since launch". */
enum { ROWS = LOCUS_BOOT_NPHASES + 1, VALS = ROWS * NMETRICS + 1 };

static void row_fill(double *v, const locus_boot_count_t *c)
{
    v[M_SECONDS] = c->seconds;
    v[M_PUTS] = (double)c->puts;
    v[M_GETS] = (double)c->gets;
    v[M_FENCES] = (double)c->fences;
    v[M_PUT_BYTES] = (double)c->put_bytes;
    v[M_GET_BYTES] = (double)c->get_bytes;
    v[M_TABLE] = (double)c->table_bytes;
    v[M_NODE_PUTS] = (double)c->node_puts;
    v[M_NODE_GETS] = (double)c->node_gets;
}

static const char *row_name(int r)
{
    return r < LOCUS_BOOT_NPHASES ? locus_boot_phase_name(r) : "init";
}

static void print_table(const locus_boot_t *b, const double *sum, const double *max,
                        const double *min)
{
    char why[64] = "";
    if (b->addr_auto)
        snprintf(why, sizeof why, " by auto: fabric from %d nodes", b->addr_fabric_nodes);
    fprintf(stderr, "locus: start-up of %d ranks on %d node%s (process manager: %s, "
            "LOCUS_ADDR_EXCHANGE=%s%s)\n", b->size, b->nnodes, b->nnodes == 1 ? "" : "s",
            locus_boot_pm_name(b), locus_boot_addr_name(b->addr_strategy), why);
    fprintf(stderr, "  %-8s %10s %10s %10s %8s %9s %8s %7s %11s %11s %11s\n", "phase",
            "ms max", "ms min", "ms sum", "puts", "gets", "gets max", "fences", "bytes put",
            "bytes got", "tables");
    for (int r = 0; r < ROWS; r++) {
        const double *s = sum + r * NMETRICS, *m = max + r * NMETRICS;
        fprintf(stderr, "  %-8s %10.3f %10.3f %10.3f %8.0f %9.0f %8.0f %7.0f %11.0f %11.0f "
                "%11.0f\n", row_name(r), m[M_SECONDS] * 1e3, min[r * NMETRICS + M_SECONDS] * 1e3,
                s[M_SECONDS] * 1e3, s[M_PUTS], s[M_GETS], m[M_GETS], m[M_FENCES],
                s[M_PUT_BYTES], s[M_GET_BYTES], s[M_TABLE]);
    }
    const double *all = sum + LOCUS_BOOT_NPHASES * NMETRICS;
    fprintf(stderr, "  node-scoped keys (kept on their node by the process manager): %.0f puts, "
            "%.0f gets\n", all[M_NODE_PUTS], all[M_NODE_GETS]);
    if (max[VALS - 1] > 0)
        fprintf(stderr, "  launch to end of MPI_Init: %.3f ms (slowest rank)\n",
                max[VALS - 1] * 1e3);
    fflush(stderr);
}

static void print_json(const locus_boot_t *b, const double *sum, const double *max,
                       const double *min)
{
    char line[16384];
    size_t k = (size_t)snprintf(line, sizeof line,
                                "locus-startup: {\"ranks\": %d, \"nodes\": %d, "
                                "\"pm\": \"%s\", \"strategy\": \"%s\", \"strategy_auto\": %s, "
                                "\"launch_to_init_s\": %.6f, \"phases\": {", b->size, b->nnodes,
                                locus_boot_pm_name(b), locus_boot_addr_name(b->addr_strategy),
                                b->addr_auto ? "true" : "false", max[VALS - 1]);
    for (int r = 0; r < ROWS && k < sizeof line; r++) {
        k += (size_t)snprintf(line + k, sizeof line - k, "%s\"%s\": {", r ? ", " : "",
                              row_name(r));
        for (int i = 0; i < NMETRICS && k < sizeof line; i++) {
            int at = r * NMETRICS + i;
            k += (size_t)snprintf(line + k, sizeof line - k,
                                  "%s\"%s_sum\": %.9g, \"%s_max\": %.9g, \"%s_min\": %.9g",
                                  i ? ", " : "", metric_names[i], sum[at], metric_names[i],
                                  max[at], metric_names[i], min[at]);
        }
        if (k < sizeof line)
            k += (size_t)snprintf(line + k, sizeof line - k, "}");
    }
    if (k < sizeof line)
        fprintf(stderr, "%s}}\n", line);
    fflush(stderr);
}

enum { WHERE_LEN = 96 };

/* Every rank's locus_network_where, gathered to rank 0 (NULL elsewhere, or
 * when the gather fails). */
static char *where_gather(const locus_boot_t *b)
{
    char mine[WHERE_LEN] = "";
    locus_network_where(mine, sizeof mine);
    char *all = b->rank == 0 ? calloc((size_t)b->size, WHERE_LEN) : NULL;
    if (b->rank == 0 && !all)
        return NULL;
    if (locus_gather_impl(LOCUS_HOW_BLOCKING, mine, WHERE_LEN, MPI_CHAR, all, WHERE_LEN,
                          MPI_CHAR, 0, MPI_COMM_WORLD, MPI_INFO_NULL, NULL, "MPI_Gather") !=
        MPI_SUCCESS) {
        free(all);
        return NULL;
    }
    return all;
}

/* The ranks whose `where` equals rank r's, as ranges ("0-3,8"), each
 * marked done; returns how many. */
static int where_group(const char *all, int size, int r, char *done, char *out, size_t outlen)
{
    size_t k = 0;
    int n = 0;
    out[0] = '\0';
    for (int q = r; q < size; q++) {
        if (done[q] || strcmp(all + (size_t)q * WHERE_LEN, all + (size_t)r * WHERE_LEN))
            continue;
        int last = q;
        while (last + 1 < size && !done[last + 1] &&
               !strcmp(all + (size_t)(last + 1) * WHERE_LEN, all + (size_t)r * WHERE_LEN))
            last++;
        for (int x = q; x <= last; x++)
            done[x] = 1;
        n += last - q + 1;
        if (k < outlen)
            k += (size_t)(last > q ? snprintf(out + k, outlen - k, "%s%d-%d", k ? "," : "", q,
                                               last)
                                   : snprintf(out + k, outlen - k, "%s%d", k ? "," : "", q));
        q = last;
    }
    return n;
}

/* The network of every rank, grouped: "ofi tcp;ofi_rxm eth0": ranks 0,2. */
static void print_where(const char *all, int size, int json)
{
    char *done = calloc((size_t)size, 1);
    char ranks[1024];
    if (!done)
        return;
    fprintf(stderr, json ? "locus-network: {" : "  network between nodes:\n");
    for (int r = 0, first = 1; r < size; r++) {
        if (done[r])
            continue;
        int n = where_group(all, size, r, done, ranks, sizeof ranks);
        const char *w = all + (size_t)r * WHERE_LEN;
        if (json)
            fprintf(stderr, "%s\"%s\": \"%s\"", first ? "" : ", ", w, ranks);
        else
            fprintf(stderr, "    %-40s %d rank%s: %s\n", strcmp(w, "-") ? w : "none (one node)",
                    n, n == 1 ? "" : "s", ranks);
        first = 0;
    }
    if (json)
        fprintf(stderr, "}\n");
    fflush(stderr);
    free(done);
}

/* Seconds from the launcher's start (LOCUS_LAUNCH_TIME, a CLOCK_REALTIME
 * stamp set by locusrun) to the end of MPI_Init; 0 without it. */
static double since_launch(void)
{
    const char *t0 = getenv("LOCUS_LAUNCH_TIME");
    if (!t0 || !*t0 || !locus_mpi.init_done_realtime)
        return 0;
    char *end;
    double v = strtod(t0, &end);
    return *end == '\0' && v > 0 ? locus_mpi.init_done_realtime - v : 0;
}

void locus_startup_init_done(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    locus_mpi.init_done_realtime = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    locus_boot_phase(&locus_mpi.boot, LOCUS_BOOT_PH_RUN);
}

/* MPI_Reduce of the report's values to rank 0. */
static int report_reduce(const double *v, double *out, MPI_Op op)
{
    return locus_reduce_impl(LOCUS_HOW_BLOCKING, v, out, VALS, MPI_DOUBLE, op, 0, MPI_COMM_WORLD,
                             MPI_INFO_NULL, NULL, "MPI_Reduce");
}

void locus_startup_report(void)
{
    const char *how = locus_tunable_str("LOCUS_STARTUP_REPORT");
    int json = strcmp(how, "json") == 0;
    if (!json && (strcmp(how, "1") != 0 && strcmp(how, "yes") != 0))
        return;
    locus_boot_t *b = &locus_mpi.boot;
    locus_boot_phase(b, b->phase); /* brings the run phase's clock up to now */
    double v[VALS] = { 0 }, sum[VALS], max[VALS], min[VALS];
    locus_boot_count_t init = { 0 };
    for (int p = 0; p < LOCUS_BOOT_NPHASES; p++) {
        row_fill(v + p * NMETRICS, &b->count[p]);
        if (p == LOCUS_BOOT_PH_RUN)
            continue;
        init.seconds += b->count[p].seconds;
        init.puts += b->count[p].puts;
        init.gets += b->count[p].gets;
        init.fences += b->count[p].fences;
        init.put_bytes += b->count[p].put_bytes;
        init.get_bytes += b->count[p].get_bytes;
        init.table_bytes += b->count[p].table_bytes;
        init.node_puts += b->count[p].node_puts;
        init.node_gets += b->count[p].node_gets;
    }
    row_fill(v + LOCUS_BOOT_NPHASES * NMETRICS, &init);
    v[VALS - 1] = since_launch();
    if (report_reduce(v, sum, MPI_SUM) != MPI_SUCCESS ||
        report_reduce(v, max, MPI_MAX) != MPI_SUCCESS ||
        report_reduce(v, min, MPI_MIN) != MPI_SUCCESS)
        return;
    char *where = where_gather(b);
    if (b->rank != 0)
        return;
    if (json)
        print_json(b, sum, max, min);
    else
        print_table(b, sum, max, min);
    if (where)
        print_where(where, b->size, json);
    free(where);
}
