/* The traffic classes' settings and adaptive mode's rule (tp_qos.h). */
#include "tp_qos.h"

#include "locus_tunables.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW_NS 100000000ull /* the budget's window: 100 ms */

static const char *const mode_names[] = { "off", "static", "adaptive" };

const char *tp_qos_name(int mode)
{
    return mode >= TP_QOS_OFF && mode <= TP_QOS_ADAPTIVE ? mode_names[mode] : "?";
}

/* "46,0,8": DSCP of the latency, normal and bulk classes. */
static int dscp_parse(const char *s, int *out[3])
{
    for (int i = 0; i < 3; i++) {
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (end == s || errno || v < 0 || v > 63 || *end != (i < 2 ? ',' : '\0'))
            return -1;
        *out[i] = (int)v;
        s = end + 1;
    }
    return 0;
}

int tp_qos_read(tp_qos_t *q, char *err, size_t errlen)
{
    const char *mode = locus_tunable_str("LOCUS_QOS");
    q->mode = -1;
    for (int m = TP_QOS_OFF; m <= TP_QOS_ADAPTIVE; m++)
        if (strcmp(mode, mode_names[m]) == 0)
            q->mode = m;
    if (q->mode < 0) {
        snprintf(err, errlen, "LOCUS_QOS=%s: expected off, static or adaptive", mode);
        return -1;
    }
    const char *dscp = locus_tunable_str("LOCUS_QOS_DSCP");
    int *slots[3] = { &q->dscp_latency, &q->dscp_normal, &q->dscp_bulk };
    if (dscp_parse(dscp, slots) != 0) {
        snprintf(err, errlen,
                 "LOCUS_QOS_DSCP=%s: expected three DSCP values 0..63 (latency,normal,bulk), "
                 "like 46,0,8", dscp);
        return -1;
    }
    struct {
        const char *name;
        long *v, lo, hi;
    } nums[] = {
        { "LOCUS_QOS_SMALL", &q->small, 0, 64L << 20 },
        { "LOCUS_QOS_SHARE", &q->share, 0, 100 },
        { "LOCUS_QOS_FLOOR", &q->floor, 0, 1L << 40 },
        { "LOCUS_QOS_PROBE_US", &q->probe_us, 100, 10000000 },
        { "LOCUS_QOS_DELAY_US", &q->delay_us, 1, 10000000 },
    };
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        if (locus_tunable_long(nums[i].name, nums[i].v, err, errlen))
            return -1;
        if (*nums[i].v < nums[i].lo || *nums[i].v > nums[i].hi) {
            snprintf(err, errlen, "%s=%s: expected %ld..%ld", nums[i].name,
                     locus_tunable_str(nums[i].name), nums[i].lo, nums[i].hi);
            return -1;
        }
    }
    return 0;
}

/* ---- adaptive: probes ---- */

static void path_judge(tp_qos_path_t *pa, const tp_qos_t *q, tp_qos_count_t *n)
{
    uint64_t delay = (uint64_t)q->delay_us * 1000u;
    int was = pa->congested;
    if (pa->excess_ns > delay)
        pa->congested = 1;
    else if (pa->excess_ns < delay / 2)
        pa->congested = 0; /* hysteresis: a path does not flip on every probe */
    if (pa->congested && !was)
        n->congested++;
}

int tp_qos_path_use(tp_qos_path_t *pa, const tp_qos_t *q, uint64_t now, int *probe,
                    tp_qos_count_t *n)
{
    uint64_t delay = (uint64_t)q->delay_us * 1000u;
    *probe = 0;
    if (pa->probe_ns) {
        if (now - pa->probe_ns > delay && !pa->congested) {
            pa->congested = 1;
            pa->excess_ns = now - pa->probe_ns;
            n->congested++;
        }
    } else if (now - pa->last_probe_ns >= (uint64_t)q->probe_us * 1000u) {
        *probe = 1;
    }
    return pa->congested;
}

uint32_t tp_qos_probe_start(tp_qos_path_t *pa, uint64_t now)
{
    pa->probe_ns = pa->last_probe_ns = now;
    return ++pa->probe_id;
}

void tp_qos_probe_reply(tp_qos_path_t *pa, const tp_qos_t *q, uint32_t id, uint64_t sent_ns,
                        uint64_t now, tp_qos_count_t *n)
{
    if (!pa->probe_ns || id != pa->probe_id || sent_ns != pa->probe_ns || now < sent_ns)
        return;
    uint64_t rtt = now - sent_ns;
    pa->probe_ns = 0;
    if (!pa->base_ns || rtt < pa->base_ns)
        pa->base_ns = rtt;
    /* A moving average over ~8 probes: one late reply (the peer was not
     * in MPI for a while) does not make a path congested. */
    pa->excess_ns = (7 * pa->excess_ns + (rtt - pa->base_ns)) / 8;
    path_judge(pa, q, n);
    n->probes++;
    if (rtt / 1000 > n->probe_max_us)
        n->probe_max_us = rtt / 1000;
}

/* ---- adaptive: the budget ---- */

static void window_roll(tp_qos_budget_t *b, uint64_t now)
{
    if (now - b->win_ns < WINDOW_NS)
        return;
    int two = now - b->win_ns >= 2 * WINDOW_NS; /* idle for a whole window */
    b->win_all[1] = two ? 0 : b->win_all[0];
    b->win_hi[1] = two ? 0 : b->win_hi[0];
    b->win_all[0] = b->win_hi[0] = 0;
    b->win_ns = now;
}

int tp_qos_raise(tp_qos_budget_t *b, const tp_qos_t *q, int want, size_t bytes, uint64_t now,
                 tp_qos_count_t *n)
{
    window_roll(b, now);
    int up = 0;
    if (want) {
        uint64_t hi = b->win_hi[0] + b->win_hi[1] + bytes;
        uint64_t all = b->win_all[0] + b->win_all[1] + bytes;
        up = hi <= 2 * (uint64_t)q->floor || hi * 100 <= (uint64_t)q->share * all;
        n->raised += up;
        n->denied += !up;
    }
    b->win_all[0] += bytes;
    if (up)
        b->win_hi[0] += bytes;
    return up;
}

/* Taken back from this window's counts (a window may have begun since:
 * never below 0). */
static void take_back(uint64_t *v, size_t bytes)
{
    *v = *v > bytes ? *v - bytes : 0;
}

void tp_qos_lowered(tp_qos_budget_t *b, size_t bytes, tp_qos_count_t *n)
{
    take_back(&b->win_hi[0], bytes);
    if (n->raised)
        n->raised--;
}

void tp_qos_unsent(tp_qos_budget_t *b, int raised, size_t bytes, tp_qos_count_t *n)
{
    if (raised)
        tp_qos_lowered(b, bytes, n);
    take_back(&b->win_all[0], bytes);
}
