/*
 * names.c — the rank's side of the name service (MPI_Publish_name and
 * MPI_Lookup_name): locusrun's front end keeps the table and says where
 * in LOCUS_NAME_SERVER, "TOKEN@ip:port,..." (src/launch/names.c has the
 * protocol). One connection per request; the addresses are tried in turn,
 * for the front end may be on another node and only some of its addresses
 * reach this one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "locus_boot.h"
#include "locus_dial.h"

#define NAME_LINE_MAX LOCUS_SERVICE_LINE_MAX

/* The request's answer as a return value: "ok" 0, `miss` (exists, none)
 * LOCUS_BOOT_NAME_MISS, anything else LOCUS_BOOT_NAME_ERR with a reason. */
static int name_status(const char *reply, const char *miss, char *err, size_t errlen)
{
    if (strcmp(reply, "ok") == 0)
        return 0;
    if (strcmp(reply, miss) == 0)
        return LOCUS_BOOT_NAME_MISS;
    if (strcmp(reply, "full") == 0)
        snprintf(err, errlen, "the name service holds as many names as it can");
    else
        snprintf(err, errlen, "the name service answered '%.40s'", reply);
    return LOCUS_BOOT_NAME_ERR;
}

/* "SERVICE" or "SERVICE PORT", escaped, into args. */
static int name_args(const char *service, const char *port, char *args, size_t len, char *err,
                     size_t errlen)
{
    int n = service && *service ? locus_boot_escape(service, args, len) : -1;
    if (n >= 0 && port) {
        if ((size_t)n + 2 >= len || locus_boot_escape(port, args + n + 1, len - (size_t)n - 1) < 0)
            n = -1;
        else
            args[n] = ' ';
    }
    if (n < 0)
        snprintf(err, errlen, service && *service ? "service name and port too long for the "
                 "name service" : "empty service name");
    return n < 0 ? LOCUS_BOOT_NAME_ERR : 0;
}

int locus_boot_name_publish(const char *service, const char *port, char *err, size_t errlen)
{
    char args[NAME_LINE_MAX], reply[64];
    if (!port || !*port) {
        snprintf(err, errlen, "empty port name");
        return LOCUS_BOOT_NAME_ERR;
    }
    if (name_args(service, port, args, sizeof args, err, errlen) != 0 ||
        locus_service_call("publish", args, reply, sizeof reply, LOCUS_SERVICE_CONNECT_MS, err,
                           errlen) != 0)
        return LOCUS_BOOT_NAME_ERR;
    int rc = name_status(reply, "exists", err, errlen);
    if (rc == LOCUS_BOOT_NAME_MISS)
        snprintf(err, errlen, "'%.80s' is published already", service);
    return rc;
}

int locus_boot_name_lookup(const char *service, char *port, size_t len, char *err,
                           size_t errlen)
{
    char args[NAME_LINE_MAX], reply[NAME_LINE_MAX + 8];
    if (name_args(service, NULL, args, sizeof args, err, errlen) != 0 ||
        locus_service_call("lookup", args, reply, sizeof reply, LOCUS_SERVICE_CONNECT_MS, err,
                           errlen) != 0)
        return LOCUS_BOOT_NAME_ERR;
    if (strncmp(reply, "ok ", 3) == 0 && reply[3]) {
        if (locus_boot_unescape(reply + 3, port, len) < 0) {
            snprintf(err, errlen, "the port published as '%.80s' is longer than %zu bytes",
                     service, len - 1);
            return LOCUS_BOOT_NAME_ERR;
        }
        return 0;
    }
    int rc = name_status(reply, "none", err, errlen);
    if (rc == LOCUS_BOOT_NAME_MISS)
        snprintf(err, errlen, "no service '%.80s' is published", service);
    if (rc == 0) {  /* a bare "ok": no answer to a lookup */
        snprintf(err, errlen, "the name service answered 'ok' without a port");
        rc = LOCUS_BOOT_NAME_ERR;
    }
    return rc;
}

int locus_boot_name_unpublish(const char *service, char *err, size_t errlen)
{
    char args[NAME_LINE_MAX], reply[64];
    if (name_args(service, NULL, args, sizeof args, err, errlen) != 0 ||
        locus_service_call("unpublish", args, reply, sizeof reply, LOCUS_SERVICE_CONNECT_MS,
                           err, errlen) != 0)
        return LOCUS_BOOT_NAME_ERR;
    int rc = name_status(reply, "none", err, errlen);
    if (rc == LOCUS_BOOT_NAME_MISS)
        snprintf(err, errlen, "no service '%.80s' is published", service);
    return rc;
}
