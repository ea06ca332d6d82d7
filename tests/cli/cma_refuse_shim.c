/*
 * LD_PRELOAD shim for cli_tune_cma_refused: process_vm_readv fails with
 * EPERM, as under Yama ptrace_scope 2/3 or in a container that forbids it,
 * so the transport's CMA probe refuses single copy.
 */
#include <errno.h>
#include <sys/uio.h>

/* The build hides symbols by default; an interposer must export them. */
__attribute__((visibility("default"))) ssize_t process_vm_readv(pid_t pid, const struct iovec *l,
                                                                unsigned long nl,
                                                                const struct iovec *r,
                                                                unsigned long nr,
                                                                unsigned long flags)
{
    (void)pid, (void)l, (void)nl, (void)r, (void)nr, (void)flags;
    errno = EPERM;
    return -1;
}
