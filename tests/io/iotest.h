/*
 * iotest.h — what the MPI-IO tests share (on top of mtest.h): a private
 * temporary folder per run, made by rank 0 under $TMPDIR (or /tmp) and
 * known to all ranks, names of files in it, and its removal at the end.
 */
#ifndef IOTEST_H
#define IOTEST_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtest.h"

static char iot_dir[256];

/* Collective over MPI_COMM_WORLD. */
static void iot_setup(const char *test)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        const char *tmp = getenv("TMPDIR");
        snprintf(iot_dir, sizeof iot_dir, "%s/locus-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", test);
        if (!mkdtemp(iot_dir)) {
            perror("mkdtemp");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Bcast(iot_dir, sizeof iot_dir, MPI_CHAR, 0, MPI_COMM_WORLD);
}

/* A file name in the folder (kept until iot_cleanup: tests hold several). */
static char *iot_names[256];
static int iot_nnames;
static const char *iot_path(const char *name)
{
    static char overflow[512];
    size_t n = strlen(iot_dir) + strlen(name) + 2;
    char *p = iot_nnames < 256 ? malloc(n) : NULL;
    if (!p) {
        snprintf(overflow, sizeof overflow, "%s/%s", iot_dir, name);
        return overflow;
    }
    snprintf(p, n, "%s/%s", iot_dir, name);
    return iot_names[iot_nnames++] = p;
}

/* Removes the folder and what is left in it. Collective. */
static void iot_cleanup(void)
{
    int rank;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    while (iot_nnames > 0)
        free(iot_names[--iot_nnames]);
    if (rank != 0)
        return;
    DIR *d = opendir(iot_dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            char p[600];
            snprintf(p, sizeof p, "%s/%s", iot_dir, e->d_name);
            if (unlink(p) != 0) {
                /* a folder made by a test */
                rmdir(p);
            }
        }
    }
    if (d)
        closedir(d);
    rmdir(iot_dir);
}

/* The error class of a code. */
static inline int iot_class(int code)
{
    int c = code;
    MPI_Error_class(code, &c);
    return c;
}

#endif
