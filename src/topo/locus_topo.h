/*
 * locus_topo.h — the machine model: what a node is, read through hwloc.
 *
 * This header is the whole contract of the topology layer (it knows nothing
 * of MPI). A locus_topo_t is loaded from this machine or from an hwloc XML
 * export and restricted to the allowed cpuset. It holds packages, NUMA nodes
 * (CPU-less ones kept out of CPU mapping), L3 caches, cores, PUs, and one
 * entry per NIC (a PCI network device or a virtual interface) or GPU with
 * its locality.
 *
 * The struct layout below is owned by src/topo; other layers read it but
 * never build one by hand. Arrays are in hwloc logical order; "index" means
 * a position in one of these arrays, "os" an operating-system number.
 */
#ifndef LOCUS_TOPO_H
#define LOCUS_TOPO_H

#include <stdio.h>
#include <hwloc.h>

#define LOCUS_TOPO_NAME_MAX 64
#define LOCUS_TOPO_OSDEV_MAX 8

/* One hardware thread. */
typedef struct {
    int os;          /* OS index (what taskset and /proc show) */
    int core;        /* index in topo->cores */
    int allowed;     /* 1 when this process (or the XML's cpuset) may run here */
} locus_topo_pu_t;

/* One core; its PUs are pus[first_pu .. first_pu + npus - 1]. */
typedef struct {
    int first_pu;
    int npus;
    int nallowed;    /* allowed PUs in it; 0 means the core is not usable */
    int numa;        /* index in topo->numas of its CPU NUMA node, -1 if none */
    int package;     /* index in topo->packages, -1 if none */
    int l3;          /* index in topo->l3s, -1 if none */
} locus_topo_core_t;

/* A NUMA node. CPU-less nodes (GPU memory, MCDRAM, CXL, or a second node
 * covering the same CPUs) have has_cpus 0 and never receive ranks. */
typedef struct {
    int os;
    int has_cpus;        /* a CPU domain: ranks may be mapped to it */
    int allowed;         /* memory may be bound to it */
    int package;         /* index in topo->packages, -1 if it spans several */
    unsigned long long bytes;
    char subtype[LOCUS_TOPO_NAME_MAX];  /* "MCDRAM", "GPUMemory", ... or "" */
    hwloc_bitmap_t cpuset;              /* complete cpuset (allowed or not) */
} locus_topo_numa_t;

typedef struct {
    int os;
    hwloc_bitmap_t cpuset;
} locus_topo_obj_t;

typedef enum { LOCUS_DEV_NIC = 0, LOCUS_DEV_GPU = 1 } locus_dev_kind_t;

/* What link a NIC drives. The placement engine ranks NICs by it: the HPC
 * fabrics first, Ethernet (RoCE and usNIC included) after them. */
typedef enum {
    LOCUS_NIC_INFINIBAND = 0, /* InfiniBand HCA port (mlx4/mlx5 with an IPoIB netdev, qib...) */
    LOCUS_NIC_OMNIPATH,       /* Omni-Path HFI (hfi1_N) */
    LOCUS_NIC_SLINGSHOT,      /* HPE Slingshot (Cassini, cxiN, hsnN) */
    LOCUS_NIC_EFA,            /* AWS Elastic Fabric Adapter */
    LOCUS_NIC_ETHERNET        /* Ethernet, including RoCE, iWARP and usNIC ports (rdma = 1) */
} locus_nic_class_t;

/* A NIC or a GPU: one PCI device, however many OS devices hwloc shows.
 * A NIC may also be a virtual network interface (veth, bond, VLAN,
 * macvlan: no PCI device); it is then equally near every core. */
typedef struct {
    locus_dev_kind_t kind;
    char name[LOCUS_TOPO_NAME_MAX];   /* preferred OS device name (mlx5_0, cuda0) */
    char pci[LOCUS_TOPO_NAME_MAX];    /* "0000:04:00.0", "" when not on PCI */
    int nosdevs;
    char osdevs[LOCUS_TOPO_OSDEV_MAX][LOCUS_TOPO_NAME_MAX];
    char netdev[LOCUS_TOPO_NAME_MAX]; /* NIC: its network interface (eth0; ib0/hsi0 for an
                                         InfiniBand port: the IPoIB one), or "" (EFA) */
    locus_nic_class_t nic_class;
    int rdma;                         /* NIC: has an OpenFabrics (verbs) device */
    int is_virtual;                   /* NIC: not a PCI device (veth, bond, VLAN, macvlan...) */
    int link_up;                      /* NIC: 1 up, 0 down, -1 unknown */
    int ipv4;                         /* NIC: 1 its interface has an IPv4 address, 0 none,
                                         -1 unknown (an XML, or no interface) */
    int speed_mbps;                   /* NIC: link speed in Mb/s from sysfs on this machine,
                                         0 when unknown (always in an XML) */
    int mgmt;                         /* NIC: a management-class Ethernet port: 1 Gb/s or
                                         less (sysfs, else the PCI device's name, I350
                                         "Gigabit") and no RDMA */
    float link_gbps;                  /* PCI link speed in GB/s, 0 when unknown */
    unsigned vendor_id;               /* PCI vendor, 0 when unknown */
    int index;                        /* NIC: position among NICs; GPU: runtime index
                                         (cudaN, rsmiN, else order among its vendor's GPUs) */
    hwloc_bitmap_t cpuset;            /* locality: CPUs of its nearest non-I/O ancestor */
    int numa;                         /* index of the one CPU NUMA node it hangs off, -1 if wider */
    int package;                      /* index of its package, -1 if wider or unknown */
} locus_topo_dev_t;

struct locus_topo {
    hwloc_topology_t hw;
    int this_system;
    char host[256];
    hwloc_bitmap_t allowed;           /* PUs that may be used */
    int npus, ncores, nnumas, npackages, nl3s, ndevs;
    locus_topo_pu_t *pus;
    locus_topo_core_t *cores;
    locus_topo_numa_t *numas;
    locus_topo_obj_t *packages;
    locus_topo_obj_t *l3s;
    locus_topo_dev_t *devs;
};

typedef struct locus_topo locus_topo_t;

/*
 * Loads the topology of this machine (xml_path NULL) or of an hwloc XML
 * export. Returns a topology to free with locus_topo_free(), or NULL with a
 * one-line reason in err (missing, unreadable or invalid file).
 * For this machine the allowed set is hwloc's allowed cpuset (cgroups,
 * Slurm/PBS cpusets) intersected with the process's current binding (a
 * parent's taskset). For an XML it is the allowed cpuset saved in the file.
 * On this machine the NICs also include the virtual network interfaces of
 * the current network namespace (/sys/class/net entries without a device:
 * veth, bond, VLAN, macvlan...; not lo, bridges, tunnels, tap, ifb or
 * dummy), and link state and speed come from sysfs. An XML has only the
 * NICs it lists (an OS device off PCI counts as a virtual NIC).
 */
locus_topo_t *locus_topo_load(const char *xml_path, char *err, size_t errlen);

void locus_topo_free(locus_topo_t *topo);

/*
 * Restricts the topology to the PUs in `cpulist` (OS indices, list syntax
 * "0-3,8"), as a Slurm step cpuset would: hwloc_topology_restrict() then
 * the model is rebuilt. Returns 0, or -1 with a one-line reason in err when
 * the list is malformed or holds no allowed PU (the topology is then
 * unchanged) or hwloc fails (the topology must then only be freed).
 */
int locus_topo_restrict(locus_topo_t *topo, const char *cpulist, char *err, size_t errlen);

/* 1 when the topology is this machine's (binding possible), 0 for an XML. */
int locus_topo_is_this_system(const locus_topo_t *topo);

/* Host name recorded in the topology (XML's HostName info or uname). */
const char *locus_topo_hostname(const locus_topo_t *topo);

/* Number of allowed PUs, and of cores with at least one allowed PU. */
int locus_topo_allowed_pus(const locus_topo_t *topo);
int locus_topo_allowed_cores(const locus_topo_t *topo);

/* Index in topo->numas of the NUMA node with OS index `os`, or -1. */
int locus_topo_numa_find(const locus_topo_t *topo, int os);

/*
 * How far device `dev` is from CPU NUMA node index `numa`: 0 when the
 * device hangs off that NUMA node, 1 when it is in the same package,
 * 2 otherwise (another package, or a device with no finer locality).
 */
int locus_topo_dev_distance(const locus_topo_t *topo, int dev, int numa);

/* Lower-case name of a NIC class: "infiniband", "omnipath", "slingshot",
 * "efa" or "ethernet". */
const char *locus_topo_nic_class_name(locus_nic_class_t c);

/* Human description: packages, NUMA nodes with cores and PUs, NICs, GPUs,
 * disallowed PUs marked. */
void locus_topo_write_text(const locus_topo_t *topo, FILE *out);

/* The same as JSON. */
void locus_topo_write_json(const locus_topo_t *topo, FILE *out);

/* Writes `s` as a JSON string literal (quoted, escaped). */
void locus_topo_json_string(FILE *out, const char *s);

#endif
