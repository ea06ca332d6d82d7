/*
 * ofi_lib.c — libfabric, loaded the first time the transport needs it.
 *
 * Linked into liblocusmpi, libfabric brought its providers' libraries into
 * every rank of every job (Debian's links PSM's and PSM2's), and PSM's
 * constructor calibrates its clock in a sleep loop: 0.2 s before main,
 * ofi or not. Loaded with dlopen, only a rank that asks libfabric anything
 * pays for it. ofi_tp.h points the five entry points the transport calls
 * (the rest of libfabric's API is inline calls through its objects' ops)
 * at the functions here.
 */
#define OFI_LIB_REAL
#include "ofi_tp.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static struct {
    pthread_once_t once;
    void *handle;
    char why[256];
    int (*getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *,
                   struct fi_info **);
    void (*freeinfo)(struct fi_info *);
    struct fi_info *(*dupinfo)(const struct fi_info *);
    int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    const char *(*strerror)(int);
} lib = { .once = PTHREAD_ONCE_INIT };

static void load(void)
{
    lib.handle = dlopen("libfabric.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (lib.handle == NULL) {
        snprintf(lib.why, sizeof lib.why, "cannot load libfabric: %s", dlerror());
        return;
    }
    /* Looked up in the whole process, as a link would bind them: a
     * library loaded before (LD_PRELOAD's, as the tests' ofi_mode_shim)
     * that defines an entry point wraps libfabric's and finds it with
     * RTLD_NEXT, which is why libfabric is loaded RTLD_GLOBAL. */
    *(void **)&lib.getinfo = dlsym(RTLD_DEFAULT, "fi_getinfo");
    *(void **)&lib.freeinfo = dlsym(RTLD_DEFAULT, "fi_freeinfo");
    *(void **)&lib.dupinfo = dlsym(RTLD_DEFAULT, "fi_dupinfo");
    *(void **)&lib.fabric = dlsym(RTLD_DEFAULT, "fi_fabric");
    *(void **)&lib.strerror = dlsym(RTLD_DEFAULT, "fi_strerror");
    if (!lib.getinfo || !lib.freeinfo || !lib.dupinfo || !lib.fabric || !lib.strerror) {
        snprintf(lib.why, sizeof lib.why, "libfabric.so.1 lacks fi_getinfo, fi_freeinfo, "
                 "fi_dupinfo, fi_fabric or fi_strerror");
        dlclose(lib.handle);
        lib.handle = NULL;
    }
}

static int loaded(void)
{
    pthread_once(&lib.once, load);
    return lib.handle != NULL;
}

int ofi_lib_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
                    const struct fi_info *hints, struct fi_info **info)
{
    return loaded() ? lib.getinfo(version, node, service, flags, hints, info) : -FI_ENOSYS;
}

void ofi_lib_freeinfo(struct fi_info *info)
{
    if (loaded())
        lib.freeinfo(info);
}

struct fi_info *ofi_lib_dupinfo(const struct fi_info *info)
{
    return loaded() ? lib.dupinfo(info) : NULL;
}

int ofi_lib_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
    return loaded() ? lib.fabric(attr, fabric, context) : -FI_ENOSYS;
}

const char *ofi_lib_strerror(int errnum)
{
    if (!loaded())
        return lib.why;
    return lib.strerror(errnum);
}
