/*
 * kvs.c — the proxy's key-value store: an open-addressing hash table of
 * owned strings, so puts and gets stay O(1) with thousands of ranks.
 */
#include "proxy.h"

#include <stdlib.h>
#include <string.h>

static unsigned long kvs_hash(const char *s)
{
    unsigned long h = 1469598103934665603UL;  /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211UL;
    return h;
}

void kvs_init(kvs_t *k)
{
    memset(k, 0, sizeof *k);
}

void kvs_free(kvs_t *k)
{
    for (size_t i = 0; i < k->cap; i++) {
        free(k->slots[i].key);
        free(k->slots[i].val);
    }
    free(k->slots);
    memset(k, 0, sizeof *k);
}

static kvs_slot_t *kvs_slot(const kvs_t *k, const char *key)
{
    size_t mask = k->cap - 1;
    for (size_t i = kvs_hash(key) & mask;; i = (i + 1) & mask) {
        kvs_slot_t *s = &k->slots[i];
        if (s->key == NULL || strcmp(s->key, key) == 0)
            return s;
    }
}

static int kvs_grow(kvs_t *k)
{
    size_t ncap = k->cap ? k->cap * 2 : 256;
    kvs_slot_t *old = k->slots;
    size_t ocap = k->cap;
    k->slots = calloc(ncap, sizeof *k->slots);
    if (k->slots == NULL) {
        k->slots = old;
        return -1;
    }
    k->cap = ncap;
    for (size_t i = 0; i < ocap; i++)
        if (old[i].key)
            *kvs_slot(k, old[i].key) = old[i];
    free(old);
    return 0;
}

int kvs_put(kvs_t *k, const char *key, const char *val, int owner, int relay)
{
    int local = owner >= 0 && relay;
    if ((k->count + 1) * 2 > k->cap && kvs_grow(k) < 0)
        return -1;
    kvs_slot_t *s = kvs_slot(k, key);
    char *v = strdup(val);
    if (v == NULL)
        return -1;
    if (s->key == NULL) {
        s->key = strdup(key);
        if (s->key == NULL) {
            free(v);
            return -1;
        }
        k->count++;
    }
    free(s->val);
    s->val = v;
    s->owner = owner;
    if (local && !s->unsent)
        k->unsent++;
    else if (!local && s->unsent)
        k->unsent--;
    s->unsent = local;
    return 0;
}

const kvs_slot_t *kvs_find(const kvs_t *k, const char *key)
{
    if (k->cap == 0)
        return NULL;
    kvs_slot_t *s = kvs_slot(k, key);
    return s->key ? s : NULL;
}

const char *kvs_get(const kvs_t *k, const char *key)
{
    if (k->cap == 0)
        return NULL;
    kvs_slot_t *s = kvs_slot(k, key);
    return s->key ? s->val : NULL;
}

int kvs_flush(kvs_t *k, int (*send)(void *ctx, const char *key, const char *val),
              void *ctx)
{
    if (k->unsent == 0)
        return 0;
    for (size_t i = 0; i < k->cap; i++) {
        if (k->slots[i].key && k->slots[i].unsent) {
            if (send(ctx, k->slots[i].key, k->slots[i].val) < 0)
                return -1;
            k->slots[i].unsent = 0;
        }
    }
    k->unsent = 0;
    return 0;
}
