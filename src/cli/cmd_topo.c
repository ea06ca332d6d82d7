/* Placeholder until the placement engine lands (issue 2). */
#include <stdio.h>
#include "locus_cli.h"

int locus_cmd_topo(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "locus topo: not built yet\n");
    return 1;
}
