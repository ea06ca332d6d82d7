/*
 * tp_qos.h — the traffic classes' settings every network transport reads
 * (LOCUS_QOS, LOCUS_QOS_DSCP, LOCUS_QOS_SMALL; docs/qos.md): which mode,
 * the DSCP of each class, and the size up to which an eager message is
 * latency-class. How a transport carries the classes is its own (tcp: a
 * connection per class with IP_TOS; ofi: an endpoint per class with its
 * tclass).
 */
#ifndef TP_QOS_H
#define TP_QOS_H

#include <stddef.h>

enum { TP_QOS_OFF, TP_QOS_STATIC, TP_QOS_ADAPTIVE };

typedef struct {
    int mode;                          /* TP_QOS_* */
    int dscp_latency, dscp_normal, dscp_bulk; /* 0..63 */
    long small;                        /* eager messages up to this are latency-class */
} tp_qos_t;

/* "off", "static" or "adaptive". */
const char *tp_qos_name(int mode);

/* Reads the settings; -1 with a one-line reason naming the variable when
 * one is malformed or out of range. */
int tp_qos_read(tp_qos_t *q, char *err, size_t errlen);

#endif
