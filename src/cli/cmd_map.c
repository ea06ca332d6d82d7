/* `locus map`: where each rank of a job would run, without running it. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "locus_cli.h"
#include "locus_place.h"

static void map_usage(FILE *out)
{
    fprintf(out,
            "usage: locus map -n N [placement options] [--topology FILE.xml] [--restrict CPULIST] [--json]\n"
            "  -n, -np N                 number of ranks\n"
            "  --map-by POLICY           core | numa | socket | l3cache | nic | ppr:K:OBJ\n"
            "                            (default: consecutive ranks share a NUMA node,\n"
            "                            ranks balanced across NUMA nodes)\n"
            "  --bind-to UNIT            core | pu | l3cache | numa | socket | none\n"
            "  --cpus-per-rank T         threads per rank (OMP_NUM_THREADS)\n"
            "  --oversubscribe           allow more ranks than allowed PUs\n"
            "  --nic NAME[,NAME...]      only these NICs\n"
            "  --mem-on N                memory on NUMA node N\n"
            "  --topology FILE.xml       plan for that machine (an hwloc XML export)\n"
            "  --restrict CPULIST        plan inside that cpuset (OS PU numbers)\n"
            "  --json                    machine-readable plan\n");
}

typedef struct {
    locus_place_request_t req;
    const char *xml, *restrict_list;
    int json, have_n;
} map_args_t;

/* Returns -1 after printing the reason, 1 for --help, 0 otherwise. */
static int map_args_parse(map_args_t *a, int argc, char **argv)
{
    char err[512];
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strncmp(o, "--topology=", 11) || !strncmp(o, "--restrict=", 11)) {
            *(o[2] == 't' ? &a->xml : &a->restrict_list) = o + 11;
            continue;
        }
        int used = locus_place_opt_parse(&a->req, o, v, err, sizeof err);
        if (used < 0) {
            fprintf(stderr, "locus map: %s\n", err);
            return -1;
        }
        if (used > 0) {
            i += used - 1;
            continue;
        }
        if (!strcmp(o, "--json")) {
            a->json = 1;
        } else if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            return 1;
        } else if (!strcmp(o, "-n") || !strcmp(o, "-np") || !strcmp(o, "--np")
                   || !strcmp(o, "--topology") || !strcmp(o, "--restrict")) {
            if (!v) {
                fprintf(stderr, "locus map: option %s needs a value\n", o);
                return -1;
            }
            i++;
            if (!strcmp(o, "--topology")) {
                a->xml = v;
            } else if (!strcmp(o, "--restrict")) {
                a->restrict_list = v;
            } else {
                char *end;
                errno = 0;
                long n = strtol(v, &end, 10);
                if (!*v || *end || errno || n <= 0 || n > INT_MAX) {
                    fprintf(stderr, "locus map: %s needs a number of ranks >= 1, got '%s'\n", o, v);
                    return -1;
                }
                a->req.nranks = (int)n;
                a->have_n = 1;
            }
        } else {
            fprintf(stderr, "locus map: unknown option '%s' (try 'locus map --help')\n", o);
            return -1;
        }
    }
    if (!a->have_n) {
        fprintf(stderr, "locus map: missing -n N (number of ranks)\n");
        return -1;
    }
    return 0;
}

int locus_cmd_map(int argc, char **argv)
{
    map_args_t a = {0};
    locus_place_request_init(&a.req);
    int rc = map_args_parse(&a, argc, argv);
    if (rc != 0) {
        if (rc > 0)
            map_usage(stdout);
        return rc > 0 ? 0 : 2;
    }
    char err[512];
    locus_topo_t *t = locus_topo_load(a.xml, err, sizeof err);
    if (!t) {
        fprintf(stderr, "locus map: %s\n", err);
        return a.xml ? 2 : 1;
    }
    if (a.restrict_list && locus_topo_restrict(t, a.restrict_list, err, sizeof err) < 0) {
        fprintf(stderr, "locus map: %s\n", err);
        locus_topo_free(t);
        return 2;
    }
    locus_plan_t plan;
    if (locus_plan_make(t, &a.req, &plan, err, sizeof err) < 0) {
        fprintf(stderr, "locus map: %s\n", err);
        locus_topo_free(t);
        return 2;
    }
    if (a.json)
        locus_plan_write_json(&plan, t, stdout);
    else
        locus_plan_write_table(&plan, t, stdout);
    for (int i = 0; i < plan.nwarnings; i++)
        fprintf(stderr, "locus map: warning: %s\n", plan.warnings[i]);
    locus_plan_free(&plan);
    locus_topo_free(t);
    return 0;
}
