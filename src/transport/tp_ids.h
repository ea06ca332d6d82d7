/*
 * tp_ids.h — request ids for transports with a wire protocol: the id
 * travels in control messages (RTS, CTS, DATA, FIN...) and indexes a table
 * of objects malloc'd once and reused, so steady traffic allocates nothing
 * and a stale or forged id is caught (tp_ids_find returns NULL for an id
 * not in use). Generic: used by tcp; a libfabric transport would use it too.
 *
 * Every object kept here must start with {uint32_t id; uint32_t busy;}.
 */
#ifndef TP_IDS_H
#define TP_IDS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    void **obj;
    uint32_t n, cap;
    uint32_t *freeid;
    uint32_t nfree;
} tp_ids_t;

/* A zeroed object of objsize bytes with its id set and busy = 1, or NULL
 * when out of memory. objsize must be the same on every call. */
void *tp_ids_get(tp_ids_t *ids, size_t objsize);

/* The busy object with this id, or NULL. */
void *tp_ids_find(tp_ids_t *ids, uint32_t id);

/* Gives an id back (its object is kept for reuse). */
void tp_ids_put(tp_ids_t *ids, uint32_t id);

/* Frees every object and the table. */
void tp_ids_free(tp_ids_t *ids);

#endif
