/*
 * libFuzzer target for the PMI-1 and PMI-2 codecs: any bytes fed to the
 * parsers and to the reader (in either framing, chosen by the first byte)
 * must give a code, never a crash, overflow or hang; what parses must
 * format and parse back to the same message.
 */
#include "pmi_wire.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static pmi_msg_t msg, again;
static pmi_reader_t reader;
static char line[PMI_WIRE_LINE_MAX + 2];

static void roundtrip(void)
{
    /* Re-emit a parsed message token by token; values may hold bytes the
     * writer refuses only if the parser let them through, which is a bug. */
    int n = pmi_msg_format(line, sizeof line, msg.cmd, (char *)NULL);
    if (n < 0)
        abort();
    if (pmi_msg_parse(&again, line, (size_t)n) != PMI_WIRE_OK)
        abort();
    if (strcmp(again.cmd, msg.cmd) != 0)
        abort();
    for (int i = 0; i < msg.ntokens; i++) {
        n = pmi_msg_format(line, sizeof line, "t", msg.tokens[i].key,
                           msg.tokens[i].val, (char *)NULL);
        if (n < 0)
            abort();
        if (pmi_msg_parse(&again, line, (size_t)n) != PMI_WIRE_OK)
            abort();
        const char *v = pmi_msg_get(&again, msg.tokens[i].key);
        if (v == NULL || strcmp(v, msg.tokens[i].val) != 0)
            abort();
    }
}

/* PMI-2: every token without a ';' in its value formats and parses back. */
static void roundtrip2(void)
{
    for (int i = 0; i < msg.ntokens; i++) {
        if (strchr(msg.tokens[i].val, ';'))
            continue;
        int n = pmi2_msg_format(line, sizeof line, "t", msg.tokens[i].key,
                                msg.tokens[i].val, (char *)NULL);
        if (n < 0)
            abort();
        if (pmi2_msg_parse(&again, line + 6, (size_t)n - 6) != PMI_WIRE_OK)
            abort();
        const char *v = pmi_msg_get(&again, msg.tokens[i].key);
        if (v == NULL || strcmp(v, msg.tokens[i].val) != 0)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int v2 = size > 0 && (data[0] & 1);
    if (pmi2_msg_parse(&msg, (const char *)data, size) == PMI_WIRE_OK)
        roundtrip2();
    if (pmi_msg_parse(&msg, (const char *)data, size) == PMI_WIRE_OK)
        roundtrip();

    /* The same bytes through the reader, in two writes. */
    int sv[2];
    if (size > 64 * 1024 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return 0;
    pmi_reader_init(&reader, sv[0]);
    reader.v2 = v2;
    size_t half = size / 2;
    pmi_write_all(sv[1], (const char *)data, half);
    pmi_write_all(sv[1], (const char *)data + half, size - half);
    close(sv[1]);
    for (int guard = 0; guard < 100000; guard++) {
        int rc = pmi_reader_next(&reader, &msg);
        if (rc == PMI_WIRE_EAGAIN) {
            rc = pmi_reader_fill(&reader);
            if (rc == PMI_WIRE_EOF || rc == PMI_WIRE_EIO)
                break;
            if (rc < 0)
                abort();  /* fill after a drained next always has room */
        } else if (rc == PMI_WIRE_OK) {
            v2 ? roundtrip2() : roundtrip();
        }
    }
    close(sv[0]);
    return 0;
}
