/* Private to src/topo: the model builders shared by topo_load.c,
 * topo_devs.c and topo_nics.c. */
#ifndef LOCUS_TOPO_INTERNAL_H
#define LOCUS_TOPO_INTERNAL_H

#include "locus_topo.h"

/* Fills topo->devs from the hwloc OS devices (and, on this machine, the
 * virtual network interfaces); 0 or -1 (out of memory). */
int topo_devs_build(locus_topo_t *topo);

/* Frees what topo_devs_build allocated. */
void topo_devs_clear(locus_topo_t *topo);

/* Fills a NIC's class, rdma, netdev, link state, speed and mgmt from its
 * OS devices `os` (nos of them) and its PCI device (NULL off PCI). */
void topo_nic_describe(const locus_topo_t *topo, locus_topo_dev_t *d,
                       hwloc_obj_t const *os, int nos, hwloc_obj_t pci);

/* The virtual network interfaces of this machine's current network
 * namespace that hwloc does not show, sorted by name. Returns how many
 * (*names is then an array to free), or -1 (out of memory). */
int topo_nics_virtual_scan(hwloc_topology_t hw, char (**names)[LOCUS_TOPO_NAME_MAX]);

/* Fills a virtual NIC named `ifname`: equally near every core. Returns 0
 * or -1 (out of memory). */
int topo_nic_virtual_fill(const locus_topo_t *topo, locus_topo_dev_t *d, const char *ifname);

/* This machine's cached topology (topo_cache.c, LOCUS_TOPO_CACHE): the
 * file that would hold it, 0; or -1 when the cache is off or unusable. */
int topo_cache_path(char *path, size_t len);
/* Writes hw there (atomically), and drops entries unused for a week. */
void topo_cache_store(hwloc_topology_t hw, const char *path);

#endif
