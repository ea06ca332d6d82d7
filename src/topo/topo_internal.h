/* Private to src/topo: the model builders shared by topo_load.c and
 * topo_devs.c. */
#ifndef LOCUS_TOPO_INTERNAL_H
#define LOCUS_TOPO_INTERNAL_H

#include "locus_topo.h"

/* Fills topo->devs from the hwloc OS devices; 0 or -1 (out of memory). */
int topo_devs_build(locus_topo_t *topo);

/* Frees what topo_devs_build allocated. */
void topo_devs_clear(locus_topo_t *topo);

#endif
