/* Choosing each rank's NIC and GPU, and what they export. */
#include <stdlib.h>
#include <string.h>

#include "place_internal.h"

static int dev_matches(const locus_topo_dev_t *d, const char *tok)
{
    if (!strcmp(tok, d->name) || !strcmp(tok, d->netdev) || (d->pci[0] && !strcmp(tok, d->pci)))
        return 1;
    for (int k = 0; k < d->nosdevs; k++)
        if (!strcmp(tok, d->osdevs[k]))
            return 1;
    return 0;
}

static void nic_names(const locus_topo_t *t, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < t->ndevs && used + 1 < len; i++)
        if (t->devs[i].kind == LOCUS_DEV_NIC)
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "," : "", t->devs[i].name);
    if (!buf[0])
        snprintf(buf, len, "none");
}

/* The fabric, not the management port: RDMA devices when there are any,
 * else the network devices with the fastest PCI link. */
int place_nic_candidates(const locus_topo_t *t, const char *filter, char *cand,
                         char *err, size_t errlen)
{
    for (int i = 0; i < t->ndevs; i++)
        cand[i] = t->devs[i].kind == LOCUS_DEV_NIC && !filter[0];
    if (filter[0]) {
        char buf[256], *save = NULL;
        snprintf(buf, sizeof buf, "%s", filter);
        for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            int hit = 0;
            for (int i = 0; i < t->ndevs; i++)
                if (t->devs[i].kind == LOCUS_DEV_NIC && dev_matches(&t->devs[i], tok))
                    hit = cand[i] = 1;
            if (!hit) {
                char names[200];
                nic_names(t, names, sizeof names);
                snprintf(err, errlen, "--nic %s: no such NIC on this machine (NICs: %s)", tok, names);
                return -1;
            }
        }
    }
    int rdma = 0;
    float best = 0;
    for (int i = 0; i < t->ndevs; i++)
        if (cand[i]) {
            rdma |= t->devs[i].nic_class == LOCUS_NIC_RDMA;
            if (t->devs[i].link_gbps > best)
                best = t->devs[i].link_gbps;
        }
    int n = 0;
    for (int i = 0; i < t->ndevs; i++) {
        if (!cand[i])
            continue;
        if (rdma)
            cand[i] = t->devs[i].nic_class == LOCUS_NIC_RDMA;
        else
            cand[i] = t->devs[i].link_gbps >= best;
        n += cand[i];
    }
    return n;
}

/* Nearest candidate to NUMA index `home`, the least loaded among equals. */
static int dev_nearest(const locus_topo_t *t, const char *cand, const int *load, int home)
{
    int best = -1, bd = 0;
    for (int i = 0; i < t->ndevs; i++) {
        if (!cand[i])
            continue;
        int d = locus_topo_dev_distance(t, i, home);
        if (best < 0 || d < bd || (d == bd && load[i] < load[best])) {
            best = i;
            bd = d;
        }
    }
    return best;
}

static void dev_copy(locus_place_dev_t *out, const locus_topo_dev_t *d)
{
    snprintf(out->name, sizeof out->name, "%s", d->name);
    snprintf(out->pci, sizeof out->pci, "%s", d->pci);
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

static int nic_env(locus_rank_plan_t *rp, const locus_topo_dev_t *d)
{
    char v[LOCUS_TOPO_NAME_MAX + 8];
    if (place_env_add(rp, "LOCUS_NIC", d->name) < 0)
        return -1;
    if (d->nic_class == LOCUS_NIC_RDMA)
        snprintf(v, sizeof v, "%s:1", d->name);
    else
        snprintf(v, sizeof v, "%s", d->netdev[0] ? d->netdev : d->name);
    if (place_env_add(rp, "UCX_NET_DEVICES", v) < 0)
        return -1;
    if (!strncmp(d->name, "hfi1_", 5)) {
        /* PSM2 picks its Omni-Path unit from HFI_UNIT. */
        if (place_env_add(rp, "HFI_UNIT", d->name + 5) < 0)
            return -1;
    }
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

/* Greedy choice leaves a device loaded by ranks that had other equally
 * near choices; moving such a rank from a device with two more ranks
 * than an equally near one strictly lowers the sum of squared loads, so
 * this ends, with every rank's device within one of its equals. */
static void devs_rebalance(const place_ctx_t *x, const char *cand, int *of, int *load)
{
    const locus_topo_t *t = x->t;
    for (int moved = 1; moved; ) {
        moved = 0;
        for (int r = 0; r < x->req->nranks; r++) {
            int cur = of[r];
            if (cur < 0)
                continue;
            int dc = locus_topo_dev_distance(t, cur, x->home[r]);
            for (int j = 0; j < t->ndevs; j++)
                if (cand[j] && load[cur] > load[j] + 1
                    && locus_topo_dev_distance(t, j, x->home[r]) == dc) {
                    load[cur]--;
                    load[j]++;
                    of[r] = j;
                    moved = 1;
                    break;
                }
        }
    }
}

static void devs_choose(const place_ctx_t *x, const char *cand, int *of, int *load, int fixed)
{
    for (int r = 0; r < x->req->nranks; r++) {
        of[r] = fixed ? x->dom[x->rank_dom[r]].nic : dev_nearest(x->t, cand, load, x->home[r]);
        if (of[r] >= 0)
            load[of[r]]++;
    }
    if (!fixed)
        devs_rebalance(x, cand, of, load);
}

int place_devs_assign(place_ctx_t *x, char *err, size_t errlen)
{
    const locus_topo_t *t = x->t;
    int n = x->req->nranks;
    char *nic = calloc((size_t)t->ndevs + 1, 1), *gpu = calloc((size_t)t->ndevs + 1, 1);
    int *load = calloc((size_t)t->ndevs + 1, sizeof *load);
    int *remote = calloc((size_t)t->ndevs + 1, sizeof *remote);
    int *nic_of = calloc((size_t)n, sizeof *nic_of), *gpu_of = calloc((size_t)n, sizeof *gpu_of);
    int rc = -1;
    if (!nic || !gpu || !load || !remote || !nic_of || !gpu_of)
        goto out;
    if (place_nic_candidates(t, x->req->nic_filter, nic, err, errlen) < 0)
        goto out;
    snprintf(err, errlen, "out of memory while planning");
    for (int i = 0; i < t->ndevs; i++)
        gpu[i] = t->devs[i].kind == LOCUS_DEV_GPU;
    devs_choose(x, nic, nic_of, load, x->req->map_by == LOCUS_MAP_NIC);
    devs_choose(x, gpu, gpu_of, load, 0);
    for (int r = 0; r < n; r++) {
        locus_rank_plan_t *rp = &x->plan->ranks[r];
        int i = nic_of[r], g = gpu_of[r];
        if (i >= 0) {
            rp->has_nic = 1;
            dev_copy(&rp->nic, &t->devs[i]);
            if (nic_env(rp, &t->devs[i]) < 0)
                goto out;
            int hp = home_package(x, r);
            remote[i] += t->devs[i].package >= 0 && hp >= 0 && hp != t->devs[i].package;
        }
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
    free(nic_of);
    free(gpu_of);
    return rc;
}
