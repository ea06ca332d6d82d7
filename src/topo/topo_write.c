/* `locus topo` output: the model as text or JSON. */
#include <stdlib.h>
#include <string.h>

#include "locus_topo.h"

void locus_topo_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

static void json_bitmap(FILE *out, hwloc_const_bitmap_t set)
{
    unsigned i;
    int first = 1;
    fputc('[', out);
    hwloc_bitmap_foreach_begin(i, set) {
        fprintf(out, first ? "%u" : ",%u", i);
        first = 0;
    } hwloc_bitmap_foreach_end();
    fputc(']', out);
}

static void text_bitmap(FILE *out, hwloc_const_bitmap_t set)
{
    char *s = NULL;
    if (hwloc_bitmap_list_asprintf(&s, set) >= 0 && s)
        fputs(*s ? s : "none", out);
    free(s);
}

/* NUMA nodes (CPU domains) a device's locality touches. */
static void dev_numas(const locus_topo_t *t, const locus_topo_dev_t *d, hwloc_bitmap_t out)
{
    hwloc_bitmap_zero(out);
    for (int i = 0; i < t->nnumas; i++)
        if (t->numas[i].has_cpus && hwloc_bitmap_intersects(t->numas[i].cpuset, d->cpuset))
            hwloc_bitmap_set(out, (unsigned)t->numas[i].os);
}

static const char *dev_class(const locus_topo_dev_t *d)
{
    if (d->kind == LOCUS_DEV_GPU)
        return d->vendor_id == 0x10de ? "nvidia" : d->vendor_id == 0x1002 ? "amd" : "gpu";
    return locus_topo_nic_class_name(d->nic_class);
}

/* What else sets a NIC apart in the ranking: " RDMA 100 Gb/s virtual down". */
static void text_nic_facts(FILE *out, const locus_topo_dev_t *d)
{
    if (d->rdma && d->nic_class == LOCUS_NIC_ETHERNET)
        fputs("  RDMA", out);
    if (d->speed_mbps > 0)
        fprintf(out, "  %g Gb/s", d->speed_mbps / 1000.0);
    if (d->mgmt)
        fputs("  management", out);
    if (d->is_virtual)
        fputs("  virtual", out);
    if (d->link_up == 0)
        fputs("  down", out);
    if (d->ipv4 == 0)
        fputs("  no IPv4", out);
}

static void text_core(FILE *out, const locus_topo_t *t, const locus_topo_core_t *c)
{
    fputs(" {", out);
    for (int p = 0; p < c->npus; p++) {
        const locus_topo_pu_t *pu = &t->pus[c->first_pu + p];
        fprintf(out, "%s%d%s", p ? "," : "", pu->os, pu->allowed ? "" : "*");
    }
    fputc('}', out);
}

static void text_numa(FILE *out, const locus_topo_t *t, int n)
{
    const locus_topo_numa_t *m = &t->numas[n];
    int ncores = 0;
    for (int c = 0; c < t->ncores; c++)
        ncores += t->cores[c].numa == n;
    fprintf(out, "NUMA node %d (", m->os);
    if (m->bytes)
        fprintf(out, "%.1f GiB%s", m->bytes / 1073741824.0, m->allowed ? "" : ", ");
    fprintf(out, "%s%s%s)", m->allowed ? "" : "memory disallowed", m->subtype[0] ? ", " : "",
            m->subtype);
    if (m->package >= 0)
        fprintf(out, " in package %d", t->packages[m->package].os);
    fprintf(out, ": %d cores, PUs ", ncores);
    text_bitmap(out, m->cpuset);
    fputs("\n  cores:", out);
    for (int c = 0, k = 0; c < t->ncores; c++) {
        if (t->cores[c].numa != n)
            continue;
        if (k && k % 8 == 0)
            fputs("\n        ", out);
        text_core(out, t, &t->cores[c]);
        k++;
    }
    fputc('\n', out);
}

static void text_devs(FILE *out, const locus_topo_t *t, locus_dev_kind_t kind)
{
    int any = 0;
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
    for (int i = 0; i < t->ndevs; i++) {
        const locus_topo_dev_t *d = &t->devs[i];
        if (d->kind != kind)
            continue;
        if (!any)
            fputs(kind == LOCUS_DEV_NIC ? "NICs:\n" : "GPUs:\n", out);
        any = 1;
        dev_numas(t, d, nodes);
        fprintf(out, "  %-10s %-13s %-10s NUMA ", d->name, d->pci[0] ? d->pci : "-", dev_class(d));
        if (d->is_virtual && d->numa < 0)
            fputs("any", out);
        else
            text_bitmap(out, nodes);
        if (d->kind == LOCUS_DEV_NIC && d->link_gbps > 0)
            fprintf(out, "  link %.1f GB/s", d->link_gbps);
        if (d->kind == LOCUS_DEV_NIC)
            text_nic_facts(out, d);
        if (d->kind == LOCUS_DEV_GPU)
            fprintf(out, "  index %d", d->index);
        fputs("  [", out);
        for (int k = 0; k < d->nosdevs; k++)
            fprintf(out, "%s%s", k ? " " : "", d->osdevs[k]);
        fputs("]\n", out);
    }
    if (!any)
        fputs(kind == LOCUS_DEV_NIC ? "NICs: none\n" : "GPUs: none\n", out);
    hwloc_bitmap_free(nodes);
}

/* PUs the machine has but this job may not use: those hwloc shows as
 * disallowed, and those an XML saved inside a cpuset left out entirely. */
static hwloc_bitmap_t disallowed_set(const locus_topo_t *t)
{
    hwloc_bitmap_t dis = hwloc_bitmap_dup(hwloc_topology_get_complete_cpuset(t->hw));
    hwloc_bitmap_andnot(dis, dis, t->allowed);
    return dis;
}

void locus_topo_write_text(const locus_topo_t *t, FILE *out)
{
    int ncpu_numa = 0;
    for (int i = 0; i < t->nnumas; i++)
        ncpu_numa += t->numas[i].has_cpus;
    fprintf(out, "host %s (%s): %d packages, %d NUMA nodes with CPUs, %d cores, %d PUs, %d allowed\n",
            t->host[0] ? t->host : "unknown", t->this_system ? "this machine" : "XML",
            t->npackages, ncpu_numa, t->ncores, t->npus, locus_topo_allowed_pus(t));
    fputs("allowed PUs: ", out);
    text_bitmap(out, t->allowed);
    fputc('\n', out);
    for (int p = 0; p < t->npackages; p++) {
        fprintf(out, "package %d: PUs ", t->packages[p].os);
        text_bitmap(out, t->packages[p].cpuset);
        fputc('\n', out);
    }
    for (int i = 0; i < t->nnumas; i++)
        if (t->numas[i].has_cpus)
            text_numa(out, t, i);
    int orphan = 0;
    for (int c = 0; c < t->ncores; c++)
        orphan |= t->cores[c].numa < 0;
    if (orphan) {
        fputs("cores with no NUMA node:", out);
        for (int c = 0; c < t->ncores; c++)
            if (t->cores[c].numa < 0)
                text_core(out, t, &t->cores[c]);
        fputc('\n', out);
    }
    for (int i = 0; i < t->nnumas; i++)
        if (!t->numas[i].has_cpus)
            fprintf(out, "CPU-less NUMA node %d (%.1f GiB%s%s): memory only\n", t->numas[i].os,
                    t->numas[i].bytes / 1073741824.0, t->numas[i].subtype[0] ? ", " : "",
                    t->numas[i].subtype);
    text_devs(out, t, LOCUS_DEV_NIC);
    text_devs(out, t, LOCUS_DEV_GPU);
    hwloc_bitmap_t dis = disallowed_set(t);
    if (!hwloc_bitmap_iszero(dis)) {
        fputs("disallowed PUs (outside this job's cpuset, never used; * above): ", out);
        text_bitmap(out, dis);
        fputc('\n', out);
    }
    hwloc_bitmap_free(dis);
}

static void json_numa(FILE *out, const locus_topo_t *t, int n)
{
    const locus_topo_numa_t *m = &t->numas[n];
    fprintf(out, "{\"os\":%d,\"has_cpus\":%s,\"allowed\":%s,\"bytes\":%llu,\"subtype\":",
            m->os, m->has_cpus ? "true" : "false", m->allowed ? "true" : "false", m->bytes);
    locus_topo_json_string(out, m->subtype);
    fprintf(out, ",\"package\":");
    if (m->package >= 0)
        fprintf(out, "%d", t->packages[m->package].os);
    else
        fputs("null", out);
    fputs(",\"cpus\":", out);
    json_bitmap(out, m->cpuset);
    fputs(",\"cores\":[", out);
    for (int c = 0, k = 0; c < t->ncores; c++) {
        if (t->cores[c].numa != n)
            continue;
        fputs(k++ ? ",{\"cpus\":[" : "{\"cpus\":[", out);
        const locus_topo_core_t *co = &t->cores[c];
        for (int p = 0; p < co->npus; p++)
            fprintf(out, p ? ",%d" : "%d", t->pus[co->first_pu + p].os);
        fputs("],\"disallowed\":[", out);
        for (int p = 0, q = 0; p < co->npus; p++)
            if (!t->pus[co->first_pu + p].allowed)
                fprintf(out, q++ ? ",%d" : "%d", t->pus[co->first_pu + p].os);
        fputs("]}", out);
    }
    fputs("]}", out);
}

static const char *json_tristate(int v)
{
    return v < 0 ? "null" : v ? "true" : "false";
}

static void json_devs(FILE *out, const locus_topo_t *t, locus_dev_kind_t kind)
{
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
    fputc('[', out);
    for (int i = 0, k = 0; i < t->ndevs; i++) {
        const locus_topo_dev_t *d = &t->devs[i];
        if (d->kind != kind)
            continue;
        fputs(k++ ? ",{\"name\":" : "{\"name\":", out);
        locus_topo_json_string(out, d->name);
        fputs(",\"pci\":", out);
        locus_topo_json_string(out, d->pci);
        fputs(",\"class\":", out);
        locus_topo_json_string(out, dev_class(d));
        fputs(",\"osdevs\":[", out);
        for (int j = 0; j < d->nosdevs; j++) {
            if (j)
                fputc(',', out);
            locus_topo_json_string(out, d->osdevs[j]);
        }
        dev_numas(t, d, nodes);
        fputs("],\"numa\":", out);
        json_bitmap(out, nodes);
        fputs(",\"package\":", out);
        if (d->package >= 0)
            fprintf(out, "%d", t->packages[d->package].os);
        else
            fputs("null", out);
        fprintf(out, ",\"index\":%d,\"link_gbps\":%.2f,", d->index, d->link_gbps);
        if (kind == LOCUS_DEV_NIC) {
            fputs("\"netdev\":", out);
            if (d->netdev[0])
                locus_topo_json_string(out, d->netdev);
            else
                fputs("null", out);
            fprintf(out, ",\"rdma\":%s,\"virtual\":%s,\"link_up\":%s,\"ipv4\":%s,"
                    "\"speed_mbps\":%d,\"management\":%s,", d->rdma ? "true" : "false",
                    d->is_virtual ? "true" : "false", json_tristate(d->link_up),
                    json_tristate(d->ipv4), d->speed_mbps, d->mgmt ? "true" : "false");
        }
        fputs("\"cpus\":", out);
        json_bitmap(out, d->cpuset);
        fputc('}', out);
    }
    fputc(']', out);
    hwloc_bitmap_free(nodes);
}

void locus_topo_write_json(const locus_topo_t *t, FILE *out)
{
    hwloc_bitmap_t dis = disallowed_set(t);
    fputs("{\"host\":", out);
    locus_topo_json_string(out, t->host);
    fprintf(out, ",\"this_system\":%s,\"npus\":%d,\"ncores\":%d,\"allowed_cpus\":",
            t->this_system ? "true" : "false", t->npus, t->ncores);
    json_bitmap(out, t->allowed);
    fputs(",\"disallowed_cpus\":", out);
    json_bitmap(out, dis);
    fputs(",\"packages\":[", out);
    for (int p = 0; p < t->npackages; p++) {
        fprintf(out, "%s{\"os\":%d,\"cpus\":", p ? "," : "", t->packages[p].os);
        json_bitmap(out, t->packages[p].cpuset);
        fputc('}', out);
    }
    fputs("],\"numa\":[", out);
    for (int i = 0; i < t->nnumas; i++) {
        if (i)
            fputc(',', out);
        json_numa(out, t, i);
    }
    fputs("],\"nics\":", out);
    json_devs(out, t, LOCUS_DEV_NIC);
    fputs(",\"gpus\":", out);
    json_devs(out, t, LOCUS_DEV_GPU);
    fputs("}\n", out);
    hwloc_bitmap_free(dis);
}
