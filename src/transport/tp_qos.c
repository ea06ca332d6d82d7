/* The traffic classes' settings (tp_qos.h). */
#include "tp_qos.h"

#include "locus_tunables.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    if (locus_tunable_long("LOCUS_QOS_SMALL", &q->small, err, errlen))
        return -1;
    if (q->small < 0 || q->small > (64L << 20)) {
        snprintf(err, errlen, "LOCUS_QOS_SMALL=%s: expected 0..%ld",
                 locus_tunable_str("LOCUS_QOS_SMALL"), 64L << 20);
        return -1;
    }
    return 0;
}
