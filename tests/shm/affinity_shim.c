/*
 * LD_PRELOAD shim for test_shm_decide: affinity calls behave as on a kernel
 * with 2048 possible CPUs, where a fixed 1024-bit cpu_set_t is too small
 * and the kernel answers EINVAL (sched_getaffinity(2): "cpusetsize is
 * smaller than the size of the affinity mask used by the kernel").
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>

#define KERNEL_CPUS 2048
/* The build hides symbols by default; an interposer must export them. */
#define SHIM_EXPORT __attribute__((visibility("default")))

SHIM_EXPORT int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *set)
{
    if (size * 8 < KERNEL_CPUS) {
        errno = EINVAL;
        return -1;
    }
    int (*real)(pid_t, size_t, cpu_set_t *) =
        (int (*)(pid_t, size_t, cpu_set_t *))dlsym(RTLD_NEXT, "sched_getaffinity");
    return real ? real(pid, size, set) : (errno = ENOSYS, -1);
}

SHIM_EXPORT int pthread_getaffinity_np(pthread_t t, size_t size, cpu_set_t *set)
{
    if (size * 8 < KERNEL_CPUS)
        return EINVAL;
    int (*real)(pthread_t, size_t, cpu_set_t *) =
        (int (*)(pthread_t, size_t, cpu_set_t *))dlsym(RTLD_NEXT, "pthread_getaffinity_np");
    return real ? real(t, size, set) : ENOSYS;
}
