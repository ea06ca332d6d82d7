/* NIC facts: which fabric a NIC drives, its link state and speed, and the
 * virtual network interfaces hwloc does not show. hwloc's attributes are
 * what an XML export carries; on this machine sysfs says more. */
#include <ctype.h>
#include <dirent.h>
#include <ifaddrs.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>

#include "topo_internal.h"

#define VENDOR_AMAZON   0x1d0f
#define VENDOR_CRAY     0x17db
#define VENDOR_CORNELIS 0x434e
#define PCI_CLASS_INFINIBAND 0x0207
#define ARPHRD_ETHER_TYPE 1
#define ARPHRD_INFINIBAND_TYPE 32
/* An IPoIB hardware address: 4 bytes of QPN and flags, then the 16-byte GID. */
#define IPOIB_ADDR_BYTES 20

const char *locus_topo_nic_class_name(locus_nic_class_t c)
{
    static const char *names[] = {"infiniband", "omnipath", "slingshot", "efa", "ethernet"};
    return (unsigned)c < sizeof names / sizeof names[0] ? names[c] : "ethernet";
}

static int has_prefix(const char *s, const char *p)
{
    return s && strncmp(s, p, strlen(p)) == 0;
}

/* First line of a sysfs file, without the newline; 0 or -1. */
static int sysfs_read(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char *ok = fgets(buf, (int)len, f);
    fclose(f);
    if (!ok)
        return -1;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

static int sysfs_exists(const char *dir, const char *name, const char *entry)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s/%s", dir, name, entry);
    return access(path, F_OK) == 0;
}

/* A network interface's state: 1 up, 0 down, -1 unknown. "unknown" is
 * what drivers without carrier reporting say while working. */
static int netdev_state(const char *ifname)
{
    char path[512], buf[64];
    snprintf(path, sizeof path, "/sys/class/net/%s/operstate", ifname);
    if (sysfs_read(path, buf, sizeof buf) < 0)
        return -1;
    if (!strcmp(buf, "up") || !strcmp(buf, "unknown"))
        return 1;
    return 0;
}

/* Link speed in Mb/s from sysfs (a down or virtual link may say -1 or
 * refuse), 0 when unknown. */
static int netdev_speed(const char *ifname)
{
    char path[512], buf[64];
    snprintf(path, sizeof path, "/sys/class/net/%s/speed", ifname);
    if (sysfs_read(path, buf, sizeof buf) < 0)
        return 0;
    long v = strtol(buf, NULL, 10);
    return v > 0 && v < 10000000 ? (int)v : 0;
}

/* 1 when interface `ifname` has an IPv4 address, 0 when not, -1 when
 * the addresses cannot be read. */
static int netdev_ipv4(const char *ifname)
{
    struct ifaddrs *all;
    if (getifaddrs(&all) < 0)
        return -1;
    int found = 0;
    for (const struct ifaddrs *i = all; i && !found; i = i->ifa_next)
        found = i->ifa_addr && i->ifa_addr->sa_family == AF_INET && !strcmp(i->ifa_name, ifname);
    freeifaddrs(all);
    return found;
}

/* The number of bytes of a "xx:xx:..." hardware address. */
static int addr_bytes(const char *addr)
{
    if (!addr || !*addr)
        return 0;
    int n = 1;
    for (const char *p = addr; *p; p++)
        n += *p == ':';
    return n;
}

/* Speed a PCI device's name states: "X710 for 10GbE", "82599ES
 * 10-Gigabit", "10Gb/25Gb"; a bare "Gigabit" (I350, BCM5719) is 1 Gb/s.
 * A number is a speed only if it is one an Ethernet link has. */
static int name_speed_mbps(const char *name)
{
    static const int speeds[] = {1, 2, 5, 10, 25, 40, 50, 100, 200, 400, 800};
    int best = 0;
    for (const char *p = name; p && *p; p++) {
        int gigabit = has_prefix(p, "Gigabit"), gb = has_prefix(p, "Gb");
        if (!gigabit && !gb)
            continue;
        const char *q = p;
        if (gigabit && q > name && (q[-1] == '-' || q[-1] == ' '))
            q--;
        const char *end = q;
        while (q > name && isdigit((unsigned char)q[-1]))
            q--;
        int v = end > q && end - q <= 3 && (q == name || !isalnum((unsigned char)q[-1]))
                ? atoi(q) : 0;
        int known = 0;
        for (size_t i = 0; i < sizeof speeds / sizeof speeds[0]; i++)
            known |= v == speeds[i];
        if (known && v * 1000 > best)
            best = v * 1000;
        else if (!known && gigabit && best == 0)
            best = 1000;
    }
    return best;
}

/* An OpenFabrics device's port facts from hwloc's PortNState/PortNLID. */
static void of_ports(hwloc_obj_t of, int *any_state, int *active, int *lid)
{
    for (int port = 1; port <= 8; port++) {
        char key[32];
        snprintf(key, sizeof key, "Port%dState", port);
        const char *st = hwloc_obj_get_info_by_name(of, key);
        snprintf(key, sizeof key, "Port%dLID", port);
        const char *l = hwloc_obj_get_info_by_name(of, key);
        if (st) {
            *any_state = 1;
            *active |= atoi(st) == 4;   /* IB_PORT_ACTIVE */
        }
        if (l && strtol(l, NULL, 0) != 0)
            *lid = 1;
    }
}

/* This machine's word on an OpenFabrics device's link layer (port 1):
 * 1 InfiniBand, 0 Ethernet, -1 unknown; and its rate in Mb/s. */
static int of_link_layer(const char *dev, int *rate_mbps)
{
    char path[512], buf[128];
    snprintf(path, sizeof path, "/sys/class/infiniband/%s/ports/1/rate", dev);
    if (sysfs_read(path, buf, sizeof buf) == 0) {
        double gbs = strtod(buf, NULL);
        if (gbs > 0 && gbs < 100000)
            *rate_mbps = (int)(gbs * 1000);
    }
    snprintf(path, sizeof path, "/sys/class/infiniband/%s/ports/1/link_layer", dev);
    if (sysfs_read(path, buf, sizeof buf) < 0)
        return -1;
    return !strcmp(buf, "InfiniBand") ? 1 : !strcmp(buf, "Ethernet") ? 0 : -1;
}

/* The fabric, decided from the strongest evidence at hand: the vendor or
 * device family for the HPC fabrics, then the link layer sysfs reports,
 * then an IPoIB netdev (20-byte address), then an HCA with no Ethernet
 * netdev that is an InfiniBand controller or has a LID. */
static locus_nic_class_t nic_class_of(const char *of, int ll, int ipoib, int ether_netdev,
                                      int lid, hwloc_obj_t pci, const char *netdev)
{
    unsigned vendor = pci ? pci->attr->pcidev.vendor_id : 0;
    unsigned cls = pci ? pci->attr->pcidev.class_id : 0;
    if (has_prefix(of, "hfi") || (vendor == VENDOR_CORNELIS && of))
        return LOCUS_NIC_OMNIPATH;
    if (has_prefix(of, "efa") || (vendor == VENDOR_AMAZON && of))
        return LOCUS_NIC_EFA;
    if (has_prefix(of, "cxi") || vendor == VENDOR_CRAY || has_prefix(netdev, "hsn"))
        return LOCUS_NIC_SLINGSHOT;
    if (ll >= 0)
        return ll ? LOCUS_NIC_INFINIBAND : LOCUS_NIC_ETHERNET;
    if (ipoib)
        return LOCUS_NIC_INFINIBAND;
    if (of && !ether_netdev && (cls == PCI_CLASS_INFINIBAND || lid))
        return LOCUS_NIC_INFINIBAND;
    return LOCUS_NIC_ETHERNET;
}

void topo_nic_describe(const locus_topo_t *t, locus_topo_dev_t *d,
                       hwloc_obj_t const *os, int nos, hwloc_obj_t pci)
{
    const char *of = NULL, *ipoib = NULL, *first_net = NULL;
    int any_state = 0, active = 0, lid = 0, ether_netdev = 0;
    for (int i = 0; i < nos; i++) {
        const char *n = os[i]->name ? os[i]->name : "";
        if (os[i]->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS) {
            if (!of)
                of = n;
            of_ports(os[i], &any_state, &active, &lid);
        } else if (os[i]->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK) {
            int bytes = addr_bytes(hwloc_obj_get_info_by_name(os[i], "Address"));
            if (bytes == IPOIB_ADDR_BYTES && !ipoib)
                ipoib = n;
            ether_netdev |= bytes == 6;
            if (!first_net)
                first_net = n;
        }
    }
    int rate = 0, ll = of && t->this_system ? of_link_layer(of, &rate) : -1;
    d->rdma = of != NULL;
    d->is_virtual = pci == NULL;
    d->nic_class = nic_class_of(of, ll, ipoib != NULL, ether_netdev, lid, pci, first_net);
    int ib_like = d->nic_class == LOCUS_NIC_INFINIBAND || d->nic_class == LOCUS_NIC_OMNIPATH;
    const char *net = ib_like && ipoib ? ipoib : first_net;
    snprintf(d->netdev, sizeof d->netdev, "%s", net ? net : "");
    d->link_up = any_state ? active : -1;
    d->speed_mbps = rate;
    d->ipv4 = -1;
    if (t->this_system && net) {
        if (!any_state)
            d->link_up = netdev_state(net);
        if (!d->speed_mbps)
            d->speed_mbps = netdev_speed(net);
        d->ipv4 = netdev_ipv4(net);
    }
    /* The name is a hint, good enough to spot a 1 Gb/s port but not to
     * rank fast ones against each other (a ConnectX does not say its
     * speed, an X710 does). */
    int speed = d->speed_mbps;
    if (!speed && pci)
        speed = name_speed_mbps(hwloc_obj_get_info_by_name(pci, "PCIDevice"));
    d->mgmt = d->nic_class == LOCUS_NIC_ETHERNET && !d->rdma && !d->is_virtual
              && speed > 0 && speed <= 1000;
}

/* The kernel driver behind an interface (veth, bonding, macvlan, ifb...),
 * "" when the interface does not say. */
static void netdev_driver(int sock, const char *ifname, char *out, size_t len)
{
    struct ethtool_drvinfo info;
    struct ifreq ifr;
    out[0] = '\0';
    if (sock < 0 || strlen(ifname) >= IFNAMSIZ)
        return;
    memset(&info, 0, sizeof info);
    memset(&ifr, 0, sizeof ifr);
    info.cmd = ETHTOOL_GDRVINFO;
    memcpy(ifr.ifr_name, ifname, strlen(ifname) + 1);
    ifr.ifr_data = (char *)&info;
    if (ioctl(sock, SIOCETHTOOL, &ifr) == 0)
        snprintf(out, len, "%.*s", (int)sizeof info.driver, info.driver);
}

/* Interfaces that carry no traffic of their own or are not a host's link
 * to a network: switches (bridge, Open vSwitch), tunnels and overlays,
 * traffic-shaping and test devices, a VM's tap. */
static int driver_is_nic(const char *drv)
{
    static const char *not_nics[] = {"bridge", "openvswitch", "ifb", "dummy", "nlmon", "tun",
                                     "vxlan", "geneve", "gre", "ip6gre", "ip_gre", "ipip",
                                     "sit", "ip6_tunnel", "vti", "wireguard", "vrf", "bareudp"};
    for (size_t i = 0; i < sizeof not_nics / sizeof not_nics[0]; i++)
        if (!strcmp(drv, not_nics[i]))
            return 0;
    return 1;
}

static int hwloc_has_osdev(hwloc_topology_t hw, const char *name)
{
    for (hwloc_obj_t o = hwloc_get_next_osdev(hw, NULL); o; o = hwloc_get_next_osdev(hw, o))
        if (o->name && !strcmp(o->name, name))
            return 1;
    return 0;
}

/* A /sys/class/net entry without a device link is virtual; hwloc shows
 * only interfaces with a device. */
static int netdev_is_virtual_nic(hwloc_topology_t hw, int sock, const char *n)
{
    static const char dir[] = "/sys/class/net";
    char path[512], buf[256], drv[64];
    if (!strcmp(n, "lo") || sysfs_exists(dir, n, "device") || sysfs_exists(dir, n, "bridge")
        || sysfs_exists(dir, n, "tun_flags") || hwloc_has_osdev(hw, n))
        return 0;
    snprintf(path, sizeof path, "%s/%s/type", dir, n);
    if (sysfs_read(path, buf, sizeof buf) < 0)
        return 0;
    int type = atoi(buf);
    if (type != ARPHRD_ETHER_TYPE && type != ARPHRD_INFINIBAND_TYPE)
        return 0;
    netdev_driver(sock, n, drv, sizeof drv);
    return driver_is_nic(drv);
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

int topo_nics_virtual_scan(hwloc_topology_t hw, char (**names)[LOCUS_TOPO_NAME_MAX])
{
    *names = NULL;
    DIR *dir = opendir("/sys/class/net");
    if (!dir)
        return 0;
    int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), n = 0, cap = 0, rc = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        if (e->d_name[0] == '.' || strlen(e->d_name) >= LOCUS_TOPO_NAME_MAX
            || !netdev_is_virtual_nic(hw, sock, e->d_name))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            char (*grown)[LOCUS_TOPO_NAME_MAX] = realloc(*names, (size_t)cap * sizeof *grown);
            if (!grown) {
                rc = -1;
                break;
            }
            *names = grown;
        }
        /* Length checked above. */
        memcpy((*names)[n++], e->d_name, strlen(e->d_name) + 1);
    }
    closedir(dir);
    if (sock >= 0)
        close(sock);
    if (rc < 0) {
        free(*names);
        *names = NULL;
        return -1;
    }
    qsort(*names, (size_t)n, sizeof **names, name_cmp);
    return n;
}

int topo_nic_virtual_fill(const locus_topo_t *t, locus_topo_dev_t *d, const char *ifname)
{
    char path[512], buf[64];
    memset(d, 0, sizeof *d);
    d->kind = LOCUS_DEV_NIC;
    snprintf(d->name, sizeof d->name, "%s", ifname);
    snprintf(d->netdev, sizeof d->netdev, "%s", ifname);
    snprintf(d->osdevs[0], sizeof d->osdevs[0], "%s", ifname);
    d->nosdevs = 1;
    snprintf(path, sizeof path, "/sys/class/net/%s/type", ifname);
    d->nic_class = sysfs_read(path, buf, sizeof buf) == 0 && atoi(buf) == ARPHRD_INFINIBAND_TYPE
                   ? LOCUS_NIC_INFINIBAND : LOCUS_NIC_ETHERNET;
    d->is_virtual = 1;
    d->link_up = netdev_state(ifname);
    d->speed_mbps = netdev_speed(ifname);
    d->ipv4 = netdev_ipv4(ifname);
    /* Software: as near to one core as to another. */
    d->numa = -1;
    d->package = -1;
    d->cpuset = hwloc_bitmap_dup(hwloc_topology_get_complete_cpuset(t->hw));
    return d->cpuset ? 0 : -1;
}
