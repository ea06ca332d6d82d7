/* Choosing LOCUS_SHM_CHUNK_SIZE and LOCUS_SHM_CMA_MIN/MAX from measured rates,
 * LOCUS_COLL_PAIR_MSG_MIN from measured collective times. */
#include "locus_tune.h"
#include "locus_tunables.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void locus_tune_note(locus_tune_t *t, const char *fmt, ...)
{
    if (t->nnotes == LOCUS_TUNE_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->notes[t->nnotes], sizeof t->notes[0], fmt, ap);
    va_end(ap);
    /* One line each: the file keeps a note per line. */
    for (char *c = t->notes[t->nnotes]; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    t->nnotes++;
}

const char *locus_tune_value(const locus_tune_t *t, const char *name)
{
    for (int i = 0; i < t->nvalues; i++)
        if (!strcmp(t->values[i].name, name))
            return t->values[i].value;
    return NULL;
}

int locus_tune_unsteady(const double *lo, const double *hi, int n, double *ratio)
{
    int at = -1;
    *ratio = 1;
    for (int i = 0; i < n; i++) {
        double r = lo[i] > 0 && hi[i] > 0 ? hi[i] / lo[i] : 1;
        if (r > *ratio) {
            *ratio = r;
            at = i;
        }
    }
    return *ratio > LOCUS_TUNE_UNSTEADY ? at : -1;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double locus_tune_median(double *v, int n)
{
    int m = 0;
    for (int i = 0; i < n; i++)
        if (v[i] > 0)
            v[m++] = v[i];
    if (m == 0)
        return 0;
    qsort(v, (size_t)m, sizeof *v, by_value);
    return m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
}

static void set_value(locus_tune_t *t, const char *name, const char *value)
{
    if (t->nvalues == LOCUS_TUNE_MAX_VALUES)
        return;
    locus_tune_value_t *v = &t->values[t->nvalues++];
    snprintf(v->name, sizeof v->name, "%s", name);
    snprintf(v->value, sizeof v->value, "%s", value);
}

static int complete(const locus_tune_t *t, const locus_tune_path_t *p)
{
    for (int i = 0; i < t->nsizes; i++)
        if (!(p->gbs[i] > 0))
            return 0;
    return t->nsizes > 0;
}

/* Sizes (use[i] = 1) at which every pipeline path measured at all has a
 * rate: chunks are compared on equal terms only. Returns their number. */
static int common_sizes(const locus_tune_t *t, int *use)
{
    int n = 0;
    for (int i = 0; i < t->nsizes; i++) {
        use[i] = 1;
        int any = 0;
        for (int p = 0; p < t->npaths; p++) {
            const locus_tune_path_t *c = &t->paths[p];
            int measured = 0;
            for (int j = 0; j < t->nsizes; j++)
                measured |= c->gbs[j] > 0;
            if (!c->chunk || !measured)
                continue;
            any = 1;
            if (!(c->gbs[i] > 0))
                use[i] = 0;
        }
        use[i] &= any;
        n += use[i];
    }
    return n;
}

/* The geometric mean of p's rates over the sizes in use, or 0 when one
 * is missing. (Logarithms weigh a 10 % gain alike at every size.) */
static double geo_mean(const locus_tune_t *t, const locus_tune_path_t *p, const int *use)
{
    double sum = 0;
    int n = 0;
    for (int i = 0; i < t->nsizes; i++) {
        if (!use[i])
            continue;
        if (!(p->gbs[i] > 0))
            return 0;
        sum += log(p->gbs[i]);
        n++;
    }
    return n ? exp(sum / n) : 0;
}

/* The pipeline path with the best geometric mean over the sizes in use,
 * or NULL; the shipped default's when it is within LOCUS_TUNE_NOISE of the
 * best, so that noise alone does not move the value. */
static const locus_tune_path_t *best_pipe(const locus_tune_t *t, const int *use)
{
    const locus_tune_path_t *best = NULL, *shipped = NULL;
    double best_mean = 0, shipped_mean = 0;
    long def = 0;
    const locus_tunable_t *row = locus_tunable_find("LOCUS_SHM_CHUNK_SIZE");
    if (row)
        locus_parse_size(row->default_val, &def);
    for (int p = 0; p < t->npaths; p++) {
        const locus_tune_path_t *c = &t->paths[p];
        double mean = c->chunk ? geo_mean(t, c, use) : 0;
        if (mean > best_mean) {
            best = c;
            best_mean = mean;
        }
        if (mean > 0 && c->chunk == def) {
            shipped = c;
            shipped_mean = mean;
        }
    }
    return shipped && shipped_mean >= best_mean * (1 - LOCUS_TUNE_NOISE) ? shipped : best;
}

/* LOCUS_SHM_CHUNK_SIZE, LOCUS_SHM_CMA_MIN and LOCUS_SHM_CMA_MAX. */
static void choose_shm(locus_tune_t *t)
{
    int use[LOCUS_TUNE_MAX_SIZES];
    int nuse = common_sizes(t, use);
    const locus_tune_path_t *pipe = nuse ? best_pipe(t, use) : NULL, *cma = NULL;
    for (int p = 0; p < t->npaths; p++)
        if (!t->paths[p].chunk)
            cma = &t->paths[p];
    char v[32], a[32], b[32];
    if (!pipe) {
        locus_tune_note(t, "no size was measured with every pipeline chunk: "
                           "LOCUS_SHM_CHUNK_SIZE and LOCUS_SHM_CMA_MIN keep their defaults");
        return;
    }
    locus_size_str(v, sizeof v, pipe->chunk);
    set_value(t, "LOCUS_SHM_CHUNK_SIZE", v);
    if (nuse < t->nsizes) {
        int lo = 0, hi = t->nsizes - 1;
        while (!use[lo])
            lo++;
        while (!use[hi])
            hi--;
        locus_size_str(a, sizeof a, t->sizes[lo]);
        locus_size_str(b, sizeof b, t->sizes[hi]);
        locus_tune_note(t, "LOCUS_SHM_CHUNK_SIZE chosen from %d of %d sizes (%s..%s): the "
                           "others were not measured with every chunk", nuse, t->nsizes, a, b);
    }
    if (!cma || !complete(t, cma) || !complete(t, pipe)) {
        locus_tune_note(t, "CMA and the %s pipeline were not both measured at every size: "
                           "LOCUS_SHM_CMA_MIN keeps its default", v);
        return;
    }
    /* CMA's best run of sizes: plain CMA on a Xeon VM won from 32 KiB to
     * 1 MiB by up to 70 % and lost out of cache (2-4 MiB: 12 GB/s against
     * 21), where a threshold "from here up" chose never. */
    int from = t->nsizes, to = t->nsizes;
    double best = -1;
    for (int a = 0; a < t->nsizes; a++) {
        double gain = 0;
        for (int b = a; b < t->nsizes && cma->gbs[b] >= pipe->gbs[b]; b++) {
            gain += log(cma->gbs[b] / pipe->gbs[b]);
            /* Of runs that gain alike, the longer: sizes where the two tie
             * count for CMA. */
            if (gain > best || (gain == best && b + 1 - a > to - from)) {
                best = gain;
                from = a;
                to = b + 1;
            }
        }
    }
    if (from == t->nsizes)
        snprintf(v, sizeof v, "%s", LOCUS_TUNE_NEVER);
    else
        locus_size_str(v, sizeof v, t->sizes[from]);
    set_value(t, "LOCUS_SHM_CMA_MIN", v);
    if (to < t->nsizes) {
        locus_size_str(v, sizeof v, t->sizes[to]);
        set_value(t, "LOCUS_SHM_CMA_MAX", v);
    }
}

static const locus_tune_way_t *way_named(const locus_tune_t *t, const char *name)
{
    for (int w = 0; w < t->nways; w++)
        if (!strcmp(t->ways[w].name, name))
            return &t->ways[w];
    return NULL;
}

static int way_complete(const locus_tune_t *t, const locus_tune_way_t *w)
{
    for (int i = 0; w && i < t->npair_sizes; i++)
        if (!(w->us[i] > 0))
            return 0;
    return w && t->npair_sizes > 0;
}

/* LOCUS_COLL_PAIR_MSG_MIN: down from the largest pair size, messages hold
 * the sizes where the segment is not faster by more than the noise (the
 * shipped default is messages). On a Xeon VM messages won from 2 KiB; on
 * the EPYC VM the segment won up to 16 KiB by 25-30 %. */
static void choose_pair(locus_tune_t *t)
{
    if (!t->nways)
        return; /* not measured: nothing said */
    const locus_tune_way_t *seg = way_named(t, "segment"), *msg = way_named(t, "messages");
    if (!way_complete(t, seg) || !way_complete(t, msg)) {
        locus_tune_note(t, "the pair's allreduce was not measured both ways at every size: "
                           "LOCUS_COLL_PAIR_MSG_MIN keeps its default");
        return;
    }
    int from = t->npair_sizes;
    while (from > 0 && !(seg->us[from - 1] * (1 + LOCUS_TUNE_NOISE) < msg->us[from - 1]))
        from--;
    char v[32];
    if (from == t->npair_sizes)
        snprintf(v, sizeof v, "%s", LOCUS_TUNE_NEVER);
    else
        locus_size_str(v, sizeof v, t->pair_sizes[from]);
    set_value(t, "LOCUS_COLL_PAIR_MSG_MIN", v);
}

void locus_tune_choose(locus_tune_t *t)
{
    t->nvalues = 0;
    choose_shm(t);
    choose_pair(t);
}
