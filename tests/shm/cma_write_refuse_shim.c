/*
 * LD_PRELOAD shim for shm_xfer_2_splitfail: process_vm_writev fails with
 * EPERM (as when the receiver may not be written to), so every split
 * single copy falls back to the pipelined copy of the whole message;
 * process_vm_readv is left alone.
 */
#include <errno.h>
#include <sys/uio.h>

/* The build hides symbols by default; an interposer must export them. */
__attribute__((visibility("default"))) ssize_t process_vm_writev(pid_t pid, const struct iovec *l,
                                                                 unsigned long nl,
                                                                 const struct iovec *r,
                                                                 unsigned long nr,
                                                                 unsigned long flags)
{
    (void)pid, (void)l, (void)nl, (void)r, (void)nr, (void)flags;
    errno = EPERM;
    return -1;
}
