/*
 * shm_path.c — the faster large-message path per peer and size class
 * (shm_path.h).
 */
#include "shm_path.h"

#include <time.h>

uint64_t shm_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int size_class(uint64_t want)
{
    int c = 0;
    for (uint64_t s = (uint64_t)SHM_PATH_MIN * 2; s <= want && c < SHM_PATH_CLASSES - 1; s *= 2)
        c++;
    return c;
}

int shm_path_class(uint64_t want)
{
    return want < SHM_PATH_MIN ? -1 : size_class(want);
}

/* The rule keeps its path unless the other is clearly faster: the two
 * measures are not exactly alike (the pipeline's includes each busy
 * stretch's start), and a near tie is not worth a switch. */
static int best_of(const double *r, int rule, double margin)
{
    return r[!rule] > margin * r[rule] ? !rule : rule;
}

int shm_path_best(const shm_path_t *pt, uint64_t want, int rule)
{
    if (want < SHM_PATH_MIN)
        return rule;
    const double *r = pt->rate[size_class(want)];
    return r[0] == 0 || r[1] == 0 ? rule : best_of(r, rule, SHM_PATH_STREAM_MARGIN);
}

int shm_path_choose(shm_path_t *pt, uint64_t want, int rule)
{
    if (want < SHM_PATH_MIN)
        return rule;
    int c = size_class(want);
    uint32_t k = pt->n[c]++;
    const double *r = pt->rate[c];
    if (r[rule] == 0)
        return rule;
    if (r[!rule] == 0)
        return !rule;
    int best = best_of(r, rule, SHM_PATH_MARGIN);
    /* A probe is two messages: the first by a path not used for a while
     * finds its state cold (CMA's reads of 8 KiB then took 3.6 us where a
     * run of them took under 3) and only warms it. */
    if (k % SHM_PATH_EXPLORE == 1 && pt->probe[c])
        return pt->probe[c] - 1;
    if (k % SHM_PATH_EXPLORE != 0)
        return best;
    pt->probe[c] = (uint8_t)(1 + !best);
    pt->warm[c] = 1;
    return !best;
}

void shm_path_record(shm_path_t *pt, uint64_t want, int cma, uint64_t ns)
{
    if (want < SHM_PATH_MIN || ns == 0)
        return;
    int c = size_class(want);
    double *r = &pt->rate[c][cma != 0];
    double x = (double)want / (double)ns;
    /* A probe of the path not in use is its only news: it replaces the old
     * figure, so a change of conditions is seen at the next probe. */
    if (pt->probe[c] == 1 + (cma != 0) && pt->warm[c]) {
        pt->warm[c] = 0;
        return;
    }
    if (*r == 0 || pt->probe[c] == 1 + (cma != 0)) {
        *r = x;
        pt->probe[c] = 0;
    } else {
        *r = 0.75 * *r + 0.25 * x;
    }
}
