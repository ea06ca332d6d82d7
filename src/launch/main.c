/*
 * main.c — locusrun (also installed as mpirun and mpiexec). The same
 * binary is the front end, the per-node proxy (`locusrun --proxy IN OUT`,
 * control stream on fds IN/OUT), a node's last-resort cleanup
 * (`locusrun --cleanup JOBID`), so a remote node needs nothing but
 * locusrun itself, and a name service for several launches
 * (`locusrun --name-server`).
 */
#include "launch.h"
#include "locus_auth.h"
#include "locus_tunables.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The job's key (locus_auth.h): a site's LOCUS_JOB_KEY is kept (checked
 * here, so a bad one is bad input), else a fresh random one. Set in this
 * environment, it reaches the local proxy by inheritance and every other
 * proxy as a forwarded tunable over the control stream (ssh's stdin, never
 * a command line, which ps shows to everyone), and the ranks from their
 * proxy. Returns 0, or -1 with the reason printed.
 */
static int job_key_ensure(void)
{
    char err[256], hex[LOCUS_AUTH_KEY_HEX + 1];
    locus_auth_key_t k;
    if (*locus_tunable_str("LOCUS_JOB_KEY")) {
        if (locus_auth_key_env(&k, err, sizeof err) == 0)
            return 0;
        fprintf(stderr, "locusrun: %s\n", err);
        return -1;
    }
    if (locus_auth_key_new_hex(hex, sizeof hex) != 0 || setenv("LOCUS_JOB_KEY", hex, 1) != 0) {
        fprintf(stderr, "locusrun: cannot make the job's key: %s\n", strerror(errno));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--proxy") == 0)
        return launch_proxy_run(atoi(argv[2]), atoi(argv[3]));
    if (argc == 2 && strcmp(argv[1], "--proxy-connect") == 0)
        return launch_proxy_connect();
    if (argc >= 2 && strcmp(argv[1], "--name-server") == 0) {
        if (argc == 2)
            return launch_name_server_run();
        fprintf(stderr, "locusrun: --name-server takes no other argument ('%s')\n", argv[2]);
        return 2;
    }
    if (argc == 3 && strcmp(argv[1], "--cleanup") == 0) {
        if (launch_job_cleanup(argv[2]) < 0) {
            fprintf(stderr, "locusrun: --cleanup: '%s' is not a job id\n", argv[2]);
            return 2;
        }
        return 0;
    }
    launch_opts_t o;
    launch_dialect_t d;
    memset(&o, 0, sizeof o);
    char err[1024];
    int rc = launch_dialect_translate(&d, argc, argv, err, sizeof err) < 0 ? 2
             : launch_opts_parse(&o, d.argc, d.argv, err, sizeof err);
    if (rc == 1 || rc != 0 || job_key_ensure() != 0) {
        if (rc != 0 && rc != 1)
            fprintf(stderr, "locusrun: %s\n", err);
        launch_opts_free(&o);
        launch_dialect_free(&d);
        return rc == 1 ? 0 : 2;
    }
    rc = launch_frontend_run(&o);
    launch_opts_free(&o);
    launch_dialect_free(&d);
    return rc;
}
