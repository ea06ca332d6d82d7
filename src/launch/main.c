/*
 * main.c — locusrun (also installed as mpirun and mpiexec). The same
 * binary is the front end, the per-node proxy (`locusrun --proxy IN OUT`,
 * control stream on fds IN/OUT) and a node's last-resort cleanup
 * (`locusrun --cleanup JOBID`), so a remote node needs nothing but
 * locusrun itself.
 */
#include "launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--proxy") == 0)
        return launch_proxy_run(atoi(argv[2]), atoi(argv[3]));
    if (argc == 3 && strcmp(argv[1], "--cleanup") == 0) {
        if (launch_job_cleanup(argv[2]) < 0) {
            fprintf(stderr, "locusrun: --cleanup: '%s' is not a job id\n", argv[2]);
            return 2;
        }
        return 0;
    }
    launch_opts_t o;
    char err[1024];
    int rc = launch_opts_parse(&o, argc, argv, err, sizeof err);
    if (rc == 1) {
        launch_opts_free(&o);
        return 0;
    }
    if (rc != 0) {
        fprintf(stderr, "locusrun: %s\n", err);
        launch_opts_free(&o);
        return 2;
    }
    rc = launch_frontend_run(&o);
    launch_opts_free(&o);
    return rc;
}
