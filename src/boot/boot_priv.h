/* Internal to src/boot. */
#ifndef LOCUS_BOOT_PRIV_H
#define LOCUS_BOOT_PRIV_H
#include "locus_boot.h"
int boot_call(locus_boot_t *b, const char *line, int len, const char *expect,
              pmi_msg_t *reply, char *err, size_t errlen);
int boot_connect(locus_boot_t *b, char *err, size_t errlen);
#endif
