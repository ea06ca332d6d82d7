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
    printf("},\n \"tunables\": [");
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
