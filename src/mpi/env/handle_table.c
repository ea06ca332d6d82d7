/*
 * The table of live user handles: every object a handle the user holds may
 * point to (communicators, datatypes, groups, ops, error handlers, infos,
 * windows, messages) is entered when the handle is given out and removed
 * when it is freed. A converter asks the table before it touches the
 * object, so a handle that never was one (a stray pointer, an integer, a
 * freed object) is the kind's error class rather than a fault. Requests
 * are the exception: they come from the core's slabs, which say the same.
 *
 * Open addressing with linear probing and backward-shift deletion (no
 * tombstones, so lookups stay short however many handles come and go).
 * Only the thread that calls MPI touches it (MPI_THREAD_SERIALIZED at most).
 */
#include <stdlib.h>

#include "mpi_impl.h"

locus_handle_table_t locus_handles;

static size_t slot_of(const locus_handle_table_t *t, uintptr_t key)
{
    return (size_t)((key >> 4) * 0x9e3779b97f4a7c15ull >> 32) & t->mask;
}

static void table_put(locus_handle_table_t *t, uintptr_t key, uint8_t kind)
{
    size_t i = slot_of(t, key);
    while (t->keys[i] && t->keys[i] != key)
        i = (i + 1) & t->mask;
    t->count += t->keys[i] == 0;
    t->keys[i] = key;
    t->kinds[i] = kind;
}

static int table_grow(locus_handle_table_t *t)
{
    size_t cap = t->mask ? 2 * (t->mask + 1) : 256;
    locus_handle_table_t n = { calloc(cap, sizeof *n.keys), calloc(cap, 1), cap - 1, 0 };
    if (!n.keys || !n.kinds) {
        free(n.keys);
        free(n.kinds);
        return -1;
    }
    for (size_t i = 0; t->keys && i <= t->mask; i++)
        if (t->keys[i])
            table_put(&n, t->keys[i], t->kinds[i]);
    free(t->keys);
    free(t->kinds);
    *t = n;
    return 0;
}

int locus_handle_enter(const void *obj, int kind)
{
    locus_handle_table_t *t = &locus_handles;
    if ((t->count + 1) * 2 > t->mask + 1 && table_grow(t) < 0)
        return -1;
    table_put(t, (uintptr_t)obj, (uint8_t)kind);
    return 0;
}

void locus_handle_leave(const void *obj)
{
    locus_handle_table_t *t = &locus_handles;
    uintptr_t key = (uintptr_t)obj;
    if (!t->keys || !key)
        return;
    size_t i = slot_of(t, key);
    while (t->keys[i] && t->keys[i] != key)
        i = (i + 1) & t->mask;
    if (!t->keys[i])
        return;
    /* Backward shift: pull up every later entry of the run that may sit in
     * the hole (its home slot is not cyclically between the hole and it). */
    for (size_t j = (i + 1) & t->mask; t->keys[j]; j = (j + 1) & t->mask) {
        size_t home = slot_of(t, t->keys[j]);
        if (((j - home) & t->mask) >= ((j - i) & t->mask)) {
            t->keys[i] = t->keys[j];
            t->kinds[i] = t->kinds[j];
            i = j;
        }
    }
    t->keys[i] = 0;
    t->count--;
}
