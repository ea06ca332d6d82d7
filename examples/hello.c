/* hello: every rank says where it runs — the CPUs it is really bound to (read
 * back from the kernel) and the NIC/GPU the launcher chose for it — then all
 * ranks agree on a sum. Build: mpicc hello.c -o hello; run: locusrun -n 2 ./hello */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

/* "0-1,4" style list of the CPUs this process may run on. */
static void affinity_list(char *out, size_t len)
{
    cpu_set_t set;
    out[0] = '\0';
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        snprintf(out, len, "?");
        return;
    }
    size_t used = 0;
    for (int c = 0; c < CPU_SETSIZE && used + 16 < len; c++) {
        if (!CPU_ISSET(c, &set))
            continue;
        int end = c;
        while (end + 1 < CPU_SETSIZE && CPU_ISSET(end + 1, &set))
            end++;
        used += (size_t)snprintf(out + used, len - used, "%s%d", used ? "," : "", c);
        if (end > c)
            used += (size_t)snprintf(out + used, len - used, "-%d", end);
        c = end;
    }
}

int main(int argc, char **argv)
{
    int rank, size, len;
    char host[MPI_MAX_PROCESSOR_NAME], cpus[256];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(host, &len);
    affinity_list(cpus, sizeof cpus);
    const char *nic = getenv("LOCUS_NIC"), *gpu = getenv("LOCUS_GPU");
    printf("hello from rank %d of %d on %s: CPUs %s, NIC %s, GPU %s\n", rank, size, host, cpus,
           nic && *nic ? nic : "none", gpu && *gpu ? gpu : "none");
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("sum of ranks = %d (expected %d)\n", sum, size * (size - 1) / 2);
    MPI_Finalize();
    return sum == size * (size - 1) / 2 ? 0 : 1;
}
