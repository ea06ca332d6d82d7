/*
 * main.c — locusrun (also installed as mpirun and mpiexec). The same
 * binary is the front end and, as `locusrun --proxy IN OUT`, the per-node
 * proxy, so a remote node needs nothing but locusrun itself.
 */
#include "launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--proxy") == 0)
        return launch_proxy_run(atoi(argv[2]), atoi(argv[3]));
    launch_opts_t o;
    char err[1024];
    int rc = launch_opts_parse(&o, argc, argv, err, sizeof err);
    if (rc == 1)
        return 0;
    if (rc != 0) {
        fprintf(stderr, "locusrun: %s\n", err);
        return 2;
    }
    rc = launch_frontend_run(&o);
    launch_opts_free(&o);
    return rc;
}
