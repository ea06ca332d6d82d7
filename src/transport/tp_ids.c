/* Request id tables (tp_ids.h). */
#include "tp_ids.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    uint32_t id;
    uint32_t busy;
} tp_obj_head_t;

void *tp_ids_get(tp_ids_t *ids, size_t objsize)
{
    tp_obj_head_t *o;
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

void *tp_ids_find(tp_ids_t *ids, uint32_t id)
{
    if (id >= ids->n)
        return NULL;
    tp_obj_head_t *o = ids->obj[id];
    return o->busy ? o : NULL;
}

void tp_ids_put(tp_ids_t *ids, uint32_t id)
{
    tp_obj_head_t *o = ids->obj[id];
    o->busy = 0;
    ids->freeid[ids->nfree++] = id;
}

void tp_ids_free(tp_ids_t *ids)
{
    for (uint32_t i = 0; i < ids->n; i++)
        free(ids->obj[i]);
    free(ids->obj);
    free(ids->freeid);
    memset(ids, 0, sizeof *ids);
}
