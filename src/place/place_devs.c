/* Giving each rank its NIC(s) and GPU, balanced, and what the GPU
 * exports (NIC rules are in place_nics.c). */
#include <stdlib.h>
#include <string.h>

#include "place_internal.h"

/* The candidates at the least distance from NUMA index `home` (all of
 * them for a rank with no NUMA node): fills near, returns how many. */
static int nearest_set(const locus_topo_t *t, const char *cand, int home, char *near)
{
    int bd = 3, n = 0;
    for (int i = 0; i < t->ndevs; i++)
        if (cand[i] && locus_topo_dev_distance(t, i, home) < bd)
            bd = locus_topo_dev_distance(t, i, home);
    for (int i = 0; i < t->ndevs; i++) {
        near[i] = cand[i] && locus_topo_dev_distance(t, i, home) == bd;
        n += near[i];
    }
    return n;
}

/* Ranks are dealt per home NUMA node, round-robin over the devices
 * nearest to it taken least loaded first: a node's ranks are split evenly
 * (±1) between its equally near devices, whoever else uses them, and the
 * extra ones go where the load is lowest. Nodes with the fewest nearest
 * devices (their own) go first, so ranks from farther away only fill in:
 * the sets are nested (a node's devices, its package's, all), which keeps
 * a rank's device within one of the least loaded of its equals. */
static int devs_spread(const place_ctx_t *x, const char *cand, int *of, int *load)
{
    const locus_topo_t *t = x->t;
    int n = x->req->nranks, nslot = t->nnumas + 1; /* slot: home NUMA index + 1 */
    int *size = calloc((size_t)nslot, sizeof *size), *order = calloc((size_t)nslot, sizeof *order);
    int *list = calloc((size_t)t->ndevs + 1, sizeof *list);
    char *near = calloc((size_t)t->ndevs + 1, 1), *present = calloc((size_t)nslot, 1);
    int rc = size && order && list && near && present ? 0 : -1, ng = 0;
    for (int r = 0; rc == 0 && r < n; r++) {
        present[x->home[r] + 1] = 1;
        of[r] = -1;
    }
    for (int s = 0; rc == 0 && s < nslot; s++)
        if (present[s]) {
            size[s] = nearest_set(t, cand, s - 1, near);
            int j = ng++;
            for (; j > 0 && size[order[j - 1]] > size[s]; j--)
                order[j] = order[j - 1];
            order[j] = s;
        }
    for (int g = 0; rc == 0 && g < ng; g++) {
        int s = order[g], m = nearest_set(t, cand, s - 1, near), k = 0;
        for (int i = 0; i < t->ndevs; i++)
            if (near[i]) {
                int j = k++;
                for (; j > 0 && load[list[j - 1]] > load[i]; j--)
                    list[j] = list[j - 1];
                list[j] = i;
            }
        for (int r = 0, dealt = 0; m > 0 && r < n; r++)
            if (x->home[r] + 1 == s)
                of[r] = list[dealt++ % m];
        for (int r = 0; m > 0 && r < n; r++)
            if (x->home[r] + 1 == s)
                load[of[r]]++;
    }
    free(size);
    free(order);
    free(list);
    free(near);
    free(present);
    return rc;
}

static void dev_copy(locus_place_dev_t *out, const locus_topo_dev_t *d)
{
    snprintf(out->name, sizeof out->name, "%s", d->name);
    snprintf(out->pci, sizeof out->pci, "%s", d->pci);
    snprintf(out->netdev, sizeof out->netdev, "%s", d->kind == LOCUS_DEV_NIC ? d->netdev : "");
    out->nosdevs = d->nosdevs < LOCUS_PLACE_OSDEV_MAX ? d->nosdevs : LOCUS_PLACE_OSDEV_MAX;
    for (int k = 0; k < out->nosdevs; k++)
        snprintf(out->osdevs[k], sizeof out->osdevs[k], "%s", d->osdevs[k]);
    out->index = d->index;
}

static int has_osdev_prefix(const locus_topo_dev_t *d, const char *p)
{
    for (int k = 0; k < d->nosdevs; k++)
        if (!strncmp(d->osdevs[k], p, strlen(p)))
            return 1;
    return 0;
}

static int gpu_env(locus_rank_plan_t *rp, const locus_topo_dev_t *d)
{
    char v[16];
    snprintf(v, sizeof v, "%d", d->index);
    if (place_env_add(rp, "LOCUS_GPU", d->name) < 0)
        return -1;
    if (d->vendor_id == 0x10de || has_osdev_prefix(d, "cuda") || has_osdev_prefix(d, "nvml")) {
        /* Without hwloc's CUDA numbering the index is the PCI order, which
         * CUDA follows only when told to. */
        if (!has_osdev_prefix(d, "cuda") && place_env_add(rp, "CUDA_DEVICE_ORDER", "PCI_BUS_ID") < 0)
            return -1;
        return place_env_add(rp, "CUDA_VISIBLE_DEVICES", v);
    }
    if (d->vendor_id == 0x1002 || has_osdev_prefix(d, "rsmi"))
        return place_env_add(rp, "ROCR_VISIBLE_DEVICES", v);
    return 0;
}

static int home_package(const place_ctx_t *x, int r)
{
    return x->home[r] >= 0 ? x->t->numas[x->home[r]].package : -1;
}

static int warn_remote(place_ctx_t *x, const int *remote)
{
    for (int i = 0; i < x->t->ndevs; i++)
        if (remote[i] && place_warn(x->plan, "%d rank%s use%s NIC %s on package %d from another "
                                    "package: no NIC is nearer", remote[i], remote[i] > 1 ? "s" : "",
                                    remote[i] > 1 ? "" : "s", x->t->devs[i].name,
                                    x->t->packages[x->t->devs[i].package].os) < 0)
            return -1;
    return 0;
}

/* --map-by nic: the spread decides how many of a NUMA node's ranks each of
 * its nearest NICs takes; within those counts a rank keeps the NIC whose
 * domain placed it. A rank that had to leave its domain (more ranks than
 * its cores) thus never takes a far NIC, and the counts stay balanced. */
static int keep_domain_nics(const place_ctx_t *x, int *of)
{
    const locus_topo_t *t = x->t;
    int n = x->req->nranks;
    int *left = calloc((size_t)t->ndevs + 1, sizeof *left);
    char *kept = calloc((size_t)n + 1, 1);
    if (!left || !kept) {
        free(left);
        free(kept);
        return -1;
    }
    for (int s = -1; s < t->nnumas; s++) {
        memset(left, 0, ((size_t)t->ndevs + 1) * sizeof *left);
        for (int r = 0; r < n; r++)
            if (x->home[r] == s && of[r] >= 0)
                left[of[r]]++;
        for (int r = 0; r < n; r++) {
            int want = x->dom[x->rank_dom[r]].nic;
            kept[r] = x->home[r] == s && of[r] >= 0 && left[want] > 0;
            if (kept[r]) {
                of[r] = want;
                left[want]--;
            }
        }
        for (int r = 0, i = 0; r < n; r++)
            if (x->home[r] == s && of[r] >= 0 && !kept[r]) {
                while (left[i] == 0)
                    i++;
                of[r] = i;
                left[i]--;
            }
    }
    free(left);
    free(kept);
    return 0;
}

/* Each rank's primary NIC: the spread over the NICs nearest to it. */
static int nics_primary(place_ctx_t *x, const char *cand, int *rails, int nrails, int *load)
{
    int n = x->req->nranks;
    if (nrails == 0)
        return 0;
    int *of = calloc((size_t)n, sizeof *of);
    if (!of)
        return -1;
    int rc = devs_spread(x, cand, of, load);
    if (rc == 0 && x->req->map_by == LOCUS_MAP_NIC)
        rc = keep_domain_nics(x, of);
    for (int r = 0; r < n; r++)
        rails[(size_t)r * (size_t)nrails] = of[r];
    free(of);
    return rc;
}

static int warn_rails(place_ctx_t *x, int ncand)
{
    if (x->req->rails <= ncand || ncand == 0)
        return 0;
    return place_warn(x->plan, "%d rails asked but only %d NIC%s %s: each rank gets %d",
                      x->req->rails, ncand, ncand > 1 ? "s" : "",
                      x->req->nic_filter[0] ? "named by --nic" : "of the best class", ncand);
}

static int rank_nics(place_ctx_t *x, int r, const int *mine, int nrails, int *remote)
{
    const locus_topo_t *t = x->t;
    locus_rank_plan_t *rp = &x->plan->ranks[r];
    if (nrails == 0 || mine[0] < 0)
        return 0;
    int k = 0;
    while (k < nrails && mine[k] >= 0)
        k++;
    rp->rails = calloc((size_t)k, sizeof *rp->rails);
    if (!rp->rails)
        return -1;
    rp->nrails = k;
    for (int i = 0; i < k; i++)
        dev_copy(&rp->rails[i], &t->devs[mine[i]]);
    rp->has_nic = 1;
    rp->nic = rp->rails[0];
    int hp = home_package(x, r), i = mine[0];
    remote[i] += t->devs[i].package >= 0 && hp >= 0 && hp != t->devs[i].package;
    return place_nic_env(rp, t, mine, k);
}

int place_devs_assign(place_ctx_t *x, char *err, size_t errlen)
{
    const locus_topo_t *t = x->t;
    int n = x->req->nranks;
    char *nic = calloc((size_t)t->ndevs + 1, 1), *gpu = calloc((size_t)t->ndevs + 1, 1);
    int *load = calloc((size_t)t->ndevs + 1, sizeof *load);
    int *remote = calloc((size_t)t->ndevs + 1, sizeof *remote);
    int *gpu_of = calloc((size_t)n, sizeof *gpu_of), *rails = NULL;
    int rc = -1;
    if (!nic || !gpu || !load || !remote || !gpu_of)
        goto out;
    int ncand = place_nic_candidates(t, x->req->nic_filter, nic, err, errlen);
    if (ncand < 0)
        goto out;
    snprintf(err, errlen, "out of memory while planning");
    int nrails = x->req->rails < ncand ? x->req->rails : ncand;
    size_t stride = nrails > 0 ? (size_t)nrails : 1;
    rails = calloc((size_t)n * stride, sizeof *rails);
    if (!rails || nics_primary(x, nic, rails, nrails, load) < 0
        || place_rails_choose(x, nic, rails, nrails) < 0 || warn_rails(x, ncand) < 0)
        goto out;
    for (int i = 0; i < t->ndevs; i++)
        gpu[i] = t->devs[i].kind == LOCUS_DEV_GPU;
    if (devs_spread(x, gpu, gpu_of, load) < 0)
        goto out;
    for (int r = 0; r < n; r++) {
        locus_rank_plan_t *rp = &x->plan->ranks[r];
        if (rank_nics(x, r, &rails[(size_t)r * stride], nrails, remote) < 0)
            goto out;
        int g = gpu_of[r];
        if (g >= 0) {
            rp->has_gpu = 1;
            dev_copy(&rp->gpu, &t->devs[g]);
            if (gpu_env(rp, &t->devs[g]) < 0)
                goto out;
        }
    }
    rc = warn_remote(x, remote);
out:
    free(nic);
    free(gpu);
    free(load);
    free(remote);
    free(gpu_of);
    free(rails);
    return rc;
}
