/* `locus topo`: what this machine (or an hwloc XML export) is. */
#include <stdio.h>
#include <string.h>

#include "locus_cli.h"
#include "locus_topo.h"

static void topo_usage(FILE *out)
{
    fprintf(out, "usage: locus topo [--topology FILE.xml] [--restrict CPULIST] [--json]\n"
                 "  packages, NUMA nodes with their cores and PUs (* = disallowed),\n"
                 "  NICs and GPUs with their NUMA node\n");
}

int locus_cmd_topo(int argc, char **argv)
{
    const char *xml = NULL, *restrict_list = NULL;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            topo_usage(stdout);
            return 0;
        } else if (!strncmp(a, "--topology=", 11)) {
            xml = a + 11;
        } else if (!strncmp(a, "--restrict=", 11)) {
            restrict_list = a + 11;
        } else if (!strcmp(a, "--topology") || !strcmp(a, "--restrict")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "locus topo: option %s needs a value\n", a);
                return 2;
            }
            if (!strcmp(a, "--topology"))
                xml = argv[++i];
            else
                restrict_list = argv[++i];
        } else {
            fprintf(stderr, "locus topo: unknown option '%s' (try 'locus topo --help')\n", a);
            return 2;
        }
    }
    char err[512];
    locus_topo_t *t = locus_topo_load(xml, err, sizeof err);
    if (!t) {
        fprintf(stderr, "locus topo: %s\n", err);
        return xml ? 2 : 1;
    }
    if (restrict_list && locus_topo_restrict(t, restrict_list, err, sizeof err) < 0) {
        fprintf(stderr, "locus topo: %s\n", err);
        locus_topo_free(t);
        return 2;
    }
    if (json)
        locus_topo_write_json(t, stdout);
    else
        locus_topo_write_text(t, stdout);
    locus_topo_free(t);
    return 0;
}
