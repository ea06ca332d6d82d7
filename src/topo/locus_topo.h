/*
 * locus_topo.h — the machine model: what a node is, read through hwloc.
 *
 * This header is the whole contract of the topology layer (it knows nothing
 * of MPI). A locus_topo_t is loaded from this machine or from an hwloc XML
 * export and restricted to the allowed cpuset. It holds packages, NUMA nodes
 * (CPU-less ones kept out of CPU mapping), L3 caches, cores, PUs, and one
 * entry per PCI network device or GPU with its locality.
 *
 * The struct layout below is owned by src/topo; other layers read it but
 * never build one by hand.
 */
#ifndef LOCUS_TOPO_H
#define LOCUS_TOPO_H

#include <stdio.h>

typedef struct locus_topo locus_topo_t;

/*
 * Loads the topology of this machine (xml_path NULL) or of an hwloc XML
 * export. Returns a topology to free with locus_topo_free(), or NULL with a
 * one-line reason in err (missing, unreadable or invalid file).
 */
locus_topo_t *locus_topo_load(const char *xml_path, char *err, size_t errlen);

void locus_topo_free(locus_topo_t *topo);

/* 1 when the topology is this machine's (binding possible), 0 for an XML. */
int locus_topo_is_this_system(const locus_topo_t *topo);

/* Host name recorded in the topology (XML's HostName info or uname). */
const char *locus_topo_hostname(const locus_topo_t *topo);

/* Human description: packages, NUMA nodes with cores and PUs, NICs, GPUs,
 * disallowed PUs marked. */
void locus_topo_write_text(const locus_topo_t *topo, FILE *out);

/* The same as JSON. */
void locus_topo_write_json(const locus_topo_t *topo, FILE *out);

#endif
