/*
 * names.c — the rank's side of the name service (MPI_Publish_name and
 * MPI_Lookup_name): locusrun's front end keeps the table and says where
 * in LOCUS_NAME_SERVER, "TOKEN@ip:port,..." (src/launch/names.c has the
 * protocol). One connection per request; the addresses are tried in turn,
 * for the front end may be on another node and only some of its addresses
 * reach this one.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "locus_boot.h"
#include "locus_dial.h"

#define NAME_CONNECT_MS 2000   /* per address */
#define NAME_REPLY_MS 5000     /* the server closes a silent client after 5 s too */
#define NAME_LINE_MAX 4096     /* the server's longest request, newline included */

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}


/* Sends "TOKEN verb args\n" and reads the one-line answer (no newline)
 * into reply. 0, or -1 with the reason in err. */
static int name_call(const char *verb, const char *args, char *reply, size_t len, char *err,
                     size_t errlen)
{
    const char *env = getenv("LOCUS_NAME_SERVER");
    const char *at = env ? strchr(env, '@') : NULL;
    if (!env || !*env) {
        snprintf(err, errlen, "no name service: LOCUS_NAME_SERVER is not set (not started by "
                 "locusrun)");
        return -1;
    }
    if (!at || at == env || !at[1]) {
        snprintf(err, errlen, "LOCUS_NAME_SERVER=%.40s: expected TOKEN@ip:port,...", env);
        return -1;
    }
    char line[NAME_LINE_MAX + 1];
    int n = snprintf(line, sizeof line, "%.*s %s %s\n", (int)(at - env), env, verb, args);
    if (n < 0 || n > NAME_LINE_MAX) {
        snprintf(err, errlen, "service name and port too long for the name service "
                 "(%d bytes escaped at most)", NAME_LINE_MAX);
        return -1;
    }
    char *list = strdup(at + 1);
    int fd = -1;
    for (char *save = NULL, *a = list ? strtok_r(list, ",", &save) : NULL; a && fd < 0;
         a = strtok_r(NULL, ",", &save))
        fd = locus_dial_ipv4(a, NAME_CONNECT_MS);
    free(list);
    if (fd < 0) {
        snprintf(err, errlen, "cannot reach the name service at %.100s", at + 1);
        return -1;
    }
    size_t got = 0;
    int ok = send(fd, line, (size_t)n, MSG_NOSIGNAL) == n;
    long by = now_ms() + NAME_REPLY_MS;
    while (ok && (got == 0 || reply[got - 1] != '\n')) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        long left = by - now_ms();
        if (got + 1 >= len || left <= 0 || poll(&p, 1, (int)left) < 0) {
            ok = 0;
            break;
        }
        ssize_t r = read(fd, reply + got, len - 1 - got);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
            ok = 0;
        else if (r > 0)
            got += (size_t)r;
    }
    close(fd);
    if (!ok) {
        snprintf(err, errlen, "the name service gave no answer (a wrong token in "
                 "LOCUS_NAME_SERVER, or its job ended)");
        return -1;
    }
    reply[got - 1] = '\0';
    return 0;
}

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
        name_call("publish", args, reply, sizeof reply, err, errlen) != 0)
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
        name_call("lookup", args, reply, sizeof reply, err, errlen) != 0)
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
        name_call("unpublish", args, reply, sizeof reply, err, errlen) != 0)
        return LOCUS_BOOT_NAME_ERR;
    int rc = name_status(reply, "none", err, errlen);
    if (rc == LOCUS_BOOT_NAME_MISS)
        snprintf(err, errlen, "no service '%.80s' is published", service);
    return rc;
}
