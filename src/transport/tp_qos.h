/*
 * tp_qos.h — the traffic classes every network transport shares
 * (LOCUS_QOS*, docs/qos.md): the settings (which mode, the DSCP of each
 * class, the size up to which an eager message is latency-class, adaptive
 * mode's budget and probes), and adaptive mode's rule: each path's probes
 * and whether it is congested, and the budget that bounds what is raised.
 * How a transport carries the classes and its probes is its own (tcp: a
 * connection per class with IP_TOS; ofi: an endpoint per class with its
 * tclass).
 */
#ifndef TP_QOS_H
#define TP_QOS_H

#include <stddef.h>
#include <stdint.h>

enum { TP_QOS_OFF, TP_QOS_STATIC, TP_QOS_ADAPTIVE };

typedef struct {
    int mode;                          /* TP_QOS_* */
    int dscp_latency, dscp_normal, dscp_bulk; /* 0..63 */
    long small;                        /* eager messages up to this are latency-class */
    long share;                        /* adaptive: % of the bytes the latency class may take */
    long floor;                        /* adaptive: bytes per window it may take regardless */
    long probe_us;                     /* adaptive: probe period per busy path */
    long delay_us;                     /* adaptive: queueing delay that means congestion */
} tp_qos_t;

/* Adaptive mode's counters. */
typedef struct {
    uint64_t raised;       /* sends moved up to the latency class */
    uint64_t denied;       /* raises refused by the budget */
    uint64_t probes;       /* probe round trips measured */
    uint64_t congested;    /* times a path was found congested */
    uint64_t probe_max_us; /* longest probe round trip */
} tp_qos_count_t;

/* One path (a destination this rank sends to), as adaptive mode sees it. */
typedef struct {
    uint64_t probe_ns;      /* when the probe in flight left (0: none) */
    uint64_t last_probe_ns;
    uint64_t base_ns;       /* smallest probe round trip seen: the idle path */
    uint64_t excess_ns;     /* moving average of round trip minus base */
    uint32_t probe_id;
    int congested;
} tp_qos_path_t;

/* A rank's bytes, all and raised, this window and the last (100 ms each). */
typedef struct {
    uint64_t win_ns;
    uint64_t win_all[2], win_hi[2];
} tp_qos_budget_t;

/* "off", "static" or "adaptive". */
const char *tp_qos_name(int mode);

/* Reads the settings; -1 with a one-line reason naming the variable when
 * one is malformed or out of range. */
int tp_qos_read(tp_qos_t *q, char *err, size_t errlen);

/* A send on the path at `now`: 1 when the path is congested. A probe out
 * longer than LOCUS_QOS_DELAY_US already says so (its reply may take
 * hundreds of milliseconds behind a full queue). *probe is set when one is
 * due (none in flight, LOCUS_QOS_PROBE_US since the last): the caller
 * sends it on the normal class with tp_qos_probe_start's id and time, and
 * the peer answers at once on the latency class, so that the round trip
 * grows with the queue on the way out. */
int tp_qos_path_use(tp_qos_path_t *pa, const tp_qos_t *q, uint64_t now, int *probe,
                    tp_qos_count_t *n);
uint32_t tp_qos_probe_start(tp_qos_path_t *pa, uint64_t now);
/* The answer to probe `id` sent at sent_ns; one that is not the probe in
 * flight (from before a restart of the count) is ignored. */
void tp_qos_probe_reply(tp_qos_path_t *pa, const tp_qos_t *q, uint32_t id, uint64_t sent_ns,
                        uint64_t now, tp_qos_count_t *n);

/* Adaptive mode's class for a send of `bytes`: 1 latency when `want` (its
 * path is congested and the send is a control message or small) and the
 * budget allows (LOCUS_QOS_SHARE of the rank's bytes, or LOCUS_QOS_FLOOR
 * per window: a class that carries everything favours nothing), else 0
 * normal. Every send's bytes count. */
int tp_qos_raise(tp_qos_budget_t *b, const tp_qos_t *q, int want, size_t bytes, uint64_t now,
                 tp_qos_count_t *n);
/* Where a send can fail for room after its class was chosen (ofi): one
 * counted by tp_qos_raise (raised or not) that did not go, to be decided
 * again; and one raised that went normal after all. */
void tp_qos_unsent(tp_qos_budget_t *b, int raised, size_t bytes, tp_qos_count_t *n);
void tp_qos_lowered(tp_qos_budget_t *b, size_t bytes, tp_qos_count_t *n);

#endif
