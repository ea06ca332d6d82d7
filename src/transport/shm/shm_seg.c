#include "shm_seg.h"

#include "locus_tunables.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t align_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

void shm_seg_layout(shm_seg_hdr_t *h, uint32_t local_size, uint32_t ring_cells,
                    uint32_t pool_chunks, uint64_t chunk_size)
{
    h->local_size = local_size;
    h->ring_cells = ring_cells;
    h->pool_chunks = pool_chunks;
    h->chunk_size = chunk_size;
    h->rings_off = SHM_SEG_HDR;
    uint64_t rings = (uint64_t)(local_size - 1) * (128 + (uint64_t)ring_cells * 64);
    h->states_off = align_up(h->rings_off + rings, 128);
    h->pool_off = align_up(h->states_off + (uint64_t)pool_chunks * 64, 4096);
    h->total = align_up(h->pool_off + (uint64_t)pool_chunks * chunk_size, 4096);
}

int shm_seg_create(const char *name, size_t size, void **base, char *err, size_t errlen)
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

int shm_seg_attach(const char *name, void **base, size_t *size, char *err, size_t errlen)
{
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0) {
        snprintf(err, errlen, "shm: cannot open peer segment /dev/shm%s: %s", name,
                 strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)SHM_SEG_HDR) {
        snprintf(err, errlen, "shm: peer segment %s is too small or unreadable", name);
        close(fd);
        return -1;
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED) {
        snprintf(err, errlen, "shm: cannot map peer segment %s: %s", name, strerror(e));
        return -1;
    }
    *base = p;
    *size = (size_t)st.st_size;
    return 0;
}

void shm_seg_name(char *buf, size_t len, int local_rank, int attempt)
{
    char job[101];
    const char *j = locus_tunable_str("LOCUS_JOBID");
    if (j && *j) {
        size_t i = 0;
        for (; j[i] && i < sizeof job - 1; i++) {
            char c = j[i];
            int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                     (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
            job[i] = ok ? c : '_';
        }
        job[i] = '\0';
    } else {
        snprintf(job, sizeof job, "pid%ld", (long)getpid());
    }
    if (attempt == 0)
        snprintf(buf, len, "/locus.%s.%d.%ld", job, local_rank, (long)getpid());
    else
        snprintf(buf, len, "/locus.%s.%d.%ld.%d", job, local_rank, (long)getpid(), attempt);
}
