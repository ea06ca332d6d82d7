/* Shared by the property tests of the placement engine (place_props*.c). */
#ifndef PLACE_PROPS_H
#define PLACE_PROPS_H

#include <stdio.h>

#include "locus_place.h"

extern int failures, plans;
extern char ctx[512];

#define CHECK(cond, ...) do { if (!(cond)) { failures++; \
    if (failures < 40) { fprintf(stderr, "FAIL %s: ", ctx); fprintf(stderr, __VA_ARGS__); \
    fputc('\n', stderr); } } } while (0)

/* Distance by hwloc from the device called `name` (or at PCI bus id
 * `pci`) to the NUMA node with OS index home_os: 0 same NUMA node, 1 same
 * package, 2 otherwise (also for a device hwloc does not show: a virtual
 * interface). */
int props_hw_distance(const locus_topo_t *t, const char *name, const char *pci, int home_os);

/* NICs and GPUs of a plan: (d) each rank's device is among the nearest
 * candidates, (e) equally near devices carry loads within one, a NUMA
 * node's ranks are split evenly over its nearest devices, the fabric
 * class rule, every rail, and the NIC variables. */
void props_check_devs(const locus_topo_t *t, const locus_place_request_t *req,
                      const locus_plan_t *p);

/* The same request with 2 rails and with more rails than candidates:
 * checked as every plan, and each rank's primary NIC is the one it gets
 * with a single rail. */
void props_check_rails(const locus_topo_t *t, const locus_place_request_t *req);

/* --nic overrides the class ranking: naming any NIC (or two of different
 * classes, with 2 rails) gives exactly those. */
void props_check_nic_filter(const locus_topo_t *t);

/* Checks one plan against every rule (defined in place_props.c). */
void props_check_plan(const locus_topo_t *t, const locus_place_request_t *req,
                      const locus_plan_t *p);

#endif
