/* NICs and GPUs: hwloc OS devices grouped into one entry per PCI device. */
#include <stdlib.h>
#include <string.h>

#include "topo_internal.h"

#define VENDOR_NVIDIA 0x10de
#define VENDOR_AMD    0x1002

static int has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static hwloc_obj_t pci_parent(hwloc_obj_t o)
{
    for (o = o->parent; o; o = o->parent) {
        if (o->type == HWLOC_OBJ_PCI_DEVICE)
            return o;
        if (o->type != HWLOC_OBJ_OS_DEVICE && o->type != HWLOC_OBJ_BRIDGE)
            return NULL;
    }
    return NULL;
}

/* What an OS device says about its PCI device: 0 nothing, else a kind and
 * how strongly (2: surely a GPU/NIC; 1: a GPU only if the vendor makes GPUs,
 * since a BMC's VGA adapter also shows a DRM card). */
static int osdev_class(hwloc_obj_t o, locus_dev_kind_t *kind)
{
    const char *n = o->name ? o->name : "";
    switch (o->attr->osdev.type) {
    case HWLOC_OBJ_OSDEV_OPENFABRICS:
    case HWLOC_OBJ_OSDEV_NETWORK:
        *kind = LOCUS_DEV_NIC;
        return 2;
    case HWLOC_OBJ_OSDEV_COPROC:
        *kind = LOCUS_DEV_GPU;
        return 2;
    case HWLOC_OBJ_OSDEV_GPU:
        *kind = LOCUS_DEV_GPU;
        if (has_prefix(n, "card") || has_prefix(n, "renderD") || has_prefix(n, "controlD"))
            return 1;
        return 2;
    default:
        return 0;
    }
}

/* Two OS devices are one GPU when they sit on the same PCI device (a
 * GPU's functions: cuda on .0, OpenCL or audio on .1); NICs are one per
 * PCI function, since a dual-port HCA shows one function per port. */
static int same_device(locus_dev_kind_t kind, hwloc_obj_t a, hwloc_obj_t b)
{
    if (a == b)
        return 1;
    if (kind != LOCUS_DEV_GPU || !a || !b || a->type != HWLOC_OBJ_PCI_DEVICE
        || b->type != HWLOC_OBJ_PCI_DEVICE)
        return 0;
    const struct hwloc_pcidev_attr_s *x = &a->attr->pcidev, *y = &b->attr->pcidev;
    return x->domain == y->domain && x->bus == y->bus && x->dev == y->dev;
}

typedef struct {
    locus_dev_kind_t kind;
    int strength;
    hwloc_obj_t key;      /* PCI device, or the OS device itself off PCI */
    hwloc_obj_t first;    /* first OS device, for locality */
    int nos;
    hwloc_obj_t os[LOCUS_TOPO_OSDEV_MAX];
} group_t;

static int name_rank(const char *n)
{
    static const char *pref[] = {"cuda", "rsmi", "nvml", "ze", "opencl", "card", "renderD"};
    for (int i = 0; i < (int)(sizeof pref / sizeof pref[0]); i++)
        if (has_prefix(n, pref[i]))
            return i;
    return 100;
}

static int trailing_int(const char *s, const char *prefix)
{
    if (!has_prefix(s, prefix))
        return -1;
    s += strlen(prefix);
    if (*s < '0' || *s > '9')
        return -1;
    return atoi(s);
}

static void dev_locality(locus_topo_t *t, locus_topo_dev_t *d, hwloc_obj_t osdev)
{
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(t->hw, osdev);
    d->cpuset = hwloc_bitmap_dup(anc && anc->cpuset ? anc->cpuset
                                 : hwloc_topology_get_complete_cpuset(t->hw));
    d->numa = -1;
    d->package = -1;
    if (!d->cpuset || hwloc_bitmap_iszero(d->cpuset)
        || hwloc_bitmap_isequal(d->cpuset, hwloc_topology_get_complete_cpuset(t->hw)))
        return;
    for (int i = 0; i < t->nnumas && d->numa < 0; i++)
        if (t->numas[i].has_cpus && hwloc_bitmap_isincluded(d->cpuset, t->numas[i].cpuset))
            d->numa = i;
    for (int i = 0; i < t->npackages && d->package < 0; i++)
        if (hwloc_bitmap_isincluded(d->cpuset, t->packages[i].cpuset))
            d->package = i;
}

static void dev_fill(locus_topo_t *t, locus_topo_dev_t *d, const group_t *g)
{
    d->kind = g->kind;
    d->nosdevs = g->nos;
    int best = -1;
    for (int i = 0; i < g->nos; i++) {
        const char *n = g->os[i]->name ? g->os[i]->name : "";
        snprintf(d->osdevs[i], sizeof d->osdevs[i], "%s", n);
        int ib = g->os[i]->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS;
        int r = g->kind == LOCUS_DEV_GPU ? name_rank(n) : (ib ? 0 : 1);
        if (best < 0 || r < best) {
            best = r;
            snprintf(d->name, sizeof d->name, "%s", n);
        }
    }
    hwloc_obj_t pci = g->key && g->key->type == HWLOC_OBJ_PCI_DEVICE ? g->key : NULL;
    if (pci) {
        const struct hwloc_pcidev_attr_s *p = &pci->attr->pcidev;
        snprintf(d->pci, sizeof d->pci, "%04x:%02x:%02x.%01x",
                 p->domain, p->bus, p->dev, p->func);
        d->link_gbps = p->linkspeed;
        d->vendor_id = p->vendor_id;
    }
    if (d->kind == LOCUS_DEV_NIC)
        topo_nic_describe(t, d, g->os, g->nos, pci);
    dev_locality(t, d, g->first);
}

/* A new zeroed group of that kind at the end of *gs, or NULL. */
static group_t *group_new(group_t **gs, int *ng, int *cap, locus_dev_kind_t kind)
{
    if (*ng == *cap) {
        int ncap = *cap ? 2 * *cap : 16;
        group_t *n = realloc(*gs, (size_t)ncap * sizeof *n);
        if (!n)
            return NULL;
        *gs = n;
        *cap = ncap;
    }
    group_t *g = &(*gs)[(*ng)++];
    memset(g, 0, sizeof *g);
    g->kind = kind;
    return g;
}

static int group_add(group_t **gs, int *ng, int *cap, hwloc_obj_t os)
{
    locus_dev_kind_t kind;
    int strength = osdev_class(os, &kind);
    if (!strength)
        return 0;
    hwloc_obj_t key = pci_parent(os);
    if (!key)
        key = os;
    for (int i = 0; i < *ng; i++) {
        group_t *g = &(*gs)[i];
        if (g->kind == kind && same_device(kind, g->key, key)) {
            if (g->nos < LOCUS_TOPO_OSDEV_MAX)
                g->os[g->nos++] = os;
            if (strength > g->strength)
                g->strength = strength;
            return 0;
        }
    }
    group_t *g = group_new(gs, ng, cap, kind);
    if (!g)
        return -1;
    g->strength = strength;
    g->key = key;
    g->first = os;
    g->os[g->nos++] = os;
    return 0;
}

static int gpu_vendor(unsigned v)
{
    return v == VENDOR_NVIDIA || v == VENDOR_AMD;
}

/* Which groups are devices. NICs always. GPUs: when a GPU runtime (CUDA,
 * NVML, RSMI, OpenCL, Level Zero) shows any device, exactly the devices it
 * shows, since a job's device cgroup hides the others from it. Otherwise
 * (no runtime plugin, as in Debian's hwloc) a DRM card from a GPU maker;
 * the BMC's VGA adapter (ASPEED, Matrox) has a card0 too. */
static int group_is_device(const group_t *g, int runtime_gpus)
{
    if (g->kind == LOCUS_DEV_NIC)
        return 1;
    if (runtime_gpus)
        return g->strength >= 2;
    return g->key && g->key->type == HWLOC_OBJ_PCI_DEVICE && gpu_vendor(g->key->attr->pcidev.vendor_id);
}

/* Without any GPU runtime, a compute GPU is still a PCI 3D or display
 * controller from NVIDIA or AMD (class 0x0302/0x0380), or an NVIDIA VGA
 * device. An AMD VGA device without a driver is left out: the ATI ES1000
 * of many servers' management console is one. */
static int pci_is_gpu(hwloc_obj_t pci)
{
    unsigned cls = pci->attr->pcidev.class_id, v = pci->attr->pcidev.vendor_id;
    if (!gpu_vendor(v))
        return 0;
    return cls == 0x0302 || cls == 0x0380 || (cls == 0x0300 && v == VENDOR_NVIDIA);
}

static int groups_add_pci_gpus(locus_topo_t *t, group_t **gs, int *ng, int *cap)
{
    for (hwloc_obj_t p = hwloc_get_next_pcidev(t->hw, NULL); p; p = hwloc_get_next_pcidev(t->hw, p)) {
        if (!pci_is_gpu(p))
            continue;
        int known = 0;
        for (int i = 0; i < *ng && !known; i++)
            known = (*gs)[i].kind == LOCUS_DEV_GPU && same_device(LOCUS_DEV_GPU, (*gs)[i].key, p);
        if (known)
            continue;
        group_t *g = group_new(gs, ng, cap, LOCUS_DEV_GPU);
        if (!g)
            return -1;
        g->strength = 1;
        g->key = p;
        g->first = p;
    }
    return 0;
}

/* Runtime numbering: cudaN/rsmiN/nvmlN when hwloc saw it, else the order
 * among GPUs of the same vendor (the runtimes enumerate in PCI order). */
/* GPUs in PCI bus order, the order NVML and ROCm number them. */
static void gpus_sort(locus_topo_t *t)
{
    for (int i = 1; i < t->ndevs; i++)
        for (int j = i; j > 0; j--) {
            locus_topo_dev_t *a = &t->devs[j - 1], *b = &t->devs[j];
            if (a->kind != LOCUS_DEV_GPU || b->kind != LOCUS_DEV_GPU || strcmp(a->pci, b->pci) <= 0)
                break;
            locus_topo_dev_t tmp = *a;
            *a = *b;
            *b = tmp;
        }
}

static void gpu_indices(locus_topo_t *t)
{
    int ngpu = 0;
    gpus_sort(t);
    for (int i = 0; i < t->ndevs; i++) {
        locus_topo_dev_t *d = &t->devs[i];
        if (d->kind != LOCUS_DEV_GPU)
            continue;
        d->index = -1;
        static const char *num[] = {"cuda", "rsmi", "nvml"};
        for (int k = 0; k < 3 && d->index < 0; k++)
            for (int j = 0; j < d->nosdevs && d->index < 0; j++)
                d->index = trailing_int(d->osdevs[j], num[k]);
        if (d->index < 0) {
            d->index = 0;
            for (int j = 0; j < i; j++)
                if (t->devs[j].kind == LOCUS_DEV_GPU && t->devs[j].vendor_id == d->vendor_id)
                    d->index++;
        }
        if (!d->name[0])
            snprintf(d->name, sizeof d->name, "gpu%d", ngpu);
        ngpu++;
    }
}

int topo_devs_build(locus_topo_t *t)
{
    group_t *gs = NULL;
    int ng = 0, cap = 0;
    char (*virt)[LOCUS_TOPO_NAME_MAX] = NULL;
    for (hwloc_obj_t o = hwloc_get_next_osdev(t->hw, NULL); o; o = hwloc_get_next_osdev(t->hw, o))
        if (group_add(&gs, &ng, &cap, o) < 0)
            goto oom;
    int runtime_gpus = 0;
    for (int i = 0; i < ng; i++)
        runtime_gpus |= gs[i].kind == LOCUS_DEV_GPU && gs[i].strength >= 2;
    if (!runtime_gpus && groups_add_pci_gpus(t, &gs, &ng, &cap) < 0)
        goto oom;
    /* An XML holds only the NICs it lists; this machine also has the
     * interfaces of its network namespace that hwloc leaves out. */
    int nvirt = t->this_system ? topo_nics_virtual_scan(t->hw, &virt) : 0;
    if (nvirt < 0)
        goto oom;
    t->ndevs = 0;
    t->devs = ng + nvirt ? calloc((size_t)(ng + nvirt), sizeof *t->devs) : NULL;
    if (ng + nvirt && !t->devs)
        goto oom;
    /* NICs first (PCI ones in hwloc's PCI order, then virtual ones by
     * name), then GPUs. */
    int nnic = 0;
    for (int kind = LOCUS_DEV_NIC; kind <= LOCUS_DEV_GPU; kind++) {
        for (int i = 0; i < ng; i++) {
            if ((int)gs[i].kind != kind || !group_is_device(&gs[i], runtime_gpus))
                continue;
            locus_topo_dev_t *d = &t->devs[t->ndevs++];
            dev_fill(t, d, &gs[i]);
            if (!d->cpuset)
                goto oom;
            if (kind == LOCUS_DEV_NIC)
                d->index = nnic++;
        }
        for (int i = 0; kind == LOCUS_DEV_NIC && i < nvirt; i++) {
            locus_topo_dev_t *d = &t->devs[t->ndevs++];
            if (topo_nic_virtual_fill(t, d, virt[i]) < 0)
                goto oom;
            d->index = nnic++;
        }
    }
    free(gs);
    free(virt);
    gpu_indices(t);
    return 0;
oom:
    free(gs);
    free(virt);
    return -1;
}

void topo_devs_clear(locus_topo_t *t)
{
    for (int i = 0; i < t->ndevs; i++)
        hwloc_bitmap_free(t->devs[i].cpuset);
    free(t->devs);
    t->devs = NULL;
    t->ndevs = 0;
}
