/*
 * shm_cma.h — single copy with process_vm_readv (Cross Memory Attach).
 *
 * The receiver reads the sender's buffer straight into its own. The kernel
 * allows it only with ptrace-attach rights over the sender (same user, Yama
 * ptrace_scope 0, or the sender called PR_SET_PTRACER), in one user
 * namespace, and when no seccomp policy refuses the syscall. Start-up probes
 * this once per peer; a run-time EPERM/ENOSYS makes the caller fall back to
 * the pipelined copy.
 */
#ifndef SHM_CMA_H
#define SHM_CMA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Inode of /proc/self/ns/user (0 when unknown). */
uint64_t shm_cma_userns(void);

/* Lets peers read this process when Yama restricts ptrace to descendants
 * (ptrace_scope 1), as Open MPI does; a no-op otherwise. */
void shm_cma_allow_peers(void);

/* Reads `len` bytes at `remote` in process `pid` into `local`. Returns 0, or
 * a negative errno (-EPERM, -ENOSYS, -ESRCH, -EFAULT, ...). */
int shm_cma_read(pid_t pid, void *local, uint64_t remote, size_t len);

/* Writes `len` bytes from `local` to `remote` in process `pid` (the split
 * single copy: the sender writes part of the receiver's buffer). */
int shm_cma_write(pid_t pid, const void *local, uint64_t remote, size_t len);

/* Whether reading 8 bytes at `addr` in `pid` yields `cookie`: 0 yes, else a
 * negative errno (-EIO when the bytes differ, e.g. another pid namespace). */
int shm_cma_probe(pid_t pid, uint64_t addr, uint64_t cookie);

#endif
