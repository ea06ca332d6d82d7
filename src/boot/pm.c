/*
 * The process-manager interface seen by the rest of boot: LOCUS_PMI picks
 * PMI-1, PMI-2 or PMIx (or, by default, whatever the launcher offers);
 * every put, get and fence is counted here, whichever backend carries it.
 */
#include "locus_boot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "boot_priv.h"
#include "locus_tunables.h"

/* PMIx launchers (Open MPI's mpirun, prterun, srun --mpi=pmix) export these. */
static int env_offers_pmix(void)
{
    return getenv("PMIX_NAMESPACE") && getenv("PMIX_RANK") &&
           (getenv("PMIX_SERVER_URI41") || getenv("PMIX_SERVER_URI4") ||
            getenv("PMIX_SERVER_URI3") || getenv("PMIX_SERVER_URI2") ||
            getenv("PMIX_SERVER_URI21") || getenv("PMIX_SERVER_URI"));
}

/*
 * auto: PMIx when a PMIx server is announced and no PMI-1/2 descriptor is
 * (an outer PMIx launcher may leave its variables to a locusrun job);
 * PMI-2 when the descriptor comes with PMI_JOBID, which Slurm's pmi2
 * plugin sets and Hydra and locusrun do not; PMI-1 otherwise (Hydra,
 * locusrun, Slurm's pmi plugins all speak it).
 */
static int pm_choose(locus_boot_t *b, char *err, size_t errlen)
{
    const char *want = locus_tunable_str("LOCUS_PMI");
    int wire = getenv("PMI_FD") || getenv("PMI_PORT");
    if (strcmp(want, "auto") == 0) {
        if (!wire && env_offers_pmix())
            b->pm = &boot_pm_pmix;
        else if (getenv("PMI_FD") && getenv("PMI_JOBID"))
            b->pm = &boot_pm_pmi2;
        else if (wire)
            b->pm = &boot_pm_pmi1;
        else if (getenv("PMIX_RANK"))
            b->pm = &boot_pm_pmix; /* a PMIx launcher without a URI: let libpmix say why */
        return 0;
    }
    const boot_pm_t *all[] = { &boot_pm_pmi1, &boot_pm_pmi2, &boot_pm_pmix };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(want, all[i]->name) == 0)
            b->pm = all[i];
    if (!b->pm) {
        snprintf(err, errlen, "LOCUS_PMI=%.40s: expected auto, pmi1, pmi2 or pmix", want);
        return -1;
    }
    if (b->pm == &boot_pm_pmi2 && !getenv("PMI_FD")) {
        snprintf(err, errlen, "LOCUS_PMI=pmi2: the launcher gave no PMI_FD");
        return -1;
    }
    if (b->pm == &boot_pm_pmix && !env_offers_pmix()) {
        snprintf(err, errlen, "LOCUS_PMI=pmix: the launcher announced no PMIx server "
                 "(PMIX_NAMESPACE, PMIX_RANK, PMIX_SERVER_URI*)");
        return -1;
    }
    if (b->pm == &boot_pm_pmi1 && !wire) {
        snprintf(err, errlen, "LOCUS_PMI=pmi1: the launcher gave no PMI_FD or PMI_PORT");
        return -1;
    }
    return 0;
}

int boot_pm_connect(locus_boot_t *b, char *err, size_t errlen)
{
    b->fd = -1;
    b->rank = 0;
    b->size = 1;
    b->pm = NULL;
    if (pm_choose(b, err, errlen) != 0) {
        b->pm = NULL; /* nothing to tell an abort to */
        return -1;
    }
    if (!b->pm) {
        b->singleton = 1;
        return 0;
    }
    return b->pm->connect(b, err, errlen);
}

const char *locus_boot_pm_name(const locus_boot_t *b)
{
    return b->singleton || !b->pm ? "singleton" : b->pm->name;
}

int locus_boot_put(locus_boot_t *b, const char *key, const char *val)
{
    if (b->singleton)
        return 0;
    locus_boot_count_t *c = &b->count[b->phase];
    c->puts++;
    c->node_puts += pmi_wire_node_key(key);
    c->put_bytes += (long)(strlen(key) + strlen(val));
    return b->pm->put(b, key, val);
}

int locus_boot_get(locus_boot_t *b, int owner, const char *key, char *val, size_t vallen)
{
    if (b->singleton)
        return -1;
    b->count[b->phase].gets++;
    b->count[b->phase].node_gets += pmi_wire_node_key(key);
    int rc = b->pm->get(b, owner, key, val, vallen);
    if (rc == 0)
        b->count[b->phase].get_bytes += (long)strlen(val);
    return rc;
}

int boot_pm_node_map(locus_boot_t *b, int *node_of)
{
    return b->singleton ? 0 : b->pm->node_map(b, node_of);
}

/* Enters a barrier with begin and waits for it, counted as a fence. */
static int fence_wait(locus_boot_t *b, int (*begin)(locus_boot_t *b))
{
    b->count[b->phase].fences++;
    if (begin(b) != 0)
        return -1;
    int rc;
    while ((rc = b->pm->fence_test(b, -1)) == 0)
        ;
    return rc > 0 ? 0 : -1;
}

int locus_boot_fence(locus_boot_t *b)
{
    return b->singleton ? 0 : fence_wait(b, b->pm->fence_begin);
}

int locus_boot_node_fence(locus_boot_t *b)
{
    if (b->singleton)
        return 0;
    if (!b->node_barrier || !b->pm->node_fence_begin)
        return locus_boot_fence(b);
    if (b->local_size <= 1)
        return 0;  /* nobody to wait for */
    return fence_wait(b, b->pm->node_fence_begin);
}

int locus_boot_fence_progress(locus_boot_t *b, int (*progress)(void *arg), void *arg)
{
    if (b->singleton)
        return 0;
    b->count[b->phase].fences++;
    if (b->pm->fence_begin(b) != 0)
        return -1;
    /* Progress first, then look for the reply: the fence cannot have
     * completed before this process entered it, and what progress starts
     * (a deferred free, a peer's last message) must run at least once.
     * Spin while progress moves something; once idle a while, wait a
     * millisecond at a time so a long wait costs no CPU. */
    long idle = 0;
    for (;;) {
        int n = progress(arg);
        if (n < 0)
            return -1;
        idle = n > 0 ? 0 : idle + 1;
        int rc = b->pm->fence_test(b, idle > 1000 ? 1 : 0);
        if (rc != 0)
            return rc > 0 ? 0 : -1;
    }
}

void locus_boot_abort(locus_boot_t *b, int code, const char *msg)
{
    if (!b->singleton && b->pm) {
        /* Hydra stops forwarding a job's output as soon as one rank aborts
         * (through PMI-1, or a PMI-2 abort it does not know): give it a
         * moment to pass on the line the caller printed first. */
        fflush(stderr);
        struct timespec pause = { 0, 200 * 1000 * 1000 };
        nanosleep(&pause, NULL);
        b->pm->abort(b, code, msg);
    }
    _exit(code ? code : 1);
}

void locus_boot_finalize(locus_boot_t *b)
{
    if (!b->singleton && b->pm)
        b->pm->finalize(b);
    locus_boot_addr_free(b);
    free(b->node_of);
    free(b->local_ranks);
    b->node_of = NULL;
    b->local_ranks = NULL;
}
