/*
 * The collectives' shared-memory segment lives under the job's prefix
 * (/dev/shm/locus.<LOCUS_JOBID>.coll.*, which locusrun sweeps after a job)
 * and is unlinked as soon as every member has mapped it: after the first
 * shared-memory collective on a communicator, none of this job's
 * segments is visible. Run with LOCUS_COLL_BCAST=shm so the path is taken.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

/* Entries of /dev/shm starting with prefix. */
static int count_prefixed(const char *prefix)
{
    DIR *d = opendir("/dev/shm");
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, errs = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* The library sets LOCUS_JOBID at MPI_Init when no launcher did. */
    const char *job = getenv("LOCUS_JOBID");
    if (!job || !*job) {
        printf("rank %d: LOCUS_JOBID not set after MPI_Init\n", rank);
        errs++;
        job = "";
    }
    char prefix[512];
    snprintf(prefix, sizeof prefix, "locus.%s.coll.", job);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm comms[2] = { MPI_COMM_WORLD, dup };
    for (int c = 0; c < 2; c++) {
        int v = rank == 0 ? 42 + c : -1;
        MPI_Bcast(&v, 1, MPI_INT, 0, comms[c]);
        if (v != 42 + c) {
            printf("rank %d: bcast gave %d, want %d\n", rank, v, 42 + c);
            errs++;
        }
    }
    /* Checked only once every rank is past both set-ups: a rank that runs
     * ahead may be making the next communicator's segment (linked until
     * all of its members have mapped it). */
    MPI_Barrier(MPI_COMM_WORLD);
    int left = count_prefixed(prefix);
    if (left) {
        printf("rank %d: %d /dev/shm/%s* segment(s) still linked after the first "
               "collective on each communicator\n", rank, left, prefix);
        errs++;
    }
    MPI_Comm_free(&dup);
    int all = 0;
    MPI_Reduce(&errs, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return all != 0;
}
