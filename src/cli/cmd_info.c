/* locus info: the tunables table the code reads, printed. */
#include <stdio.h>
#include <string.h>

#include "locus_cli.h"
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

int locus_cmd_info(int argc, char **argv)
{
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: locus info [--json]\n"
                   "Says which MPI ABI the library implements and lists every LOCUS_*\n"
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
        printf("Tunables (environment variables)\n");
        locus_tunables_print(stdout);
        return 0;
    }
    int n;
    const locus_tunable_t *t = locus_tunables(&n);
    printf("{\"version\": \"%s\", \"abi\": {\"standard\": \"MPI-5\", \"version\": \"1.0\", "
           "\"soname\": \"libmpi_abi.so.1\"}, \"tunables\": [", LOCUS_VERSION);
    for (int i = 0; i < n; i++) {
        printf("%s\n  {\"name\": ", i ? "," : "");
        json_str(stdout, t[i].name);
        printf(", \"default\": ");
        json_str(stdout, t[i].default_val);
        printf(", \"value\": ");
        json_str(stdout, locus_tunable_str(t[i].name));
        printf(", \"doc\": ");
        json_str(stdout, t[i].doc);
        printf("}");
    }
    printf("\n]}\n");
    return 0;
}
