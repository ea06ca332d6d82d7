/*
 * The machine model on the shipped real-machine topologies: devices
 * grouped per PCI device, GPUs and NICs told apart from BMC VGA adapters
 * and NVMe drives, locality, allowed sets, CPU-less NUMA nodes, errors,
 * restriction, and a hwloc 1.x export of the same machine.
 *   topo_model TOPOLOGY_DIR TMPDIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
        n += t->devs[i].kind == kind && (!rdma_only || t->devs[i].nic_class == LOCUS_NIC_RDMA);
    return n;
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
    CHECK(n && has_osdev(n, "ib0") && n->nic_class == LOCUS_NIC_RDMA, "mlx5_0 + ib0 RDMA");
    CHECK(n && dev_numa_os(t, n) == 1, "HCA on NUMA 1");
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
}

static void check_quartz(const locus_topo_t *t)
{
    const locus_topo_dev_t *n = dev_by_name(t, "hfi1_0");
    CHECK(n && has_osdev(n, "hsi0") && n->nic_class == LOCUS_NIC_RDMA, "hfi1_0 + hsi0 RDMA");
    CHECK(n && n->package == 1, "HFI behind package 1");
    CHECK(t->npus == 36 && t->ncores == 36, "SMT off: 36 cores, 36 PUs");
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
        locus_topo_free(t);
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: topo_model TOPOLOGY_DIR TMPDIR\n");
        return 2;
    }
    const char *dir = argv[1];
    static const struct { const char *file; void (*check)(const locus_topo_t *); } cases[] = {
        {"coral-lassen.xml", check_lassen}, {"32em64t-2n8c2t-pci-normalio.xml", check_conan},
        {"24em64t-2n6c2t-pci.xml", check_mirage}, {"cts1-quartz-smt1.xml", check_quartz},
        {"epyc-corona.xml", check_corona}, {"16amd64-8n2c-cpusets.xml", check_cpusets},
        {"16intel64-manyVFs.xml", NULL},
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
    check_native();
    printf("%s\n", failures ? "FAILED" : "No Errors");
    return failures ? 1 : 0;
}
