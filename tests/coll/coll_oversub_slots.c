/*
 * coll_oversub_slots.c — on a node whose ranks wait by yielding (ctest
 * sets LOCUS_YIELD=always, as an oversubscribed node does), the shared
 * segment's slots take alltoall buffers of up to 4 MiB / ranks (at least
 * 64 KiB, at most 1 MiB) while LOCUS_COLL_SHM_OVERSUB_MAX is unset: an
 * alltoall whose buffer fills a slot sends no rendezvous message (pvar
 * locus_shm_rndv_sent), one of twice that size does; both deliver every
 * block intact. The slots of both sets together stay within 8 MiB.
 *
 *   coll_oversub_slots [fast-cma]
 * fast-cma (run with LOCUS_SHM_CMA_MIN at most 128k, a machine whose
 * single copy is fast): the slots take alltoalls of up to 128 KiB a rank,
 * larger ones go by messages.
 *
 * Gathers and scatters take the slots too, for blocks up to a slot and
 * 512 KiB at most; larger ones go by messages, a gather's written whole by
 * their senders into the root's buffer where single copy is in use (pvar
 * locus_shm_written_recv: p-1 at the root).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../tools/tpvar.h"

static MPI_T_pvar_handle rndv, written, single_copy;

static unsigned long long rndv_sent(void)
{
    return tp_read(rndv);
}

/* Runs an alltoall of `block`-byte blocks; returns the rendezvous
 * messages it sent (summed over the ranks). */
static unsigned long long alltoall_rndv(int rank, int p, size_t block)
{
    unsigned char *s = malloc(block * (size_t)p), *r = malloc(block * (size_t)p);
    CHECK(s && r, "out of memory");
    if (!s || !r)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (size_t i = 0; i < block * (size_t)p; i++)
        s[i] = (unsigned char)(rank * 31 + (int)(i / block) * 7 + (int)(i % 251));
    unsigned long long before = rndv_sent();
    MPI_Alltoall(s, (int)block, MPI_BYTE, r, (int)block, MPI_BYTE, MPI_COMM_WORLD);
    unsigned long long mine = rndv_sent() - before, all = 0;
    for (int src = 0; src < p; src++) {
        const unsigned char *b = r + (size_t)src * block;
        size_t bad = 0;
        for (size_t i = 0; i < block; i++)
            bad += b[i] != (unsigned char)(src * 31 + rank * 7 + (int)((rank * block + i) % 251));
        CHECK(bad == 0, "%zu-byte blocks: %zu bytes wrong in the block from %d", block, bad, src);
    }
    MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    free(s);
    free(r);
    return all;
}

/* Runs a gather (or scatter) of `block`-byte blocks to (from) rank 1;
 * returns the rendezvous messages it sent (summed over the ranks). */
static unsigned long long rooted_rndv(int rank, int p, size_t block, int gathering)
{
    int root = 1 % p, me_root = rank == root;
    unsigned char *all = me_root ? malloc(block * (size_t)p) : NULL, *one = malloc(block);
    CHECK(one && (all || !me_root), "out of memory");
    if (!one || (me_root && !all))
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (size_t i = 0; gathering && i < block; i++)
        one[i] = (unsigned char)(rank * 13 + (int)(i % 241));
    for (size_t i = 0; !gathering && me_root && i < block * (size_t)p; i++)
        all[i] = (unsigned char)((int)(i / block) * 13 + (int)(i % block % 241));
    unsigned long long before = rndv_sent();
    if (gathering)
        MPI_Gather(one, (int)block, MPI_BYTE, all, (int)block, MPI_BYTE, root, MPI_COMM_WORLD);
    else
        MPI_Scatter(all, (int)block, MPI_BYTE, one, (int)block, MPI_BYTE, root, MPI_COMM_WORLD);
    unsigned long long mine = rndv_sent() - before, sum = 0;
    size_t bad = 0;
    for (size_t i = 0; !gathering && i < block; i++)
        bad += one[i] != (unsigned char)(rank * 13 + (int)(i % 241));
    for (size_t i = 0; gathering && me_root && i < block * (size_t)p; i++)
        bad += all[i] != (unsigned char)((int)(i / block) * 13 + (int)(i % block % 241));
    CHECK(bad == 0, "%s of %zu-byte blocks: %zu bytes wrong", gathering ? "gather" : "scatter",
          block, bad);
    MPI_Allreduce(&mine, &sum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    free(all);
    free(one);
    return sum;
}

int main(int argc, char **argv)
{
    int p, rank = tp_init(&argc, &argv, &p);
    rndv = tp_pvar("locus_shm_rndv_sent", MPI_T_PVAR_CLASS_COUNTER);
    written = tp_pvar("locus_shm_written_recv", MPI_T_PVAR_CLASS_COUNTER);
    single_copy = tp_pvar("locus_shm_single_copy", MPI_T_PVAR_CLASS_STATE);
    MPI_T_pvar_start(tp_sess, rndv);
    MPI_T_pvar_start(tp_sess, written);
    size_t slot = ((size_t)4 << 20) / (size_t)p;
    slot = slot < ((size_t)64 << 10) ? (size_t)64 << 10 : slot > ((size_t)1 << 20) ? (size_t)1 << 20 : slot;
    size_t rooted = slot < ((size_t)512 << 10) ? slot : (size_t)512 << 10;
    for (int gathering = 0; gathering < 2; gathering++) {
        const char *what = gathering ? "gather" : "scatter";
        CHECK(rooted_rndv(rank, p, rooted, gathering) == 0,
              "%s of %zu-byte blocks (slots of %zu): rendezvous sends", what, rooted, slot);
        unsigned long long was = tp_read(written);
        CHECK(rooted_rndv(rank, p, 2 * rooted, gathering) > 0,
              "%s of %zu-byte blocks: no rendezvous send", what, 2 * rooted);
        unsigned long long got = tp_read(written) - was, want = 0;
        if (gathering && rank == 1 % p && tp_read(single_copy))
            want = (unsigned long long)p - 1;
        CHECK(got == want, "%s of %zu-byte blocks: %llu received written by their senders, "
              "expected %llu", what, 2 * rooted, got, want);
    }
    if (argc > 1 && !strcmp(argv[1], "fast-cma"))
        slot = (size_t)128 << 10;
    size_t fits = slot / (size_t)p / 64 * 64;
    unsigned long long in_slots = alltoall_rndv(rank, p, fits);
    unsigned long long by_msgs = alltoall_rndv(rank, p, 2 * fits);
    CHECK(in_slots == 0, "%zu-byte blocks (%zu per rank, slots of %zu): %llu rendezvous sends",
          fits, fits * (size_t)p, slot, in_slots);
    CHECK(by_msgs > 0, "%zu-byte blocks (past the %zu-byte slots): no rendezvous send", 2 * fits,
          slot);
    return tp_end();
}
