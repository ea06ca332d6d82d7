/* locus info: the tunables table the code reads, printed, with the values
 * `locus tune` measured for this machine and where each value comes from. */
#include <stdio.h>
#include <string.h>

#include "locus_cli.h"
#include "locus_tune.h"
#include "locus_tunables.h"

static void json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static const char *const state_word[] = { "used", "missing", "foreign", "corrupt", "off" };
static const char *const source_word[] = { "default", "environment", "tuned" };

/* The variables `locus tune` sets: value, and where it comes from. */
static void print_tuned(FILE *out)
{
    const char *path, *detail;
    locus_tune_state_t st = locus_tunables_cache(&path, &detail);
    fprintf(out, "Self-calibration (locus tune): %s [%s]\n", *path ? path : "no cache file",
            state_word[st]);
    if (*detail)
        fprintf(out, "  %s\n", detail);
    int n;
    const locus_tunable_t *t = locus_tunables(&n);
    for (int i = 0; i < n; i++) {
        if (!locus_tune_sets(t[i].name))
            continue;
        locus_tunable_source_t src = locus_tunable_source(t[i].name);
        const char *tuned = locus_tunable_tuned(t[i].name);
        fprintf(out, "  %-22s %-8s ", t[i].name, locus_tunable_str(t[i].name));
        if (src == LOCUS_TUNABLE_TUNED)
            fprintf(out, "tuned: %s\n", path);
        else if (src == LOCUS_TUNABLE_ENV && tuned)
            fprintf(out, "environment (tuned: %s)\n", tuned);
        else
            fprintf(out, "%s\n", source_word[src]);
    }
    fputc('\n', out);
}

#if LOCUS_HAVE_OFI
#include "locus_transport.h"
#endif

enum { NET_MAX = 32 };

/* Between nodes: what LOCUS_TRANSPORTS=auto takes, and every domain
 * libfabric offers the ofi transport (provider, domain, PCI address). */
static void print_network(FILE *out, int json)
{
#if LOCUS_HAVE_OFI
    locus_ofi_domain_t d[NET_MAX];
    int n = locus_ofi_domains(d, NET_MAX), shown = n < NET_MAX ? n : NET_MAX;
    const char *pick = n > 0 && !d[0].software ? "ofi" : "tcp";
#else
    int n = 0, shown = 0;
    const char *pick = "tcp";
#endif
    if (json) {
        fprintf(out, " \"network\": {\"auto\": \"%s\", \"ofi_built\": %s, \"ofi_domains\": [",
                pick, LOCUS_HAVE_OFI ? "true" : "false");
#if LOCUS_HAVE_OFI
        for (int k = 0; k < shown; k++) {
            fprintf(out, "%s{\"provider\": ", k ? ", " : "");
            json_str(out, d[k].provider);
            fprintf(out, ", \"domain\": ");
            json_str(out, d[k].domain);
            fprintf(out, ", \"pci\": ");
            json_str(out, d[k].pci);
            fprintf(out, ", \"fabric\": %s}", d[k].software ? "false" : "true");
        }
#endif
        fprintf(out, "]},\n");
        return;
    }
    fprintf(out, "Network between nodes (LOCUS_TRANSPORTS=auto): %s", pick);
    if (!LOCUS_HAVE_OFI)
        fprintf(out, " (built without libfabric: no ofi transport)\n\n");
    else if (n == 0)
        fprintf(out, " (libfabric offers no reliable-datagram provider)\n\n");
    else
        fprintf(out, " (libfabric's first provider%s)\n  libfabric domains, first "
                "preferred (FI_PROVIDER, LOCUS_OFI_PROVIDER choose):\n",
                !strcmp(pick, "ofi") ? " is a fabric" : " is a software one, not a fabric");
#if LOCUS_HAVE_OFI
    for (int k = 0; k < shown; k++)
        fprintf(out, "    %-16s %-16s %-13s %s\n", d[k].provider, d[k].domain,
                d[k].pci[0] ? d[k].pci : "-", d[k].software ? "software" : "fabric");
    if (n > shown)
        fprintf(out, "    ... and %d more\n", n - shown);
    if (n > 0)
        fputc('\n', out);
#endif
    (void)shown;
}

int locus_cmd_info(int argc, char **argv)
{
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: locus info [--json]\n"
                   "Says which MPI ABI the library implements, which values come from\n"
                   "this machine's calibration (locus tune), and lists every LOCUS_*\n"
                   "environment variable, its value, default and meaning.\n");
            return 0;
        } else {
            fprintf(stderr, "locus info: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    if (!json) {
        printf("Locus %s\nMPI interface: the MPI-5 standard ABI, version 1.0 "
               "(liblocusmpi.so.0, also libmpi_abi.so.1)\n\n", LOCUS_VERSION);
        print_tuned(stdout);
        print_network(stdout, 0);
        printf("Tunables (environment variables)\n");
        locus_tunables_print(stdout);
        return 0;
    }
    int n;
    const locus_tunable_t *t = locus_tunables(&n);
    const char *path, *detail;
    locus_tune_state_t st = locus_tunables_cache(&path, &detail);
    printf("{\"version\": \"%s\", \"abi\": {\"standard\": \"MPI-5\", \"version\": \"1.0\", "
           "\"soname\": \"libmpi_abi.so.1\"},\n \"tune\": {\"file\": ", LOCUS_VERSION);
    json_str(stdout, path);
    printf(", \"state\": \"%s\", \"detail\": ", state_word[st]);
    json_str(stdout, detail);
    printf("},\n");
    print_network(stdout, 1);
    printf(" \"tunables\": [");
    for (int i = 0; i < n; i++) {
        printf("%s\n  {\"name\": ", i ? "," : "");
        json_str(stdout, t[i].name);
        printf(", \"default\": ");
        json_str(stdout, t[i].default_val);
        printf(", \"value\": ");
        json_str(stdout, locus_tunable_shown(t[i].name));
        printf(", \"source\": \"%s\"", source_word[locus_tunable_source(t[i].name)]);
        const char *tuned = locus_tunable_tuned(t[i].name);
        if (tuned) {
            printf(", \"tuned\": ");
            json_str(stdout, tuned);
        }
        printf(", \"doc\": ");
        json_str(stdout, t[i].doc);
        printf("}");
    }
    printf("\n]}\n");
    return 0;
}
