/* What libfabric offers the ofi transport here (locus_transport.h's
 * locus_ofi_domains), for `locus info`. */
#include "ofi_tp.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int listed(const locus_ofi_domain_t *out, int n, const char *prov, const char *dom)
{
    for (int k = 0; k < n; k++)
        if (!strcmp(out[k].provider, prov) && !strcmp(out[k].domain, dom))
            return 1;
    return 0;
}

int locus_ofi_domains(locus_ofi_domain_t *out, int max)
{
    struct fi_info *h = ofi_hints_make(0), *all = NULL;
    int n = 0, shown = 0;
    if (h && fi_getinfo(OFI_API, NULL, NULL, 0, h, &all) == 0) {
        for (struct fi_info *i = all; i; i = i->next) {
            const char *prov = i->fabric_attr->prov_name, *dom = i->domain_attr->name;
            if (listed(out, shown, prov, dom))
                continue;
            n++;
            if (shown >= max)
                continue;
            locus_ofi_domain_t *d = &out[shown++];
            snprintf(d->provider, sizeof d->provider, "%s", prov);
            snprintf(d->domain, sizeof d->domain, "%s", dom);
            d->pci[0] = '\0';
            if (i->nic && i->nic->bus_attr && i->nic->bus_attr->bus_type == FI_BUS_PCI) {
                const struct fi_pci_attr *p = &i->nic->bus_attr->attr.pci;
                snprintf(d->pci, sizeof d->pci, "%04x:%02x:%02x.%x", p->domain_id, p->bus_id,
                         p->device_id, p->function_id);
            }
            d->software = locus_ofi_is_software(prov);
        }
    }
    if (all)
        fi_freeinfo(all);
    if (h)
        fi_freeinfo(h);
    return n;
}

/* Whether the kernel shows a device a fabric provider could drive: an RDMA
 * device (verbs, efa, usnic; hfi1 and qib register one too), an Omni-Path
 * or PSM HFI, a Slingshot or Aries NIC. */
static int fabric_device_present(void)
{
    static const char *const devices[] = { "/dev/hfi1_*", "/dev/ipath*", "/dev/cxi*",
                                           "/dev/kgni*", "/sys/class/infiniband/*" };
    for (size_t i = 0; i < sizeof devices / sizeof devices[0]; i++) {
        glob_t g;
        int found = glob(devices[i], 0, NULL, &g) == 0 && g.gl_pathc > 0;
        globfree(&g);
        if (found)
            return 1;
    }
    return 0;
}

void locus_ofi_probe(char *prov, size_t provlen)
{
    locus_ofi_domain_t first;
    prov[0] = '\0';
    /* Without such a device libfabric can offer only its software
     * providers, and its first fi_getinfo costs every rank 0.3 s (it reads
     * /proc/kallsyms twice here): tcp is the answer without asking. A
     * provider named in FI_PROVIDER or LOCUS_OFI_PROVIDER is asked for. */
    const char *want = getenv("LOCUS_OFI_PROVIDER");
    if (!fabric_device_present() && !getenv("FI_PROVIDER") && !(want && *want))
        return;
    if (locus_ofi_domains(&first, 1) > 0)
        snprintf(prov, provlen, "%s", first.provider);
}
