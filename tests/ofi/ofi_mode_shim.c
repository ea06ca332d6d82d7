/*
 * ofi_mode_shim.so — LD_PRELOADed by ofi_tests.py: fi_getinfo as the real
 * provider answers, then made stricter, so the transport's handling of
 * what real fabrics ask for runs on the software providers here.
 * LOCUS_TEST_FI_MR_HINTS (below) narrows what the program offers.
 * LOCUS_TEST_FI_MR_MODE: memory-registration mode bits (a number) added
 * to every answer; the provider opens its domain with them, so it checks
 * keys and addresses that way (FI_MR_VIRT_ADDR, FI_MR_PROV_KEY) and wants
 * registrations bound (FI_MR_ENDPOINT) and local buffers registered
 * (FI_MR_LOCAL). LOCUS_TEST_FI_NO_RMA=1: the provider has no FI_RMA (a
 * request for it finds nothing, and answers lack the bits).
 * LOCUS_TEST_FI_NO_CQ_DATA=1: it carries no remote CQ data (cq_data_size
 * 0 in every answer).
 *
 * The software providers cannot bind a registration to an endpoint, so
 * under FI_MR_ENDPOINT the shim answers fi_mr_bind to an endpoint and
 * FI_ENABLE itself (every domain's registrations pass through it: the
 * fabric's domain call is wrapped) and counts; at exit it prints
 * "ofi_mode_shim: R registrations (L local), B bound to an endpoint, E
 * enabled", which the test compares.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_domain.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int nreg, nlocal, nbound, nenabled, endpoint_mode;

static int mr_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
    (void)fid, (void)flags;
    if (bfid->fclass != FI_CLASS_EP)
        return -FI_EINVAL;
    nbound++;
    return 0;
}

static int mr_control(struct fid *fid, int command, void *arg)
{
    (void)fid, (void)arg;
    if (command != FI_ENABLE)
        return -FI_ENOSYS;
    nenabled++;
    return 0;
}

static int (*real_reg)(struct fid *, const void *, size_t, uint64_t, uint64_t, uint64_t, uint64_t,
                       struct fid_mr **, void *);

static int mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access, uint64_t offset,
                  uint64_t requested_key, uint64_t flags, struct fid_mr **mr, void *context)
{
    int rc = real_reg(fid, buf, len, access, offset, requested_key, flags, mr, context);
    if (rc != 0)
        return rc;
    nreg++;
    nlocal += (access & (FI_SEND | FI_RECV | FI_READ | FI_WRITE)) != 0;
    if (endpoint_mode) {
        struct fi_ops *ops = malloc(sizeof *ops);
        memcpy(ops, (*mr)->fid.ops, sizeof *ops);
        ops->bind = mr_bind;
        ops->control = mr_control;
        (*mr)->fid.ops = ops;
    }
    return 0;
}

static int (*real_domain)(struct fid_fabric *, struct fi_info *, struct fid_domain **, void *);

static int domain_open(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **dom,
                       void *context)
{
    int rc = real_domain(fabric, info, dom, context);
    if (rc != 0)
        return rc;
    struct fi_ops_mr *ops = malloc(sizeof *ops);
    memcpy(ops, (*dom)->mr, sizeof *ops);
    real_reg = ops->reg;
    ops->reg = mr_reg;
    (*dom)->mr = ops;
    return 0;
}

/* Interposed: visible whatever the build's default. */
__attribute__((visibility("default"))) int fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
    static int (*real)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    if (!real)
        real = (int (*)(struct fi_fabric_attr *, struct fid_fabric **, void *))dlsym(
            RTLD_NEXT, "fi_fabric");
    int rc = real(attr, fabric, context);
    Dl_info caller, self;
    if (rc != 0 || (dladdr(__builtin_return_address(0), &caller) &&
                    dladdr((void *)real, &self) && caller.dli_fbase == self.dli_fbase))
        return rc; /* a utility provider's own fabric: as it is */
    struct fi_ops_fabric *ops = malloc(sizeof *ops);
    memcpy(ops, (*fabric)->ops, sizeof *ops);
    real_domain = ops->domain;
    ops->domain = domain_open;
    (*fabric)->ops = ops;
    return 0;
}

__attribute__((destructor)) static void report(void)
{
    if (nreg)
        fprintf(stderr, "ofi_mode_shim: %d registrations (%d local), %d bound to an endpoint, "
                        "%d enabled\n", nreg, nlocal, nbound, nenabled);
}

/* LOCUS_TEST_FI_NIC_PCI=DOMAIN=ADDR: the software providers describe no
 * NIC (fi_info's nic is NULL); a fabric's does, with its PCI address. The
 * entries of DOMAIN get one at ADDR ("0000:04:00.0"), freed and copied
 * the way libfabric frees and copies a provider's (through its fid). */
struct fake_nic {
    struct fid_nic nic;
    struct fi_bus_attr bus;
};

static int fake_nic_close(struct fid *fid)
{
    free(fid);
    return 0;
}

static struct fid_nic *fake_nic_make(const struct fi_pci_attr *at);

static int fake_nic_control(struct fid *fid, int command, void *arg)
{
    if (command != FI_DUP)
        return -FI_ENOSYS;
    struct fid_nic **dup = arg;
    *dup = fake_nic_make(&((struct fake_nic *)fid)->bus.attr.pci);
    return *dup ? 0 : -FI_ENOMEM;
}

static struct fi_ops fake_nic_ops = {
    .size = sizeof(struct fi_ops), .close = fake_nic_close, .control = fake_nic_control,
};

static struct fid_nic *fake_nic_make(const struct fi_pci_attr *at)
{
    struct fake_nic *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->nic.fid.fclass = FI_CLASS_NIC;
    f->nic.fid.ops = &fake_nic_ops;
    f->bus.bus_type = FI_BUS_PCI;
    f->bus.attr.pci = *at;
    f->nic.bus_attr = &f->bus;
    return &f->nic;
}

static void fake_nics(struct fi_info *info)
{
    const char *spec = getenv("LOCUS_TEST_FI_NIC_PCI");
    char dom[64];
    unsigned d, b, dev, fn;
    if (!spec || sscanf(spec, "%63[^=]=%x:%x:%x.%x", dom, &d, &b, &dev, &fn) != 5)
        return;
    struct fi_pci_attr at = { .domain_id = (uint16_t)d, .bus_id = (uint8_t)b,
                              .device_id = (uint8_t)dev, .function_id = (uint8_t)fn };
    for (struct fi_info *i = info; i; i = i->next)
        if (!i->nic && i->domain_attr && i->domain_attr->name &&
            !strcmp(i->domain_attr->name, dom))
            i->nic = fake_nic_make(&at);
}

__attribute__((visibility("default"))) int fi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
               const struct fi_info *hints, struct fi_info **info)
{
    static int (*real)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *,
                       struct fi_info **);
    if (!real)
        real = (int (*)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *,
                        struct fi_info **))dlsym(RTLD_NEXT, "fi_getinfo");
    /* libfabric's utility providers (ofi_rxm, ofi_rxd) ask their core
     * provider through fi_getinfo too: only the program's own calls are
     * made stricter. */
    Dl_info caller, self;
    if (dladdr(__builtin_return_address(0), &caller) && dladdr((void *)real, &self) &&
        caller.dli_fbase == self.dli_fbase)
        return real(version, node, service, flags, hints, info);
    const char *no_rma = getenv("LOCUS_TEST_FI_NO_RMA");
    const char *no_cq_data = getenv("LOCUS_TEST_FI_NO_CQ_DATA");
    if (no_rma && *no_rma == '1' && hints && (hints->caps & FI_RMA))
        return -FI_ENODATA;
    /* LOCUS_TEST_FI_MR_HINTS: the mode bits the program says it honours,
     * replaced by these, so that a provider that can work either way
     * (sockets: "basic" with FI_MR_VIRT_ADDR | FI_MR_PROV_KEY) picks the
     * stricter way and enforces it itself. */
    const char *offer = getenv("LOCUS_TEST_FI_MR_HINTS");
    struct fi_info *h = hints && offer ? fi_dupinfo(hints) : NULL;
    if (h)
        h->domain_attr->mr_mode = (int)strtoul(offer, NULL, 0);
    int rc = real(version, node, service, flags, h ? h : hints, info);
    if (h)
        fi_freeinfo(h);
    const char *mode = getenv("LOCUS_TEST_FI_MR_MODE");
    int add = mode ? (int)strtoul(mode, NULL, 0) : 0;
    endpoint_mode = (add & FI_MR_ENDPOINT) != 0;
    if (rc == 0)
        fake_nics(*info);
    for (struct fi_info *i = rc == 0 ? *info : NULL; i; i = i->next) {
        /* The provider cannot bind: the shim does, the provider does not see the bit. */
        i->domain_attr->mr_mode |= add;
        if (no_rma && *no_rma == '1')
            i->caps &= ~(uint64_t)(FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE);
        if (no_cq_data && *no_cq_data == '1')
            i->domain_attr->cq_data_size = 0;
    }
    return rc;
}
