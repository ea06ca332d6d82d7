/*
 * shm_file.h — named shared-memory files in /dev/shm, scoped to the job:
 * what the shared-memory transport's segments and the collectives' shared
 * segments are made of. A name is /locus.<jobid>.<what>.<pid>[.<k>], so
 * locusrun's sweep of /dev/shm/locus.<LOCUS_JOBID>.* removes whatever a
 * crash left, and the creator's pid (last) tells a leak from a live file.
 * Users unlink a file as soon as every process has mapped it.
 */
#ifndef SHM_FILE_H
#define SHM_FILE_H

#include <stddef.h>

/*
 * Creates the file `name` ("/locus...."), `size` bytes, mode 0600, and maps
 * it. posix_fallocate() reserves the pages now, so a full /dev/shm is an
 * error here rather than a SIGBUS later. Returns 0, or -1 (-EEXIST when the
 * name is taken) with a one-line reason in err.
 */
int shm_file_create(const char *name, size_t size, void **base, char *err, size_t errlen);

/* Maps the existing file `name` (at least min_size bytes); sets *base and
 * *size. Returns 0, or -1 with a reason. */
int shm_file_attach(const char *name, size_t min_size, void **base, size_t *size, char *err,
                    size_t errlen);

/* shm_file_attach that also keeps the file open: *fd (O_CLOEXEC) is the
 * caller's to close. */
int shm_file_attach_fd(const char *name, size_t min_size, void **base, size_t *size, int *fd,
                       char *err, size_t errlen);

/* /locus.<jobid>.<what>.<pid>[.<attempt>] for this process. jobid is
 * LOCUS_JOBID (characters outside [A-Za-z0-9._-] become '_'), or
 * "pid<pid>" when it is not set. */
void shm_file_name(char *buf, size_t len, const char *what, int attempt);

/* /locus.<jobid>.<what>, without the pid: a name every process of the job
 * can derive alone (what must then say whose it is, e.g. the node). */
void shm_file_job_name(char *buf, size_t len, const char *what);

#endif
