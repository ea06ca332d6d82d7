/* Which NICs a job may use (the fabric, not the management port), the
 * further rails of each rank, and what a rank's NICs export. */
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

/* The ranking tier: 0 an HPC fabric, 1 Ethernet, 2 a management port,
 * 3 a virtual interface (a host's physical port is its way out; a
 * Docker host's veths are not), 4 a port that is down, or unconfigured:
 * no IPv4 address and no verbs device to use it without one. */
static int nic_tier(const locus_topo_dev_t *d)
{
    if (d->link_up == 0 || (d->ipv4 == 0 && !d->rdma))
        return 4;
    if (d->is_virtual)
        return 3;
    if (d->nic_class != LOCUS_NIC_ETHERNET)
        return 0;
    return d->mgmt ? 2 : 1;
}

/* Negative when a ranks before b, 0 when they are of one class. Ethernet
 * ports rank by link speed (known only on this machine), then by PCI
 * link, then RDMA-capable (RoCE, usNIC) first; the fabrics and the ports
 * that are down are each one class. */
static int nic_rank_cmp(const locus_topo_dev_t *a, const locus_topo_dev_t *b)
{
    int ta = nic_tier(a), tb = nic_tier(b);
    if (ta != tb)
        return ta - tb;
    if (ta == 0 || ta == 4)
        return 0;
    if (a->speed_mbps != b->speed_mbps)
        return a->speed_mbps > b->speed_mbps ? -1 : 1;
    if (a->link_gbps != b->link_gbps)
        return a->link_gbps > b->link_gbps ? -1 : 1;
    return b->rdma - a->rdma;
}

static int filter_apply(const locus_topo_t *t, const char *filter, char *cand,
                        char *err, size_t errlen)
{
    char buf[256], *save = NULL;
    int n = 0;
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
    for (int i = 0; i < t->ndevs; i++)
        n += cand[i];
    return n;
}

int place_nic_candidates(const locus_topo_t *t, const char *filter, char *cand,
                         char *err, size_t errlen)
{
    memset(cand, 0, (size_t)t->ndevs);
    /* The user's list overrides the ranking: `--nic eth0` on a node with
     * InfiniBand means eth0. */
    if (filter[0])
        return filter_apply(t, filter, cand, err, errlen);
    int best = -1;
    for (int i = 0; i < t->ndevs; i++)
        if (t->devs[i].kind == LOCUS_DEV_NIC && (best < 0 || nic_rank_cmp(&t->devs[i], &t->devs[best]) < 0))
            best = i;
    int n = 0;
    for (int i = 0; best >= 0 && i < t->ndevs; i++) {
        cand[i] = t->devs[i].kind == LOCUS_DEV_NIC && nic_rank_cmp(&t->devs[i], &t->devs[best]) == 0;
        n += cand[i];
    }
    return n;
}

int place_rails_choose(const place_ctx_t *x, const char *cand, int *rails, int nrails)
{
    const locus_topo_t *t = x->t;
    int *load = calloc((size_t)t->ndevs + 1, sizeof *load);
    if (!load)
        return -1;
    for (int k = 1; k < nrails; k++) {
        memset(load, 0, ((size_t)t->ndevs + 1) * sizeof *load);
        for (int r = 0; r < x->req->nranks; r++) {
            int *mine = &rails[(size_t)r * (size_t)nrails];
            int best = -1, bd = 0;
            for (int j = 0; mine[0] >= 0 && j < t->ndevs; j++) {
                int taken = 0;
                for (int q = 0; q < k && !taken; q++)
                    taken = mine[q] == j;
                if (!cand[j] || taken)
                    continue;
                int d = locus_topo_dev_distance(t, j, x->home[r]);
                if (best < 0 || d < bd || (d == bd && load[j] < load[best])) {
                    best = j;
                    bd = d;
                }
            }
            mine[k] = best;
            if (best >= 0)
                load[best]++;
        }
    }
    free(load);
    return 0;
}

/* Appends `word` to a comma-separated list in buf. */
static void list_add(char *buf, size_t len, const char *word)
{
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, "%s%s", used ? "," : "", word);
}

int place_nic_env(locus_rank_plan_t *rp, const locus_topo_t *t, const int *rails, int nrails)
{
    char ucx[LOCUS_PLACE_RAILS_MAX * (LOCUS_TOPO_NAME_MAX + 3)] = "";
    char ifaces[sizeof ucx] = "", pcis[sizeof ucx] = "", one[LOCUS_TOPO_NAME_MAX + 3];
    int on_pci = 0;
    const locus_topo_dev_t *primary = &t->devs[rails[0]];
    for (int k = 0; k < nrails && rails[k] >= 0; k++) {
        const locus_topo_dev_t *d = &t->devs[rails[k]];
        /* libfabric names a fabric's domains its own way (hfi1_0, cxi0,
         * mlx5_0, rdmap0s31-rdm): its fi_nic's PCI address is what
         * matches hwloc's device whatever the name. */
        list_add(pcis, sizeof pcis, d->pci[0] ? d->pci : "-");
        on_pci |= d->pci[0] != '\0';
        if (d->rdma)
            snprintf(one, sizeof one, "%s:1", d->name);
        else
            snprintf(one, sizeof one, "%s", d->netdev[0] ? d->netdev : d->name);
        list_add(ucx, sizeof ucx, one);
        /* Only what a socket can be bound to: not an EFA or bare verbs
         * device (no interface), nor an interface without an address
         * (an HCA used through verbs only). */
        if (d->netdev[0] && d->ipv4 != 0)
            list_add(ifaces, sizeof ifaces, d->netdev);
    }
    if (place_env_add(rp, "LOCUS_NIC", primary->name) < 0
        || place_env_add(rp, "UCX_NET_DEVICES", ucx) < 0
        || (ifaces[0] && place_env_add(rp, "LOCUS_NET_IFACES", ifaces) < 0)
        || (on_pci && place_env_add(rp, "LOCUS_NIC_PCI", pcis) < 0))
        return -1;
    /* PSM2 picks its Omni-Path unit from HFI_UNIT. */
    if (!strncmp(primary->name, "hfi1_", 5) && place_env_add(rp, "HFI_UNIT", primary->name + 5) < 0)
        return -1;
    return 0;
}
