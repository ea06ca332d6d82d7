/*
 * The machine model on the shipped real-machine topologies: devices
 * grouped per PCI device, GPUs and NICs told apart from BMC VGA adapters
 * and NVMe drives, locality, allowed sets, CPU-less NUMA nodes, errors,
 * restriction, a hwloc 1.x export of the same machine, each NIC's fabric
 * class, state and netdev, and virtual NICs (hand-made fixtures in
 * tests/place/topologies, and this machine's network namespace).
 *   topo_model TOPOLOGY_DIR TMPDIR FIXTURE_DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "locus_topo.h"

static int failures;
static const char *where = "";

#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "FAIL %s: ", where); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

static const locus_topo_dev_t *dev_by_name(const locus_topo_t *t, const char *name)
{
    for (int i = 0; i < t->ndevs; i++)
        if (!strcmp(t->devs[i].name, name))
            return &t->devs[i];
    return NULL;
}

static int count_devs(const locus_topo_t *t, locus_dev_kind_t kind, int rdma_only)
{
    int n = 0;
    for (int i = 0; i < t->ndevs; i++)
        n += t->devs[i].kind == kind && (!rdma_only || t->devs[i].rdma);
    return n;
}

/* A NIC's class, state and interface, as the ranking needs them. */
static void check_nic(const locus_topo_t *t, const char *name, locus_nic_class_t cls, int rdma,
                      const char *netdev, int mgmt, int link_up)
{
    const locus_topo_dev_t *d = NULL;
    for (int i = 0; i < t->ndevs && !d; i++)
        if (t->devs[i].kind == LOCUS_DEV_NIC && !strcmp(t->devs[i].name, name))
            d = &t->devs[i];
    CHECK(d != NULL, "NIC %s exists", name);
    if (!d)
        return;
    CHECK(d->nic_class == cls, "%s is %s, not %s", name, locus_topo_nic_class_name(d->nic_class),
          locus_topo_nic_class_name(cls));
    CHECK(d->rdma == rdma, "%s rdma %d", name, d->rdma);
    CHECK(!strcmp(d->netdev, netdev), "%s netdev '%s', want '%s'", name, d->netdev, netdev);
    CHECK(d->mgmt == mgmt, "%s management %d", name, d->mgmt);
    CHECK(d->link_up == link_up, "%s link_up %d, want %d", name, d->link_up, link_up);
    CHECK(!d->is_virtual && d->pci[0], "%s is a PCI device", name);
}

static int has_osdev(const locus_topo_dev_t *d, const char *name)
{
    for (int k = 0; d && k < d->nosdevs; k++)
        if (!strcmp(d->osdevs[k], name))
            return 1;
    return 0;
}

static int cpu_numas(const locus_topo_t *t)
{
    int n = 0;
    for (int i = 0; i < t->nnumas; i++)
        n += t->numas[i].has_cpus;
    return n;
}

static int dev_numa_os(const locus_topo_t *t, const locus_topo_dev_t *d)
{
    return d && d->numa >= 0 ? t->numas[d->numa].os : -1;
}

static locus_topo_t *load(const char *dir, const char *file)
{
    static char path[1024];
    char err[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    where = file;
    locus_topo_t *t = locus_topo_load(path, err, sizeof err);
    CHECK(t != NULL, "load failed: %s", err);
    if (t)
        CHECK(!locus_topo_is_this_system(t), "an XML is not this system");
    return t;
}

static void check_lassen(const locus_topo_t *t)
{
    CHECK(t->npackages == 2 && cpu_numas(t) == 2, "2 packages and 2 CPU NUMA nodes");
    CHECK(t->ncores == 40 && t->npus == 160, "40 cores, 160 PUs (got %d, %d)", t->ncores, t->npus);
    CHECK(locus_topo_allowed_pus(t) == 160, "160 allowed PUs");
    CHECK(count_devs(t, LOCUS_DEV_NIC, 1) == 4, "4 RDMA NICs");
    CHECK(count_devs(t, LOCUS_DEV_GPU, 0) == 4, "4 GPUs, not the BMC VGA (got %d)",
          count_devs(t, LOCUS_DEV_GPU, 0));
    static const char *hcas[] = {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"};
    static const char *nets[] = {"hsi0", "hsi1", "hsi2", "hsi3"};
    for (int i = 0; i < 4; i++) {
        const locus_topo_dev_t *d = dev_by_name(t, hcas[i]);
        CHECK(d && has_osdev(d, nets[i]) && d->nosdevs == 2, "%s groups %s", hcas[i], nets[i]);
        CHECK(d && d->package == (i < 2 ? 0 : 1), "%s on package %d", hcas[i], i < 2 ? 0 : 1);
        CHECK(d && d->link_gbps > 10, "%s link speed known", hcas[i]);
    }
    for (int g = 0; g < 4; g++) {
        char cuda[16], nvml[16];
        snprintf(cuda, sizeof cuda, "cuda%d", g);
        snprintf(nvml, sizeof nvml, "nvml%d", g);
        const locus_topo_dev_t *d = dev_by_name(t, cuda);
        CHECK(d && has_osdev(d, nvml) && d->index == g && d->vendor_id == 0x10de,
              "%s is one GPU with %s, index %d", cuda, nvml, g);
        CHECK(d && dev_numa_os(t, d) == (g < 2 ? 0 : 8), "%s on NUMA %d", cuda, g < 2 ? 0 : 8);
    }
    for (int i = 0; i < 4; i++)
        check_nic(t, hcas[i], LOCUS_NIC_INFINIBAND, 1, nets[i], 0, 1);
    check_nic(t, "enP5p1s0f0", LOCUS_NIC_ETHERNET, 0, "enP5p1s0f0", 1, -1);
    for (int i = 0; i < t->ndevs; i++) {
        CHECK(strcmp(t->devs[i].pci, "0002:02:00.0") != 0, "the BMC VGA adapter is not a device");
        CHECK(!has_osdev(&t->devs[i], "nvme0n1"), "an NVMe drive is not a device");
    }
}

static void check_conan(const locus_topo_t *t)
{
    /* Two more Tesla boards sit on PCI, but CUDA saw only cuda0: a job's
     * device cgroup hides the rest, so only cuda0 is usable. */
    CHECK(count_devs(t, LOCUS_DEV_GPU, 0) == 1, "one GPU (got %d)", count_devs(t, LOCUS_DEV_GPU, 0));
    const locus_topo_dev_t *g = dev_by_name(t, "cuda0");
    CHECK(g && has_osdev(g, "card0") && has_osdev(g, "opencl0d1"),
          "cuda0, card0 and opencl0d1 are one GPU");
    CHECK(g && !strcmp(g->pci, "0000:84:00.0"), "GPU bus id");
    CHECK(g && dev_numa_os(t, g) == 1, "GPU on NUMA 1");
    const locus_topo_dev_t *n = dev_by_name(t, "mlx5_0");
    CHECK(n && has_osdev(n, "ib0") && n->rdma, "mlx5_0 + ib0 RDMA");
    CHECK(n && dev_numa_os(t, n) == 1, "HCA on NUMA 1");
    check_nic(t, "mlx5_0", LOCUS_NIC_INFINIBAND, 1, "ib0", 0, 1);
    check_nic(t, "eth0", LOCUS_NIC_ETHERNET, 0, "eth0", 1, -1);
}

static void check_mirage(const locus_topo_t *t)
{
    /* No GPU runtime in this export: the three Tesla 3D controllers are
     * found by PCI class, the ATI ES1000 console VGA is not a GPU. */
    CHECK(count_devs(t, LOCUS_DEV_GPU, 0) == 3, "3 NVIDIA GPUs by PCI class (got %d)",
          count_devs(t, LOCUS_DEV_GPU, 0));
    for (int i = 0; i < t->ndevs; i++)
        CHECK(strcmp(t->devs[i].pci, "0000:01:03.0") != 0, "the ES1000 VGA is not a GPU");
    const locus_topo_dev_t *g1 = dev_by_name(t, "gpu1");
    CHECK(g1 && !strcmp(g1->pci, "0000:11:00.0") && g1->index == 1 && g1->package == 1,
          "gpu1 is 11:00.0 on package 1, CUDA index 1");
    const locus_topo_dev_t *n = dev_by_name(t, "mlx4_0");
    CHECK(n && has_osdev(n, "ib0") && has_osdev(n, "eth2"), "mlx4_0 groups ib0 and eth2");
    CHECK(count_devs(t, LOCUS_DEV_NIC, 0) == 3 && count_devs(t, LOCUS_DEV_NIC, 1) == 1,
          "3 NICs, 1 RDMA");
    CHECK(n && n->package == 0 && dev_numa_os(t, n) == 0, "HCA behind package 0");
    CHECK(n && locus_topo_dev_distance(t, (int)(n - t->devs), 1) == 2, "far from NUMA 1");
    CHECK(n && locus_topo_dev_distance(t, (int)(n - t->devs), 0) == 0, "near NUMA 0");
    /* A VPI card: port 1 InfiniBand (ib0), port 2 Ethernet (eth2) on one
     * PCI function; the fabric's interface is the IPoIB one. */
    check_nic(t, "mlx4_0", LOCUS_NIC_INFINIBAND, 1, "ib0", 0, -1);
}

static void check_quartz(const locus_topo_t *t)
{
    const locus_topo_dev_t *n = dev_by_name(t, "hfi1_0");
    CHECK(n && has_osdev(n, "hsi0") && n->rdma, "hfi1_0 + hsi0 RDMA");
    CHECK(n && n->package == 1, "HFI behind package 1");
    CHECK(t->npus == 36 && t->ncores == 36, "SMT off: 36 cores, 36 PUs");
    check_nic(t, "hfi1_0", LOCUS_NIC_OMNIPATH, 1, "hsi0", 0, 1);
}

static void check_corona(const locus_topo_t *t)
{
    CHECK(cpu_numas(t) == 8, "8 NUMA nodes");
    CHECK(count_devs(t, LOCUS_DEV_GPU, 0) == 4, "4 AMD GPUs, not the BMC VGA");
    const locus_topo_dev_t *n = dev_by_name(t, "mlx5_0");
    CHECK(n && dev_numa_os(t, n) == 3, "HCA on NUMA 3");
    for (int i = 0; i < t->ndevs; i++)
        if (t->devs[i].kind == LOCUS_DEV_GPU)
            CHECK(t->devs[i].vendor_id == 0x1002, "GPU %s is AMD", t->devs[i].name);
    int numa = locus_topo_numa_find(t, 3);
    int pkg0_other = locus_topo_numa_find(t, 0), pkg1 = locus_topo_numa_find(t, 4);
    CHECK(n && locus_topo_dev_distance(t, (int)(n - t->devs), numa) == 0, "distance 0 on NUMA 3");
    CHECK(n && locus_topo_dev_distance(t, (int)(n - t->devs), pkg0_other) == 1, "1 on NUMA 0");
    CHECK(n && locus_topo_dev_distance(t, (int)(n - t->devs), pkg1) == 2, "2 on NUMA 4");
    check_nic(t, "mlx5_0", LOCUS_NIC_INFINIBAND, 1, "hsi0", 0, 1);
}

/* Cisco VIC ports with usNIC are RDMA-capable Ethernet, not a fabric of
 * their own; the I350 ports are the management network. */
static void check_many_vfs(const locus_topo_t *t)
{
    check_nic(t, "usnic_0", LOCUS_NIC_ETHERNET, 1, "eth4", 0, 1);
    check_nic(t, "eth7", LOCUS_NIC_ETHERNET, 0, "eth7", 0, -1);
    check_nic(t, "eth0", LOCUS_NIC_ETHERNET, 0, "eth0", 1, -1);
}

static void check_cpusets(const locus_topo_t *t)
{
    CHECK(locus_topo_allowed_pus(t) == 10, "10 allowed PUs (got %d)", locus_topo_allowed_pus(t));
    hwloc_bitmap_t dis = hwloc_bitmap_dup(hwloc_topology_get_complete_cpuset(t->hw));
    hwloc_bitmap_andnot(dis, dis, t->allowed);
    CHECK(hwloc_bitmap_weight(dis) == 6, "6 disallowed PUs");
    for (int p = 0; p < t->npus; p++)
        CHECK(!hwloc_bitmap_isset(dis, (unsigned)t->pus[p].os) || !t->pus[p].allowed,
              "PU %d disallowed but marked allowed", t->pus[p].os);
    hwloc_bitmap_free(dis);
    for (int i = 0; i < t->nnumas; i++) {
        const locus_topo_numa_t *m = &t->numas[i];
        if (m->os == 4 || m->os == 5)
            CHECK(!m->has_cpus && m->allowed, "node %d is CPU-less, memory allowed", m->os);
        if (m->os == 0 || m->os == 6 || m->os == 7)
            CHECK(m->has_cpus && !m->allowed, "node %d has CPUs but no allowed memory", m->os);
    }
    CHECK(t->ndevs == 0, "no devices");
}

static void check_errors(const char *tmp)
{
    char err[512], path[1024];
    where = "errors";
    CHECK(!locus_topo_load("/nonexistent/x.xml", err, sizeof err) && strstr(err, "nonexistent")
          && !strchr(err, '\n'), "missing file: %s", err);
    snprintf(path, sizeof path, "%s/garbage.xml", tmp);
    FILE *f = fopen(path, "w");
    fputs("<?xml version=\"1.0\"?>\n<topology><object type=\"Bogus\"", f);
    fclose(f);
    CHECK(!locus_topo_load(path, err, sizeof err) && strstr(err, "not a valid"), "garbage: %s", err);
    f = fopen(path, "w");
    fclose(f);
    CHECK(!locus_topo_load(path, err, sizeof err) && !strchr(err, '\n'), "empty file: %s", err);
    unlink(path);
    CHECK(!locus_topo_load(tmp, err, sizeof err), "a directory is no topology");
}

/* The same machine exported as hwloc 1.x XML still gives its devices. */
static void check_v1(const char *dir, const char *tmp)
{
    locus_topo_t *t = load(dir, "coral-lassen.xml");
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/lassen-v1.xml", tmp);
    where = "lassen hwloc 1.x export";
    CHECK(t && hwloc_topology_export_xml(t->hw, path, HWLOC_TOPOLOGY_EXPORT_XML_FLAG_V1) == 0,
          "export v1");
    locus_topo_free(t);
    t = locus_topo_load(path, err, sizeof err);
    CHECK(t != NULL, "reload v1: %s", err);
    if (t) {
        CHECK(count_devs(t, LOCUS_DEV_GPU, 0) == 4 && count_devs(t, LOCUS_DEV_NIC, 1) == 4,
              "v1: 4 GPUs and 4 HCAs (got %d, %d)", count_devs(t, LOCUS_DEV_GPU, 0),
              count_devs(t, LOCUS_DEV_NIC, 1));
        locus_topo_free(t);
    }
    unlink(path);
}

static void check_restrict(const char *dir)
{
    char err[512];
    locus_topo_t *t = load(dir, "coral-lassen.xml");
    where = "restrict";
    CHECK(t && locus_topo_restrict(t, "bogus", err, sizeof err) < 0 && !strchr(err, '\n'),
          "bad list refused");
    CHECK(t && locus_topo_restrict(t, "0-7", err, sizeof err) < 0, "disallowed-only list refused");
    CHECK(t && locus_topo_restrict(t, "8,12,96", err, sizeof err) == 0, "restrict: %s", err);
    if (t) {
        CHECK(locus_topo_allowed_pus(t) == 3 && locus_topo_allowed_cores(t) == 3,
              "3 PUs on 3 cores left");
        CHECK(count_devs(t, LOCUS_DEV_NIC, 1) == 4, "devices kept after restriction");
    }
    locus_topo_free(t);
}

/* InfiniBand next to RoCE on one ConnectX card, a management port, a
 * port that is down (tests/place/topologies/make_fixtures.py). */
static void check_mixed_fabric(const locus_topo_t *t)
{
    check_nic(t, "mlx5_0", LOCUS_NIC_INFINIBAND, 1, "ib0", 0, 1);
    check_nic(t, "mlx5_1", LOCUS_NIC_ETHERNET, 1, "ens1f1np1", 0, 1);
    check_nic(t, "eno1", LOCUS_NIC_ETHERNET, 0, "eno1", 1, -1);
    check_nic(t, "mlx5_4", LOCUS_NIC_INFINIBAND, 1, "ib3", 0, 0);
    const locus_topo_dev_t *a = dev_by_name(t, "mlx5_2"), *b = dev_by_name(t, "mlx5_3");
    CHECK(a && b && dev_numa_os(t, a) == 2 && dev_numa_os(t, b) == 2, "mlx5_2/3 on NUMA 2");
}

/* OS devices off PCI are virtual NICs, equally near every core. */
static void check_virtual_fixture(const locus_topo_t *t)
{
    CHECK(count_devs(t, LOCUS_DEV_NIC, 0) == 3, "3 virtual NICs");
    for (int i = 0; i < t->ndevs; i++) {
        const locus_topo_dev_t *d = &t->devs[i];
        CHECK(d->is_virtual && !d->pci[0] && !strcmp(d->netdev, d->name)
              && d->nic_class == LOCUS_NIC_ETHERNET, "%s is a virtual Ethernet NIC", d->name);
        CHECK(hwloc_bitmap_isequal(d->cpuset, hwloc_topology_get_complete_cpuset(t->hw)),
              "%s is near every core", d->name);
        for (int m = 0; m < t->nnumas; m++)
            CHECK(locus_topo_dev_distance(t, i, m) == 2, "%s equally far from NUMA %d", d->name,
                  t->numas[m].os);
    }
}

static void check_fixtures(const char *dir)
{
    static const struct { const char *file; void (*check)(const locus_topo_t *); int nics; } cases[] = {
        {"4n-mixed-fabric.xml", check_mixed_fabric, 6}, {"2n-virtual-nics.xml", check_virtual_fixture, 3},
        {"2c-8vfs.xml", NULL, 8},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        locus_topo_t *t = load(dir, cases[i].file);
        if (!t)
            continue;
        CHECK(count_devs(t, LOCUS_DEV_NIC, 0) == cases[i].nics, "%d NICs (got %d)", cases[i].nics,
              count_devs(t, LOCUS_DEV_NIC, 0));
        if (cases[i].check)
            cases[i].check(t);
        locus_topo_free(t);
    }
}

static int sys_net_has(const char *ifname, const char *entry)
{
    char path[512];
    struct stat st;
    snprintf(path, sizeof path, "/sys/class/net/%s%s%s", ifname, entry[0] ? "/" : "", entry);
    return lstat(path, &st) == 0;
}

/* Every virtual NIC of this machine is an interface of this network
 * namespace without a device, and none is lo, a bridge or an ifb. */
static void check_native_virtual(const locus_topo_t *t)
{
    for (int i = 0; i < t->ndevs; i++) {
        const locus_topo_dev_t *d = &t->devs[i];
        if (d->kind != LOCUS_DEV_NIC)
            continue;
        CHECK(d->is_virtual == !d->pci[0], "%s: virtual exactly when off PCI", d->name);
        if (!d->is_virtual)
            continue;
        CHECK(sys_net_has(d->name, "") && !sys_net_has(d->name, "device"), "%s is a virtual "
              "interface", d->name);
        CHECK(strcmp(d->name, "lo") && !sys_net_has(d->name, "bridge") && strncmp(d->name, "ifb", 3),
              "%s is not a NIC", d->name);
        CHECK(d->numa < 0 && d->package < 0, "%s is near every core", d->name);
    }
}

static void check_native(void)
{
    char err[512];
    where = "this machine";
    locus_topo_t *t = locus_topo_load(NULL, err, sizeof err);
    CHECK(t && locus_topo_is_this_system(t), "native load: %s", t ? "" : err);
    if (t) {
        cpu_set_t set;
        sched_getaffinity(0, sizeof set, &set);
        CHECK(locus_topo_allowed_pus(t) == CPU_COUNT(&set), "allowed PUs = affinity (%d vs %d)",
              locus_topo_allowed_pus(t), CPU_COUNT(&set));
        CHECK(locus_topo_hostname(t)[0], "host name known");
        check_native_virtual(t);
        locus_topo_free(t);
    }
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: topo_model TOPOLOGY_DIR TMPDIR FIXTURE_DIR\n");
        return 2;
    }
    const char *dir = argv[1];
    static const struct { const char *file; void (*check)(const locus_topo_t *); } cases[] = {
        {"coral-lassen.xml", check_lassen}, {"32em64t-2n8c2t-pci-normalio.xml", check_conan},
        {"24em64t-2n6c2t-pci.xml", check_mirage}, {"cts1-quartz-smt1.xml", check_quartz},
        {"epyc-corona.xml", check_corona}, {"16amd64-8n2c-cpusets.xml", check_cpusets},
        {"16intel64-manyVFs.xml", check_many_vfs},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        locus_topo_t *t = load(dir, cases[i].file);
        if (!t)
            continue;
        for (int c = 0; c < t->ncores; c++)
            CHECK(t->cores[c].numa >= 0 && t->numas[t->cores[c].numa].has_cpus,
                  "core %d has a CPU NUMA node", c);
        if (cases[i].check)
            cases[i].check(t);
        locus_topo_free(t);
    }
    check_errors(argv[2]);
    check_v1(dir, argv[2]);
    check_restrict(dir);
    check_fixtures(argv[3]);
    check_native();
    printf("%s\n", failures ? "FAILED" : "No Errors");
    return failures ? 1 : 0;
}
