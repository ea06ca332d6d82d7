/*
 * LD_PRELOAD shim that refuses Cross Memory Attach with EPERM, as under
 * Yama ptrace_scope 2/3 or in a container that forbids it.
 * LOCUS_TEST_CMA_REFUSE says what: "read" (default: process_vm_readv, so
 * the transport's CMA probe refuses single copy; cli_tune_cma_refused) or
 * "write" (process_vm_writev only, so every split single copy falls back;
 * shm_xfer_2_splitfail). What is not refused goes to the kernel.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static int refused(const char *what)
{
    const char *v = getenv("LOCUS_TEST_CMA_REFUSE");
    return strcmp(v && *v ? v : "read", what) == 0;
}

/* The build hides symbols by default; an interposer must export them. */
__attribute__((visibility("default"))) ssize_t process_vm_readv(pid_t pid, const struct iovec *l,
                                                                unsigned long nl,
                                                                const struct iovec *r,
                                                                unsigned long nr,
                                                                unsigned long flags)
{
    if (!refused("read"))
        return syscall(SYS_process_vm_readv, pid, l, nl, r, nr, flags);
    errno = EPERM;
    return -1;
}

__attribute__((visibility("default"))) ssize_t process_vm_writev(pid_t pid, const struct iovec *l,
                                                                 unsigned long nl,
                                                                 const struct iovec *r,
                                                                 unsigned long nr,
                                                                 unsigned long flags)
{
    if (!refused("write"))
        return syscall(SYS_process_vm_writev, pid, l, nl, r, nr, flags);
    errno = EPERM;
    return -1;
}
