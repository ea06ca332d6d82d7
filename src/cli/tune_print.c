/* `locus tune`'s output: the calibration table and the chosen values, as
 * text or JSON (also for `locus tune --show`). */
#include "tune_print.h"

#include "locus_topo.h"
#include "locus_tunables.h"

#include <stdlib.h>
#include <string.h>

/* Why LOCUS_COLL_PAIR_MSG_MIN is `value`. */
static void pair_reason(const locus_tune_t *t, const char *value, char *out, size_t len)
{
    char last[32];
    locus_size_str(last, sizeof last, t->npair_sizes ? t->pair_sizes[t->npair_sizes - 1] : 0);
    if (!strcmp(value, LOCUS_TUNE_NEVER))
        snprintf(out, len, "2 ranks' allreduce faster through the segment up to %s: never "
                           "as messages", last);
    else
        snprintf(out, len, "2 ranks' allreduce as messages as fast as through the segment "
                           "(within %.0f %%) from there up to %s", LOCUS_TUNE_NOISE * 100, last);
}

/* Why the value of `name` is what it is, in a few words. */
static void value_reason(const locus_tune_t *t, const char *name, char *out, size_t len)
{
    char last[32];
    locus_size_str(last, sizeof last, t->nsizes ? t->sizes[t->nsizes - 1] : 0);
    const char *chunk = locus_tune_value(t, "LOCUS_SHM_CHUNK_SIZE");
    const char *max = locus_tune_value(t, "LOCUS_SHM_CMA_MAX");
    if (!strcmp(name, "LOCUS_SHM_CHUNK_SIZE"))
        snprintf(out, len, "the fastest pipeline (geometric mean over the sizes; "
                           "the shipped default within %.0f %%)", LOCUS_TUNE_NOISE * 100);
    else if (!strcmp(name, "LOCUS_COLL_PAIR_MSG_MIN"))
        pair_reason(t, locus_tune_value(t, name), out, len);
    else if (!strcmp(name, "LOCUS_SHM_CMA_MAX"))
        snprintf(out, len, "the %s pipeline faster again from there", chunk);
    else if (!strcmp(locus_tune_value(t, name), LOCUS_TUNE_NEVER))
        snprintf(out, len, "CMA never as fast as the %s pipeline up to %s: never", chunk, last);
    else
        snprintf(out, len, "CMA at least as fast as the %s pipeline from there %s %s%s", chunk,
                 max ? "to" : "up to", max ? max : last, max ? " (its best run of sizes)" : "");
}

/* A table's header (sizes) or row (values; 0 prints "-") after its label. */
static void text_line(FILE *out, const char *label, const long *sizes, const double *v, int n)
{
    char s[32];
    fprintf(out, "%-14s", label);
    for (int i = 0; i < n; i++) {
        if (sizes)
            locus_size_str(s, sizeof s, sizes[i]);
        else if (v[i] > 0)
            snprintf(s, sizeof s, "%.2f", v[i]);
        else
            snprintf(s, sizeof s, "-");
        fprintf(out, " %7s", s);
    }
    fprintf(out, "\n");
}

/* A JSON array of sizes (v NULL) or of values. */
static void json_array(FILE *out, const long *sizes, const double *v, int n)
{
    fprintf(out, "[");
    for (int i = 0; i < n; i++)
        if (sizes)
            fprintf(out, "%s%ld", i ? ", " : "", sizes[i]);
        else
            fprintf(out, "%s%.3f", i ? ", " : "", v[i]);
    fprintf(out, "]");
}

void tune_print_text(const locus_tune_t *t, const char *file, FILE *out)
{
    fprintf(out, "Calibration of %s, %d CPUs online, Linux %s (%s%s%s)\n", t->key.cpu,
            t->key.ncpus, t->key.kernel, t->date[0] ? t->date : "undated",
            t->mode[0] ? ", " : "", t->mode);
    fprintf(out, "Large-message rates between 2 ranks, GB/s:\n");
    text_line(out, "path", t->sizes, NULL, t->nsizes);
    for (int p = 0; p < t->npaths; p++) {
        const locus_tune_path_t *pa = &t->paths[p];
        char s[32], label[48] = "cma";
        if (pa->chunk) {
            locus_size_str(s, sizeof s, pa->chunk);
            snprintf(label, sizeof label, "pipeline %s", s);
        }
        text_line(out, label, NULL, pa->gbs, t->nsizes);
    }
    if (t->nways) {
        fprintf(out, "Allreduce of 2 ranks with a core each, us:\n");
        text_line(out, "way", t->pair_sizes, NULL, t->npair_sizes);
    }
    for (int w = 0; w < t->nways; w++)
        text_line(out, t->ways[w].name, NULL, t->ways[w].us, t->npair_sizes);
    fprintf(out, "Chosen:%s\n", t->nvalues ? "" : " nothing (the shipped defaults stay)");
    for (int i = 0; i < t->nvalues; i++) {
        char why[200], kv[80];
        value_reason(t, t->values[i].name, why, sizeof why);
        snprintf(kv, sizeof kv, "%s=%s", t->values[i].name, t->values[i].value);
        fprintf(out, "  %-30s %s\n", kv, why);
    }
    for (int i = 0; i < t->nnotes; i++)
        fprintf(out, "Note: %s\n", t->notes[i]);
    if (file && *file)
        fprintf(out, "Cache: %s\n", file);
    /* Say so when the environment hides a tuned value. */
    for (int i = 0; i < t->nvalues; i++) {
        const char *env = getenv(t->values[i].name);
        if (env && *env)
            fprintf(out, "Note: %s=%s is set in the environment and overrides the tuned value\n",
                    t->values[i].name, env);
    }
}

void tune_print_json(const locus_tune_t *t, const char *file, int saved, FILE *out)
{
    fprintf(out, "{\"file\": ");
    locus_topo_json_string(out, file ? file : "");
    fprintf(out, ", \"saved\": %s,\n \"key\": {\"cpu\": ", saved ? "true" : "false");
    locus_topo_json_string(out, t->key.cpu);
    fprintf(out, ", \"cpus\": %d, \"kernel\": ", t->key.ncpus);
    locus_topo_json_string(out, t->key.kernel);
    fprintf(out, "},\n \"date\": ");
    locus_topo_json_string(out, t->date);
    fprintf(out, ", \"mode\": ");
    locus_topo_json_string(out, t->mode);
    fprintf(out, ",\n \"sizes\": ");
    json_array(out, t->sizes, NULL, t->nsizes);
    fprintf(out, ",\n \"paths\": [");
    for (int p = 0; p < t->npaths; p++) {
        fprintf(out, "%s\n  {\"name\": ", p ? "," : "");
        locus_topo_json_string(out, t->paths[p].name);
        fprintf(out, ", \"chunk\": %ld, \"gbs\": ", t->paths[p].chunk);
        json_array(out, NULL, t->paths[p].gbs, t->nsizes);
        fprintf(out, "}");
    }
    fprintf(out, "],\n \"pair_sizes\": ");
    json_array(out, t->pair_sizes, NULL, t->npair_sizes);
    fprintf(out, ",\n \"pair_ways\": [");
    for (int w = 0; w < t->nways; w++) {
        fprintf(out, "%s\n  {\"name\": ", w ? "," : "");
        locus_topo_json_string(out, t->ways[w].name);
        fprintf(out, ", \"us\": ");
        json_array(out, NULL, t->ways[w].us, t->npair_sizes);
        fprintf(out, "}");
    }
    fprintf(out, "],\n \"chosen\": {");
    for (int i = 0; i < t->nvalues; i++) {
        fprintf(out, "%s", i ? ", " : "");
        locus_topo_json_string(out, t->values[i].name);
        fprintf(out, ": ");
        locus_topo_json_string(out, t->values[i].value);
    }
    fprintf(out, "},\n \"notes\": [");
    for (int i = 0; i < t->nnotes; i++) {
        fprintf(out, "%s", i ? ", " : "");
        locus_topo_json_string(out, t->notes[i]);
    }
    fprintf(out, "]}\n");
}
