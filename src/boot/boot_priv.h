/* Internal to src/boot. */
#ifndef LOCUS_BOOT_PRIV_H
#define LOCUS_BOOT_PRIV_H
#include "locus_boot.h"
int boot_call(locus_boot_t *b, const char *line, int len, const char *expect,
              pmi_msg_t *reply, char *err, size_t errlen);
int boot_connect(locus_boot_t *b, char *err, size_t errlen);
/* Monotonic seconds (phase clocks, bounded waits). */
double boot_now(void);
/* PMI put/get of a value that may hold any byte (escaped as %XX). */
int boot_kvs_put(locus_boot_t *b, const char *key, const char *val);
int boot_kvs_get(locus_boot_t *b, const char *key, char *val, size_t vallen);
#endif
