/* Placeholder until the placement engine lands (issue 2). */
#include <stdio.h>
#include "locus_cli.h"

int locus_cmd_map(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "locus map: not built yet\n");
    return 1;
}
