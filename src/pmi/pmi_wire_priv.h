/* Internal to src/pmi: what the PMI-1 and PMI-2 codecs share. */
#ifndef PMI_WIRE_PRIV_H
#define PMI_WIRE_PRIV_H
#include "pmi_wire.h"

/* Counts one more byte of a token's key (in_value 0) or value against the
 * limits: PMI_WIRE_OK, or PMI_WIRE_ETOOLONG. */
int pmi_wire_count(int in_value, size_t *klen, size_t *vlen);

/* Appends a parsed token to msg: PMI_WIRE_OK, or PMI_WIRE_ETOOMANY. */
int pmi_wire_add_token(pmi_msg_t *msg, const char *key, const char *val);
#endif
