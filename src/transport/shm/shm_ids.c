/* Request ids for the slow (large-message) paths: objects are malloc'd once
 * per id and reused, so steady-state traffic allocates nothing. */
#include "shm_tp.h"

#include <stdlib.h>
#include <string.h>

/* Both request types start with {uint32_t id; uint32_t busy;}. */
typedef struct {
    uint32_t id;
    uint32_t busy;
} shm_obj_head_t;

void *shm_ids_get(shm_ids_t *ids, size_t objsize)
{
    shm_obj_head_t *o;
    if (ids->nfree > 0) {
        o = ids->obj[ids->freeid[--ids->nfree]];
    } else {
        if (ids->n == ids->cap) {
            uint32_t cap = ids->cap ? ids->cap * 2 : 64;
            void **obj = realloc(ids->obj, cap * sizeof *obj);
            if (!obj)
                return NULL;
            ids->obj = obj;
            uint32_t *fr = realloc(ids->freeid, cap * sizeof *fr);
            if (!fr)
                return NULL;
            ids->freeid = fr;
            ids->cap = cap;
        }
        o = malloc(objsize);
        if (!o)
            return NULL;
        ids->obj[ids->n] = o;
        o->id = ids->n++;
    }
    uint32_t id = o->id;
    memset(o, 0, objsize);
    o->id = id;
    o->busy = 1;
    return o;
}

void *shm_ids_find(shm_ids_t *ids, uint32_t id)
{
    if (id >= ids->n)
        return NULL;
    shm_obj_head_t *o = ids->obj[id];
    return o->busy ? o : NULL;
}

void shm_ids_put(shm_ids_t *ids, uint32_t id)
{
    shm_obj_head_t *o = ids->obj[id];
    o->busy = 0;
    ids->freeid[ids->nfree++] = id;
}

void shm_ids_free(shm_ids_t *ids)
{
    for (uint32_t i = 0; i < ids->n; i++)
        free(ids->obj[i]);
    free(ids->obj);
    free(ids->freeid);
    memset(ids, 0, sizeof *ids);
}
