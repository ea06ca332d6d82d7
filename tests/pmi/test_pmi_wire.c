/*
 * Unit test of the PMI-1 and PMI-2 codecs: Hydra's and Slurm's own lines
 * parse, formatting round trips, and a fixed list of malformed inputs each
 * gives its error code.
 */
#include "pmi_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;

#define CHECK(cond) do { if (!(cond)) { \
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    failures++; } } while (0)

static int parse(pmi_msg_t *m, const char *s)
{
    return pmi_msg_parse(m, s, strlen(s));
}

static void test_hydra_lines(void)
{
    static pmi_msg_t m;
    CHECK(parse(&m, "cmd=init pmi_version=1 pmi_subversion=1\n") == 0);
    CHECK(strcmp(m.cmd, "init") == 0 && m.ntokens == 2);
    CHECK(strcmp(pmi_msg_get(&m, "pmi_version"), "1") == 0);
    CHECK(strcmp(pmi_msg_get(&m, "pmi_subversion"), "1") == 0);
    CHECK(pmi_msg_get(&m, "nope") == NULL);

    CHECK(parse(&m, "cmd=get_maxes") == 0 && m.ntokens == 0);
    CHECK(strcmp(m.cmd, "get_maxes") == 0);

    CHECK(parse(&m, "cmd=get_result rc=-1 msg=key_x_not_found value=unknown\n") == 0);
    CHECK(strcmp(pmi_msg_get(&m, "rc"), "-1") == 0);
    CHECK(strcmp(pmi_msg_get(&m, "value"), "unknown") == 0);

    /* Extra whitespace, unknown keys, a bare key, '=' inside a value. */
    CHECK(parse(&m, "  cmd=put   kvsname=kvs_1  key=a  value=x=y  flag \r\n") == 0);
    CHECK(m.ntokens == 4);
    CHECK(strcmp(pmi_msg_get(&m, "value"), "x=y") == 0);
    CHECK(pmi_msg_get(&m, "flag") && pmi_msg_get(&m, "flag")[0] == '\0');

    /* Escapes: "\\" is one backslash, "\=" keeps '=' in the key. */
    CHECK(parse(&m, "cmd=put key=a\\\\b value=c") == 0);
    CHECK(strcmp(pmi_msg_get(&m, "key"), "a\\b") == 0);
    CHECK(strcmp(pmi_msg_get(&m, "value"), "c") == 0);

    CHECK(parse(&m, "cmd=get_result rc=0 value=(vector,(0,1,16))") == 0);
    CHECK(strcmp(pmi_msg_get(&m, "value"), "(vector,(0,1,16))") == 0);
}

static void test_malformed(void)
{
    static pmi_msg_t m;
    static char big[PMI_WIRE_LINE_MAX + 64];
    struct { const char *line; int rc; } cases[] = {
        { "", PMI_WIRE_EMALFORMED },
        { "\n", PMI_WIRE_EMALFORMED },
        { "cmd", PMI_WIRE_EMALFORMED },
        { "cmd=", PMI_WIRE_EMALFORMED },
        { "cmd= key=1", PMI_WIRE_EMALFORMED },
        { "command=init", PMI_WIRE_EMALFORMED },
        { "key=1 cmd=init", PMI_WIRE_EMALFORMED },
        { "mcmd=spawn", PMI_WIRE_EMALFORMED },
        { "cmd==", PMI_WIRE_EMALFORMED },
        { "cmd=a=b", PMI_WIRE_EMALFORMED },
        { "cmd=put a\\=b=1", PMI_WIRE_EMALFORMED },
        { "cmd=put =v", PMI_WIRE_EMALFORMED },
        { "cmd=put key=a\\", PMI_WIRE_EMALFORMED },
        { "cmd=put key=\x01", PMI_WIRE_EMALFORMED },
        { "cmd=put key=\xff", PMI_WIRE_EMALFORMED },
        { "cmd=put key=a\nb", PMI_WIRE_EMALFORMED },
        { "cmd=a 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17", PMI_WIRE_ETOOMANY },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = parse(&m, cases[i].line);
        if (rc != cases[i].rc) {
            fprintf(stderr, "case %zu: got %d (%s), want %d\n", i, rc,
                    pmi_wire_strerror(rc), cases[i].rc);
            failures++;
        }
    }
    /* An embedded NUL byte. */
    CHECK(pmi_msg_parse(&m, "cmd=a\0b", 7) == PMI_WIRE_EMALFORMED);
    CHECK(pmi_msg_parse(NULL, "cmd=a", 5) == PMI_WIRE_EMALFORMED);

    /* Key of 64 bytes is fine, 65 is too long; value 1024 fine, 1025 not. */
    strcpy(big, "cmd=put ");
    memset(big + 8, 'k', 64);
    strcpy(big + 72, "=v");
    CHECK(parse(&m, big) == 0);
    memset(big + 8, 'k', 65);
    strcpy(big + 73, "=v");
    CHECK(parse(&m, big) == PMI_WIRE_ETOOLONG);
    strcpy(big, "cmd=put value=");
    memset(big + 14, 'v', 1024);
    big[14 + 1024] = '\0';
    CHECK(parse(&m, big) == 0 && strlen(pmi_msg_get(&m, "value")) == 1024);
    memset(big + 14, 'v', 1025);
    big[14 + 1025] = '\0';
    CHECK(parse(&m, big) == PMI_WIRE_ETOOLONG);
    memset(big, 'x', sizeof big);
    memcpy(big, "cmd=a ", 6);
    CHECK(pmi_msg_parse(&m, big, sizeof big) == PMI_WIRE_ETOOLONG);
}

static void test_format(void)
{
    char out[PMI_WIRE_LINE_MAX + 2];
    static char val[PMI_WIRE_VALLEN_MAX + 2];
    static pmi_msg_t m;
    int n = pmi_msg_format(out, sizeof out, "put_result", "rc", "0", (char *)NULL);
    CHECK(n == (int)strlen("cmd=put_result rc=0\n"));
    CHECK(strcmp(out, "cmd=put_result rc=0\n") == 0);

    n = pmi_msg_format(out, sizeof out, "x", "k", "a\\b", "bare", (char *)NULL,
                       (char *)NULL);
    CHECK(n > 0 && strcmp(out, "cmd=x k=a\\\\b bare\n") == 0);
    CHECK(pmi_msg_parse(&m, out, (size_t)n) == 0);
    CHECK(strcmp(pmi_msg_get(&m, "k"), "a\\b") == 0);

    CHECK(pmi_msg_format(out, sizeof out, "x", "k", "a b", (char *)NULL) == PMI_WIRE_EMALFORMED);
    CHECK(pmi_msg_format(out, sizeof out, "x", "k", "a\nb", (char *)NULL) == PMI_WIRE_EMALFORMED);
    CHECK(pmi_msg_format(out, sizeof out, "x", "k=", "1", (char *)NULL) == PMI_WIRE_EMALFORMED);
    CHECK(pmi_msg_format(out, sizeof out, "x", "", "1", (char *)NULL) == PMI_WIRE_EMALFORMED);
    CHECK(pmi_msg_format(out, 10, "put_result", "rc", "0", (char *)NULL) == PMI_WIRE_ETOOLONG);
    memset(val, 'v', PMI_WIRE_VALLEN_MAX);
    CHECK(pmi_msg_format(out, sizeof out, "x", "k", val, (char *)NULL) > 0);
    val[PMI_WIRE_VALLEN_MAX] = 'v';
    CHECK(pmi_msg_format(out, sizeof out, "x", "k", val, (char *)NULL) == PMI_WIRE_ETOOLONG);
}

/* Lines split across writes, two lines in one write, an overlong line in
 * the middle that is reported once and skipped, then EOF. */
static void test_reader(void)
{
    int sv[2];
    static pmi_reader_t r;
    static pmi_msg_t m;
    static char big[3 * PMI_WIRE_LINE_MAX];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    pmi_reader_init(&r, sv[0]);
    CHECK(pmi_reader_next(&r, &m) == PMI_WIRE_EAGAIN);
    CHECK(pmi_write_all(sv[1], "cmd=ba", 6) == 0);
    CHECK(pmi_reader_fill(&r) == 6);
    CHECK(pmi_reader_next(&r, &m) == PMI_WIRE_EAGAIN);
    CHECK(pmi_write_all(sv[1], "rrier_in\ncmd=get_maxes\n", 23) == 0);
    CHECK(pmi_reader_wait(&r, &m) == 0 && strcmp(m.cmd, "barrier_in") == 0);
    CHECK(pmi_reader_next(&r, &m) == 0 && strcmp(m.cmd, "get_maxes") == 0);
    CHECK(pmi_reader_next(&r, &m) == PMI_WIRE_EAGAIN);

    memset(big, 'z', sizeof big);
    memcpy(big, "cmd=x v=", 8);
    big[sizeof big - 1] = '\n';
    /* Written by a child so the socket buffer never blocks this process. */
    pid_t pid = fork();
    if (pid == 0) {
        pmi_write_all(sv[1], big, sizeof big);
        pmi_write_all(sv[1], "cmd=finalize\n", 13);
        _exit(0);
    }
    int rc = pmi_reader_wait(&r, &m);
    CHECK(rc == PMI_WIRE_ETOOLONG);
    rc = pmi_reader_wait(&r, &m);
    CHECK(rc == 0 && strcmp(m.cmd, "finalize") == 0);
    /* Garbage line is consumed and the next one still parses. */
    CHECK(pmi_write_all(sv[1], "garbage\ncmd=ok\n", 15) == 0);
    CHECK(pmi_reader_wait(&r, &m) == PMI_WIRE_EMALFORMED);
    CHECK(pmi_reader_wait(&r, &m) == 0 && strcmp(m.cmd, "ok") == 0);
    close(sv[1]);
    CHECK(pmi_reader_wait(&r, &m) == PMI_WIRE_EOF);
    close(sv[0]);
    CHECK(pmi_write_all(sv[0], "x", 1) == PMI_WIRE_EIO);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st));
}

static int parse2(pmi_msg_t *m, const char *s)
{
    return pmi2_msg_parse(m, s, strlen(s));
}

/* PMI-2 frames as Hydra 4.0 and Slurm write them (recorded from Hydra). */
static void test_pmi2(void)
{
    static pmi_msg_t m;
    static pmi_reader_t r;
    char out[PMI_WIRE_LINE_MAX + 16];
    CHECK(parse2(&m, "cmd=fullinit-response;pmi-version=2;pmi-subversion=0;rank=1;size=2;"
                     "appnum=0;debugged=FALSE;pmiverbose=FALSE;rc=0;") == 0);
    CHECK(strcmp(m.cmd, "fullinit-response") == 0 && m.ntokens == 8);
    CHECK(strcmp(pmi_msg_get(&m, "rank"), "1") == 0 && strcmp(pmi_msg_get(&m, "rc"), "0") == 0);
    CHECK(parse2(&m, "cmd=kvs-get-response;found=TRUE;value=a;;b=c;rc=0;") == 0);
    CHECK(strcmp(pmi_msg_get(&m, "value"), "a;b=c") == 0);
    CHECK(parse2(&m, "cmd=kvs-get-response;found=FALSE;value=;rc=0;") == 0);
    CHECK(strcmp(pmi_msg_get(&m, "value"), "") == 0);
    CHECK(parse2(&m, "cmd=x;k=v") == PMI_WIRE_EMALFORMED);      /* no final ';' */
    CHECK(parse2(&m, "cmd=x;novalue;") == PMI_WIRE_EMALFORMED);
    CHECK(parse2(&m, "cmd=x;=v;") == PMI_WIRE_EMALFORMED);
    CHECK(parse2(&m, "key=x;") == PMI_WIRE_EMALFORMED);
    CHECK(parse2(&m, "cmd=;") == PMI_WIRE_EMALFORMED);
    CHECK(parse2(&m, "cmd=x;k=a\\b;") == 0);                   /* a backslash is a byte */

    int n = pmi2_msg_format(out, sizeof out, "kvs-put", "key", "k0", "value", "v=1", NULL);
    CHECK(n == 6 + 29 && memcmp(out, "29    cmd=kvs-put;key=k0;value=v=1;", (size_t)n) == 0);
    CHECK(pmi2_msg_format(out, sizeof out, "kvs-put", "key", "k", "value", "a;b", NULL) ==
          PMI_WIRE_EMALFORMED);
    CHECK(pmi2_msg_format(out, sizeof out, "kvs-put", "k=", "v", NULL) == PMI_WIRE_EMALFORMED);
    CHECK(pmi2_msg_format(out, 12, "kvs-fence", NULL) == PMI_WIRE_ETOOLONG);

    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    pmi_reader_init(&r, sv[0]);
    r.v2 = 1;
    /* Right-justified (MPICH) and left-justified (Slurm) lengths, split
     * across writes. */
    CHECK(pmi_write_all(sv[1], "    28cmd=kvs-fence-", 20) == 0);
    CHECK(pmi_reader_fill(&r) == 20 && pmi_reader_next(&r, &m) == PMI_WIRE_EAGAIN);
    CHECK(pmi_write_all(sv[1], "response;rc=0;", 14) == 0);
    CHECK(pmi_write_all(sv[1], "27    cmd=finalize-response;rc=0;", 33) == 0);
    CHECK(pmi_reader_wait(&r, &m) == 0 && strcmp(m.cmd, "kvs-fence-response") == 0);
    CHECK(pmi_reader_wait(&r, &m) == 0 && strcmp(m.cmd, "finalize-response") == 0);
    CHECK(pmi_write_all(sv[1], "cmd=init pmi_version=2\n", 23) == 0);
    CHECK(pmi_reader_wait(&r, &m) == PMI_WIRE_EMALFORMED);   /* not a length */
    CHECK(pmi_write_all(sv[1], "999999", 6) == 0);
    CHECK(pmi_reader_wait(&r, &m) == PMI_WIRE_ETOOLONG);
    close(sv[1]);
    close(sv[0]);
}

int main(void)
{
    test_hydra_lines();
    test_malformed();
    test_format();
    test_reader();
    test_pmi2();
    for (int c = 0; c >= -7; c--)
        CHECK(pmi_wire_strerror(c) != NULL);
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("pmi_wire: all checks passed\n");
    return 0;
}
