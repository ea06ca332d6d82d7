/* Named shared-memory files in /dev/shm: creation, attachment, names. */
#include "shm_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "locus_tunables.h"

int shm_file_create(const char *name, size_t size, void **base, char *err, size_t errlen)
{
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "shm: cannot create /dev/shm%s: %s", name, strerror(e));
        return e == EEXIST ? -EEXIST : -1;
    }
    int rc = posix_fallocate(fd, 0, (off_t)size);
    if (rc != 0) {
        snprintf(err, errlen, "shm: cannot reserve %zu bytes in /dev/shm for %s: %s",
                 size, name, strerror(rc));
        close(fd);
        shm_unlink(name);
        return -1;
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED) {
        snprintf(err, errlen, "shm: cannot map %s (%zu bytes): %s", name, size, strerror(e));
        shm_unlink(name);
        return -1;
    }
    *base = p;
    return 0;
}

int shm_file_attach(const char *name, size_t min_size, void **base, size_t *size, char *err,
                    size_t errlen)
{
    int fd;
    int rc = shm_file_attach_fd(name, min_size, base, size, &fd, err, errlen);
    if (rc == 0)
        close(fd);
    return rc;
}

int shm_file_attach_fd(const char *name, size_t min_size, void **base, size_t *size, int *fdp,
                       char *err, size_t errlen)
{
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0) {
        snprintf(err, errlen, "shm: cannot open segment /dev/shm%s: %s", name,
                 strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)min_size) {
        snprintf(err, errlen, "shm: segment %s is too small or unreadable", name);
        close(fd);
        return -1;
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        snprintf(err, errlen, "shm: cannot map segment %s: %s", name, strerror(errno));
        close(fd);
        return -1;
    }
    *base = p;
    *size = (size_t)st.st_size;
    *fdp = fd;
    return 0;
}

void shm_file_job_name(char *buf, size_t len, const char *what)
{
    char job[101];
    const char *j = locus_tunable_str("LOCUS_JOBID");
    if (j && *j) {
        size_t i = 0;
        for (; j[i] && i < sizeof job - 1; i++) {
            char c = j[i];
            int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                     (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
            job[i] = ok ? c : '_';  /* a '/' would make shm_open fail */
        }
        job[i] = '\0';
    } else {
        snprintf(job, sizeof job, "pid%ld", (long)getpid());
    }
    snprintf(buf, len, "/locus.%s.%s", job, what);
}

void shm_file_name(char *buf, size_t len, const char *what, int attempt)
{
    char base[160];
    shm_file_job_name(base, sizeof base, what);
    if (attempt == 0)
        snprintf(buf, len, "%s.%ld", base, (long)getpid());
    else
        snprintf(buf, len, "%s.%ld.%d", base, (long)getpid(), attempt);
}
