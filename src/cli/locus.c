/* locus — the front door to Locus's tools: topo, map, info, tune, bench. */
#include <stdio.h>
#include <string.h>

#include "locus_cli.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: locus <command> [options]\n"
            "  topo   [--topology FILE] [--json]           what this machine (or FILE) is\n"
            "  map    -n N [placement options] [--topology FILE] [--json]\n"
            "                                              where each rank would run\n"
            "  info   [--json]                             every LOCUS_* tunable, its default and meaning\n"
            "  tune   [--quick] [--show] [--json]          measure this machine's shm large-message paths\n"
            "                                              and cache the best LOCUS_SHM_* values for it\n"
            "  bench  compare|sweep|startup|congestion|perfboost ...\n"
            "                                              run benchmarks side by side with other MPIs\n"
            "  version                                     print the version\n"
            "Run 'locus <command> --help' for a command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "topo"))
        return locus_cmd_topo(argc - 1, argv + 1);
    if (!strcmp(cmd, "map"))
        return locus_cmd_map(argc - 1, argv + 1);
    if (!strcmp(cmd, "info"))
        return locus_cmd_info(argc - 1, argv + 1);
    if (!strcmp(cmd, "tune"))
        return locus_cmd_tune(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench"))
        return locus_cmd_bench(argc - 1, argv + 1);
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        printf("locus %s\n", LOCUS_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "locus: unknown command '%s' (try 'locus help')\n", cmd);
    return 2;
}
