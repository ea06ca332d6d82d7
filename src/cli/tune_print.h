/* tune_print.h — the calibration table as `locus tune` prints it. */
#ifndef LOCUS_TUNE_PRINT_H
#define LOCUS_TUNE_PRINT_H

#include <stdio.h>

#include "locus_tune.h"

/* The table (rates per path and size, GB/s), the chosen values with their
 * reason, the notes, the cache file (when not NULL), and a note for every
 * tuned variable the environment overrides. */
void tune_print_text(const locus_tune_t *t, const char *file, FILE *out);

/* The same as one JSON object: file, saved, key, date, mode, sizes, paths
 * (name, chunk, gbs per size), chosen, notes. */
void tune_print_json(const locus_tune_t *t, const char *file, int saved, FILE *out);

#endif
