/*
 * shm_path.c — the faster large-message path per peer and size class
 * (shm_path.h).
 */
#include "shm_path.h"


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

/* ---- streams ---- */

int shm_stream_match(shm_stream_t *st, uint64_t want, uint64_t now)
{
    int live = st->inflight > 0 || (st->last_done && now - st->last_done < SHM_STREAM_GAP_NS);
    /* Another class's receive shares the epoch's time: it is void. */
    if (st->cls && st->cls != size_class(want) + 1)
        st->cls = 0;
    if (st->inflight++ == 0) {
        if (st->cls && live)
            st->ns += now - st->last_done;
        st->mark = now;
    }
    return live;
}

static int stream_best(const shm_stream_t *st, int c, int guess)
{
    const double *r = st->rate[c];
    return r[0] == 0 || r[1] == 0 ? guess : r[1] > r[0];
}

/* Receives a try of the path not in use takes (shm_path.h). */
static uint32_t probe_quota(uint64_t want)
{
    uint64_t n = (SHM_STREAM_PROBE_BYTES + want - 1) / want;
    return n < SHM_STREAM_PROBE_MIN ? SHM_STREAM_PROBE_MIN
           : n > SHM_STREAM_EPOCH   ? SHM_STREAM_EPOCH
                                    : (uint32_t)n;
}

int shm_stream_path(shm_stream_t *st, uint64_t want, int guess)
{
    int c = size_class(want);
    /* A short try whose receives are all done without filling it (one
     * fell back from CMA) is void: else it would hold the class forever. */
    if (st->cls == c + 1 && st->quota && st->assigned >= st->quota && st->inflight == 1)
        st->cls = 0;
    if (st->cls == c + 1) {
        if (st->quota && st->assigned >= st->quota)
            return !st->cma;
        st->assigned++;
        return st->cma;
    }
    if (st->inflight > 1) /* not while others are in flight: they would share its time */
        return stream_best(st, c, guess);
    const double *r = st->rate[c];
    int every = st->far[c] ? SHM_STREAM_EXPLORE_FAR : SHM_STREAM_EXPLORE;
    if (r[guess] == 0) {
        st->cma = guess;
        st->probe = 0;
    } else if (r[!guess] == 0) {
        st->cma = !guess;
        st->probe = 1;
    } else {
        int best = r[1] > r[0];
        st->probe = st->epochs[c] % (uint32_t)every == (uint32_t)every - 1;
        st->cma = st->probe ? !best : best;
    }
    st->cls = c + 1;
    st->quota = st->probe && st->cma ? probe_quota(want) : 0;
    st->assigned = 1;
    st->counted = 0;
    st->bytes = 0;
    st->ns = 0;
    return st->cma;
}

/* The epoch's rate: a try of the path not in use replaces that path's old
 * figure (conditions change in a minute), the path in use averages. */
static void stream_epoch_end(shm_stream_t *st)
{
    int c = st->cls - 1;
    st->cls = 0;
    if (st->ns == 0)
        return;
    double x = (double)st->bytes / (double)st->ns, *r = st->rate[c];
    if (st->probe || r[st->cma] == 0)
        r[st->cma] = x;
    else
        r[st->cma] = 0.5 * (r[st->cma] + x);
    if (st->probe)
        st->far[c] = r[!st->cma] > SHM_STREAM_FAR * x;
    st->epochs[c]++;
}

void shm_stream_done(shm_stream_t *st, uint64_t want, int cma, uint64_t now)
{
    if (st->inflight)
        st->inflight--;
    int mine = st->cls == size_class(want) + 1 && (cma != 0) == st->cma;
    if (mine) {
        st->bytes += want;
        st->counted++;
    }
    st->last_done = now;
    /* A short try ends with its last receive, the window's others still in flight. */
    if (mine && st->quota && st->counted == st->quota) {
        st->ns += now - st->mark;
        stream_epoch_end(st);
        return;
    }
    if (st->inflight || !st->cls)
        return;
    st->ns += now - st->mark;
    if (st->counted >= SHM_STREAM_EPOCH)
        stream_epoch_end(st);
}
